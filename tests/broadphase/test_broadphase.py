"""Broad-phase structures vs the O(n^2) reference (tests/naive/broadphase.py) on seeded scenes."""
import numpy as np
import pytest

from naive.broadphase import SCENES, naive_pairs, naive_query_aabb, naive_query_ray, naive_query_sphere, scene
from touche import GeometryError
from touche.broadphase.structures import _visit_stamps
from touche.broadphase import (STRUCTURES, BroadPhase, DynamicAABBTree, IdError, IncrementalSweepAndPrune, LinearOctree,
                               UniformGrid)
from threaded import run_threads

NAMES = sorted(STRUCTURES)


def build(name, boxes, ids=None):
    structure = STRUCTURES[name]()
    structure.rebuild(boxes, ids)
    return structure


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", SCENES)
def test_pairs_equal_brute_force(name, kind):
    rng = np.random.default_rng(11 + SCENES.index(kind))
    boxes = scene(kind, 240, rng)
    expected = naive_pairs(boxes)
    got = build(name, boxes).pairs()
    assert got.dtype == np.int64 and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    # the scene exercises both outcomes: some but not all pairs overlap (identical: all do)
    n = boxes.shape[0]
    if kind == "identical":
        assert expected.shape[0] == n * (n - 1) // 2
    else:
        assert 0 < expected.shape[0] < n * (n - 1) // 4


@pytest.mark.parametrize("name", NAMES)
def test_touching_faces_count(name):
    # two unit cubes sharing a face, two sharing only a corner, one separated by 1e-12
    boxes = np.array([[0, 0, 0, 1, 1, 1], [1, 0, 0, 2, 1, 1], [2, 1, 1, 3, 2, 2], [3 + 1e-12, 0, 0, 4, 1, 1],
                      [-5, -5, -5, -5, -5, -5]], dtype=float)
    got = build(name, boxes).pairs()
    np.testing.assert_array_equal(got, [[0, 1], [1, 2]])


@pytest.mark.parametrize("name", NAMES)
def test_huge_and_tiny_scales(name):
    rng = np.random.default_rng(5)
    for scale in (1e-6, 1e6):
        boxes = scene("uniform", 150, rng) * scale
        np.testing.assert_array_equal(build(name, boxes).pairs(), naive_pairs(boxes))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["uniform", "mixed"])
def test_larger_scenes(name, kind):
    """3000 boxes: deeper trees, several grid / octree levels, k-d leaves split many times."""
    rng = np.random.default_rng(31 + SCENES.index(kind))
    boxes = scene(kind, 3000, rng)
    ids = rng.choice(10**15, 3000, replace=False)
    expected = naive_pairs(boxes, ids)
    assert 300 < expected.shape[0] < 50_000
    np.testing.assert_array_equal(build(name, boxes, ids).pairs(), expected)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["uniform", "mixed", "clustered"])
def test_incremental_sequence_matches_rebuild(name, kind):
    rng = np.random.default_rng(23 + SCENES.index(kind))
    boxes = scene(kind, 150, rng)
    ids = rng.choice(10**12, 150, replace=False)
    structure = build(name, boxes, ids)
    current = dict(zip(ids.tolist(), boxes))
    checks = 0
    for step in range(160):
        op = rng.integers(4)
        if op == 0:
            new_id = int(rng.integers(0, 10**12))
            if new_id in current:
                continue
            box = scene(kind, 1, rng)[0]
            structure.insert(new_id, box)
            current[new_id] = box
        elif op == 1 and len(current) > 2:
            victim = list(current)[rng.integers(len(current))]
            structure.remove(victim)
            del current[victim]
        elif op == 2:
            moving = rng.choice(list(current), 12, replace=False)
            extent = np.ptp(np.array(list(current.values())), axis=0).max()
            shift = np.tile(rng.normal(0, 0.03 * extent, (12, 3)), 2)
            new = np.array([current[i] for i in moving]) + shift
            structure.update_many(moving, new)
            current.update(zip(moving.tolist(), new))
        else:  # one object jumps far and grows
            victim = list(current)[rng.integers(len(current))]
            lo_all = np.min(np.array(list(current.values()))[:, :3], axis=0)
            hi_all = np.max(np.array(list(current.values()))[:, 3:], axis=0)
            c = rng.uniform(lo_all, hi_all)
            box = np.r_[c - 0.1 * (hi_all - lo_all), c + 0.1 * (hi_all - lo_all)]
            structure.update(victim, box)
            current[victim] = box
        if step % 16 == 0:
            id_arr = np.array(list(current), dtype=np.int64)
            box_arr = np.array([current[i] for i in id_arr])
            expected = naive_pairs(box_arr, id_arr)
            np.testing.assert_array_equal(structure.pairs(), expected)
            np.testing.assert_array_equal(build(name, box_arr, id_arr).pairs(), expected)
            checks += 1
    assert checks == 10
    assert len(structure) == len(current)
    np.testing.assert_array_equal(structure.ids, np.sort(np.array(list(current))))


@pytest.mark.parametrize("name", NAMES)
def test_queries_equal_brute_force(name):
    rng = np.random.default_rng(3)
    boxes = scene("mixed", 300, rng)
    ids = rng.choice(10**9, 300, replace=False)
    structure = build(name, boxes, ids)
    hit_counts = []
    for trial in range(40):
        lo = rng.uniform(-60, 50, 3)
        q = np.r_[lo, lo + rng.uniform(0, 20, 3)]
        expected = naive_query_aabb(boxes, ids, q)
        np.testing.assert_array_equal(structure.query_aabb(q), expected)
        center, radius = rng.uniform(-50, 50, 3), rng.uniform(0, 15)
        np.testing.assert_array_equal(structure.query_sphere(center, radius),
                                      naive_query_sphere(boxes, ids, center, radius))
        origin = rng.uniform(-60, 60, 3)
        direction = rng.normal(size=3)
        if trial % 4 == 0:
            direction[rng.integers(3)] = 0.0  # axis-parallel rays: zero components
        max_t = np.inf if trial % 2 else rng.uniform(0, 80)
        hit_ids, ts = structure.query_ray(origin, direction, max_t, return_t=True)
        expected_ray = naive_query_ray(boxes, ids, origin, direction, max_t)
        np.testing.assert_array_equal(np.sort(hit_ids), expected_ray)
        assert np.all(np.diff(ts) >= 0)  # ordered by entry t
        hit_counts.append(len(expected) > 0)
    assert 0.2 < np.mean(hit_counts) <= 1.0


def test_dynamic_tree_rebuild_is_balanced_and_exact():
    rng = np.random.default_rng(18)
    for n in (1, 2, 3, 1000):
        boxes = scene("mixed", n, rng)
        tree = DynamicAABBTree()
        tree.rebuild(boxes)
        leaves, height = tree.check()
        assert leaves == n and height <= int(np.ceil(np.log2(n))) if n > 1 else height == 0
        np.testing.assert_array_equal(tree.pairs(), naive_pairs(boxes))
        tree.insert(10**6, boxes[0])  # incremental insertion into the top-down tree
        tree.remove(0)
        tree.check()


def test_dynamic_tree_invariants_and_fat_boxes():
    rng = np.random.default_rng(8)
    boxes = scene("uniform", 400, rng)
    tree = DynamicAABBTree()
    for i, box in enumerate(boxes):
        tree.insert(i, box)
    leaves, height = tree.check()
    assert leaves == 400 and height <= 2 * np.log2(400) + 2  # rotations keep it balanced
    # small motions stay inside the fat boxes: nothing is re-inserted, answers still exact
    from touche._kernels import broadphase_tree as kt

    small = boxes.copy()
    small[:50] += 1e-4 * (boxes[:50, 3:4] - boxes[:50, 0:1])
    moved = kt.tree_update_many(*tree._tree_args(), tree._boxes, np.arange(50, dtype=np.int64), small[:50],
                                tree._margins, tree.predict)
    assert moved == 0
    np.testing.assert_array_equal(tree.pairs(), naive_pairs(small))
    tree.update_many(np.arange(400), boxes + 0.3)  # large motion: re-inserted
    tree.check()
    np.testing.assert_array_equal(tree.pairs(), naive_pairs(boxes + 0.3))


def test_incremental_sap_keeps_persistent_pairs():
    rng = np.random.default_rng(4)
    boxes = scene("uniform", 200, rng)
    sap = IncrementalSweepAndPrune()
    for i, box in enumerate(boxes):  # one at a time: insertion sort of the endpoints
        sap.insert(i, box)
    assert sap.pair_count == naive_pairs(boxes).shape[0]
    np.testing.assert_array_equal(sap.pairs(), naive_pairs(boxes))


def test_grid_time_stamp_wrap():
    # the mailbox counter wraps: every mailbox is cleared and counting restarts, so a query
    # right after the wrap still sees every object (SEED-NOTES L15806)
    rng = np.random.default_rng(9)
    boxes = scene("uniform", 100, rng)
    grid = UniformGrid(cell_size=0.04, max_cells=10_000)  # small cells: objects in several cells
    grid.rebuild(boxes)
    q = np.array([0.3, 0.3, 0.3, 0.6, 0.6, 0.6])
    expected = naive_query_aabb(boxes, np.arange(100), q)
    np.testing.assert_array_equal(grid.query_aabb(q), expected)
    assert grid._keys.shape[0] > 3 * 100 and not grid._oversize.any()
    assert expected.size > 3
    _, stamp = _visit_stamps(0)  # this thread's stamp counter (shared by its grid queries)
    assert stamp[0] > 0
    stamp[0] = 2147483646
    for _ in range(3):
        np.testing.assert_array_equal(grid.query_aabb(q), expected)
    assert stamp[0] < 10


@pytest.mark.parametrize("name", NAMES)
def test_bad_input(name):
    structure = STRUCTURES[name]()
    assert isinstance(structure, BroadPhase)
    with pytest.raises(GeometryError, match="NaN"):
        structure.insert(0, [0, 0, np.nan, 1, 1, 1])
    with pytest.raises(GeometryError, match="min > max"):
        structure.insert(0, [0, 0, 2, 1, 1, 1])
    with pytest.raises(GeometryError, match=r"shape \(n, 6\)"):
        structure.rebuild(np.zeros((3, 4)))
    with pytest.raises(GeometryError, match="non-negative"):
        structure.insert(-1, [0, 0, 0, 1, 1, 1])
    structure.insert(7, [0, 0, 0, 1, 1, 1])
    with pytest.raises(KeyError, match="already present"):
        structure.insert(7, [0, 0, 0, 1, 1, 1])
    with pytest.raises(KeyError, match="unknown id 8"):
        structure.update(8, [0, 0, 0, 1, 1, 1])
    with pytest.raises(KeyError, match="unknown id 8"):
        structure.remove(8)
    with pytest.raises(GeometryError, match="direction"):
        structure.query_ray([0, 0, 0], [0, 0, 0])
    with pytest.raises(GeometryError, match="radius"):
        structure.query_sphere([0, 0, 0], -1.0)
    with pytest.raises(GeometryError, match="duplicate"):
        structure.rebuild(np.zeros((2, 6)), ids=[3, 3])
    # failed calls changed nothing
    np.testing.assert_array_equal(structure.ids, [7])
    assert structure.pairs().shape == (0, 2)
    np.testing.assert_array_equal(structure.query_aabb([0.5, 0.5, 0.5, 2, 2, 2]), [7])


@pytest.mark.parametrize("name", NAMES)
def test_ray_edge_cases(name):
    """Rays along box faces and cell boundaries, through corners, from inside boxes, with zero
    and tiny direction components, far outside the scene, at 1e-6 and 1e6 scales, with
    negative coordinates: the same hits (and entry t) as the per-box slab test."""
    structure = STRUCTURES[name]() if name != "uniform_grid" else UniformGrid(cell_size=1.0)
    lattice = scene("touching", 64, np.random.default_rng(0))  # unit cubes on integer coordinates
    rays = [([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),  # along an edge shared by several cubes
            ([-1.0, 1.0, 1.0], [1.0, 0.0, 0.0]),  # along a line shared by four cubes
            ([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]),  # through the corners
            ([0.5, 0.5, 0.5], [0.0, 0.0, 1.0]),  # from inside
            ([5.0, 1.0, 0.5], [-1.0, 1e-300, 0.0]),  # tiny component
            ([-1.0, 2.0, 0.0], [3.0, 1e-3, 1e-9]),  # skewed: dx >> dy >> dz
            ([1.0, -1.0, 2.0], [1e-3, 3.0, 0.0]),  # skewed the other way: dy >> dx
            ([10.0, 10.0, 10.0], [1.0, 0.0, 0.0]),  # misses everything
            ([4.0, 4.0, 4.0], [-1.0, -1.0, -1.0]),  # enters at the far corner (4, 4, 4)
            ([2.0, 2.0, -3.0], [0.0, 0.0, 1.0])]  # axis-parallel through the middle
    for scale, offset in ((1.0, 0.0), (1e-6, -3e-6), (1e6, -2.5e6), (1.0, -1000.0)):
        boxes = lattice * scale + offset
        ids = np.arange(boxes.shape[0]) * 3 + 1
        structure.rebuild(boxes, ids)
        for origin, direction in rays:
            origin = np.array(origin) * scale + offset
            for max_t in (np.inf, 2.5 * scale):
                got, ts = structure.query_ray(origin, direction, max_t, return_t=True)
                expected = naive_query_ray(boxes, ids, origin, np.array(direction), max_t)
                np.testing.assert_array_equal(np.sort(got), expected, err_msg=f"{name} {scale} {origin} {direction}")
                if got.size:
                    reference = {i: t for i, t in zip(*slab_entries(boxes, ids, origin, direction, max_t))}
                    np.testing.assert_allclose(ts, [reference[i] for i in got], rtol=1e-12, atol=1e-300)


def slab_entries(boxes, ids, origin, direction, max_t):
    """Entry parameters of the hit boxes by the slab formula, written out per box."""
    out_ids, out_t = [], []
    for box, i in zip(boxes, ids):
        t0, t1, ok = 0.0, max_t, True
        for k in range(3):
            if direction[k] == 0.0:
                ok &= box[k] <= origin[k] <= box[k + 3]
                continue
            ta, tb = sorted(((box[k] - origin[k]) / direction[k], (box[k + 3] - origin[k]) / direction[k]))
            t0, t1 = max(t0, ta), min(t1, tb)
        if ok and t0 <= t1:
            out_ids.append(int(i))
            out_t.append(t0)
    return out_ids, out_t


def test_grid_ray_walk_with_small_cells_matches_brute_force():
    """The 3D-DDA walk (7.4.2) over many cells: random rays at random angles, in a grid whose
    cells are far smaller than the scene, hits equal the brute-force slab test."""
    rng = np.random.default_rng(21)
    boxes = scene("mixed", 400, rng) - 20.0  # negative and positive coordinates
    grid = UniformGrid(cell_size=0.7, max_cells=10**6)
    grid.rebuild(boxes)
    grid.pairs()  # builds the grid
    assert grid._cell < 2 ** 20 // 50  # dozens of cells per axis at least
    hits = 0
    for trial in range(200):
        origin = rng.uniform(-90, 50, 3)
        direction = rng.normal(size=3) * 10.0 ** rng.integers(-3, 3, 3)
        if trial % 2:  # aimed at a box centre
            target = boxes[rng.integers(400)]
            direction = 0.5 * (target[:3] + target[3:]) - origin
        if trial % 5 == 0:
            direction[rng.integers(3)] = 0.0
        max_t = np.inf if trial % 3 else rng.uniform(0, 50) / np.linalg.norm(direction)
        got = grid.query_ray(origin, direction, max_t)
        expected = naive_query_ray(boxes, np.arange(400), origin, direction, max_t)
        np.testing.assert_array_equal(np.sort(got), expected)
        hits += expected.size > 0
    assert 40 < hits < 190


def test_octree_objects_touching_the_splitting_planes():
    """Boxes whose faces lie exactly on the octree's splitting planes straddle them (SEED-NOTES
    L14279: |delta| <= radius): pairs across the planes are found."""
    boxes = np.array([[0, 0, 0, 8, 8, 8],  # fixes the lattice: [0, 8]^3, centre planes at 4
                      [2, 2, 2, 4, 3, 3], [4, 2, 2, 6, 3, 3],  # touch at x = 4
                      [2, 4, 2, 3, 6, 3], [2, 1, 2, 3, 4, 3],  # touch at y = 4
                      [6, 6, 4, 7, 7, 5], [6, 6, 3, 7, 7, 4]], dtype=float)  # touch at z = 4
    for name in ("linear_octree", "loose_octree", "hierarchical_grid", "uniform_grid"):
        np.testing.assert_array_equal(build(name, boxes).pairs(), naive_pairs(boxes))
    np.testing.assert_array_equal(build("linear_octree", boxes).query_aabb([4, 4, 4, 4, 4, 4]), [0])


@pytest.mark.parametrize("name", NAMES)
def test_id_errors_are_geometry_errors(name):
    structure = build(name, scene("uniform", 20, np.random.default_rng(2)), np.arange(20) + 100)
    for call in (lambda: structure.remove(5), lambda: structure.update(5, [0, 0, 0, 1, 1, 1]),
                 lambda: structure.update_many([100, 5], np.zeros((2, 6))), lambda: structure.insert(100, np.zeros(6))):
        with pytest.raises(IdError) as info:
            call()
        assert isinstance(info.value, GeometryError) and isinstance(info.value, KeyError)
    with pytest.raises(GeometryError, match="same id twice"):
        structure.update_many([100, 100], np.zeros((2, 6)))
    with pytest.raises(GeometryError, match="integers"):
        structure.update_many([100.0, 101.0], np.zeros((2, 6)))
    with pytest.raises(GeometryError, match="NaN"):
        structure.update_many([100], [[0, 0, 0, np.nan, 1, 1]])
    structure.update_many([], np.zeros((0, 6)))  # nothing to do
    assert len(structure) == 20 and structure.pairs().shape[1] == 2


# ---------------------------------------------------------------------------------- threads
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_queries_from_threads_match_serial(name):
    # issue 23 finding 2: UniformGrid's box / ray queries shared one mailbox between calls, so
    # queries from several threads dropped hits; every structure, each query family, 8 threads,
    # from a stale state (the first queries rebuild / re-sort lazily)
    rng = np.random.default_rng(2)
    boxes = scene("uniform", 400, rng)
    structure = STRUCTURES[name]() if name != "uniform_grid" else UniformGrid(cell_size=0.03, max_cells=10_000)
    structure.rebuild(boxes)
    queries = np.sort(rng.uniform(0, 1, (60, 2, 3)), axis=1).reshape(60, 6)
    centers, radii = rng.uniform(0, 1, (60, 3)), rng.uniform(0.01, 0.2, 60)
    origins, directions = rng.uniform(-0.2, 1.2, (60, 3)), rng.normal(size=(60, 3))

    def answers():
        return ([structure.query_aabb(q) for q in queries],
                [structure.query_sphere(c, r) for c, r in zip(centers, radii)],
                [structure.query_ray(o, d, 2.0) for o, d in zip(origins, directions)],
                structure.pairs())

    expected = ([naive_query_aabb(boxes, np.arange(400), q) for q in queries],
                [naive_query_sphere(boxes, np.arange(400), c, r) for c, r in zip(centers, radii)],
                [naive_query_ray(boxes, np.arange(400), o, d, 2.0) for o, d in zip(origins, directions)],
                naive_pairs(boxes))
    for _ in range(3):
        structure.update_many(np.arange(400), boxes)  # stale: lazy structures rebuild on first use
        for got in run_threads(lambda k: answers(), 8, timeout=60.0):
            for family in range(3):
                for a, b in zip(got[family], expected[family]):
                    np.testing.assert_array_equal(np.sort(a), np.sort(b))
            np.testing.assert_array_equal(got[3], expected[3])


@pytest.mark.parametrize("name", NAMES)
def test_mutation_from_threads_is_serialised(name):
    # inserts / updates / removes from several threads, with queries in between: every id once,
    # the final structure equals brute force
    rng = np.random.default_rng(5)
    boxes = scene("uniform", 8 * 60, rng)
    structure = STRUCTURES[name]()

    def work(k):
        mine = range(60 * k, 60 * (k + 1))
        for i in mine:
            structure.insert(i, boxes[i] + 1.0)
        structure.update_many(np.array(mine), boxes[60 * k: 60 * (k + 1)])
        structure.query_aabb(boxes[60 * k])
        for i in mine[::2]:
            structure.remove(i)
        return structure.pairs().shape

    run_threads(work, 8, timeout=60.0)
    keep = np.arange(8 * 60).reshape(8, 60)[:, 1::2].reshape(-1)
    np.testing.assert_array_equal(structure.ids, keep)
    np.testing.assert_array_equal(structure.pairs(), naive_pairs(boxes[keep], keep))
    if name == "dynamic_tree":
        structure.check()
