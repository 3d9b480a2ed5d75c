"""2D separating axes (touche.planar, touche/_kernels/primitives/sat2d.py) against slow references
(tests/naive/planar.py, tests/naive/toi.py) on seeded random inputs, plus Eberly's worked example
and edge cases."""
import numpy as np
import pytest

import touche.planar as tp
from naive.planar import (
    area,
    distance,
    intersection_polygon,
    intersects as naive_intersects,
    minkowski_time_of_impact,
    point_distance,
)
from naive.toi import first_contact_by_sampling
from touche import GeometryError
from touche._kernels import kinds

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
GRID = 2.0**-10  # dyadic grid: reflections and translations below are exact in float64


def convex_polygons(rng, n, k, radius=1.0, grid=None):
    """n random strictly convex CCW k-gons (angle gaps bounded away from 0 and pi)."""
    gaps = rng.uniform(0.6, 1.6, size=(n, k))
    angles = np.cumsum(gaps / gaps.sum(axis=1, keepdims=True) * 2 * np.pi, axis=1) + rng.uniform(0, 7, (n, 1))
    scale = radius * rng.uniform(0.5, 1.5, size=(n, 1, 2))
    pts = np.stack([np.cos(angles), np.sin(angles)], axis=-1) * scale
    theta = rng.uniform(0, 2 * np.pi, n)
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    pts = np.stack([c * pts[..., 0] - s * pts[..., 1], s * pts[..., 0] + c * pts[..., 1]], axis=-1)
    if grid is not None:
        pts = np.round(pts / grid) * grid
    return np.ascontiguousarray(pts)


# ------------------------------------------------------------------------------ worked example


@pytest.mark.parametrize("delta", [0.25, 0.5, 0.75])
def test_eberly_moving_squares_edge_edge(delta):
    # S0 §6 / SEED-NOTES §2 item 1: delta < 1 -> edge-edge first contact at t = delta, TLast = 1.
    b = SQUARE + [0.0, 1.0 + delta]
    r = tp.time_of_impact(SQUARE, [0, 0], b, [1, -1], t_max=10.0)
    assert r.status == tp.ImpactStatus.HIT
    assert r.t_first == pytest.approx(delta, abs=1e-15)
    assert r.t_last == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(r.normal, [0, 1], atol=1e-15)
    assert r.kind == kinds.SET_SEGMENT
    # at t = delta, B spans x in [delta, 1 + delta]: the contact is [delta, 1] x {1}
    np.testing.assert_allclose(sorted(map(tuple, r.points)), [(delta, 1.0), (1.0, 1.0)], atol=1e-15)


def test_eberly_moving_squares_vertex_and_miss():
    r = tp.time_of_impact(SQUARE, [0, 0], SQUARE + [0, 2.0], [1, -1], t_max=10.0)
    assert (r.status, r.t_first, r.t_last, r.kind) == (tp.ImpactStatus.HIT, 1.0, 1.0, kinds.SET_POINT)
    np.testing.assert_allclose(r.points, [[1.0, 1.0]], atol=1e-15)
    r = tp.time_of_impact(SQUARE, [0, 0], SQUARE + [0, 2.5], [1, -1], t_max=10.0)
    assert r.status == tp.ImpactStatus.MISS and np.isnan(r.t_first) and r.kind == kinds.SET_EMPTY
    # the same three as one batch; the moving square's velocity broadcasts
    batch = np.stack([SQUARE + [0, 1.5], SQUARE + [0, 2.0], SQUARE + [0, 2.5]])
    rb = tp.time_of_impact(SQUARE, [0, 0], batch, [1, -1], 10.0)
    assert rb.status.tolist() == [kinds.HIT, kinds.HIT, kinds.MISS]
    np.testing.assert_allclose(rb.t_first[:2], [0.5, 1.0])
    np.testing.assert_allclose(rb.t_last[:2], [1.0, 1.0])
    assert rb.kind.tolist() == [kinds.SET_SEGMENT, kinds.SET_POINT, kinds.SET_EMPTY]


# ------------------------------------------------------------------------------- static test


def test_static_vs_exact_reference():
    rng = np.random.default_rng(11)
    n = 3000
    a = convex_polygons(rng, n, 5)
    b = convex_polygons(rng, n, 4) + rng.uniform(-2.5, 2.5, (n, 1, 2))
    got = tp.intersects(a, b)
    want = np.array([naive_intersects(a[i], b[i]) for i in range(n)])
    assert 0.2 < want.mean() < 0.8
    assert (got == want).all(), np.nonzero(got != want)[0][:10]


def test_touching_is_intersecting():
    rng = np.random.default_rng(12)
    n = 400
    a = convex_polygons(rng, n, 5, grid=GRID)
    i = rng.integers(0, 5, n)
    vertex = a[np.arange(n), i]
    # reflection through a vertex touches at exactly that vertex; through an edge midpoint it
    # touches along the whole edge (exact on the dyadic grid)
    b_vertex = 2 * vertex[:, None, :] - a
    mid2 = a[np.arange(n), i] + a[np.arange(n), (i + 1) % 5]
    b_edge = mid2[:, None, :] - a
    assert tp.intersects(a, b_vertex).all() and tp.intersects(a, b_edge).all()
    assert all(naive_intersects(a[j], b_vertex[j]) for j in range(0, n, 20))
    kind, pts = tp.intersection(a, b_vertex)
    assert (kind == kinds.SET_POINT).all()
    np.testing.assert_allclose(pts[:, 0], vertex, atol=1e-12)
    kind, pts = tp.intersection(a, b_edge)
    assert (kind == kinds.SET_SEGMENT).all()
    ends = np.stack([a[np.arange(n), i], a[np.arange(n), (i + 1) % 5]], axis=1)
    same = np.abs(pts[:, :2] - ends).max(axis=(1, 2))
    swapped = np.abs(pts[:, :2] - ends[:, ::-1]).max(axis=(1, 2))
    assert (np.minimum(same, swapped) <= 1e-9).all()
    # pushed apart by a tiny gap along the edge normal: separated
    e = a[np.arange(n), (i + 1) % 5] - a[np.arange(n), i]
    normal = np.stack([e[:, 1], -e[:, 0]], axis=1) / np.hypot(e[:, 0], e[:, 1])[:, None]
    assert not tp.intersects(a, b_edge + 1e-9 * normal[:, None, :]).any()


# -------------------------------------------------------------------------------- time of impact


def _toi_cases(rng, n):
    """Mixed batch of pentagon pairs: generic, antiparallel edges, touching at t = 0, grazes."""
    k = 5
    a = convex_polygons(rng, n, k, grid=GRID)
    b = np.empty_like(a)
    vb = np.zeros((n, 2))
    va = rng.uniform(-0.3, 0.3, (n, 2))
    category = rng.integers(0, 5, n)
    idx = np.arange(n)
    i = rng.integers(0, k, n)
    vertex = a[idx, i]
    prev_dir = vertex - a[idx, (i - 1) % k]
    next_dir = a[idx, (i + 1) % k] - vertex
    tangent = prev_dir / np.linalg.norm(prev_dir, axis=1)[:, None] + next_dir / np.linalg.norm(next_dir, axis=1)[:, None]
    # 0: generic; random B placed around A, velocity roughly towards A
    g = category == 0
    b[g] = convex_polygons(rng, g.sum(), k) + (offset := rng.uniform(-4, 4, (g.sum(), 1, 2)))
    vb[g] = -offset[:, 0] * rng.uniform(0.0, 1.2, (g.sum(), 1)) + rng.normal(0, 0.5, (g.sum(), 2))
    # 1: antiparallel edges: B = reflection of A, shifted away, moving back (edge-edge contacts)
    p = category == 1
    shift = rng.uniform(-5, 5, (p.sum(), 1, 2))
    b[p] = -a[p] + shift
    vb[p] = -shift[:, 0] * rng.uniform(0.2, 1.0, (p.sum(), 1)) + rng.normal(0, 0.1, (p.sum(), 2))
    # 2, 3: touching at t = 0 (vertex / edge reflections), any velocity
    t = category == 2
    b[t] = 2 * vertex[t][:, None, :] - a[t]
    vb[t] = rng.normal(0, 1, (t.sum(), 2))
    e = category == 3
    b[e] = (vertex[e] + a[idx[e], (i[e] + 1) % k])[:, None, :] - a[e]
    vb[e] = rng.normal(0, 1, (e.sum(), 2))
    # 4: vertex-vertex graze at t0 = 1: B slides along a supporting line of A at a vertex
    r = category == 4
    vb[r] = tangent[r] * rng.uniform(0.5, 2.0, (r.sum(), 1)) * rng.choice([-1, 1], (r.sum(), 1))
    b[r] = 2 * vertex[r][:, None, :] - a[r] - (vb[r] - va[r])[:, None, :]
    return a, va, np.ascontiguousarray(b), vb, category


def _check_contact(a, va, b, vb, t, points, scale):
    for p in points:
        assert point_distance(p, a + t * va) <= 1e-9 * scale
        assert point_distance(p, b + t * vb) <= 1e-9 * scale


def test_time_of_impact_vs_references():
    rng = np.random.default_rng(2026)
    n = 10_000
    t_max = 2.0
    a, va, b, vb, category = _toi_cases(rng, n)
    r = tp.time_of_impact(a, va, b, vb, t_max)  # one batch call
    status = r.status
    hit = status == kinds.HIT
    touching = status == kinds.ALREADY_TOUCHING
    assert touching[(category == 2) | (category == 3)].all()
    # the contact set at t = 0 of a vertex reflection is that vertex, of an edge reflection the edge
    assert (r.kind[category == 2] == kinds.SET_POINT).all()
    assert (r.kind[category == 3] == kinds.SET_SEGMENT).all()
    generic = category <= 1
    assert 0.2 < hit[generic].mean() < 0.8
    # reference 1 (all non-graze cases): ray cast against the Minkowski difference
    for j in np.nonzero(category <= 3)[0]:
        ref = minkowski_time_of_impact(a[j], va[j], b[j], vb[j], t_max)
        if category[j] >= 2:  # exact touching at t = 0: the hull's rounding may put 0 outside
            if j % 8 == 0:  # (exact rational clipping is slow; the construction is exact anyway)
                assert naive_intersects(a[j], b[j]), j
            if ref is None:
                assert r.t_last[j] <= 1e-9, j  # the sets separate at once
                continue
        if ref is None:
            assert status[j] == kinds.MISS, j
            continue
        assert status[j] != kinds.MISS, j
        assert abs(r.t_first[j] - ref[0]) <= 1e-9 * max(1.0, ref[0]), (j, r.t_first[j], ref)
        assert abs(r.t_last[j] - ref[1]) <= 1e-9 * max(1.0, ref[1]), (j, r.t_last[j], ref)
        if category[j] <= 1 and (touching[j] or ref[0] <= 1e-9):  # touching <=> exact static test
            assert bool(touching[j]) == naive_intersects(a[j], b[j]), j
    # contact sets: on both polygons at t_first; the normal separates them there
    for j in np.nonzero(hit)[0]:
        pts = r.points[j][~np.isnan(r.points[j, :, 0])]
        assert len(pts) == (1 if r.kind[j] == kinds.SET_POINT else 2)
        t = r.t_first[j]
        _check_contact(a[j], va[j], b[j], vb[j], t, pts, 10.0)
        gap = (b[j] + t * vb[j]) @ r.normal[j]
        assert gap.min() >= ((a[j] + t * va[j]) @ r.normal[j]).max() - 1e-9
    # ... and they are the whole contact set: stepping past an end along the contact line
    # leaves one of the polygons (distance grows linearly with the step)
    for j in np.nonzero(hit)[0][:400]:
        t = r.t_first[j]
        tangent = np.array([-r.normal[j, 1], r.normal[j, 0]])
        pts = r.points[j][~np.isnan(r.points[j, :, 0])]
        ends = pts if len(pts) == 2 else np.concatenate([pts, pts])
        along = (ends[1] - ends[0]) @ tangent
        lo_end, hi_end = (ends[0], ends[1]) if along >= 0 else (ends[1], ends[0])
        for q in (lo_end - 1e-6 * tangent, hi_end + 1e-6 * tangent):
            outside = max(point_distance(q, a[j] + t * va[j]), point_distance(q, b[j] + t * vb[j]))
            assert outside > 1e-10, (j, q)
    # parallel edges meeting head-on produce edge-edge (segment) contacts
    assert (r.kind[hit & (category == 1)] == kinds.SET_SEGMENT).mean() > 0.05
    # grazes (category 4): the contact lasts an instant at t0 = 1; where reported, it is right
    graze = category == 4
    assert hit[graze].mean() > 0.3
    for j in np.nonzero(graze & hit)[0]:
        assert abs(r.t_first[j] - 1.0) <= 1e-9 and abs(r.t_last[j] - 1.0) <= 1e-9
        assert distance(a[j] + va[j], b[j] + vb[j]) <= 1e-9
        assert distance(a[j] + 0.99 * va[j], b[j] + 0.99 * vb[j]) > 0.0
        _check_contact(a[j], va[j], b[j], vb[j], 1.0, r.points[j, :1], 10.0)
    for j in np.nonzero(graze & ~hit)[0]:  # missed by rounding: then the contact is only a graze
        assert status[j] == kinds.MISS
        assert distance(a[j] + va[j], b[j] + vb[j]) <= 1e-9


def test_time_of_impact_vs_sampling():
    # reference 2: dense sampling + bisection of the naive static test (tests/naive/toi.py)
    rng = np.random.default_rng(7)
    n = 400
    a, va, b, vb, category = _toi_cases(rng, n)
    r = tp.time_of_impact(a, va, b, vb, 2.0)
    for j in range(n):
        ref = first_contact_by_sampling(
            lambda t: naive_intersects(a[j] + t * va[j], b[j] + t * vb[j], exact=False), 2.0, samples=200
        )
        if ref is None:
            if r.status[j] == kinds.HIT:  # sampling blind spot: the kernel must show a real graze
                t = r.t_first[j]
                assert distance(a[j] + t * va[j], b[j] + t * vb[j]) <= 1e-9
                assert r.t_last[j] - t < 2.0 / 200
            else:
                assert r.status[j] == kinds.MISS
            continue
        if r.status[j] == kinds.MISS:  # allowed only for an instantaneous graze lost to rounding
            assert category[j] == 4 and abs(ref - 1.0) <= 1e-9, j
            assert distance(a[j] + 1.001 * va[j], b[j] + 1.001 * vb[j]) > 0.0, j
            continue
        assert abs(r.t_first[j] - ref) <= 1e-9 * max(1.0, ref), (j, r.t_first[j], ref)


def test_time_of_impact_degenerate_sets_vs_sampling():
    rng = np.random.default_rng(8)
    poly = convex_polygons(rng, 1, 6)[0]
    cases = []
    for _ in range(40):
        seg = rng.uniform(-3, 3, (2, 2))
        point = rng.uniform(-3, 3, (1, 2))
        v = rng.normal(0, 2, 2)
        cases += [(poly, seg, v), (seg, point, v), (seg, seg[::-1] + rng.uniform(-1, 1, 2), v), (point, point + 1.0, v)]
    # collinear segments sliding along their common line, and a point moving along a segment
    cases.append((np.array([[0.0, 0], [1, 0]]), np.array([[3.0, 0], [4, 0]]), np.array([-1.0, 0])))
    cases.append((np.array([[0.0, 0], [1, 0]]), np.array([[3.0, 0]]), np.array([-1.0, 0])))
    cases.append((np.array([[0.0, 0]]), np.array([[3.0, 3.0]]), np.array([-1.0, -1.0])))
    hits = 0
    for a, b, v in cases:
        r = tp.time_of_impact(a, [0, 0], b, v, 4.0)
        ref = first_contact_by_sampling(lambda t: naive_intersects(a, b + t * v, exact=False), 4.0, samples=250)
        if ref is None:
            if r.status == tp.ImpactStatus.HIT:
                assert distance(a, b + r.t_first * v) <= 1e-9
            else:
                assert r.status == tp.ImpactStatus.MISS
            continue
        hits += 1
        assert abs(r.t_first - ref) <= 1e-9 * max(1.0, ref)
        _check_contact(a, np.zeros(2), b, v, r.t_first, r.points, 10.0)
    assert hits >= 15
    r = tp.time_of_impact([[0.0, 0], [1, 0]], [0, 0], [[3.0, 0], [4, 0]], [-1, 0], 4.0)
    assert (r.t_first, r.t_last, r.kind) == (2.0, 4.0, kinds.SET_POINT)
    np.testing.assert_allclose(r.points, [[1.0, 0.0]])


# ------------------------------------------------------------------------------- intersection


def test_intersection_polygon_vs_exact_clip():
    rng = np.random.default_rng(21)
    n = 1500
    a = convex_polygons(rng, n, 6)
    b = convex_polygons(rng, n, 5) + rng.uniform(-1.0, 1.0, (n, 1, 2))
    kind, pts = tp.intersection(a, b)
    compared = 0
    for j in range(n):
        ref = intersection_polygon(a[j], b[j])
        got = pts[j][~np.isnan(pts[j, :, 0])]
        if len(ref) == 0:
            assert kind[j] == kinds.SET_EMPTY
            continue
        if area(ref) < 1e-6:
            continue  # slivers: the collapse rule decides; checked in the touching tests
        compared += 1
        assert kind[j] == kinds.SET_POLYGON
        assert area(got) == pytest.approx(area(ref), rel=1e-9)
        assert area(got) > 0  # counter-clockwise
        # same vertex set (each vertex matches one of the other within 1e-9)
        d = np.linalg.norm(got[:, None, :] - ref[None, :, :], axis=-1)
        ref_short = ref[d.min(axis=0) > 1e-9]
        assert (d.min(axis=1) <= 1e-9).all() and len(ref_short) == 0
    assert compared > 0.5 * n


# ------------------------------------------------------------------------------------ edge cases


def test_identical_polygons_and_degenerate_sets():
    tri = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
    assert tp.intersects(tri, tri)
    kind, pts = tp.intersection(tri, tri)
    assert kind == kinds.SET_POLYGON and area(pts) == pytest.approx(2.0)
    r = tp.time_of_impact(tri, [1, 0], tri, [1, 0], 1.0)
    assert r.status == tp.ImpactStatus.ALREADY_TOUCHING and r.t_first == 0.0 and r.t_last == 1.0
    assert r.kind == kinds.SET_POLYGON and r.points.shape == (0, 2)
    # segment vs polygon: crossing, along an edge, outside
    assert tp.intersection(tri, [[-1, 1], [3, 1]])[0] == kinds.SET_SEGMENT
    np.testing.assert_allclose(tp.intersection(tri, [[-1, 1], [3, 1]])[1], [[0, 1], [1, 1]], atol=1e-11)
    assert tp.intersection(tri, [[0.5, 0], [3, 0]])[0] == kinds.SET_SEGMENT
    assert tp.intersection(tri, [[3, 3], [4, 3]])[0] == kinds.SET_EMPTY
    # point vs polygon: inside, on an edge, on a vertex, outside
    for p, want in (([0.5, 0.5], True), ([1.0, 1.0], True), ([2.0, 0.0], True), ([1.0, 1.0 + 1e-12], False)):
        assert tp.intersects(tri, [p]) == want == naive_intersects(tri, [p])
    assert tp.intersection(tri, [[1.0, 1.0]])[0] == kinds.SET_POINT
    # point vs point, zero-length segment
    assert tp.intersects([[1.0, 2.0]], [[1.0, 2.0]]) and not tp.intersects([[1.0, 2.0]], [[1.0, 2.5]])
    assert tp.intersects([[1.0, 2.0], [1.0, 2.0]], [[1.0, 2.0]])
    assert not tp.intersects([[1.0, 2.0], [1.0, 2.0]], [[2.0, 2.0]])
    # clockwise input is reoriented
    assert tp.intersection(tri, tri[::-1])[0] == kinds.SET_POLYGON
    assert tp.intersects(tri[::-1], tri + [2.0, 0.0])


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_scales(scale):
    b = (SQUARE + [0, 1.5]) * scale
    r = tp.time_of_impact(SQUARE * scale, [0, 0], b, [scale, -scale], 10.0)
    assert r.status == tp.ImpactStatus.HIT
    assert r.t_first == pytest.approx(0.5, rel=1e-12) and r.t_last == pytest.approx(1.0, rel=1e-12)
    assert r.kind == kinds.SET_SEGMENT
    np.testing.assert_allclose(sorted(map(tuple, r.points)), np.array([(0.5, 1.0), (1.0, 1.0)]) * scale,
                               rtol=1e-12, atol=0)
    kind, pts = tp.intersection(SQUARE * scale, (SQUARE + 0.5) * scale)
    assert kind == kinds.SET_POLYGON and area(pts) == pytest.approx(0.25 * scale**2, rel=1e-9)
    assert tp.intersects(SQUARE * scale, (SQUARE + [1.0, 0.0]) * scale)
    assert not tp.intersects(SQUARE * scale, (SQUARE + [1.0 + 1e-9, 0.0]) * scale)


def test_zero_velocity_and_zero_t_max():
    far = SQUARE + [3.0, 0.0]
    touch = SQUARE + [1.0, 0.0]
    assert tp.time_of_impact(SQUARE, [0, 0], far, [0, 0], 5.0).status == tp.ImpactStatus.MISS
    assert tp.time_of_impact(SQUARE, [1, 1], far, [1, 1], 5.0).status == tp.ImpactStatus.MISS  # same velocity
    r = tp.time_of_impact(SQUARE, [0, 0], touch, [0, 0], 5.0)
    assert r.status == tp.ImpactStatus.ALREADY_TOUCHING and r.t_last == 5.0 and r.kind == kinds.SET_SEGMENT
    np.testing.assert_allclose(r.normal, [1, 0])
    # moving along the shared edge's direction keeps touching; moving away ends it at t = 0
    assert tp.time_of_impact(SQUARE, [0, 0], touch, [0, 1], 0.5).t_last == 0.5
    assert tp.time_of_impact(SQUARE, [0, 0], touch, [1, 0], 5.0).t_last == 0.0
    # parallel motion beside an edge with a gap: never closes (zero speed along the axis)
    assert tp.time_of_impact(SQUARE, [0, 0], far, [0, 3], 5.0).status == tp.ImpactStatus.MISS
    # t_max = 0: only contact at t = 0 counts
    assert tp.time_of_impact(SQUARE, [0, 0], far, [-10, 0], 0.0).status == tp.ImpactStatus.MISS
    assert tp.time_of_impact(SQUARE, [0, 0], touch, [-10, 0], 0.0).status == tp.ImpactStatus.ALREADY_TOUCHING
    # hit exactly at t_max counts, just after does not
    assert tp.time_of_impact(SQUARE, [0, 0], far, [-1, 0], 2.0).status == tp.ImpactStatus.HIT
    assert tp.time_of_impact(SQUARE, [0, 0], far, [-1, 0], 1.999).status == tp.ImpactStatus.MISS


def test_place_batches():
    rng = np.random.default_rng(5)
    t = rng.uniform(-3, 3, (500, 2))
    angles = rng.uniform(0, 2 * np.pi, 500)
    placed = tp.place(SQUARE, t, angles)
    assert placed.shape == (500, 4, 2)
    got = tp.intersects(SQUARE, placed)
    want = [naive_intersects(SQUARE, placed[i]) for i in range(500)]
    assert got.tolist() == want
    r = tp.time_of_impact(SQUARE, [0, 0], placed, -t, np.full(500, 2.0))
    assert r.status.shape == (500,) and r.points.shape == (500, 2, 2) and r.normal.shape == (500, 2)
    assert (r.status != kinds.MISS).mean() > 0.9  # every copy heads for the square


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "poly",
    [
        [[0, 0], [1, np.nan], [0, 1]],  # NaN
        [[0, 0], [1, np.inf], [0, 1]],
        [[0, 0, 0], [1, 0, 0]],  # wrong shape
        np.zeros((2, 3, 4, 2)),
        np.zeros((0, 2)),
        [[0, 0], [2, 0], [1, 0.2], [2, 2], [0, 2]],  # reflex vertex
        [[0, 0], [1, 0], [2, 0]],  # collinear only
        [[0, 0], [1, 0], [1, 0], [0, 1]],  # repeated vertex
        [[np.cos(t), np.sin(t)] for t in np.arange(5) * 4 * np.pi / 5],  # pentagram (winds twice)
        "abc",
    ],
)
def test_bad_polygons(poly):
    with pytest.raises(GeometryError):
        tp.intersects(poly, SQUARE)
    with pytest.raises(GeometryError):
        tp.time_of_impact(SQUARE, [0, 0], poly, [0, 0], 1.0)


def test_bad_motion_arguments():
    for t_max in (-1.0, np.nan, [[1.0]]):
        with pytest.raises(GeometryError):
            tp.time_of_impact(SQUARE, [0, 0], SQUARE, [1, 0], t_max)
    for v in ([1, 2, 3], [np.nan, 0], [[1, 0], [0, 1], [1, 1]]):
        with pytest.raises(GeometryError):
            tp.time_of_impact(SQUARE, v, np.stack([SQUARE, SQUARE]), [0, 0], 1.0)
    with pytest.raises(GeometryError):
        tp.intersects(np.stack([SQUARE] * 3), np.stack([SQUARE] * 2))
