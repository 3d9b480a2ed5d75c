"""Peak memory of reading mesh files, valid and hostile (issue 23, finding 9), as process RSS:
each file is read in a fresh child process (kernels loaded on a tiny file first), which reports
its peak RSS (ru_maxrss) above the RSS it had before the read; the figure includes the file's
own bytes.

    python benchmarks/bench_file_memory.py [--megabytes 20]
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import os, resource, sys, time
import touche as tc
from touche.errors import MeshFormatError
path, how = sys.argv[1], sys.argv[2]
tc.mesh.load(os.path.join(os.path.dirname(path), "tiny.stl"))
with open("/proc/self/statm") as handle:
    before = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
started = time.perf_counter()
try:
    mesh = tc.mesh.read_stl(path) if how == "read_stl" else tc.mesh.load(path)
    outcome = f"{len(mesh):,} triangles" if how == "read_stl" else f"{len(mesh.faces):,} faces"
except MeshFormatError as error:
    outcome = "MeshFormatError: " + str(error).split(": ", 1)[1][:60]
except MemoryError:
    outcome = "MemoryError"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(peak - before, time.perf_counter() - started, outcome)
"""


def ascii_stl(count, seed=0):
    coordinates = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(count, 9))
    facet = "facet normal 0 0 1\n outer loop\n" + "  vertex %.17g %.17g %.17g\n" * 3 + " endloop\nendfacet\n"
    return ("solid bench\n" + facet * count % tuple(coordinates.ravel()) + "endsolid bench\n").encode(), coordinates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=20.0, help="size of the large valid files")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import touche as tc

    folder = Path(tempfile.mkdtemp(prefix="touche-file-memory-"))
    tc.mesh.save(([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]), folder / "tiny.stl")
    files = {}
    small, coordinates = ascii_stl(700)  # ~272 KB, the size
    first = b"%.17g" % coordinates[0, 0]
    files["ascii 272 KB, one 100k-char number"] = small.replace(b"vertex " + first, b"vertex " + b"0" * 100_000 + first, 1)
    files["ascii 272 KB, one 100k-char garbage token"] = small.replace(b"vertex " + first, b"vertex " + b"x" * 100_000, 1)
    big, coordinates = ascii_stl(19_000)
    first = b"%.17g" % coordinates[0, 0]
    files["ascii 5 MB, one 5M-char number"] = big.replace(b"vertex " + first, b"vertex " + b"0" * 5_000_000 + first, 1)
    count = int(args.megabytes * 1e6 / 250)
    files[f"ascii {args.megabytes:g} MB valid"] = ascii_stl(count)[0]
    records = np.zeros(int(args.megabytes * 1e6 / 50), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    records["v"] = np.random.default_rng(1).uniform(-1, 1, size=(len(records), 3, 3))
    files[f"binary {args.megabytes:g} MB valid"] = b"b" * 80 + np.uint32(len(records)).tobytes() + records.tobytes()
    files["binary header claims 4e9 triangles"] = b"c" * 80 + np.uint32(2**32 - 1).tobytes() + b"\0" * 1000
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    print(f"{'file':44s} {'size':>10s} {'how':>9s} {'peak RSS':>10s} {'x size':>7s} {'time':>7s}  outcome")
    for k, (name, data) in enumerate(files.items()):
        path = folder / f"file{k}.stl"
        path.write_bytes(data)
        for how in ("read_stl", "load"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(path), how], env=env, capture_output=True, text=True)
            if out.returncode:
                print(f"{name:44s} {how}: child failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            peak, seconds, outcome = out.stdout.split(" ", 2)
            peak = int(peak)
            print(f"{name:44s} {len(data) / 1e6:8.2f} MB {how:>9s} {peak / 1e6:7.1f} MB {peak / len(data):6.1f}x "
                  f"{float(seconds):6.2f} s  {outcome.strip()}")
        path.unlink()


if __name__ == "__main__":
    main()
