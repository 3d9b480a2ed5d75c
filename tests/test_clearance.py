"""touche.clearance: the STL triangle-triangle strategy (S3) done right, against naive all-pairs
references (tests/naive/mesh.py), exact 2D separating axes for coplanar triangles, and python-fcl
on real STL parts from pybullet_data."""
import os
from fractions import Fraction

import numpy as np
import pytest

import touche as tc
from touche import GeometryError
from touche._kernels import clearance as kernels
from touche.clearance import ClearancePart, clearance, clearance_all, prepare, triangle_clearance

from naive import mesh as naive

TRIANGLE_FACES = np.array([[0, 1, 2]])


def _tri(points):
    return tc.TriangleMesh(np.asarray(points, dtype=float), TRIANGLE_FACES)


def _pair_table(A, B):
    """Clearance of triangle A[k] against B[k] for all k in one compiled call."""
    return triangle_clearance(A, B)


def _random_pairs(rng, n):
    """Random triangle pairs, B around A's centroid: about 40 % intersect."""
    A = rng.normal(size=(n, 3, 3))
    B = A.mean(axis=1, keepdims=True) + rng.normal(size=(n, 3, 3)) * 0.8 + rng.normal(size=(n, 1, 3)) * 0.3
    return A, B


def _check_points(table, A, B, scale=1.0):
    """The reported points lie on their triangles, |point_a - point_b| = distance and the vector
    runs from B to A."""
    on_a = naive.point_triangle_distance(table.point_a, A[:, 0], A[:, 1], A[:, 2])
    on_b = naive.point_triangle_distance(table.point_b, B[:, 0], B[:, 1], B[:, 2])
    assert on_a.max() <= 1e-12 * scale and on_b.max() <= 1e-12 * scale
    gap = np.linalg.norm(table.point_a - table.point_b, axis=1)
    np.testing.assert_allclose(gap, table.distance, rtol=1e-12, atol=1e-14 * scale)
    np.testing.assert_array_equal(table.vector, table.point_a - table.point_b)


# ------------------------------------------------------------------------------------------
# S3 step 3.2: segment-segment closest points (erratum S3 L174)
def test_segment_segment_against_naive_and_the_erratum():
    rng = np.random.default_rng(11)
    n = 3000
    p, q, r, s = (rng.normal(size=(n, 3)) for _ in range(4))
    # parallel, collinear, degenerate (point) segments on purpose
    s[:300] = r[:300] + (q[:300] - p[:300]) * rng.uniform(-2, 2, size=(300, 1))
    r[300:400] = p[300:400] + (q[300:400] - p[300:400]) * 1.5
    s[300:400] = p[300:400] + (q[300:400] - p[300:400]) * 0.5   # collinear overlap
    q[400:500] = p[400:500]                                       # p is a point
    s[450:550] = r[450:550]                                       # both points in 450..499
    got = np.array([np.sqrt(kernels.segment_segment(*p[k], *q[k], *r[k], *s[k])[0]) for k in range(n)])
    expected = naive.segment_segment_distance(p, q, r, s)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    # S3 as printed clamps s1 and s2 independently: wrong here, while 5.1.9 is right
    p0, q0 = np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])
    r0, s0 = np.array([-1.0, -1.0, 0.0]), np.array([3.0, 0.0, 0.0])  # true 0.485, printed rule 2.0
    true = float(naive.segment_segment_distance(p0, q0, r0, s0))
    printed = float(naive.segment_segment_independent_clamp(p0, q0, r0, s0))
    ours = np.sqrt(kernels.segment_segment(*p0, *q0, *r0, *s0)[0])
    assert printed > true + 1.0
    assert ours == pytest.approx(true, rel=1e-12)
    # and on random data the printed rule is often wrong (the test data can tell them apart)
    wrong = naive.segment_segment_independent_clamp(p[600:], q[600:], r[600:], s[600:]) > expected[600:] + 1e-9
    assert wrong.mean() > 0.05


# ------------------------------------------------------------------------------------------
# triangle pairs: 10,000 random pairs against the naive reference
@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_random_triangle_pairs_against_naive(scale):
    rng = np.random.default_rng(5)
    n = 10_000 if scale == 1.0 else 2_000
    A, B = _random_pairs(rng, n)
    A *= scale
    B *= scale
    table = _pair_table(A, B)
    distance, hit = naive.triangle_pair_distance(A, B)
    assert 0.2 < hit.mean() < 0.8, hit.mean()
    np.testing.assert_array_equal(table.intersecting, hit)
    np.testing.assert_allclose(table.distance, distance, rtol=1e-9, atol=1e-13 * scale)
    assert (table.distance[hit] == 0).all()
    _check_points(table, A, B, scale)
    # the mesh path (trees, poses) gives the same answers on a sample
    parts, pairs = [], []
    for k in range(0, n, 50):
        pairs.append((len(parts), len(parts) + 1))
        parts += [_tri(A[k]), _tri(B[k])]
    through_meshes = clearance_all(parts, pairs=pairs)
    np.testing.assert_array_equal(through_meshes.intersecting, hit[::50])
    np.testing.assert_allclose(through_meshes.distance, distance[::50], rtol=1e-9, atol=1e-13 * scale)
    assert (through_meshes.triangle_a == 0).all() and (through_meshes.triangle_b == 0).all()


def test_near_misses_and_near_hits():
    """Pairs a hair apart or a hair inside: the intersection decision is exact, the distance is
    the offset."""
    rng = np.random.default_rng(8)
    n = 400
    A = rng.normal(size=(n, 3, 3))
    normal = np.cross(A[:, 1] - A[:, 0], A[:, 2] - A[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    # B: a triangle whose lowest vertex sits at the centroid of A, offset along A's normal
    inside = A.mean(axis=1)
    offset = rng.choice([-1.0, 1.0], size=n)[:, None] * 10.0 ** rng.uniform(-9, -3, size=(n, 1))
    lift = rng.normal(size=(n, 2, 3)) + 2.0 * normal[:, None, :]
    B = np.concatenate([(inside + offset * normal)[:, None], inside[:, None] + lift], axis=1)
    table = _pair_table(A, B)
    distance, hit = naive.triangle_pair_distance(A, B)
    above = offset[:, 0] > 0
    assert 0.2 < hit.mean() < 0.8
    np.testing.assert_array_equal(table.intersecting, hit)
    # the naive plane distance carries ~1e-16 absolute error: relative 1e-7 at a 1e-9 offset
    np.testing.assert_allclose(table.distance, distance, rtol=1e-6, atol=1e-15)
    # above the plane (and not crossing elsewhere) the gap is at most the offset
    free = above & ~hit
    assert free.sum() > 100
    assert (table.distance[free] <= offset[free, 0] * (1 + 1e-6)).all()


# ------------------------------------------------------------------------------------------
# edge cases with known answers
def _single(a, b):
    return clearance(_tri(a), None, _tri(b), None)


def test_touching_configurations_count_as_intersecting():
    base = [[0, 0, 0], [4, 0, 0], [0, 4, 0]]
    cases = {
        "vertex on face": [[1, 1, 0], [1, 1, 3], [2, 1, 3]],
        "vertex on edge": [[2, 0, 0], [2, -1, 3], [2, 1, 3]],
        "vertex on vertex": [[4, 0, 0], [5, 0, 1], [5, 1, 1]],
        "edge crosses edge": [[2, -1, 0], [2, 1, 0], [2, 0, 3]],
        "edge lies on face": [[1, 1, 0], [2, 1, 0], [1, 1, 2]],
        "coplanar overlap": [[1, 1, 0], [5, 1, 0], [1, 5, 0]],
        "coplanar inside": [[1, 1, 0], [2, 1, 0], [1, 2, 0]],
        "coplanar contains": [[-1, -1, 0], [9, -1, 0], [-1, 9, 0]],
        "coplanar shared edge": [[4, 0, 0], [0, 4, 0], [4, 4, 0]],
        "coplanar vertex on edge": [[2, 2, 0], [5, 5, 0], [2, 5, 0]],
        "crossing": [[1, 1, -1], [1, 1, 1], [3, 1, 1]],
        "identical": base,
    }
    for name, other in cases.items():
        r = _single(base, other)
        assert r.intersecting, name
        assert r.distance == 0.0, name
        np.testing.assert_array_equal(r.point_a, r.point_b)
        assert naive.point_triangle_distance(r.point_a, *np.array(base, float)) <= 1e-12, name
        r = _single(other, base)  # symmetric
        assert r.intersecting, name


def test_separated_configurations_have_exact_distances():
    base = [[0, 0, 0], [4, 0, 0], [0, 4, 0]]
    h = 0.25
    cases = {
        "parallel above": ([[1, 1, h], [2, 1, h], [1, 2, h]], h, [0, 0, -1]),
        "vertex above face": ([[1, 1, h], [1, 1, 3], [2, 1, 3]], h, [0, 0, -1]),
        "coplanar apart": ([[5, 0, 0], [6, 0, 0], [5, 1, 0]], 1.0, [-1, 0, 0]),
        "coplanar across the hypotenuse": ([[3, 3, 0], [5, 3, 0], [3, 5, 0]], np.sqrt(2.0), [-1, -1, 0]),
        "edge over edge": ([[2, -1, h], [2, -1, 1], [2, -3, 1]], np.hypot(1.0, h), [0, 1, -h]),
        "skew edges": ([[2, -1, 1], [2, 1, 1], [2, 0, 3]], 1.0, [0, 0, -1]),
    }
    for name, (other, expected, direction) in cases.items():
        r = _single(base, other)
        assert not r.intersecting, name
        assert r.distance == pytest.approx(expected, rel=1e-12), name
        unit = np.asarray(direction, float) / np.linalg.norm(direction)
        # vector points from B (other) to A (base)
        np.testing.assert_allclose(r.vector / r.distance, unit, atol=1e-12, err_msg=name)


def test_degenerate_triangles():
    base = [[0, 0, 0], [4, 0, 0], [0, 4, 0]]
    sliver = [[1, 1, -1], [1, 1, 1], [1, 1, 0.5]]           # a segment through the face
    assert _single(base, sliver).intersecting
    assert _single(sliver, base).intersecting
    point = [[1, 1, 0.5], [1, 1, 0.5], [1, 1, 0.5]]          # a point above the face
    r = _single(base, point)
    assert not r.intersecting and r.distance == pytest.approx(0.5)
    on = [[1, 1, 0], [1, 1, 0], [1, 1, 0]]                   # a point on the face
    assert _single(base, on).intersecting
    # two collinear triangles (segments) that cross, and two that miss
    seg1 = [[0, 0, 0], [2, 0, 0], [1, 0, 0]]
    seg2 = [[1, -1, 0], [1, 1, 0], [1, 0.5, 0]]
    seg3 = [[1, -1, 1], [1, 1, 1], [1, 0.5, 1]]
    assert _single(seg1, seg2).intersecting
    r = _single(seg1, seg3)
    assert not r.intersecting and r.distance == pytest.approx(1.0)


def _coplanar_3d(uv, plane):
    """Exact points on the plane x + 2y + 3z = 0 (or z = 0) from integer (u, v)."""
    u, v = uv[..., 0].astype(float), uv[..., 1].astype(float)
    if plane == "z0":
        return np.stack([u, v, np.zeros_like(u)], axis=-1)
    return np.stack([-2 * u - 3 * v, u, v], axis=-1)


@pytest.mark.parametrize("plane", ["z0", "oblique"])
def test_coplanar_pairs_against_exact_2d_separating_axes(plane):
    """S3 skips coplanar overlaps (erratum S3 L22): decided here exactly, checked against
    exact 2D separating axes on the integer (u, v) coordinates."""
    rng = np.random.default_rng(21)
    n = 1500
    uv_a = rng.integers(-20, 21, size=(n, 3, 2))
    uv_b = rng.integers(-20, 21, size=(n, 3, 2)) + rng.integers(-25, 26, size=(n, 1, 2))
    area = lambda t: (t[:, 1, 0] - t[:, 0, 0]) * (t[:, 2, 1] - t[:, 0, 1]) - (t[:, 2, 0] - t[:, 0, 0]) * (t[:, 1, 1] - t[:, 0, 1])  # noqa: E731
    keep = (area(uv_a) != 0) & (area(uv_b) != 0)
    uv_a, uv_b = uv_a[keep], uv_b[keep]
    expected = np.array([naive.convex_polygons_intersect_exact([tuple(map(Fraction, map(int, p))) for p in a],
                                                               [tuple(map(Fraction, map(int, p))) for p in b])
                         for a, b in zip(uv_a, uv_b)])
    assert 0.2 < expected.mean() < 0.8, expected.mean()
    A, B = _coplanar_3d(uv_a, plane), _coplanar_3d(uv_b, plane)
    table = _pair_table(A, B)
    np.testing.assert_array_equal(table.intersecting, expected)
    # separated coplanar pairs: the distance is the in-plane gap (9 edge-edge candidates)
    distance = np.full(len(A), np.inf)
    for i in range(3):
        for j in range(3):
            distance = np.minimum(distance, naive.segment_segment_distance(A[:, i], A[:, (i + 1) % 3],
                                                                           B[:, j], B[:, (j + 1) % 3]))
    np.testing.assert_allclose(table.distance[~expected], distance[~expected], rtol=1e-9)


# ------------------------------------------------------------------------------------------
# meshes
def _sphere(subdivisions, radius=1.0):
    trimesh = pytest.importorskip("trimesh")
    s = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return tc.TriangleMesh(np.asarray(s.vertices), np.asarray(s.faces))


def _box(extents):
    trimesh = pytest.importorskip("trimesh")
    b = trimesh.creation.box(extents=extents)
    return tc.TriangleMesh(np.asarray(b.vertices), np.asarray(b.faces))


def _world(mesh, pose):
    return mesh.vertices @ pose[:3, :3].T + pose[:3, 3]


def test_meshes_against_brute_force_all_pairs():
    a = _sphere(2)             # 320 triangles
    b = _box([1.5, 0.4, 0.9])  # 12 triangles
    c = tc.TriangleMesh(*naive.grid(6, 5, -1, 1, -1, 1))  # open flat patch, 60 triangles
    rng = np.random.default_rng(2)
    hits = []
    for first, second in ((a, b), (a, c), (b, c), (a, a)):
        poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(40, scale=1.6, seed=int(rng.integers(1 << 30)))))
        batch = clearance(first, None, second, poses)
        for k, pose in enumerate(poses):
            distance, hit, (i, j) = naive.mesh_clearance_brute(first.vertices, first.faces, _world(second, pose),
                                                               second.faces)
            hits.append(hit)
            assert batch.intersecting[k] == hit, k
            assert batch.distance[k] == pytest.approx(distance, rel=1e-9, abs=1e-14), k
            # the reported pair is a closest pair: its own distance is the minimum
            ta = first.vertices[first.faces[batch.triangle_a[k]]][None]
            tb = _world(second, pose)[second.faces[batch.triangle_b[k]]][None]
            own, own_hit = naive.triangle_pair_distance(ta, tb)
            assert own_hit[0] == hit and own[0] == pytest.approx(distance, rel=1e-9, abs=1e-14)
            assert naive.point_triangle_distance(batch.point_a[k], *ta[0]) <= 1e-12
            assert naive.point_triangle_distance(batch.point_b[k], *tb[0]) <= 1e-12
    assert 0.2 < np.mean(hits) < 0.8, np.mean(hits)


def test_batches_match_single_queries_and_all_pairs():
    a, b, c = _sphere(1), _box([1.0, 2.0, 0.5]), _sphere(2, radius=0.6)
    poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(25, scale=2.0, seed=3)))
    pose_a = np.asarray(tc.pose.as_matrices(tc.Pose.from_rotvec([0.3, -0.2, 0.1], [0.2, 0.1, 0.0])))
    batch = clearance(a, pose_a, b, poses)
    for k in range(len(poses)):
        one = clearance(a, pose_a, b, poses[k])
        assert one.intersecting == batch.intersecting[k]
        assert one.distance == batch.distance[k]
        np.testing.assert_array_equal(one.point_a, batch.point_a[k])
        assert (one.triangle_a, one.triangle_b) == (batch.triangle_a[k], batch.triangle_b[k])
    # moving A instead of B gives the same distances
    swapped = clearance(b, poses, a, pose_a)
    np.testing.assert_allclose(swapped.distance, batch.distance, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(swapped.intersecting, batch.intersecting)
    # all pairs of a list of parts
    parts = [a, b, c, a]
    part_poses = poses[:4]
    table = clearance_all(parts, part_poses)
    assert table.pairs.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    for row, (i, j) in enumerate(table.pairs):
        one = clearance(parts[i], part_poses[i], parts[j], part_poses[j])
        assert one.intersecting == table.intersecting[row]
        assert one.distance == pytest.approx(table.distance[row], rel=1e-12, abs=1e-15)
    subset = clearance_all(parts, part_poses, pairs=[(2, 0), (3, 1)])
    assert subset.distance[0] == pytest.approx(clearance(c, part_poses[2], a, part_poses[0]).distance, rel=1e-12)
    assert len(subset) == 2


def test_max_distance_limits_the_search():
    a, b = _sphere(2), _box([0.5, 0.5, 0.5])
    poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(60, scale=3.0, seed=9)))
    full = clearance(a, None, b, poses)
    limited = clearance(a, None, b, poses, max_distance=0.5)
    near = full.distance < 0.5
    assert 0 < near.sum() < len(near)
    np.testing.assert_array_equal(limited.distance[near], full.distance[near])
    assert np.isinf(limited.distance[~near]).all()
    assert np.isnan(limited.point_a[~near]).all() and (limited.triangle_a[~near] == -1).all()
    assert limited.work[:, 0].sum() < full.work[:, 0].sum()  # the limit prunes


def test_touching_parts_and_tiny_gaps():
    cube_v, cube_f = naive.cube()
    cube = tc.TriangleMesh(cube_v, cube_f)
    for gap, touching in ((0.0, True), (1e-12, False), (1e-9, False)):
        up = np.eye(4)
        up[2, 3] = 1.0 + gap
        r = clearance(cube, None, cube, up)
        assert r.intersecting == touching
        assert r.distance == pytest.approx(gap, abs=1e-15)
        # a quarter turn about z (exact matrix) stacks the same way
        turn = np.array([[0, -1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 1 + gap], [0, 0, 0, 1]], dtype=float)
        assert clearance(cube, None, cube, turn).intersecting == touching
    # scaled to 1e-6 and 1e6
    for scale in (1e-6, 1e6):
        small = tc.TriangleMesh(cube_v * scale, cube_f)
        up = np.eye(4)
        up[0, 3] = scale
        assert clearance(small, None, small, up).intersecting
        up[0, 3] = scale * 1.001
        r = clearance(small, None, small, up)
        assert not r.intersecting and r.distance == pytest.approx(scale * 0.001, rel=1e-9)


def test_nested_closed_parts_do_not_touch():
    outer, inner = _sphere(2, 1.0), _sphere(1, 0.3)
    r = clearance(outer, None, inner, None)
    assert not r.intersecting and 0.6 < r.distance < 0.71


def test_intersection_curve_of_two_spheres():
    a, b = _sphere(3, 1.0), _sphere(3, 0.5)
    shift = np.eye(4)
    shift[0, 3] = 1.2
    r = clearance(a, None, b, shift, curve=True)
    assert r.intersecting and len(r.pairs) > 50
    # the curve is the circle x = x0, radius sqrt(1 - x0^2) (polyhedral: within a few %)
    x0 = (1 + 1.44 - 0.25) / 2.4
    length = np.linalg.norm(r.segments[:, 1] - r.segments[:, 0], axis=1).sum()
    assert length == pytest.approx(2 * np.pi * np.sqrt(1 - x0 ** 2), rel=0.03)
    # the reported pairs are exactly the intersecting pairs (brute force over all pairs)
    ta, tb = a.vertices[a.faces], _world(b, shift)[b.faces]
    i, j = np.meshgrid(np.arange(len(ta)), np.arange(len(tb)), indexing="ij")
    lo = np.maximum(ta.min(1)[i.ravel()], tb.min(1)[j.ravel()])
    hi = np.minimum(ta.max(1)[i.ravel()], tb.max(1)[j.ravel()])
    boxed = (lo <= hi).all(axis=1)
    _, hit = naive.triangle_pair_distance(ta[i.ravel()[boxed]], tb[j.ravel()[boxed]])
    expected = {(int(x), int(y)) for x, y in zip(i.ravel()[boxed][hit], j.ravel()[boxed][hit])}
    assert {tuple(map(int, p)) for p in r.pairs} == expected
    # segment ends lie on both surfaces
    ends = r.segments.reshape(-1, 3)
    rows = np.repeat(np.arange(len(r.pairs)), 2)
    on_a = naive.point_triangle_distance(ends, *np.moveaxis(ta[r.pairs[rows, 0]], 1, 0))
    on_b = naive.point_triangle_distance(ends, *np.moveaxis(tb[r.pairs[rows, 1]], 1, 0))
    assert on_a.max() < 1e-9 and on_b.max() < 1e-9
    apart = clearance(a, None, b, np.eye(4) + np.pad([[3.0]], ((0, 3), (3, 0))), curve=True)
    assert not apart.intersecting and len(apart.pairs) == 0


def test_bad_input_raises_geometry_error():
    a = _sphere(1)
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(GeometryError):
        clearance(a, bad, a, None)
    with pytest.raises(GeometryError):
        clearance(a, None, 42, None)
    with pytest.raises(GeometryError):
        clearance(a, None, tc.Sphere(1.0), None)
    with pytest.raises(GeometryError):
        clearance(a, np.stack([np.eye(4)] * 3), a, np.stack([np.eye(4)] * 2))
    with pytest.raises(GeometryError):
        clearance(a, None, a, None, max_distance=-1.0)
    with pytest.raises(GeometryError):
        clearance(a, None, a, np.stack([np.eye(4)] * 2), curve=True)
    with pytest.raises(GeometryError):
        clearance_all([a])
    with pytest.raises(GeometryError):
        clearance_all([a, a], pairs=[(0, 2)])
    with pytest.raises(GeometryError):
        ClearancePart(a, leaf_size=0)
    with pytest.raises(tc.MeshFormatError):
        clearance("/nonexistent/part.stl", None, a, None)


def test_prepared_parts_are_cached_and_reusable():
    a = _sphere(1)
    # the built arrays are cached per mesh (the part objects are thin wrappers: a cached part
    # would hold its mesh and keep it alive, issue 23)
    first, second = prepare(a), prepare(a)
    assert first.mesh is second.mesh is a
    assert all(x is y for x, y in zip(
        (first.node_index, first.node_bounds, first.triangles, first.triangle_ids),
        (second.node_index, second.node_bounds, second.triangles, second.triangle_ids)))
    part = ClearancePart(a, leaf_size=4)
    r1 = clearance(part, None, a, np.eye(4) + np.pad([[2.5]], ((0, 3), (3, 0))))
    r2 = clearance(a, None, a, np.eye(4) + np.pad([[2.5]], ((0, 3), (3, 0))))
    assert r1.distance == pytest.approx(r2.distance, rel=1e-12)


# ------------------------------------------------------------------------------------------
# real STL parts: naive all pairs and python-fcl
def _pybullet_part(relative):
    pybullet_data = pytest.importorskip("pybullet_data")
    return tc.mesh.load(os.path.join(pybullet_data.getDataPath(), relative))


def _fcl_model(fcl, mesh):
    model = fcl.BVHModel()
    model.beginModel(len(mesh.vertices), len(mesh.faces))
    model.addSubModel(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64))
    model.endModel()
    return model


REAL_PAIRS = [  # (part A, part B, pose spread / part size: 30-45 % of the poses intersect)
    ("kuka_iiwa/meshes/link_1.stl", "kuka_iiwa/meshes/link_2.stl", 0.7),
    ("kuka_iiwa/meshes/link_3.stl", "kuka_iiwa/meshes/finger_base_left.stl", 0.3),
    pytest.param("differential/diff_spider_shaft.stl", "differential/diff_leftshaft.stl", 0.3, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name_a,name_b,spread", REAL_PAIRS)
def test_real_stl_parts_against_fcl_and_brute_force(name_a, name_b, spread):
    fcl = pytest.importorskip("fcl")
    a, b = _pybullet_part(name_a), _pybullet_part(name_b)
    size = max(np.ptp(a.vertices, axis=0).max(), np.ptp(b.vertices, axis=0).max())
    poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(120, scale=spread * size, seed=4)))
    ours = clearance(a, None, b, poses)
    assert 0.2 < ours.intersecting.mean() < 0.8, ours.intersecting.mean()
    model_a, model_b = _fcl_model(fcl, a), _fcl_model(fcl, b)
    object_a = fcl.CollisionObject(model_a, fcl.Transform())
    for k, pose in enumerate(poses):
        object_b = fcl.CollisionObject(model_b, fcl.Transform(pose[:3, :3], pose[:3, 3]))
        collided = fcl.collide(object_a, object_b, fcl.CollisionRequest(), fcl.CollisionResult())
        assert bool(collided) == ours.intersecting[k], k
        if not collided:
            result = fcl.DistanceResult()
            fcl_distance = fcl.distance(object_a, object_b, fcl.DistanceRequest(enable_nearest_points=True), result)
            assert ours.distance[k] == pytest.approx(fcl_distance, rel=1e-9, abs=1e-12 * size), k
    # brute force over all triangle pairs for some of the poses
    for k in range(0, len(poses), 24):
        distance, hit, _ = naive.mesh_clearance_brute(a.vertices, a.faces, _world(b, poses[k]), b.faces)
        assert ours.intersecting[k] == hit
        assert ours.distance[k] == pytest.approx(distance, rel=1e-9, abs=1e-12 * size)


def test_many_real_parts_at_once():
    names = ["kuka_iiwa/meshes/link_%d.stl" % k for k in range(2, 6)]
    parts = [_pybullet_part(name) for name in names]
    poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(len(parts), scale=0.2, seed=13)))
    table = clearance_all(parts, poses)
    assert len(table) == 6 and 0 < table.intersecting.sum() < 6
    for row, (i, j) in enumerate(table.pairs):
        distance, hit, _ = naive.mesh_clearance_brute(_world(parts[i], poses[i]), parts[i].faces,
                                                      _world(parts[j], poses[j]), parts[j].faces)
        assert table.intersecting[row] == hit
        assert table.distance[row] == pytest.approx(distance, rel=1e-9, abs=1e-14)
