"""Memory soak (issue 23, finding 8): create a mesh, query it (mesh time of impact against a
sphere and a mesh, clearance, distance, closest points), delete it; repeat. Prints the resident
memory (RSS, /proc/self/statm) along the way and its growth after a warm-up of 20 cycles.

    python benchmarks/soak_memory.py                     # 1,000 cycles of a 20k-triangle mesh
    python benchmarks/soak_memory.py --cycles 10000
    python benchmarks/soak_memory.py --cycles 40 --triangles 82000 --kind sphere
"""
import argparse
import gc
import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "stress"))

import touche as tc  # noqa: E402
from test_memory import box_surface, rss_bytes  # noqa: E402

clearance = importlib.import_module("touche.clearance")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--triangles", type=int, default=20_000)
    parser.add_argument("--kind", choices=("box", "sphere"), default="box",
                        help="box: subdivided cube surface (8 hull corners); sphere: UV sphere (every vertex on the hull)")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if args.kind == "box":
        vertices, faces = box_surface(max(1, int(round(np.sqrt(args.triangles / 12)))))
    else:
        from touche.cli import _uv_sphere

        vertices, faces = _uv_sphere(args.triangles)
    small = tc.TriangleMesh(*box_surface(4))
    probe = tc.Sphere(0.25)
    move = tc.Linear([0.0, 0.0, -1.0], tc.Pose.from_translation([0.1, 0.2, 3.0]))
    far = tc.Pose.from_translation([0.0, 0.0, 4.0])

    def cycle():
        mesh = tc.TriangleMesh(vertices, faces)
        tc.time_of_impact(mesh, None, probe, move, 5.0)
        tc.time_of_impact(mesh, None, small, move, 5.0)
        clearance.clearance(mesh, None, small, far)
        tc.distance(mesh, None, probe, far)
        tc.closest_point(mesh, None, [[0.0, 0.0, 3.0], [0.3, 0.1, -2.0]])

    print(f"mesh: {args.kind}, {len(faces):,} triangles; {args.cycles:,} cycles after {args.warmup} warm-up cycles")
    for _ in range(args.warmup):
        cycle()
    gc.collect()
    start = rss_bytes()
    started = time.perf_counter()
    report_every = max(1, args.cycles // 10)
    for k in range(1, args.cycles + 1):
        cycle()
        if k % report_every == 0 or k == args.cycles:
            gc.collect()
            print(f"  cycle {k:>7,}: RSS {rss_bytes() / 2**20:8.1f} MB  (growth {(rss_bytes() - start) / 2**20:+7.1f} MB, "
                  f"{time.perf_counter() - started:7.1f} s)", flush=True)
    gc.collect()
    growth = rss_bytes() - start
    print(f"RSS growth over {args.cycles:,} cycles: {growth / 2**20:+.1f} MB "
          f"({(time.perf_counter() - started) / args.cycles * 1e3:.1f} ms per cycle)")


if __name__ == "__main__":
    main()
