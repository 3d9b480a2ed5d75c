"""Solid meshes (issue 19 item 2): the penetration depth and the directional separation of two
solid meshes, against touche's plain (surface) mesh distance on the same poses and against peers
that compute something comparable:

- ``manifold3d``: the exact intersection volume of the two solids (a boolean; the issue's
  target: the depth at least 10x faster than it on 10k-triangle pairs);
- ``trimesh.proximity.signed_distance`` on the vertices of one mesh against the other (the
  deepest vertex of A in B is its most negative value: the same vertex depth, one direction).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_solid_depth.py [--rounds 5] [--poses 6] [--sizes 1k,10k]
    PYTHONPATH=. .venv/bin/python benchmarks/bench_solid_depth.py --panel [--rounds 5] [--poses 12]

--panel: every closed, consistently oriented mesh of the benchmark panel (benchmarks/panel.py,
up to 60k triangles) against a copy of itself at the panel's seeded "overlap" poses: the solid
depth one call per pose pair and one batch call, against manifold3d's intersection volume; the
worst mesh is the one to judge.

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
    return _manifold_arrays(np.asarray(mesh.vertices), mesh.faces, pose)


def _manifold_arrays(vertices, faces, pose):
    """manifold3d's solid of the triangles ``faces`` of ``vertices`` placed by ``pose`` (float32, as
    manifold3d's default Mesh)."""
    import manifold3d

    placed = vertices @ pose[:3, :3].T + pose[:3, 3]
    return manifold3d.Manifold(manifold3d.Mesh(vert_properties=placed.astype(np.float32),
                                               tri_verts=np.asarray(faces, dtype=np.uint32)))


def panel_rows(rounds, count):
    """The --panel table (module doc)."""
    import panel
    from touche.errors import GeometryError
    from touche.shapes import solid_orientation

    print(f"touche threads: {tc.get_num_threads()}; milliseconds per pose pair, median of {rounds} rounds; "
          f"{count} overlap poses per mesh")
    print(f"{'mesh':<14} {'triangles':>9} {'one call':>9} {'batch':>8} {'manifold3d':>10} {'x, one':>7} {'x, batch':>8}"
          f" {'penetrating':>11}")
    worst = None
    for entry in panel.meshes(max_triangles=60_000):
        if not panel.is_closed(entry.faces):
            continue
        try:
            solid_orientation(entry.vertices, entry.faces)
        except GeometryError:
            continue  # not a solid (orientation, self-crossing): touche refuses it, so does the table
        mesh = tc.TriangleMesh(entry.vertices, entry.faces, solid=True)
        poses = panel.poses(entry, "overlap", count, seed=1)
        fixed = _manifold_arrays(entry.vertices, entry.faces, np.eye(4))

        def one():
            for pose in poses:
                tc.distance(mesh, None, mesh, pose)

        def batch():
            tc.distance(mesh, None, mesh, poses)

        def volume():
            for pose in poses:
                (fixed ^ _manifold_arrays(entry.vertices, entry.faces, pose)).volume()

        methods = {"one": one, "batch": batch, "volume": volume}
        for run in methods.values():
            run()
        times = {name: [] for name in methods}
        for _ in range(rounds):
            for name, run in methods.items():
                start = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - start) / len(poses) * 1e3)
        ms = {name: float(np.median(value)) for name, value in times.items()}
        penetrating = int((tc.distance(mesh, None, mesh, poses).status == tc.Status.PENETRATING).sum())
        ratio_one, ratio_batch = ms["volume"] / ms["one"], ms["volume"] / ms["batch"]
        print(f"{entry.name:<14} {len(entry.faces):9,d} {ms['one']:9.3f} {ms['batch']:8.3f} {ms['volume']:10.3f} "
              f"{ratio_one:6.1f}x {ratio_batch:7.1f}x {penetrating:>6d} of {len(poses)}", flush=True)
        if len(entry.faces) >= 3000 and (worst is None or ratio_one < worst[1]):
            worst = (entry.name, ratio_one)
    if worst is not None:
        print(f"worst mesh of >= 3k triangles, one call per pose pair: {worst[0]}, {worst[1]:.1f}x faster than manifold3d")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--poses", type=int, default=None, help="pose pairs per mesh (6; 12 with --panel)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--panel", action="store_true", help="the panel's closed meshes instead (module doc)")
    args = parser.parse_args(argv)
    if args.panel:
        panel_rows(args.rounds, args.poses or 12)
        return
    args.poses = args.poses or 6
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
