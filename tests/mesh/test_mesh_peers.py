"""Mesh-mesh intersects / distance (touche.intersects, touche.distance) against coal AND
python-fcl on >= 1,000 random relative poses of each real mesh of pybullet_data (duck, bunny,
soccerball, teddy2_VHACD_CHs, every kuka_iiwa/meshes/*.stl, differential/diff_ring.stl with
57,640 triangles), two copies of the mesh, about half the poses colliding.

Rules (issue 4):
- booleans: no disagreement outside the touching band (touche's distance <= BAND * size);
- distances of separated poses within 1e-9 relative (floor 1e-12 * size, the rounding of the
  coordinates);
- where touche and a peer disagree beyond that, a referee decides: every triangle pair that can
  matter (ball candidates, naive_bvh.candidate_pairs) through the exact pair tests. touche must be
  right every time; the peer's errors are counted and printed (run with -s to see the table).
"""
from __future__ import annotations

import os
import sys
import zlib

import numpy as np
import pytest
from scipy.spatial.transform import Rotation


from naive import bvh as naive_bvh  # noqa: E402

import touche as tc  # noqa: E402

trimesh = pytest.importorskip("trimesh")
pybullet_data = pytest.importorskip("pybullet_data")
fcl = pytest.importorskip("fcl")
coal = pytest.importorskip("coal")

POSES = 1000
BAND = 1e-9
REL = 1e-9

KUKA = sorted(f"kuka_iiwa/meshes/{name}" for name in os.listdir(os.path.join(pybullet_data.getDataPath(),
                                                                              "kuka_iiwa", "meshes"))
              if name.endswith(".stl"))
MESHES = ["duck.obj", "bunny.obj", "soccerball.obj", "teddy2_VHACD_CHs.obj"] + KUKA + ["differential/diff_ring.stl"]


def _load(name):
    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), name), force="mesh", process=False)
    return np.ascontiguousarray(m.vertices, dtype=float), np.ascontiguousarray(m.faces, dtype=np.int64)


def _poses(vertices, n, seed):
    """B's poses: a random rotation about the mesh center and an offset of 0.14-0.77 of the
    mesh's diagonal in a random direction (about half colliding)."""
    rng = np.random.default_rng(seed)
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix()
    center = vertices.mean(0)
    size = np.linalg.norm(vertices.max(0) - vertices.min(0))
    offsets = rng.normal(size=(n, 3))
    offsets *= (rng.uniform(0.2, 1.1, n) * size * 0.7 / np.linalg.norm(offsets, axis=1))[:, None]
    poses[:, :3, 3] = center - poses[:, :3, :3] @ center + offsets
    return poses


def _fcl_all(vertices, faces, poses):
    model = fcl.BVHModel()
    model.beginModel(len(vertices), len(faces))
    model.addSubModel(vertices, faces)
    model.endModel()
    a = fcl.CollisionObject(model, fcl.Transform())
    hits = np.empty(len(poses), dtype=bool)
    dist = np.full(len(poses), np.nan)
    for k, pose in enumerate(poses):
        b = fcl.CollisionObject(model, fcl.Transform(pose[:3, :3], pose[:3, 3]))
        hits[k] = fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()) > 0
        if not hits[k]:
            dist[k] = fcl.distance(a, b, fcl.DistanceRequest(enable_nearest_points=True), fcl.DistanceResult())
    return hits, dist


def _coal_all(vertices, faces, poses):
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(faces), len(vertices))
    model.addVertices(vertices)
    model.addTriangles(faces)
    model.endModel()
    identity = coal.Transform3s()
    request = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
    hits = np.empty(len(poses), dtype=bool)
    dist = np.full(len(poses), np.nan)
    for k, pose in enumerate(poses):
        tb = coal.Transform3s(pose[:3, :3], pose[:3, 3])
        result = coal.CollisionResult()
        coal.collide(model, identity, model, tb, request, result)
        hits[k] = result.isCollision()
        if not hits[k]:
            dres = coal.DistanceResult()
            coal.distance(model, identity, model, tb, coal.DistanceRequest(), dres)
            dist[k] = dres.min_distance
    return hits, dist


def _compare(name, mesh, vertices, faces, poses, size):
    """touche vs both peers on these poses; disagreements go to the referee (module doc).
    Returns the summary row."""
    band = BAND * size
    hits = tc.intersects(mesh, None, mesh, poses)
    result = tc.distance(mesh, None, mesh, poses)
    dist = result.signed_distance
    # the two verbs agree (a zero distance without an overlapping pair only within the band)
    assert np.all(hits <= (dist == 0.0))
    assert np.all((dist == 0.0) <= (hits | (dist <= band)))
    assert np.all(result.status == np.where(dist > 1e-12 * (size + np.abs(poses[:, :3, 3]).max()),
                                            tc.Status.SEPARATED, tc.Status.TOUCHING))
    row = {"triangles": len(faces), "poses": len(poses), "hit rate": round(float(hits.mean()), 3), "refereed": 0}
    for peer, run in (("python-fcl", _fcl_all), ("coal", _coal_all)):
        peer_hits, peer_dist = run(vertices, faces, poses)
        with np.errstate(invalid="ignore"):  # peer_dist is NaN where the peer reports a hit
            bool_off = np.flatnonzero((hits & ~peer_hits & (peer_dist > band)) | (~hits & peer_hits & (dist > band)))
        both_apart = ~hits & ~peer_hits
        tolerance = REL * np.maximum(np.where(both_apart, peer_dist, 0.0), 1e-3 * size)
        dist_off = np.flatnonzero(both_apart & (np.abs(np.where(both_apart, dist - peer_dist, 0.0)) > tolerance))
        peer_wrong = 0
        for k in np.union1d(bool_off, dist_off):
            row["refereed"] += 1
            truth_hit = naive_bvh.referee_overlap(mesh, None, mesh, poses[k])
            if truth_hit or dist[k] == 0.0:
                assert hits[k] == truth_hit or dist[k] <= band, (name, peer, k)
                peer_wrong += peer_hits[k] != truth_hit
                continue
            upper = max(dist[k], peer_dist[k] if np.isfinite(peer_dist[k]) else 0.0)
            truth = naive_bvh.referee_distance(mesh, None, mesh, poses[k], upper)
            assert abs(dist[k] - truth) <= REL * max(truth, 1e-3 * size), (name, peer, k, dist[k], truth)
            peer_wrong += bool(peer_hits[k]) or abs(peer_dist[k] - truth) > REL * max(truth, 1e-3 * size)
        row[peer] = {"boolean disagreements": int(len(bool_off)), "distance disagreements": int(len(dist_off)),
                     "peer wrong (referee)": int(peer_wrong)}
    return row


@pytest.mark.slow
@pytest.mark.parametrize("name", MESHES)
def test_mesh_mesh_against_coal_and_python_fcl(name):
    vertices, faces = _load(name)
    mesh = tc.TriangleMesh(vertices, faces)
    poses = _poses(vertices, POSES, zlib.crc32(name.encode()) % (1 << 30))
    size = float(np.linalg.norm(vertices.max(0) - vertices.min(0)))
    hits = tc.intersects(mesh, None, mesh, poses)
    assert 0.2 <= hits.mean() <= 0.8, hits.mean()
    row = _compare(name, mesh, vertices, faces, poses, size)
    print(f"\n{name}: {row}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["duck.obj", "teddy2_VHACD_CHs.obj", "kuka_iiwa/meshes/link_3.stl",
                                  "differential/diff_ring.stl"])
def test_near_touching_poses_against_coal_and_python_fcl(name):
    """Separated poses moved along their closest-point direction until the gap is +-1e-6 of the
    mesh size (just apart / just crossing) or about 0 (touching: within the band anything goes,
    outside it the referee decides). The referee itself is checked on a sample of them."""
    vertices, faces = _load(name)
    mesh = tc.TriangleMesh(vertices, faces)
    size = float(np.linalg.norm(vertices.max(0) - vertices.min(0)))
    poses = _poses(vertices, 600, zlib.crc32(name.encode()) % (1 << 30) + 1)
    result = tc.distance(mesh, None, mesh, poses)
    apart = np.flatnonzero(result.signed_distance > 0.0)[:90 if len(faces) > 10_000 else 240]  # test time
    gaps = np.array([1e-6, -1e-6, 0.0])[np.arange(len(apart)) % 3] * size
    moved = poses[apart].copy()
    moved[:, :3, 3] -= (result.signed_distance[apart] - gaps)[:, None] * result.normal[apart]
    row = _compare(name, mesh, vertices, faces, moved, size)
    print(f"\n{name} near touching: {row}")
    hits = tc.intersects(mesh, None, mesh, moved)
    assert hits[gaps < 0].all()  # pushed 1e-6 into contact: crossing
    assert 0.2 <= hits.mean() <= 0.8
    for k in range(0, len(moved), 40):  # the referee on both kinds of poses
        assert naive_bvh.referee_overlap(mesh, None, mesh, moved[k]) == hits[k] or gaps[k] == 0.0
        if not hits[k]:
            d = tc.distance(mesh, None, mesh, moved[k]).signed_distance
            assert abs(naive_bvh.referee_distance(mesh, None, mesh, moved[k], d) - d) <= 1e-12 * size


def test_single_calls_equal_the_batch_on_a_real_mesh():
    vertices, faces = _load("duck.obj")
    mesh = tc.TriangleMesh(vertices, faces)
    poses = _poses(vertices, 40, 5)
    batch = tc.distance(mesh, None, mesh, poses)
    hits = tc.intersects(mesh, None, mesh, poses)
    for k in range(len(poses)):
        one = tc.distance(mesh, None, mesh, poses[k])
        assert one.signed_distance == batch.signed_distance[k]
        assert np.array_equal(one.point_a, batch.point_a[k]) and np.array_equal(one.normal, batch.normal[k])
        assert tc.intersects(mesh, None, mesh, poses[k]) == hits[k]
