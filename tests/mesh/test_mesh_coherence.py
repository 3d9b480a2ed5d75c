"""Temporal coherence (touche.bvh.CoherentPair, Ericson 6.7): witness pairs and front tracking
give the same answers as independent queries (touche.bvh.intersects / distance) along
sequences of slightly moved poses that enter and leave contact, including when the front
overflows its capacity, grows past its limit, or the tracker is reset. (Its speed:
benchmarks/bench_coherence.py.)"""
from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import touche as tc
import touche.bvh as bvh

trimesh = pytest.importorskip("trimesh")
pybullet_data = pytest.importorskip("pybullet_data")


def _mesh(name):
    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), name), force="mesh", process=False)
    return tc.TriangleMesh(m.vertices, m.faces), float(np.linalg.norm(m.extents))


def _path(size, n, seed, center):
    """B's poses along a smooth path that passes through A and out again (small steps)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    start = rng.normal(size=3)
    start *= 1.1 * size / np.linalg.norm(start)
    poses = np.tile(np.eye(4), (n, 1, 1))
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    poses[:, :3, :3] = Rotation.from_rotvec(np.outer(0.6 * t, axis)).as_matrix()
    # in from +start to about the middle and out to -start, with a small wobble
    poses[:, :3, 3] = (center - np.einsum("kij,j->ki", poses[:, :3, :3], center) + np.outer(1.0 - 2.0 * t, start)
                       + 0.02 * size * np.sin(np.outer(t * 17.0, [1.0, 2.0, 3.0])))
    return poses


@pytest.mark.parametrize("name", ["duck.obj", "kuka_iiwa/meshes/link_2.stl", "teddy2_VHACD_CHs.obj"])
def test_coherent_queries_equal_independent_queries_along_a_path(name):
    mesh, size = _mesh(name)
    center = np.asarray(mesh.vertices).mean(axis=0)
    poses = _path(size, 300, 3, center)
    pair = bvh.CoherentPair(mesh, mesh)
    expected_hits = bvh.intersects(mesh, None, mesh, poses)
    expected = bvh.distance(mesh, None, mesh, poses)
    assert 0.2 <= expected_hits.mean() <= 0.8
    saw_front = False
    for k, pose in enumerate(poses):
        assert pair.intersects(None, pose) == expected_hits[k], k
        saw_front |= pair.front_size > 0
        got = pair.distance(None, pose)
        assert abs(got.distance - expected.distance[k]) <= 1e-12 * size, k
        assert abs(np.linalg.norm(got.point_a - got.point_b) - got.distance) <= 1e-12 * size
        # the reported triangles are that far apart
        verts = np.asarray(mesh.vertices)
        faces = np.asarray(mesh.faces)
        from touche._kernels.primitives.closest import closest_points_triangle_triangle

        ta = verts[faces[got.triangle_a]]
        tb = verts[faces[got.triangle_b]] @ pose[:3, :3].T + pose[:3, 3]
        pa, pb = closest_points_triangle_triangle(ta[0], ta[1], ta[2], tb[0], tb[1], tb[2])
        assert abs(np.linalg.norm(pa - pb) - got.distance) <= 1e-12 * size
    assert saw_front


def test_front_overflow_growth_and_reset_keep_the_answers(monkeypatch):
    mesh, size = _mesh("duck.obj")
    center = np.asarray(mesh.vertices).mean(axis=0)
    poses = _path(size, 120, 8, center)
    expected = bvh.intersects(mesh, None, mesh, poses)
    monkeypatch.setattr(bvh, "FRONT_CAPACITY", 24)  # fronts overflow: back to the root each time
    small = bvh.CoherentPair(mesh, mesh)
    monkeypatch.undo()
    pair = bvh.CoherentPair(mesh, mesh)
    for k, pose in enumerate(poses):
        assert small.intersects(None, pose) == expected[k]
        assert pair.intersects(None, pose) == expected[k]
        if k % 37 == 0:
            pair.reset()
            assert pair.front_size == 0
    # random jumps (no coherence at all) are still answered right
    rng = np.random.default_rng(2)
    jumps = poses[rng.permutation(len(poses))]
    expected = bvh.intersects(mesh, None, mesh, jumps)
    for k, pose in enumerate(jumps):
        assert pair.intersects(None, pose) == expected[k]


def test_coherent_pair_bad_input():
    mesh, _ = _mesh("duck.obj")
    pair = bvh.CoherentPair(mesh, mesh)
    bad = np.eye(4)
    bad[0, 0] = 3.0
    with pytest.raises(tc.GeometryError, match="pose_b"):
        pair.intersects(None, bad)
    with pytest.raises(tc.GeometryError, match="pose_a"):
        pair.distance(np.full((4, 4), np.nan), None)
    with pytest.raises(tc.GeometryError, match="one"):
        pair.intersects(None, np.tile(np.eye(4), (2, 1, 1)))
    with pytest.raises(tc.GeometryError):
        bvh.CoherentPair(tc.Sphere(1.0), mesh)
