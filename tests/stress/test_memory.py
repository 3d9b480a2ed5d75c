"""Per-shape caches never keep a deleted shape alive and never confuse two shapes (issue 23,
findings 6 and 8), and create / query / delete cycles of meshes run with flat memory.

The soak here is bounded (200 cycles of a 20k-triangle mesh); benchmarks/soak_memory.py runs
10,000 and prints the figures.
"""
import gc
import importlib
import threading
import time
import weakref

import numpy as np
import pytest

import touche as tc
from touche import _cache, impact, meshquery

clearance = importlib.import_module("touche.clearance")  # (touche.clearance is also the function)


def rss_bytes():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096


def box_surface(n):
    """The surface of the cube [-1, 1]^3, each side an n x n grid: 12 n^2 triangles (its hull
    has 8 corners, so a cycle's cost is the trees, not Qhull)."""
    grid = np.linspace(-1.0, 1.0, n + 1)
    u, v = np.meshgrid(grid, grid, indexing="ij")
    u, v = u.ravel(), v.ravel()
    ones = np.ones_like(u)
    cells = np.arange(n * (n + 1)).reshape(n, n + 1)[:, :n].ravel()
    quads = np.stack([cells, cells + n + 1, cells + n + 2, cells + 1], axis=1)
    sides, faces = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            coords = [u, v]
            coords.insert(axis, sign * ones)
            side = np.stack(coords, axis=1)
            q = quads + sum(len(s) for s in sides)
            tris = np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])
            if (sign > 0) == (axis == 1):  # outward winding on every side
                tris = tris[:, ::-1]
            sides.append(side)
            faces.append(tris)
    return np.concatenate(sides), np.concatenate(faces)


VERTICES, FACES = box_surface(41)  # 20,172 triangles
PROBE = tc.Sphere(0.25)
MOVE = tc.Linear([0.0, 0.0, -1.0], tc.Pose.from_translation([0.1, 0.2, 3.0]))
FAR = tc.Pose.from_translation([0.0, 0.0, 4.0])


def use(mesh, small):
    """Every cached path: mesh time of impact (ball, hull, pair arguments), clearance (part), mesh
    distance (the mesh's BVH) and closest points on the mesh (meshquery's tree)."""
    tc.time_of_impact(mesh, None, PROBE, MOVE, 5.0)
    tc.time_of_impact(mesh, None, small, MOVE, 5.0)
    clearance.clearance(mesh, None, small, FAR)
    tc.distance(mesh, None, PROBE, FAR)
    tc.closest_point(mesh, None, [[0.0, 0.0, 3.0], [0.3, 0.1, -2.0]])


@pytest.fixture(scope="module")
def small():
    return tc.TriangleMesh(*box_surface(4))


def test_a_deleted_mesh_is_freed_after_every_cached_query(small):
    mesh = tc.TriangleMesh(VERTICES, FACES)
    use(mesh, small)
    assert len(impact._HULLS) and len(clearance._prepared) and len(meshquery._TREES)
    coordinates = weakref.ref(mesh._packed[2])
    del mesh
    gc.collect()
    assert coordinates() is None, "a cache still holds the deleted mesh"


@pytest.mark.slow
def test_caches_never_answer_for_another_mesh_with_a_reused_id(small):
    # meshes of different sizes created and dropped in a loop reuse ids; each answer must be its own
    for k in range(60):
        scale = 1.0 + (k % 7)
        mesh = tc.TriangleMesh(VERTICES * scale, FACES)
        ball = impact._ball(mesh)
        assert ball[3] == pytest.approx(np.sqrt(3.0) * scale, rel=1e-9)
        hull = impact._mesh_hull(mesh)
        assert np.abs(hull[2]).max() == scale
        part = clearance.prepare(mesh)
        assert part.mesh is mesh and np.abs(part.node_bounds).max() >= scale
        del mesh, part


@pytest.mark.slow
def test_create_query_delete_cycles_keep_memory_flat(small):
    mesh = None
    for _ in range(20):  # reach the steady state: allocator pools, kernels loaded
        mesh = tc.TriangleMesh(VERTICES, FACES)
        use(mesh, small)
        del mesh
    gc.collect()
    before = rss_bytes()
    started = time.perf_counter()
    for _ in range(200):
        mesh = tc.TriangleMesh(VERTICES, FACES)
        use(mesh, small)
        del mesh
    gc.collect()
    growth = rss_bytes() - before
    print(f"200 cycles of a {len(FACES):,}-triangle mesh: RSS growth {growth / 2**20:.1f} MB "
          f"in {time.perf_counter() - started:.1f} s")
    assert growth < 50 * 2**20


# --------------------------------------------------------------------------------------------
# the cache itself
class Key:
    """A weakly referenceable stand-in for a shape's coordinate array."""


def test_entries_die_with_their_keys_and_pairs_with_either():
    cache = _cache.WeakIdentityCache()
    a, b = Key(), Key()
    cache.put("a", a)
    cache.put("ab", a, b)
    assert cache.get(a) == "a" and cache.get(a, b) == "ab" and cache.get(b, a) is None
    del b
    gc.collect()
    assert len(cache) == 1 and cache.get(a) == "a"
    del a
    gc.collect()
    assert len(cache) == 0


def test_a_reused_id_is_never_taken_for_the_dead_key():
    cache = _cache.WeakIdentityCache()
    seen = set()
    for k in range(2000):
        key = Key()
        assert cache.get(key) is None  # a new object: never the value of a dead one with its id
        cache.put(k, key)
        seen.add(id(key))
        del key
    assert len(seen) < 2000  # ids were reused, so the test saw the case it is about
    assert len(cache) == 0


def test_bounded_cache_evicts_oldest_under_threads_without_errors():
    cache = _cache.WeakIdentityCache(limit=4)
    keys = [Key() for _ in range(64)]
    errors = []

    def work(offset):
        try:
            for round_ in range(200):
                key = keys[(offset + round_) % len(keys)]
                cache.get_or_build(lambda: round_, key)
        except Exception as exc:  # noqa: BLE001 - the test reports any
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k * 8,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) <= 4


def test_a_fresh_key_is_built_once_by_many_threads():
    cache = _cache.WeakIdentityCache()
    key = Key()
    builds = []
    barrier = threading.Barrier(8)

    def build():
        builds.append(1)
        time.sleep(0.05)  # every other thread arrives while the first one builds
        return object()

    results = []

    def work():
        barrier.wait()
        results.append(cache.get_or_build(build, key))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len({id(r) for r in results}) == 1 and len(results) == 8


def test_a_failed_build_reaches_every_waiter_and_caches_nothing():
    cache = _cache.WeakIdentityCache()
    key = Key()

    def build():
        time.sleep(0.02)
        raise ValueError("broken")

    outcomes = []

    def work():
        try:
            cache.get_or_build(build, key)
        except ValueError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == ["broken"] * 4 and len(cache) == 0
    assert cache.get_or_build(lambda: 7, key) == 7


def test_clearance_part_of_a_fresh_mesh_is_built_once_by_eight_threads(monkeypatch):
    mesh = tc.TriangleMesh(VERTICES, FACES)
    builds = []
    original = clearance._build_arrays

    def counting(*args):
        builds.append(1)
        return original(*args)

    monkeypatch.setattr(clearance, "_build_arrays", counting)
    barrier = threading.Barrier(8)
    parts = []

    def work():
        barrier.wait()
        parts.append(clearance.prepare(mesh))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len({id(p.node_index) for p in parts}) == 1
