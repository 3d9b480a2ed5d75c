"""Closed-form moving tests (touche/_kernels/motion/ccd_analytic.py, Ericson 5.5.3-5.5.8, errata of
SEED-NOTES §3) and interval halving (5.5.1) as the fallback of conservative advancement.

References: dense sampling of touche's static distance plus bisection (tests/naive/ccd.py), the
GJK shape cast (an independent dynamic algorithm: conservative advancement on the Minkowski
difference) and hand-computed answers; the errata each get a case the printed code gets wrong.
"""
import numpy as np
import pytest

from naive import ccd as R
import touche as tc
from touche._kernels import ccd_analytic as K
from touche.impact import ImpactStatus, time_of_impact
from touche.motion import Screw

HIT, MISS, TOUCH = int(ImpactStatus.HIT), int(ImpactStatus.MISS), int(ImpactStatus.ALREADY_TOUCHING)
P = tc.Pose.from_translation


# ----------------------------------------------------------------------------------------------
# worked examples and errata
def test_known_answers():
    sphere, box = tc.Sphere(0.5), tc.Box([1.0, 1.0, 1.0])
    r = time_of_impact(sphere, tc.Linear([-4.0, 0, 0], P([3, 0, 0])), sphere, None, 5.0)
    # erratum L10495: the ray distance is 2, the time 2 / |v| = 0.5 (not 2)
    assert r.status == ImpactStatus.HIT and r.time == pytest.approx(0.5, abs=1e-15)
    np.testing.assert_allclose(r.point, [0.5, 0, 0], atol=1e-12)
    np.testing.assert_allclose(r.normal, [-1, 0, 0], atol=1e-12)
    both = time_of_impact(sphere, tc.Linear([-1.0, 0, 0], P([3, 0, 0])), sphere, tc.Linear([1.0, 0, 0]), 5.0)
    assert both.time == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(both.point, [1.5, 0, 0], atol=1e-12)  # centres at 2 and 1 at t = 1
    # sphere vs box (flipped order: the normal flips)
    r = time_of_impact(box, None, sphere, tc.Linear([-1.0, 0, 0], P([3, 0.2, 0])), 5.0)
    assert r.time == pytest.approx(2.0, abs=1e-14)
    np.testing.assert_allclose(r.normal, [1, 0, 0], atol=1e-12)
    # a sphere clipping a box's edge: the rounded edge (capsule), not the grown box E
    r = time_of_impact(sphere, tc.Linear([-1.0, 0, 0], P([3, 0.9, 0])), box, None, 5.0)
    expected = 3 - 0.5 - np.sqrt(0.5 ** 2 - 0.4 ** 2)
    assert r.time == pytest.approx(expected, abs=1e-14)
    np.testing.assert_allclose(r.point, [0.5, 0.5, 0.0], atol=1e-12)
    # corner region: first contact with the vertex sphere
    r = time_of_impact(sphere, tc.Linear([-1.0, 0, 0], P([3, 0.8, 0.8])), box, None, 5.0)
    assert r.time == pytest.approx(3 - 0.5 - np.sqrt(0.25 - 2 * 0.3 ** 2), abs=1e-14)
    # 5.5.3 / 5.5.4: half-space and two-sided plane
    assert time_of_impact(box, tc.Linear([-1.0, 0, 0], P([3, 0, 0])), tc.HalfSpace([1, 0, 0], 0.0), None, 5.0).time == 2.5
    below = time_of_impact(sphere, tc.Linear([1.0, 0, 0], P([-3, 0, 0])), tc.Plane([1, 0, 0], 0.0), None, 5.0)
    assert below.time == 2.5 and below.normal.tolist() == [1.0, 0.0, 0.0]
    assert time_of_impact(sphere, tc.Linear([1.0, 0, 0], P([-3, 0, 0])), tc.HalfSpace([1, 0, 0], 0.0), None, 5.0).status == TOUCH
    r = time_of_impact(tc.Capsule(0.2, 1.0), tc.Linear([0, 0, -2.0], P([0, 0, 3])), tc.Plane([0, 0, 1], 0.0), None, 5.0)
    assert r.time == pytest.approx((3 - 0.7) / 2, abs=1e-15) and r.status == HIT


def test_moving_aabbs_zero_velocity_component():
    """Erratum L10765: B moves along x only but is separated along y: never touches (the
    printed IntersectMovingAABBAABB skips the axis and reports a hit)."""
    a = tc.AABB([0, 0, 0], [1, 1, 1])
    b = tc.AABB([3, 2, 0], [4, 3, 1])
    assert time_of_impact(a, None, b, tc.Linear([-1.0, 0, 0]), 10.0).status == ImpactStatus.MISS
    touching_y = tc.AABB([3, 1, 0], [4, 2, 1])  # touching in y: contact when x meets, t = 2
    r = time_of_impact(a, None, touching_y, tc.Linear([-1.0, 0, 0]), 10.0)
    assert r.status == ImpactStatus.HIT and r.time == 2.0 and r.last_time == 4.0
    np.testing.assert_allclose(r.normal, [1, 0, 0])


@pytest.mark.parametrize("delta, expected", [(0.5, 0.5), (1.0, 1.0), (1.5, None), (0.0, 0.0)])
def test_eberly_moving_squares_closed_form(delta, expected):
    """S0 L250-257 through the 5.5.8 kernel directly: [0,1]^2 static, B = [0,1] x [1+d, 2+d]
    moving with (1, -1): first contact at d, last at 1 (TLast from the x axis)."""
    res = K.aabb_aabb(np.zeros(3), np.ones(3), np.array([0, 1 + delta, 0.0]), np.array([1, 2 + delta, 1.0]),
                      np.array([-1.0, 1.0, 0.0]), np.zeros(3), 10.0)  # A relative to B moves (-1, 1)
    if expected is None:
        assert res[0] == MISS
    else:
        assert res[0] == (TOUCH if expected == 0.0 else HIT) and res[1] == expected and res[2] == 1.0


def test_nettle_shortcut_counterexample():
    """Erratum L10520: a sphere moving parallel to a triangle's plane (its centre 0.3 off the
    plane, radius 0.5) hits the triangle's edge; Nettle's plane-first shortcut has no plane hit
    (n.v = 0) and reports none. The robust method (offset faces + edge capsules) hits it where
    the sphere first reaches the edge: at x = 1 + sqrt(0.5^2 - 0.3^2) = 1.4."""
    tri = tc.Triangle([1, -1, 0], [1, 1, 0], [-1, 0, 0])
    r = time_of_impact(tc.Sphere(0.5), tc.Linear([-1.0, 0, 0], P([3, 0, 0.3])), tri, None, 5.0)
    assert r.status == ImpactStatus.HIT and r.time == pytest.approx(3 - 1.4, abs=1e-14)
    np.testing.assert_allclose(r.point, [1, 0, 0], atol=1e-12)
    poly = tc.ConvexPolygon([[1, -1, 0], [1, 1, 0], [-1, 1, 0], [-1, -1, 0]])
    r = time_of_impact(tc.Sphere(0.5), tc.Linear([-1.0, 0, 0], P([3, 0, 0.3])), poly, None, 5.0)
    assert r.status == ImpactStatus.HIT and r.time == pytest.approx(1.6, abs=1e-14)


# ----------------------------------------------------------------------------------------------
# randomized: against dense sampling and against the GJK shape cast
def _random_case(rng, n, reach=3.0, miss=0.8):
    start = rng.normal(size=(n, 3))
    start *= (rng.uniform(1.2, reach, n) / np.linalg.norm(start, axis=1))[:, None]
    velocity = -start * rng.uniform(0.2, 1.4, (n, 1)) + rng.normal(size=(n, 3)) * miss
    return R.rigid_poses(R.random_rotations(rng, n), start), velocity


SHAPES = {
    "sphere-sphere": (tc.Sphere(0.4), tc.Sphere(0.3)),
    "sphere-triangle": (tc.Sphere(0.3), tc.Triangle([-0.6, -0.4, 0.0], [0.7, -0.2, 0.1], [0.0, 0.8, -0.1])),
    "sphere-polygon": (tc.Sphere(0.3), tc.ConvexPolygon([[0.6, 0, 0], [0.2, 0.55, 0], [-0.5, 0.35, 0], [-0.5, -0.35, 0],
                                                        [0.2, -0.55, 0]])),
    "sphere-box": (tc.Sphere(0.3), tc.Box([0.9, 0.4, 0.7])),
    "box-box (aabb)": (tc.Box([0.5, 0.8, 0.6]), tc.AABB([-0.3, -0.2, -0.5], [0.4, 0.6, 0.2])),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_closed_forms_against_sampling_and_the_gjk_cast(name):
    from touche._kernels.convex.gjk_cast import gjk_shape_cast_many

    a, b = SHAPES[name]
    rng = np.random.default_rng(len(name))
    n, t_max = 5000, 1.5
    poses, velocity = _random_case(rng, n)
    if name.startswith("box"):
        poses[:, :3, :3] = np.eye(3)  # 5.5.8 is for axis-aligned boxes
    pose_b = R.rigid_poses(R.random_rotations(rng, 1), np.zeros((1, 3)))[0] if not name.startswith("box") else np.eye(4)
    result = time_of_impact(a, tc.Linear(velocity, poses), b, tc.Static(pose_b), t_max)

    def separation(t, rows):
        moved = poses[rows].copy()
        moved[:, :3, 3] += np.reshape(t, (-1, 1)) * velocity[rows]
        return np.atleast_1d(tc.distance(a, np.ascontiguousarray(moved), b, pose_b).signed_distance)

    reference = R.first_contact(separation, n, t_max, samples=400)
    R.check_times(result, reference, separation, t_max, label=name)
    # the GJK shape cast (conservative advancement on A - B, tolerance 1e-13) agrees
    status = np.empty(n, np.int8)
    time = np.empty(n)
    gjk_shape_cast_many(*a._packed[:3], poses, velocity, *b._packed[:3], pose_b[None], np.zeros((1, 3)), t_max, 1e-13,
                        status, time, np.empty((n, 3)), np.empty((n, 3)), 0, n)
    np.testing.assert_array_equal(status, result.status)
    hit = result.status == HIT
    np.testing.assert_allclose(result.time[hit], time[hit], rtol=0, atol=1e-9)
    # the contact point lies on both shapes at the contact time
    moved = poses[hit].copy()
    moved[:, :3, 3] += result.time[hit, None] * velocity[hit]
    on_b = tc.closest_point(b, pose_b, result.point[hit]).distance
    assert on_b.max() <= 1e-9
    if a.kind == tc.Sphere(1.0).kind:
        on_a = np.abs(np.linalg.norm(result.point[hit] - moved[:, :3, 3], axis=1) - a.radius)
        assert on_a.max() <= 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["HalfSpace", "Plane"])
def test_convex_against_planes(kind):
    rng = np.random.default_rng(5)
    n, t_max = 4000, 1.5
    shapes = [tc.Sphere(0.3), tc.Box([0.6, 0.2, 0.9]), tc.Capsule(0.2, 0.8), tc.Cylinder(0.3, 0.5), tc.Cone(0.3, 0.6)]
    plane = getattr(tc, kind)([0.2, 0.1, 1.0], -0.4)
    for shape in shapes:
        poses, velocity = _random_case(rng, n, miss=1.0)
        result = time_of_impact(shape, tc.Linear(velocity, poses), plane, tc.Linear([0.0, 0.0, 0.1]), t_max)

        def separation(t, rows, shape=shape):
            moved = poses[rows].copy()
            moved[:, :3, 3] += np.reshape(t, (-1, 1)) * velocity[rows]
            moved[:, :3, 3] -= np.reshape(t, (-1, 1)) * np.array([0.0, 0.0, 0.1])  # the plane's rest frame
            return np.atleast_1d(tc.distance(shape, np.ascontiguousarray(moved), plane, None).signed_distance)

        reference = R.first_contact(separation, n, t_max, samples=300)
        R.check_times(result, reference, separation, t_max, label=f"{type(shape).__name__}-{kind}", band=(0.1, 0.9))


# ----------------------------------------------------------------------------------------------
# 5.5.1 interval halving: the fallback after the advancement's step budget
def test_halving_exclusion_rule():
    assert K.halving_excludes(1.0, 1.0, 1.0, 1.9)  # the cones meet at 0.05 > 0
    assert not K.halving_excludes(1.0, 1.0, 1.0, 2.0)  # they meet at 0: a contact is possible
    assert not K.halving_excludes(0.0, 5.0, 1.0, 1.0)


def test_interval_halving_finishes_what_the_step_budget_left():
    """Conservative advancement with a tiny step budget hands over to interval halving: the
    answer is never after the first contact and within the coarse tolerance of it; MISS cases
    stay misses; and with the full budget the two agree."""
    from touche._kernels import ccd

    rng = np.random.default_rng(3)
    n = 400
    half = np.array([0.6, 5e-4, 0.2])
    box = tc.Box(2 * half)
    pose = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2, 2, (n, 3)))
    v = -pose[:, :3, 3] * rng.uniform(0.2, 1.2, (n, 1)) + rng.normal(size=(n, 3)) * 0.3
    w = rng.normal(size=(n, 3)) * 10
    motion = Screw(v, w, pose, pose[:, :3, 3])
    rows = motion.packed()
    static = tc.Static().packed()
    sphere = tc.Sphere(0.4)
    ball_a = np.array([0.0, 0.0, 0.0, np.linalg.norm(half)])
    ball_b = np.array([0.0, 0.0, 0.0, 0.4])
    full = time_of_impact(box, motion, sphere, None, 1.0)
    eps, coarse = 1e-12, 1e-6
    outcome = np.empty(n, np.int8)
    times = np.empty(n)
    for i in range(n):
        out = np.empty(7)
        code, used = ccd.ca_pair(*box._packed[:3], rows[i], ball_a, *sphere._packed[:3], static[0], ball_b, 1.0, eps,
                                 coarse, 3, out)
        outcome[i], times[i] = code, out[0]
    hit = full.status == HIT
    assert 0.2 <= hit.mean() <= 0.8
    np.testing.assert_array_equal(outcome[~hit], full.status[~hit])
    assert (outcome[hit] == HIT).all()
    assert (times[hit] <= full.time[hit] + 1e-12).all()
    # what halving guarantees: the interval [a, b] it stops at was not excluded, so
    # gap(a) + gap(b) <= speed (b - a) <= coarse: the shapes are within coarse at the reported time
    moved = R.screw_poses(pose[hit], v[hit], w[hit], pose[hit, :3, 3], times[hit])
    gaps = tc.distance(box, np.ascontiguousarray(moved), sphere, None).signed_distance
    assert (gaps <= coarse + 1e-12).all() and (gaps > -1e-12).all()
