"""CollisionWorld vs brute force (every pair straight to the narrow phase, tests/naive_broadphase.py)."""
import numpy as np
import pytest

import touche
from naive_broadphase import naive_world_step
from touche import GeometryError, UnsupportedQuery


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


def build_scene(rng, n, broadphase="dynamic_tree", movers=3):
    world = touche.CollisionWorld(broadphase)
    objects = []
    for i in range(n):
        pose = random_pose(rng)
        velocity = rng.normal(0.0, 4.0, 3) if i % movers == 0 else None
        group, mask = int(rng.integers(1, 4)), int(rng.integers(1, 8))
        shape = random_shape(rng)
        motion = touche.Linear(velocity, pose) if velocity is not None else None
        handle = world.add(shape, pose, motion=motion, group=group, mask=mask, user_data=("obj", i))
        assert handle == i
        objects.append(dict(shape=shape, pose=pose.copy(), velocity=velocity, group=group, mask=mask))
    floor = touche.HalfSpace([0, 0, 1], -2.5)
    world.add(floor, group=1, mask=-1)
    objects.append(dict(shape=floor, pose=np.eye(4), velocity=None, group=1, mask=-1))
    return world, objects


@pytest.mark.parametrize("broadphase", ["dynamic_tree", "sort_and_sweep", "uniform_grid"])
def test_step_events_match_brute_force(broadphase):
    rng = np.random.default_rng(2026)
    world, objects = build_scene(rng, 24, broadphase)
    n_pairs = len(objects) * (len(objects) - 1) // 2
    counts = []
    for _ in range(3):
        events = world.step(0.1)
        expected = naive_world_step(objects, 0.1)
        got = [(e.time, e.a, e.b) for e in events]
        assert [g[1:] for g in got] == [e[1:] for e in expected]
        np.testing.assert_allclose([g[0] for g in got], [e[0] for e in expected], rtol=0, atol=1e-12)
        assert got == sorted(got)  # deterministic order: time, then handles
        for e in events:
            assert e.a < e.b and 0.0 <= e.time <= 0.1 and e.depth >= 0.0
            assert e.points.ndim == 2 and e.points.shape[1] == 3 and e.points.shape[0] >= 1
            assert abs(np.linalg.norm(e.normal) - 1.0) < 1e-6
            if e.a < len(objects) - 1:
                assert e.user_data_a == ("obj", e.a)
        counts.append(len(events))
        # poses advanced like the reference
        for h, o in enumerate(objects):
            np.testing.assert_allclose(world.pose(h), o["pose"], atol=1e-12)
    assert 0 < sum(counts) < 0.5 * 3 * n_pairs


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


def test_set_poses_batch_and_queries_match_brute_force():
    rng = np.random.default_rng(5)
    world, objects = build_scene(rng, 30, movers=10**9)
    shapes = [o["shape"] for o in objects[:-1]]
    handles = np.arange(len(shapes))
    poses = np.array([random_pose(rng, 2.5) for _ in shapes])
    world.set_poses(handles, poses)
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
        hit_rate.append(len(expected_query) > 1)
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


def test_unsupported_pairs_raise_at_add_time():
    mesh = touche.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                               [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    world = touche.CollisionWorld()
    world.add(mesh, group=1, mask=1)
    with pytest.raises(UnsupportedQuery, match="TriangleMesh and TriangleMesh"):
        world.add(mesh, group=1, mask=1)
    world.add(mesh, group=2, mask=2)  # masks exclude the mesh-mesh pair: fine
    assert len(world) == 2
    with pytest.raises(UnsupportedQuery, match="moving mesh"):
        world.add(touche.Sphere(1.0), motion=touche.Linear([1.0, 0, 0]), group=1, mask=1)


def test_bad_input():
    world = touche.CollisionWorld()
    h = world.add(touche.Sphere(1.0))
    with pytest.raises(GeometryError, match="dt"):
        world.step(-1.0)
    with pytest.raises(GeometryError, match="dt"):
        world.step(np.nan)
    with pytest.raises(KeyError, match="unknown object 7"):
        world.remove(7)
    with pytest.raises(KeyError, match="unknown object 7"):
        world.set_pose(7, np.eye(4))
    with pytest.raises(GeometryError, match="group"):
        world.add(touche.Sphere(1.0), group=1.5)
    with pytest.raises(GeometryError, match="unknown broad phase"):
        touche.CollisionWorld("no_such_structure")
    with pytest.raises(GeometryError, match="2 handles for 1 poses"):
        world.set_poses([h, h], np.eye(4)[None])
    with pytest.raises(GeometryError):
        world.set_pose(h, np.full((4, 4), np.nan))
    with pytest.raises(GeometryError, match="direction"):
        world.raycast([0, 0, 0], [0, 0, 0])
    assert len(world) == 1
