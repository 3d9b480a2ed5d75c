"""One call from Python: the per-call time of single queries, and a before / after table.

    .venv/bin/python benchmarks/bench_single_calls.py                      # this tree, one run
    .venv/bin/python benchmarks/bench_single_calls.py --base /tmp/w/base   # A/B against a worktree

Times, in microseconds per call (best of 5 timeit repeats), the public verbs on one pose pair
(writable (4, 4) pose arrays, shapes built once): pair ``distance`` / ``intersects`` on four
primitive pairs, meshes against meshes and shapes (an icosphere of 1,280 triangles), one
point's ``closest_point`` and one ray's ``raycast`` on a box and on the mesh, and two capsule-box
batches on one thread (per pair). With ``--base``, fresh interpreters alternate between the
worktree given (PYTHONPATH=base, its own numba cache) and this tree ``--rounds`` times each;
the table gives each row's best and median run per tree and the ratio of the best runs (the
machine's own slow phases move whole runs, so the best run is the comparison). Issue 18 item 4,
BENCHMARKS.md "One call from Python" (stop 45).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _best(call, number):
    call()
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def measure():
    """[(row name, seconds)] for the tree on sys.path."""
    import numpy as np
    import trimesh

    import touche as tc

    rows = []
    s1, s2 = tc.Sphere(0.5), tc.Sphere(0.4)
    box, other_box = tc.Box([1.0, 0.8, 0.6]), tc.Box([0.6, 1.2, 0.4])
    capsule, cylinder = tc.Capsule(0.3, 1.0), tc.Cylinder(0.3, 1.0)
    ta, tb = np.eye(4), np.eye(4)
    tb[:3, 3] = [1.2, 0.3, 0.1]
    for name, a, b in [("sphere-sphere", s1, s2), ("box-box", box, other_box), ("capsule-box", capsule, box),
                       ("cylinder-box", cylinder, box)]:
        rows.append((f"{name} distance", _best(lambda: tc.distance(a, ta, b, tb), 20000)))
        rows.append((f"{name} intersects", _best(lambda: tc.intersects(a, ta, b, tb), 20000)))
    sphere_mesh = trimesh.creation.icosphere(3)
    mesh = tc.TriangleMesh(sphere_mesh.vertices, sphere_mesh.faces)
    mesh_b = tc.TriangleMesh(sphere_mesh.vertices, sphere_mesh.faces)
    far, near = np.eye(4), np.eye(4)
    far[:3, 3] = [5.0, 0.0, 0.0]
    near[:3, 3] = [1.9, 0.3, 0.0]
    rows.append(("mesh-mesh intersects far", _best(lambda: tc.intersects(mesh, ta, mesh_b, far), 5000)))
    rows.append(("mesh-mesh distance near", _best(lambda: tc.distance(mesh, ta, mesh_b, near), 2000)))
    rows.append(("box-mesh intersects far", _best(lambda: tc.intersects(box, ta, mesh, far), 5000)))
    rows.append(("sphere-mesh distance far", _best(lambda: tc.distance(s1, ta, mesh, far), 5000)))
    point, direction = np.array([2.0, 0.3, 0.1]), np.array([-1.0, 0.0, 0.0])
    rows.append(("closest_point box", _best(lambda: tc.closest_point(box, ta, point), 5000)))
    rows.append(("closest_point mesh", _best(lambda: tc.closest_point(mesh, ta, point), 5000)))
    rows.append(("raycast box", _best(lambda: tc.raycast(box, ta, point, direction), 5000)))
    rows.append(("raycast mesh", _best(lambda: tc.raycast(mesh, ta, point, direction), 5000)))
    poses = tc.Pose.random(20000, scale=1.5, seed=3).matrix.copy()
    tc.set_num_threads(1)
    rows.append(("capsule-box intersects batch, 1 thread, per pair",
                 _best(lambda: tc.intersects(capsule, poses, box, None), 3) / len(poses)))
    rows.append(("capsule-box distance batch, 1 thread, per pair",
                 _best(lambda: tc.distance(capsule, poses, box, None), 3) / len(poses)))
    return rows


def _run_tree(tree, cache):
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, __file__, "--tree", str(tree)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return dict((name, float(value)) for name, value in (line.split("\t") for line in out.splitlines() if "\t" in line))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="a worktree of the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", help=argparse.SUPPRESS)  # a child: print this tree's rows
    args = parser.parse_args()
    if args.base is None:
        for name, seconds in measure():
            print(f"{name}\t{seconds * 1e6:.3f}")
        return
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as caches:
        for _ in range(args.rounds):
            runs["before"].append(_run_tree(Path(args.base).resolve(), Path(caches) / "base"))
            runs["after"].append(_run_tree(ROOT, Path(caches) / "head"))
    print("| call | before: best / median (us) | after: best / median (us) | best after / best before |")
    print("|---|---:|---:|---:|")
    for name in runs["before"][0]:
        before = [run[name] for run in runs["before"]]
        after = [run[name] for run in runs["after"]]
        print(f"| {name} | {min(before):.2f} / {statistics.median(before):.2f} | {min(after):.2f} / "
              f"{statistics.median(after):.2f} | {min(after) / min(before):.2f}x |")


if __name__ == "__main__":
    main()
