"""Motion models (touche.motion) against independent formulas, their packed kernel form against
their Python form, and the rigour of the speed bounds conservative advancement relies on."""
import numpy as np
import pytest

from naive import ccd as R
import touche as tc
from touche.motion import Integrated, Keyframes, QuadraticMatrix, Screw


def _random_pose(rng):
    return tc.Pose.from_rotvec(rng.normal(size=3), rng.normal(size=3)).matrix.copy()


def _kernel_poses(motion, t):
    from touche._kernels import ccd

    rows = np.require(motion.packed(), np.float64, ["C", "W"])
    out = np.empty((len(rows), 4, 4))
    ccd.motion_pose_many(rows, float(t), out, 0, len(rows))
    return out


def test_screw_closed_form_and_kernel():
    rng = np.random.default_rng(0)
    n = 200
    pose0 = np.stack([_random_pose(rng) for _ in range(n)])
    v, w, c = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) * 5, rng.normal(size=(n, 3))
    motion = Screw(v, w, pose0, c)
    for t in (0.0, 0.3, 1.7, -0.5):
        expected = R.screw_poses(pose0, v, w, c, t)
        np.testing.assert_allclose(motion.pose_at(t), expected, atol=1e-12)
        np.testing.assert_allclose(_kernel_poses(motion, t), expected, atol=1e-12)
    # the reference point c moves with v, and every point keeps its distance to it
    x0 = pose0[:, :3, 3] + rng.normal(size=(n, 3))
    local = np.einsum("nji,nj->ni", pose0[:, :3, :3], x0 - pose0[:, :3, 3])
    moved = motion.pose_at(0.8)
    x = np.einsum("nij,nj->ni", moved[:, :3, :3], local) + moved[:, :3, 3]
    np.testing.assert_allclose(np.linalg.norm(x - (c + 0.8 * v), axis=1), np.linalg.norm(x0 - c, axis=1), atol=1e-12)


def test_linear_and_static_pack_as_screws():
    motion = tc.Linear([[1.0, 2, 3], [0, 0, 1]], tc.Pose.from_translation([1, 1, 1]))
    np.testing.assert_allclose(_kernel_poses(motion, 2.0), motion.pose_at(2.0), atol=1e-15)
    np.testing.assert_allclose(_kernel_poses(tc.Static(), 5.0)[0], np.eye(4))


def test_keyframes_interpolate_by_slerp():
    rng = np.random.default_rng(1)
    n, times = 100, np.array([0.0, 0.5, 1.25, 2.0])
    poses = np.stack([np.stack([_random_pose(rng) for _ in times]) for _ in range(n)])
    motion = Keyframes(times, poses)
    path = R.KeyframePath(times, poses)
    rows = np.arange(n)
    for t in (-1.0, 0.0, 0.2, 0.5, 0.9, 1.25, 1.999, 2.0, 3.0):
        expected = path.at(t, rows)
        np.testing.assert_allclose(motion.pose_at(t), expected, atol=1e-10)
        np.testing.assert_allclose(_kernel_poses(motion, t), expected, atol=1e-10)
    for i, t in enumerate(times):  # passes through every keyframe
        np.testing.assert_allclose(motion.pose_at(t), poses[:, i], atol=1e-12)


def test_integrated_rk4_matches_the_screw_closed_form():
    """Constant V, W about the moving centre K(t) = K0 + t V: the exact solution is the screw
    motion (S1 §5 with the X - K(t) correction); RK4 converges at fourth order on the nodes and
    the frame stays orthonormal (Gram-Schmidt)."""
    v, w, k0 = np.array([0.5, -0.2, 0.1]), np.array([0.3, 2.0, -1.0]), np.array([0.2, 0.1, -0.3])
    start = tc.Pose.from_rotvec([0.2, 0.4, 0.1], [1.0, 0.0, 0.5]).matrix
    exact = Screw(v, w, start, k0)
    errors = []
    for steps in (64, 128):
        motion = Integrated(lambda t: (v, w), start, t_end=2.0, steps=steps, center=lambda t: k0 + t * v)
        worst = 0.0
        for t in motion.times:  # the RK4 nodes
            pose = motion.pose_at(t)
            worst = max(worst, np.abs(pose - exact.pose_at(t)).max())
            np.testing.assert_allclose(pose[:3, :3].T @ pose[:3, :3], np.eye(3), atol=1e-14)
        errors.append(worst)
    assert errors[0] < 1e-5 and errors[1] < errors[0] / 10  # fourth order: ~16x per halving


def test_quadratic_matrix_evaluates_and_converts():
    rng = np.random.default_rng(2)
    coefficients = np.zeros((3, 4, 4))
    coefficients[:, :3, :] = rng.normal(size=(3, 3, 4))
    coefficients[0, 3, 3] = 1.0
    motion = QuadraticMatrix(coefficients)
    t = 0.7
    np.testing.assert_allclose(motion.pose_at(t), coefficients[0] + t * coefficients[1] + t * t * coefficients[2])
    linear = tc.Linear([1.0, -2.0, 0.5], tc.Pose.from_translation([3, 0, 0]))
    np.testing.assert_allclose(QuadraticMatrix.from_motion(linear).pose_at(1.5), linear.pose_at(1.5), atol=1e-15)


@pytest.mark.parametrize("model", ["screw", "keyframes"])
def test_speed_bounds_are_rigorous(model):
    """Along any unit n, every point of a shape moves with normal speed within
    n.v +- |n x w| rho (the bound conservative advancement steps with); checked by finite
    differences of random points of a box's bounding sphere at random times."""
    from touche._kernels import ccd

    rng = np.random.default_rng(3)
    ball = np.array([0.3, -0.2, 0.1, 0.9])  # local bounding sphere (centre, radius)
    for _ in range(200):
        if model == "screw":
            motion = Screw(rng.normal(size=3), rng.normal(size=3) * 10, _random_pose(rng), rng.normal(size=3))
        else:
            motion = Keyframes([0.0, 0.4, 1.0], [_random_pose(rng) for _ in range(3)])
        rows = np.require(motion.packed(), np.float64, ["C", "W"])[0]
        rho = ccd.motion_rho(rows, ball)
        t = rng.uniform(0.0, 0.95)
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        normal_speed, across, end = ccd.motion_rates(rows, t, n[0], n[1], n[2])
        h = min(1e-6, 0.5 * (end - t))
        local = ball[:3] + ball[3] * rng.uniform(-1, 1, (50, 3)) / np.sqrt(3)
        p0 = motion.pose_at(t)
        p1 = motion.pose_at(t + h)
        speed = ((local @ p1[:3, :3].T + p1[:3, 3]) - (local @ p0[:3, :3].T + p0[:3, 3])) @ n / h
        assert (speed <= normal_speed + across * rho + 1e-5).all()
        assert (speed >= normal_speed - across * rho - 1e-5).all()


def test_motion_input_errors():
    with pytest.raises(tc.GeometryError):
        Screw([1, 0, 0], [0, 0, np.inf])
    with pytest.raises(tc.GeometryError):
        Screw(np.zeros((3, 3)), np.zeros((2, 3)))
    with pytest.raises(tc.GeometryError):
        Keyframes([0.0, 1.0], [np.eye(4)])
    with pytest.raises(tc.GeometryError):
        Keyframes([0.0, 1.0], [np.eye(4), 2 * np.eye(4)])  # not rigid
    with pytest.raises(tc.GeometryError):
        Integrated("not callable")
    with pytest.raises(tc.GeometryError):
        Integrated(lambda t: ([np.nan, 0, 0], [0, 0, 0]))
    with pytest.raises(tc.GeometryError):
        QuadraticMatrix(np.zeros((3, 4, 4)))  # last row of m0 must be [0, 0, 0, 1]


# --------------------------------------------------------------------------------------------
# issue 23, finding 16: clear errors at the boundary
def test_keyframes_take_a_list_of_poses_and_refuse_other_lists():
    a, b = tc.Pose(), tc.Pose.from_translation([1.0, 0.0, 0.0])
    frames = tc.Keyframes([0, 1], [a, b])
    np.testing.assert_array_equal(frames.poses, np.stack([a.matrix, b.matrix]))
    with pytest.raises(tc.GeometryError, match="list of single Pose"):
        tc.Keyframes([0, 1], [tc.Pose, tc.Pose])
    with pytest.raises(tc.GeometryError, match="list of single Pose"):
        tc.Keyframes([0, 1], [a, "b"])
    with pytest.raises(tc.GeometryError):
        tc.Keyframes([0, 1], [[1, 2], [3]])


@pytest.mark.parametrize("make", [
    lambda: tc.distance(tc.Sphere(1.0), np.eye(4) + 0j, tc.Sphere(1.0), None),
    lambda: tc.Pose(np.eye(4) + 1e-3j),
    lambda: tc.Pose.from_translation(np.array([1.0, 2.0, 3.0]) + 1j),
    lambda: tc.Linear([1.0 + 0j, 0.0, 0.0]),
    lambda: tc.Screw([0.0, 0.0, 0.0], [0.0, 0.0, 1.0 + 2j]),
    lambda: tc.Keyframes([0, 1 + 0j], np.stack([np.eye(4)] * 2)),
    lambda: tc.Keyframes([0, 1], np.stack([np.eye(4)] * 2) + 0j),
    lambda: tc.QuadraticMatrix(np.eye(4) + 0j),
])
def test_complex_numbers_are_refused_not_truncated(make):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would fail the test
        with pytest.raises(tc.GeometryError, match="complex"):
            make()


def test_batch_length_errors_name_the_callers_arguments_in_order():
    mesh = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    three, two = np.stack([np.eye(4)] * 3), np.stack([np.eye(4)] * 2)
    for a, b in ((mesh, tc.Sphere(1.0)), (tc.Sphere(1.0), mesh), (mesh, mesh)):
        for verb in (tc.distance, tc.intersects):
            with pytest.raises(tc.GeometryError, match="pose_a has 3, pose_b has 2"):
                verb(a, three, b, two)
    sphere = tc.Sphere(0.5)
    plane = tc.HalfSpace([0.0, 0.0, 1.0], 0.0)
    moves = {3: tc.Linear(np.ones((3, 3))), 2: tc.Linear(np.ones((2, 3)))}
    spins = {3: tc.Screw(np.ones((3, 3)), [0.0, 0.0, 1.0]), 2: tc.Screw(np.ones((2, 3)), [0.0, 0.0, 1.0])}
    slides = {3: tc.Linear(np.zeros((3, 3))), 2: tc.Linear(np.zeros((2, 3)))}
    # the engines put the mesh / the finite shape first: the message keeps the caller's order
    for a, motions_a, b, motions_b in ((mesh, moves, sphere, moves), (sphere, moves, mesh, moves),
                                       (mesh, spins, sphere, spins), (sphere, spins, mesh, spins),
                                       (plane, slides, sphere, spins), (sphere, spins, plane, slides)):
        with pytest.raises(tc.GeometryError, match="motion_a has 3, motion_b has 2"):
            tc.time_of_impact(a, motions_a[3], b, motions_b[2], 1.0)
