"""Environment shapes (issue 20 item 4): build times of touche.HeightField and
touche.OccupancyMap, the lazy structures their first queries build, and query times against coal
(HeightFieldAABB: collisions only, coal has no height-field distance; OcTree: distance and
collision).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_environments.py [--grid 1000] [--points 1000000]
        [--queries 2000] [--rounds 3] [--worst]

Build: median of ``--rounds`` builds (numpy, one thread). "First queries": each lazy structure
timed on its own, in the order the verbs build them (``mesh.bvh``: the tree of the pair verbs;
``mesh_tree``: the tree of points, rays and inside tests; ``topology``: welding and the closed
check of the inside test; ``mesh_data``: the per-mesh data of solids.py; ``ray_tree``). Queries:
microseconds per query, single calls from Python (median over rounds of ``--queries`` seeded
poses) and one batch call over all of them (per pose), touche against coal on the same poses;
coal's solver and request defaults. The cloud is a 1M-point scan of a 5 x 4 x 3 m room (its six
walls, 5 mm noise) at 2 cm voxels; ``--worst`` adds uniform points in a unit cube at 2 mm voxels
(every voxel isolated: 12 triangles each, the mesh path's worst case).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import touche as tc
from touche.meshquery import mesh_tree
from touche.solids import mesh_data


def _median_time(function, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def _room(rng, n):
    sides = rng.integers(0, 6, n)
    u, v = rng.random(n), rng.random(n)
    dims = np.array([5.0, 4.0, 3.0])
    points = np.empty((n, 3))
    for side in range(6):
        mask = sides == side
        axis = side // 2
        first, second = [a for a in range(3) if a != axis]
        points[mask, axis] = (side % 2) * dims[axis]
        points[mask, first] = u[mask] * dims[first]
        points[mask, second] = v[mask] * dims[second]
    return points + 0.005 * rng.standard_normal((n, 3))


def _terrain(rng, size):
    x = np.linspace(0.0, 20.0, size)
    xx, yy = np.meshgrid(x, x)
    return np.sin(xx) * np.cos(0.7 * yy) + 0.05 * rng.random(xx.shape) + 2.0


def _lazy(mesh, label):
    """Time each lazy structure once (the first query builds them)."""
    rows = []
    for name, build in (("mesh.bvh", lambda: mesh.bvh), ("mesh_tree", lambda: mesh_tree(mesh)),
                        ("topology", lambda: mesh_tree(mesh).topology()), ("mesh_data", lambda: mesh_data(mesh)),
                        ("ray_tree", lambda: mesh_tree(mesh).ray_tree())):
        start = time.perf_counter()
        build()
        rows.append((name, time.perf_counter() - start))
    total = sum(t for _, t in rows)
    print(f"  {label}: first-query structures " + ", ".join(f"{n} {t:.2f} s" for n, t in rows) + f"; total {total:.2f} s")
    return total


def _poses(rng, n, low, high):
    poses = tc.Pose.random(n, seed=int(rng.integers(1 << 30))).matrix.copy()
    poses[:, :3, 3] = rng.uniform(low, high, (n, 3))
    return poses


def _query_table(title, env, coal_env, poses, rounds, coal_distance):
    import coal

    print(f"\n{title}: microseconds per query ({len(poses)} poses; single = one Python call each)")
    print(f"  {'shape':<8} {'verb':<11} {'touche single':>14} {'touche batch':>13} {'coal single':>12} {'coal/touche':>12}")
    transforms = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses]
    identity = coal.Transform3s()
    for shape, coal_shape, name in ((tc.Sphere(0.1), coal.Sphere(0.1), "sphere"),
                                     (tc.Box([0.2, 0.1, 0.3]), coal.Box(0.2, 0.1, 0.3), "box")):
        verbs = [("intersects", lambda p: tc.intersects(shape, p, env, None),
                  lambda t: coal.collide(coal_shape, t, coal_env, identity, coal.CollisionRequest(), coal.CollisionResult()))]
        verbs.append(("distance", lambda p: tc.distance(shape, p, env, None),
                      (lambda t: coal.distance(coal_shape, t, coal_env, identity, coal.DistanceRequest(), coal.DistanceResult()))
                      if coal_distance else None))
        for verb, ours, theirs in verbs:
            ours(poses[0])  # compile / build outside the timing
            single, _ = _median_time(lambda: [ours(p) for p in poses], rounds)
            batch_fn = (lambda: tc.intersects(shape, poses, env, None)) if verb == "intersects" else (
                lambda: tc.distance(shape, poses, env, None))
            batch, _ = _median_time(batch_fn, rounds)
            if theirs is not None:
                theirs(transforms[0])
                coal_time, _ = _median_time(lambda: [theirs(t) for t in transforms], rounds)
                coal_text, ratio = f"{1e6 * coal_time / len(poses):12.1f}", f"{coal_time / single:12.2f}"
            else:
                coal_text, ratio = f"{'n/a':>12}", f"{'':>12}"
            print(f"  {name:<8} {verb:<11} {1e6 * single / len(poses):14.1f} {1e6 * batch / len(poses):13.2f} "
                  f"{coal_text} {ratio}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=1000)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worst", action="store_true")
    args = parser.parse_args(argv)
    import coal

    rng = np.random.default_rng(0)
    print(f"touche threads: {tc.get_num_threads()} (shared machines: figures vary run to run)")
    # compile what the first queries need on small instances, outside every timing
    small_field = tc.HeightField(np.random.default_rng(1).random((4, 4)))
    small_map = tc.OccupancyMap.from_points(np.random.default_rng(1).random((50, 3)), 0.2)
    for env in (small_field, small_map):
        for shape in (tc.Sphere(0.1), tc.Box([0.1, 0.2, 0.3])):
            tc.distance(shape, tc.Pose.from_translation([0.5, 0.5, 0.5]), env, None)
            tc.intersects(shape, tc.Pose.from_translation([0.5, 0.5, 0.5]), env, None)
            tc.distance(shape, np.tile(np.eye(4), (2, 1, 1)), env, None)
            tc.intersects(shape, np.tile(np.eye(4), (2, 1, 1)), env, None)
        tc.raycast(env, None, [0.5, 0.5, 5.0], [0.0, 0.0, -1.0])

    print("\nBuild (median of rounds; the BVH and the other query structures are built lazily, timed after)")
    heights = _terrain(rng, args.grid)
    spacing = 20.0 / (args.grid - 1)
    seconds, field = _median_time(lambda: tc.HeightField(heights, spacing), args.rounds)
    print(f"  HeightField {args.grid}x{args.grid} (solid): {seconds:.3f} s; {len(field.vertices)} vertices, "
          f"{len(field.faces)} triangles")
    start = time.perf_counter()
    coal_field = coal.HeightFieldAABB(20.0, 20.0, heights[::-1].copy(), 0.0)
    print(f"  coal.HeightFieldAABB {args.grid}x{args.grid} (its tree included): {time.perf_counter() - start:.3f} s")
    _lazy(field, "HeightField")

    points = _room(rng, args.points)
    seconds, grid = _median_time(lambda: tc.OccupancyMap.from_points(points, 0.02), args.rounds)
    print(f"  OccupancyMap.from_points {args.points} points (room scan, 2 cm): {seconds:.3f} s; "
          f"{len(grid.voxels)} voxels, {len(grid.faces)} triangles")
    start = time.perf_counter()
    coal_map = coal.makeOctree(points, 0.02)
    print(f"  coal.makeOctree same points: {time.perf_counter() - start:.3f} s")
    _lazy(grid, "OccupancyMap")
    if args.worst:
        cube = rng.random((args.points, 3))
        seconds, worst = _median_time(lambda: tc.OccupancyMap.from_points(cube, 0.002), 1)
        print(f"  OccupancyMap.from_points {args.points} uniform points at 2 mm (isolated voxels): {seconds:.3f} s; "
              f"{len(worst.voxels)} voxels, {len(worst.faces)} triangles")
        start = time.perf_counter()
        coal.makeOctree(cube, 0.002)
        print(f"  coal.makeOctree same points: {time.perf_counter() - start:.3f} s")

    # queries: poses near the surfaces (most within a few voxels / cells of them)
    field_poses = _poses(rng, args.queries, [1.0, 1.0, 0.5], [19.0, 19.0, 4.0])
    # coal's grid is centred on the origin, row 0 at +y: the same terrain shifted by (-10, -10)
    shifted = field_poses.copy()
    shifted[:, 0, 3] -= 10.0
    shifted[:, 1, 3] -= 10.0
    field_centered = tc.HeightField(heights, spacing, origin=(-10.0, -10.0), floor=0.0)
    field_centered.bvh
    _query_table("HeightField vs coal.HeightFieldAABB (floor 0 = coal's min_height)", field_centered, coal_field,
                 shifted, args.rounds, coal_distance=False)
    map_poses = _poses(rng, args.queries, [-0.3, -0.3, -0.3], [5.3, 4.3, 3.3])
    _query_table("OccupancyMap vs coal OcTree (room, 2 cm)", grid, coal_map, map_poses, args.rounds, coal_distance=True)


if __name__ == "__main__":
    main()
