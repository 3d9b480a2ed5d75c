"""touche.robot motion checks: Robot.check_motion / check_path (conservative advancement).

References: dense discrete sampling (tests/naive/robot.py: robot.in_collision at up to 10,000
steps, and the pair distances at every step for the rate bound), on example-robot-data's Panda
and UR5 (skipped without it) and the synthetic robot of test_robot.py (prismatic and mimic
joints). The grazing motions are built so that 100-step sampling misses them: a thin plate
placed where a vertex of a link passes between two samples.
"""

import numpy as np
import pytest

import touche as tc
from touche import GeometryError, robot
from touche.robot.motion import MotionStatus, local_rate_bounds, rate_bounds

from naive import robot as N


ERD = robot.example_robot_data()
needs_erd = pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed (pip install example-robot-data)")
FILES = {"panda": ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf", [0.55, 0.0, 0.0]),
         "ur5": ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf", [0.0, 0.55, 0.0])}
_MODELS = {}


def _model(name, meshes="mesh"):
    key = (name, meshes)
    if key not in _MODELS:
        urdf, srdf, _ = FILES[name]
        _MODELS[key] = robot.load_urdf(ERD / urdf, ERD / srdf, meshes=meshes)
    return _MODELS[key]


def _shelf(front):
    """Boards of a shelf facing the robot (benchmarks/bench_robot.py's scene, rebuilt here)."""
    front = np.asarray(front, dtype=float)
    across = np.array([-front[1], front[0], 0.0]) / np.linalg.norm(front)
    board = [0.3, 0.8, 0.02] if front[0] else [0.8, 0.3, 0.02]
    boards = [(board, front + [0.0, 0.0, h]) for h in (0.15, 0.5, 0.85)]
    boards.append(([0.3, 0.02, 0.9] if front[0] else [0.02, 0.3, 0.9], front + across * 0.4 + [0.0, 0.0, 0.5]))
    return [(tc.Box(size), tc.Pose.from_translation(center)) for size, center in boards]


def _free_segments(model, obstacles, count, length, seed):
    """``count`` segments starting at collision-free configurations, of joint-space length
    ``length`` (clipped to the limits), or (``length`` None) ending at other free configurations."""
    rng = np.random.default_rng(seed)
    starts = model.lower + (model.upper - model.lower) * rng.random((16 * count, model.dof))
    starts = starts[~model.in_collision(starts, obstacles)]
    if length is None:
        return starts[:count], starts[count: 2 * count]
    starts = starts[:count]
    direction = rng.normal(size=starts.shape)
    direction *= (length / np.linalg.norm(direction, axis=1))[:, None]
    return starts, np.clip(starts + direction, model.lower, model.upper)


# ------------------------------------------------------------------------------------------------
# the rate bound
def _check_rate_bound(model, obstacles, q0, q1, steps):
    """The segment-wide bound against the largest measured rate, and the local bound at every
    20th sample against the measured change over the next 1 to 100 samples."""
    names, bounds = rate_bounds(model, q0, q1, obstacles)
    ratios, local_ratios = [], []
    for i in range(len(q0)):
        pairs, rates, distances = N.distance_rates(model, q0[i], q1[i], obstacles, steps)
        assert pairs == names
        starts = np.arange(0, steps, 20)
        _, rate0, rate1 = local_rate_bounds(model, q0[i], q1[i], starts / steps, obstacles)
        for k, start in enumerate(starts):
            ahead = np.arange(1, min(100, steps - start) + 1)
            tau = ahead / steps
            change = np.abs(distances[start + ahead] - distances[start])  # (len(ahead), pairs)
            allowed = rate0[k] * tau[:, None] + 0.5 * rate1[k] * tau[:, None] ** 2
            assert (change <= allowed * (1.0 + 1e-12) + 1e-9).all(), (i, start)
            assert (rate0[k] <= bounds[i] * (1.0 + 1e-12)).all()  # never looser than the segment's bound
            local_ratios.append(rate0[k][bounds[i] > 0] / bounds[i][bounds[i] > 0])
        # finite differences of distances exact to ~1e-12: allow that much over the bound
        slack = 1e-9 * steps
        over = rates > bounds[i] * (1.0 + 1e-12) + slack
        assert not over.any(), [(names[p], rates[p], bounds[i, p]) for p in np.flatnonzero(over)]
        moving = bounds[i] > 0
        ratios.append(rates[moving] / bounds[i, moving])
    return np.concatenate(ratios), np.concatenate(local_ratios)


@needs_erd
@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_rate_bound_is_never_exceeded(name):
    """Every pair's measured |d(s + h) - d(s)| / h stays under its bound, on the convex hulls (the
    same bounding spheres as the meshes, so the same bounds; hull distances are fast enough to
    sample densely)."""
    model = _model(name, "convex")
    obstacles = _shelf(FILES[name][2])
    q0, q1 = _free_segments(model, obstacles, 4, 1.0, seed=20)
    ratios, local_ratios = _check_rate_bound(model, obstacles, q0, q1, steps=400)
    assert ratios.max() > 0.2  # the bound is not vacuous: some pair moves at a fair share of it
    assert np.median(local_ratios) < 0.8  # and the local bound is tighter (longer steps)


def test_rate_bound_prismatic_and_mimic_joints(tmp_path):
    from test_robot import _synthetic_urdf

    tetra = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    tc.mesh.save(tetra, tmp_path / "tetra.stl")
    (tmp_path / "synthetic.urdf").write_text(_synthetic_urdf("tetra.stl"))
    model = robot.load_urdf(tmp_path / "synthetic.urdf")
    obstacles = [(tc.Box([0.2, 0.2, 0.2]), tc.Pose.from_translation([0.4, 0.0, 0.45]))]
    rng = np.random.default_rng(21)
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q0 = lower + (upper - lower) * rng.random((6, model.dof))
    q1 = lower + (upper - lower) * rng.random((6, model.dof))
    ratios, _ = _check_rate_bound(model, obstacles, q0, q1, steps=1000)
    assert ratios.max() > 0.2


# ------------------------------------------------------------------------------------------------
# grazing motions that 100-step sampling misses
def _grazing_motions(model, count, seed):
    """(q0, q1, plate obstacle, s where a vertex of a link sits inside the plate) for ``count``
    segments on which 100-step sampling (s = k / 99) finds no contact with the plate."""
    rng = np.random.default_rng(seed)
    meshes = [g for g, geometry in enumerate(model.geometries) if isinstance(geometry.shape, tc.TriangleMesh)]
    found = []
    starts, ends = _free_segments(model, None, 20 * count, 2.0, seed)
    for q0, q1 in zip(starts, ends):
        if len(found) == count:
            break
        g = meshes[rng.integers(len(meshes) // 2, len(meshes))]  # a link far from the base: it moves
        middle = (rng.integers(10, 89) + rng.uniform(0.3, 0.7)) / 99.0
        here, later = model.geometry_poses(N.segment_configurations(q0, q1, [middle, middle + 1e-6]))[g]
        vertices = model.geometries[g].shape.vertices
        world = vertices @ here[:3, :3].T + here[:3, 3]
        speed = (vertices @ later[:3, :3].T + later[:3, 3] - world) / 1e-6
        fastest = int(np.argmax(np.linalg.norm(speed, axis=1)))
        thin = speed[fastest] / np.linalg.norm(speed[fastest])
        v = int(np.argmax(world @ thin))  # the vertex leading the motion: the plate meets it first
        side = np.cross(thin, [1.0, 0.0, 0.0] if abs(thin[0]) < 0.9 else [0.0, 1.0, 0.0])
        side /= np.linalg.norm(side)
        rotation = np.column_stack([side, np.cross(thin, side), thin])
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, world[v]
        plate = (tc.Box([0.002, 0.002, 0.0005]), pose)
        inside = model.in_collision(N.segment_configurations(q0, q1, [middle]), [plate], self_collision=False)
        assert inside[0]  # the vertex sits in the plate at ``middle``: a contact exists
        if N.first_contact_by_sampling(model, q0, q1, [plate], 99, self_collision=False) is None:
            found.append((q0, q1, plate, middle))
    assert len(found) == count
    return found


@needs_erd
@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_grazing_motions_are_never_missed(name):
    model = _model(name)
    cases = _grazing_motions(model, 10, seed={"panda": 30, "ur5": 31}[name])
    for q0, q1, plate, middle in cases:
        result = model.check_motion(q0, q1, [plate], self_collision=False)
        assert result.status == MotionStatus.CONTACT and result.in_collision, (q0, q1, middle)
        assert result.time <= middle  # the vertex is inside the plate at ``middle``
        np.testing.assert_allclose(result.configuration, q0 + result.time * (q1 - q0))
        # at s* the pair is within the tolerance, and nothing collides before it
        gap = model.distances(result.configuration, [plate], self_collision=False).distance[result.pair]
        assert gap <= result.tolerance + 1e-9
        assert result.contact_pairs[1] == "obstacle 0"
        before = N.first_contact_by_sampling(model, q0, q1 , [plate], 2000, self_collision=False,
                                             end=result.time * (1 - 1e-9))
        assert before is None


# ------------------------------------------------------------------------------------------------
# certified answers against dense sampling, with the shelf and self-collision
@needs_erd
@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_answers_agree_with_dense_sampling(name):
    model = _model(name)
    shelf = _shelf(FILES[name][2])
    q0, q1 = _free_segments(model, shelf, 16, None, seed=40)
    result = model.check_motion(q0, q1, shelf)
    assert result.status.shape == (16,) and result.configuration.shape == (16, model.dof)
    assert (result.status != MotionStatus.UNDECIDED).all()
    hits = result.in_collision
    assert 0.2 <= hits.mean() <= 0.8, hits.mean()  # both outcomes exercised
    free = np.flatnonzero(~hits)
    for i in free[:3]:  # certified free: 10,000 samples agree
        assert N.first_contact_by_sampling(model, q0[i], q1[i], shelf, 10_000) is None
    for i in np.flatnonzero(hits)[:4]:
        assert N.first_contact_by_sampling(model, q0[i], q1[i], shelf, 2000, end=result.time[i] * (1 - 1e-9)) is None
        assert model.distances(result.configuration[i], shelf).distance[result.pair[i]] <= result.tolerance + 1e-9
        # one segment alone gives the batch's answer
        one = model.check_motion(q0[i], q1[i], shelf)
        assert one.time == result.time[i] and one.pair == result.pair[i]


@needs_erd
def test_path_reports_the_first_contact_along_it():
    model = _model("panda")
    shelf = _shelf(FILES["panda"][2])
    q0, q1 = _free_segments(model, shelf, 12, 1.0, seed=50)
    segments = model.check_motion(q0, q1, shelf)
    first = int(np.argmax(segments.in_collision))
    assert segments.in_collision[first] and first > 0
    # a path through the same segments: consecutive ends meet
    path = np.empty((2 * (first + 1), model.dof))
    path[0::2], path[1::2] = q0[: first + 1], q1[: first + 1]
    result = model.check_path(path, shelf)
    expected = model.check_motion(path[:-1], path[1:], shelf)
    k = int(np.argmax(expected.in_collision))
    assert result.status == MotionStatus.CONTACT and result.segment == k
    assert result.time == expected.time[k] and result.pair == expected.pair[k]
    assert result.path_time == k + result.time
    np.testing.assert_allclose(result.configuration, path[k] + result.time * (path[k + 1] - path[k]))
    free = model.check_path(path[: 2 * first], shelf)  # the part before the first colliding segment
    if not expected.in_collision[: 2 * first - 1].any():
        assert free.status == MotionStatus.FREE and not free.in_collision and free.segment == -1


# ------------------------------------------------------------------------------------------------
# small cases and bad input
ARM = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.3 0.3 0.1"/></geometry></collision></link>
  <link name="upper"><collision><origin xyz="0 0 0.25"/><geometry><capsule radius="0.05" length="0.4"/></geometry></collision></link>
  <link name="fore"><collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.04" length="0.4"/></geometry></collision></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-2.5" upper="2.5"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-2.8" upper="2.8"/></joint>
</robot>"""


def test_thin_wall_between_samples_and_standing_still():
    arm = robot.load_urdf(text=ARM)
    wall = [(tc.Box([0.002, 1.0, 0.4]), tc.Pose.from_translation([0.3, 0.0, 0.8]))]
    q0, q1 = np.array([0.0, 0.0]), np.array([0.0, 1.2])  # the fore-arm swings into the wall
    result = arm.check_motion(q0, q1, wall)
    assert result.in_collision and 0.0 < result.time < 1.0
    dense = N.first_contact_by_sampling(arm, q0, q1, wall, 10_000)
    assert dense is not None and result.time <= dense
    # a motion that does not move: free, or in contact at s = 0
    still = arm.check_motion(q0, q0, wall)
    assert still.status == MotionStatus.FREE and np.isnan(still.time) and still.pair == -1
    touching = arm.check_motion([0.0, 1.5], [0.0, 1.5], wall)
    assert touching.status == MotionStatus.CONTACT and touching.time == 0.0
    assert repr(result).startswith("MotionResult(CONTACT")
    # a flat mesh obstacle has no solid hull: it is its own lower bound
    pose = np.eye(4)
    pose[:3, 3] = [0.3, 0.0, 0.5]
    flat = [(tc.TriangleMesh([[0, -0.5, 0], [0, 0.5, 0], [0, 0, 1.0]], [[0, 1, 2]]), pose)]
    crossing = arm.check_motion(q0, q1, flat)
    dense = N.first_contact_by_sampling(arm, q0, q1, flat, 10_000)
    assert crossing.in_collision and dense is not None and dense - 1e-4 <= crossing.time <= dense


def test_bad_motion_input():
    arm = robot.load_urdf(text=ARM)
    with pytest.raises(GeometryError, match="has 2 values"):
        arm.check_motion([0.0, 0.0, 0.0], [0.0, 0.0])
    with pytest.raises(GeometryError, match="joint 'elbow' is nan"):
        arm.check_motion([0.0, 0.0], [0.0, np.nan])
    with pytest.raises(GeometryError, match="outside its limits"):
        arm.check_motion([0.0, 0.0], [0.0, 3.0])
    assert not arm.check_motion([0.0, 0.0], [0.0, 3.0], allow_outside_limits=True).in_collision
    with pytest.raises(GeometryError, match="same number of configurations"):
        arm.check_motion(np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(GeometryError, match="at least two configurations"):
        arm.check_path(np.zeros((1, 2)))
    with pytest.raises(GeometryError, match="at least two configurations"):
        arm.check_path(np.zeros(2))
    with pytest.raises(GeometryError, match="tolerance must be finite and >= 0"):
        arm.check_motion([0.0, 0.0], [0.0, 1.0], tolerance=-1.0)
    with pytest.raises(GeometryError, match="max_iterations must be >= 1"):
        arm.check_motion([0.0, 0.0], [0.0, 1.0], max_iterations=0)
