"""A mesh against primitives (touche.intersects / distance route them through the mesh's BVH,
touche/_kernels/narrow/bvh_shape.py) vs the per-triangle brute force they replaced, python-fcl and
coal; same process, same poses, one call per pose for everyone, taking turns on chunks of poses
(ratios are what to read on a shared machine).

Mesh: pybullet_data differential/diff_ring.stl (57,640 triangles); shapes of ~5-10 % of its
size aimed at random points of its surface (about half touching). The brute force is timed on
a subset (it is slow) and reported per query.

    python benchmarks/bench_mesh_shapes.py [--poses 400]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=400)
    parser.add_argument("--chunk", type=int, default=20)
    args = parser.parse_args()

    import coal
    import fcl
    import pybullet_data
    import trimesh
    from scipy.spatial.transform import Rotation

    import touche as tc
    from touche._kernels import batch

    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), "differential/diff_ring.stl"), force="mesh",
                     process=False)
    vertices = np.ascontiguousarray(m.vertices, dtype=float)
    faces = np.ascontiguousarray(m.faces, dtype=np.int64)
    mesh = tc.TriangleMesh(vertices, faces)
    size = float(np.linalg.norm(m.extents))
    n = args.poses
    rng = np.random.default_rng(3)
    tri = vertices[faces[rng.integers(len(faces), size=n)]]
    anchors = np.einsum("ki,kij->kj", rng.dirichlet(np.ones(3), size=n), tri)
    offsets = rng.normal(size=(n, 3))
    offsets *= (rng.uniform(0, 0.08, n) * size / np.linalg.norm(offsets, axis=1))[:, None]
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=4).as_matrix()
    poses[:, :3, 3] = anchors + offsets
    r = 0.03 * size
    shapes = {
        "sphere": (tc.Sphere(r), fcl.Sphere(r), coal.Sphere(r)),
        "box": (tc.Box([2 * r, 1.5 * r, r]), fcl.Box(2 * r, 1.5 * r, r), coal.Box(2 * r, 1.5 * r, r)),
        "capsule": (tc.Capsule(0.5 * r, 2 * r), fcl.Capsule(0.5 * r, 2 * r), coal.Capsule(0.5 * r, 2 * r)),
    }
    fcl_model = fcl.BVHModel()
    fcl_model.beginModel(len(vertices), len(faces))
    fcl_model.addSubModel(vertices, faces)
    fcl_model.endModel()
    fcl_mesh = fcl.CollisionObject(fcl_model, fcl.Transform())
    coal_model = coal.BVHModelOBBRSS()
    coal_model.beginModel(len(faces), len(vertices))
    coal_model.addVertices(vertices)
    coal_model.addTriangles(faces)
    coal_model.endModel()
    identity = coal.Transform3s()
    print(f"diff_ring.stl ({len(faces)} triangles), {n} poses, load average {os.getloadavg()[0]:.2f}")
    mesh.bvh  # build the tree outside the timings
    for name, (shape, fcl_shape, coal_shape) in shapes.items():
        tc.distance(shape, poses[0], mesh, None)
        tc.intersects(shape, poses[0], mesh, None)
        hits = np.array([tc.intersects(shape, p, mesh, None) for p in poses])
        fcl_obj = fcl.CollisionObject(fcl_shape, fcl.Transform())
        fcl_transforms = [fcl.Transform(p[:3, :3], p[:3, 3]) for p in poses]
        coal_transforms = [coal.Transform3s(p[:3, :3], p[:3, 3]) for p in poses]

        def touche_distance(lo, hi):
            for k in range(lo, hi):
                tc.distance(shape, poses[k], mesh, None)

        def touche_intersects(lo, hi):
            for k in range(lo, hi):
                tc.intersects(shape, poses[k], mesh, None)

        def fcl_distance(lo, hi):
            for k in range(lo, hi):
                fcl_obj.setTransform(fcl_transforms[k])
                fcl.distance(fcl_obj, fcl_mesh, fcl.DistanceRequest(enable_nearest_points=True), fcl.DistanceResult())

        def fcl_intersects(lo, hi):
            for k in range(lo, hi):
                fcl_obj.setTransform(fcl_transforms[k])
                fcl.collide(fcl_obj, fcl_mesh, fcl.CollisionRequest(), fcl.CollisionResult())

        def coal_distance(lo, hi):
            request = coal.DistanceRequest()
            for k in range(lo, hi):
                coal.distance(coal_shape, coal_transforms[k], coal_model, identity, request, coal.DistanceResult())

        def coal_intersects(lo, hi):
            request = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
            for k in range(lo, hi):
                coal.collide(coal_shape, coal_transforms[k], coal_model, identity, request, coal.CollisionResult())

        for verb, contenders in (("intersects", (("touche", touche_intersects), ("python-fcl", fcl_intersects),
                                                  ("coal", coal_intersects))),
                                 ("distance", (("touche", touche_distance), ("python-fcl", fcl_distance),
                                               ("coal", coal_distance)))):
            chunks = {k: [] for k, _ in contenders}
            for lo in range(0, n, args.chunk):
                for label, fn in contenders:
                    start = time.perf_counter()
                    fn(lo, min(n, lo + args.chunk))
                    chunks[label].append(time.perf_counter() - start)
            chunks = {k: np.array(v) for k, v in chunks.items()}
            per = {k: v.sum() / n * 1e6 for k, v in chunks.items()}
            med_fcl = np.median(chunks["touche"] / chunks["python-fcl"])
            med_coal = np.median(chunks["touche"] / chunks["coal"])
            print(f"{name:8s} {verb:10s} ({hits.mean():.0%} touching): touche {per['touche']:8.1f} us, python-fcl "
                  f"{per['python-fcl']:8.1f} us, coal {per['coal']:8.1f} us; touche/fcl {med_fcl:.3f}, "
                  f"touche/coal {med_coal:.3f} (median per-chunk ratios)")
        # the per-triangle brute force the BVH route replaced (pairs.py through batch.distance_many)
        sub = np.ascontiguousarray(poses[:10])
        out = (np.empty(10), np.empty((10, 3)), np.empty((10, 3)), np.empty((10, 3)), np.empty(10, dtype=np.int8))
        batch.distance_many(batch.engine_address(shape.kind, shape._packed[1], mesh.kind, mesh._packed[1]), *shape._packed, shape.scale, sub[:1], *mesh._packed, mesh.scale,
                            np.eye(4)[None].copy(), *(a[:1] for a in out), 0, 1)
        start = time.perf_counter()
        for k in range(10):
            batch.distance_many(batch.engine_address(shape.kind, shape._packed[1], mesh.kind, mesh._packed[1]), *shape._packed, shape.scale, sub[k:k + 1], *mesh._packed, mesh.scale,
                                np.eye(4)[None].copy(), *(a[k:k + 1] for a in out), 0, 1)
        brute = (time.perf_counter() - start) / 10 * 1e6
        start = time.perf_counter()
        for k in range(10):
            tc.distance(shape, sub[k], mesh, None)
        bvh = (time.perf_counter() - start) / 10 * 1e6
        print(f"{name:8s} distance: brute force over every triangle {brute:10.1f} us, through the BVH {bvh:8.1f} us "
              f"(x{brute / bvh:.0f})")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
