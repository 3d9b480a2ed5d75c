"""Public boundary: poses, shape constructors, verb shapes/dtypes/broadcasting, bad input."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import touche as tc
from touche.errors import GeometryError, UnsupportedQuery


# ------------------------------------------------------------------------------------------
# poses
def test_pose_quaternion_orders_agree_with_scipy():
    rng = np.random.default_rng(0)
    q_xyzw = rng.normal(size=(50, 4))
    q_xyzw /= np.linalg.norm(q_xyzw, axis=1, keepdims=True)
    expected = Rotation.from_quat(q_xyzw).as_matrix()
    from_xyzw = tc.Pose.from_quaternion(q_xyzw, order="xyzw").rotation
    from_wxyz = tc.Pose.from_quaternion(q_xyzw[:, [3, 0, 1, 2]], order="wxyz").rotation
    np.testing.assert_allclose(from_xyzw, expected, atol=1e-14)
    np.testing.assert_allclose(from_wxyz, expected, atol=1e-14)
    back = tc.Pose.from_quaternion(q_xyzw, order="xyzw").as_quaternion("xyzw")
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->i", back, q_xyzw)), 1.0, atol=1e-12)


def test_pose_quaternion_order_is_required():
    with pytest.raises(TypeError):
        tc.Pose.from_quaternion([1, 0, 0, 0])
    with pytest.raises(GeometryError, match="order"):
        tc.Pose.from_quaternion([1, 0, 0, 0], order="xwyz")


def test_pose_rotvec_matches_scipy_including_tiny_angles():
    rng = np.random.default_rng(1)
    rotvecs = np.concatenate([rng.normal(size=(40, 3)), rng.normal(size=(10, 3)) * 1e-9, np.zeros((1, 3))])
    np.testing.assert_allclose(
        tc.Pose.from_rotvec(rotvecs).rotation, Rotation.from_rotvec(rotvecs).as_matrix(), atol=1e-14
    )
    round_trip = tc.Pose.from_rotvec(tc.Pose.from_rotvec(rotvecs).as_rotvec())  # angles wrap past pi
    np.testing.assert_allclose(round_trip.rotation, tc.Pose.from_rotvec(rotvecs).rotation, atol=1e-12)


def test_pose_from_scipy_compose_inverse_apply():
    rotation = Rotation.from_euler("xyz", [0.3, -0.5, 1.1])
    a = tc.Pose.from_scipy(rotation, [1.0, 2.0, 3.0])
    b = tc.Pose.from_rotvec([0.1, 0.2, -0.3], [-1.0, 0.5, 0.0])
    points = np.random.default_rng(2).normal(size=(20, 3))
    np.testing.assert_allclose((a @ b).apply(points), a.apply(b.apply(points)), atol=1e-13)
    np.testing.assert_allclose(a.inverse().apply(a.apply(points)), points, atol=1e-13)
    np.testing.assert_allclose((a @ a.inverse()).matrix, np.eye(4), atol=1e-14)
    np.testing.assert_allclose(a.apply_vectors([1.0, 0, 0]), rotation.apply([1.0, 0, 0]), atol=1e-15)


def test_pose_batches():
    poses = tc.Pose.random(7, seed=3)
    assert poses.is_batch and len(poses) == 7 and poses.matrix.shape == (7, 4, 4)
    assert poses[2].matrix.shape == (4, 4)
    composed = poses @ tc.Pose.from_translation([1.0, 0, 0])
    np.testing.assert_allclose(composed.translation, poses.translation + poses.rotation[:, :, 0], atol=1e-14)
    assert repr(poses) == "Pose(batch of 7)"


@pytest.mark.parametrize(
    "matrix, message",
    [
        (np.full((4, 4), np.nan), "NaN"),
        (np.diag([1.0, 1.0, 2.0, 1.0]), "not a rotation"),
        (np.diag([1.0, 1.0, -1.0, 1.0]), "reflection"),
        (np.eye(3), "shape"),
        (np.zeros((0, 4, 4)), "empty"),
        (np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1.0]]), "last row"),
    ],
)
def test_pose_rejects_bad_matrices(matrix, message):
    with pytest.raises(GeometryError, match=message):
        tc.Pose(matrix)


def test_pose_rejects_bad_quaternion_and_translation():
    with pytest.raises(GeometryError, match="zero length"):
        tc.Pose.from_quaternion([0, 0, 0, 0], order="wxyz")
    with pytest.raises(GeometryError, match="NaN"):
        tc.Pose.from_translation([0, np.inf, 0])
    with pytest.raises(GeometryError, match="shape"):
        tc.Pose.from_translation([0, 1])


# ------------------------------------------------------------------------------------------
# shapes
ALL_SHAPES = {
    "point": lambda: tc.Point([0.1, 0.2, 0.3]),
    "sphere": lambda: tc.Sphere(0.5),
    "segment": lambda: tc.Segment([0, 0, 0], [1, 0, 0]),
    "capsule": lambda: tc.Capsule(0.2, 1.0),
    "ray": lambda: tc.Ray([0, 0, 0], [0, 0, 2]),
    "line": lambda: tc.Line([0, 0, 0], [1, 1, 0]),
    "plane": lambda: tc.Plane([0, 0, 1], 0.5),
    "halfspace": lambda: tc.HalfSpace([0, 1, 0], -0.5),
    "triangle": lambda: tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]),
    "tetrahedron": lambda: tc.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]),
    "box": lambda: tc.Box([1.0, 2.0, 3.0]),
    "aabb": lambda: tc.AABB([0, 0, 0], [1, 2, 3]),
    "cylinder": lambda: tc.Cylinder(0.5, 2.0),
    "cone": lambda: tc.Cone(0.5, 2.0),
    "ellipsoid": lambda: tc.Ellipsoid([0.5, 1.0, 2.0]),
    "polygon": lambda: tc.ConvexPolygon([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]),
    "polyhedron": lambda: tc.ConvexPolyhedron(np.random.default_rng(4).normal(size=(20, 3))),
    "mesh": lambda: tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
}


@pytest.mark.parametrize("name", sorted(ALL_SHAPES))
def test_shapes_are_immutable_and_picklable(name):
    shape = ALL_SHAPES[name]()
    with pytest.raises(AttributeError):
        shape.kind = 3
    with pytest.raises(ValueError):
        shape.params[...] = 0.0
    clone = pickle.loads(pickle.dumps(shape))
    assert type(clone) is type(shape)
    for mine, theirs in zip(shape.packed(), clone.packed()):
        np.testing.assert_array_equal(mine, theirs)
    assert type(shape).__name__ in repr(shape)


def test_shape_accessors():
    assert tc.Box([1, 2, 3]).half_extents.tolist() == [0.5, 1.0, 1.5]
    aabb = tc.AABB([1, 2, 3], [2, 4, 6])
    assert aabb.min.tolist() == [1, 2, 3] and aabb.max.tolist() == [2, 4, 6]
    assert tc.Capsule(0.5, 2.0).length == 2.0
    assert tc.Capsule.from_points([0, 0, 0], [0, 3, 4], 0.1).length == 5.0
    assert tc.Cylinder(0.5, 2.0).length == 2.0 and tc.Cone(0.5, 3.0).length == 3.0
    assert tc.Plane([0, 0, 2], 3.0).offset == pytest.approx(3.0)
    assert tc.Ray([0, 0, 0], [0, 0, 5]).direction.tolist() == [0, 0, 1]
    ellipsoid = tc.Ellipsoid([1, 2, 3], center=[0, 0, 1])
    assert ellipsoid.radii.tolist() == [1, 2, 3] and ellipsoid.center.tolist() == [0, 0, 1]


def test_convex_polyhedron_structure():
    cube = tc.ConvexPolyhedron(np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T)
    assert len(cube.vertices) == 8
    assert len(cube.face_planes) == 6  # Qhull's 12 triangles merge into 6 facets
    assert len(cube.edges) == 12  # facet diagonals are not edges
    assert all(len(n) == 3 for n in cube.vertex_neighbors)
    # the same adjacency rides in params (CSR after the plane offsets) for GJK hill climbing
    nv, nf = int(cube.params[0]), int(cube.params[1])
    starts = cube.params[4 + nf : 5 + nf + nv].astype(int)
    neighbours = cube.params[5 + nf + nv :].astype(int)
    assert starts[-1] == len(neighbours) == 2 * len(cube.edges)
    for vertex, expected in enumerate(cube.vertex_neighbors):
        assert tuple(neighbours[starts[vertex] : starts[vertex + 1]]) == expected
    # every vertex satisfies every plane; outward normals
    planes = cube.face_planes
    assert (cube.vertices @ planes[:, :3].T - planes[:, 3] <= 1e-12).all()
    centroid = cube.vertices.mean(0)
    assert (planes[:, :3] @ centroid - planes[:, 3] < 0).all()
    # faces are CCW seen from outside
    for face in cube.faces:
        p0, p1, p2 = cube.vertices[face]
        assert np.cross(p1 - p0, p2 - p0) @ (p0 - centroid) > 0


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tc.Sphere(-1.0), "radius"),
        (lambda: tc.Sphere(0.0), "radius"),
        (lambda: tc.Sphere(np.nan), "radius"),
        (lambda: tc.Sphere(1.0, [0, np.inf, 0]), "center"),
        (lambda: tc.Capsule(1.0, -1.0), "length"),
        (lambda: tc.Capsule(0.0, 1.0), "radius"),
        (lambda: tc.Box([1, 0, 1]), "extents"),
        (lambda: tc.Box([1, 1]), "extents"),
        (lambda: tc.Box([1, np.nan, 1]), "extents"),
        (lambda: tc.AABB([0, 0, 0], [1, 0, 1]), "max"),
        (lambda: tc.Cylinder(1.0, 0.0), "length"),
        (lambda: tc.Cone(-1.0, 1.0), "radius"),
        (lambda: tc.Ellipsoid([1.0, 0.0, 1.0]), "radii"),
        (lambda: tc.Ellipsoid([1.0, np.nan, 1.0]), "radii"),
        (lambda: tc.Ellipsoid([1.0, 1.0]), "radii"),
        (lambda: tc.Ray([0, 0, 0], [0, 0, 0]), "direction"),
        (lambda: tc.Line([0, 0, np.nan], [0, 0, 1]), "origin"),
        (lambda: tc.Plane([0, 0, 0], 1.0), "normal"),
        (lambda: tc.Segment([0, 0, 0], [1, 2]), "b"),
        (lambda: tc.Triangle([0, 0, 0], [1, 0, 0], [np.inf, 0, 0]), "c"),
        (lambda: tc.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]), "coplanar"),
        (lambda: tc.ConvexPolygon([[0, 0, 0], [1, 0, 0], [2, 0, 0]]), "collinear"),
        (lambda: tc.ConvexPolygon([[0, 0, 0], [1, 0, 0], [1, 1, 0.5], [0, 1, 0]]), "coplanar"),
        (lambda: tc.ConvexPolygon([[0, 0, 0], [1, 0, 0], [0.2, 0.2, 0], [0, 1, 0]]), "convex"),
        (lambda: tc.ConvexPolyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 3, 0]]), "degenerate"),
        (lambda: tc.ConvexPolyhedron([[0, 0, 0], [1, 0, 0]]), "at least 4"),
        (lambda: tc.TriangleMesh(np.zeros((0, 3)), [[0, 1, 2]]), "at least 3"),
        (lambda: tc.TriangleMesh(np.eye(3), np.zeros((0, 3), int)), "m > 0"),
        (lambda: tc.TriangleMesh(np.eye(3), [[0, 1, 3]]), "out of range"),
        (lambda: tc.TriangleMesh(np.eye(3), [[0, 1, -1]]), "out of range"),
        (lambda: tc.TriangleMesh(np.eye(3), [[0, 1.5, 2]]), "integer"),
        (lambda: tc.TriangleMesh([[0, 0, 0], [1, 0, np.nan], [0, 1, 0]], [[0, 1, 2]]), "NaN"),
        (lambda: tc.TriangleMesh(np.eye(3), [[0, 1]]), "shape"),
    ],
)
def test_constructors_reject_bad_input(build, message):
    with pytest.raises(GeometryError, match=message):
        build()


def test_geometry_error_is_a_value_error():
    assert issubclass(GeometryError, ValueError)
    assert issubclass(UnsupportedQuery, NotImplementedError)


def test_trimesh_is_accepted_where_a_mesh_is_expected():
    trimesh = pytest.importorskip("trimesh")
    box_mesh = trimesh.creation.box(extents=[1, 1, 1])
    hit = tc.raycast(box_mesh, None, [0.0, 0.0, 5.0], [0.0, 0.0, -1.0])
    assert hit.hit and hit.t == pytest.approx(4.5)
    result = tc.distance(tc.Sphere(0.25), tc.Pose.from_translation([0, 0, 2.0]), box_mesh, None)
    assert result.distance == pytest.approx(1.25)
    with pytest.raises(GeometryError, match="touche shape"):
        tc.distance(tc.Sphere(1.0), None, "not a shape", None)


# ------------------------------------------------------------------------------------------
# verbs: shapes, dtypes, broadcasting
def test_single_and_batch_shapes_and_dtypes():
    sphere, box = tc.Sphere(0.5), tc.Box([1, 1, 1])
    poses = tc.Pose.random(11, scale=1.5, seed=5)
    assert isinstance(tc.intersects(sphere, None, box, None), bool)
    batch = tc.intersects(sphere, poses, box, None)
    assert batch.shape == (11,) and batch.dtype == np.bool_
    single = tc.distance(sphere, poses[0], box, None)
    assert isinstance(single.distance, float) and single.point_a.shape == (3,)
    assert isinstance(single.status, tc.Status)
    many = tc.distance(sphere, poses, box, poses.matrix)  # both sides batched, same length
    assert many.signed_distance.shape == (11,) and many.point_a.shape == (11, 3)
    assert many.normal.shape == (11, 3) and many.status.dtype == np.int8
    broadcast = tc.distance(box, None, sphere, poses)  # batch on the right
    assert broadcast.distance.shape == (11,)
    for i in range(11):  # batch rows equal single calls
        one = tc.distance(box, None, sphere, poses[i])
        assert broadcast.signed_distance[i] == one.signed_distance
        np.testing.assert_array_equal(broadcast.point_a[i], one.point_a)
        assert broadcast.status[i] == one.status
        assert tc.intersects(sphere, poses[i], box, None) == batch[i]


def test_raw_arrays_are_accepted_as_poses():
    sphere = tc.Sphere(1.0)
    matrix = np.eye(4)
    matrix[:3, 3] = [3.0, 0, 0]
    assert tc.distance(sphere, matrix, sphere, None).distance == pytest.approx(1.0)
    assert tc.distance(sphere, matrix.tolist(), sphere, None).distance == pytest.approx(1.0)
    assert tc.distance(sphere, np.asfortranarray(matrix), sphere, None).distance == pytest.approx(1.0)
    assert tc.distance(sphere, matrix.astype(np.float32), sphere, None).distance == pytest.approx(1.0)


@pytest.mark.parametrize("verb", ["intersects", "distance"])
def test_verbs_reject_bad_poses(verb):
    sphere = tc.Sphere(1.0)
    function = getattr(tc, verb)
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(GeometryError, match="pose_a"):
        function(sphere, bad, sphere, None)
    scaled = np.eye(4) * 2.0
    scaled[3, 3] = 1.0
    with pytest.raises(GeometryError, match="pose_b"):
        function(sphere, None, sphere, scaled)
    batch = np.tile(np.eye(4), (3, 1, 1))
    batch[1, 2, 3] = np.inf
    with pytest.raises(GeometryError, match="pose_a"):
        function(sphere, batch, sphere, None)
    with pytest.raises(GeometryError, match="differ in length"):
        function(sphere, np.tile(np.eye(4), (3, 1, 1)), sphere, np.tile(np.eye(4), (4, 1, 1)))


def test_unsupported_pairs_raise_naming_both_shapes():
    # (mesh-mesh intersects / distance are supported since issue 4; contacts between meshes are not)
    with pytest.raises(UnsupportedQuery, match="TriangleMesh and TriangleMesh"):
        tc.contacts(ALL_SHAPES["mesh"](), None, ALL_SHAPES["mesh"](), None)
    with pytest.raises(UnsupportedQuery, match="raycast"):
        tc.raycast(tc.Point([0, 0, 0]), None, [0, 0, 1], [0, 0, -1])


def test_closest_point_verb():
    box = tc.Box([2, 2, 2])
    pose = tc.Pose.from_translation([10.0, 0, 0])
    result = tc.closest_point(box, pose, [[10, 0, 5], [10.5, 0.5, 0], [13, 3, 0]])
    np.testing.assert_allclose(result.point, [[10, 0, 1], [10.5, 0.5, 0], [11, 1, 0]], atol=1e-14)
    np.testing.assert_allclose(result.distance, [4, 0, np.sqrt(8)], atol=1e-14)
    assert result.status.tolist() == [tc.Status.SEPARATED, tc.Status.PENETRATING, tc.Status.SEPARATED]
    one = tc.closest_point(box, pose, [10, 0, 5])
    assert one.point.shape == (3,) and one.distance == pytest.approx(4.0)
    with pytest.raises(GeometryError, match="points"):
        tc.closest_point(box, pose, [[0, 0]])
    with pytest.raises(GeometryError, match="NaN"):
        tc.closest_point(box, pose, [[0, 0, np.nan]])
    # one point against a batch of poses broadcasts (as a single pose against many points does)
    poses = np.tile(np.eye(4), (3, 1, 1))
    poses[:, 0, 3] = [0.0, 1.0, 2.0]
    for point in ([3.0, 0.0, 0.0], [[3.0, 0.0, 0.0]]):
        swept = tc.closest_point(box, poses, point)
        np.testing.assert_allclose(swept.point, [[1, 0, 0], [2, 0, 0], [3, 0, 0]], atol=1e-14)
        np.testing.assert_allclose(swept.distance, [2, 1, 0], atol=1e-14)
    with pytest.raises(GeometryError, match="differ in length"):
        tc.closest_point(box, poses, np.zeros((2, 3)))
    # an empty batch of points is a batch: empty answers (issue 22; tests/test_readable_results.py)
    empty = tc.closest_point(box, pose, np.zeros((0, 3)))
    assert empty.point.shape == (0, 3) and empty.distance.shape == (0,) and empty.status.shape == (0,)


def test_raycast_verb_shapes_and_errors():
    sphere = tc.Sphere(1.0)
    result = tc.raycast(sphere, None, [[-5, 0, 0], [-5, 2, 0]], [[2, 0, 0]], max_t=[10.0, 10.0])
    assert result.hit.tolist() == [True, False]
    assert result.t[0] == pytest.approx(4.0) and result.t[1] == np.inf
    np.testing.assert_allclose(result.point[0], [-1, 0, 0], atol=1e-14)
    np.testing.assert_allclose(result.normal[0], [-1, 0, 0], atol=1e-14)
    assert np.isnan(result.point[1]).all()
    assert not tc.raycast(sphere, None, [-5, 0, 0], [1, 0, 0], max_t=3.9).hit
    assert tc.raycast(sphere, None, [-5, 0, 0], [1, 0, 0], max_t=4.0).hit  # closed at t_max
    inside = tc.raycast(sphere, None, [0, 0, 0], [1, 0, 0])
    assert inside.hit and inside.t == 0.0
    leaving = tc.raycast(sphere, None, [0, 0, 0], [1, 0, 0], solid=False)
    assert leaving.t == pytest.approx(1.0)
    with pytest.raises(GeometryError, match="zero-length"):
        tc.raycast(sphere, None, [0, 0, 0], [0, 0, 0])
    with pytest.raises(GeometryError, match="max_t"):
        tc.raycast(sphere, None, [0, 0, 0], [1, 0, 0], max_t=-1.0)
    with pytest.raises(GeometryError, match="differ in length"):
        tc.raycast(sphere, None, np.zeros((3, 3)), np.ones((2, 3)))
    with pytest.raises(GeometryError, match="NaN"):
        tc.raycast(sphere, None, [0, np.nan, 0], [1, 0, 0])


def test_single_ray_fast_path_equals_the_batch_path():
    """One ray given as plain numbers takes a shorter argument check (_queryargs._single_ray):
    the answers must be those of the same ray sent as a batch of one, bit for bit, for every
    form of the arguments, and what it does not handle must reach the general checks."""
    rng = np.random.default_rng(11)
    shapes = [tc.Box([1, 2, 3]), tc.Sphere(0.7), tc.Cylinder(0.5, 2.0), tc.RoundedBox([1, 1, 2], 0.2),
              tc.ConvexPolyhedron(rng.normal(size=(20, 3)))]
    poses = [None, tc.Pose.from_rotvec([0.3, -0.7, 0.2], [0.4, -0.2, 0.5]),
             tc.Pose.from_rotvec([0.1, 0.2, 0.3], [1.0, 0.0, 0.0]).matrix.copy()]
    for shape in shapes:
        for pose in poses:
            for _ in range(20):
                origin = rng.uniform(-4, 4, 3)
                direction = rng.uniform(-0.5, 0.5, 3) - origin
                max_t = float(rng.choice([np.inf, 2.0, 5.0]))
                batch = tc.raycast(shape, pose, origin[None], direction[None], max_t=[max_t])
                for o, d, m in ((origin, direction, max_t), (origin.tolist(), tuple(direction), max_t),
                                (origin.tolist(), direction.tolist(), np.float64(max_t))):
                    one = tc.raycast(shape, pose, o, d, max_t=m)
                    assert one.hit == batch.hit[0] and one.t == batch.t[0], (shape, pose, o, d, m)
                    np.testing.assert_array_equal(one.point, batch.point[0])
                    np.testing.assert_array_equal(one.normal, batch.normal[0])
    box = tc.Box([1, 1, 1])
    # integers, a huge direction (scaled by the general path), an int max_t
    assert tc.raycast(box, None, [0, 0, 3], [0, 0, -1], max_t=5).t == 2.5
    assert tc.raycast(box, None, [0, 0, 3], [0, 0, -1e300]).t == 2.5
    assert tc.raycast(box, None, np.array([0, 0, 3]), np.array([0, 0, -1e-300])).t == 2.5
    # what the short path leaves to the general checks is refused with their messages
    with pytest.raises(GeometryError, match="NaN"):
        tc.raycast(box, None, [0, 0, np.nan], [0, 0, -1])
    with pytest.raises(GeometryError, match="NaN"):
        tc.raycast(box, None, [0, 0, 3], [0, np.inf, -1])
    with pytest.raises(GeometryError, match="range"):
        tc.raycast(box, None, [0, 0, 1e80], [0, 0, -1])
    with pytest.raises(GeometryError, match="zero-length"):
        tc.raycast(box, None, [0, 0, 3], (0, 0, 0))
    with pytest.raises(GeometryError, match="max_t"):
        tc.raycast(box, None, [0, 0, 3], [0, 0, -1], max_t=float("nan"))
    with pytest.raises(GeometryError, match="max_t"):
        tc.raycast(box, None, [0, 0, 3], [0, 0, -1], max_t=-2)
    with pytest.raises(GeometryError):
        tc.raycast(box, np.diag([2.0, 1.0, 1.0, 1.0]), [0, 0, 3], [0, 0, -1])  # not a rigid pose
    with pytest.raises(GeometryError):
        tc.raycast(box, None, ["a", 0, 3], [0, 0, -1])


def test_single_gjk_distance_entry_equals_the_batch_path():
    """A single distance of a pair the GJK family answers skips the closed forms
    (batch.checked_engine_distance_into: none of them ever answers such a pair): every field
    must equal the same pair sent as a batch (distance_many, closed forms first), bit for bit,
    and bad poses are refused as before."""
    from touche._kernels import batch

    rng = np.random.default_rng(12)
    curved = [tc.Cylinder(0.5, 2.0), tc.Cone(0.6, 1.0), tc.Ellipsoid([0.7, 0.4, 0.3]), tc.RoundedBox([1, 1, 2], 0.2)]
    others = curved + [tc.Box([1, 2, 3]), tc.Sphere(0.7), tc.Capsule(0.3, 1.0), tc.Segment([0, 0, 0], [1, 0, 0]),
                       tc.ConvexPolyhedron(rng.normal(size=(20, 3)))]
    checked = 0
    for a in curved:
        for b in others:
            if not batch.gjk_distance_family(a.kind, b.kind):
                continue
            for pose_a, pose_b in zip(tc.Pose.random(6, scale=2.0, seed=checked), tc.Pose.random(6, scale=2.0,
                                                                                                  seed=checked + 1)):
                for x, tx, y, ty in ((a, pose_a, b, pose_b), (b, pose_b, a, pose_a)):
                    one = tc.distance(x, tx, y, ty)
                    many = tc.distance(x, tx.matrix[None], y, ty.matrix[None])
                    assert one.signed_distance == many.signed_distance[0] and int(one.status) == many.status[0]
                    for field in ("point_a", "point_b", "normal"):
                        np.testing.assert_array_equal(getattr(one, field), getattr(many, field)[0])
            checked += 1
    assert checked >= 20, checked
    with pytest.raises(GeometryError):
        tc.distance(tc.Cylinder(0.5, 2.0), np.diag([2.0, 1.0, 1.0, 1.0]), tc.Box([1, 1, 1]), None)


def test_single_closest_point_fast_path_equals_the_batch_path():
    """One point given as plain numbers skips query_points' array passes (single_point): the same
    answers as a batch of one, and what it does not take reaches the general checks."""
    rng = np.random.default_rng(12)
    shapes = [tc.Box([1, 2, 3]), tc.Capsule(0.3, 1.0), tc.Cylinder(0.5, 2.0), tc.RoundedBox([1, 1, 2], 0.2)]
    poses = [None, tc.Pose.from_rotvec([0.3, -0.7, 0.2], [0.4, -0.2, 0.5])]
    for shape in shapes:
        for pose in poses:
            for _ in range(20):
                point = rng.uniform(-3, 3, 3)
                batch = tc.closest_point(shape, pose, point[None])
                for given in (point, point.tolist(), tuple(point)):
                    one = tc.closest_point(shape, pose, given)
                    np.testing.assert_array_equal(one.point, batch.point[0])
                    assert one.distance == batch.distance[0] and one.status == batch.status[0]
    box = tc.Box([1, 1, 1])
    assert tc.closest_point(box, None, [2, 0, 0]).distance == 1.5  # integers
    assert tc.closest_point(box, None, np.array([2, 0, 0], dtype=np.int32)).distance == 1.5
    for bad, message in (([0, np.nan, 0], "NaN"), ([0, 0, np.inf], "NaN"), ([1e80, 0, 0], "range"),
                         (["a", 0, 0], "numeric"), ([1, 2], "shape")):
        with pytest.raises(GeometryError, match=message):
            tc.closest_point(box, None, bad)


def test_raycast_on_posed_shapes_matches_local_frame():
    box = tc.Box([1, 2, 3])
    pose = tc.Pose.from_rotvec([0.3, -0.7, 0.2], [1.0, -2.0, 0.5])
    rng = np.random.default_rng(6)
    origins_local = rng.uniform(-4, 4, size=(200, 3))
    targets_local = rng.uniform(-0.5, 0.5, size=(200, 3))
    local = tc.raycast(box, None, origins_local, targets_local - origins_local)
    world = tc.raycast(box, pose, pose.apply(origins_local), pose.apply_vectors(targets_local - origins_local))
    np.testing.assert_array_equal(local.hit, world.hit)
    np.testing.assert_allclose(world.t[world.hit], local.t[local.hit], rtol=1e-12)
    np.testing.assert_allclose(world.point[world.hit], pose.apply(local.point[local.hit]), atol=1e-12)
    np.testing.assert_allclose(world.normal[world.hit], pose.apply_vectors(local.normal[local.hit]), atol=1e-12)


def test_mesh_raycast_reports_faces():
    mesh = ALL_SHAPES["mesh"]()
    result = tc.raycast(mesh, None, [[0.2, 0.2, 5.0], [0.2, 0.2, -5.0]], [[0, 0, -1], [0, 0, 1]])
    assert result.hit.all()
    assert result.t[0] == pytest.approx(5.0 - 0.6) and result.face[0] == 3
    assert result.t[1] == pytest.approx(5.0) and result.face[1] == 0


@pytest.mark.slow
def test_warmup_and_import_are_cheap_to_call_twice():
    tc.warmup()
    tc.warmup()


def test_lazy_public_names_are_the_modules_objects_and_import_stays_light():
    # import touche leaves the modules a script may not use unimported; each public name still
    # resolves, to the very object its module defines (and tc.clearance stays the function even
    # once the module of the same name is imported)
    code = (
        "import importlib, inspect, sys, touche as tc\n"
        "lazy = {'touche.' + m for m in set(tc._LAZY_NAMES.values())}\n"
        "lazy |= {'touche.mesh', 'touche.broadphase', 'touche.bounding', 'touche.world'}\n"
        "assert not lazy & set(sys.modules), sorted(lazy & set(sys.modules))\n"
        "for name, module in tc._LAZY_NAMES.items():\n"
        "    assert getattr(tc, name) is getattr(importlib.import_module('touche.' + module), name), name\n"
        "import touche.clearance\n"
        "assert inspect.isfunction(tc.clearance) and inspect.isfunction(tc.contacts)\n"
        "for name in tc.__all__:\n"
        "    assert getattr(tc, name) is not None, name\n"
        "namespace = {}\n"
        "exec('from touche import *', namespace)\n"
        "assert namespace['CollisionWorld'] is tc.CollisionWorld and inspect.ismodule(namespace['mesh'])\n"
        "try:\n"
        "    tc.no_such_name\n"
        "except AttributeError as error:\n"
        "    assert 'no_such_name' in str(error)\n"
        "else:\n"
        "    raise AssertionError('tc.no_such_name resolved')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
