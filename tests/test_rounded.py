"""Rounded shapes (touche.Rounded, touche.RoundedBox): a convex core grown by a ball.

References: a rounded hull (point, segment, polytope core) is the hull of its vertices with a
radius, which tests/naive/pairs.py measures exactly (feature enumeration); a rounded cylinder,
cone or ellipsoid is checked through the identity "distance to the rounded shape = distance to
its core - radius" against densely sampled core surfaces, and against coal's swept-sphere radius
(the same Minkowski sum) where coal is installed. Every verb the registry lists for the kind is
exercised; ``intersection`` (polytopes only) refuses it.
"""
import pickle

import numpy as np
import pytest

from naive import pairs as NP
import touche as tc
from naive.toi import first_contact_by_sampling
from touche._kernels import kinds as K

SAME = 1e-6


def _pose(rng, spread=1.5):
    return NP.pose(NP.random_rotation(rng), rng.uniform(-spread, spread, 3))


def _hull_cores(rng):
    return [
        tc.Point(rng.normal(size=3) * 0.1),
        tc.Segment(rng.normal(size=3) * 0.4, rng.normal(size=3) * 0.4),
        tc.Triangle(*(rng.normal(size=(3, 3)) * 0.5)),
        tc.Box(rng.uniform(0.3, 1.2, 3)),
        tc.ConvexPolyhedron(rng.normal(size=(10, 3)) * 0.5),
    ]


# ------------------------------------------------------------------------------------------------
# construction
def test_rounded_box_keeps_its_outer_size_and_packs_a_box_core():
    shape = tc.RoundedBox([1.0, 2.0, 3.0], 0.25, center=[0.1, 0.0, 0.0])
    assert shape.kind == K.ROUNDED and shape.core.kind == K.BOX
    np.testing.assert_allclose(shape.extents, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(shape.core.extents, [0.5, 1.5, 2.5])
    np.testing.assert_allclose(shape.center, [0.1, 0.0, 0.0])
    assert shape.radius == 0.25
    # the outer faces are where the box's would be
    found = tc.distance(shape, np.eye(4), tc.Point([0.1, 0.0, 2.0]), np.eye(4))
    assert found.distance == pytest.approx(0.5, abs=1e-12)


def test_rounding_never_nests_and_spheres_and_capsules_unwrap():
    sphere = tc.Rounded(tc.Sphere(0.5, center=[1.0, 0.0, 0.0]), 0.25)
    assert sphere.core.kind == K.POINT and sphere.radius == 0.75
    capsule = tc.Rounded(tc.Capsule(0.2, 1.0), 0.1)
    assert capsule.core.kind == K.SEGMENT and capsule.radius == pytest.approx(0.3)
    twice = tc.Rounded(tc.Rounded(tc.Box([1.0, 1.0, 1.0]), 0.1), 0.2)
    assert twice.core.kind == K.BOX and twice.radius == pytest.approx(0.3)
    # a rounded sphere is the bigger sphere
    probe = tc.Point([3.0, 0.0, 0.0])
    assert tc.distance(sphere, np.eye(4), probe, np.eye(4)).distance == pytest.approx(1.25, abs=1e-12)


@pytest.mark.parametrize("bad", [
    lambda: tc.Rounded(tc.Plane(), 0.1),
    lambda: tc.Rounded(tc.HalfSpace(), 0.1),
    lambda: tc.Rounded(tc.Ray([0, 0, 0], [1, 0, 0]), 0.1),
    lambda: tc.Rounded(tc.Line([0, 0, 0], [1, 0, 0]), 0.1),
    lambda: tc.Rounded(tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]), 0.1),
    lambda: tc.Rounded(tc.Box([1, 1, 1]), -0.1),
    lambda: tc.Rounded(tc.Box([1, 1, 1]), float("nan")),
    lambda: tc.Rounded(tc.Box([1, 1, 1]), float("inf")),
    lambda: tc.Rounded(tc.Box([1, 1, 1]), 1e80),
    lambda: tc.Rounded(tc.Box([1, 1, 1]), "wide"),
    lambda: tc.Rounded("box", 0.1),
    lambda: tc.RoundedBox([1, 1, 1], 0.5),  # nothing left of the core
    lambda: tc.RoundedBox([1, 1, 1], -0.01),
    lambda: tc.RoundedBox([1, -1, 1], 0.1),
    lambda: tc.RoundedBox([1, 1, np.nan], 0.1),
])
def test_bad_input_raises_geometry_error(bad):
    with pytest.raises(tc.GeometryError):
        bad()


def test_zero_radius_is_the_core_and_pickles_round_trip():
    rng = np.random.default_rng(3)
    box = tc.Box([0.8, 0.6, 0.4])
    plain = tc.Rounded(box, 0.0)
    shape = tc.RoundedBox([1.0, 0.7, 0.5], 0.1)
    other = tc.Ellipsoid([0.3, 0.4, 0.2])
    for _ in range(10):
        pa, pb = _pose(rng, 0.2), _pose(rng)
        assert tc.signed_distance(plain, pa, other, pb) == pytest.approx(tc.signed_distance(box, pa, other, pb),
                                                                         abs=1e-9)
    copy = pickle.loads(pickle.dumps(shape))
    assert type(copy) is tc.RoundedBox and copy.radius == shape.radius
    np.testing.assert_array_equal(copy.params, shape.params)
    np.testing.assert_array_equal(copy.extents, shape.extents)
    copy = pickle.loads(pickle.dumps(tc.Rounded(other, 0.2)))
    assert type(copy) is tc.Rounded and copy.core.kind == K.ELLIPSOID and copy.scale == pytest.approx(other.scale + 0.2)


# ------------------------------------------------------------------------------------------------
# distances against the exact references
@pytest.mark.parametrize("seed", range(6))
def test_rounded_hulls_match_the_naive_reference(seed):
    rng = np.random.default_rng(100 + seed)
    cores_a, cores_b = _hull_cores(rng), _hull_cores(rng)
    for core_a in cores_a:
        for core_b in cores_b:
            a = tc.Rounded(core_a, float(rng.uniform(0.02, 0.3)))
            b = tc.Rounded(core_b, float(rng.uniform(0.02, 0.3))) if rng.uniform() < 0.7 else core_b
            for _ in range(3):
                pa, pb = _pose(rng, 0.3), _pose(rng, 1.2)
                expected = NP.ref_signed(NP.world(a, pa), NP.world(b, pb))
                found = tc.distance(a, pa, b, pb)
                if found.status in (tc.Status.MAX_ITERATIONS, tc.Status.DEGENERATE):
                    continue
                # penetration depth too: the Minkowski sum with a ball adds the radii exactly
                assert found.signed_distance == pytest.approx(expected, abs=SAME), (a, b)
                assert tc.intersects(a, pa, b, pb) == (expected <= 1e-9) or abs(expected) < 1e-7
                if expected > 1e-7:
                    assert NP.ref_point_distance(NP.world(a, pa), found.point_a) <= SAME
                    assert NP.ref_point_distance(NP.world(b, pb), found.point_b) <= SAME


def _sampled_surface(core, count=60):
    """Points densely covering the surface of a cylinder, cone or ellipsoid (local frame)."""
    u, v = np.meshgrid(np.linspace(0.0, 2.0 * np.pi, count, endpoint=False), np.linspace(0.0, 1.0, count))
    u, v = u.ravel(), v.ravel()
    if core.kind == K.ELLIPSOID:
        theta = np.pi * v
        unit = np.column_stack([np.sin(theta) * np.cos(u), np.sin(theta) * np.sin(u), np.cos(theta)])
        return core.center + unit * core.radii
    half = 0.5 * core.length
    ring = np.column_stack([np.cos(u), np.sin(u), np.zeros_like(u)])
    if core.kind == K.CYLINDER:
        side = ring * core.radius + np.column_stack([0 * u, 0 * u, -half + 2.0 * half * v])
        caps = ring * (core.radius * v[:, None]) + np.column_stack([0 * u, 0 * u, np.where(v < 0.5, -half, half)])
        return np.concatenate([side, caps])
    # cone: apex at +z, base disc at -z
    side = ring * (core.radius * v[:, None]) + np.column_stack([0 * u, 0 * u, half - 2.0 * half * v])
    base = ring * (core.radius * v[:, None]) + np.column_stack([0 * u, 0 * u, -half + 0 * u])
    return np.concatenate([side, base])


@pytest.mark.parametrize("core", [tc.Cylinder(0.4, 1.0), tc.Cone(0.5, 1.2), tc.Ellipsoid([0.5, 0.3, 0.2])])
def test_rounded_smooth_cores_against_sampled_surfaces(core):
    """Far from the shape, its distance to a point is the core's minus the radius; the sampled
    core surface bounds the core's distance from above (to within the sampling step)."""
    rng = np.random.default_rng(7)
    radius = 0.15
    shape = tc.Rounded(core, radius)
    surface = _sampled_surface(core)
    step = 0.06  # spacing of the samples (bounds the sampling error)
    pose = _pose(rng, 0.2)
    queries = rng.normal(size=(40, 3)) * 2.0
    found = tc.closest_point(shape, pose, queries)
    world_surface = surface @ pose[:3, :3].T + pose[:3, 3]
    sampled = np.linalg.norm(queries[:, None, :] - world_surface[None], axis=2).min(axis=1) - radius
    outside = sampled > step
    assert outside.sum() > 20
    assert np.all(found.distance[outside] <= sampled[outside] + 1e-9)
    assert np.all(found.distance[outside] >= sampled[outside] - step)
    # and exactly the core's distance minus the radius (the core's own closest point is tested
    # against the references in test_dispatch)
    core_found = tc.closest_point(core, pose, queries)
    np.testing.assert_allclose(found.distance[outside], core_found.distance[outside] - radius, atol=1e-7)


try:
    import coal  # noqa: F811
    from coal_adapter import transform as _coal_transform
except ImportError:  # pragma: no cover
    coal = None


def _coal_pair(core, radius):
    if core.kind == K.BOX:
        geometry = coal.Box(*core.extents)
    elif core.kind == K.CYLINDER:
        geometry = coal.Cylinder(core.radius, core.length)
    elif core.kind == K.CONE:
        geometry = coal.Cone(core.radius, core.length)
    elif core.kind == K.ELLIPSOID:
        geometry = coal.Ellipsoid(*core.radii)
    else:
        raise ValueError(core)
    geometry.setSweptSphereRadius(radius)
    return geometry


@pytest.mark.skipif(coal is None, reason="coal not installed")
@pytest.mark.parametrize("core_a, core_b", [
    (tc.Box([1.0, 0.6, 0.8]), tc.Box([0.5, 0.9, 0.4])),
    (tc.Box([1.0, 0.6, 0.8]), tc.Cylinder(0.3, 0.8)),
    (tc.Cylinder(0.4, 0.7), tc.Ellipsoid([0.3, 0.5, 0.4])),
    (tc.Cone(0.4, 0.9), tc.Box([0.6, 0.6, 0.6])),
])
def test_rounded_pairs_match_coal_swept_sphere_radius(core_a, core_b):
    rng = np.random.default_rng(11)
    ra, rb = 0.1, 0.2
    a, b = tc.Rounded(core_a, ra), tc.Rounded(core_b, rb)
    ga, gb = _coal_pair(core_a, ra), _coal_pair(core_b, rb)
    compared = 0
    for _ in range(30):
        pa, pb = _pose(rng, 0.2), _pose(rng, 1.6)
        found = tc.distance(a, pa, b, pb)
        if found.signed_distance <= 0.02:  # coal's penetration with swept spheres is not exact
            continue
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        request.gjk_tolerance = 1e-10
        expected = coal.distance(ga, _coal_transform(pa), gb, _coal_transform(pb), request, result)
        assert found.signed_distance == pytest.approx(expected, abs=1e-5)
        compared += 1
    assert compared >= 10


# ------------------------------------------------------------------------------------------------
# the other verbs
def _first_entry(shape, pose, origin, direction):
    """Reference entry of the ray into a rounded hull: the distance along the ray is convex, so a
    ternary search finds its minimum and a bisection the first zero before it."""
    world = NP.world(shape, pose)

    def gap(t):
        return NP.ref_point_distance(world, origin + t * direction)

    low, high = 0.0, 10.0
    for _ in range(200):
        m1, m2 = low + (high - low) / 3.0, high - (high - low) / 3.0
        if gap(m1) <= gap(m2):
            high = m2
        else:
            low = m1
    # the search ends at the near edge of the chord, where rounding leaves gaps of ~1e-16
    touching = 1e-12
    if gap(high) > touching:
        return None
    a, b = 0.0, high
    if gap(a) <= touching:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (a + b)
        if gap(mid) > touching:
            a = mid
        else:
            b = mid
    return b


def test_raycast_hits_where_the_reference_surface_is():
    rng = np.random.default_rng(5)
    shape = tc.RoundedBox([1.0, 0.8, 0.6], 0.2)
    pose = _pose(rng, 0.3)
    origins = rng.normal(size=(40, 3)) * 0.3 + rng.choice([-3.0, 3.0], size=(40, 3))
    targets = rng.normal(size=(40, 3)) * 0.4 + pose[:3, 3]
    directions = targets - origins
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    found = tc.raycast(shape, pose, origins, directions)
    hits = 0
    for i in range(40):
        expected = _first_entry(shape, pose, origins[i], directions[i])
        if expected is None:
            assert not found.hit[i]
            continue
        hits += 1
        assert found.hit[i] and found.t[i] == pytest.approx(expected, abs=1e-7)
        # the normal is the outward surface normal there: towards the point from the core
        point = origins[i] + found.t[i] * directions[i]
        core_point = tc.closest_point(shape.core, pose, point[None]).point[0]
        outward = (point - core_point) / np.linalg.norm(point - core_point)
        np.testing.assert_allclose(found.normal[i], outward, atol=1e-6)
    assert hits > 10
    # from inside: t = 0 when solid, else where the ray leaves (the box face at 0.5 + rounding)
    inside = tc.raycast(shape, np.eye(4), [[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]])
    assert inside.hit[0] and inside.t[0] == 0.0
    leaving = tc.raycast(shape, np.eye(4), [[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], solid=False)
    assert leaving.hit[0] and leaving.t[0] == pytest.approx(0.5, abs=1e-9)
    np.testing.assert_allclose(leaving.normal[0], [1.0, 0.0, 0.0], atol=1e-9)
    short = tc.raycast(shape, np.eye(4), [[-3.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], max_t=2.0)
    assert not short.hit[0]


def test_contacts_of_a_resting_rounded_box_are_its_four_corners():
    shape = tc.RoundedBox([1.0, 1.0, 1.0], 0.1)
    floor = tc.HalfSpace([0.0, 0.0, 1.0], 0.0)
    pose = np.eye(4)
    pose[2, 3] = 0.5 - 0.02  # sunk 0.02 into the floor
    manifold = tc.contacts(shape, pose, floor, np.eye(4))
    assert manifold.count == 4
    np.testing.assert_allclose(manifold.depths, 0.02, atol=1e-12)
    np.testing.assert_allclose(np.abs(manifold.normal), [0.0, 0.0, 1.0], atol=1e-12)
    # the flat part of the face: the core's face, inside the rounded edges
    np.testing.assert_allclose(np.sort(np.abs(manifold.points[:, :2]).ravel()), 0.4, atol=1e-12)
    # two rounded boxes face to face: one normal, four points, the depth of the overlap
    other = tc.RoundedBox([0.6, 0.6, 0.6], 0.05)
    above = np.eye(4)
    above[2, 3] = 0.5 + 0.3 - 0.01
    manifold = tc.contacts(shape, np.eye(4), other, above)
    assert manifold.count == 4
    np.testing.assert_allclose(manifold.depths, 0.01, atol=1e-12)


def test_time_of_impact_matches_sampling_for_every_motion_family():
    rng = np.random.default_rng(9)
    a = tc.RoundedBox([0.6, 0.4, 0.5], 0.1)
    b = tc.Rounded(tc.Cylinder(0.3, 0.8), 0.05)
    outcomes = []
    for _ in range(6):
        start, goal = _pose(rng, 0.1), _pose(rng, 0.1)
        start[:3, 3] = [-3.0, rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3)]
        velocity = np.array([3.0, 0.0, 0.0])
        linear = tc.Linear(velocity, start)

        def overlaps(t, start=start):
            moved = start.copy()
            moved[:3, 3] += velocity * t
            return tc.signed_distance(a, moved, b, goal) <= 0.0

        expected = first_contact_by_sampling(overlaps, 2.0, samples=400)
        found = tc.time_of_impact(a, linear, b, tc.Static(goal), 2.0)
        outcomes.append(expected is not None)
        if expected is None:
            assert found.status == tc.ImpactStatus.MISS
        else:
            assert found.status == tc.ImpactStatus.HIT and found.time == pytest.approx(expected, abs=1e-6)
        # a turning motion (Screw: rigid advancement), and the same as a callable motion
        screw = tc.Screw(velocity, angular_velocity=rng.normal(size=3), pose=start)

        def overlaps_turning(t, screw=screw):
            return tc.signed_distance(a, screw.pose_at(t), b, goal) <= 0.0

        expected = first_contact_by_sampling(overlaps_turning, 2.0, samples=800)
        callable_motion = tc.CallableMotion(screw.pose_at, linear_speed=float(np.linalg.norm(velocity)) + 2.0
                                            * np.linalg.norm(screw.angular_velocity), angular_speed=float(
                                                np.linalg.norm(screw.angular_velocity)))
        for motion in (screw, callable_motion):
            found = tc.time_of_impact(a, motion, b, tc.Static(goal), 2.0)
            if expected is None:
                assert found.status == tc.ImpactStatus.MISS
            else:
                assert found.status == tc.ImpactStatus.HIT and found.time == pytest.approx(expected, abs=1e-5)
            outcomes.append(expected is not None)
    assert sum(outcomes) >= 4  # hits checked against the sampling, not only misses
    far = np.eye(4)
    far[1, 3] = 3.0  # passes beside b
    for motion in (tc.Linear([3.0, 0.0, 0.0], far), tc.Screw([3.0, 0.0, 0.0], [0.0, 0.0, 1.0], pose=far)):
        assert tc.time_of_impact(a, motion, b, tc.Static(np.eye(4)), 2.0).status == tc.ImpactStatus.MISS


def test_a_rounded_shape_against_a_mesh_matches_the_reference():
    rng = np.random.default_rng(13)
    vertices = rng.normal(size=(30, 3))
    faces = rng.integers(0, 30, size=(40, 3))
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])]
    mesh = tc.TriangleMesh(vertices, faces)
    shape = tc.RoundedBox([0.5, 0.4, 0.3], 0.08)
    separated = 0
    for _ in range(8):
        pa, pb = _pose(rng, 2.5), _pose(rng, 0.1)
        expected = NP.ref_signed(NP.world(shape, pa), NP.world(mesh, pb))
        found = tc.distance(shape, pa, mesh, pb)
        if expected > 1e-7:
            assert found.distance == pytest.approx(expected, abs=SAME)
            separated += 1
        assert tc.intersects(shape, pa, mesh, pb) == (expected <= 0.0) or abs(expected) < 1e-7
    assert 0 < separated < 8


def test_world_boxes_hold_the_rounded_shapes_and_the_pairs_match_brute_force():
    rng = np.random.default_rng(17)
    shapes = [tc.RoundedBox(rng.uniform(0.3, 0.8, 3), 0.05), tc.Rounded(tc.Ellipsoid([0.3, 0.2, 0.25]), 0.1),
              tc.Rounded(tc.Cone(0.2, 0.5), 0.05), tc.Rounded(tc.Segment([0, 0, -0.3], [0, 0, 0.3]), 0.1),
              tc.Sphere(0.3)]
    world = tc.CollisionWorld()
    placed = []
    for i in range(20):
        shape = shapes[i % len(shapes)]
        pose = _pose(rng, 1.2)
        handle = world.add(shape, pose=pose)
        placed.append((handle, shape, pose))
    expected = set()
    for i in range(len(placed)):
        for j in range(i + 1, len(placed)):
            (ha, a, pa), (hb, b, pb) = placed[i], placed[j]
            if tc.intersects(a, pa, b, pb):
                expected.add((min(ha, hb), max(ha, hb)))
    found = {(int(p[0]), int(p[1])) for p in world.pairs()}
    assert found == expected
    assert expected  # the scene is dense enough to have contacts


def test_intersection_sets_refuse_rounded_shapes():
    with pytest.raises(tc.UnsupportedQuery):
        tc.intersection(tc.RoundedBox([1, 1, 1], 0.1), np.eye(4), tc.Box([1, 1, 1]), np.eye(4))


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_huge_and_tiny_scales_keep_relative_accuracy(scale):
    rng = np.random.default_rng(19)
    a = tc.RoundedBox(np.array([1.0, 0.7, 0.5]) * scale, 0.1 * scale)
    b = tc.Rounded(tc.Box(np.array([0.4, 0.6, 0.5]) * scale), 0.2 * scale)
    unit_a = tc.RoundedBox([1.0, 0.7, 0.5], 0.1)
    unit_b = tc.Rounded(tc.Box([0.4, 0.6, 0.5]), 0.2)
    for _ in range(10):
        pa, pb = _pose(rng, 0.3), _pose(rng, 1.5)
        big_a, big_b = pa.copy(), pb.copy()
        big_a[:3, 3] *= scale
        big_b[:3, 3] *= scale
        unit = tc.signed_distance(unit_a, pa, unit_b, pb)
        assert tc.signed_distance(a, big_a, b, big_b) == pytest.approx(unit * scale, abs=1e-9 * scale)
