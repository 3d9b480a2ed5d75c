"""Every query family from 8 threads at once against the same calls made one after another
(issue 23: the concurrency contract in README "Threads and processes").

Answers must be bit-identical: the kernels are deterministic and share nothing between calls, so
any difference is a race. Each thread runs every task twice, in its own shuffled order, on
shapes, meshes, broad phases and a world that all threads share. Bounded: ~10-20 s on 2 busy
cores once the kernels are compiled.
"""
from __future__ import annotations

import threading
from enum import Enum

import numpy as np
import pytest

import touche as tc
from touche import bvh
from touche.broadphase import DynamicAABBTree, SortAndSweep, UniformGrid
from threaded import run_threads

THREADS = 8


def canonical(value):
    """A hashable, exact rendering of a result: arrays by bytes, objects by their fields."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Enum):
        return ("enum", type(value).__name__, value.value)
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return ("scalar", type(value).__name__, np.asarray(value).tobytes())
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, canonical(v)) for k, v in value.items())))
    fields = {}
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(value, name) and not name.startswith("__"):
                fields[name] = getattr(value, name)
    fields.update(getattr(value, "__dict__", {}))
    assert fields, f"cannot compare a {type(value).__name__}"
    return (type(value).__name__, tuple(sorted((k, canonical(v)) for k, v in fields.items() if not callable(v))))


def closed_mesh(subdivisions, radius=1.0):
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return tc.TriangleMesh(np.asarray(sphere.vertices), np.asarray(sphere.faces))


def compare_with_serial(tasks):
    """Run every task serially, then all of them from THREADS threads (each task twice per
    thread, shuffled): the number of answers that differ, by task name."""
    expected = {name: canonical(task()) for name, task in tasks.items()}
    names = sorted(tasks)

    def work(k):
        rng = np.random.default_rng(k)
        order = [names[i] for i in rng.permutation(len(names))] * 2
        return [name for name in order if canonical(tasks[name]()) != expected[name]]

    differences = {}
    for wrong in run_threads(work, THREADS):
        for name in wrong:
            differences[name] = differences.get(name, 0) + 1
    return differences


def test_verbs_single_and_batch():
    rng = np.random.default_rng(0)
    box, sphere, capsule = tc.Box([1.0, 0.6, 0.4]), tc.Sphere(0.5), tc.Capsule(0.3, 1.0)
    cylinder, hull = tc.Cylinder(0.4, 1.0), tc.ConvexPolyhedron(rng.normal(size=(20, 3)))
    poses = tc.Pose.random(300, scale=1.5, seed=1)
    one = tc.Pose.from_rotvec([0.1, 0.4, 0.2], [0.7, 0.2, 0.1])
    points = rng.uniform(-2, 2, (300, 3))
    origins = rng.uniform(-3, 3, (300, 3))
    directions = -origins + rng.normal(scale=0.3, size=(300, 3))
    velocities = rng.normal(size=(300, 3))
    start = tc.Pose.from_translation([3.0, 0.2, 0.1])
    tasks = {
        "intersects single": lambda: [tc.intersects(a, one, b, None) for a, b in
                                      ((box, sphere), (capsule, hull), (cylinder, box))],
        "intersects batch": lambda: [tc.intersects(a, poses, b, None) for a, b in ((box, hull), (cylinder, capsule))],
        "distance single": lambda: [tc.distance(a, one, b, None) for a, b in ((box, box), (hull, cylinder))],
        "distance batch": lambda: [tc.distance(a, poses, b, None) for a, b in ((box, capsule), (cylinder, hull))],
        "signed_distance batch": lambda: tc.signed_distance(hull, poses, box, None),
        "closest_point single": lambda: tc.closest_point(cylinder, one, points[0]),
        "closest_point batch": lambda: [tc.closest_point(s, one, points) for s in (box, capsule, hull)],
        "contacts single": lambda: tc.contacts(box, one, box, None),
        "contacts batch": lambda: [tc.contacts(box, poses, b, None) for b in (box, hull)],
        "intersection single": lambda: tc.intersection(box, one, hull, None),
        "raycast single": lambda: tc.raycast(capsule, one, origins[0], directions[0], max_t=10.0),
        "raycast batch": lambda: [tc.raycast(s, one, origins, directions, max_t=10.0) for s in (box, hull, cylinder)],
        "time_of_impact single": lambda: [tc.time_of_impact(a, tc.Linear([-1.0, 0.1, 0.0], start), b, tc.Static(),
                                                            t_max=5.0) for a, b in ((box, box), (cylinder, hull))],
        "time_of_impact screw": lambda: tc.time_of_impact(box, tc.Screw([-1.0, 0, 0], [0, 0, 2.0], start), hull,
                                                          tc.Static(), t_max=5.0),
        "time_of_impact batch": lambda: tc.time_of_impact(box, tc.Linear(velocities, poses), capsule,
                                                          tc.Static(), t_max=1.0),
    }
    assert compare_with_serial(tasks) == {}


def test_mesh_queries_on_fresh_meshes():
    # the meshes are new, so the first calls of the threads also race to build their trees
    mesh, other = closed_mesh(3), closed_mesh(2, radius=0.7)
    rng = np.random.default_rng(3)
    poses = tc.Pose.random(60, scale=1.5, seed=4)
    one = tc.Pose.from_rotvec([0.2, 0.1, 0.3], [0.9, 0.3, 0.2])
    points = rng.uniform(-1.5, 1.5, (200, 3))
    origins = rng.uniform(-3, 3, (200, 3))
    directions = -origins
    sphere, box = tc.Sphere(0.3), tc.Box([0.4, 0.4, 0.4])
    tasks = {
        "mesh intersects shape batch": lambda: tc.intersects(mesh, None, box, poses),
        "mesh distance shape batch": lambda: tc.distance(mesh, None, sphere, poses),
        "mesh distance mesh": lambda: tc.distance(mesh, None, other, one),
        "bvh intersects batch": lambda: bvh.intersects(mesh, None, other, poses),
        "bvh distance": lambda: bvh.distance(mesh, None, other, one),
        "bvh collide": lambda: bvh.collide(mesh, None, other, one).pairs,
        "mesh raycast first": lambda: tc.raycast(mesh, one, origins, directions),
        "mesh raycast all": lambda: tc.raycast(mesh, one, origins, directions, mode="all"),
        "mesh closest_point": lambda: tc.closest_point(mesh, one, points),
        "contains": lambda: tc.contains(mesh, one, points),
        "winding_number": lambda: tc.winding_number(other, None, points),
        "signed_distance_points": lambda: tc.signed_distance_points(mesh, None, points),
        "mesh time_of_impact": lambda: tc.time_of_impact(other, tc.Linear([-1.0, 0, 0],
                                                                          tc.Pose.from_translation([3.0, 0, 0])),
                                                         mesh, tc.Static(), t_max=5.0),
        "clearance": lambda: tc.clearance(mesh, None, other, one),
    }
    assert compare_with_serial(tasks) == {}


def test_lazy_mesh_tree_is_built_once(monkeypatch):
    # issue 23 finding 7: a fresh mesh hit by 8 threads built its BVH 8 times
    mesh = closed_mesh(3)
    builds = []
    build_tree = bvh.build_tree  # every BVH build goes through it (serial, or on threads for big meshes)

    def counting(*args, **kwargs):
        builds.append(1)
        return build_tree(*args, **kwargs)

    monkeypatch.setattr(bvh, "build_tree", counting)
    trees = run_threads(lambda k: mesh.bvh, THREADS)
    assert len(builds) == 1 and all(tree is trees[0] for tree in trees)


@pytest.mark.parametrize("structure", [DynamicAABBTree, SortAndSweep, UniformGrid])
def test_broad_phase_queries(structure):
    rng = np.random.default_rng(5)
    centers = rng.uniform(0, 10, (2000, 3))
    boxes = np.hstack([centers - 0.1, centers + rng.uniform(0.05, 0.3, (2000, 3))])
    broad = structure()
    broad.rebuild(boxes)
    queries = np.hstack([rng.uniform(0, 10, (40, 3)), np.zeros((40, 3))])
    queries[:, 3:] = queries[:, :3] + 0.8
    tasks = {
        "pairs": broad.pairs,
        "query_aabb": lambda: [broad.query_aabb(q) for q in queries],
        "query_sphere": lambda: [broad.query_sphere(q[:3], 0.7) for q in queries],
        "query_ray": lambda: [broad.query_ray(q[:3], [1.0, 0.5, 0.2], 8.0, return_t=True) for q in queries],
    }
    broad.update_many(np.arange(2000), boxes)  # stale again: the threads' first queries rebuild
    assert compare_with_serial(tasks) == {}


def test_world_queries():
    rng = np.random.default_rng(6)
    world = tc.CollisionWorld()
    shapes = [tc.Sphere(0.3), tc.Box([0.5, 0.4, 0.3]), tc.Capsule(0.2, 0.6), closed_mesh(1, radius=0.4)]
    handles = [world.add(shapes[i % 4], tc.Pose.from_rotvec(rng.normal(size=3), rng.uniform(0, 8, 3)))
               for i in range(400)]
    probes = np.tile(np.eye(4), (20, 1, 1))
    probes[:, :3, 3] = rng.uniform(0, 8, (20, 3))
    tasks = {
        "pairs": world.pairs,
        "query": lambda: [world.query(tc.Sphere(0.8), p) for p in probes],
        "closest": lambda: [world.closest(tc.Box([0.3, 0.3, 0.3]), p) for p in probes],
        "raycast": lambda: [world.raycast(p[:3, 3], [1.0, 0.3, -0.2], 6.0) for p in probes],
        "pose": lambda: [world.pose(h) for h in handles[::7]],
    }
    world.set_poses(handles[:50], [world.pose(h) for h in handles[:50]])  # stale broad phase
    assert compare_with_serial(tasks) == {}


def test_read_write_lock_rules():
    import copy
    import pickle

    from touche._locks import ReadWriteLock

    lock = ReadWriteLock()
    order = []
    reading, writer_waiting = threading.Event(), threading.Event()

    def reader():
        with lock.read():
            reading.set()
            writer_waiting.wait(10)
            order.append("reader done")

    def writer():
        reading.wait(10)
        writer_waiting.set()
        with lock.write():
            order.append("writer in")

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert order == ["reader done", "writer in"]  # the writer waited for the reader
    with lock.write():  # a writer may write and read again (re-entrant)
        with lock.read():
            with lock.write():
                pass
    with lock.read():
        with pytest.raises(RuntimeError, match="reading"):  # a reader may not start writing
            lock.acquire_write()
    with lock.write():
        fresh = pickle.loads(pickle.dumps(lock))
        fresh2 = copy.deepcopy(lock)
    for other in (fresh, fresh2):  # copies are new, free locks
        done = []
        thread = threading.Thread(target=lambda: (other.acquire_write(), done.append(1), other.release_write()))
        thread.start()
        thread.join(10)
        assert done == [1]
