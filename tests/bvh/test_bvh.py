"""Bounding-volume hierarchies (touche.bvh): tree invariants, mesh-mesh collide / intersects /
distance against all-pairs references (tests/naive/bvh.py) and against python-fcl and coal on real
meshes from pybullet_data."""
from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation


from naive import bvh as naive_bvh  # noqa: E402

import touche as tc  # noqa: E402
from touche.bvh import BVH, SPLITS  # noqa: E402

trimesh = pytest.importorskip("trimesh")


def _icosphere(level=1, radius=1.0):
    m = trimesh.creation.icosphere(level, radius=radius)
    return tc.TriangleMesh(m.vertices, m.faces)


def _random_poses(rng, n, spread):
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=int(rng.integers(1 << 30))).as_matrix()
    poses[:, :3, 3] = rng.uniform(-spread, spread, size=(n, 3))
    return poses


def _contents(tree, node):
    first, count, _ = tree.node_index[node]
    return tree.tri_vertices[first:first + count].reshape(-1, 3)


# ------------------------------------------------------------------------------------------------
# tree invariants
# ------------------------------------------------------------------------------------------------


def _check_tree(tree, mesh, tol):
    m = len(mesh.faces)
    assert np.array_equal(np.sort(tree.tri_ids), np.arange(m))
    # triangles in tree order are the mesh's triangles
    assert np.array_equal(tree.tri_vertices, np.asarray(mesh.vertices)[np.asarray(mesh.faces)[tree.tri_ids]])
    index = tree.node_index
    assert index[0, 0] == 0 and index[0, 1] == m
    depth = np.zeros(len(index), dtype=int)
    depth[0] = 1
    for node in range(len(index)):
        first, count, right = index[node]
        if right < 0:
            assert 1 <= count <= tree.leaf_size
            continue
        left = node + 1
        depth[left] = depth[right] = depth[node] + 1
        # children partition the parent's range, preorder: the left subtree precedes the right
        assert index[left, 0] == first and index[left, 0] + index[left, 1] == index[right, 0]
        assert index[left, 1] + index[right, 1] == count
        assert right > left
    assert depth.max() == tree.depth
    for node in range(len(index)):
        points = _contents(tree, node)
        row = tree.node_bounds[node]
        assert np.all(points >= row[0:3] - tol) and np.all(points <= row[3:6] + tol)
        axes = row[9:18].reshape(3, 3)
        assert np.allclose(axes @ axes.T, np.eye(3), atol=1e-12) and np.linalg.det(axes) > 0
        local = (points - row[6:9]) @ axes.T
        assert np.all(np.abs(local) <= row[18:21] + tol)
        rect = (points - row[21:24]) @ axes.T
        dx = np.maximum(0, np.maximum(-rect[:, 0], rect[:, 0] - row[24]))
        dy = np.maximum(0, np.maximum(-rect[:, 1], rect[:, 1] - row[25]))
        assert np.all(np.sqrt(dx * dx + dy * dy + rect[:, 2] ** 2) <= row[26] + tol)
        assert np.all(np.linalg.norm(points - row[27:30], axis=1) <= row[30] + tol)
        assert np.all(np.isfinite(row))
        if tree.kdop is not None:
            h = len(tree.kdop_directions)
            projections = points @ tree.kdop_directions.T
            assert np.all(projections >= tree.node_dops[node, :h] - tol)
            assert np.all(projections <= tree.node_dops[node, h:] + tol)
            assert np.allclose(projections.min(axis=0), tree.node_dops[node, :h], atol=tol)  # tight


@pytest.mark.parametrize("split", sorted(SPLITS))
@pytest.mark.parametrize("leaf_size", [1, 3])
def test_tree_invariants_and_bounding_volumes_contain_their_triangles(split, leaf_size):
    rng = np.random.default_rng(11)
    soup = rng.normal(size=(150, 3, 3))
    soup[::7, 2] = soup[::7, 0]  # zero-area triangles
    soup[::11] = soup[1]  # duplicate triangles
    mesh = tc.TriangleMesh(soup.reshape(-1, 3), np.arange(450).reshape(-1, 3))
    tree = BVH(mesh, None, split=split, leaf_size=leaf_size, kdop=18)
    _check_tree(tree, mesh, 1e-12)
    sphere = _icosphere(2)
    _check_tree(BVH(sphere, None, split=split, leaf_size=leaf_size, kdop=14), sphere, 1e-12)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_tree_at_extreme_scales_and_offsets(scale):
    m = trimesh.creation.icosphere(1)
    mesh = tc.TriangleMesh(m.vertices * scale + 3.0 * scale, m.faces)
    _check_tree(mesh.bvh, mesh, 1e-12 * scale * 10)


def test_single_triangle_and_all_degenerate_meshes_build_without_nan():
    one = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    _check_tree(one.bvh, one, 1e-12)
    points = tc.TriangleMesh([[1, 1, 1], [1, 1, 1], [1, 1, 1], [2, 2, 2]], [[0, 1, 2], [1, 2, 3], [3, 3, 3]])
    _check_tree(points.bvh, points, 1e-12)


def test_tree_pickles_with_its_mesh():
    mesh = _icosphere(1)
    tree = mesh.bvh
    copy = pickle.loads(pickle.dumps(mesh))
    assert copy._bvh is not None
    assert np.array_equal(copy.bvh.node_bounds, tree.node_bounds)
    again = pickle.loads(pickle.dumps(tree))
    assert np.array_equal(again.node_index, tree.node_index) and again.depth == tree.depth
    dopped = tc.bvh.build(mesh, kdop=26)
    again = pickle.loads(pickle.dumps(dopped))
    assert again.kdop == 26 and np.array_equal(again.node_dops, dopped.node_dops)


def test_closed_form_eigenframe_against_numpy():
    """bvh_volumes.fast_eigenframe_into (the per-node OBB frames) vs numpy.linalg.eigvalsh: an
    orthonormal right-handed frame whose Rayleigh quotients are the eigenvalues in decreasing
    order and which diagonalises the matrix, on random, repeated, nearly repeated, rank-1/2 and
    huge / tiny matrices (never NaN)."""
    from touche._kernels.trees.bvh_volumes import fast_eigenframe_into

    rng = np.random.default_rng(0)
    axes = np.empty((3, 3))
    for k in range(3000):
        kind = k % 5
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        if kind == 0:
            a = rng.normal(size=(3, 3))
            m = a @ a.T
        elif kind == 1:
            m = q @ np.diag(rng.choice([0.0, 1.0, 2.0], 3)) @ q.T
        elif kind == 2:
            m = q @ np.diag([1.0, 1.0 + 1e-9 * rng.normal(), rng.uniform(0, 2)]) @ q.T
        elif kind == 3:
            a = rng.normal(size=(3, 2)) * 10.0 ** rng.integers(-150, 150)
            m = a @ a.T
        else:
            v = rng.normal(size=3)
            m = np.outer(v, v) * 10.0 ** rng.integers(-100, 100)
        m = 0.5 * (m + m.T)
        fast_eigenframe_into(m.copy(), axes)
        assert np.all(np.isfinite(axes))
        assert np.allclose(axes @ axes.T, np.eye(3), atol=1e-12) and np.linalg.det(axes) > 0
        scale = max(np.abs(m).max(), 1e-300)
        expected = np.sort(np.linalg.eigvalsh(m))[::-1]
        projected = axes @ m @ axes.T
        assert np.abs(np.diag(projected) - expected).max() <= 1e-13 * scale
        assert np.abs(projected - np.diag(np.diag(projected))).max() <= 1e-13 * scale
    fast_eigenframe_into(np.zeros((3, 3)), axes)
    assert np.array_equal(axes, np.eye(3))


def test_rectangle_distance_bounds_bracket_the_exact_distance():
    """bvh_bounds.rect_distance_bounds (RSS bounds of the distance traversal) against the full
    enumeration rect_rect_distance: exact with a NaN threshold; otherwise lower <= exact <= upper
    and the threshold decided right. Random, parallel / coplanar and degenerate rectangles."""
    from touche._kernels.trees.bvh_bounds import rect_distance_bounds, rect_rect_distance

    rng = np.random.default_rng(5)
    for k in range(3000):
        ha = rng.uniform(0, 1, 2) * (rng.random(2) > 0.05)
        hb = rng.uniform(0, 1, 2) * (rng.random(2) > 0.05)
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        if k % 7 == 0:  # parallel or perpendicular, often coplanar below
            q = np.eye(3)[:, rng.permutation(3)] * rng.choice([-1, 1], 3)
        u, v = q[:, 0], q[:, 1]
        t = rng.normal(size=3) * rng.choice([0.1, 1.0, 3.0])
        if k % 11 == 0:
            t[2] = 0.0
        exact = rect_rect_distance((-ha[0], -ha[1], 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), 2 * ha[0], 2 * ha[1],
                                   tuple(t - hb[0] * u - hb[1] * v), tuple(u), tuple(v), 2 * hb[0], 2 * hb[1], 0.0)
        tol = 1e-12 * (1 + exact)
        lower, upper = rect_distance_bounds(ha[0], ha[1], *t, *u, *v, hb[0], hb[1], -np.inf, np.nan)
        assert abs(lower - exact) <= tol and abs(upper - exact) <= tol
        for stop in (0.5 * exact, exact * (1 + 1e-7), 2 * exact + 1e-9):
            lower, upper = rect_distance_bounds(ha[0], ha[1], *t, *u, *v, hb[0], hb[1], -np.inf, stop)
            assert lower <= exact + tol and upper >= exact - tol
            if upper < stop:
                assert exact < stop + tol
            elif lower >= stop:
                assert exact >= stop - tol


# ------------------------------------------------------------------------------------------------
# against all-pairs references
# ------------------------------------------------------------------------------------------------


def _small_meshes():
    rng = np.random.default_rng(3)
    soup = rng.normal(size=(60, 3, 3)) * 0.4
    soup[::9, 1] = soup[::9, 0]  # zero-area
    return {
        "icosphere": _icosphere(1),
        "box": tc.TriangleMesh(trimesh.creation.box([1.0, 0.6, 1.4]).vertices, trimesh.creation.box([1.0, 0.6, 1.4]).faces),
        "soup": tc.TriangleMesh(soup.reshape(-1, 3), np.arange(180).reshape(-1, 3)),
    }


@pytest.mark.slow
@pytest.mark.parametrize("split", ["sah", "median", "mean", "bottomup"])
@pytest.mark.parametrize("bv", ["obb", "aabb", "sphere", "rss", "kdop"])
def test_collide_equals_all_pairs_reference(split, bv):
    rng = np.random.default_rng(5)
    meshes = _small_meshes()
    trees = {name: BVH(mesh, None, split=split, leaf_size=2, kdop=18) for name, mesh in meshes.items()}
    hits = 0
    cases = 0
    for name_a in meshes:
        for name_b in meshes:
            poses = _random_poses(rng, 8, 1.2)
            poses[6:, :3, :3] = np.eye(3)  # pure translations: the exact k-DOP slab test
            for pose in poses:
                expected = naive_bvh.all_overlapping_pairs(meshes[name_a], None, meshes[name_b], pose)
                result = tc.bvh.collide(trees[name_a], None, trees[name_b], pose, bv=bv)
                got = {tuple(p) for p in result.pairs}
                assert len(got) == len(result.pairs), "a pair was reported twice"
                assert result.complete and not result.node_pairs.any()
                # the tree tests in A's frame, the reference in world coordinates: only pairs at
                # distance ~0 (touching within rounding) may differ
                for i, j in got ^ expected:
                    assert naive_bvh.pair_distance(meshes[name_a], None, i, meshes[name_b], pose, j) <= 1e-9
                assert tc.bvh.intersects(trees[name_a], None, trees[name_b], pose, bv=bv) == bool(got)
                hits += bool(expected)
                cases += 1
    assert 0.2 <= hits / cases <= 0.9


def test_intersection_segments_lie_on_both_triangles():
    a = _icosphere(2)
    pose = tc.Pose.from_rotvec([0.3, 0.2, 0.1], [1.2, 0.3, 0.0]).matrix
    result = tc.bvh.collide(a, None, a, pose)
    assert len(result) > 10
    ta = naive_bvh.world_triangles(a, None)
    tb = naive_bvh.world_triangles(a, pose)
    from touche._kernels.primitives.closest import closest_point_triangle

    for (i, j), segment in zip(result.pairs, result.segments):
        for point in segment:
            for tri in (ta[i], tb[j]):
                q = closest_point_triangle(point, tri[0], tri[1], tri[2])
                assert np.linalg.norm(q - point) <= 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("split", ["sah", "mean", "bottomup"])
def test_distance_equals_all_pairs_reference(split):
    rng = np.random.default_rng(8)
    meshes = _small_meshes()
    trees = {name: BVH(mesh, None, split=split, leaf_size=1) for name, mesh in meshes.items()}
    separated = 0
    for name_a in meshes:
        for name_b in meshes:
            poses = _random_poses(rng, 5, 2.5)
            batch = tc.bvh.distance(trees[name_a], None, trees[name_b], poses)
            for k, pose in enumerate(poses):
                expected = naive_bvh.min_distance(meshes[name_a], None, meshes[name_b], pose)
                single = tc.bvh.distance(trees[name_a], None, trees[name_b], pose)
                assert single.distance == batch.distance[k]
                assert abs(single.distance - expected) <= 1e-12 + 1e-12 * expected
                assert abs(np.linalg.norm(single.point_a - single.point_b) - single.distance) <= 1e-12
                # the reported triangles hold the reported points at that distance
                d = naive_bvh.pair_distance(meshes[name_a], None, single.triangle_a, meshes[name_b], pose,
                                            single.triangle_b)
                assert abs(d - single.distance) <= 1e-12
                separated += expected > 0
    assert separated >= 10


def test_distance_at_extreme_scales():
    for scale in (1e-6, 1e6):
        m = trimesh.creation.icosphere(1, radius=scale)
        a = tc.TriangleMesh(m.vertices, m.faces)
        pose = tc.Pose.from_rotvec([0.2, 0.4, 0.1], [2.5 * scale, 0.1 * scale, 0.0]).matrix
        got = tc.bvh.distance(a, None, a, pose).distance
        expected = naive_bvh.min_distance(a, None, a, pose)
        assert abs(got - expected) <= 1e-12 * scale


# ------------------------------------------------------------------------------------------------
# collision system: depth limits, callbacks, limits
# ------------------------------------------------------------------------------------------------


def test_depth_limits_report_node_pairs_that_cover_every_triangle_pair():
    a = _icosphere(2)
    tree = a.bvh
    pose = tc.Pose.from_translation([1.6, 0.2, 0.1]).matrix
    full = {tuple(p) for p in tc.bvh.collide(a, None, a, pose).pairs}
    assert full
    limited = tc.bvh.collide(a, None, a, pose, depth_a=3, depth_b=2)
    assert limited.node_pairs.all()
    assert len({tuple(p) for p in limited.pairs}) == len(limited.pairs)

    def node_of(tri_id, depth):
        position = int(np.flatnonzero(tree.tri_ids == tri_id)[0])
        node, level = 0, 0
        while level < depth and tree.node_index[node, 2] >= 0:
            left = node + 1
            node = left if position < tree.node_index[left, 0] + tree.node_index[left, 1] else tree.node_index[node, 2]
            level += 1
        return node

    covered = {tuple(p) for p in limited.pairs}
    for i, j in full:
        assert (node_of(i, 3), node_of(j, 2)) in covered
    # depth 0 on both: the roots, when their OBBs overlap
    roots = tc.bvh.collide(a, None, a, pose, depth_a=0, depth_b=0)
    assert roots.pairs.tolist() == [[0, 0]]
    # mixed: A's nodes at depth 2 against B's triangles
    mixed = tc.bvh.collide(a, None, a, pose, depth_a=2)
    assert (mixed.node_pairs[:, 0] & ~mixed.node_pairs[:, 1]).all()
    assert {j for _, j in full} <= set(mixed.pairs[:, 1].tolist())


def test_callback_receives_each_pair_once_and_can_stop_the_search():
    a = _icosphere(2)
    pose = tc.Pose.from_translation([1.5, 0.0, 0.0]).matrix
    seen = []
    result = tc.bvh.collide(a, None, a, pose, callback=lambda c: seen.append(c) or True)
    assert result.complete and len(seen) == len(result)
    assert {(c.item_a, c.item_b) for c in seen} == {tuple(p) for p in result.pairs}
    for c in seen[:10]:
        assert np.isclose(np.linalg.norm(c.normal_a), 1.0) and np.isclose(np.linalg.norm(c.normal_b), 1.0)
    stop_after = []
    stopped = tc.bvh.collide(a, None, a, pose, callback=lambda c: stop_after.append(c) or len(stop_after) < 4)
    assert len(stop_after) == 4 and len(stopped) == 4 and not stopped.complete
    capped = tc.bvh.collide(a, None, a, pose, max_pairs=5)
    assert len(capped) == 5 and not capped.complete
    nodes = []
    tc.bvh.collide(a, None, a, pose, depth_a=1, depth_b=1, callback=lambda c: nodes.append(c) or True)
    assert nodes and all(c.a_is_node and c.b_is_node for c in nodes)
    assert all(np.isclose(np.linalg.norm(c.normal_a), 1.0) for c in nodes)


def test_bad_input_raises_geometry_error():
    a = _icosphere(1)
    with pytest.raises(tc.GeometryError):
        BVH(a, None, split="nope")
    with pytest.raises(tc.GeometryError):
        BVH(a, None, leaf_size=0)
    with pytest.raises(tc.GeometryError, match="kdop"):
        tc.bvh.intersects(a, None, a, None, bv="kdop")  # trees without k-DOPs
    with pytest.raises(tc.GeometryError, match="kdop"):
        tc.bvh.collide(tc.bvh.build(a, kdop=14), None, tc.bvh.build(a, kdop=18), None, bv="kdop")
    with pytest.raises(tc.GeometryError, match="kdop"):
        BVH(a, None, kdop=7)
    with pytest.raises(tc.GeometryError):
        tc.bvh.intersects(a, None, a, None, bv="box")
    with pytest.raises(tc.GeometryError):
        tc.bvh.collide(a, None, a, None, depth_a=1.5)
    with pytest.raises(tc.GeometryError):
        tc.bvh.collide(a, None, a, None, max_pairs=0)
    with pytest.raises(tc.GeometryError):
        tc.bvh.distance(a, np.full((4, 4), np.nan), a, None)
    with pytest.raises(tc.GeometryError):
        tc.bvh.distance(tc.Sphere(1.0), None, a, None)
    with pytest.raises(tc.GeometryError):
        tc.TriangleMesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int))
    with pytest.raises(tc.GeometryError):
        tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]], [[0, 1, 2]])
    with pytest.raises(tc.GeometryError):
        tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 3]])


# Against python-fcl and coal on real meshes (1,000 poses of each pybullet_data mesh, a referee on
# disagreements): tests/mesh/test_mesh_peers.py.


# ------------------------------------------------------------------------------------------------
# the parallel build of big meshes
def _build_meshes():
    """Big enough for the parallel build: a sphere, a bumpy grid (a height field's triangles), a
    random soup with zero-area and repeated triangles (the splits' fallbacks)."""
    from touche.bvh import PARALLEL_BUILD_MIN_TRIANGLES
    from touche.cli import _uv_sphere

    rng = np.random.default_rng(31)
    meshes = [tc.TriangleMesh(*_uv_sphere(2 * PARALLEL_BUILD_MIN_TRIANGLES))]
    side = 64
    x, y = np.meshgrid(np.arange(side + 1.0), np.arange(side + 1.0), indexing="ij")
    points = np.column_stack([x.ravel(), y.ravel(), 0.3 * np.sin(x.ravel()) * np.cos(y.ravel())])
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    cells = np.stack([corner, corner + side + 1, corner + 1, corner + 1, corner + side + 1, corner + side + 2], 1)
    meshes.append(tc.TriangleMesh(points, cells.reshape(-1, 3)))
    soup = rng.normal(size=(3 * 5000, 3))
    faces = np.arange(3 * 5000).reshape(-1, 3)
    faces[:300, 2] = faces[:300, 1]  # zero area
    faces[300:900] = faces[300]  # one triangle 600 times: every centroid alike in its nodes
    meshes.append(tc.TriangleMesh(soup, faces))
    return meshes


@pytest.mark.parametrize("split", ["sah", "median", "center", "mean"])
def test_parallel_build_equals_the_serial_build_bit_for_bit(split):
    """bvh.build_tree on threads (the levels above the subtrees here, the subtrees side by side,
    each written into its rows) gives the arrays of the one-call serial build exactly."""
    from touche import bvh

    for mesh in _build_meshes():
        _, _, points, triangles, _ = mesh._packed
        assert len(triangles) >= bvh.PARALLEL_BUILD_MIN_TRIANGLES
        serial = bvh.build_tree(points, triangles, 1, SPLITS[split], threads=1)
        for threads in (2, 3):
            parallel = bvh.build_tree(points, triangles, 1, SPLITS[split], threads=threads)
            for a, b in zip(serial[:4], parallel[:4]):
                assert a.dtype == b.dtype and np.array_equal(a, b)
            assert serial[4] == parallel[4]
        tree = BVH(mesh, None, split=split)
        assert np.array_equal(tree.node_index, serial[0]) and np.array_equal(tree.node_bounds, serial[1])
        # leaves of several triangles: the serial build (node counts are not known beforehand)
        assert np.array_equal(bvh.build_tree(points, triangles, 4, SPLITS[split], threads=2)[0],
                              bvh.build_tree(points, triangles, 4, SPLITS[split], threads=1)[0])
