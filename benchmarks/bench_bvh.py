"""Mesh-mesh BVH benchmark: touche vs python-fcl and coal in the same process on the same inputs.

Two copies of a closed mesh (default pybullet_data differential/diff_ring.stl, 57,640 triangles)
at random relative poses (about half colliding). The machine is shared: every figure is taken in
rounds in which the libraries take turns on the same input, and the RATIOS are what to read:

- build: touche BVH (default split) vs coal BVHModelOBBRSS vs python-fcl BVHModel, one build of
  each per round, median of the per-round ratios;
- boolean collide / distance, per query: python-fcl, coal, touche one call per pose (one
  thread, like the peers), taking turns on chunks of poses; then touche's batch call (one call
  for all poses, prange over them on every core numba has) against python-fcl, alternately,
  with a pause after each batch call (OpenMP threads spin for a while after a parallel call and
  would slow down whatever runs next on a 2-core machine).

    python benchmarks/bench_bvh.py [--mesh differential/diff_ring.stl] [--poses 1000] [--quick]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mesh", default="differential/diff_ring.stl")
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=50)
    parser.add_argument("--split", default="sah", help="touche split rule (sah, median, center, mean)")
    parser.add_argument("--leaf-size", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.poses = 200

    import coal
    import fcl
    import numba
    import pybullet_data
    import trimesh
    from scipy.spatial.transform import Rotation

    import touche as tc
    from touche.bvh import BVH

    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), args.mesh), force="mesh", process=False)
    vertices = np.ascontiguousarray(m.vertices, dtype=float)
    faces = np.ascontiguousarray(m.faces, dtype=np.int64)
    mesh = tc.TriangleMesh(vertices, faces)
    n = args.poses
    rng = np.random.default_rng(2026)
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=7).as_matrix()
    center = vertices.mean(0)
    offsets = rng.normal(size=(n, 3))
    size = np.linalg.norm(vertices.max(0) - vertices.min(0))
    offsets *= (rng.uniform(0.2, 1.1, n) * size * 0.7 / np.linalg.norm(offsets, axis=1))[:, None]
    poses[:, :3, 3] = center - poses[:, :3, :3] @ center + offsets

    print(f"mesh {args.mesh}: {len(faces)} triangles; {n} poses; numba threads {numba.get_num_threads()}")

    print(f"load average at the start {os.getloadavg()[0]:.2f}")
    # ---- build
    BVH(mesh, None, split=args.split, leaf_size=args.leaf_size)  # compile

    def coal_build():
        model = coal.BVHModelOBBRSS()
        model.beginModel(len(faces), len(vertices))
        model.addVertices(vertices)
        model.addTriangles(faces)
        model.endModel()
        return model

    def fcl_build():
        model = fcl.BVHModel()
        model.beginModel(len(vertices), len(faces))
        model.addSubModel(vertices, faces)
        model.endModel()
        return model

    rounds = {"touche": [], "coal": [], "python-fcl": []}
    for _ in range(3 if args.quick else 9):
        for name, fn in (("touche", lambda: BVH(mesh, None, split=args.split, leaf_size=args.leaf_size)),
                         ("coal", coal_build), ("python-fcl", fcl_build)):
            start = time.perf_counter()
            fn()
            rounds[name].append(time.perf_counter() - start)
    times = {k: np.array(v) for k, v in rounds.items()}
    print(f"build: touche {np.median(times['touche']) * 1e3:.1f} ms, coal {np.median(times['coal']) * 1e3:.1f} ms, "
          f"python-fcl {np.median(times['python-fcl']) * 1e3:.1f} ms; median per-round ratio touche/coal "
          f"{np.median(times['touche'] / times['coal']):.2f}, touche/fcl "
          f"{np.median(times['touche'] / times['python-fcl']):.2f}")

    tree = BVH(mesh, None, split=args.split, leaf_size=args.leaf_size)
    coal_model = coal_build()
    fcl_model = fcl_build()
    fcl_a = fcl.CollisionObject(fcl_model, fcl.Transform())
    identity = coal.Transform3s()
    fcl_transforms = [fcl.Transform(p[:3, :3], p[:3, 3]) for p in poses]
    coal_transforms = [coal.Transform3s(p[:3, :3], p[:3, 3]) for p in poses]

    hits = tc.bvh.intersects(tree, None, tree, poses)
    dist = tc.bvh.distance(tree, None, tree, poses)
    print(f"colliding: {hits.mean():.2f} of the poses")

    def touche_single_collide(lo, hi):
        for k in range(lo, hi):
            tc.bvh.intersects(tree, None, tree, poses[k])

    def touche_batch_collide(lo, hi):
        tc.bvh.intersects(tree, None, tree, poses[lo:hi])

    fcl_b = fcl.CollisionObject(fcl_model, fcl.Transform())

    def fcl_collide(lo, hi):
        for k in range(lo, hi):
            fcl_b.setTransform(fcl_transforms[k])
            fcl.collide(fcl_a, fcl_b, fcl.CollisionRequest(), fcl.CollisionResult())

    def coal_collide(lo, hi):
        request = coal.CollisionRequest()
        for k in range(lo, hi):
            coal.collide(coal_model, identity, coal_model, coal_transforms[k], request, coal.CollisionResult())

    def touche_single_distance(lo, hi):
        for k in range(lo, hi):
            tc.bvh.distance(tree, None, tree, poses[k])

    def touche_batch_distance(lo, hi):
        tc.bvh.distance(tree, None, tree, poses[lo:hi])

    def fcl_distance(lo, hi):
        for k in range(lo, hi):
            fcl_b.setTransform(fcl_transforms[k])
            fcl.distance(fcl_a, fcl_b, fcl.DistanceRequest(enable_nearest_points=True), fcl.DistanceResult())

    def coal_distance(lo, hi):
        request = coal.DistanceRequest()
        for k in range(lo, hi):
            coal.distance(coal_model, identity, coal_model, coal_transforms[k], request, coal.DistanceResult())

    # compile / warm
    touche_single_collide(0, 2)
    touche_batch_collide(0, 2)
    touche_single_distance(0, 2)
    touche_batch_distance(0, 2)

    time.sleep(0.1)  # the warm-up batch calls' OpenMP threads go idle
    for label, contenders, batch in (
        ("collide", [("python-fcl", fcl_collide), ("coal", coal_collide), ("touche 1 call/pose", touche_single_collide)],
         touche_batch_collide),
        ("distance", [("python-fcl", fcl_distance), ("coal", coal_distance),
                      ("touche 1 call/pose", touche_single_distance)], touche_batch_distance),
    ):
        # one thread each, no parallel call in this phase (OpenMP threads spinning after a batch
        # call would steal the core of whichever contender runs next)
        chunks = {name: [] for name, _ in contenders}
        for lo in range(0, n, args.chunk):
            hi = min(n, lo + args.chunk)
            for name, fn in contenders:  # take turns on the same chunk
                start = time.perf_counter()
                fn(lo, hi)
                chunks[name].append(time.perf_counter() - start)
        chunks = {k: np.array(v) for k, v in chunks.items()}
        print(f"{label}: (totals over all poses; ratios of totals, and [median of the per-chunk ratios])")
        for name, _ in contenders:
            per = chunks[name].sum() / n * 1e6
            to_fcl = chunks[name].sum() / chunks["python-fcl"].sum()
            to_coal = chunks[name].sum() / chunks["coal"].sum()
            med_fcl = np.median(chunks[name] / chunks["python-fcl"])
            med_coal = np.median(chunks[name] / chunks["coal"])
            print(f"  {name:<20} {per:10.1f} us/query   to python-fcl {to_fcl:6.3f} [{med_fcl:6.3f}]"
                  f"   to coal {to_coal:6.3f} [{med_coal:6.3f}]")
        # the batch: one call for all poses (prange over poses on every core numba has) against
        # python-fcl over the same poses, alternately, a pause after each batch call
        rounds = []
        for _ in range(3):
            start = time.perf_counter()
            batch(0, n)
            t_batch = time.perf_counter() - start
            time.sleep(0.05)
            start = time.perf_counter()
            contenders[0][1](0, n)
            rounds.append((t_batch, time.perf_counter() - start))
        t_batch, t_fcl = np.median(np.array(rounds), axis=0)
        print(f"  {'touche batch (' + str(numba.get_num_threads()) + ' thr)':<20} {t_batch / n * 1e6:10.1f} us/query   "
              f"to python-fcl {t_batch / t_fcl:6.3f} (one call for all {n} poses; median of 3)")
    separated = dist.distance > 0
    print(f"distance check: {separated.sum()} separated poses, collide/distance consistent: "
          f"{bool(np.array_equal(hits, ~separated))}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
