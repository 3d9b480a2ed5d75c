"""``touche.distance`` of two surface meshes at one pose pair: one compiled call
(bvh_distance.tree_distance_pair_into) that gives, bit for bit, what the batch path gives for a
batch of one (tree_distance_one, then the normal and the status in Python), and the brute-force
distance over every triangle pair."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import touche as tc
from touche import GeometryError, bvh, query
from touche._kernels.trees import bvh_distance

from naive import bsp as naive_bsp
from naive.mesh import mesh_clearance_brute

MESHES = naive_bsp.test_meshes()


def _batch_of_one(a, pose_a, b, pose_b):
    """The batch path's answer for one pose pair (the reference the single call must equal)."""
    dist, point_a, point_b, ids, pa, pb, _ = bvh._distance_arrays(a, pose_a[None], b, pose_b[None])
    return query._one_mesh_mesh_distance(a, b, float(dist[0]), point_a[0], point_b[0], ids[0], pa[0], pb[0])


def _poses(rng, count, spread):
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, :3] = Rotation.random(count, random_state=rng.integers(1 << 31)).as_matrix()
    poses[:, :3, 3] = rng.uniform(-spread, spread, (count, 3))
    return poses


@pytest.mark.parametrize("name_a, name_b", [("torus", "l_block"), ("capsule", "icosphere"), ("cube", "cylinder")])
def test_single_call_equals_the_batch_path_and_the_brute_force(name_a, name_b):
    a = tc.TriangleMesh(*MESHES[name_a])
    b = tc.TriangleMesh(MESHES[name_b][0] * 0.6, MESHES[name_b][1])
    rng = np.random.default_rng(len(name_a) * 31 + len(name_b))
    pose_a = _poses(rng, 1, 0.3)[0]
    statuses = set()
    for pose_b in _poses(rng, 40, 2.0):
        single = tc.distance(a, pose_a, b, pose_b)
        reference = _batch_of_one(a, pose_a, b, pose_b)
        assert single.distance == reference.distance
        assert np.array_equal(single.point_a, reference.point_a) and np.array_equal(single.point_b, reference.point_b)
        assert np.array_equal(single.normal, reference.normal) and single.status == reference.status
        statuses.add(single.status)
        brute, crossing, _ = mesh_clearance_brute(a.vertices @ pose_a[:3, :3].T + pose_a[:3, 3], a.faces,
                                                   b.vertices @ pose_b[:3, :3].T + pose_b[:3, 3], b.faces)
        assert abs(single.distance - brute) <= 1e-12 * (1.0 + brute)
        assert (single.distance == 0.0) == crossing or brute < 1e-12
    assert statuses == {tc.Status.SEPARATED, tc.Status.TOUCHING}  # apart, and meeting (distance 0)


def test_touching_faces_and_the_meeting_normal():
    cube = tc.TriangleMesh(*MESHES["cube"])  # [-0.5, 0.5]^3
    touching = tc.distance(cube, None, cube, tc.Pose.from_translation([1.0, 0.0, 0.0]))
    assert touching.distance == 0.0 and touching.status == tc.Status.TOUCHING
    assert np.isclose(abs(touching.normal[0]), 1.0)  # a face normal of the touching faces
    near = tc.distance(cube, None, cube, tc.Pose.from_translation([1.0 + 1e-13, 0.0, 0.0]))
    assert near.status == tc.Status.TOUCHING and 0.0 < near.distance <= 1e-12  # within the touching band
    apart = tc.distance(cube, None, cube, tc.Pose.from_translation([1.25, 0.0, 0.0]))
    assert apart.status == tc.Status.SEPARATED and apart.distance == pytest.approx(0.25, abs=1e-15)
    np.testing.assert_allclose(apart.normal, [1.0, 0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_huge_and_tiny_scales(scale):
    cube = tc.TriangleMesh(MESHES["cube"][0] * scale, MESHES["cube"][1])
    apart = tc.distance(cube, None, cube, tc.Pose.from_translation([2.0 * scale, 0.0, 0.0]))
    assert apart.distance == pytest.approx(scale, rel=1e-12) and apart.status == tc.Status.SEPARATED
    meeting = tc.distance(cube, None, cube, tc.Pose.from_translation([0.5 * scale, 0.0, 0.0]))
    assert meeting.distance == 0.0 and meeting.status == tc.Status.TOUCHING


def test_bad_poses_are_refused_naming_the_argument():
    cube = tc.TriangleMesh(*MESHES["cube"])
    nan = np.eye(4)
    nan[1, 3] = np.nan
    scaled = np.diag([2.0, 1.0, 1.0, 1.0])
    with pytest.raises(GeometryError, match="pose_b"):
        tc.distance(cube, None, cube, nan)
    with pytest.raises(GeometryError, match="pose_a"):
        tc.distance(cube, scaled, cube, None)
    with pytest.raises(GeometryError):
        tc.distance(cube, None, cube, np.stack([np.eye(4), nan]))


def test_every_pose_form_gives_the_same_answer():
    a = tc.TriangleMesh(*MESHES["torus"])
    b = tc.TriangleMesh(*MESHES["capsule"])
    matrix = tc.Pose.from_rotvec([0.3, -0.2, 0.5], [2.5, 0.4, -0.1]).matrix
    expected = tc.distance(a, None, b, np.array(matrix))
    readonly = np.array(matrix)
    readonly.setflags(write=False)
    for pose in (tc.Pose(matrix), readonly, np.asfortranarray(matrix), matrix.tolist(), np.array(matrix)[None]):
        result = tc.distance(a, None, b, pose)
        assert np.all(np.asarray(result.distance) == expected.distance)
        assert np.array_equal(np.asarray(result.point_b).reshape(3), expected.point_b)


def test_the_meeting_code_is_the_kernels():
    assert query._PAIR_MEETING == bvh_distance.PAIR_MEETING
    assert {bvh_distance.PAIR_SEPARATED, bvh_distance.PAIR_TOUCHING} == {tc.Status.SEPARATED.value,
                                                                         tc.Status.TOUCHING.value}


def test_bvh_distance_single_equals_its_batch_of_one_with_the_triangle_ids():
    a = tc.TriangleMesh(*MESHES["torus"])
    b = tc.TriangleMesh(MESHES["l_block"][0] * 0.5, MESHES["l_block"][1])
    rng = np.random.default_rng(5)
    for pose_b in _poses(rng, 30, 1.8):
        single = bvh.distance(a, None, b, pose_b)
        batch = bvh.distance(a, None, b, pose_b[None])
        assert single.distance == batch.distance[0]
        assert np.array_equal(single.point_a, batch.point_a[0]) and np.array_equal(single.point_b, batch.point_b[0])
        assert (single.triangle_a, single.triangle_b) == (batch.triangle_a[0], batch.triangle_b[0])
        assert isinstance(single.triangle_a, int) and isinstance(single.distance, float)
    with pytest.raises(GeometryError, match="pose_b"):
        bvh.distance(a, None, b, np.full((4, 4), np.nan))
