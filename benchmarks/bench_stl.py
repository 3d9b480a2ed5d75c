"""Reading a binary STL: touche vs numpy-stl vs trimesh, same file, same process.

    python benchmarks/bench_stl.py            # 1,000,000 triangles
    python benchmarks/bench_stl.py --quick    # 100,000 triangles, fewer repeats

The file is a finely tessellated UV sphere written to a temporary folder. Compared:
  * touche.mesh.read_stl  (validated triangle soup, (m, 3, 3) float64)  vs  numpy-stl
    ``stl.mesh.Mesh.from_file`` (a float32 soup, no welding) — the same work;
  * touche.mesh.load      (read + exact vertex welding -> TriangleMesh) vs  ``trimesh.load``
    (read + merge duplicate vertices; its default ``process=True``) — the same work;
  * ASCII: touche.mesh.read_stl vs numpy-stl on the same mesh as ASCII (quick mode only, size /10).
Times are medians of repeats after a warm-up call (numba compilation excluded); the table gives
the ratio touche / peer (< 1: touche is faster).
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


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k triangles, 3 repeats")
    parser.add_argument("--triangles", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    triangles = args.triangles or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (3 if args.quick else 5)

    vertices, faces = _uv_sphere(triangles)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sphere.stl")
        tm.save((vertices, faces), path)
        size = os.path.getsize(path)
        print(f"binary STL: {len(faces):,} triangles, {size / 1e6:.1f} MB; median of {repeats} repeats")

        soup = median_time(lambda: tm.read_stl(path), repeats)
        welded = median_time(lambda: tm.load(path), repeats)
        check = tm.load(path)
        assert len(check.vertices) == len(vertices) and len(check.faces) == len(faces)
        try:
            from stl import mesh as numpy_stl

            peer = median_time(lambda: numpy_stl.Mesh.from_file(path), repeats)
            np.testing.assert_array_equal(numpy_stl.Mesh.from_file(path).vectors.astype(np.float64), tm.read_stl(path))
            rows.append(("read soup: touche.read_stl vs numpy-stl", soup, peer))
        except ImportError:
            print("numpy-stl not installed (pip install numpy-stl): skipped")
        try:
            import trimesh

            peer = median_time(lambda: trimesh.load(path), repeats)
            other = trimesh.load(path)
            assert len(other.vertices) == len(check.vertices)
            rows.append(("read + weld: touche.load vs trimesh.load", welded, peer))
        except ImportError:
            print("trimesh not installed: skipped")

        ascii_path = os.path.join(folder, "small_ascii.stl")
        small_v, small_f = _uv_sphere(max(triangles // 10, 1000))
        tm.save((small_v, small_f), ascii_path, ascii=True)
        ascii_ours = median_time(lambda: tm.read_stl(ascii_path), repeats)
        try:
            from stl import mesh as numpy_stl

            ascii_peer = median_time(lambda: numpy_stl.Mesh.from_file(ascii_path), repeats)
            rows.append((f"ASCII read ({len(small_f):,} tris): touche vs numpy-stl", ascii_ours, ascii_peer))
        except ImportError:
            pass

    print(f"{'workload':<58} {'touche ms':>10} {'peer ms':>10} {'ratio':>7}")
    for name, ours, peer in rows:
        print(f"{name:<58} {ours * 1e3:>10.1f} {peer * 1e3:>10.1f} {ours / peer:>7.2f}")
    print(f"touche.load breakdown: read_stl {soup * 1e3:.1f} ms, welding and TriangleMesh {(welded - soup) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
