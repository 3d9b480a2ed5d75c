"""touche.time_of_impact for pairs answered by GJK shape casting (touche.dispatch routes them to
dispatch.GJK_CAST under translation):
spheres, capsules, segments, points, cylinders, cones, ellipsoids, and those against polytopes.

References: the closed-form sphere-sphere time (a quadratic), the exact SAT engine on polytope
pairs (the same pair cast by GJK must give the same time), and brute force (dense sampling plus
bisection of touche.intersects, tests/naive/toi.py) for the rest.
"""
import numpy as np
import pytest

import naive as N
import touche as tc
from naive.toi import first_contact_by_sampling
from touche._kernels import kinds as K
from touche import dispatch
from touche.impact import ImpactStatus, SetKind, time_of_impact


def _translation(p):
    return N.pose(None, p)


def test_routes():
    box, sphere, cylinder, mesh = tc.Box([1, 1, 1]), tc.Sphere(1.0), tc.Cylinder(1, 1), tc.TriangleMesh(np.eye(3), [[0, 1, 2]])

    def engine(a, b):
        return dispatch.route(dispatch.TIME_OF_IMPACT[dispatch.TRANSLATION], a.kind, b.kind).engine

    assert engine(box, tc.Tetrahedron(*np.eye(4)[:, :3])) == "sat"
    assert engine(box, box) == dispatch.ALIGNED_BOXES_OR_SAT  # the AABB closed form when neither turns
    assert engine(sphere, box) == dispatch.SPHERE_BOX_CAST  # a closed form before GJK casting
    assert engine(cylinder, tc.Ellipsoid([1, 2, 3])) == engine(tc.Capsule(1, 1), box) == "gjk"
    assert engine(mesh, sphere) == dispatch.MESH_ADVANCEMENT  # the BVH advancement (test_ccd_mesh.py)
    assert time_of_impact(mesh, tc.Static(), sphere, tc.Linear([1, 0, 0], tc.Pose.from_translation([-3, 0, 0])),
                          1.0).status == ImpactStatus.MISS
    with pytest.raises(tc.UnsupportedQuery):
        tc.intersection(sphere, None, box, None)


def test_sphere_sphere_matches_the_quadratic():
    rng = np.random.default_rng(1)
    n = 2000
    start_a = rng.uniform(-3, 3, (n, 3))
    start_b = rng.uniform(-3, 3, (n, 3))
    # aimed at each other, with a random miss distance: hits, misses and grazes all occur
    velocity_a = (start_b - start_a) * rng.uniform(0.2, 1.0, (n, 1)) + rng.normal(size=(n, 3)) * 0.6
    velocity_b = rng.normal(size=(n, 3)) * 0.3
    start_b[:20] = start_a[:20] + [0.5, 0.3, 0.1]  # already overlapping
    ra, rb = 0.4, 0.7
    poses_a = np.tile(np.eye(4), (n, 1, 1))
    poses_a[:, :3, 3] = start_a
    poses_b = np.tile(np.eye(4), (n, 1, 1))
    poses_b[:, :3, 3] = start_b
    result = time_of_impact(tc.Sphere(ra), tc.Linear(velocity_a, poses_a), tc.Sphere(rb), tc.Linear(velocity_b, poses_b), 2.0)
    # |d + r t| = ra + rb, d = start_b - start_a, r = velocity_b - velocity_a
    d = start_b - start_a
    r = velocity_b - velocity_a
    a2 = (r * r).sum(1)
    b1 = (d * r).sum(1)
    c0 = (d * d).sum(1) - (ra + rb) ** 2
    disc = b1 * b1 - a2 * c0
    with np.errstate(invalid="ignore"):
        t = (-b1 - np.sqrt(disc)) / a2
    expected = np.where(c0 <= 0, 0.0, np.where((disc >= 0) & (t >= 0) & (t <= 2.0), t, np.inf))
    touching = c0 <= 0
    hit = np.isfinite(expected) & ~touching
    assert 0.2 <= hit.mean() <= 0.8 and touching.any()
    np.testing.assert_array_equal(result.status[touching], ImpactStatus.ALREADY_TOUCHING)
    np.testing.assert_array_equal(result.status[hit], ImpactStatus.HIT)
    assert (result.status[~np.isfinite(expected)] == ImpactStatus.MISS).all()
    np.testing.assert_allclose(result.time[hit], expected[hit], rtol=1e-9, atol=1e-12)
    # the contact point is on both spheres at that time
    at_a = start_a[hit] + result.time[hit, None] * velocity_a[hit]
    at_b = start_b[hit] + result.time[hit, None] * velocity_b[hit]
    np.testing.assert_allclose(np.linalg.norm(result.point[hit] - at_a, axis=1), ra, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(result.point[hit] - at_b, axis=1), rb, atol=1e-8)
    assert (result.kind[hit] == SetKind.POINT).all() and (result.count[hit] == 1).all()


@pytest.mark.parametrize("pair", [("Box", "Box"), ("Tetrahedron", "Box"), ("Triangle", "ConvexPolyhedron")])
def test_gjk_cast_equals_the_sat_engine_on_polytopes(pair):
    from touche._kernels.convex.gjk_cast import gjk_shape_cast_many

    shapes = {
        "Box": tc.Box([1.0, 0.6, 1.4]),
        "Tetrahedron": tc.Tetrahedron([0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1], [0.3, 0.2, 0.8]),
        "Triangle": tc.Triangle([0.0, 0.0, 0.0], [1.2, 0.1, 0.0], [0.3, 0.9, 0.1]),
        "ConvexPolyhedron": tc.ConvexPolyhedron(np.random.default_rng(7).normal(size=(12, 3)) * 0.6),
    }
    a, b = shapes[pair[0]], shapes[pair[1]]
    rng = np.random.default_rng(4)
    n = 400
    poses_a = np.stack([N.pose(N.random_rotation(rng), rng.uniform(-3, 3, 3)) for _ in range(n)])
    poses_b = np.stack([N.pose(N.random_rotation(rng), rng.uniform(-1, 1, 3)) for _ in range(n)])
    velocity = -poses_a[:, :3, 3] + rng.normal(size=(n, 3)) * 0.8
    sat = time_of_impact(a, tc.Linear(velocity, poses_a), b, tc.Static(poses_b), 1.5)
    status = np.empty(n, np.int8)
    time = np.empty(n)
    point = np.empty((n, 3))
    normal = np.empty((n, 3))
    gjk_shape_cast_many(*a._packed[:3], poses_a, velocity, *b._packed[:3], poses_b, np.zeros((1, 3)),
                        1.5, 1e-12, status, time, point, normal, 0, len(status))
    hits = sat.status == ImpactStatus.HIT
    assert 0.2 <= hits.mean() <= 0.9
    np.testing.assert_array_equal(status, sat.status)
    np.testing.assert_allclose(time[hits], sat.time[hits], rtol=1e-9, atol=1e-11)


SMOOTH_CASES = {
    "capsule-box": (tc.Capsule(0.3, 1.2), tc.Box([1.0, 0.6, 1.4])),
    "cylinder-box": (tc.Cylinder(0.4, 1.2), tc.Box([1.0, 0.6, 1.4])),
    "cone-tetrahedron": (tc.Cone(0.5, 1.0), tc.Tetrahedron([0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1], [0.3, 0.2, 0.8])),
    "ellipsoid-cylinder": (tc.Ellipsoid([0.7, 0.4, 0.3]), tc.Cylinder(0.4, 1.2)),
    "segment-cone": (tc.Segment([-0.6, 0.1, 0.0], [0.5, -0.2, 0.3]), tc.Cone(0.5, 1.0)),
    "point-ellipsoid": (tc.Point([0.1, 0.0, 0.0]), tc.Ellipsoid([0.7, 0.4, 0.3])),
}


@pytest.mark.parametrize("name", sorted(SMOOTH_CASES))
def test_smooth_pairs_against_brute_force(name):
    a, b = SMOOTH_CASES[name]
    rng = np.random.default_rng(len(name))
    n = 60
    poses_a = np.stack([N.pose(N.random_rotation(rng), rng.uniform(-3, 3, 3)) for _ in range(n)])
    pose_b = N.pose(N.random_rotation(rng), [0.0, 0.0, 0.0])
    velocity = -poses_a[:, :3, 3] + rng.normal(size=(n, 3)) * 0.6
    result = time_of_impact(a, tc.Linear(velocity, poses_a), b, tc.Static(pose_b), 1.5)
    outcomes = set()
    for i in range(n):
        def overlaps(t, i=i):
            moved = poses_a[i].copy()
            moved[:3, 3] += t * velocity[i]
            return tc.distance(a, moved, b, pose_b).signed_distance <= 1e-10
        reference = first_contact_by_sampling(overlaps, 1.5, samples=300)
        status = ImpactStatus(int(result.status[i]))
        outcomes.add(status)
        if reference is None:
            # a graze between samples: the cast's contact must be real
            if status != ImpactStatus.MISS:
                moved = poses_a[i].copy()
                moved[:3, 3] += result.time[i] * velocity[i]
                assert abs(tc.distance(a, moved, b, pose_b).signed_distance) <= 1e-8, (name, i)
            continue
        assert status in (ImpactStatus.HIT, ImpactStatus.ALREADY_TOUCHING), (name, i, reference)
        # curved surfaces: GJK's distances near contact are accurate to ~1e-10 relative, so the
        # cast's time to ~1e-7 (polytope pairs in the SAT engine are exact to 1e-9)
        assert abs(result.time[i] - reference) <= 1e-7 * max(1.0, reference), (name, i, result.time[i], reference)
        moved = poses_a[i].copy()
        moved[:3, 3] += result.time[i] * velocity[i]
        # the contact point lies on both shapes at that time
        on_a = tc.closest_point(a, moved, result.point[i]).distance if a.kind != K.POINT else np.linalg.norm(result.point[i] - moved[:3, 3] - moved[:3, :3] @ a.position)
        on_b = tc.closest_point(b, pose_b, result.point[i]).distance
        assert on_a <= 1e-7 and on_b <= 1e-7, (name, i, on_a, on_b)
    assert ImpactStatus.HIT in outcomes and ImpactStatus.MISS in outcomes


def test_single_call_equals_batch_and_motion_forms():
    capsule, box = tc.Capsule(0.3, 1.0), tc.Box([1, 1, 1])
    start = _translation([5.0, 0.2, 0.0])
    single = time_of_impact(capsule, tc.Linear([-2.0, 0.0, 0.0], start), box, None, 10.0)
    # capsule along z with radius 0.3: reaches the face x = 0.5 when its axis is at x = 0.8
    assert single.status == ImpactStatus.HIT
    assert single.time == pytest.approx((5.0 - 0.8) / 2.0, rel=1e-12)
    np.testing.assert_allclose(single.normal, [-1.0, 0.0, 0.0], atol=1e-9)
    assert abs(single.point[0] - 0.5) <= 1e-9
    batch = time_of_impact(capsule, tc.Linear([[-2.0, 0.0, 0.0]] * 3, start), box, tc.Static(), 10.0)
    np.testing.assert_allclose(batch.time, single.time, rtol=0, atol=0)
    miss = time_of_impact(capsule, tc.Linear([2.0, 0.0, 0.0], start), box, None, 10.0)
    assert miss.status == ImpactStatus.MISS and miss.time == np.inf and miss.kind == SetKind.EMPTY
    short = time_of_impact(capsule, tc.Linear([-2.0, 0.0, 0.0], start), box, None, 1.0)
    assert short.status == ImpactStatus.MISS
    touching = time_of_impact(capsule, tc.Linear([1.0, 0.0, 0.0], _translation([0.8, 0, 0])), box, None, 1.0)
    assert touching.status == ImpactStatus.ALREADY_TOUCHING and touching.time == 0.0


def test_bad_motion_input():
    with pytest.raises(tc.GeometryError):
        tc.Linear([np.nan, 0.0, 0.0])
    with pytest.raises(tc.GeometryError):
        tc.Linear([1.0, 0.0])
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Sphere(1), tc.Linear([1.0, 0, 0]), tc.Sphere(1), None, -1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Sphere(1), tc.Linear([1.0, 0, 0]), tc.Sphere(1), None, np.nan)


def test_aligned_boxes_contact_sets_in_a_batch_equal_single_calls_and_the_overlap_box():
    """The 5.5.8 path's contact set (impact._aabb_result): the overlap box of the two boxes at the
    time of contact, flat where it has no extent. A batch builds the sets by array operations
    over rows grouped by their number of free axes, a single call row by row: both must give the
    same corners in the same order, and those corners must be the overlap box's."""
    import itertools

    rng = np.random.default_rng(21)
    n = 400
    half_a, half_b = np.array([0.5, 1.0, 1.5]), np.array([0.25, 0.25, 0.25])
    poses = np.repeat(np.eye(4)[None], n, 0)
    poses[:, :3, 3] = rng.uniform(-4, 4, (n, 3))
    velocity = -poses[:, :3, 3] + rng.normal(size=(n, 3)) * 0.3
    # snapped offsets and velocities touch along faces, edges and corners exactly
    poses[: n // 2, :3, 3] = np.round(poses[: n // 2, :3, 3] * 4) / 4
    velocity[: n // 4] = np.round(velocity[: n // 4])
    velocity[(velocity == 0).all(1)] = [1.0, 0.0, 0.0]
    poses[-20:, :3, 3] = rng.uniform(-0.3, 0.3, (20, 3))  # overlapping at t = 0: a box
    a, b = tc.Box(2 * half_a), tc.Box(2 * half_b)
    batch = time_of_impact(a, tc.Linear(velocity, poses), b, tc.Static(), 5.0)
    assert set(batch.kind[batch.status != ImpactStatus.MISS].tolist()) == {
        SetKind.POINT, SetKind.SEGMENT, SetKind.POLYGON, SetKind.POLYHEDRON}
    for i in range(n):
        one = time_of_impact(a, tc.Linear(velocity[i], poses[i]), b, tc.Static(), 5.0)
        assert one.status == batch.status[i] and one.kind == batch.kind[i] and one.count == batch.count[i]
        np.testing.assert_array_equal(one.points, batch.points[i, :batch.count[i]])
        assert np.isnan(batch.points[i, batch.count[i]:]).all()
        if one.status == ImpactStatus.MISS:
            assert one.count == 0
            continue
        centre_a = poses[i, :3, 3] + one.time * velocity[i]
        lo = np.maximum(centre_a - half_a, -half_b)
        hi = np.minimum(centre_a + half_a, half_b)
        free = [axis for axis in range(3) if hi[axis] - lo[axis] > 1e-9]
        expected = []
        for ends in itertools.product((0, 1), repeat=len(free)):
            corner = 0.5 * (lo + hi)
            for axis, end in zip(free, ends):
                corner[axis] = hi[axis] if end else lo[axis]
            expected.append(corner)
        assert one.count == len(expected)
        key = lambda p: tuple(np.round(p, 9))  # noqa: E731
        assert sorted(map(key, one.points)) == sorted(map(key, expected))
