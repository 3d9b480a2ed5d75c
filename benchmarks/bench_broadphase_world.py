"""CollisionWorld throughput (no peer: coal / python-fcl have no world with events and motions).

    .venv/bin/python benchmarks/bench_broadphase_world.py [--static 5000] [--moving 500]

Scene: ``--static`` boxes sharing one Box shape at random positions in a cube sized so that ~a
third of them touch another, plus ``--moving`` spheres with random Linear velocities. Reports:
adding every object, ``step(1/60)`` (broad phase over swept boxes, batched narrow phase and time
of impact, events with contact manifolds), ``pairs()`` and ``set_poses`` of all static boxes;
medians of 10 runs. Absolute times; say what the load was (printed).
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import touche  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--static", type=int, default=5000)
    parser.add_argument("--moving", type=int, default=500)
    parser.add_argument("--broadphase", default="dynamic_tree")
    args = parser.parse_args()
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    touche.broadphase.warmup()
    rng = np.random.default_rng(0)
    side = 20.0 * (args.static / 5000) ** (1 / 3)
    world = touche.CollisionWorld(args.broadphase)
    box, ball = touche.Box([0.5, 0.5, 0.5]), touche.Sphere(0.2)
    start = time.perf_counter()
    for _ in range(args.static):
        pose = np.eye(4)
        pose[:3, 3] = rng.uniform(0, side, 3)
        world.add(box, pose)
    for _ in range(args.moving):
        pose = np.eye(4)
        pose[:3, 3] = rng.uniform(0, side, 3)
        world.add(ball, pose, motion=touche.Linear(rng.normal(0, 2.0, 3)))
    print(f"add {len(world)} objects: {time.perf_counter() - start:.2f} s")
    world.step(1 / 60)  # first step: kernels loaded
    times, counts = [], []
    for _ in range(10):
        start = time.perf_counter()
        counts.append(len(world.step(1 / 60)))
        times.append(time.perf_counter() - start)
    print(f"step(1/60): {np.median(times) * 1e3:.1f} ms (median of 10), {int(np.median(counts))} events")
    times = []
    for _ in range(10):
        start = time.perf_counter()
        found = world.pairs()
        times.append(time.perf_counter() - start)
    print(f"pairs(): {np.median(times) * 1e3:.1f} ms, {len(found)} pairs")
    poses = np.tile(np.eye(4), (args.static, 1, 1))
    poses[:, :3, 3] = rng.uniform(0, side, (args.static, 3))
    start = time.perf_counter()
    world.set_poses(np.arange(args.static), poses)
    print(f"set_poses({args.static}): {(time.perf_counter() - start) * 1e3:.1f} ms")
    print("load average %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
