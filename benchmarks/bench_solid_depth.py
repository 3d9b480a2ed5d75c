"""Solid meshes (issue 19 item 2): the penetration depth and the directional separation of two
solid meshes, against touche's plain (surface) mesh distance on the same poses and against peers
that compute something comparable:

- ``manifold3d``: the exact intersection volume of the two solids (a boolean; the issue's
  target: the depth at least 10x faster than it on 10k-triangle pairs);
- ``trimesh.proximity.signed_distance`` on the vertices of one mesh against the other (the
  deepest vertex of A in B is its most negative value: the same vertex depth, one direction).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_solid_depth.py [--rounds 5] [--poses 6] [--sizes 1k,10k]

Figures are milliseconds per pose pair (median over interleaved rounds: each method runs once
per round in turn, so a busy shared machine slows them alike). Poses are seeded random
rotations with translations that make most pairs interpenetrate (with the trees and the ray
structures built once before timing).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import trimesh

import touche as tc


def random_poses(rng, n, spread):
    poses = tc.Pose.random(n, seed=int(rng.integers(1 << 30))).matrix.copy()
    poses[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return poses


def solid_pair(size):
    """(torus A, icosphere-like blob B) of about ``size`` triangles each, both solid."""
    sections = max(8, int(round(np.sqrt(size / 2.0))))
    torus = trimesh.creation.torus(1.0, 0.35, major_sections=2 * sections, minor_sections=max(4, sections // 2))
    level = {1000: 3, 10000: 5}.get(size, 3)
    sphere = trimesh.creation.icosphere(level - 1 if size <= 1000 else 4, 0.8)
    # a dent makes it non-convex (no convex shortcut: the vertex depth is timed)
    vertices = np.asarray(sphere.vertices).copy()
    vertices[:, 0] *= 1.0 + 0.3 * np.cos(3 * np.arctan2(vertices[:, 1], vertices[:, 2]))
    sphere = trimesh.Trimesh(vertices, sphere.faces, process=False)
    return torus, sphere


def _manifold(mesh, pose):
    import manifold3d

    vertices = np.asarray(mesh.vertices) @ pose[:3, :3].T + pose[:3, 3]
    return manifold3d.Manifold(manifold3d.Mesh(vert_properties=vertices.astype(np.float32),
                                               tri_verts=np.asarray(mesh.faces, dtype=np.uint32)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--poses", type=int, default=6)
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"touche threads: {tc.get_num_threads()}; milliseconds per pose pair, median of {args.rounds} rounds")
    print(f"{'triangles (A, B)':>18} {'method':<44} {'ms':>9} {'x plain':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        ta, tb = solid_pair(size)
        a = tc.TriangleMesh.from_trimesh(ta, solid=True)
        b = tc.TriangleMesh.from_trimesh(tb, solid=True)
        plain_a, plain_b = tc.TriangleMesh.from_trimesh(ta), tc.TriangleMesh.from_trimesh(tb)
        poses = random_poses(rng, args.poses, 0.6)
        directions = rng.normal(size=(args.poses, 3))
        identity = np.eye(4)
        manifold_a = _manifold(ta, identity)

        def plain():
            for pose in poses:
                tc.distance(plain_a, None, plain_b, pose)

        def depth():
            for pose in poses:
                tc.distance(a, None, b, pose)

        def depth_batch():
            tc.distance(a, None, b, poses)

        def separation():
            for pose, direction in zip(poses, directions):
                tc.separating_translation(a, None, b, pose, direction)

        def volume():
            for pose in poses:
                (manifold_a ^ _manifold(tb, pose)).volume()

        def trimesh_vertices():
            for pose in poses[:2]:  # slow: two poses, scaled to per pose below
                moved = trimesh.Trimesh(np.asarray(tb.vertices) @ pose[:3, :3].T + pose[:3, 3], tb.faces, process=False)
                trimesh.proximity.signed_distance(moved, np.asarray(ta.vertices))

        methods = [("touche.distance, surfaces (not solid)", plain, args.poses),
                   ("touche.distance, solids: penetration depth", depth, args.poses),
                   ("  the same, one batch call", depth_batch, args.poses),
                   ("touche.separating_translation", separation, args.poses),
                   ("manifold3d intersection volume", volume, args.poses),
                   ("trimesh signed_distance, A's vertices in B", trimesh_vertices, 2)]
        for _, run, _ in methods:  # trees, ray structures, k-d trees, compiled kernels
            run()
        times = {name: [] for name, _, _ in methods}
        for _ in range(args.rounds):
            for name, run, count in methods:
                if name.startswith("trimesh") and len(times[name]) >= 2:
                    continue
                start = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - start) / count * 1e3)
        base = float(np.median(times[methods[0][0]]))
        label = f"{len(ta.faces)}, {len(tb.faces)}"
        for name, _, _ in methods:
            value = float(np.median(times[name]))
            print(f"{label:>18} {name:<44} {value:9.2f} {value / base:8.1f}")
        result = tc.distance(a, None, b, poses)
        print(f"{'':>18} penetrating poses: {int((result.status == tc.Status.PENETRATING).sum())} of {len(poses)}")


if __name__ == "__main__":
    main()
