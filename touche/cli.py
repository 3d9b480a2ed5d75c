"""The ``touche`` command: ``touche demo`` (a readable report of every query on a few shapes)
and ``touche warmup`` (compile every kernel into numba's on-disk cache)."""
from __future__ import annotations

import argparse
import sys
import time


def _demo(out):
    import numpy as np

    import touche as tc

    def line(text=""):
        print(text, file=out)

    line("touche demo: a few shapes, every query, one report")
    line("=" * 64)
    started = time.perf_counter()
    tc.warmup()
    line(f"kernels ready (compiled or loaded from cache) in {time.perf_counter() - started:.2f} s")
    line()

    shapes = {
        "sphere r=0.5": tc.Sphere(0.5),
        "capsule r=0.3 len=1": tc.Capsule(0.3, 1.0),
        "box 1x2x0.5": tc.Box([1.0, 2.0, 0.5]),
        "triangle": tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]),
        "tetrahedron": tc.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]),
        "hull of 30 points": tc.ConvexPolyhedron(np.random.default_rng(1).normal(size=(30, 3)) * 0.5),
        "half-space z<=0": tc.HalfSpace([0, 0, 1], 0.0),
    }
    pose_a = tc.Pose.from_rotvec([0.3, -0.2, 0.5], [0.0, 0.0, 0.0])
    pose_b = tc.Pose.from_rotvec([-0.4, 0.1, 0.2], [1.2, 0.3, 0.4])
    line("distance between pairs (A at the origin, B at (1.2, 0.3, 0.4), both rotated):")
    line(f"  {'A':<20} {'B':<20} {'status':<12} {'distance':>10} {'depth':>10}")
    names = list(shapes)
    for i, name_a in enumerate(names):
        for name_b in names[i:]:
            a, b = shapes[name_a], shapes[name_b]
            if (a.kind, b.kind) not in tc.SUPPORTED_PAIRS:
                continue
            result = tc.distance(a, pose_a, b, pose_b)
            line(
                f"  {name_a:<20} {name_b:<20} {result.status.name:<12} "
                f"{result.distance:>10.5f} {result.depth:>10.5f}"
            )
    line()

    box = shapes["box 1x2x0.5"]
    capsule = shapes["capsule r=0.3 len=1"]
    n = 100_000
    poses = tc.Pose.random(n, scale=1.5, seed=7)
    started = time.perf_counter()
    hits = tc.intersects(capsule, poses, box, None)
    elapsed = time.perf_counter() - started
    line(f"batch: capsule vs box at {n:,} random poses -> {hits.mean() * 100:.1f} % intersect "
         f"({elapsed * 1e9 / n:.0f} ns per pair)")
    started = time.perf_counter()
    batch = tc.distance(capsule, poses, box, None)
    elapsed = time.perf_counter() - started
    line(f"batch distance: mean {batch.distance.mean():.4f}, max depth {batch.depth.max():.4f} "
         f"({elapsed * 1e9 / n:.0f} ns per pair)")
    line()

    points = np.array([[0.0, 0.0, 2.0], [0.2, 0.1, 0.0], [3.0, -1.0, 0.5]])
    closest = tc.closest_point(box, pose_b, points)
    line("closest points on the box (B pose) to three points:")
    for p, q, d in zip(points, closest.point, closest.distance):
        line(f"  {p.tolist()} -> {np.round(q, 4).tolist()}  distance {d:.4f}")
    line()

    rays = tc.raycast(shapes["sphere r=0.5"], None, [[-3.0, 0.0, 0.0], [-3.0, 0.4, 0.0], [-3, 0.6, 0.0]],
                      [1.0, 0.0, 0.0])
    line("rays along +x at a sphere of radius 0.5 (offsets 0, 0.4, 0.6):")
    for hit, t, normal in zip(rays.hit, rays.t, rays.normal):
        line(f"  hit={bool(hit)!s:<5} t={t:.4f} normal={np.round(normal, 4).tolist()}")
    line()
    line("done")


def _warmup(out):
    import touche as tc

    started = time.perf_counter()
    tc.warmup()
    print(f"touche kernels compiled / loaded in {time.perf_counter() - started:.2f} s", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="touche", description="touche collision detection")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run every query on a few shapes and print a report")
    commands.add_parser("warmup", help="compile every kernel into numba's on-disk cache")
    args = parser.parse_args(argv)
    if args.command == "demo":
        _demo(sys.stdout)
    elif args.command == "warmup":
        _warmup(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
