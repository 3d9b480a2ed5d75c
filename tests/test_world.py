"""CollisionWorld vs brute force (every pair straight to the narrow phase, tests/naive/broadphase.py)."""
import numpy as np
import pytest

import touche
from naive.broadphase import naive_world_step
from touche import GeometryError, UnsupportedQuery
from touche.broadphase import STRUCTURES
from touche.query import SUPPORTED_PAIRS
from touche.world import shifted_motion
from threaded import run_threads


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def random_pose(rng, spread=3.0):
    pose = np.eye(4)
    pose[:3, :3] = random_rotation(rng)
    pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return pose


def random_shape(rng, k=None):
    k = rng.integers(7) if k is None else k
    if k == 0:
        return touche.Sphere(rng.uniform(0.2, 0.6))
    if k == 1:
        return touche.Box(rng.uniform(0.3, 1.0, 3))
    if k == 2:
        return touche.Capsule(rng.uniform(0.1, 0.3), rng.uniform(0.2, 1.0))
    if k == 3:
        return touche.Cylinder(rng.uniform(0.2, 0.4), rng.uniform(0.3, 1.0))
    if k == 4:
        return touche.Cone(rng.uniform(0.2, 0.4), rng.uniform(0.3, 1.0))
    if k == 5:
        return touche.Ellipsoid(rng.uniform(0.2, 0.6, 3))
    return touche.ConvexPolyhedron(rng.normal(size=(12, 3)) * 0.4)


class Wobble:
    """A rigid callable motion: the start pose translated by amp * sin(omega t) (speed <= |amp| omega)."""

    def __init__(self, pose, amp, omega):
        self.pose, self.amp, self.omega = pose, amp, omega

    def __call__(self, t):
        out = self.pose.copy()
        out[:3, 3] += self.amp * np.sin(self.omega * t)
        return out


def random_motion(rng, pose, kind):
    """(velocity or None, motion or None) of one of the motion kinds a world object takes."""
    if kind == "static":
        return None, None
    if kind == "linear":
        return rng.normal(0.0, 4.0, 3), None
    if kind == "screw":
        center = None if rng.integers(2) else pose[:3, 3] + rng.normal(0, 0.5, 3)
        return None, touche.Screw(rng.normal(0.0, 3.0, 3), rng.normal(0.0, 8.0, 3), pose, center)
    if kind == "keyframes":
        poses = [pose] + [random_pose(rng, 0.5) @ pose for _ in range(3)]
        for p in poses[1:]:
            p[:3, 3] = pose[:3, 3] + rng.normal(0, 0.6, 3)
        return None, touche.Keyframes([0.0, 0.12, 0.25, 0.4], np.array(poses))
    if kind == "callable":
        amp, omega = rng.normal(0.0, 0.5, 3), 12.0
        return None, touche.CallableMotion(Wobble(pose, amp, omega), np.linalg.norm(amp) * omega, 0.0)
    raise ValueError(kind)


MOTIONS = ["static", "linear", "static", "screw", "keyframes", "static", "linear", "callable"]


def build_scene(rng, n, motions=MOTIONS, spread=3.0, floor=-2.5):
    """Specs of n random objects (all added at time 0) and a half-space below them."""
    specs = []
    for i in range(n):
        pose = random_pose(rng, spread)
        velocity, motion = random_motion(rng, pose, motions[i % len(motions)])
        specs.append(dict(shape=random_shape(rng), pose=pose, velocity=velocity, motion=motion, start=0.0,
                          group=int(rng.integers(1, 4)), mask=int(rng.integers(1, 8))))
    specs.append(dict(shape=touche.HalfSpace([0, 0, 1], floor), pose=np.eye(4), velocity=None, motion=None, start=0.0,
                      group=1, mask=-1))
    return specs


def add_to_world(world, spec, log=None, stop_rule=None):
    if spec["velocity"] is not None:
        motion = touche.Linear(spec["velocity"], spec["pose"])
    else:
        motion = spec["motion"]

    def callback(event, log=log):
        log.append(event.pair)
        return not stop_rule(event)

    return world.add(spec["shape"], None if spec["motion"] is not None else spec["pose"], motion=motion,
                     group=spec["group"], mask=spec["mask"], user_data=("obj", len(world)),
                     callback=callback if log is not None else None)


def fresh(specs):
    return [dict(s, pose=s["pose"].copy()) for s in specs]


def test_step_events_match_brute_force_every_structure():
    """Random multi-step scenes with static, linear, screw, keyframed and callable motions, an
    object added after the first step (its motion's time 0 is then 0.1) and a half-space: every
    broad phase gives exactly the brute-force events, in (time, a, b) order."""
    rng = np.random.default_rng(2026)
    specs = build_scene(rng, 22, spread=2.0, floor=-1.8)
    late_pose = random_pose(rng, 1.5)
    late = dict(shape=touche.Box([0.8, 0.5, 0.6]), pose=late_pose, velocity=None,
                motion=touche.Screw([1.0, -2.0, 0.5], [0.0, 9.0, 3.0], late_pose), start=0.1, group=3, mask=-1)
    dt, steps = 0.1, 4
    reference, expected = fresh(specs), []
    time = 0.0
    for k in range(steps):
        if k == 1:
            reference.append(dict(late, pose=late_pose.copy()))
        expected.append(naive_world_step(reference, dt, time))
        time += dt
    counts = [len(e) for e in expected]
    n_pairs = len(reference) * (len(reference) - 1) // 2
    assert 0 < sum(counts) < 0.5 * steps * n_pairs
    assert sum(t > 0.0 for step in expected for t, _, _ in step) >= 5  # continuous hits inside steps
    kinds_ = [MOTIONS[i % len(MOTIONS)] for i in range(len(specs) - 1)] + ["static", "screw"]
    assert {"linear", "screw", "keyframes", "callable"} <= {kinds_[h] for step in expected for _, a, b in step
                                                           for h in (a, b)}
    assert any(len(specs) - 1 in (a, b) for step in expected for _, a, b in step)  # the half-space
    for name in STRUCTURES:
        world = touche.CollisionWorld(name)
        for spec in fresh(specs):
            add_to_world(world, spec)
        for k in range(steps):
            if k == 1:
                assert world.add(late["shape"], motion=late["motion"], group=3) == len(specs)
            events = world.step(dt)
            got = [(e.time, e.a, e.b) for e in events]
            assert [g[1:] for g in got] == [e[1:] for e in expected[k]], name
            np.testing.assert_allclose([g[0] for g in got], [e[0] for e in expected[k]], rtol=0, atol=1e-12)
            assert got == sorted(got)
            for e in events:
                assert e.a < e.b and 0.0 <= e.time <= dt and e.depth >= 0.0
                assert e.points.ndim == 2 and e.points.shape[1] == 3 and e.points.shape[0] >= 1
                assert np.isfinite(e.points).all()
                assert abs(np.linalg.norm(e.normal) - 1.0) < 1e-6
                np.testing.assert_array_equal(e.normals[1], -e.normal)
                if e.a < len(specs) - 1:
                    assert e.user_data_a == ("obj", e.a)
        assert world.time == pytest.approx(steps * dt)
        for h, o in enumerate(reference):
            np.testing.assert_allclose(world.pose(h), o["pose"], atol=1e-12)


def test_callbacks_stop_the_search_in_random_scenes():
    """Each object's callback logs its events and returns False for events whose handles sum to
    a multiple of 3: step() delivers the brute-force events up to and including the first such
    one, each to both objects' callbacks, in order; the step still completes its motion."""
    rng = np.random.default_rng(77)
    specs = build_scene(rng, 20, motions=["static", "linear", "screw", "static"], spread=1.6)

    def stop_rule(event):
        return (event.a + event.b) % 3 == 0

    reference = fresh(specs)
    world = touche.CollisionWorld("sort_and_sweep")
    logs = [[] for _ in specs]
    for spec, log in zip(fresh(specs), logs):
        add_to_world(world, spec, log, stop_rule)
    stopped = 0
    time = 0.0
    for _ in range(4):
        expected = naive_world_step(reference, 0.08, time)
        time += 0.08
        cut = next((k for k, (_, a, b) in enumerate(expected) if (a + b) % 3 == 0), None)
        if cut is not None:
            expected = expected[: cut + 1]
            stopped += 1
        for log in logs:
            log.clear()
        events = world.step(0.08)
        assert [(e.a, e.b) for e in events] == [(a, b) for _, a, b in expected]
        for h, log in enumerate(logs):
            assert log == [(e.a, e.b) for e in events if h in (e.a, e.b)]
        for h, o in enumerate(reference):
            np.testing.assert_allclose(world.pose(h), o["pose"], atol=1e-12)
    assert stopped >= 2


@pytest.mark.parametrize("kind", ["linear", "screw", "keyframes", "callable"])
def test_shifted_motion_is_the_motion_later(kind):
    rng = np.random.default_rng(3)
    for _ in range(5):
        pose = random_pose(rng)
        velocity, motion = random_motion(rng, pose, kind)
        if velocity is not None:
            motion = touche.Linear(velocity, pose)
        s0 = rng.uniform(0.0, 0.5)
        later = shifted_motion(motion, s0)
        assert type(later) is (touche.Keyframes if kind == "keyframes" else type(motion))
        for u in rng.uniform(0.0, 0.5, 6):
            np.testing.assert_allclose(later.pose_at(u), motion.pose_at(s0 + u), atol=1e-12)


@pytest.mark.parametrize("kind", ["linear", "screw", "keyframes", "callable"])
def test_swept_boxes_hold_the_whole_motion(kind):
    """The broad-phase box of a moving object during a step contains the object's box at every
    time of the step (dense sampling), and is not absurdly larger."""
    rng = np.random.default_rng(11)
    world = touche.CollisionWorld()
    handles, specs = [], []
    for k in range(6):
        pose = random_pose(rng)
        velocity, motion = random_motion(rng, pose, kind)
        shape = random_shape(rng, k)
        m = touche.Linear(velocity, pose) if velocity is not None else motion
        handles.append(world.add(shape, None if velocity is None else pose, motion=m))
        specs.append((shape, m))
    world.step(0.07)  # motions' time now 0.07
    dt = 0.15
    world._refresh(dt)
    probe = touche.CollisionWorld()
    for h, (shape, m) in zip(handles, specs):
        swept = world._broad.aabb(h)
        sizes = []
        for t in np.linspace(0.07, 0.07 + dt, 61):
            p = probe.add(shape, m.pose_at(t))
            box = probe._broad.aabb(p)
            probe.remove(p)
            # both boxes carry the world's rounding pad (1e-9 of size + |translation|), which
            # differs between poses: compare up to twice that pad
            pad = 2e-9 * (np.max(box[3:] - box[:3]) + np.abs(m.pose_at(t)[:3, 3]).sum())
            assert np.all(box[:3] >= swept[:3] - pad) and np.all(box[3:] <= swept[3:] + pad), (kind, t)
            sizes.append(box[3:] - box[:3])
        travel = np.ptp([m.pose_at(t)[:3, 3] for t in np.linspace(0.07, 0.07 + dt, 61)], axis=0)
        slack = (swept[3:] - swept[:3]) - np.max(sizes, axis=0) - travel
        assert np.all(slack <= 0.5 * np.max(sizes) + 1e-9), (kind, slack)


def test_continuous_check_catches_tunnelling():
    world = touche.CollisionWorld()
    bullet = world.add(touche.Sphere(0.05), touche.Pose.from_translation([-5, 0, 0]),
                       motion=touche.Linear([100.0, 0, 0]))
    wall = world.add(touche.Box([0.1, 2, 2]))
    events = world.step(0.1)  # moves 10 units: passes through the wall within the step
    assert [(e.a, e.b) for e in events] == [(bullet, wall)]
    assert events[0].time == pytest.approx((5 - 0.05 - 0.05) / 100.0, abs=1e-9)
    assert events[0].status == touche.ImpactStatus.HIT
    np.testing.assert_allclose(np.abs(events[0].normal), [1, 0, 0], atol=1e-9)
    assert world.pairs().shape == (0, 2)  # after the step it is beyond the wall


def test_spinning_plank_does_not_tunnel():
    """A long thin box spinning fast about z sweeps through a small sphere between the step's
    start and end poses (where it misses it): the swept box and time_of_impact catch it."""
    plank = touche.Box([4.0, 0.05, 0.05])
    start = np.eye(4)
    spin = touche.Screw([0.0, 0.0, 0.0], [0.0, 0.0, 30.0], start)
    ball_pose = touche.Pose.from_translation([0.0, 1.5, 0.0])
    for t in (0.0, 0.1):
        assert not touche.intersects(plank, spin.pose_at(t), touche.Sphere(0.1), ball_pose)
    world = touche.CollisionWorld()
    p = world.add(plank, motion=spin)
    b = world.add(touche.Sphere(0.1), ball_pose)
    events = world.step(0.1)  # 3 rad: the plank passes the ball (at ~pi/2 - 0.06 rad)
    assert [(e.a, e.b) for e in events] == [(p, b)]
    assert 0.0 < events[0].time < 0.1
    assert touche.distance(plank, spin.pose_at(events[0].time), touche.Sphere(0.1), ball_pose).distance < 1e-6
    assert world.time == pytest.approx(0.1)
    np.testing.assert_allclose(world.pose(p), spin.pose_at(0.1), atol=1e-12)


def test_groups_masks_and_callback_stop():
    world = touche.CollisionWorld()
    seen = []

    def stop_first(event):
        seen.append(event.pair)
        return False

    a = world.add(touche.Sphere(1.0), group=0b01, mask=0b10, callback=stop_first)
    b = world.add(touche.Sphere(1.0), touche.Pose.from_translation([0.5, 0, 0]), group=0b10, mask=0b01)
    c = world.add(touche.Sphere(1.0), touche.Pose.from_translation([-0.5, 0, 0]), group=0b01, mask=0b01)
    d = world.add(touche.Sphere(1.0), touche.Pose.from_translation([0, 0.5, 0]), group=0b100, mask=0)
    # tested iff group_x & mask_y and group_y & mask_x: a-b yes; a-c no (c.group & a.mask = 0);
    # b-c no (b.group & c.mask = 0); d has mask 0: never tested
    np.testing.assert_array_equal(world.pairs(), [[a, b]])
    world.remove(d)
    e = world.add(touche.Sphere(1.0), touche.Pose.from_translation([0, 0.2, 0]), group=0b10, mask=0b11)
    # a-e yes; b-e and c-e no (e.group & their masks = 0), although all of them overlap
    np.testing.assert_array_equal(world.pairs(), [[a, b], [a, e]])
    events = world.step(0.0)
    assert [ev.pair for ev in events] == [(a, b)] and seen == [(a, b)]  # stopped by a's callback


def test_batched_narrow_phase_equals_one_by_one():
    """Objects sharing shape instances go to intersects / time_of_impact as batches (one call
    per pair of shapes): the same pairs and events (times, statuses) as pair-by-pair brute force."""
    rng = np.random.default_rng(12)
    shapes = [touche.Box([0.6, 0.4, 0.3]), touche.Sphere(0.3), touche.Capsule(0.15, 0.6)]
    world = touche.CollisionWorld()
    specs = []
    for i in range(90):
        pose = random_pose(rng, 2.0)
        velocity = rng.normal(0.0, 3.0, 3) if i % 4 == 0 else None
        specs.append(dict(shape=shapes[i % 3], pose=pose, velocity=velocity, motion=None, start=0.0, group=1, mask=-1))
        world.add(shapes[i % 3], pose, motion=None if velocity is None else touche.Linear(velocity, pose))
    expected = [(i, j) for i in range(90) for j in range(i + 1, 90)
                if touche.intersects(specs[i]["shape"], specs[i]["pose"], specs[j]["shape"], specs[j]["pose"])]
    assert len(expected) > 30
    np.testing.assert_array_equal(world.pairs(), np.array(expected).reshape(-1, 2))
    reference = fresh(specs)
    statuses = set()
    checked = 0
    world_pose_before = [world.pose(h) for h in range(90)]
    for k in range(2):
        expected_events = naive_world_step(reference, 0.1, 0.1 * k)
        events = world.step(0.1)
        assert [(e.a, e.b) for e in events] == [(a, b) for _, a, b in expected_events]
        np.testing.assert_allclose([e.time for e in events], [t for t, _, _ in expected_events], rtol=0, atol=1e-12)
        statuses |= {e.status for e in events}
        for e in events:  # batched contact manifolds equal the single-pair ones
            if e.status is None:
                sa, sb = reference[e.a]["shape"], reference[e.b]["shape"]
                pa, pb = world_pose_before[e.a], world_pose_before[e.b]
                m = touche.contacts(sa, pa, sb, pb, max_points=4)
                np.testing.assert_allclose(e.points, m.points[: m.count], rtol=0, atol=1e-12)
                np.testing.assert_allclose(e.normal, m.normal, rtol=0, atol=1e-12)
                assert e.depth == pytest.approx(max(0.0, float(np.max(m.depths[: m.count]))), abs=1e-12)
                checked += 1
        world_pose_before = [world.pose(h) for h in range(90)]
    assert {None, touche.ImpactStatus.HIT, touche.ImpactStatus.ALREADY_TOUCHING} <= statuses
    assert checked > 10


def test_set_poses_batch_and_queries_match_brute_force():
    rng = np.random.default_rng(5)
    specs = build_scene(rng, 30, motions=["static"])
    world = touche.CollisionWorld()
    for spec in specs:
        add_to_world(world, spec)
    shapes = [s["shape"] for s in specs[:-1]]
    handles = np.arange(len(shapes))
    poses = np.array([random_pose(rng, 2.5) for _ in shapes])
    world.set_poses(handles, poses)
    objects = specs
    expected = [(i, j) for i in range(len(objects)) for j in range(i + 1, len(objects))
                if objects[i]["group"] & objects[j]["mask"] and objects[j]["group"] & objects[i]["mask"]
                and touche.intersects(objects[i]["shape"], poses[i] if i < len(shapes) else None,
                                      objects[j]["shape"], poses[j] if j < len(shapes) else None)]
    np.testing.assert_array_equal(world.pairs(), np.array(expected).reshape(-1, 2))
    assert 0 < len(expected) < 200
    all_poses = list(poses) + [np.eye(4)]
    all_shapes = shapes + [objects[-1]["shape"]]
    probe = touche.Box([1.0, 0.6, 0.4])
    hit_rate = []
    for _ in range(12):
        pose = random_pose(rng, 3.0)
        expected_query = [h for h, (s, p) in enumerate(zip(all_shapes, all_poses))
                          if touche.intersects(probe, pose, s, p)]
        np.testing.assert_array_equal(world.query(probe, pose), expected_query)
        hit_rate.append(len(set(expected_query) - {len(shapes)}) > 0)  # hits besides the half-space
        handle, result = world.closest(probe, pose)
        distances = [touche.signed_distance(probe, pose, s, p) for s, p in zip(all_shapes, all_poses)]
        assert result.signed_distance == pytest.approx(min(distances), abs=1e-9)
        assert distances[handle] == pytest.approx(min(distances), abs=1e-9)
        origin, direction = rng.uniform(-4, 4, 3), rng.normal(size=3)
        hits = world.raycast(origin, direction, 20.0)
        expected_hits = []
        for h, (s, p) in enumerate(zip(all_shapes, all_poses)):
            r = touche.raycast(s, p, origin, direction, 20.0)
            if r.hit:
                expected_hits.append((h, float(r.t)))
        assert [h for h, *_ in hits] == [h for h, _ in sorted(expected_hits, key=lambda x: (x[1], x[0]))]
    assert 0.1 < np.mean(hit_rate) < 1.0


@pytest.mark.parametrize("kind", range(7))
def test_world_boxes_are_conservative_and_tight(kind):
    rng = np.random.default_rng(40 + kind)
    world = touche.CollisionWorld()
    for _ in range(6):
        shape = random_shape(rng, kind)
        pose = random_pose(rng)
        h = world.add(shape, pose)
        box = world._broad.aabb(h)
        for axis in range(3):
            for sign in (1.0, -1.0):
                normal = np.zeros(3)
                normal[axis] = -sign  # solid side beyond the box face: x_axis >= max (or <= min)
                face = box[axis + 3] if sign > 0 else box[axis]
                gap = touche.signed_distance(shape, pose, touche.HalfSpace(normal, -sign * face), None)
                # the shape never crosses the face; the face touches the shape up to the padding
                assert -1e-9 <= gap <= 1e-7 * (1 + np.abs(pose[:3, 3]).sum() + shape.scale)


def test_meshes_in_a_world():
    """Meshes go through the public verbs: where touche.intersects answers mesh pairs the world
    reports exactly the brute-force pairs; where it does not, adding the second mesh raises."""
    mesh = touche.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                               [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    kinds_ = (mesh.kind, mesh.kind)
    world = touche.CollisionWorld()
    poses = [touche.Pose.from_translation([0.3 * i, 0.1 * i, 0.0]).matrix for i in range(5)]
    world.add(mesh, poses[0], group=1, mask=1)
    world.add(touche.Sphere(0.3), touche.Pose.from_translation([0.2, 0.2, 0.2]), group=1, mask=1)
    if kinds_ not in SUPPORTED_PAIRS:
        with pytest.raises(UnsupportedQuery, match="TriangleMesh and TriangleMesh"):
            world.add(mesh, poses[1], group=1, mask=1)
        world.add(mesh, poses[1], group=2, mask=2)  # masks exclude the mesh-mesh pair: fine
        np.testing.assert_array_equal(world.pairs(), [[0, 1]])
        return
    for p in poses[1:]:
        world.add(mesh, p, group=1, mask=1)
    shapes = [mesh, touche.Sphere(0.3)] + [mesh] * 4
    all_poses = [poses[0], touche.Pose.from_translation([0.2, 0.2, 0.2]).matrix] + poses[1:]
    expected = [(i, j) for i in range(6) for j in range(i + 1, 6)
                if touche.intersects(shapes[i], all_poses[i], shapes[j], all_poses[j])]
    assert 0 < len(expected) < 15
    np.testing.assert_array_equal(world.pairs(), np.array(expected).reshape(-1, 2))


def test_unsupported_motion_and_step_errors_name_the_pair(monkeypatch):
    world = touche.CollisionWorld()
    with pytest.raises(UnsupportedQuery, match="QuadraticMatrix"):
        world.add(touche.Box([1, 1, 1]), motion=touche.QuadraticMatrix(np.eye(4)))
    a = world.add(touche.Sphere(1.0), motion=touche.Linear([1.0, 0, 0]))
    b = world.add(touche.Box([1, 1, 1]), touche.Pose.from_translation([1.5, 0, 0]))

    def refuse(*args, **kwargs):
        raise UnsupportedQuery("time_of_impact", args[0], args[2])

    monkeypatch.setattr(touche, "time_of_impact", refuse)
    with pytest.raises(UnsupportedQuery, match=rf"CollisionWorld pair \({a}, {b}\): touche.time_of_impact"):
        world.step(0.1)


def test_motions_can_be_replaced():
    world = touche.CollisionWorld()
    pose = touche.Pose.from_translation([0, 0, 5]).matrix
    h = world.add(touche.Box([1, 1, 1]), motion=touche.Screw([0, 0, -10.0], [0, 0, 1.0], pose))
    floor = world.add(touche.Box([10, 10, 1]))
    with pytest.raises(GeometryError, match="Screw motion; use set_motion"):
        world.set_pose(h, np.eye(4))
    assert world.step(0.1) == [] and world.pose(h)[2, 3] == pytest.approx(4.0)
    world.set_motion(h, None)  # frozen where it is
    assert world.step(1.0) == [] and world.pose(h)[2, 3] == pytest.approx(4.0)
    world.set_velocity(h, [0, 0, -10.0])
    events = world.step(0.5)
    assert [(e.a, e.b) for e in events] == [(h, floor)]
    assert events[0].time == pytest.approx(0.3, abs=1e-9)  # 4 - 0.5 - 0.5 = 3 units at 10 / s
    world.set_pose(h, touche.Pose.from_translation([0, 0, 9]))  # a Linear velocity is kept
    assert world.motion(h).velocity.tolist() == [0, 0, -10.0]
    assert world.motion(floor) is None


def test_bad_input():
    world = touche.CollisionWorld()
    h = world.add(touche.Sphere(1.0))
    with pytest.raises(GeometryError, match="dt"):
        world.step(-1.0)
    with pytest.raises(GeometryError, match="dt"):
        world.step(np.nan)
    with pytest.raises(GeometryError, match="unknown object 7"):  # an IdError: also a KeyError
        world.remove(7)
    with pytest.raises(KeyError, match="unknown object 7"):
        world.set_pose(7, np.eye(4))
    with pytest.raises(GeometryError, match="group"):
        world.add(touche.Sphere(1.0), group=1.5)
    with pytest.raises(GeometryError, match="unknown broad phase"):
        touche.CollisionWorld("no_such_structure")
    with pytest.raises(GeometryError, match="2 handles for 1 poses"):
        world.set_poses([h, h], np.eye(4)[None])
    with pytest.raises(GeometryError, match="same handle twice"):
        world.set_poses([h, h], np.stack([np.eye(4)] * 2))
    with pytest.raises(GeometryError):
        world.set_pose(h, np.full((4, 4), np.nan))
    with pytest.raises(GeometryError, match="not a batch"):
        world.add(touche.Sphere(1.0), motion=touche.Linear(np.zeros((2, 3))))
    with pytest.raises(GeometryError, match="touche motion"):
        world.add(touche.Sphere(1.0), motion="fast")
    with pytest.raises(GeometryError, match="start pose"):
        world.add(touche.Sphere(1.0), touche.Pose.from_translation([1, 0, 0]),
                  motion=touche.Screw([1, 0, 0], [0, 0, 1]))
    with pytest.raises(GeometryError, match="direction"):
        world.raycast([0, 0, 0], [0, 0, 0])
    with pytest.raises(GeometryError, match="max_t"):
        world.raycast([0, 0, 0], [1, 0, 0], -1.0)
    assert len(world) == 1


# ---------------------------------------------------------------------------------- threads
@pytest.mark.parametrize("name", ["dynamic_tree", "sort_and_sweep", "uniform_grid"])
def test_concurrent_queries_refresh_once_and_agree(name):
    # issue 23 finding 1: query() refreshed the broad phase lazily in every thread at once
    # (update_many racing on the tree): hangs, crashes, wrong hits. Now one refresh, same answers.
    rng = np.random.default_rng(23)
    world = touche.CollisionWorld(name)
    shapes = [touche.Sphere(0.3), touche.Box([0.5, 0.4, 0.3]), touche.Capsule(0.2, 0.5)]
    handles = [world.add(shapes[i % 3], random_pose(rng, 4.0)) for i in range(300)]
    probes = [(touche.Sphere(0.9), random_pose(rng, 4.0)) for _ in range(12)]
    refreshes = []
    update_many = world._broad.update_many
    world._broad.update_many = lambda ids, boxes: (refreshes.append(1), update_many(ids, boxes))[1]
    for _ in range(4):
        poses = np.array([random_pose(rng, 4.0) for _ in handles])
        world.set_poses(handles, poses)
        expected = [world.query(s, p) for s, p in probes]
        nearest = [world.closest(s, p)[0] for s, p in probes]
        rays = [[h for h, *_ in world.raycast(p[:3, 3], [1.0, 0.2, 0.1], 5.0)] for _, p in probes]
        world.set_poses(handles, poses)  # same poses, broad phase stale again
        refreshes.clear()

        def work(k):
            order = np.random.default_rng(k).permutation(len(probes))
            return {int(i): (world.query(*probes[i]), world.closest(*probes[i])[0],
                             [h for h, *_ in world.raycast(probes[i][1][:3, 3], [1.0, 0.2, 0.1], 5.0)])
                    for i in order}

        for answers in run_threads(work, 8, timeout=60.0):
            for i in range(len(probes)):
                np.testing.assert_array_equal(answers[i][0], expected[i])
                assert answers[i][1] == nearest[i] and answers[i][2] == rays[i]
        assert len(refreshes) == 1
        if name == "dynamic_tree":
            world._broad.check()


def test_concurrent_add_remove_one_world():
    # issue 23 finding 5: add / remove from several threads raised spurious IdErrors (and
    # could corrupt the world); mutations now take the world's lock
    world = touche.CollisionWorld()
    sphere = touche.Sphere(0.2)
    keep = [world.add(sphere, touche.Pose.from_translation([k, 0.0, 0.0])) for k in range(20)]

    def work(k):
        rng = np.random.default_rng(k)
        mine = []
        for step in range(150):
            mine.append(world.add(sphere, touche.Pose.from_translation(rng.uniform(-5, 5, 3))))
            if step % 3 == 2:
                world.remove(mine.pop(int(rng.integers(len(mine)))))
            if step % 10 == 0:
                world.query(touche.Sphere(1.0), touche.Pose.from_translation(rng.uniform(-5, 5, 3)))
        return mine

    left = run_threads(work, 8, timeout=60.0)
    handles = [h for mine in left for h in mine]
    assert len(set(handles)) == len(handles) == 8 * 100
    assert sorted(world.handles) == sorted(keep + handles) and len(world._broad) == len(world)
    world._broad.check()
    for h in handles:
        world.remove(h)
    assert sorted(world.handles) == keep
    expected = sorted((a, b) for a in keep for b in keep if a < b and abs(a - b) * 1.0 <= 0.4)
    assert [tuple(p) for p in world.pairs().tolist()] == expected


def test_step_callback_may_use_the_world():
    # step holds the write lock: a callback in the same thread may query and change the world
    world = touche.CollisionWorld()
    seen = []

    def callback(event):
        seen.append(len(world.query(touche.Sphere(5.0), None)))
        world.add(touche.Sphere(1.0), touche.Pose.from_translation([20.0, 0, 0]))
        return False

    world.add(touche.Sphere(1.0), callback=callback)
    world.add(touche.Sphere(1.0), touche.Pose.from_translation([1.5, 0, 0]))
    assert len(world.step(0.1)) == 1 and seen == [2] and len(world) == 3
