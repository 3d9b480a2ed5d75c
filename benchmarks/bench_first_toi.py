"""The first mesh time of impact on a fresh fine mesh (issue 23, finding 15): the mesh's hull
(Qhull, then its slack, touche/_kernels/primitives/hull.py), its tree and the pair's arguments are built on
that first call. Kernels are compiled / loaded first on a small mesh.

    python benchmarks/bench_first_toi.py [--triangles 82000] [--repeat 3]
"""
import argparse
import time

import touche as tc
from touche import impact
from touche.cli import _uv_sphere


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triangles", type=int, default=82_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    move = tc.Linear([0.0, 0.0, -1.0], tc.Pose.from_translation([0.1, 0.2, 3.0]))
    vertices, faces = _uv_sphere(2000)
    small = tc.TriangleMesh(vertices * 0.3, faces)
    tc.time_of_impact(tc.TriangleMesh(vertices, faces), None, small, move, 5.0)  # kernels
    vertices, faces = _uv_sphere(args.triangles)
    print(f"UV sphere, {len(faces):,} triangles (every vertex on the hull) against a {len(small.faces):,}-triangle mesh")
    for _ in range(args.repeat):
        mesh = tc.TriangleMesh(vertices, faces)
        started = time.perf_counter()
        result = tc.time_of_impact(mesh, None, small, move, 5.0)
        first = time.perf_counter() - started
        started = time.perf_counter()
        tc.time_of_impact(mesh, None, small, move, 5.0)
        second = time.perf_counter() - started
        print(f"  first time of impact {first:.3f} s, second {second * 1e3:.2f} ms, t = {result.time:.6f}")
        del mesh
    impact._HULLS.clear()


if __name__ == "__main__":
    main()
