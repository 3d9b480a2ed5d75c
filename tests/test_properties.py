"""Properties of touche.distance / touche.intersects (hypothesis, derandomized, <= 100 examples):
symmetry, invariance under a rigid motion of both poses, distance >= 0, closest points on their
shapes (naive_pairs reference), distance == |point_b - point_a|, boolean == (distance == 0)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive as N
import touche as tc
from test_pairs import SHAPES, bounding_radius

PAIR_TYPES = [
    ("Sphere", "Box"), ("Capsule", "ConvexPolyhedron"), ("Triangle", "Triangle"), ("Box", "AABB"),
    ("Segment", "TriangleMesh"), ("Point", "Cone"), ("Tetrahedron", "Plane"), ("Capsule", "Capsule"),
    ("ConvexPolygon", "Tetrahedron"), ("Sphere", "Cylinder"), ("Ray", "Box"), ("Box", "HalfSpace"),
]
SETTINGS = settings(max_examples=100, derandomize=True, deadline=None)

coord = st.floats(-1.0, 1.0, allow_nan=False)
quaternion = st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 4).filter(
    lambda q: 0.1 < float(np.linalg.norm(q)))


def as_pose(q, t):
    q = np.asarray(q) / np.linalg.norm(q)
    w, x, y, z = q
    R = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])
    u, _, vt = np.linalg.svd(R)  # orthonormal to round-off
    return N.pose(u @ vt, t)


poses = st.builds(as_pose, quaternion, st.tuples(coord, coord, coord))
pair_type = st.sampled_from(PAIR_TYPES)


def size(a, b, Ta, Tb):
    return bounding_radius(a) + bounding_radius(b) + np.abs(Ta[:3, 3]).max() + np.abs(Tb[:3, 3]).max()


@SETTINGS
@given(pair_type, poses, poses)
def test_symmetry(pair, Ta, Tb):
    a, b = pair
    A, B = SHAPES[a], SHAPES[b]
    S = size(a, b, Ta, Tb)
    ab, ba = tc.distance(A, Ta, B, Tb), tc.distance(B, Tb, A, Ta)
    assert ab.status == ba.status
    assert tc.intersects(A, Ta, B, Tb) == tc.intersects(B, Tb, A, Ta)
    if np.isnan(ab.signed_distance):
        assert np.isnan(ba.signed_distance)
        return
    assert abs(ab.signed_distance - ba.signed_distance) <= 1e-12 * S
    if ab.signed_distance > 1e-9 * S:
        # closest points may form a set (parallel features), their difference is unique
        np.testing.assert_allclose(ab.point_b - ab.point_a, ba.point_a - ba.point_b, atol=1e-9 * S)
        np.testing.assert_allclose(ab.normal, -ba.normal, atol=1e-9)
        assert N.ref_point_distance(N.world(A, Ta), ba.point_b) <= 1e-9 * S
        assert N.ref_point_distance(N.world(B, Tb), ba.point_a) <= 1e-9 * S


@SETTINGS
@given(pair_type, poses, poses, poses)
def test_rigid_motion_invariance(pair, Ta, Tb, M):
    a, b = pair
    A, B = SHAPES[a], SHAPES[b]
    S = size(a, b, Ta, Tb) + np.abs(M[:3, 3]).max()
    before = tc.distance(A, Ta, B, Tb)
    after = tc.distance(A, M @ Ta, B, M @ Tb)
    if np.isnan(before.signed_distance) or np.isinf(before.signed_distance):
        assert np.array_equal(before.signed_distance, after.signed_distance, equal_nan=True)
        return
    assert abs(before.signed_distance - after.signed_distance) <= 1e-9 * S
    if before.signed_distance > 1e-9 * S:
        R = M[:3, :3]
        np.testing.assert_allclose(after.point_b - after.point_a, R @ (before.point_b - before.point_a), atol=1e-9 * S)
        np.testing.assert_allclose(after.normal, R @ before.normal, atol=1e-9)
        assert N.ref_point_distance(N.world(A, M @ Ta), after.point_a) <= 1e-9 * S
        assert N.ref_point_distance(N.world(B, M @ Tb), after.point_b) <= 1e-9 * S
    if abs(before.signed_distance) > 1e-9 * S:
        assert tc.intersects(A, Ta, B, Tb) == tc.intersects(A, M @ Ta, B, M @ Tb)


@SETTINGS
@given(pair_type, poses, poses)
def test_distance_and_closest_points(pair, Ta, Tb):
    a, b = pair
    A, B = SHAPES[a], SHAPES[b]
    S = size(a, b, Ta, Tb)
    res = tc.distance(A, Ta, B, Tb)
    assert res.distance >= 0.0
    assert res.depth >= 0.0
    hit = tc.intersects(A, Ta, B, Tb)
    if res.status == tc.Status.SEPARATED:
        assert not hit
        assert res.distance > 0.0
        assert abs(np.linalg.norm(res.point_b - res.point_a) - res.distance) <= 1e-12 * S
        np.testing.assert_allclose(res.normal * res.distance, res.point_b - res.point_a, atol=1e-12 * S)
    elif res.status == tc.Status.PENETRATING:
        assert hit
    if np.isfinite(res.signed_distance):
        assert N.ref_point_distance(N.world(A, Ta), res.point_a) <= 1e-9 * S
        assert N.ref_point_distance(N.world(B, Tb), res.point_b) <= 1e-9 * S
        assert abs(np.linalg.norm(res.normal) - 1.0) <= 1e-12
