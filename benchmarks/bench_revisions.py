"""Run time of one revision of touche against another, on the paths that kernel-layer changes touch.

    python benchmarks/bench_revisions.py --base PATH [--rounds 3] [--base-cache DIR] [--cache DIR] [--extended]

``PATH`` is a checkout of the other revision (e.g. ``git worktree add /tmp/base <rev>``). Each
round runs the same workload in a fresh process of each revision, alternating (base, this tree,
base, ...), so both see the same machine load; the table gives the best of all rounds per path,
in microseconds, and the ratio this tree / base. Both processes use one thread
(``tc.set_num_threads(1)``) and the same seeded inputs: random rigid poses around boxes,
capsules, cylinders and a 2,000-triangle sphere mesh; single calls (a (4, 4) pose each side)
and batches (per pair). Kernels must be compiled in both trees first (a first round that
compiles is not counted: ``--rounds`` excludes a warm-up round).

What the paths exercise: the closed forms (box-box and capsule-box intersects), the pair engine
(box-box / capsule-box / cylinder-box distance, cylinder-box intersects through GJK), the
mesh-vs-shape core (sphere-mesh, box-mesh), contact manifolds. ``--extended`` adds the trees and
the motion and broad-phase layers: mesh-mesh distance / intersects / clearance (2,000 against
500 triangles), mesh rays, closest points and inside tests, time of impact with ``Linear``
motions (box-box: moving SAT; cylinder-box: conservative advancement; mesh-box), and all pairs
of six broad-phase structures over 10,000 boxes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKLOAD = r'''
import json, os, time
import numpy as np
import touche as tc
from touche.cli import _uv_sphere
from scipy.spatial.transform import Rotation

rng = np.random.default_rng(1)
EXTENDED = bool(os.environ.get("TOUCHE_BENCH_EXTENDED"))


def poses(n, spread):
    m = np.zeros((n, 4, 4))
    m[:, 3, 3] = 1.0
    m[:, :3, :3] = Rotation.random(n, random_state=int(rng.integers(1 << 30))).as_matrix()
    m[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return m


def best(fn, reps, rounds):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - started) / reps)
    return min(times)


box, capsule, cylinder, sphere = tc.Box([1.0, 0.6, 1.4]), tc.Capsule(0.3, 1.2), tc.Cylinder(0.4, 1.2), tc.Sphere(0.5)
mesh = tc.TriangleMesh(*_uv_sphere(2000))  # the demo's UV sphere (the same in both trees)
P, Q = poses(20_000, 2.0), poses(20_000, 2.0)
p1, q1 = P[0].copy(), Q[0].copy()
tc.set_num_threads(1)
found = {}
for name, a, b in [("box-box", box, box), ("capsule-box", capsule, box), ("cylinder-box", cylinder, box),
                   ("sphere-mesh", sphere, mesh), ("box-mesh", box, mesh)]:
    n = 2_000 if "mesh" in name else 20_000
    tc.distance(a, P[:10], b, Q[:10]); tc.intersects(a, P[:10], b, Q[:10]); tc.distance(a, p1, b, q1)
    found[f"{name} distance, batch (per pair)"] = best(lambda: tc.distance(a, P[:n], b, Q[:n]), 1, 5) / n
    found[f"{name} intersects, batch (per pair)"] = best(lambda: tc.intersects(a, P[:n], b, Q[:n]), 1, 5) / n
    found[f"{name} distance, single call"] = best(lambda: tc.distance(a, p1, b, q1), 2000, 7)
tc.contacts(box, p1, box, q1)
found["box-box contacts, single call"] = best(lambda: tc.contacts(box, p1, box, q1), 2000, 7)
if EXTENDED:
    # mesh pairs (trees), rays, time of impact (moving SAT, conservative advancement, mesh), broad phases
    small = tc.TriangleMesh(*_uv_sphere(500))
    M, N = poses(400, 1.2), poses(400, 1.2)
    for name, a, b in [("mesh-mesh", mesh, small)]:
        tc.distance(a, M[:4], b, N[:4]); tc.intersects(a, M[:4], b, N[:4]); tc.clearance(a, M[0], b, N[0])
        found[f"{name} distance, batch (per pair)"] = best(lambda: tc.distance(a, M, b, N), 1, 5) / len(M)
        found[f"{name} intersects, batch (per pair)"] = best(lambda: tc.intersects(a, M, b, N), 1, 5) / len(M)
        found[f"{name} distance, single call"] = best(lambda: tc.distance(a, M[1], b, N[1]), 50, 5)
        found[f"{name} clearance, single call"] = best(lambda: tc.clearance(a, M[1], b, N[1]), 50, 5)
    origins = rng.uniform(-2.0, 2.0, (20_000, 3))
    directions = -origins + rng.normal(0.0, 0.3, origins.shape)
    tc.raycast(mesh, np.eye(4), origins[:4], directions[:4])
    found["mesh raycast, batch (per ray)"] = best(lambda: tc.raycast(mesh, np.eye(4), origins, directions), 1, 5) / len(origins)
    points = rng.uniform(-1.5, 1.5, (5_000, 3))
    tc.closest_point(mesh, np.eye(4), points[:4]); tc.meshquery.contains(mesh, np.eye(4), points[:4])
    found["mesh closest_point, batch (per point)"] = best(lambda: tc.closest_point(mesh, np.eye(4), points), 1, 5) / len(points)
    found["mesh contains, batch (per point)"] = best(lambda: tc.meshquery.contains(mesh, np.eye(4), points), 1, 5) / len(points)
    start = P[:2_000].copy()
    start[:, :3, 3] *= 2.0
    velocity = -start[:, :3, 3] + rng.normal(0.0, 0.5, (2_000, 3))
    still = np.broadcast_to(np.eye(4), (2_000, 4, 4)).copy()
    for name, a, b in [("box-box", box, box), ("cylinder-box", cylinder, box), ("mesh-box", small, box)]:
        count = 200 if "mesh" in name else 2_000
        moving = tc.Linear(velocity[:count], start[:count])
        tc.time_of_impact(a, tc.Linear(velocity[:2], start[:2]), b, still[:2], 1.0)
        found[f"{name} time of impact Linear, batch (per pair)"] = best(
            lambda: tc.time_of_impact(a, moving, b, still[:count], 1.0), 1, 5) / count
        one = tc.Linear(velocity[0], start[0])
        found[f"{name} time of impact Linear, single call"] = best(
            lambda: tc.time_of_impact(a, one, b, np.eye(4), 1.0), 200, 5)
    boxes_rng = np.random.default_rng(7)
    centres = boxes_rng.uniform(0.0, 1.0, (10_000, 3))
    halves = 0.012 * boxes_rng.uniform(0.5, 1.0, (10_000, 3))
    scene = np.concatenate([centres - halves, centres + halves], axis=1)
    for name in ("dynamic_tree", "kd_tree", "uniform_grid", "hierarchical_grid", "loose_octree", "sort_and_sweep"):
        structure = tc.broadphase.STRUCTURES[name]()
        structure.rebuild(scene[:64]); structure.pairs()
        structure.rebuild(scene); structure.pairs()
        found[f"broad phase {name}: all pairs of 10,000 boxes"] = best(lambda: structure.pairs(), 1, 7)
print(json.dumps({key: value * 1e6 for key, value in found.items()}))
'''


def run(tree, cache, extended=False):
    env = dict(os.environ, PYTHONPATH=str(tree), TOUCHE_BENCH_EXTENDED="1" if extended else "")
    if cache:
        env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"workload failed in {tree}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, type=Path, help="checkout of the revision to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base-cache", type=Path, help="NUMBA_CACHE_DIR for the base tree (default: as set)")
    parser.add_argument("--cache", type=Path, help="NUMBA_CACHE_DIR for this tree (default: as set)")
    parser.add_argument("--extended", action="store_true",
                        help="also mesh pairs, clearance, rays, closest points, time of impact and broad phases")
    args = parser.parse_args()
    # warm-up round: loads (or compiles) the kernels of both trees
    run(args.base, args.base_cache, args.extended), run(ROOT, args.cache, args.extended)
    base, this = [], []
    for _ in range(args.rounds):
        base.append(run(args.base, args.base_cache, args.extended))
        this.append(run(ROOT, args.cache, args.extended))
    print("| path | base (µs) | this tree (µs) | this / base |\n|---|---:|---:|---:|")
    for key in base[0]:
        b = min(r[key] for r in base)
        t = min(r[key] for r in this)
        print(f"| {key} | {b:.3f} | {t:.3f} | {t / b:.2f} |")


if __name__ == "__main__":
    main()
