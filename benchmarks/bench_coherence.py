"""Temporal coherence (Ericson 6.7): a sequence of slightly moved mesh-mesh queries through
touche.bvh.CoherentPair (witness pairs, front tracking) vs the same queries made independently
(touche.bvh.intersects / distance, one call per pose), same process, same poses, interleaved in
chunks (the machine is shared: both sides of each ratio see the same load).

Sequences (two copies of the mesh; B moves, A stays):
- "through": B's path enters A and leaves again (about half the steps in contact), small steps;
- "hover": B circles A at a small clearance (1-3 % of the size), never touching;
- "graze": the same at 0.1-0.3 % of the size (deep traversals without contact);
- "slide": B pressed 1 % of the size into A and sliding along it (in contact throughout).
Reported: time per query of each, ratio coherent / independent (< 1: coherence pays) of the
totals and, robust to preemption on a loaded machine, the median of the per-chunk ratios.

    python benchmarks/bench_coherence.py [--mesh differential/diff_ring.stl] [--steps 1000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def through_path(center, size, n, rng):
    from scipy.spatial.transform import Rotation

    t = np.linspace(0.0, 1.0, n)
    start = rng.normal(size=3)
    start *= 1.1 * size / np.linalg.norm(start)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.from_rotvec(np.outer(0.6 * t, axis)).as_matrix()
    poses[:, :3, 3] = (center - np.einsum("kij,j->ki", poses[:, :3, :3], center) + np.outer(1.0 - 2.0 * t, start)
                       + 0.02 * size * np.sin(np.outer(t * 17.0, [1.0, 2.0, 3.0])))
    return poses


def hover_path(mesh, center, size, n, rng, clearance_fraction=0.02):
    """B displaced along a slowly turning direction, each step at a clearance of (1 +- 0.5) x
    ``clearance_fraction`` of the size (found by bisection on the distance)."""
    import touche.bvh as bvh

    t = np.linspace(0.0, 2.0 * np.pi, n)
    poses = np.tile(np.eye(4), (n, 1, 1))
    directions = np.stack([np.cos(t), np.sin(t), 0.3 * np.sin(3 * t)], axis=1)
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    clearance = size * clearance_fraction * (1.0 + 0.5 * np.sin(5 * t))
    lo = np.zeros(n)
    hi = np.full(n, 2.0 * size)
    for _ in range(30):  # bisection on the offset so that the distance is the clearance
        mid = 0.5 * (lo + hi)
        poses[:, :3, 3] = directions * mid[:, None]
        d = bvh.distance(mesh, None, mesh, poses).distance
        below = d < clearance
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    poses[:, :3, 3] = directions * hi[:, None]
    return poses


def slide_path(mesh, center, size, n, rng, depth_fraction=0.01):
    """B pressed into A by about ``depth_fraction`` of the size (from a separated start along a
    turning direction: bisection to the first contact, then that much further), sliding
    slowly: nearly every step in contact."""
    poses = hover_path(mesh, center, size, n, rng, 1e-6)
    offsets = poses[:, :3, 3]
    poses[:, :3, 3] = offsets - depth_fraction * size * offsets / np.linalg.norm(offsets, axis=1)[:, None]
    return poses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", default="differential/diff_ring.stl")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=50)
    args = parser.parse_args()

    import pybullet_data
    import trimesh

    import touche as tc
    import touche.bvh as bvh

    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), args.mesh), force="mesh", process=False)
    mesh = tc.TriangleMesh(m.vertices, m.faces)
    size = float(np.linalg.norm(m.extents))
    center = np.asarray(m.vertices).mean(axis=0)
    rng = np.random.default_rng(11)
    print(f"mesh {args.mesh}: {len(m.faces)} triangles; {args.steps} steps per sequence; load average "
          f"{os.getloadavg()[0]:.2f}")
    sequences = {"through": through_path(center, size, args.steps, rng),
                 "hover": hover_path(mesh, center, size, args.steps, rng),
                 "graze": hover_path(mesh, center, size, args.steps, rng, 0.002),
                 "slide": slide_path(mesh, center, size, args.steps, rng)}
    pair = bvh.CoherentPair(mesh, mesh)
    pair.intersects(None, np.eye(4))  # compile / warm
    pair.distance(None, np.eye(4))
    bvh.intersects(mesh, None, mesh, np.eye(4))
    bvh.distance(mesh, None, mesh, np.eye(4))
    for name, poses in sequences.items():
        hits = bvh.intersects(mesh, None, mesh, poses)
        time.sleep(0.05)  # the batch call's OpenMP threads go idle before the single-call timings
        for verb in ("intersects", "distance"):
            independent = getattr(bvh, verb)
            chunks = {"independent": [], "coherent": []}
            pair.reset()
            coherent = getattr(pair, verb)
            for lo in range(0, len(poses), args.chunk):
                chunk = poses[lo:lo + args.chunk]
                start = time.perf_counter()
                for pose in chunk:
                    independent(mesh, None, mesh, pose)
                chunks["independent"].append(time.perf_counter() - start)
                start = time.perf_counter()
                for pose in chunk:
                    coherent(None, pose)
                chunks["coherent"].append(time.perf_counter() - start)
            totals = {k: float(np.sum(v)) for k, v in chunks.items()}
            per = {k: v / len(poses) * 1e6 for k, v in totals.items()}
            median = float(np.median(np.array(chunks["coherent"]) / np.array(chunks["independent"])))
            print(f"{name:8s} ({hits.mean():.0%} in contact) {verb:10s}: independent {per['independent']:9.1f} us, "
                  f"coherent {per['coherent']:9.1f} us, ratio coherent/independent "
                  f"{totals['coherent'] / totals['independent']:.3f} [median per chunk {median:.3f}]")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
