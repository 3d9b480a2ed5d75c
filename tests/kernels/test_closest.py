"""Tests for touche._kernels.primitives.closest against the slow references in naive/closest.py.

Distances are compared with tolerance 1e-9 * S, S = the scale of the configuration (largest
input coordinate magnitude / extent): relative to the problem size, since an absolute error of
a few ulps of the coordinates cannot be relative to a distance that is (near) zero.
"""

import math

import numpy as np

from naive import closest as N
from touche._kernels import closest as K

INF = np.inf
REL = 1e-9
SCALES = (1.0, 1e-6, 1e6)


def f3(x):
    return np.ascontiguousarray(x, dtype=np.float64)


def rot(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return f3(Q)


def unit(rng):
    v = rng.normal(size=3)
    return f3(v / np.linalg.norm(v))


def scale_of(*xs):
    return max(1e-300, max(float(np.max(np.abs(np.asarray(x, float)))) for x in xs))


def cases(seed, n=200):
    """(rng, scale, offset) triples: n cases at scale 1 plus 40 at each of 1e-6 and 1e6."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n + 80):
        s = 1.0 if i < n else (1e-6 if i < n + 40 else 1e6)
        out.append((s, f3(rng.normal(size=3) * s * rng.choice([0.0, 3.0]))))
    return rng, out


def assert_close(d, dref, S, what=""):
    assert abs(d - dref) <= REL * S, (what, d, dref, S)


def rand_tri(rng, s, o):
    a, b, c = (f3(o + rng.normal(size=3) * s) for _ in range(3))
    k = rng.integers(8)
    if k == 0:  # collinear
        c = f3(a + rng.uniform(-1, 2) * (b - a))
    elif k == 1:  # coincident pair
        b = a.copy()
    elif k == 2:  # all equal
        b = a.copy()
        c = a.copy()
    return a, b, c


# =================================================================== point queries


def test_plane():
    rng, cs = cases(1)
    for s, o in cs:
        n = unit(rng)
        d = float(rng.normal() * s)
        p = f3(o + rng.normal(size=3) * s)
        q = K.closest_point_plane(p, n, d)
        S = scale_of(p, d)
        assert abs(n @ q - d) <= REL * S
        assert np.linalg.norm(np.cross(q - p, n)) <= REL * S
        assert_close(np.linalg.norm(q - p), abs(n @ p - d), S)
    # hand: plane z = 2
    q = K.closest_point_plane(f3([1, 2, 5]), f3([0, 0, 1]), 2.0)
    assert np.array_equal(q, [1, 2, 2])


BOUNDS = [(-INF, INF), (0.0, INF), (-INF, 0.0), (0.0, 1.0), (-2.0, 0.5), (0.3, 0.3)]


def test_linear_and_segment():
    rng, cs = cases(2)
    for i, (s, o) in enumerate(cs):
        p = f3(o + rng.normal(size=3) * s)
        a = f3(o + rng.normal(size=3) * s)
        d = f3(rng.normal(size=3) * s) if i % 7 else np.zeros(3)
        lo, hi = BOUNDS[i % len(BOUNDS)]
        q, t = K.closest_point_linear(p, a, d, lo, hi)
        dref, _, _ = N.linear_linear_exact(a, d, lo, hi, p, np.zeros(3), 0.0, 0.0)
        S = scale_of(p, a, d)
        assert lo <= t <= hi
        assert np.linalg.norm(q - (a + t * d)) <= REL * S
        assert_close(np.linalg.norm(q - p), dref, S)
        # segment
        b = f3(a + d)
        q, t = K.closest_point_segment(p, a, b)
        dref, _, _ = N.linear_linear_exact(a, b - a, 0.0, 1.0, p, np.zeros(3), 0.0, 0.0)
        assert 0.0 <= t <= 1.0
        assert np.linalg.norm(q - (a + t * (b - a))) <= REL * S
        assert_close(np.linalg.norm(q - p), dref, S)
    # hand-computed
    z = np.zeros(3)
    q, t = K.closest_point_linear(f3([2, 3, 0]), z, f3([1, 0, 0]), -INF, INF)
    assert t == 2.0 and np.array_equal(q, [2, 0, 0])
    q, t = K.closest_point_linear(f3([-2, 3, 0]), z, f3([1, 0, 0]), 0.0, INF)  # ray
    assert t == 0.0 and np.array_equal(q, z)
    q, t = K.closest_point_linear(f3([-2, 3, 0]), z, z, 1.0, 4.0)  # zero direction
    assert t == 1.0 and np.array_equal(q, z)
    a, b = f3([1, 1, 1]), f3([3, 1, 1])
    q, t = K.closest_point_segment(f3([5, 0, 1]), a, b)
    assert t == 1.0 and np.array_equal(q, b)  # endpoint returned exactly
    q, t = K.closest_point_segment(f3([2, 1, 1]), a, b)  # on the segment
    assert np.array_equal(q, [2, 1, 1])
    q, t = K.closest_point_segment(f3([7, 7, 7]), a, a)  # zero length
    assert np.array_equal(q, a)


def test_aabb_obb_rectangle():
    rng, cs = cases(3)
    n_in = 0
    for s, o in cs:
        # AABB
        mn = f3(o + rng.normal(size=3) * s)
        mx = f3(mn + rng.uniform(0, 2, size=3) * s * (rng.random(3) > 0.1))
        p = f3(o + rng.normal(size=3) * s * 1.2)
        q = K.closest_point_aabb(p, mn, mx)
        S = scale_of(p, mn, mx)
        assert np.all(q >= mn) and np.all(q <= mx)
        corners = N.obb_corners(0.5 * (mn + mx), np.eye(3), 0.5 * (mx - mn))
        assert_close(np.linalg.norm(q - p), N.hull_dist(p, corners), S, "aabb")
        # OBB
        R = rot(rng)
        c = f3(o + rng.normal(size=3) * s)
        half = f3(rng.uniform(0, 1.5, size=3) * s * (rng.random(3) > 0.05))
        p = f3(c + rng.normal(size=3) * s * 0.6)
        q = K.closest_point_obb(p, c, R, half)
        S = scale_of(p, c, half)
        assert np.all(np.abs(R.T @ (q - c)) <= half + REL * S)
        dref = N.hull_dist(p, N.obb_corners(c, R, half))
        assert_close(np.linalg.norm(q - p), dref, S, "obb")
        if dref == 0.0 or np.all(np.abs(R.T @ (p - c)) <= half):
            n_in += 1
            assert np.array_equal(q, p)
        # rectangle
        e0, e1 = half[0], half[1]
        q = K.closest_point_rectangle(p, c, f3(R[:, 0]), f3(R[:, 1]), e0, e1)
        rect = np.array([c + a * e0 * R[:, 0] + b * e1 * R[:, 1] for a in (-1, 1) for b in (-1, 1)])
        assert N.hull_dist(q, rect) <= REL * S
        assert_close(np.linalg.norm(q - p), N.hull_dist(p, rect), S, "rect")
    assert 0.2 * len(cs) <= n_in <= 0.8 * len(cs)
    # hand
    q = K.closest_point_aabb(f3([2, -1, 0.5]), np.zeros(3), np.ones(3))
    assert np.array_equal(q, [1, 0, 0.5])
    R = f3([[0, -1, 0], [1, 0, 0], [0, 0, 1]])  # 90 deg about z
    q = K.closest_point_obb(f3([5, 0, 0]), np.zeros(3), R, f3([1, 2, 3]))
    assert np.allclose(q, [2, 0, 0], atol=1e-15)
    q = K.closest_point_rectangle(f3([3, 0.5, 7]), np.zeros(3), f3([1, 0, 0]), f3([0, 1, 0]), 1.0, 1.0)
    assert np.array_equal(q, [1, 0.5, 0])


def test_triangle():
    rng, cs = cases(4, 300)
    for s, o in cs:
        a, b, c = rand_tri(rng, s, o)
        p = f3(o + rng.normal(size=3) * s * 1.5)
        if rng.random() < 0.1:  # exactly on a vertex
            p = [a, b, c][rng.integers(3)].copy()
        q = K.closest_point_triangle(p, a, b, c)
        S = scale_of(p, a, b, c)
        assert np.all(np.isfinite(q))
        assert N.hull_dist(q, [a, b, c]) <= REL * S
        assert_close(np.linalg.norm(q - p), N.hull_dist(p, [a, b, c]), S, "tri")
    # hand: all seven Voronoi regions of the unit right triangle, and degenerate triangles
    a, b, c = f3([0, 0, 0]), f3([1, 0, 0]), f3([0, 1, 0])
    for p, e in [
        ([0.2, 0.3, 4], [0.2, 0.3, 0]),
        ([-1, -1, 1], [0, 0, 0]),
        ([2, -1, 0], [1, 0, 0]),
        ([-1, 2, 0], [0, 1, 0]),
        ([0.5, -1, 0], [0.5, 0, 0]),
        ([-1, 0.5, 3], [0, 0.5, 0]),
        ([1, 1, 0], [0.5, 0.5, 0]),
        ([0.5, 0.5, 0], [0.5, 0.5, 0]),  # on an edge
        ([1, 0, 0], [1, 0, 0]),  # on a vertex
    ]:
        assert np.allclose(K.closest_point_triangle(f3(p), a, b, c), e, atol=1e-15), p
    # zero area: collinear (middle vertex last) and coincident vertices
    m = f3([2, 0, 0])
    assert np.allclose(K.closest_point_triangle(f3([1.5, 1, 0]), a, m, b), [1.5, 0, 0])
    assert np.allclose(K.closest_point_triangle(f3([3, 1, 0]), a, b, m), [2, 0, 0])
    assert np.allclose(K.closest_point_triangle(f3([0.5, 1, 0]), a, a, b), [0.5, 0, 0])
    assert np.allclose(K.closest_point_triangle(f3([0.5, 1, 0]), b, a, a), [0.5, 0, 0])
    assert np.array_equal(K.closest_point_triangle(f3([5, 1, 0]), a, a, a), a)


def test_tetrahedron():
    rng, cs = cases(5)
    n_in = 0
    for s, o in cs:
        pts = [f3(o + rng.normal(size=3) * s) for _ in range(4)]
        if rng.random() < 0.15:  # flat
            pts[3] = f3(pts[0] + 0.3 * (pts[1] - pts[0]) + 0.9 * (pts[2] - pts[0]))
        p = f3(o + rng.normal(size=3) * s * 0.7)
        if rng.random() < 0.4:  # random barycentric point: inside (or just outside)
            w = rng.dirichlet(np.ones(4)) + rng.normal(size=4) * 0.02
            p = f3(w @ np.array(pts) / w.sum())
        q = K.closest_point_tetrahedron(p, *pts)
        S = scale_of(p, *pts)
        dref = N.hull_dist(p, pts)
        assert N.hull_dist(q, pts) <= REL * S
        assert_close(np.linalg.norm(q - p), dref, S, "tet")
        if dref <= REL * S:
            n_in += 1
    assert 0.2 * len(cs) <= n_in <= 0.8 * len(cs)
    z, x, y, w = f3([0, 0, 0]), f3([1, 0, 0]), f3([0, 1, 0]), f3([0, 0, 1])
    p = f3([0.1, 0.2, 0.3])
    assert np.array_equal(K.closest_point_tetrahedron(p, z, x, y, w), p)  # inside: itself
    assert np.allclose(K.closest_point_tetrahedron(f3([1, 1, 1]), z, x, y, w), [1 / 3] * 3)
    # flat tetrahedron (square): a point above the middle projects onto it
    sq = f3([1, 1, 0])
    assert np.allclose(K.closest_point_tetrahedron(f3([0.6, 0.7, 2]), z, x, sq, y), [0.6, 0.7, 0])


def rand_polygon(rng, s, o):
    k = int(rng.integers(3, 9))
    R = rot(rng)
    ang = np.sort(rng.uniform(0, 2 * np.pi, size=k))
    ax, ay = rng.uniform(0.3, 1.5, size=2) * s
    loc = np.column_stack([ax * np.cos(ang), ay * np.sin(ang), np.zeros(k)])
    verts = np.ascontiguousarray(o + loc @ R.T)
    return verts, f3(R[:, 2])


def test_convex_polygon():
    rng, cs = cases(6)
    n_in = 0
    for i, (s, o) in enumerate(cs):
        verts, nrm = rand_polygon(rng, s, o)
        if i % 10 == 0:  # repeated vertex
            verts = np.ascontiguousarray(np.vstack([verts[:1], verts]))
        p = f3(o + rng.normal(size=3) * s * 0.6)
        q = K.closest_point_convex_polygon(p, verts, nrm)
        S = scale_of(p, verts)
        assert N.hull_dist(q, verts) <= REL * S
        assert_close(np.linalg.norm(q - p), N.hull_dist(p, verts), S, "poly")
        n_in += abs(nrm @ (q - p)) >= np.linalg.norm(q - p) * (1 - 1e-9)  # projection
    assert 0.2 * len(cs) <= n_in <= 0.8 * len(cs)
    sq = f3([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    nz = f3([0, 0, 1])
    assert np.allclose(K.closest_point_convex_polygon(f3([0.3, 0.4, -2]), sq, nz), [0.3, 0.4, 0])
    assert np.allclose(K.closest_point_convex_polygon(f3([2, 0.4, 1]), sq, nz), [1, 0.4, 0])
    # degenerate: collinear polygon, 2-gon, 1-gon
    line = f3([[0, 0, 0], [1, 0, 0], [2, 0, 0]])
    assert np.allclose(K.closest_point_convex_polygon(f3([5, 1, 0]), line, nz), [2, 0, 0])
    assert np.allclose(K.closest_point_convex_polygon(f3([5, 1, 0]), sq[:2].copy(), nz), [1, 0, 0])
    assert np.allclose(K.closest_point_convex_polygon(f3([5, 1, 0]), sq[2:3].copy(), nz), [1, 1, 0])


def rand_polyhedron(rng, s, o):
    from scipy.spatial import ConvexHull

    pts = o + rng.normal(size=(int(rng.integers(4, 14)), 3)) * s
    h = ConvexHull(pts)
    V = np.ascontiguousarray(pts[h.vertices])
    remap = {v: i for i, v in enumerate(h.vertices)}
    tris = []
    for simp, eq in zip(h.simplices, h.equations):
        t = [remap[v] for v in simp]
        if np.cross(V[t[1]] - V[t[0]], V[t[2]] - V[t[0]]) @ eq[:3] < 0:
            t = [t[0], t[2], t[1]]
        tris.append(t)
    planes = np.ascontiguousarray(np.column_stack([h.equations[:, :3], -h.equations[:, 3]]))
    return V, np.ascontiguousarray(tris, dtype=np.int64), planes


def test_convex_polyhedron():
    rng, cs = cases(7)
    n_in = 0
    for s, o in cs:
        V, T, P = rand_polyhedron(rng, s, o)
        p = f3(o + rng.normal(size=3) * s * 0.5)
        q, inside = K.closest_point_convex_polyhedron(p, V, T, P)
        S = scale_of(p, V)
        dref = N.hull_dist(p, V)
        assert N.hull_dist(q, V) <= REL * S
        assert_close(np.linalg.norm(q - p), dref, S, "polyhedron")
        assert inside == bool(np.all(P[:, :3] @ p - P[:, 3] <= 0))
        if inside:
            n_in += 1
            assert np.array_equal(q, p) and dref <= REL * S
    assert 0.2 * len(cs) <= n_in <= 0.8 * len(cs)


def test_cylinder_cone():
    rng, cs = cases(8)
    n_cyl = n_cone = 0
    for i, (s, o) in enumerate(cs):
        p0 = f3(o + rng.normal(size=3) * s)
        p1 = f3(p0 + rng.normal(size=3) * s)
        r = float(rng.uniform(0, 1) * s) if i % 9 else 0.0
        p = f3(p0 + rng.uniform(-0.2, 1.2) * (p1 - p0) + rng.normal(size=3) * s * 0.5)
        if i % 13 == 0:  # on the axis line
            p = f3(p0 + rng.uniform(-1, 2) * (p1 - p0))
        S = scale_of(p, p0, p1, r)
        q = K.closest_point_cylinder(p, p0, p1, r)
        assert N.in_cylinder(q, p0, p1, r, REL * S)
        dref = N.cylinder_dist(p, p0, p1, r)
        assert_close(np.linalg.norm(q - p), dref, S, "cyl")
        n_cyl += dref == 0.0
        q = K.closest_point_cone(p, p0, p1, 2 * r)
        assert N.in_cone(q, p0, p1, 2 * r, REL * S)
        dref = N.cone_dist(p, p0, p1, 2 * r)
        assert_close(np.linalg.norm(q - p), dref, S, "cone")
        n_cone += dref == 0.0
    assert 0.15 * len(cs) <= n_cyl <= 0.8 * len(cs)
    assert 0.1 * len(cs) <= n_cone <= 0.8 * len(cs)
    z, x = np.zeros(3), f3([2, 0, 0])
    assert np.allclose(K.closest_point_cylinder(f3([1, 3, 0]), z, x, 1.0), [1, 1, 0])
    assert np.allclose(K.closest_point_cylinder(f3([3, 0, 4]), z, x, 1.0), [2, 0, 1])
    p = f3([1, 0.5, 0.5])
    assert np.array_equal(K.closest_point_cylinder(p, z, x, 1.0), p)
    # cone apex at 0, base at x=2 with radius 1: slant rho = h / 2
    assert np.allclose(K.closest_point_cone(f3([-1, 0, 0]), z, x, 1.0), z)  # behind apex, on axis
    assert np.allclose(K.closest_point_cone(f3([5, 0, 0]), z, x, 1.0), x)  # past base, on axis
    assert np.allclose(K.closest_point_cone(f3([1, 2, 0]), z, x, 1.0), [1.6, 0.8, 0])
    assert np.allclose(K.closest_point_cone(f3([3, 2, 0]), z, x, 1.0), [2, 1, 0])
    p = f3([1.5, 0.2, 0.1])
    assert np.array_equal(K.closest_point_cone(p, z, x, 1.0), p)


# =================================================================== pair queries


def check_linear_pair(p1, d1, lo1, hi1, p2, d2, lo2, hi2, out, S):
    s, t, c1, c2 = out
    assert lo1 <= s <= hi1 and lo2 <= t <= hi2
    assert np.linalg.norm(c1 - (p1 + s * d1)) <= REL * S
    assert np.linalg.norm(c2 - (p2 + t * d2)) <= REL * S
    dref, _, _ = N.linear_linear_exact(p1, d1, lo1, hi1, p2, d2, lo2, hi2)
    assert_close(np.linalg.norm(c1 - c2), dref, S, "linear pair")


# exact scale factors: d1 * k is exactly parallel to d1 in floating point. A rounded factor
# (e.g. 0.7) makes the lines non-parallel by ~1e-16 and their exact closest points lie ~1e16
# away; the kernel deliberately treats sin^2(angle) <= PAR_EPS as parallel.
PAR_K = (-4.0, -1.0, -0.5, 0.25, 1.0, 2.0)


def rand_dirs(rng, i, s):
    d1 = f3(rng.normal(size=3) * s)
    d2 = f3(rng.normal(size=3) * s)
    k = i % 8
    if k == 1:
        d2 = f3(d1 * rng.choice(PAR_K))  # exactly parallel (power-of-two factor)
    elif k == 2:
        d1 = np.zeros(3)
    elif k == 3:
        d2 = np.zeros(3)
    return d1, d2


def test_line_line():
    rng, cs = cases(9)
    for i, (s, o) in enumerate(cs):
        d1, d2 = rand_dirs(rng, i, s)
        p1 = f3(o + rng.normal(size=3) * s)
        p2 = f3(o + rng.normal(size=3) * s)
        if i % 8 == 4:  # collinear
            p2 = f3(p1 + rng.normal() * d1)
            d2 = f3(d1 * -0.5)
        out = K.closest_points_line_line(p1, d1, p2, d2)
        if np.linalg.norm(np.cross(d1, d2)) <= 1e-12 * np.linalg.norm(d1) * np.linalg.norm(d2):
            if d1 @ d1 > 0 and d2 @ d2 > 0:
                assert out[0] == 0.0  # parallel: s = 0
        check_linear_pair(p1, d1, -INF, INF, p2, d2, -INF, INF, out, scale_of(p1, p2, d1, d2))
    s, t, c1, c2 = K.closest_points_line_line(np.zeros(3), f3([1, 0, 0]), f3([2, -1, 1]), f3([0, 1, 0]))
    assert (s, t) == (2.0, 1.0) and np.array_equal(c1, [2, 0, 0]) and np.array_equal(c2, [2, 0, 1])


def test_linear_linear():
    rng, cs = cases(10, 400)
    for i, (s, o) in enumerate(cs):
        d1, d2 = rand_dirs(rng, i, s)
        p1 = f3(o + rng.normal(size=3) * s)
        p2 = f3(o + rng.normal(size=3) * s)
        if i % 8 == 4:  # collinear, overlapping or not
            p2 = f3(p1 + rng.normal() * d1)
            d2 = f3(d1 * rng.choice(PAR_K))
        lo1, hi1 = BOUNDS[i % len(BOUNDS)]
        lo2, hi2 = BOUNDS[(i // len(BOUNDS)) % len(BOUNDS)]
        out = K.closest_points_linear_linear(p1, d1, lo1, hi1, p2, d2, lo2, hi2)
        check_linear_pair(p1, d1, lo1, hi1, p2, d2, lo2, hi2, out, scale_of(p1, p2, d1, d2))


def test_segment_segment():
    rng, cs = cases(11, 300)
    for i, (s, o) in enumerate(cs):
        d1, d2 = rand_dirs(rng, i, s)
        p1 = f3(o + rng.normal(size=3) * s)
        p2 = f3(o + rng.normal(size=3) * s * 0.5)
        if i % 8 == 4:
            p2 = f3(p1 + rng.uniform(-1, 1.5) * d1)
            d2 = f3(d1 * rng.uniform(-2, 2))
        if i % 8 == 5:  # coplanar, crossing or not
            p2 = f3(p1 + rng.uniform(-1, 1) * d1 + rng.uniform(-1, 1) * d2)
        q1, q2 = f3(p1 + d1), f3(p2 + d2)
        out = K.closest_points_segment_segment(p1, q1, p2, q2)
        check_linear_pair(p1, q1 - p1, 0.0, 1.0, p2, q2 - p2, 0.0, 1.0, out, scale_of(p1, p2, q1, q2))
    # hand: crossing, touching at an endpoint, parallel, collinear overlapping, zero-length
    z, x, y = np.zeros(3), f3([1, 0, 0]), f3([0, 1, 0])
    s, t, c1, c2 = K.closest_points_segment_segment(z, f3([2, 0, 0]), f3([1, -1, 0]), f3([1, 1, 0]))
    assert (s, t) == (0.5, 0.5) and np.array_equal(c1, c2)
    s, t, c1, c2 = K.closest_points_segment_segment(z, x, x, f3([1, 1, 0]))
    assert np.array_equal(c1, x) and np.array_equal(c2, x)
    s, t, c1, c2 = K.closest_points_segment_segment(z, x, f3([0.5, 1, 0]), f3([3, 1, 0]))
    assert abs(np.linalg.norm(c1 - c2) - 1.0) < 1e-15
    s, t, c1, c2 = K.closest_points_segment_segment(z, f3([2, 0, 0]), f3([3, 0, 0]), x)
    assert np.linalg.norm(c1 - c2) == 0.0
    s, t, c1, c2 = K.closest_points_segment_segment(y, y, z, f3([2, 0, 0]))
    assert np.array_equal(c1, y) and np.array_equal(c2, z)


def test_segment_triangle():
    rng, cs = cases(12, 300)
    n_hit = 0
    for i, (s, o) in enumerate(cs):
        a, b, c = rand_tri(rng, s, o)
        m = rng.dirichlet(np.ones(3)) @ np.array([a, b, c]) + rng.normal(size=3) * s * 0.3
        dv = rng.normal(size=3) * s
        p = f3(m + dv)
        q = f3(m - rng.uniform(0, 1.5) * dv) if i % 10 else p.copy()
        if i % 10 == 5:  # coplanar segment
            q = f3(a + rng.uniform(-1, 1) * (b - a) + rng.uniform(-1, 1) * (c - a))
            p = f3(a + rng.uniform(-1, 1) * (b - a) + rng.uniform(-1, 1) * (c - a))
        c1, c2 = K.closest_points_segment_triangle(p, q, a, b, c)
        S = scale_of(p, q, a, b, c)
        assert N.hull_dist(c1, [p, q]) <= REL * S
        assert N.hull_dist(c2, [a, b, c]) <= REL * S
        dref = N.hulls_distance([p, q], [a, b, c])
        assert_close(np.linalg.norm(c1 - c2), dref, S, "seg-tri")
        if dref <= REL * S:
            n_hit += 1
            assert np.linalg.norm(c1 - c2) <= REL * S
    assert 0.2 * len(cs) <= n_hit <= 0.8 * len(cs)
    a, b, c = f3([0, 0, 0]), f3([1, 0, 0]), f3([0, 1, 0])
    c1, c2 = K.closest_points_segment_triangle(f3([0.25, 0.25, -1]), f3([0.25, 0.25, 1]), a, b, c)
    assert np.array_equal(c1, c2) and np.allclose(c1, [0.25, 0.25, 0])
    c1, c2 = K.closest_points_segment_triangle(f3([2, 0, 1]), f3([2, 1, 1]), a, b, c)  # parallel
    assert abs(np.linalg.norm(c1 - c2) - math.sqrt(2)) < 1e-15
    c1, c2 = K.closest_points_segment_triangle(f3([0.2, 0.2, 0]), f3([3, 3, 0]), a, b, c)  # coplanar
    assert np.linalg.norm(c1 - c2) == 0.0


def test_triangle_triangle():
    rng, cs = cases(13, 300)
    n_hit = 0
    for i, (s, o) in enumerate(cs):
        A = rand_tri(rng, s, o)
        B = rand_tri(rng, s, o + rng.normal(size=3) * s * 0.7)
        if i % 6 == 0:  # coplanar
            a0, a1, a2 = A
            B = tuple(f3(a0 + rng.uniform(-1, 1.5) * (a1 - a0) + rng.uniform(-1, 1.5) * (a2 - a0)) for _ in range(3))
        c1, c2 = K.closest_points_triangle_triangle(*A, *B)
        S = scale_of(*A, *B)
        assert N.hull_dist(c1, A) <= REL * S
        assert N.hull_dist(c2, B) <= REL * S
        dref = N.hulls_distance(A, B)
        assert_close(np.linalg.norm(c1 - c2), dref, S, "tri-tri")
        if dref <= REL * S:
            n_hit += 1
            assert np.linalg.norm(c1 - c2) <= REL * S
    assert 0.2 * len(cs) <= n_hit <= 0.8 * len(cs)
    a, b, c = f3([0, 0, 0]), f3([4, 0, 0]), f3([0, 4, 0])
    # coplanar, one inside the other
    c1, c2 = K.closest_points_triangle_triangle(a, b, c, f3([1, 1, 0]), f3([2, 1, 0]), f3([1, 2, 0]))
    assert np.array_equal(c1, c2)
    # piercing
    c1, c2 = K.closest_points_triangle_triangle(a, b, c, f3([1, 1, -1]), f3([1, 1, 1]), f3([5, 5, 0]))
    # the intersection is the segment (1,1,0)-(2,2,0)
    assert np.array_equal(c1, c2) and c1[2] == 0 and c1[0] == c1[1] and 1 <= c1[0] <= 2
    # parallel planes, 2 apart
    c1, c2 = K.closest_points_triangle_triangle(a, b, c, f3([1, 1, 2]), f3([2, 1, 2]), f3([1, 2, 2]))
    assert abs(np.linalg.norm(c1 - c2) - 2.0) < 1e-15
    # touching vertex on face
    c1, c2 = K.closest_points_triangle_triangle(a, b, c, f3([1, 1, 0]), f3([2, 1, 3]), f3([1, 2, 3]))
    assert np.linalg.norm(c1 - c2) == 0.0


def test_segment_obb():
    rng, cs = cases(14, 250)
    n_hit = 0
    for i, (s, o) in enumerate(cs):
        R = rot(rng)
        c = f3(o + rng.normal(size=3) * s)
        half = f3(rng.uniform(0, 1.2, size=3) * s)
        a = f3(c + rng.normal(size=3) * s * 1.2)
        b = f3(2 * c - a + rng.normal(size=3) * s * 1.0) if i % 10 else a.copy()
        if i % 10 == 3:  # parallel to a face
            b = f3(a + rng.normal() * s * R[:, 0] + rng.normal() * s * R[:, 1])
        c1, c2 = K.closest_points_segment_obb(a, b, c, R, half)
        S = scale_of(a, b, c, half)
        assert N.hull_dist(c1, [a, b]) <= REL * S
        assert np.all(np.abs(R.T @ (c2 - c)) <= half + REL * S)
        dref = N.segment_obb_dist(a, b, c, R, half)
        assert_close(np.linalg.norm(c1 - c2), dref, S, "seg-obb")
        if dref <= REL * S:
            n_hit += 1
            assert np.linalg.norm(c1 - c2) <= REL * S
    assert 0.2 * len(cs) <= n_hit <= 0.8 * len(cs)
    I3, z, one = f3(np.eye(3)), np.zeros(3), np.ones(3)
    c1, c2 = K.closest_points_segment_obb(f3([2, 0, 0]), f3([2, 0, 3]), z, I3, one)  # parallel to a face
    assert abs(np.linalg.norm(c1 - c2) - 1.0) < 1e-15
    c1, c2 = K.closest_points_segment_obb(f3([3, 3, 0]), f3([3, -3, 0]), z, I3, one)  # crosses no face
    assert abs(np.linalg.norm(c1 - c2) - 2.0) < 1e-15
    c1, c2 = K.closest_points_segment_obb(f3([1, 1, 0]), f3([3, 3, 3]), z, I3, one)  # touching
    assert np.array_equal(c1, c2)
    c1, c2 = K.closest_points_segment_obb(f3([2, 2, 2]), f3([3, 2, 2]), z, I3, one)  # vertex region
    assert np.allclose(c2, one) and np.allclose(c1, [2, 2, 2])
    # flat and degenerate boxes (a square, a segment, a point) against the reference
    rng = np.random.default_rng(16)
    for flat in ([1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]):
        for _ in range(100):
            R = rot(rng)
            a, b = f3(rng.normal(size=3) * 2.0), f3(rng.normal(size=3) * 2.0)
            c1, c2 = K.closest_points_segment_obb(a, b, z, R, f3(flat))
            S = scale_of(a, b, z, one)
            assert_close(np.linalg.norm(c1 - c2), N.segment_obb_dist(a, b, z, R, f3(flat)), S, "seg-flat-obb")
            assert N.hull_dist(c1, [a, b]) <= REL * S


def test_ill_conditioned():
    """Slivers, far points, nearly parallel segments, segments almost in a triangle's plane."""
    rng = np.random.default_rng(15)
    for i in range(200):
        a, b = f3(rng.normal(size=3)), f3(rng.normal(size=3))
        eps = 10.0 ** -rng.uniform(4, 14)
        c = f3(a + rng.uniform(-1, 2) * (b - a) + eps * rng.normal(size=3))  # sliver
        p = f3(rng.normal(size=3) * (1e3 if i % 2 else 1.0))
        q = K.closest_point_triangle(p, a, b, c)
        S = scale_of(p, a, b, c)
        assert N.hull_dist(q, [a, b, c]) <= REL * S
        assert_close(np.linalg.norm(q - p), N.hull_dist(p, [a, b, c]), S, "sliver")
        # nearly parallel segments
        d1 = f3(rng.normal(size=3))
        d2 = f3(d1 * rng.choice(PAR_K) + eps * rng.normal(size=3))
        p1, p2 = f3(rng.normal(size=3)), f3(rng.normal(size=3))
        out = K.closest_points_segment_segment(p1, f3(p1 + d1), p2, f3(p2 + d2))
        check_linear_pair(p1, f3(p1 + d1) - p1, 0.0, 1.0, p2, f3(p2 + d2) - p2, 0.0, 1.0, out, 3.0)
        # segment almost in the plane of a (proper) triangle, crossing it or not
        A = [f3(rng.normal(size=3)) for _ in range(3)]
        nrm = np.cross(A[1] - A[0], A[2] - A[0])
        m = rng.dirichlet(np.ones(3)) @ np.array(A) * rng.uniform(0.8, 1.2)
        u = np.cross(nrm, rng.normal(size=3))
        sp = f3(m + u + eps * nrm)
        sq = f3(m - u - eps * nrm)
        c1, c2 = K.closest_points_segment_triangle(sp, sq, *A)
        S = scale_of(sp, sq, *A)
        assert N.hull_dist(c1, [sp, sq]) <= REL * S and N.hull_dist(c2, A) <= REL * S
        assert_close(np.linalg.norm(c1 - c2), N.hulls_distance([sp, sq], A), S, "near-plane")


def test_degenerate_axis_fallback():
    """p0 == p1 (cylinder) / apex == base (cone): documented ball fallback, finite results."""
    z = np.zeros(3)
    assert np.allclose(K.closest_point_cylinder(f3([3, 4, 0]), z, z, 1.0), [0.6, 0.8, 0])
    assert np.allclose(K.closest_point_cone(f3([3, 4, 0]), z, z, 0.0), z)
    p = f3([0.1, 0.2, 0.3])
    assert np.array_equal(K.closest_point_cylinder(p, z, z, 1.0), p)
