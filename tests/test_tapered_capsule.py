"""TaperedCapsule: the convex hull of two balls, added through the kernel layer's short path (a
kind code, a shape class and a support mapping: no other source file).

Reference: the hull of two balls is the union of the balls (c(t), r(t)) interpolated linearly for
t in [0, 1], so its distance to a convex set X is min_t dist(c(t), X) - r(t), a convex function of
t (a ternary search over exact point-to-hull distances, tests/naive/pairs.py). The registry-wide
checks (every verb, mirrored pairs, closest points) run in tests/test_dispatch.py.
"""
import pickle

import numpy as np
import pytest

from naive import pairs as NP
import touche as tc

SAME = 1e-6


def _pose(rng, spread=1.5):
    return NP.pose(NP.random_rotation(rng), rng.uniform(-spread, spread, 3))


def _reference_distance(tapered, pose_t, other, pose_o):
    """Distance between a tapered capsule and a convex shape with a naive description (>= 0)."""
    ends = np.array([tapered.a, tapered.b]) @ pose_t[:3, :3].T + pose_t[:3, 3]
    radii = np.array([tapered.radius_a, tapered.radius_b])
    world = NP.world(other, pose_o)

    def gap(t):
        center = ends[0] + t * (ends[1] - ends[0])
        return NP.ref_point_distance(world, center) - (radii[0] + t * (radii[1] - radii[0]))

    return NP.minimum_over_unit_interval(gap)


def _others(rng):
    return [tc.Box(rng.uniform(0.3, 1.0, 3)), tc.ConvexPolyhedron(rng.normal(size=(9, 3)) * 0.4),
            tc.Segment(rng.normal(size=3) * 0.4, rng.normal(size=3) * 0.4), tc.Triangle(*(rng.normal(size=(3, 3)) * 0.5)),
            tc.RoundedBox(rng.uniform(0.4, 1.0, 3), 0.1),
            tc.TaperedCapsule(float(rng.uniform(0.1, 0.4)), float(rng.uniform(0.1, 0.4)), float(rng.uniform(0.2, 1.0)))]


@pytest.mark.parametrize("seed", range(4))
def test_distances_match_the_union_of_balls_reference(seed):
    rng = np.random.default_rng(40 + seed)
    shape = tc.TaperedCapsule(float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.05, 0.4)), float(rng.uniform(0.3, 1.2)))
    compared = 0
    for other in _others(rng):
        for _ in range(4):
            pa, pb = _pose(rng, 0.2), _pose(rng, 1.8)
            found = tc.distance(shape, pa, other, pb)
            assert found.status not in (tc.Status.MAX_ITERATIONS, tc.Status.DEGENERATE)
            if isinstance(other, tc.TaperedCapsule):  # the other side by the same identity
                ends = np.array([other.a, other.b]) @ pb[:3, :3].T + pb[:3, 3]
                world = NP.world(shape, pa)

                def gap(t, ends=ends, other=other, world=world):
                    center = ends[0] + t * (ends[1] - ends[0])
                    radius = other.radius_a + t * (other.radius_b - other.radius_a)
                    return max(NP.tapered_point_signed(world, center), 0.0) - radius

                expected = NP.minimum_over_unit_interval(gap)
            else:
                expected = _reference_distance(shape, pa, other, pb)
            if expected > 1e-6:
                assert found.distance == pytest.approx(expected, abs=SAME)
                assert tc.closest_point(shape, pa, found.point_a[None]).distance[0] <= SAME
                compared += 1
            elif expected < -1e-6:
                assert tc.intersects(shape, pa, other, pb) and found.status == tc.Status.PENETRATING
    assert compared >= 8


def test_equal_radii_make_a_capsule_and_a_ball_holding_the_other_makes_that_ball():
    rng = np.random.default_rng(2)
    tapered = tc.TaperedCapsule(0.3, 0.3, 0.8)
    capsule = tc.Capsule(0.3, 0.8)
    swallowed = tc.TaperedCapsule(0.6, 0.1, 0.3)  # the small ball lies inside the big one
    ball = tc.Sphere(0.6, center=[0.0, 0.0, -0.15])
    box = tc.Box([0.5, 0.4, 0.3])
    for _ in range(20):
        pa, pb = _pose(rng, 0.3), _pose(rng, 1.5)
        assert tc.signed_distance(tapered, pa, box, pb) == pytest.approx(tc.signed_distance(capsule, pa, box, pb),
                                                                         abs=1e-9)
        assert tc.signed_distance(swallowed, pa, box, pb) == pytest.approx(tc.signed_distance(ball, pa, box, pb),
                                                                           abs=1e-9)


def test_raycast_enters_where_the_reference_surface_is():
    rng = np.random.default_rng(8)
    shape = tc.TaperedCapsule.from_points([0.1, -0.3, 0.0], [0.0, 0.4, 0.2], 0.35, 0.15)
    pose = _pose(rng, 0.2)
    world = NP.world(shape, pose)
    origins = rng.normal(size=(30, 3)) + rng.choice([-3.0, 3.0], size=(30, 3))
    directions = pose[:3, 3] + rng.normal(size=(30, 3)) * 0.15 - origins
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    found = tc.raycast(shape, pose, origins, directions)
    hits = 0
    for i in range(30):
        if not found.hit[i]:
            # a miss: the line passes outside (its nearest approach is outside the shape)
            along = np.linspace(0.0, 8.0, 4001)
            assert min(NP.ref_point_distance(world, origins[i] + t * directions[i]) for t in along[::40]) > 0.0
            continue
        hits += 1
        point = origins[i] + found.t[i] * directions[i]
        assert abs(NP.tapered_point_signed(world, point)) <= 1e-9
        before = origins[i] + (found.t[i] - 1e-6) * directions[i]
        assert NP.tapered_point_signed(world, before) > 0.0
    assert hits >= 15


@pytest.mark.parametrize("bad", [
    lambda: tc.TaperedCapsule(-0.1, 0.2, 1.0),
    lambda: tc.TaperedCapsule(0.1, 0.0, 1.0),
    lambda: tc.TaperedCapsule(0.1, 0.2, -1.0),
    lambda: tc.TaperedCapsule(0.1, float("nan"), 1.0),
    lambda: tc.TaperedCapsule(0.1, 0.2, float("inf")),
    lambda: tc.TaperedCapsule.from_points([0, 0, 0], [1, np.nan, 0], 0.1, 0.2),
])
def test_bad_input_raises_geometry_error(bad):
    with pytest.raises(tc.GeometryError):
        bad()


def test_pickles_grows_and_fits_its_world_box():
    shape = tc.TaperedCapsule(0.3, 0.1, 1.0)
    copy = pickle.loads(pickle.dumps(shape))
    np.testing.assert_array_equal(copy.params, shape.params)
    low, high = shape.local_box()
    np.testing.assert_allclose(low, [-0.3, -0.3, -0.8])
    np.testing.assert_allclose(high, [0.3, 0.3, 0.6])
    assert shape.scale == pytest.approx(0.8)
    grown = tc.Rounded(shape, 0.1)  # Rounded takes the new core with no change of its own
    assert tc.distance(grown, None, tc.Point([1.0, 0.0, -0.5]), None).distance == pytest.approx(0.6, abs=1e-12)
    rng = np.random.default_rng(4)
    world = tc.CollisionWorld()
    placed = [(world.add(shape, pose=pose), pose) for pose in (_pose(rng, 0.9) for _ in range(16))]
    expected = {(ha, hb) for i, (ha, pa) in enumerate(placed) for hb, pb in placed[i + 1:]
                if tc.intersects(shape, pa, shape, pb)}
    assert {(int(a), int(b)) for a, b in world.pairs()} == expected and expected
