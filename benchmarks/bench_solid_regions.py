"""Solid meshes (issue 19 item 2): the contact regions (``touche.contacts`` of two solid meshes)
and the intersection volume (``touche.intersection_volume``), against manifold3d's exact
boolean intersection (double precision, ``Mesh64``) on the same pose pairs: its volume, and its
volume plus ``decompose()`` (the connected components = the regions). The vertex depth
(``touche.distance`` of the solids) is timed alongside for scale.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_solid_regions.py [--rounds 5] [--poses 6] [--sizes 1000,10000]

Figures are milliseconds per pose pair (median over interleaved rounds: each method runs once
per round in turn, so a busy shared machine slows them alike). Poses are seeded random
rotations with translations that make most pairs interpenetrate; trees and compiled kernels
are built before timing. The volumes are checked against manifold3d's (largest relative
difference printed).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import touche as tc
from bench_solid_depth import random_poses, solid_pair  # the same meshes and poses as the depth benchmark


def _manifold(mesh, pose):
    import manifold3d

    vertices = np.asarray(mesh.vertices) @ pose[:3, :3].T + pose[:3, 3]
    return manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.ascontiguousarray(vertices),
                                                 tri_verts=np.asarray(mesh.faces, dtype=np.uint32)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--poses", type=int, default=6)
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"touche threads: {tc.get_num_threads()}; load average {os.getloadavg()[0]:.2f}; "
          f"milliseconds per pose pair, median of {args.rounds} rounds")
    print(f"{'triangles (A, B)':>18} {'method':<46} {'ms':>9}")
    for size in (int(s) for s in args.sizes.split(",")):
        ta, tb = solid_pair(size)
        a = tc.TriangleMesh.from_trimesh(ta, solid=True)
        b = tc.TriangleMesh.from_trimesh(tb, solid=True)
        poses = random_poses(rng, args.poses, 0.6)
        manifold_a = _manifold(ta, np.eye(4))

        def depth():
            for pose in poses:
                tc.distance(a, None, b, pose)

        def contacts():
            for pose in poses:
                tc.contacts(a, None, b, pose)

        def volume():
            for pose in poses:
                tc.intersection_volume(a, None, b, pose)

        def manifold_volume():
            for pose in poses:
                (manifold_a ^ _manifold(tb, pose)).volume()

        def manifold_regions():
            for pose in poses:
                both = manifold_a ^ _manifold(tb, pose)
                both.volume()
                both.decompose()

        methods = [("touche.distance, solids (vertex depth)", depth),
                   ("touche.contacts, solids (regions, 4 points each)", contacts),
                   ("touche.intersection_volume", volume),
                   ("manifold3d intersection volume", manifold_volume),
                   ("manifold3d intersection volume + decompose", manifold_regions)]
        for _, run in methods:
            run()
        times = {name: [] for name, _ in methods}
        for _ in range(args.rounds):
            for name, run in methods:
                start = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - start) / len(poses) * 1e3)
        label = f"{len(ta.faces)}, {len(tb.faces)}"
        for name, _ in methods:
            print(f"{label:>18} {name:<46} {float(np.median(times[name])):9.2f}")
        worst, regions = 0.0, []
        for pose in poses:
            ours = tc.intersection_volume(a, None, b, pose)
            both = manifold_a ^ _manifold(tb, pose)
            reference = both.volume()
            worst = max(worst, abs(ours - reference) / max(reference, 1e-300))
            regions.append((tc.contacts(a, None, b, pose).regions, len(both.decompose())))
        print(f"{'':>18} largest relative volume difference {worst:.1e}; regions (touche, manifold3d): {regions}")


if __name__ == "__main__":
    main()
