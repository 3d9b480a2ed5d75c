"""Mesh-mesh distance at far poses (issue 18) against brute force: every triangle pair of the two
meshes, by an independent triangle-triangle distance (touche.clearance.triangle_clearance, S3),
on panel-like meshes (a bumpy closed organic shape, a torus, a many-sided CAD cylinder, an open
height field, and the smallest real panel meshes when their data packages are installed), at
seeded random poses 25-100 % of the mesh size apart: the regime where the distance search prunes
along the closest pair's direction (bvh_distance.distance_search)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation


from naive import bvh as naive_bvh  # noqa: E402

import touche as tc  # noqa: E402
from touche.clearance import triangle_clearance  # noqa: E402

trimesh = pytest.importorskip("trimesh")


def _bumpy_sphere():
    m = trimesh.creation.icosphere(3, radius=1.0)  # 1,280 triangles
    rng = np.random.default_rng(5)
    v = m.vertices * (1.0 + 0.08 * rng.standard_normal((len(m.vertices), 1)))
    return v, m.faces


def _torus():
    m = trimesh.creation.torus(major_radius=1.0, minor_radius=0.35, major_sections=40, minor_sections=16)
    return m.vertices, m.faces


def _cylinder():
    m = trimesh.creation.cylinder(radius=0.4, height=1.5, sections=96)
    return m.vertices, m.faces


def _height_field():
    n = 24
    x, y = np.meshgrid(np.linspace(0, 2, n), np.linspace(0, 2, n), indexing="ij")
    z = 0.15 * np.sin(3 * x) * np.cos(2 * y)
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    faces = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return vertices, faces


def _panel_mesh(name):
    import panel

    m = panel.mesh(name)
    if m is None:
        pytest.skip(f"panel mesh {name} needs its data package")
    return m.vertices, m.faces


MESHES = {"bumpy_sphere": _bumpy_sphere, "torus": _torus, "cylinder": _cylinder, "height_field": _height_field,
          "bunny": lambda: _panel_mesh("bunny"), "ur5_forearm": lambda: _panel_mesh("ur5_forearm")}


def _far_poses(vertices, n, seed):
    """Second copy rotated about its box centre and moved 1.25-2 sizes along a random direction:
    the bounding balls (radius <= half the size) are then 0.25-1 size apart."""
    rng = np.random.default_rng(seed)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    size = float(np.linalg.norm(hi - lo))
    center = 0.5 * (lo + hi)
    poses = np.tile(np.eye(4), (n, 1, 1))
    for k in range(n):
        r = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        poses[k, :3, :3] = r
        poses[k, :3, 3] = center - r @ center + rng.uniform(1.25, 2.0) * size * d
    return poses


def _brute_force(vertices, faces, pose, block=48):
    """Smallest distance over every triangle pair, and the pairs that attain it (within 1e-12)."""
    tri = np.ascontiguousarray(vertices[faces], dtype=np.float64)
    moved = np.ascontiguousarray(tri @ pose[:3, :3].T + pose[:3, 3])
    m = len(tri)
    dist = np.empty((m, m))
    for start in range(0, m, block):
        a = tri[start:start + block]
        pairs_a = np.repeat(a, m, axis=0)
        pairs_b = np.tile(moved, (len(a), 1, 1))
        dist[start:start + block] = triangle_clearance(pairs_a, pairs_b).distance.reshape(len(a), m)
    return float(dist.min()), dist


@pytest.mark.parametrize("name", sorted(MESHES))
def test_far_distance_equals_all_pairs_brute_force(name):
    vertices, faces = MESHES[name]()
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    mesh = tc.TriangleMesh(vertices, faces)
    poses = _far_poses(vertices, 4, seed=sum(map(ord, name)))
    batch = tc.bvh.distance(mesh, None, mesh, poses)
    public = tc.distance(mesh, None, mesh, poses)
    pair = tc.bvh.CoherentPair(mesh, mesh)
    for k, pose in enumerate(poses):
        expected, table = _brute_force(vertices, faces, pose)
        assert expected > 0.0
        single = tc.bvh.distance(mesh, None, mesh, pose)
        assert single.distance == batch.distance[k]
        assert abs(public.distance[k] - single.distance) <= 1e-12 * expected
        assert abs(single.distance - expected) <= 1e-12 * expected, (name, k, single.distance, expected)
        # the reported triangles are a closest pair, the points lie on them at that distance
        assert table[single.triangle_a, single.triangle_b] <= expected * (1 + 1e-12)
        assert abs(np.linalg.norm(single.point_a - single.point_b) - single.distance) <= 1e-12 * expected
        d = naive_bvh.pair_distance(mesh, None, single.triangle_a, mesh, pose, single.triangle_b)
        assert abs(d - single.distance) <= 1e-12 * expected
        # the coherent search (seeded with the previous pose's pair and its direction) agrees
        tracked = pair.distance(None, pose)
        assert abs(tracked.distance - expected) <= 1e-12 * expected


def test_far_distance_with_an_upper_bound_from_a_stale_witness():
    """A witness far from the new closest pair (its direction points elsewhere) must not prune the
    true closest pair: the direction bound holds for any unit vector."""
    vertices, faces = _bumpy_sphere()
    mesh = tc.TriangleMesh(vertices, faces)
    pair = tc.bvh.CoherentPair(mesh, mesh)
    poses = _far_poses(vertices, 4, seed=11)
    for pose in poses:  # consecutive poses in unrelated directions
        expected = _brute_force(vertices, faces, pose)[0]
        got = pair.distance(None, pose).distance
        assert abs(got - expected) <= 1e-12 * expected


def test_node_support_is_the_largest_corner_projection_with_a_reused_memo():
    """bvh_distance._node_support (the far field's support of a node along the pruning axis): with
    no slack and no visit limit it equals the largest projection of the node's triangle corners,
    for every node and random directions; with a slack and a small visit budget it is still an
    upper bound, never above the node's box reach. The memo is reused across directions by
    emptying its fills only, two trees share its arrays (B's columns after A's), and the arrays
    start as garbage (np.empty in the kernel): stale or random entries must never be read back."""
    from touche._kernels.trees.bvh_bounds import box_support
    from touche._kernels.trees.bvh_distance import _node_support
    from touche._kernels.trees.bvh_descent import DIRECT_LEAF_DISTANCE

    vertices, faces = _bumpy_sphere()
    tree = tc.bvh.tree_of(tc.TriangleMesh(vertices, faces))
    ni, nb, tv, _ = tree._arrays()
    count = ni.shape[0]
    rng = np.random.default_rng(3)
    memo_index = rng.integers(-count, 4 * count, (2, 2 * count))  # garbage, some of it inside the table
    memo_value = rng.normal(size=2 * count) * 1e3
    fills = np.zeros(3, dtype=np.int64)
    work = np.empty(2 * tree.depth + 2, dtype=np.int64)  # the explicit stack: at most depth + 1 entries
    for trial in range(8):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        fills[0] = fills[1] = 0  # a new axis: the memo is emptied, not cleared
        # (m, 3) projections in tree order, summed in the kernel's order (matmul rounds differently)
        corners = tv[..., 0] * d[0] + tv[..., 1] * d[1] + tv[..., 2] * d[2]
        exact = trial % 2 == 0
        for k in rng.permutation(count)[:300]:
            first, covered = ni[k, 0], ni[k, 1]
            expected = corners[first:first + covered].max()
            side = int(rng.integers(2))
            fills[2] = 1 << 40 if exact else 3
            got = _node_support(ni, nb, tv, k, d[0], d[1], d[2], DIRECT_LEAF_DISTANCE, memo_index, memo_value, fills,
                                side, side * count, 0.0 if exact else 1e-3, work)
            if exact:
                assert got == expected
            else:
                assert expected <= got <= box_support(nb, k, d[0], d[1], d[2]) + 1e-12
        assert fills[0] <= count and fills[1] <= count  # every node memoised at most once per axis


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_far_distance_exact_at_tiny_and_huge_scales(scale):
    """The far field's support gap and its far-field test are ratios of lengths: the same search
    at 1e-6 and 1e6 gives the brute-force distance (1e-12 relative)."""
    vertices, faces = _bumpy_sphere()
    vertices = np.asarray(vertices) * scale
    mesh = tc.TriangleMesh(vertices, faces)
    poses = _far_poses(vertices, 2, seed=29)
    got = tc.distance(mesh, None, mesh, poses).distance
    for k, pose in enumerate(poses):
        expected = _brute_force(vertices, faces, pose)[0]
        assert abs(got[k] - expected) <= 1e-12 * expected, (scale, k, got[k], expected)


def test_far_distance_small_part_against_a_large_one():
    """A small mesh far from a large one (node pairs of very different sizes): brute force."""
    big_v, big_f = _torus()
    small = trimesh.creation.icosphere(2, radius=0.05)
    rng = np.random.default_rng(17)
    big = tc.TriangleMesh(big_v, big_f)
    part = tc.TriangleMesh(small.vertices, small.faces)
    tri_a = np.ascontiguousarray(np.asarray(big_v)[big_f], dtype=np.float64)
    for _ in range(3):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        pose = np.eye(4)
        pose[:3, :3] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
        pose[:3, 3] = rng.uniform(2.0, 3.0) * d
        moved = np.ascontiguousarray(np.asarray(small.vertices)[small.faces] @ pose[:3, :3].T + pose[:3, 3])
        pairs_a = np.repeat(tri_a, len(moved), axis=0)
        pairs_b = np.tile(moved, (len(tri_a), 1, 1))
        expected = float(triangle_clearance(pairs_a, pairs_b).distance.min())
        for a, pa, b, pb in ((big, None, part, pose), (part, pose, big, None)):
            got = tc.distance(a, pa, b, pb).distance
            assert abs(got - expected) <= 1e-12 * expected
