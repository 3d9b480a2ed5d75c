"""Rounded shapes (touche.Rounded / RoundedBox) against coal's swept-sphere radius (the same
Minkowski sum: a core grown by a ball), distance per pose, in one process on the same inputs.

    python benchmarks/bench_rounded.py [--poses 2000] [--rounds 5]

Pairs: rounded box - rounded box, rounded box - rounded cylinder, rounded cylinder - rounded
ellipsoid. Poses: seeded random rotations, centres apart by 1.2-2.4 (mostly separated, some
overlapping). Reports microseconds per pose for touche's single calls (a Python loop, as a coal
user writes it), touche's batch call (one call for all poses) and coal's single calls, the
ratios to coal, and the largest difference of the distances where both say separated.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial.transform import Rotation

import touche as tc


def _poses(rng, count, low, high):
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, :3] = Rotation.random(count, random_state=rng).as_matrix()
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    poses[:, :3, 3] = direction * rng.uniform(low, high, (count, 1))
    return poses


def _coal_geometry(coal, core, radius):
    if isinstance(core, tc.Box):
        geometry = coal.Box(*core.extents)
    elif isinstance(core, tc.Cylinder):
        geometry = coal.Cylinder(core.radius, core.length)
    elif isinstance(core, tc.Ellipsoid):
        geometry = coal.Ellipsoid(*core.radii)
    else:
        raise ValueError(core)
    geometry.setSweptSphereRadius(radius)
    return geometry


def _best(function, rounds):
    best = np.inf
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--poses", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import coal

    rng = np.random.default_rng(3)
    cases = [
        ("rounded box - rounded box", tc.Box([0.8, 0.6, 0.5]), 0.1, tc.Box([0.5, 0.7, 0.4]), 0.05),
        ("rounded box - rounded cylinder", tc.Box([0.8, 0.6, 0.5]), 0.1, tc.Cylinder(0.3, 0.8), 0.05),
        ("rounded cylinder - rounded ellipsoid", tc.Cylinder(0.3, 0.8), 0.05, tc.Ellipsoid([0.4, 0.3, 0.2]), 0.1),
    ]
    print(f"{args.poses} poses, best of {args.rounds} rounds, microseconds per pose")
    print("| pair | touche single | touche batch | coal single | single / coal | batch / coal | max |d| diff |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, core_a, radius_a, core_b, radius_b in cases:
        a, b = tc.Rounded(core_a, radius_a), tc.Rounded(core_b, radius_b)
        ga, gb = _coal_geometry(coal, core_a, radius_a), _coal_geometry(coal, core_b, radius_b)
        poses_a = _poses(rng, args.poses, 0.0, 0.0)
        poses_b = _poses(rng, args.poses, 1.2, 2.4)
        coal_a = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses_a]
        coal_b = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses_b]
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        tc.distance(a, poses_a[0], b, poses_b[0])  # compile / load
        tc.distance(a, poses_a[:2], b, poses_b[:2])

        def touche_single():
            for pa, pb in zip(poses_a, poses_b):
                tc.distance(a, pa, b, pb)

        def coal_single():
            for ta, tb in zip(coal_a, coal_b):
                result.clear()
                coal.distance(ga, ta, gb, tb, request, result)

        single = _best(touche_single, args.rounds) / args.poses * 1e6
        batch = _best(lambda: tc.distance(a, poses_a, b, poses_b), args.rounds) / args.poses * 1e6
        peer = _best(coal_single, args.rounds) / args.poses * 1e6
        ours = tc.distance(a, poses_a, b, poses_b).signed_distance
        theirs = np.array([coal.distance(ga, ta, gb, tb, request, coal.DistanceResult())
                           for ta, tb in zip(coal_a, coal_b)])
        apart = (ours > 1e-6) & (theirs > 1e-6)
        difference = float(np.abs(ours[apart] - theirs[apart]).max()) if apart.any() else float("nan")
        print(f"| {name} | {single:.2f} | {batch:.2f} | {peer:.2f} | {single / peer:.2f} | {batch / peer:.2f} | "
              f"{difference:.1e} |")


if __name__ == "__main__":
    main()
