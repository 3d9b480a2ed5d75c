"""Reading a binary STL: touche vs numpy-stl vs trimesh, same file, same process, interleaved.

    python benchmarks/bench_stl.py            # 1,000,000 triangles, 7 rounds
    python benchmarks/bench_stl.py --quick    # 100,000 triangles, 3 rounds

The file is a finely tessellated UV sphere written to a temporary folder. Compared:
  * touche.mesh.read_stl  (validated triangle soup, (m, 3, 3) float64)  vs  numpy-stl
    ``stl.mesh.Mesh.from_file`` (a float32 soup, no welding) — the same work;
  * touche.mesh.load      (read + exact vertex welding -> TriangleMesh) vs  ``trimesh.load``
    (read + merge duplicate vertices; its default ``process=True``) — the same work;
  * ASCII: touche.mesh.read_stl vs numpy-stl on the same mesh written as ASCII (size / 10).
Every contender runs once per round, in a rotating order (rounds interleave the libraries, so a
load change on this shared machine hits all of them alike); the table gives medians over rounds
and the ratio touche / peer (< 1: touche is faster), plus the 1-minute load average before and
after. Warm-up calls (numba compilation, page cache) come first and are not timed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from touche import mesh as tm  # noqa: E402
from touche.cli import _uv_sphere  # noqa: E402


def interleaved(contenders, rounds):
    """{name: median seconds}: each round calls every contender once, the order rotating."""
    names = list(contenders)
    for name in names:  # warm-up
        contenders[name]()
    times = {name: [] for name in names}
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            start = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(values)) for name, values in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k triangles, 3 rounds")
    parser.add_argument("--triangles", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    triangles = args.triangles or (100_000 if args.quick else 1_000_000)
    rounds = args.rounds or (3 if args.quick else 7)
    from stl import mesh as numpy_stl
    import trimesh

    load_before = os.getloadavg()[0]
    vertices, faces = _uv_sphere(triangles)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sphere.stl")
        tm.save((vertices, faces), path)
        size = os.path.getsize(path)
        print(f"binary STL: {len(faces):,} triangles, {size / 1e6:.1f} MB; {rounds} interleaved rounds")
        # the same answers first
        check = tm.load(path)
        assert len(check.vertices) == len(vertices) and len(check.faces) == len(faces)
        np.testing.assert_array_equal(numpy_stl.Mesh.from_file(path).vectors.astype(np.float64), tm.read_stl(path))
        assert len(trimesh.load(path).vertices) == len(check.vertices)

        ascii_path = os.path.join(folder, "small_ascii.stl")
        small_v, small_f = _uv_sphere(max(triangles // 10, 1000))
        tm.save((small_v, small_f), ascii_path, ascii=True)

        t = interleaved({
            "touche.read_stl": lambda: tm.read_stl(path),
            "numpy-stl": lambda: numpy_stl.Mesh.from_file(path),
            "touche.load": lambda: tm.load(path),
            "trimesh.load": lambda: trimesh.load(path),
            "touche.read_stl ascii": lambda: tm.read_stl(ascii_path),
            "numpy-stl ascii": lambda: numpy_stl.Mesh.from_file(ascii_path),
        }, rounds)
    load_after = os.getloadavg()[0]
    rows = [
        ("read soup: touche.read_stl vs numpy-stl", t["touche.read_stl"], t["numpy-stl"]),
        ("read + weld: touche.load vs trimesh.load", t["touche.load"], t["trimesh.load"]),
        (f"ASCII read ({len(small_f):,} tris): touche vs numpy-stl", t["touche.read_stl ascii"], t["numpy-stl ascii"]),
    ]
    print(f"{'workload':<58} {'touche ms':>10} {'peer ms':>10} {'ratio':>7}")
    for name, ours, peer in rows:
        print(f"{name:<58} {ours * 1e3:>10.1f} {peer * 1e3:>10.1f} {ours / peer:>7.2f}")
    print(f"touche.load breakdown: read_stl {t['touche.read_stl'] * 1e3:.1f} ms, welding and TriangleMesh "
          f"{(t['touche.load'] - t['touche.read_stl']) * 1e3:.1f} ms")
    print(f"load average (1 min) before {load_before:.2f}, after {load_after:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
