"""A shape against a mesh in ``intersects``, this tree against another revision: run time per
pose of the boolean engines (touche/_kernels/narrow/bvh_shape_boolean.py) on meshes nothing was
tuned on.

    python benchmarks/bench_shape_mesh_booleans.py --base PATH [--rounds 3] [--shapes box,capsule]
        [--meshes differential/diff_ring.stl,duck.obj]

``PATH`` is a checkout of the other revision (``git worktree add /tmp/base <rev>``). Each round
runs the workload in a fresh process of each revision, alternating (base, this tree, ...), each
with its own numba cache (a temporary folder for the run unless ``--base-cache`` / ``--cache``
name kept ones; the first round compiles and is not counted unless ``--rounds 1``). Workload: pybullet_data meshes (diff_ring.stl 57,640
triangles, duck.obj, teddy2_VHACD_CHs.obj), a box, sphere, capsule, cylinder and 12-point convex
polyhedron (and, asked for, a tetrahedron) of ~6 % of the mesh's size aimed at random points of its surface (600 poses, 66-93 %
hits), one thread; per pose, best of 5: a batch call and a loop of single calls. ``--verb
distance`` times ``distance`` on the same poses instead (answers compared bit for bit). Prints each
tree's best over the rounds, the ratio this tree / base, and stops with an error if the two
trees' answers differ anywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKLOAD = r'''
import json, os, sys, time
import numpy as np
import touche as tc
import trimesh, pybullet_data
from scipy.spatial.transform import Rotation

tc.set_num_threads(1)
found = {}
for name in sys.argv[1].split(","):
    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), name), force="mesh", process=False)
    mesh = tc.TriangleMesh(np.ascontiguousarray(m.vertices, float), np.ascontiguousarray(m.faces, np.int64))
    size = float(np.linalg.norm(m.extents))
    rng = np.random.default_rng(3)
    n = 600
    corners = np.asarray(m.vertices)[np.asarray(m.faces)[rng.integers(len(m.faces), size=n)]]
    anchors = np.einsum("ki,kij->kj", rng.dirichlet(np.ones(3), size=n), corners)
    offsets = rng.normal(size=(n, 3))
    offsets *= (rng.uniform(0, 0.1, n) * size / np.linalg.norm(offsets, axis=1))[:, None]
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=4).as_matrix()
    poses[:, :3, 3] = anchors + offsets
    r = 0.03 * size
    shapes = {"box": tc.Box([2 * r, 1.5 * r, r]), "sphere": tc.Sphere(r), "capsule": tc.Capsule(0.5 * r, 2 * r),
              "cylinder": tc.Cylinder(0.5 * r, 2 * r),
              "polyhedron": tc.ConvexPolyhedron(np.random.default_rng(1).normal(size=(12, 3)) * r),
              "tetrahedron": tc.Tetrahedron(*(np.random.default_rng(2).normal(size=(4, 3)) * r))}
    verb = getattr(tc, sys.argv[3])
    for shape_name in sys.argv[2].split(","):
        shape = shapes[shape_name]
        verb(shape, poses[0], mesh, None)
        answers = verb(shape, poses, mesh, None)
        batch = single = np.inf
        for _ in range(5):
            start = time.perf_counter()
            verb(shape, poses, mesh, None)
            batch = min(batch, (time.perf_counter() - start) / n)
            start = time.perf_counter()
            for k in range(n):
                verb(shape, poses[k], mesh, None)
            single = min(single, (time.perf_counter() - start) / n)
        if sys.argv[3] == "intersects":
            key = f"{name.split('/')[-1]} {shape_name} ({answers.mean():.0%} hit)"
            digest = np.packbits(answers).tobytes().hex()
        else:  # the distances and points, bit for bit
            key = f"{name.split('/')[-1]} {shape_name} ({(answers.signed_distance <= 0).mean():.0%} touching)"
            digest = np.concatenate([answers.signed_distance, answers.point_a.ravel(), answers.point_b.ravel()]).tobytes().hex()
        found[key] = dict(batch=batch * 1e6, single=single * 1e6, answers=digest)
print(json.dumps(found))
'''


def _run(tree, cache, meshes, shapes, verb):
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache), TOUCHE_CACHE_DIR=str(cache) + "-touche")
    out = subprocess.run([sys.executable, "-c", WORKLOAD, meshes, shapes, verb], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a checkout of the other revision")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--meshes", default="differential/diff_ring.stl,duck.obj,teddy2_VHACD_CHs.obj")
    parser.add_argument("--shapes", default="box,sphere,capsule,cylinder,polyhedron")
    parser.add_argument("--base-cache", help="numba cache folder for the base (kept; default: a temporary one)")
    parser.add_argument("--cache", help="numba cache folder for this tree (kept; default: a temporary one)")
    parser.add_argument("--verb", default="intersects", choices=["intersects", "distance"],
                        help="the query timed (distance: the same poses through the distance engines)")
    args = parser.parse_args()
    runs = {"base": [], "this tree": []}
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"base": Path(args.base).resolve(), "this tree": ROOT}
        caches = {"base": args.base_cache or Path(scratch) / "base", "this tree": args.cache or Path(scratch) / "this"}
        for round_ in range(args.rounds + (1 if args.rounds > 1 else 0)):
            for label, tree in trees.items():
                result = _run(tree, caches[label], args.meshes, args.shapes, args.verb)
                if round_ > 0 or args.rounds == 1:
                    runs[label].append(result)
    reference = runs["base"][0]
    for label, results in runs.items():
        for result in results:
            for key, row in result.items():
                if row["answers"] != reference[key]["answers"]:
                    raise SystemExit(f"answers differ: {label}, {key}")
    print(f"| {args.verb} per pose (us), best of {args.rounds} rounds | base batch | this batch | ratio | "
          "base one call | this one call | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in reference:
        best = {label: {kind: min(r[key][kind] for r in results) for kind in ("batch", "single")}
                for label, results in runs.items()}
        b, t = best["base"], best["this tree"]
        print(f"| {key} | {b['batch']:.2f} | {t['batch']:.2f} | {t['batch'] / b['batch']:.2f} | {b['single']:.2f} | "
              f"{t['single']:.2f} | {t['single'] / b['single']:.2f} |")


if __name__ == "__main__":
    main()
