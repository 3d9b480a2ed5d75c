"""The single-pair fast path of intersects / distance / signed_distance (touche.query's plans):
after a first checked call per kind pair, later calls hand the caller's pose arrays to a strict
entry kernel unchecked in Python. Every kind of pose argument must give the checked path's
answer or its error, and no argument may make a strict entry compile a second specialization."""
import numpy as np
import pytest

import touche
from touche import query
from touche._kernels import NonCanonicalArguments, batch
from touche.errors import GeometryError


_ENTRIES = (batch.checked_closest_point_into, batch.checked_distance_into, batch.checked_engine_distance_into, batch.checked_intersects_one,
            batch.checked_fast_intersects, batch.checked_fast_distance_into, batch.checked_point_core_intersects,
            batch.checked_box_box_intersects, batch.checked_point_core_distance_into)


def _shapes():
    return {
        "point": touche.Point([0.1, 0.0, 0.2]),
        "sphere": touche.Sphere(0.5),
        "box": touche.Box([1.0, 0.8, 0.6]),
        "capsule": touche.Capsule(0.3, 1.0),
        "cylinder": touche.Cylinder(0.3, 1.0),
        "tetrahedron": touche.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]),
    }


def _rigid(rng, spread):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    matrix = np.eye(4)
    matrix[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    matrix[:3, 3] = rng.uniform(-spread, spread, 3)
    return matrix


def _specializations():
    return [len(entry.signatures) for entry in _ENTRIES]


@pytest.mark.parametrize("name_a", ["point", "sphere", "box", "capsule", "cylinder", "tetrahedron"])
@pytest.mark.parametrize("name_b", ["sphere", "box", "capsule", "tetrahedron"])
def test_planned_calls_match_the_batch_path(name_a, name_b):
    """Seeded random poses: the planned single calls (second call on) give the batch kernel's
    numbers bit for bit: distance, points, normal, status, signed distance, intersects."""
    shapes = _shapes()
    a, b = shapes[name_a], shapes[name_b]
    rng = np.random.default_rng(7)
    poses_a = np.stack([_rigid(rng, 1.0) for _ in range(12)])
    poses_b = np.stack([_rigid(rng, 1.0) for _ in range(12)])
    touche.distance(a, poses_a[0], b, poses_b[0])  # the checked path stores the plan
    touche.intersects(a, poses_a[0], b, poses_b[0])
    assert (a.kind, b.kind) in query._DISTANCE_PLANS and (a.kind, b.kind) in query._INTERSECTS_PLANS
    expected = touche.distance(a, poses_a, b, poses_b)
    expected_bool = touche.intersects(a, poses_a, b, poses_b)
    for i in range(len(poses_a)):
        got = touche.distance(a, poses_a[i], b, poses_b[i])
        assert got.signed_distance == expected.signed_distance[i]
        np.testing.assert_array_equal(got.point_a, expected.point_a[i])
        np.testing.assert_array_equal(got.point_b, expected.point_b[i])
        np.testing.assert_array_equal(got.normal, expected.normal[i])
        assert int(got.status) == int(expected.status[i])
        assert touche.signed_distance(a, poses_a[i], b, poses_b[i]) == expected.signed_distance[i]
        assert touche.intersects(a, poses_a[i], b, poses_b[i]) is bool(expected_bool[i])


def test_coincident_sphere_centres_go_to_the_engine():
    """The point-core entry leaves coincident centres to the engine (NOT_HANDLED): the plan
    must follow, not return the code."""
    a, b = touche.Sphere(0.5), touche.Sphere(0.25)
    pose = np.eye(4)
    touche.distance(a, pose, b, pose)  # stores the plan
    result = touche.distance(a, pose, b, pose)
    assert result.signed_distance == pytest.approx(-0.75)
    assert result.status == touche.Status.PENETRATING
    assert touche.signed_distance(a, pose, b, pose) == pytest.approx(-0.75)
    assert touche.intersects(a, pose, b, pose) is True


def _pose_forms(matrix):
    """The same pose in the forms a caller may pass, all meaning ``matrix``."""
    read_only = matrix.copy()
    read_only.setflags(write=False)
    fortran = np.asfortranarray(matrix)
    strided = np.zeros((4, 8))
    strided[:, ::2] = matrix
    return {
        "array": matrix.copy(),
        "read-only": read_only,
        "float32": matrix.astype(np.float32),
        "Fortran order": fortran,
        "strided view": strided[:, ::2],
        "list": matrix.tolist(),
        "Pose": touche.Pose(matrix),
        "matrix subclass": np.asmatrix(matrix),
        "batch of one": matrix[None].copy(),
        "big-endian": matrix.astype(">f8"),
        "object dtype": matrix.astype(object),
    }


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("pair", [("sphere", "sphere"), ("box", "box"), ("capsule", "box"), ("cylinder", "box")])
def test_every_pose_form_gives_the_same_answer_and_compiles_nothing(pair):
    shapes = _shapes()
    a, b = shapes[pair[0]], shapes[pair[1]]
    pose_a = np.eye(4)
    pose_b = np.eye(4)
    pose_b[:3, 3] = [0.9, 0.2, -0.1]
    pose_b[:3, :3] = _rigid(np.random.default_rng(3), 0.0)[:3, :3]
    reference = touche.distance(a, pose_a, b, pose_b)
    reference_bool = touche.intersects(a, pose_a, b, pose_b)
    before = _specializations()
    for name, form in _pose_forms(pose_b).items():
        got = touche.distance(a, pose_a, b, form)
        signed = np.ravel(got.signed_distance)[0]
        assert signed == pytest.approx(reference.signed_distance, abs=1e-6), name
        assert np.ravel(touche.signed_distance(a, pose_a, b, form))[0] == pytest.approx(reference.signed_distance, abs=1e-6), name
        assert bool(np.ravel(touche.intersects(a, pose_a, b, form))[0]) == reference_bool, name
    assert _specializations() == before  # no argument compiled another specialization


@pytest.mark.parametrize("bad", [
    np.eye(3),  # a (3, 3) float64 C-order array: the kernel itself must refuse its shape
    np.eye(4)[:, :3].copy(),
    np.full((4, 4), np.nan),
    np.diag([2.0, 1.0, 1.0, 1.0]),  # scaled
    np.diag([-1.0, 1.0, 1.0, 1.0]),  # a reflection
    np.eye(4, dtype=np.int64) * 3,
    np.eye(4, dtype=np.complex128),
    "pose",
])
def test_bad_poses_raise_geometry_error_on_the_planned_path(bad):
    a, b = touche.Sphere(0.5), touche.Box([1.0, 1.0, 1.0])
    touche.distance(a, np.eye(4), b, np.eye(4))  # plans stored
    touche.intersects(a, np.eye(4), b, np.eye(4))
    before = _specializations()
    for verb in (touche.distance, touche.intersects, touche.signed_distance):
        with pytest.raises(GeometryError):
            verb(a, bad, b, np.eye(4))
        with pytest.raises(GeometryError):
            verb(a, np.eye(4), b, bad)
    assert _specializations() == before


def test_a_batch_after_planned_single_calls_still_answers_as_a_batch():
    a, b = touche.Box([1.0, 1.0, 1.0]), touche.Sphere(0.4)
    touche.distance(a, np.eye(4), b, np.eye(4))
    poses = np.repeat(np.eye(4)[None], 3, axis=0)
    poses[:, 0, 3] = [0.0, 1.0, 2.0]
    result = touche.distance(a, np.eye(4), b, poses)
    assert result.signed_distance.shape == (3,)
    np.testing.assert_allclose(result.signed_distance, [-0.9, 0.1, 1.1], atol=1e-12)
    assert touche.intersects(a, np.eye(4), b, poses).tolist() == [True, False, False]


def test_strict_entry_refuses_other_argument_types():
    """Once its canonical specialization exists a strict entry raises NonCanonicalArguments
    (a TypeError) for other argument types instead of compiling them."""
    a, b = touche.Sphere(0.5), touche.Sphere(0.5)
    touche.intersects(a, np.eye(4), b, np.eye(4))
    count = len(batch.checked_point_core_intersects.signatures)
    with pytest.raises(NonCanonicalArguments):
        batch.checked_point_core_intersects(a._packed[1], a._packed[2], np.eye(4, dtype=np.float32), b._packed[1],
                                            b._packed[2], np.eye(4))
    assert issubclass(NonCanonicalArguments, TypeError)
    assert len(batch.checked_point_core_intersects.signatures) == count


def test_plans_are_thread_safe():
    """Many threads on planned single calls (the first one stores the plan while others run)."""
    from concurrent.futures import ThreadPoolExecutor

    a, b = touche.Capsule(0.2, 1.0), touche.Capsule(0.3, 0.5)
    rng = np.random.default_rng(11)
    poses = np.stack([_rigid(rng, 1.0) for _ in range(64)])
    expected = touche.distance(a, np.eye(4), b, poses).signed_distance

    def one(i):
        return touche.distance(a, np.eye(4), b, poses[i]).signed_distance

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(one, range(64)))
    np.testing.assert_array_equal(got, expected)


def _icosphere(radius, solid=False):
    trimesh = pytest.importorskip("trimesh")
    mesh = trimesh.creation.icosphere(2, radius=radius)
    return touche.TriangleMesh(mesh.vertices, mesh.faces, solid=solid)


def _offsets(*xs):
    poses = np.repeat(np.eye(4)[None], len(xs), axis=0)
    poses[:, 0, 3] = xs
    poses[:, :3, :3] = _rigid(np.random.default_rng(5), 0.0)[:3, :3]
    return poses


@pytest.mark.parametrize("order", ["mesh first", "mesh second"])
def test_mesh_plans_match_the_batch_path(order):
    """Mesh-mesh and shape-mesh single calls (planned after the first) against the batch path,
    both argument orders, overlapping, touching range and far."""
    mesh = _icosphere(1.0)
    other = _icosphere(0.7)
    box = touche.Box([0.6, 0.5, 0.4])
    poses = _offsets(0.0, 1.2, 1.69, 1.71, 4.0)
    for first, second in ((mesh, other), (mesh, box) if order == "mesh first" else (box, mesh)):
        expected = touche.distance(first, np.eye(4), second, poses)
        expected_bool = touche.intersects(first, np.eye(4), second, poses)
        for i in range(len(poses)):
            for _ in range(2):  # the first call stores the plan, the second takes it
                got = touche.distance(first, np.eye(4), second, poses[i])
                assert got.signed_distance == expected.signed_distance[i]
                np.testing.assert_array_equal(got.point_a, expected.point_a[i])
                np.testing.assert_array_equal(got.normal, expected.normal[i])
                assert int(got.status) == int(expected.status[i])
                assert touche.intersects(first, np.eye(4), second, poses[i]) is bool(expected_bool[i])
                assert touche.signed_distance(first, np.eye(4), second, poses[i]) == expected.signed_distance[i]
    assert (kinds_of(mesh, other) in query._DISTANCE_PLANS and kinds_of(mesh, other) in query._INTERSECTS_PLANS)


def kinds_of(a, b):
    return a.kind, b.kind


def test_solid_meshes_are_left_to_the_checked_path():
    """A plan stored by a surface pair must not answer for a solid mesh: a small sphere wholly
    inside a solid one intersects it (its surface does not)."""
    outer_surface, outer_solid = _icosphere(2.0), _icosphere(2.0, solid=True)
    inner = _icosphere(0.5)
    ball = touche.Sphere(0.3)
    eye = np.eye(4)
    for _ in range(2):
        assert touche.intersects(outer_surface, eye, inner, eye) is False
        assert touche.intersects(inner, eye, outer_surface, eye) is False
        assert touche.intersects(ball, eye, outer_surface, eye) is False
        assert touche.distance(ball, eye, outer_surface, eye).signed_distance > 0.0
    assert touche.intersects(outer_solid, eye, inner, eye) is True
    assert touche.intersects(inner, eye, outer_solid, eye) is True
    assert touche.intersects(ball, eye, outer_solid, eye) is True
    assert touche.distance(ball, eye, outer_solid, eye).signed_distance < 0.0
    assert touche.distance(outer_solid, eye, inner, eye).signed_distance < 0.0


def test_bad_poses_raise_on_the_mesh_plans():
    mesh, other, box = _icosphere(1.0), _icosphere(0.5), touche.Box([1.0, 1.0, 1.0])
    far = _offsets(5.0)[0]
    for a, b in ((mesh, other), (box, mesh), (mesh, box)):
        touche.distance(a, np.eye(4), b, far)
        touche.intersects(a, np.eye(4), b, far)
        for bad in (np.eye(3), np.diag([2.0, 1.0, 1.0, 1.0]), np.full((4, 4), np.inf)):
            for verb in (touche.distance, touche.intersects):
                with pytest.raises(GeometryError):
                    verb(a, bad, b, far)
                with pytest.raises(GeometryError):
                    verb(a, np.eye(4), b, bad)


@pytest.mark.parametrize("name", ["point", "sphere", "box", "capsule", "cylinder", "tetrahedron"])
def test_planned_closest_point_matches_the_batch_path(name):
    """One point at one pose through the plan (second call on) gives the batch kernel's bits:
    outside, inside (its own point, PENETRATING) and on the surface."""
    shape = _shapes()[name]
    rng = np.random.default_rng(21)
    pose = _rigid(rng, 0.5)
    points = np.vstack([rng.normal(size=(20, 3)) * 1.5, pose[:3, 3][None]])
    expected = tc_closest(shape, np.repeat(pose[None], len(points), axis=0), points)
    touche.closest_point(shape, pose, points[0])
    assert shape.kind in query._CLOSEST_POINT_PLANS
    for i, point in enumerate(points):
        for form in (point, point.tolist(), tuple(point)):
            got = touche.closest_point(shape, pose, form)
            np.testing.assert_array_equal(got.point, expected.point[i])
            assert got.distance == expected.distance[i]
            assert int(got.status) == int(expected.status[i])


def tc_closest(shape, poses, points):
    return touche.closest_point(shape, poses, points)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_closest_point_plan_refusals():
    box = touche.Box([1.0, 1.0, 1.0])
    touche.closest_point(box, np.eye(4), [2.0, 0.0, 0.0])
    before = len(batch.checked_closest_point_into.signatures)
    reference = touche.closest_point(box, np.eye(4), [2.0, 0.5, 0.0])
    for name, form in _pose_forms(np.eye(4)).items():
        got = touche.closest_point(box, form, [2.0, 0.5, 0.0])
        np.testing.assert_allclose(np.reshape(got.point, -1)[:3], reference.point, err_msg=name)
    for bad_pose in (np.eye(3), np.diag([1.0, 2.0, 1.0, 1.0]), np.full((4, 4), np.nan)):
        with pytest.raises(GeometryError):
            touche.closest_point(box, bad_pose, [2.0, 0.0, 0.0])
    for bad_point in ([np.nan, 0.0, 0.0], [1e80, 0.0, 0.0], [np.inf, 0.0, 0.0], [1.0, 2.0], "abc"):
        with pytest.raises(GeometryError):
            touche.closest_point(box, np.eye(4), bad_point)
    assert len(batch.checked_closest_point_into.signatures) == before


@pytest.mark.parametrize("name", ["sphere", "box", "capsule", "cylinder", "tetrahedron"])
def test_planned_raycast_matches_the_batch_path(name):
    """One ray at one pose through the plan (second call on) gives the batch kernel's bits:
    hits, misses, from inside (solid or not), short max_t, unnormalised directions."""
    shape = _shapes()[name]
    rng = np.random.default_rng(23)
    pose = _rigid(rng, 0.3)
    origins = rng.normal(size=(24, 3)) * 2.0
    origins[0] = pose[:3, 3]  # inside
    directions = pose[:3, 3] - origins + rng.normal(size=(24, 3)) * 0.3
    directions[0] = [0.0, 0.0, 3.0]
    directions[1] *= 1e-6
    touche.raycast(shape, pose, origins[1], directions[1])
    assert shape.kind in query._RAYCAST_PLANS
    for max_t in (np.inf, 1.5):
        for solid in (True, False):
            expected = touche.raycast(shape, pose, origins, directions, max_t, solid=solid)
            for i in range(len(origins)):
                got = touche.raycast(shape, pose, origins[i], directions[i].tolist(), max_t, solid=solid)
                assert got.hit is bool(expected.hit[i])
                assert got.t == expected.t[i]
                np.testing.assert_array_equal(got.point, expected.point[i])
                np.testing.assert_array_equal(got.normal, expected.normal[i])
                assert got.face == expected.face[i]


def test_raycast_plan_refusals():
    from touche import _queryargs

    assert (batch.DIRECTION_SAFE_LOW, batch.DIRECTION_SAFE_HIGH) == _queryargs._DIRECTION_SAFE
    box = touche.Box([1.0, 1.0, 1.0])
    touche.raycast(box, np.eye(4), [0.0, 0.0, 3.0], [0.0, 0.0, -1.0])
    before = len(batch.checked_raycast_into.signatures)
    tiny = touche.raycast(box, np.eye(4), [0.0, 0.0, 3.0], [0.0, 0.0, -1e-200])  # scaled on the checked path
    assert tiny.hit and tiny.t == pytest.approx(2.5)
    for bad in ([0.0, 0.0, 0.0], [np.nan, 0.0, 1.0]):
        with pytest.raises(GeometryError):
            touche.raycast(box, np.eye(4), [0.0, 0.0, 3.0], bad)
    for bad_origin in ([np.nan, 0.0, 3.0], [1e80, 0.0, 0.0]):
        with pytest.raises(GeometryError):
            touche.raycast(box, np.eye(4), bad_origin, [0.0, 0.0, -1.0])
    for bad_max_t in (-1.0, np.nan):
        with pytest.raises(GeometryError):
            touche.raycast(box, np.eye(4), [0.0, 0.0, 3.0], [0.0, 0.0, -1.0], bad_max_t)
    with pytest.raises(GeometryError):
        touche.raycast(box, np.eye(4), [0.0, 0.0, 3.0], [0.0, 0.0, -1.0], mode="nearest")
    with pytest.raises(GeometryError):
        touche.raycast(box, np.diag([1.0, 1.0, 2.0, 1.0]), [0.0, 0.0, 3.0], [0.0, 0.0, -1.0])
    assert len(batch.checked_raycast_into.signatures) == before
