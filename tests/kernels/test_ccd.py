"""Continuous collision detection (issue 6): touche.time_of_impact under rotating, keyframed,
integrated, quadratic-matrix and callable motions.

The claim under test: never MISS when the shapes touch somewhere in [0, t_max], never report a
time after the first contact, and the time within the tolerance (1e-9 of t_max) of the first
contact. Reference: tests/naive/ccd.py (independent motion formulas, numpy separating-axis /
clamping static tests, dense sampling plus bisection), on >= 10,000 seeded random cases per
kernel motion type, including 1e-3 thick plates spinning at up to 20 turns per time unit and
grazing contacts built to happen at a known time.

How the comparison reads (``_check``):
- reference HIT -> the kernel must HIT (or be ALREADY_TOUCHING when the reference says t = 0);
- kernel time <= reference time + 1e-9 t_max (never late);
- kernel time >= reference time - 1e-9 t_max (accurate), except where the reference's samples
  stepped over an earlier, brief contact (a corner of a spinning plate clipping the box between
  two samples): then the static separation at the kernel's time must be <= 1e-10 (a real contact);
- reference MISS but kernel HIT -> the same check (a contact between the reference's samples).
"""
import numpy as np
import pytest

from naive import ccd as R
import touche as tc
from touche.impact import ImpactStatus, time_of_impact
from touche.motion import CallableMotion, Integrated, Keyframes, QuadraticMatrix, Screw

TOL = 1e-9
GAP = 1e-10  # a kernel contact the reference's samples missed must be a contact to this distance
HIT, MISS, TOUCH = int(ImpactStatus.HIT), int(ImpactStatus.MISS), int(ImpactStatus.ALREADY_TOUCHING)


def _check(result, reference, separation_at, t_max, **options):
    return R.check_times(result, reference, separation_at, t_max, **options)


# ----------------------------------------------------------------------------------------------
# worked examples
def test_box_under_quadratic_motion_touches_at_two():
    """S4 worked example: a unit box whose centre moves as (5 - t^2, 0, 0) first touches a unit box
    at the origin at t = 2 (centre distance 1 = the sum of half sides)."""
    m0 = np.eye(4)
    m0[0, 3] = 5.0
    m2 = np.zeros((4, 4))
    m2[0, 3] = -1.0
    result = time_of_impact(tc.Box([1, 1, 1]), QuadraticMatrix(m0, np.zeros((4, 4)), m2), tc.Box([1, 1, 1]), None, 5.0)
    assert result.status == ImpactStatus.HIT
    assert abs(result.time - 2.0) <= 1e-12
    np.testing.assert_allclose(result.normal, [-1, 0, 0], atol=1e-12)
    assert abs(result.point[0] - 0.5) < 1e-12
    # t_max before the contact: a miss; a batch of two in one call
    assert time_of_impact(tc.Box([1, 1, 1]), QuadraticMatrix(m0, None, m2), tc.Box([1, 1, 1]), None, 1.99).status == ImpactStatus.MISS
    batch = np.stack([np.stack([m0, np.zeros((4, 4)), m2])] * 2)
    batch[1, 0, 0, 3] = 10.0  # starts at x = 10: contact when 10 - t^2 = 1, t = 3
    result = time_of_impact(tc.Box([1, 1, 1]), QuadraticMatrix(batch), tc.Box([1, 1, 1]), None, 5.0)
    np.testing.assert_allclose(result.time, [2.0, 3.0], atol=1e-12)


@pytest.mark.parametrize("delta, expected", [(0.5, 0.5), (1.0, 1.0), (1.5, None)])
def test_eberly_moving_squares(delta, expected):
    """S0 L250-257: A = [0,1]^2 static, B = [0,1] x [1+delta, 2+delta] moving with W = (1, -1):
    first contact at t = delta iff delta <= 1 (vertex-vertex at delta = 1). As boxes (z in [0, 1]),
    under Linear (moving SAT), Screw with w = 0 (conservative advancement) and QuadraticMatrix."""
    a = tc.AABB([0, 0, 0], [1, 1, 1])
    b = tc.AABB([0, 1 + delta, 0], [1, 2 + delta, 1])
    motions = [tc.Linear([1, -1, 0]), Screw([1, -1, 0]), QuadraticMatrix.from_motion(tc.Linear([1, -1, 0]))]
    for motion in motions:
        result = time_of_impact(a, None, b, motion, 10.0)
        if expected is None:
            assert result.status == ImpactStatus.MISS, motion
        else:
            assert result.status == ImpactStatus.HIT, motion
            assert abs(result.time - expected) <= 1e-9, (motion, result.time)


# ----------------------------------------------------------------------------------------------
# rotating motions: screw (constant v, w about a point)
def _plate_cases(rng, n):
    """Thin plates (1e-3 thick) and slabs spinning at up to 20 turns per time unit about random
    axes through random points, drifting past a static box."""
    half_a = np.column_stack([rng.uniform(0.3, 1.0, n), np.full(n, 5e-4), rng.uniform(0.05, 0.5, n)])
    thick = rng.random(n) < 0.3
    half_a[thick, 1] = rng.uniform(0.05, 0.3, thick.sum())
    pose_a = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2.5, 2.5, (n, 3)))
    w = rng.normal(size=(n, 3))
    w *= (2 * np.pi * rng.uniform(0.0, 20.0, n) / np.linalg.norm(w, axis=1))[:, None]
    v = -pose_a[:, :3, 3] * rng.uniform(0.2, 1.2, (n, 1)) + rng.normal(size=(n, 3)) * 0.5
    center = pose_a[:, :3, 3] + rng.normal(size=(n, 3)) * 0.3
    return half_a, pose_a, v, w, center


class _Batch:
    """status / time of several batch calls stitched together."""

    def __init__(self, n):
        self.status = np.empty(n, dtype=np.int8)
        self.time = np.empty(n)


def _ball_cull(centre_a, radius_a, centre_b, radius_b):
    """Bounding-sphere lower bound of the separation (for the reference's sampling only)."""
    return np.linalg.norm(centre_b - centre_a, axis=1) - radius_a - radius_b


@pytest.mark.slow
def test_screw_thin_fast_spinning_plates_never_tunnel():
    rng = np.random.default_rng(20261122)
    n, t_max = 10_000, 1.0
    _, pose_a, v, w, center = _plate_cases(rng, n)
    half_b = np.array([0.4, 0.3, 0.5])
    # a few plate shapes (one batch call each): 1e-3 thick plates and a slab
    shapes = [np.array([0.8, 5e-4, 0.3]), np.array([0.5, 5e-4, 0.1]), np.array([0.6, 0.2, 0.25])]
    group = rng.integers(0, len(shapes), n)
    half_a = np.array(shapes)[group]
    result = _Batch(n)
    for g, half in enumerate(shapes):
        rows = group == g
        r = time_of_impact(tc.Box(2 * half), Screw(v[rows], w[rows], pose_a[rows], center[rows]),
                           tc.Box(2 * half_b), None, t_max)
        result.status[rows], result.time[rows] = r.status, r.time
    eye = np.eye(4)[None]

    def placed(t, rows):
        return R.screw_poses(pose_a[rows], v[rows], w[rows], center[rows], t)

    def separation(t, rows):
        pa = placed(t, rows)
        ea = np.swapaxes(pa[:, :3, :3], 1, 2) * half_a[rows][:, :, None]
        cb, eb = R.parallelepiped(np.repeat(eye, len(rows), 0), np.zeros(3), half_b)
        return R.box_box_separation(pa[:, :3, 3], ea, cb, eb)

    def cull(t, rows):
        return _ball_cull(placed(t, rows)[:, :3, 3], np.linalg.norm(half_a[rows], axis=1), 0.0, np.linalg.norm(half_b))

    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    _check(result, reference, separation, t_max, label="screw plates")


@pytest.mark.slow
def test_screw_sphere_vs_spinning_box_and_halfspace():
    rng = np.random.default_rng(7)
    n, t_max = 10_000, 1.0
    half = np.array([0.7, 5e-4, 0.2])
    pose_a = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2, 2, (n, 3)))
    w = rng.normal(size=(n, 3)) * 40.0
    v = -pose_a[:, :3, 3] * rng.uniform(0.1, 1.0, (n, 1)) + rng.normal(size=(n, 3)) * 0.3
    center = pose_a[:, :3, 3]
    result = time_of_impact(tc.Box(2 * half), Screw(v, w, pose_a, center), tc.Sphere(0.3), None, t_max)

    def placed(t, rows):
        return R.screw_poses(pose_a[rows], v[rows], w[rows], center[rows], t)

    def separation(t, rows):
        pa = placed(t, rows)
        return R.sphere_box_separation(np.zeros((len(rows), 3)), 0.3, pa[:, :3, 3], pa[:, :3, :3], half)

    def cull(t, rows):
        return _ball_cull(placed(t, rows)[:, :3, 3], np.linalg.norm(half), 0.0, 0.3)

    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    _check(result, reference, separation, t_max, label="screw box-sphere")
    # 4,000 of the same plates against the half-space z <= -1.2 (the plane stays put)
    n = 4000
    pose_a, v, w, center = pose_a[:n], v[:n], w[:n], center[:n]
    result = time_of_impact(tc.Box(2 * half), Screw(v, w, pose_a, center), tc.HalfSpace([0, 0, 1], -1.2), None, t_max)

    def plane_gap(t, rows):
        pa = placed(t, rows)
        return R.box_halfspace_separation(pa[:, :3, 3], np.swapaxes(pa[:, :3, :3], 1, 2) * half[:, None],
                                          np.array([0.0, 0, 1]), -1.2)

    reference = R.first_contact(plane_gap, n, t_max, samples=2000)
    _check(result, reference, plane_gap, t_max, label="screw box-halfspace")
    # the normal of a half-space contact points from the box into the half-space
    hit = np.asarray(result.status) == HIT
    np.testing.assert_allclose(result.normal[hit], np.tile([0, 0, -1.0], (hit.sum(), 1)), atol=1e-12)


def test_grazing_contacts_at_known_times():
    """Double-root contacts: a spinning box whose corner just reaches a half-space, and a sphere
    on a circular orbit tangent to another sphere. Contact at a known instant only. The gap
    near such a contact is quadratic in time, so a touching tolerance eps fixes the time only
    to ~sqrt(eps): the kernel must HIT, never late, within 1e-4 of the instant."""
    # box half (1, 0.5, 0.2) spinning about z at omega; its farthest x reaches |(1, 0.5)| = R when
    # the corner diagonal points along +x: angle atan2(0.5, 1) from start -> contact at t = angle / omega
    omega = 2 * np.pi * 5
    reach = np.hypot(1.0, 0.5)
    result = time_of_impact(tc.Box([2, 1, 0.4]), Screw([0, 0, 0], [0, 0, -omega]), tc.HalfSpace([-1, 0, 0], -reach), None, 1.0)
    expected = np.arctan2(0.5, 1.0) / omega
    assert result.status == ImpactStatus.HIT
    assert result.time <= expected + 1e-12 and expected - result.time < 1e-4, (result.time, expected)
    # orbit: sphere (r 0.2) at distance 1 from the z axis, rotating; a static sphere (r 0.3) at
    # distance 1.5 from the axis at angle pi/3 touches it exactly at angle pi/3
    result = time_of_impact(tc.Sphere(0.2), Screw([0, 0, 0], [0, 0, 2.0], tc.Pose.from_translation([1, 0, 0]), [0, 0, 0]),
                            tc.Sphere(0.3), tc.Pose.from_translation([1.5 * np.cos(np.pi / 3), 1.5 * np.sin(np.pi / 3), 0]), 2.0)
    assert result.status == ImpactStatus.HIT
    assert result.time <= np.pi / 6 + 1e-12 and np.pi / 6 - result.time < 1e-4
    # the same orbit 1e-6 wider: a near miss the advancement must step past
    result = time_of_impact(tc.Sphere(0.2), Screw([0, 0, 0], [0, 0, 2.0], tc.Pose.from_translation([1 - 1e-6, 0, 0]), [0, 0, 0]),
                            tc.Sphere(0.3), tc.Pose.from_translation([1.5 * np.cos(np.pi / 3), 1.5 * np.sin(np.pi / 3), 0]), 2.0)
    assert result.status == ImpactStatus.MISS


# ----------------------------------------------------------------------------------------------
# keyframes and integrated motions
def _keyframed_separation(times, poses, half_a, half_b):
    eye = np.eye(4)[None]
    path = R.KeyframePath(times, poses)

    def separation(t, rows):
        pa = path.at(t, rows)
        cb, eb = R.parallelepiped(np.repeat(eye, len(rows), 0), np.zeros(3), half_b)
        return R.box_box_separation(pa[:, :3, 3], np.swapaxes(pa[:, :3, :3], 1, 2) * half_a[:, None], cb, eb)

    def cull(t, rows):
        pa = path.at(t, rows)
        return _ball_cull(pa[:, :3, 3], np.linalg.norm(half_a), 0.0, np.linalg.norm(half_b))

    return separation, cull


@pytest.mark.slow
def test_keyframed_boxes():
    rng = np.random.default_rng(11)
    n, k, t_max = 5_000, 4, 1.0
    times = np.array([0.0, 0.2, 0.7, 1.0])
    rot = R.random_rotations(rng, n * k).reshape(n, k, 3, 3)
    start = rng.uniform(-2.5, 2.5, (n, 3))
    drift = -start * rng.uniform(0.0, 1.3, (n, 1))
    trans = start[:, None] + times[None, :, None] * drift[:, None] + rng.normal(size=(n, k, 3)) * 0.2
    poses = np.tile(np.eye(4), (n, k, 1, 1))
    poses[..., :3, :3] = rot
    poses[..., :3, 3] = trans
    half_a = np.array([0.6, 5e-4, 0.3])
    half_b = np.array([0.5, 0.4, 0.3])
    result = time_of_impact(tc.Box(2 * half_a), Keyframes(times, poses), tc.Box(2 * half_b), None, t_max)
    separation, cull = _keyframed_separation(times, poses, half_a, half_b)
    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    _check(result, reference, separation, t_max, label="keyframes")


@pytest.mark.slow
def test_integrated_motion():
    """Integrated (RK4 + Gram-Schmidt, then keyframes through the nodes): 5,000 spinning,
    curving plates past a box in one vectorised Integrated batch; single motions equal their
    batch rows; reference on the motion's own keyframes (the motion the query sees)."""
    rng = np.random.default_rng(5)
    n, t_max = 5_000, 1.0
    half_a = np.array([0.7, 5e-4, 0.25])
    half_b = np.array([0.3, 0.3, 0.3])
    start = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2, 2, (n, 3)))
    v0 = -start[:, :3, 3] * rng.uniform(0.3, 1.2, (n, 1)) + rng.normal(size=(n, 3)) * 0.3
    w0 = rng.normal(size=(n, 3)) * 30
    bend = rng.normal(size=(n, 3))
    motion = Integrated(lambda t: (v0 + bend * t, w0 * (1 - 0.5 * t)), start, t_end=t_max, steps=24)
    batch = time_of_impact(tc.Box(2 * half_a), motion, tc.Box(2 * half_b), None, t_max)
    for i in range(0, n, 500):
        one = Integrated(lambda t, i=i: (v0[i] + bend[i] * t, w0[i] * (1 - 0.5 * t)), start[i], t_end=t_max, steps=24)
        np.testing.assert_allclose(one.poses, motion.poses[i], atol=1e-12)
        single = time_of_impact(tc.Box(2 * half_a), one, tc.Box(2 * half_b), None, t_max)
        assert int(single.status) == int(batch.status[i])
        # the touching tolerance is scaled by the extent of the whole batch's motions (a single
        # motion: its own), so the contact is declared at slightly different gaps: ~1e-12
        assert single.status == ImpactStatus.MISS or abs(single.time - batch.time[i]) <= 1e-10
    separation, cull = _keyframed_separation(motion.times, np.asarray(motion.poses), half_a, half_b)
    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    _check(batch, reference, separation, t_max, label="integrated")


# ----------------------------------------------------------------------------------------------
# quadratic matrices
@pytest.mark.slow
def test_quadratic_boxes_against_dense_sampling():
    rng = np.random.default_rng(3)
    n, t_max = 5_000, 1.0
    coefficients = np.zeros((n, 3, 4, 4))
    coefficients[:, 0] = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2.5, 2.5, (n, 3)))
    coefficients[:, 0, :3, :3] += rng.normal(size=(n, 3, 3)) * 0.1  # sheared start
    coefficients[:, 1, :3, :3] = rng.normal(size=(n, 3, 3)) * 0.8
    coefficients[:, 2, :3, :3] = rng.normal(size=(n, 3, 3)) * 0.5
    coefficients[:, 1, :3, 3] = -coefficients[:, 0, :3, 3] * rng.uniform(0.3, 1.5, (n, 1))
    coefficients[:, 2, :3, 3] = rng.normal(size=(n, 3)) * 1.0
    half_a = np.array([0.5, 0.3, 0.2])
    half_b = np.array([0.4, 5e-4, 0.6])  # a thin plate, translating in half of the cases
    qb = np.zeros((n, 3, 4, 4))
    qb[:, 0] = R.rigid_poses(R.random_rotations(np.random.default_rng(1), 1), np.zeros((1, 3)))
    moving = rng.random(n) < 0.5
    qb[moving, 1, :3, 3] = rng.normal(size=(moving.sum(), 3)) * 0.5
    result = time_of_impact(tc.Box(2 * half_a), QuadraticMatrix(coefficients), tc.Box(2 * half_b), QuadraticMatrix(qb), t_max)

    def separation(t, rows):
        ca, ea = R.parallelepiped(R.quadratic_matrices(coefficients[rows], t), np.zeros(3), half_a)
        cb, eb = R.parallelepiped(R.quadratic_matrices(qb[rows], t), np.zeros(3), half_b)
        return R.box_box_separation(ca, ea, cb, eb)

    def cull(t, rows):
        ca, ea = R.parallelepiped(R.quadratic_matrices(coefficients[rows], t), np.zeros(3), half_a)
        cb, eb = R.parallelepiped(R.quadratic_matrices(qb[rows], t), np.zeros(3), half_b)
        return _ball_cull(ca, np.linalg.norm(ea, axis=2).sum(1), cb, np.linalg.norm(eb, axis=2).sum(1))

    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    _check(result, reference, separation, t_max, label="quadratic")


# ----------------------------------------------------------------------------------------------
# callables
@pytest.mark.slow
def test_callable_motion_batch_against_sampling_and_the_screw_kernel():
    """10,000 screw motions given as one batch CallableMotion (a Python function of the times)
    with their exact speed bounds: against dense sampling, and against the Screw kernel on the
    same motions (same status; never later than it by more than 1e-9; at most 1e-6 earlier: the
    Python loop's bound ignores the direction, so it may stop where the gap is <= its coarse
    tolerance)."""
    rng = np.random.default_rng(9)
    n, t_max = 10_000, 1.0
    half = np.array([0.6, 5e-4, 0.3])
    start = R.rigid_poses(R.random_rotations(rng, n), rng.uniform(-2, 2, (n, 3)))
    v = -start[:, :3, 3] * rng.uniform(0.3, 1.2, (n, 1)) + rng.normal(size=(n, 3)) * 0.3
    w = rng.normal(size=(n, 3)) * 10
    centre = start[:, :3, 3]
    screw = Screw(v, w, start, centre)
    func = CallableMotion(lambda times: R.screw_poses(start, v, w, centre, times), linear_speed=np.linalg.norm(v, axis=1),
                          angular_speed=np.linalg.norm(w, axis=1), batch=n)
    exact = time_of_impact(tc.Box(2 * half), screw, tc.Sphere(0.4), None, t_max)
    loose = time_of_impact(tc.Box(2 * half), func, tc.Sphere(0.4), None, t_max)

    def separation(t, rows):
        pa = R.screw_poses(start[rows], v[rows], w[rows], centre[rows], t)
        return R.sphere_box_separation(np.zeros((len(rows), 3)), 0.4, pa[:, :3, 3], pa[:, :3, :3], half)

    def cull(t, rows):
        pa = R.screw_poses(start[rows], v[rows], w[rows], centre[rows], t)
        return _ball_cull(pa[:, :3, 3], np.linalg.norm(half), 0.0, 0.4)

    reference = R.first_contact(separation, n, t_max, samples=1000, cull=cull)
    _check(loose, reference, separation, t_max, label="callable batch", gap=1e-6)
    np.testing.assert_array_equal(loose.status, exact.status)
    hit = exact.status == HIT
    assert (loose.time[hit] <= exact.time[hit] + 1e-9).all() and (exact.time[hit] - loose.time[hit] < 1e-6).all()
    # one motion: the single form agrees with the batch row
    for i in range(0, n, 2500):
        one = CallableMotion(lambda t, i=i: R.screw_poses(start[i:i + 1], v[i:i + 1], w[i:i + 1], centre[i:i + 1], t)[0],
                             linear_speed=np.linalg.norm(v[i]), angular_speed=np.linalg.norm(w[i]))
        single = time_of_impact(tc.Box(2 * half), one, tc.Sphere(0.4), None, t_max)
        # eps is scaled by the batch's reach (a single motion: its own): contact gaps differ ~1e-12
        assert int(single.status) == int(loose.status[i])
        assert single.status == MISS or abs(single.time - loose.time[i]) <= 1e-10


# ----------------------------------------------------------------------------------------------
# API and input errors
def test_batches_broadcast_and_shapes():
    n = 5
    v = np.tile([1.0, 0, 0], (n, 1)) * np.arange(1, n + 1)[:, None]
    result = time_of_impact(tc.Sphere(0.5), Screw(v, [0, 0, 1.0], tc.Pose.from_translation([-3, 0, 0])), tc.Sphere(0.5), None, 10.0)
    assert result.time.shape == (n,) and result.normal.shape == (n, 3) and result.points.shape == (n, 1, 3)
    # distance to close 2, at speed k: t = 2 / k (the sphere's spin does not matter)
    np.testing.assert_allclose(result.time, 2.0 / np.arange(1, n + 1), rtol=1e-10)
    single = time_of_impact(tc.Sphere(0.5), Screw([1.0, 0, 0], [0, 0, 1.0], tc.Pose.from_translation([-3, 0, 0])), tc.Sphere(0.5), None, 10.0)
    assert single.status == ImpactStatus.HIT and abs(single.time - 2.0) < 1e-10 and single.points.shape == (1, 3)
    np.testing.assert_allclose(single.normal, [1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(single.point, [-0.5, 0, 0], atol=1e-9)
    touching = time_of_impact(tc.Sphere(0.5), Screw([1.0, 0, 0], [0, 0, 1.0]), tc.Sphere(0.5), None, 10.0)
    assert touching.status == ImpactStatus.ALREADY_TOUCHING and touching.time == 0.0


def test_bad_input_is_rejected():
    mesh = tc.TriangleMesh(np.eye(3), [[0, 1, 2]])
    with pytest.raises(tc.UnsupportedQuery):  # meshes are answered (test_ccd_mesh.py), not vs rays
        time_of_impact(mesh, Screw([1, 0, 0], [0, 0, 1]), tc.Ray([0, 0, 0], [1, 0, 0]), None, 1.0)
    with pytest.raises(tc.UnsupportedQuery):
        time_of_impact(tc.Sphere(1.0), QuadraticMatrix(np.eye(4), None, None), tc.Box([1, 1, 1]), None, 1.0)
    with pytest.raises(tc.UnsupportedQuery):
        time_of_impact(tc.Plane(), None, tc.HalfSpace(), Screw([1, 0, 0]), 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), None, tc.HalfSpace(), Screw([1, 0, 0], [0, 0, 1]), 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), QuadraticMatrix(np.eye(4), None, None), tc.Box([1, 1, 1]), None, np.inf)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), Screw([1, 0, 0]), tc.Box([1, 1, 1]), None, 1.0, tolerance=0.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), Screw(np.zeros((3, 3))), tc.Box([1, 1, 1]), Screw(np.zeros((2, 3))), 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), lambda t: np.eye(4), tc.Box([1, 1, 1]), None, 1.0)
    with pytest.raises(tc.GeometryError):
        Screw([np.nan, 0, 0])
    with pytest.raises(tc.GeometryError):
        Keyframes([0.0, 0.0], [np.eye(4), np.eye(4)])
    with pytest.raises(tc.GeometryError):
        QuadraticMatrix(np.ones((3, 4, 4)))
    with pytest.raises(tc.GeometryError):
        CallableMotion(lambda t: np.eye(4), linear_speed=-1.0)
    with pytest.raises(tc.GeometryError):
        CallableMotion(lambda t: np.eye(4), linear_speed=1.0, batch=3)  # returns one pose, not (3, 4, 4)
    with pytest.raises(tc.GeometryError):
        CallableMotion(lambda t: 2 * np.eye(4), linear_speed=1.0)  # not rigid
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), CallableMotion(lambda t: np.eye(4) if t == 0 else np.full((4, 4), np.nan), 1.0),
                       tc.Box([1, 1, 1]), tc.Pose.from_translation([1.5, 0, 0]), 1.0)  # gap 0.5: steps to t > 0
    with pytest.raises(tc.GeometryError):
        Keyframes([0.0, np.nan], [np.eye(4), np.eye(4)])
    with pytest.raises(tc.GeometryError):
        Integrated(lambda t: ([0, 0, 0], [0, 0, 0]), np.stack([np.eye(4)] * 2))  # batch needs (2, 3) arrays
    with pytest.raises(tc.GeometryError):
        Integrated(lambda t: ([0, 0, 0], [0, 0, 0]), t_end=-1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), Screw([1, 0, 0], [0, 0, 1]), tc.Box([1, 1, 1]), None, -1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(tc.Box([1, 1, 1]), Screw([1, 0, 0], [0, 0, 1]), tc.Box([1, 1, 1]), None, np.nan)
