"""Results a user can read (issue 22): statuses print their names on every Python version,
batch status codes map to names, closest_point / raycast results unpack, and an empty pose batch
gives empty arrays of the documented shapes instead of an error."""
import json
import pickle

import numpy as np
import pytest

import touche as tc
from touche.cli import _uv_sphere

BOX = tc.Box([1.0, 1.0, 1.0])
SPHERE = tc.Sphere(0.5)
MESH = tc.TriangleMesh(*_uv_sphere(200))
FAR = tc.Pose.from_translation([3.0, 0.0, 0.0])
EMPTY = np.zeros((0, 4, 4))
TWO = np.stack([np.eye(4), FAR.matrix])

ENUMS = [tc.Status, tc.ImpactStatus, tc.SetKind, tc.convex.GJKStatus, tc.convex.CastStatus,
         tc.lp.LPStatus, tc.lp.Feasibility, tc.lp.SeparationStatus, tc.planar.ImpactStatus]


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: f"{e.__module__}.{e.__name__}")
def test_every_status_enum_prints_its_name_and_stays_an_int(enum):
    for member in enum:
        assert str(member) == member.name
        assert f"{member}" == member.name and f"{member:>20}" == member.name.rjust(20)
        assert f"{member:d}" == str(int(member)) and f"{member:03}" == f"{int(member):03}"
        assert member == int(member) and isinstance(member, int)
        assert json.loads(json.dumps({"status": member}))["status"] == int(member)
        assert pickle.loads(pickle.dumps(member)) is member


def test_single_results_print_status_names(capsys):
    r = tc.distance(BOX, None, SPHERE, FAR)
    print(r.status)
    hit = tc.time_of_impact(BOX, None, SPHERE, tc.Linear([-1.0, 0.0, 0.0], FAR), t_max=5.0)
    print(hit.status, hit.kind)
    assert capsys.readouterr().out.split() == ["SEPARATED", "HIT", "POINT"]
    assert r.status_names == "SEPARATED" and hit.status_names == "HIT"
    assert r.status == tc.Status.SEPARATED == 0


def test_batch_status_codes_map_to_names():
    poses = np.stack([np.eye(4)] * 3)
    poses[:, 0, 3] = [3.0, 1.0, 0.2]  # apart; touching (box half-width 0.5 + radius 0.5); overlapping
    r = tc.distance(BOX, None, SPHERE, poses)
    assert r.status.dtype == np.int8
    assert r.status_names.tolist() == ["SEPARATED", "TOUCHING", "PENETRATING"]
    np.testing.assert_array_equal(tc.Status.names(r.status), r.status_names)
    assert tc.Status.names(np.array([[0, 2], [1, 4]], dtype=np.int8)).tolist() == [
        ["SEPARATED", "PENETRATING"], ["TOUCHING", "DEGENERATE"]]
    assert tc.Status.names(1) == "TOUCHING" and tc.Status.names(np.int8(2)) == "PENETRATING"
    assert tc.ImpactStatus.names([0, 1, 2, 3]).tolist() == ["MISS", "HIT", "ALREADY_TOUCHING", "MAX_ITERATIONS"]
    # the documented table is the enum's: codes never drift from the docstrings
    for member in tc.Status:
        assert f"{int(member)}     {member.name}" in tc.Status.__doc__
    with pytest.raises(ValueError, match="7 is not a Status code"):
        tc.Status.names(np.array([0, 7]))
    with pytest.raises(TypeError, match="integer codes"):
        tc.Status.names(np.array([0.5]))
    moving = tc.Linear([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], FAR)
    assert tc.time_of_impact(BOX, None, SPHERE, moving, t_max=5.0).status_names.tolist() == ["HIT", "MISS"]
    assert tc.closest_point(BOX, None, [[3.0, 0, 0], [0.5, 0, 0], [0, 0, 0]]).status_names.tolist() == [
        "SEPARATED", "TOUCHING", "PENETRATING"]


def test_closest_point_unpacks_as_point_and_distance():
    point, distance = tc.closest_point(BOX, None, [3.0, 0.0, 0.0])
    np.testing.assert_array_equal(point, [0.5, 0.0, 0.0])
    assert distance == 2.5
    result = tc.closest_point(MESH, None, [[3.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    points, distances = result
    assert points is result.point and distances is result.distance and len(result) == 2
    assert points.shape == (2, 3) and distances.shape == (2,)


def test_raycast_unpacks_as_hit_t_point_normal():
    hit, t, point, normal = tc.raycast(BOX, None, [3.0, 0.0, 0.0], [-1.0, 0.0, 0.0])
    assert hit is True and t == 2.5
    np.testing.assert_array_equal(point, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(normal, [1.0, 0.0, 0.0])
    result = tc.raycast(MESH, None, [[3.0, 0.0, 0.0], [3.0, 5.0, 0.0]], [-1.0, 0.0, 0.0])
    hits, ts, points, normals = result
    assert hits.tolist() == [True, False] and len(result) == 4 and ts[1] == np.inf
    assert result.face[0] >= 0 and result.face[1] == -1  # face stays an attribute
    with pytest.raises(ValueError):
        hit, t = result  # noqa: F841 (four values, not two)
    # attribute access and pickling are unchanged by unpacking
    again = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(again.t, result.t)


@pytest.mark.parametrize("shape", [SPHERE, MESH], ids=["sphere", "mesh"])
def test_empty_pose_batches_give_empty_arrays(shape):
    for pose_a, pose_b in ((EMPTY, None), (None, EMPTY), (EMPTY, FAR), (EMPTY, EMPTY), (np.eye(4), EMPTY)):
        hits = tc.intersects(BOX, pose_a, shape, pose_b)
        assert isinstance(hits, np.ndarray) and hits.shape == (0,) and hits.dtype == np.bool_
        r = tc.distance(BOX, pose_a, shape, pose_b)
        assert r.signed_distance.shape == (0,) and r.distance.shape == (0,) and r.depth.shape == (0,)
        assert r.point_a.shape == r.point_b.shape == r.normal.shape == (0, 3)
        assert r.status.shape == (0,) and r.status.dtype == np.int8 and r.status_names.shape == (0,)
        assert tc.signed_distance(BOX, pose_a, shape, pose_b).shape == (0,)
    for pose, points in ((None, np.zeros((0, 3))), (EMPTY, [1.0, 2.0, 3.0]), (EMPTY, np.zeros((0, 3))),
                         (FAR, np.zeros((0, 3)))):
        point, distance = c = tc.closest_point(shape, pose, points)
        assert point.shape == (0, 3) and distance.shape == (0,) and c.status.shape == (0,)


def test_empty_batches_still_check_the_other_side():
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.distance(BOX, EMPTY, SPHERE, TWO)
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.intersects(BOX, TWO, SPHERE, EMPTY)
    with pytest.raises(tc.GeometryError, match="pose_b contains NaN"):
        tc.distance(BOX, EMPTY, SPHERE, np.full((4, 4), np.nan))
    with pytest.raises(tc.GeometryError, match=r"pose_a must have shape"):
        tc.intersects(BOX, np.zeros((0, 3, 3)), SPHERE, None)
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.closest_point(BOX, EMPTY, np.zeros((2, 3)))
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.closest_point(BOX, TWO, np.zeros((0, 3)))
    with pytest.raises(tc.GeometryError, match="points"):
        tc.closest_point(BOX, EMPTY, [[np.nan, 0.0, 0.0]])


@pytest.mark.parametrize("shape", [BOX, MESH], ids=["box", "mesh"])
def test_empty_ray_batches_give_empty_arrays(shape):
    no_rays = np.zeros((0, 3))
    x = [1.0, 0.0, 0.0]
    for pose, origins, directions in ((None, no_rays, x), (None, [-5.0, 0, 0], no_rays), (EMPTY, [-5.0, 0, 0], x),
                                      (FAR, no_rays, no_rays), (EMPTY, no_rays, no_rays)):
        hit, t, point, normal = r = tc.raycast(shape, pose, origins, directions)
        assert hit.shape == (0,) and hit.dtype == np.bool_ and t.shape == (0,) and r.face.shape == (0,)
        assert point.shape == normal.shape == (0, 3)
    if shape is MESH:  # every hit, flat
        hits = tc.raycast(shape, None, no_rays, x, mode="all")
        assert len(hits) == 0 and hits.point.shape == (0, 3) and list(hits.counts(0)) == []
    # the same calls with one ray answer (the empty path is not taken for them)
    assert tc.raycast(shape, None, [-5.0, 0, 0], x).hit


def test_empty_ray_batches_still_check_the_other_arguments():
    two = np.zeros((2, 3))
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.raycast(BOX, None, np.zeros((0, 3)), [[1.0, 0, 0], [0, 1.0, 0]])
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.raycast(BOX, TWO, np.zeros((0, 3)), [1.0, 0, 0])
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.raycast(BOX, EMPTY, two + [-5.0, 0, 0], [1.0, 0, 0])
    with pytest.raises(tc.GeometryError, match="directions"):
        tc.raycast(BOX, None, np.zeros((0, 3)), [np.nan, 0.0, 0.0])
    with pytest.raises(tc.GeometryError, match="origins"):
        tc.raycast(BOX, EMPTY, [[1e80, 0.0, 0.0]], [1.0, 0.0, 0.0])


def test_empty_contact_batches_give_empty_manifolds():
    for pose_a, pose_b in ((EMPTY, None), (None, EMPTY), (EMPTY, FAR), (EMPTY, EMPTY)):
        m = tc.contacts(BOX, pose_a, SPHERE, pose_b, max_points=3)
        assert m.points.shape == (0, 3, 3) and m.depths.shape == (0, 3) and m.normal.shape == (0, 3)
        assert m.count.shape == (0,) and m.status.shape == (0,) and m.status.dtype == np.int8
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.contacts(BOX, EMPTY, SPHERE, TWO)
    with pytest.raises(tc.GeometryError, match="pose_b contains NaN"):
        tc.contacts(BOX, EMPTY, SPHERE, np.full((4, 4), np.nan))


def test_empty_intersection_batches_give_no_pairs():
    for pose_a, pose_b in ((EMPTY, None), (None, EMPTY), (EMPTY, EMPTY)):
        r = tc.intersection(BOX, pose_a, BOX, pose_b)
        assert r.kind.shape == (0,) and r.count.shape == (0,) and r.points.shape[0] == 0
        assert r.points.ndim == 3 and r.points.shape[2] == 3
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.intersection(BOX, EMPTY, BOX, TWO)


CYLINDER = tc.Cylinder(0.3, 1.0)


@pytest.mark.parametrize("shape", [BOX, SPHERE, CYLINDER, MESH], ids=["box", "sphere", "cylinder", "mesh"])
def test_empty_motion_batches_give_empty_impacts(shape):
    no_velocities = np.zeros((0, 3))
    left = [-1.0, 0.0, 0.0]
    motions = [(tc.Linear(left, EMPTY), None), (tc.Linear(no_velocities, FAR), None),
               (tc.Screw(left, [0.0, 0.0, 1.0], EMPTY), None), (tc.Linear(left, FAR), EMPTY),
               (tc.Linear(left, FAR), tc.Static(EMPTY)), (EMPTY, tc.Linear(left, EMPTY))]
    for motion_a, motion_b in motions:
        r = tc.time_of_impact(BOX, motion_a, shape, motion_b, t_max=5.0)
        assert r.status.shape == (0,) and r.status.dtype == np.int8 and r.status_names.shape == (0,)
        assert r.time.shape == r.last_time.shape == r.kind.shape == r.count.shape == (0,)
        assert r.normal.shape == r.point.shape == (0, 3) and r.points.shape[0] == 0 and r.points.shape[2] == 3
        assert r.triangles is None if shape is not MESH else r.triangles.shape == (0, 2)
    # the same calls with one motion answer (the empty path is not taken for them)
    assert tc.time_of_impact(BOX, tc.Linear(left, FAR), shape, None, t_max=5.0).status == tc.ImpactStatus.HIT


def test_empty_motion_batches_still_check_the_other_side():
    left = [-1.0, 0.0, 0.0]
    with pytest.raises(tc.GeometryError, match="motion batches differ in length: motion_b has 2, the other 0"):
        tc.time_of_impact(BOX, tc.Linear(left, EMPTY), SPHERE, TWO, t_max=1.0)
    with pytest.raises(tc.GeometryError, match="motion_a has 2"):
        tc.time_of_impact(BOX, tc.Linear([left, left], FAR), SPHERE, EMPTY, t_max=1.0)
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.Linear(np.zeros((0, 3)), TWO)
    with pytest.raises(tc.GeometryError, match="NaN"):
        tc.time_of_impact(BOX, tc.Linear(left, EMPTY), SPHERE, np.full((4, 4), np.nan), t_max=1.0)
    with pytest.raises(tc.GeometryError, match="t_max"):
        tc.time_of_impact(BOX, tc.Linear(left, EMPTY), SPHERE, None, t_max=-1.0)
    with pytest.raises(tc.GeometryError, match=r"velocity must have shape"):
        tc.Linear(np.zeros((0, 2)), EMPTY)


def test_empty_clearance_batches_give_empty_arrays():
    for pose_a, pose_b in ((EMPTY, None), (None, EMPTY), (EMPTY, FAR), (EMPTY, EMPTY)):
        c = tc.clearance(MESH, pose_a, MESH, pose_b)
        assert c.intersecting.shape == c.distance.shape == c.triangle_a.shape == c.facet_b.shape == (0,)
        assert c.intersecting.dtype == np.bool_ and c.point_a.shape == c.vector.shape == (0, 3)
    assert tc.clearance(MESH, None, MESH, FAR).distance > 0  # one pose pair still answers
    with pytest.raises(tc.GeometryError, match="differ in length"):
        tc.clearance(MESH, EMPTY, MESH, TWO)
    with pytest.raises(tc.GeometryError, match="curve=True takes one pose"):
        tc.clearance(MESH, EMPTY, MESH, None, curve=True)
    with pytest.raises(tc.GeometryError, match="pose_b contains NaN"):
        tc.clearance(MESH, EMPTY, MESH, np.full((4, 4), np.nan))
