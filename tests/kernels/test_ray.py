"""Tests for touche._kernels.primitives.ray, ray_polytopes and ray_round against the slow references in tests/naive/ray.py."""
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from naive import ray as NR
from touche._kernels import ray as R
from touche._kernels import ray_polytopes as RP
from touche._kernels import ray_round as RR

INF = np.inf
N_RAYS = 300


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def rand_rot(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return np.ascontiguousarray(q)


def make_rays(rng, n, center, size, spread=1.3, far=3.0):
    """Origins in a box around the shape (20 % near the centre, so some start inside),
    directions mostly aimed at points near the shape; t_max half inf, half finite."""
    O = center + size * rng.uniform(-far, far, (n, 3))
    k = n // 5
    O[:k] = center + size * rng.uniform(-0.4, 0.4, (k, 3))
    T = center + size * rng.uniform(-spread, spread, (n, 3))
    D = T - O
    rnd = rng.random(n) < 0.2
    D[rnd] = rng.normal(size=(int(rnd.sum()), 3))
    D /= np.linalg.norm(D, axis=1)[:, None]
    TMAX = np.where(rng.random(n) < 0.5, INF, size * rng.uniform(0.0, 6.0, n))
    return O, D, TMAX


# --------------------------------------------------------------------------- random shapes


def shape_sphere(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    r = s * rng.uniform(0.5, 1.5)
    return R.ray_sphere, (c, float(r)), NR.f_sphere(c, r), c, r


def shape_aabb(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    h = s * rng.uniform(0.3, 1.2, 3)
    return R.ray_aabb, (c - h, c + h), NR.f_aabb(c - h, c + h), c, np.linalg.norm(h)


def shape_obb(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    h = s * rng.uniform(0.3, 1.2, 3)
    A = rand_rot(rng)
    return R.ray_obb, (c, A, h), NR.f_obb(c, A, h), c, np.linalg.norm(h)


def shape_cylinder(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    ax = unit(rng.normal(size=3))
    H = s * rng.uniform(0.5, 2.0)
    r = s * rng.uniform(0.3, 1.0)
    p0, p1 = c - 0.5 * H * ax, c + 0.5 * H * ax
    return RR.ray_cylinder, (p0, p1, float(r)), NR.f_cylinder(p0, p1, r), c, np.hypot(H / 2, r)


def shape_capsule(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    ax = unit(rng.normal(size=3))
    H = s * rng.uniform(0.3, 2.0)
    r = s * rng.uniform(0.3, 1.0)
    a, b = c - 0.5 * H * ax, c + 0.5 * H * ax
    return RR.ray_capsule, (a, b, float(r)), NR.f_capsule(a, b, r), c, H / 2 + r


def shape_cone(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    ax = unit(rng.normal(size=3))
    H = s * rng.uniform(0.8, 2.5)
    r = s * rng.uniform(0.4, 1.2)
    apex, base = c - 0.5 * H * ax, c + 0.5 * H * ax
    return RR.ray_cone, (apex, base, float(r)), NR.f_cone(apex, base, r), c, np.hypot(H / 2, r)


def _hull_planes(pts):
    hull = ConvexHull(pts)
    P = np.empty((len(hull.equations), 4))
    P[:, :3] = hull.equations[:, :3]
    P[:, 3] = -hull.equations[:, 3]
    return np.ascontiguousarray(P), hull


def shape_polyhedron(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    pts = c + s * rng.normal(size=(12, 3))
    P, _ = _hull_planes(pts)
    return (RP.ray_convex_polyhedron, (P,), NR.f_planes(P), c,
            np.max(np.linalg.norm(pts - c, axis=1)))


def shape_tetra(rng, s, c0):
    c = c0 + s * rng.normal(size=3) * 0.1
    while True:
        V = c + s * rng.uniform(-1.2, 1.2, (4, 3))
        if abs(np.linalg.det(V[1:] - V[0])) > 0.3 * s ** 3:
            break
    P = NR.tet_planes_naive(*V)
    c = V.mean(0)
    return (RP.ray_tetrahedron, tuple(np.ascontiguousarray(v) for v in V), NR.f_planes(P), c,
            np.max(np.linalg.norm(V - c, axis=1)))


SHAPES = {
    "sphere": shape_sphere, "aabb": shape_aabb, "obb": shape_obb,
    "cylinder": shape_cylinder, "capsule": shape_capsule, "cone": shape_cone,
    "polyhedron": shape_polyhedron, "tetrahedron": shape_tetra,
}


SPREAD = {"tetrahedron": 0.5, "polyhedron": 0.8}


def run_convex(name, seed, scale, center_off, n_rays, n_shapes=6, t_rel=1e-9, n_tol=1e-6):
    rng = np.random.default_rng(seed)
    hits = total = 0
    per = n_rays // n_shapes
    for _ in range(n_shapes):
        kern, args, f, c, rad = SHAPES[name](rng, scale, center_off)
        O, D, TMAX = make_rays(rng, per, c, rad, spread=SPREAD.get(name, 1.3))
        for solid in (True, False):
            rh, rt, rn = NR.ref_convex(f, c, rad, O, D, TMAX, solid)
            for i in range(per):
                h, t, n = kern(O[i], D[i], float(TMAX[i]), *args, solid)
                ctx = (name, solid, i, O[i], D[i], TMAX[i], h, t, rh[i], rt[i])
                assert h == rh[i], ctx
                assert np.all(np.isfinite(n)), ctx
                if not h:
                    assert t == INF and not n.any(), ctx
                    continue
                assert abs(t - rt[i]) <= t_rel * max(abs(rt[i]), rad), ctx
                if solid and rt[i] == 0.0 and not rn[i].any():
                    assert not n.any(), ctx  # origin inside a solid
                else:
                    assert abs(np.linalg.norm(n) - 1) < 1e-12, ctx
                    assert np.linalg.norm(n - rn[i]) < n_tol, (ctx, n, rn[i])
            hits += int(rh.sum())
            total += per
    return hits / total


@pytest.mark.parametrize("name", list(SHAPES))
def test_convex_random(name):
    rate = run_convex(name, 1234 + len(name), 1.0, np.zeros(3), N_RAYS)
    assert 0.2 <= rate <= 0.8, rate


@pytest.mark.parametrize("scale", [1e-6, 1e6])
@pytest.mark.parametrize("name", list(SHAPES))
def test_convex_scales(name, scale):
    rate = run_convex(name, 99 + len(name), scale, np.full(3, 3.0 * scale), 120)
    assert 0.2 <= rate <= 0.8, rate


@pytest.mark.parametrize("name", list(SHAPES))
def test_convex_far_origin(name):
    """Unit-size shapes, origins ~1e6 away aimed at the shape."""
    rng = np.random.default_rng(7 + len(name))
    hits = 0
    for _ in range(3):
        kern, args, f, c, rad = SHAPES[name](rng, 1.0, np.zeros(3))
        T = c + rng.uniform(-1, 1, (40, 3)) * rad * SPREAD.get(name, 1.3)
        O = c + 1e6 * np.array([unit(v) for v in rng.normal(size=(40, 3))])
        D = np.array([unit(v) for v in T - O])
        TMAX = np.full(40, INF)
        rh, rt, rn = NR.ref_convex(f, c, rad, O, D, TMAX, True)
        for i in range(40):
            h, t, n = kern(O[i], D[i], INF, *args, True)
            assert h == rh[i]
            if h:
                assert abs(t - rt[i]) <= 1e-9 * rt[i]
                assert np.linalg.norm(n - rn[i]) < 1e-4
        hits += rh.sum()
    assert 0.2 <= hits / 120 <= 0.8


def test_sphere_far_origin_exact():
    """1e6 away from a unit sphere: compare with a 60-digit Decimal solution; the stable
    formulation keeps t to ~1e-10 absolute (a naive b^2 - c would lose ~1e-4)."""
    getcontext().prec = 60
    rng = np.random.default_rng(3)
    c = np.array([0.3, -0.2, 0.1])
    r = 1.0
    nh = 0
    for _ in range(300):
        O = c + 1e6 * unit(rng.normal(size=3))
        D = unit(c + rng.uniform(-1.3, 1.3, 3) - O)
        h, t, n = R.ray_sphere(O, D, INF, c, r, True)
        m = [Decimal(float(O[k])) - Decimal(float(c[k])) for k in range(3)]
        dd = [Decimal(float(D[k])) for k in range(3)]
        a2 = sum(x * x for x in dd)
        b = sum(x * y for x, y in zip(m, dd))
        cc = sum(x * x for x in m) - Decimal(r) ** 2
        disc = b * b - a2 * cc
        assert h == (disc >= 0)
        if h:
            nh += 1
            te = (-b - disc.sqrt()) / a2
            assert abs(Decimal(t) - te) < Decimal("1e-8"), (t, te)
            p = [m[k] + te * dd[k] for k in range(3)]
            pn = sum(x * x for x in p).sqrt()
            ne = np.array([float(x / pn) for x in p])
            assert np.linalg.norm(n - ne) < 1e-8
    assert 60 <= nh <= 240


# --------------------------------------------------------------------------- flat things


def rand_triangle(rng, s=1.0, c=np.zeros(3)):
    return [np.ascontiguousarray(c + s * rng.normal(size=3)) for _ in range(3)]


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_triangle_random(scale):
    rng = np.random.default_rng(11)
    hits = 0
    n = N_RAYS if scale == 1.0 else 120
    c0 = np.full(3, 2.0 * scale)
    for i in range(n):
        if i % 10 == 0:
            a, b, c = rand_triangle(rng, scale, c0)
            cen = (a + b + c) / 3
            O, D, TMAX = make_rays(rng, 10, cen, scale, spread=0.8)
        o, d, tm = O[i % 10], D[i % 10], float(TMAX[i % 10])
        rh, rt, ru, rv, rw, rn = NR.ref_triangle(o, d, tm, a, b, c)
        h, t, u, v, w = RP.ray_triangle_bary(o, d, tm, a, b, c)
        h2, t2, n2 = RP.ray_triangle(o, d, tm, a, b, c, True)
        assert h == rh == h2, (i, o, d, tm)
        if h:
            hits += 1
            assert abs(t - rt) <= 1e-9 * max(rt, scale) and t2 == t
            assert max(abs(u - ru), abs(v - rv), abs(w - rw)) < 1e-9
            assert abs(np.linalg.norm(n2) - 1) < 1e-12 and np.linalg.norm(n2 - rn) < 1e-9
            assert n2 @ d <= 0
        else:
            assert t == INF and t2 == INF and not n2.any()
    assert 0.2 <= hits / n <= 0.8, hits / n


def test_triangle_hand_cases():
    a, b, c = np.array([0.0, 0, 0]), np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    down = np.array([0.0, 0, -1])
    up = np.array([0.0, 0, 1])
    # through a vertex, an edge, the hypotenuse (exactly representable), just outside
    for o, exp in [((0, 0, 1), True), ((0.5, 0, 1), True), ((0.5, 0.5, 1), True),
                   ((0.25, 0.75, 1), True), ((0.5, 0.5 + 1e-15, 1), False), ((-1e-300, 0.2, 1), False)]:
        h, t, u, v, w = RP.ray_triangle_bary(np.array(o, float), down, INF, a, b, c)
        assert h == exp, o
        if h:
            assert t == 1.0 and abs(u + v + w - 1) < 1e-15
    # back face (two-sided), normal faces the origin
    h, t, n = RP.ray_triangle(np.array([0.2, 0.2, -1]), up, INF, a, b, c, True)
    assert h and t == 1.0 and np.array_equal(n, [0, 0, -1])
    h, t, n = RP.ray_triangle(np.array([0.2, 0.2, 1]), down, INF, a, b, c, False)
    assert h and np.array_equal(n, [0, 0, 1])
    # origin on the triangle -> t = 0
    h, t, n = RP.ray_triangle(np.array([0.2, 0.2, 0]), up, INF, a, b, c, True)
    assert h and t == 0.0
    # t_max exactly at the surface counts; just below does not
    o = np.array([0.2, 0.3, 0.7])
    assert RP.ray_triangle(o, down, 0.7, a, b, c, True)[0]
    assert not RP.ray_triangle(o, down, np.nextafter(0.7, 0), a, b, c, True)[0]
    # ray lying in the triangle's plane: documented no hit
    h, t, u, v, w = RP.ray_triangle_bary(np.array([-1.0, 0.2, 0]), np.array([1.0, 0, 0]), INF, a, b, c)
    assert not h and t == INF
    # zero-area triangles never hit and never NaN
    for tri in [(a, a, a), (a, b, b), (a, b, 2 * b), (a, b, np.array([0.5, 0, 0]))]:
        for o in [(0.5, 0, 1), (0, 0, 1), (0.25, 0, 1)]:
            res = RP.ray_triangle_bary(np.array(o, float), down, INF, *tri)
            assert not res[0] and all(np.isfinite(res[2:]))
            res = RP.ray_triangle(np.array(o, float), down, INF, *tri, True)
            assert not res[0] and np.all(np.isfinite(res[2]))
        assert not RP.intersect_line_triangle(np.array([0.25, 0, 1]), np.array([0.25, 0, -1.0]), *tri)[0]
    # scales
    for s in (1e-6, 1e6):
        h, t, u, v, w = RP.ray_triangle_bary(np.array([0.2, 0.3, 1.0]) * s, down, INF, a * s, b * s, c * s)
        assert h and abs(t - s) <= 1e-15 * s and abs(v - 0.2) < 1e-12 and abs(w - 0.3) < 1e-12


def test_line_triangle_and_quad_random():
    rng = np.random.default_rng(5)
    hits_t = hits_q = 0
    n = N_RAYS
    for i in range(n):
        a, b, c = rand_triangle(rng)
        p = rng.normal(size=3) * 2
        q = (a + b + c) / 3 + rng.normal(size=3) * 0.4
        if i % 3 == 0:
            q = 2 * p - q  # the line still meets the triangle: lines are two-way infinite
        rh, ru, rv, rw = NR.ref_line_triangle(p, q, a, b, c)
        h, u, v, w = RP.intersect_line_triangle(p, q, a, b, c)
        assert h == rh, i
        if h:
            hits_t += 1
            assert max(abs(u - ru), abs(v - rv), abs(w - rw)) < 1e-9
        # planar convex quad: 4 points on an ellipse in a random frame
        A = rand_rot(rng)
        ang = np.sort(rng.uniform(0, 2 * np.pi, 4))
        cen = rng.normal(size=3) * 0.3
        Q = [np.ascontiguousarray(cen + A[:, 0] * 1.2 * np.cos(t) + A[:, 1] * 0.8 * np.sin(t)) for t in ang]
        q2 = cen + rng.normal(size=3) * 0.4
        rh, rp = NR.ref_line_quad(p, q2, *Q)
        h, pt = RP.intersect_line_quad(p, q2, *Q)
        assert h == rh, i
        if h:
            hits_q += 1
            assert np.linalg.norm(pt - rp) < 1e-9
    assert 0.2 <= hits_t / n <= 0.8 and 0.2 <= hits_q / n <= 0.8, (hits_t, hits_q)
    # parallel line / line in the plane / degenerate p == q: no hit
    a, b, c = np.array([0.0, 0, 0]), np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    assert not RP.intersect_line_triangle(np.array([0.1, 0.1, 1]), np.array([0.3, 0.1, 1.0]), a, b, c)[0]
    assert not RP.intersect_line_triangle(np.array([-1, 0.1, 0.0]), np.array([2, 0.1, 0.0]), a, b, c)[0]
    assert not RP.intersect_line_triangle(np.array([0.1, 0.1, 1]), np.array([0.1, 0.1, 1.0]), a, b, c)[0]
    # both orientations (two-sided) and the quad diagonal
    h, u, v, w = RP.intersect_line_triangle(np.array([0.25, 0.25, -3]), np.array([0.25, 0.25, 5.0]), a, b, c)
    assert h and np.allclose([u, v, w], [0.5, 0.25, 0.25])
    h, u, v, w = RP.intersect_line_triangle(np.array([0.25, 0.25, 5]), np.array([0.25, 0.25, -3.0]), a, b, c)
    assert h and np.allclose([u, v, w], [0.5, 0.25, 0.25])
    d = np.array([1.0, 1, 0])
    sq = (a, b, d, c)
    for o, exp in [((0.5, 0.5), True), ((0.9, 0.2), True), ((0.2, 0.9), True), ((1.0, 1.0), True),
                   ((1.1, 0.5), False)]:
        h, pt = RP.intersect_line_quad(np.array([*o, 1.0]), np.array([*o, -1.0]), *sq)
        assert h == exp
        if h:
            assert np.allclose(pt, [*o, 0.0], atol=1e-15)


def test_convex_polygon_random():
    rng = np.random.default_rng(21)
    hits = 0
    n = N_RAYS
    for i in range(n):
        if i % 10 == 0:
            A = rand_rot(rng)
            k = int(rng.integers(3, 8))
            ang = np.sort(rng.uniform(0, 2 * np.pi, k))
            cen = rng.normal(size=3)
            V = np.ascontiguousarray(cen + np.outer(np.cos(ang), A[:, 0]) + np.outer(np.sin(ang), A[:, 1]))
            nrm = np.ascontiguousarray(A[:, 2])
            O, D, TMAX = make_rays(rng, 10, cen, 1.0, spread=0.6)
        o, d, tm = O[i % 10], D[i % 10], float(TMAX[i % 10])
        rh, rt, rn = NR.ref_polygon(o, d, tm, V, nrm)
        for solid in (True, False):
            h, t, nn = RP.ray_convex_polygon(o, d, tm, V, nrm, solid)
            assert h == rh, i
            if h:
                assert abs(t - rt) <= 1e-9 * max(1, rt) and np.array_equal(nn, rn)
        hits += rh
    assert 0.2 <= hits / n <= 0.8, hits / n
    # zero-area polygon, in-plane ray
    V = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    z = np.array([0.0, 0, 1])
    assert not RP.ray_convex_polygon(np.array([0.5, 0, 1]), -z, INF, V, z, True)[0]
    V = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    assert not RP.ray_convex_polygon(np.array([-1, 0.5, 0]), np.array([1.0, 0, 0]), INF, V, z, True)[0]
    h, t, nn = RP.ray_convex_polygon(np.array([1.0, 1, 2]), -z, 2.0, V, z, True)  # corner, t_max exact
    assert h and t == 2.0 and np.array_equal(nn, z)


def test_triangles_first_random():
    rng = np.random.default_rng(31)
    hits = 0
    n = N_RAYS
    for i in range(n):
        if i % 30 == 0:
            pts = rng.normal(size=(10, 3))
            hull = ConvexHull(pts)
            Fc = hull.simplices.copy()
            for j, (x, y, z) in enumerate(Fc):  # orient outward (CCW)
                if np.cross(pts[y] - pts[x], pts[z] - pts[x]) @ hull.equations[j, :3] < 0:
                    Fc[j] = [x, z, y]
            Fc = np.ascontiguousarray(Fc, dtype=np.int64)
            V = np.ascontiguousarray(pts)
            O, D, TMAX = make_rays(rng, 30, pts.mean(0), 1.5)
        o, d, tm = O[i % 30], D[i % 30], float(TMAX[i % 30])
        rh, rt, ri, rn = NR.ref_triangles_first(o, d, tm, V, Fc)
        h, t, fi, nn = RP.ray_triangles_first(o, d, tm, V, Fc)
        assert h == rh, i
        if h:
            hits += 1
            assert abs(t - rt) <= 1e-9 * max(1, rt) and fi == ri and np.linalg.norm(nn - rn) < 1e-12
            ray_n = RP.ray_convex_polyhedron(o, d, tm, _hull_planes(pts)[0], False)
            assert ray_n[0] and abs(ray_n[1] - t) < 1e-9 and np.linalg.norm(ray_n[2] - nn) < 1e-9
        else:
            assert fi == -1 and t == INF
    assert 0.2 <= hits / n <= 0.8, hits / n
    # empty mesh
    h, t, fi, nn = RP.ray_triangles_first(np.zeros(3), np.array([1.0, 0, 0]), INF,
                                         np.zeros((0, 3)), np.zeros((0, 3), np.int64))
    assert not h and fi == -1


def test_plane_halfspace_segment_random():
    rng = np.random.default_rng(41)
    hp = hh = hs = 0
    n = N_RAYS
    for i in range(n):
        nrm = unit(rng.normal(size=3))
        dp = float(rng.normal())
        o = rng.normal(size=3) * 2
        d = unit(rng.normal(size=3))
        tm = INF if i % 2 else float(rng.uniform(0, 4))
        rh, rt, rn = NR.ref_plane(o, d, tm, nrm, dp)
        for solid in (True, False):
            h, t, nn = R.ray_plane(o, d, tm, nrm, dp, solid)
            assert h == rh and (not h or (abs(t - rt) <= 1e-9 * max(1, rt) and np.array_equal(nn, rn)))
        hp += rh
        for solid in (True, False):
            rh, rt, rn = NR.ref_halfspace(o, d, tm, nrm, dp, solid)
            h, t, nn = R.ray_halfspace(o, d, tm, nrm, dp, solid)
            assert h == rh and (not h or (abs(t - rt) <= 1e-9 * max(1, rt) and np.array_equal(nn, rn)))
            hh += rh
        a = rng.normal(size=3) * 2
        b = rng.normal(size=3) * 2
        rh, rt, rq = NR.ref_segment_plane(a, b, nrm, dp)
        h, t, q = R.segment_plane(a, b, nrm, dp)
        assert h == rh and (not h or (abs(t - rt) <= 1e-12 and np.linalg.norm(q - rq) < 1e-12))
        hs += rh
    assert 0.2 <= hp / n <= 0.8 and 0.2 <= hh / (2 * n) <= 0.8 and 0.2 <= hs / n <= 0.8
    z = np.array([0.0, 0, 1])
    x = np.array([1.0, 0, 0])
    # parallel: in the plane -> t=0; above -> miss
    assert R.ray_plane(np.zeros(3), x, INF, z, 0.0, True)[:2] == (True, 0.0)
    assert not R.ray_plane(z, x, INF, z, 0.0, True)[0]
    # halfspace z <= 0: origin above, going down, t_max exactly; inside (solid / exit)
    assert R.ray_halfspace(z, -z, 1.0, z, 0.0, True)[:2] == (True, 1.0)
    assert not R.ray_halfspace(z, -z, np.nextafter(1.0, 0), z, 0.0, True)[0]
    assert R.ray_halfspace(-z, x, INF, z, 0.0, True)[:2] == (True, 0.0)
    assert not R.ray_halfspace(-z, x, INF, z, 0.0, False)[0]  # never leaves
    h, t, nn = R.ray_halfspace(-z, z, INF, z, 0.0, False)
    assert h and t == 1.0 and np.array_equal(nn, z)
    h, t, nn = R.ray_halfspace(np.zeros(3), z, INF, z, 0.0, False)  # on the boundary, leaving
    assert h and t == 0.0 and np.array_equal(nn, z)
    # segment in the plane / degenerate segment
    assert R.segment_plane(x, 2 * x, z, 0.0)[:2] == (True, 0.0)
    assert R.segment_plane(x, x, z, 0.0)[0] and not R.segment_plane(z, z, z, 0.0)[0]
    assert R.segment_plane(z, -z, z, 0.0)[:2] == (True, 0.5)


# --------------------------------------------------------------------------- hand cases, solids


E = np.eye(3)
MN = -np.ones(3)
MX = np.ones(3)
P0 = np.array([0.0, 0, -1])
P1 = np.array([0.0, 0, 1])
CUBE_PLANES = np.array([[1.0, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1],
                        [0, 0, 1, 1], [0, 0, -1, 1]])
TET = (np.array([-1.0, -1, -1]), np.array([3.0, -1, -1]), np.array([-1.0, 3, -1]),
       np.array([-1.0, -1, 3]))

# all unit-ish solids containing the origin; each entry: kernel(o, d, tmax, solid)
SOLIDS = {
    "sphere": lambda o, d, tm, s: R.ray_sphere(o, d, tm, np.zeros(3), 1.0, s),
    "aabb": lambda o, d, tm, s: R.ray_aabb(o, d, tm, MN, MX, s),
    "obb": lambda o, d, tm, s: R.ray_obb(o, d, tm, np.zeros(3), E, np.ones(3), s),
    "cylinder": lambda o, d, tm, s: RR.ray_cylinder(o, d, tm, P0, P1, 1.0, s),
    "capsule": lambda o, d, tm, s: RR.ray_capsule(o, d, tm, P0 * 0.5, P1 * 0.5, 1.0, s),
    "cone": lambda o, d, tm, s: RR.ray_cone(o, d, tm, P1, P0, 1.0, s),
    "polyhedron": lambda o, d, tm, s: RP.ray_convex_polyhedron(o, d, tm, CUBE_PLANES, s),
    "tetrahedron": lambda o, d, tm, s: RP.ray_tetrahedron(o, d, tm, *TET, s),
}


@pytest.mark.parametrize("name", list(SOLIDS))
def test_solid_hand_cases(name):
    k = SOLIDS[name]
    x = np.array([1.0, 0, 0])
    o = np.array([-5.0, 0.0, 0.0])
    # origin inside: solid -> (True, 0, zeros); not solid -> exit with outward normal
    h, t, n = k(np.zeros(3), x, INF, True)
    assert h and t == 0.0 and not n.any()
    h, t, n = k(np.zeros(3), x, INF, False)
    assert h and t > 0 and abs(np.linalg.norm(n) - 1) < 1e-12 and n @ x > 0
    # exit beyond t_max: no hit
    assert not k(np.zeros(3), x, 0.5 * t, False)[0]
    # entry; t_max exactly at the surface is a hit, one ulp less is not
    h, t, n = k(o, x, INF, True)
    assert h and 3 < t < 5 and n @ x < 0
    assert k(o, x, t, True)[:2] == (True, t) and k(o, x, t, False)[:2] == (True, t)
    assert not k(o, x, np.nextafter(t, 0), True)[0]
    # pointing away / passing by
    assert k(o, -x, INF, True) [0] is False
    assert not k(np.array([-5.0, 3.5, 0]), x, INF, True)[0]
    # origin on the surface (the entry point): solid -> 0; not solid, moving in -> far side
    p = o + t * x
    h0, t0, n0 = k(p, x, INF, True)
    assert h0 and t0 == 0.0
    h1, t1, n1 = k(p, x, INF, False)
    assert h1 and t1 > 0.5 and n1 @ x > 0
    # ... moving out -> exit at t = 0 with the outward normal there
    h2, t2, n2 = k(p, -x, INF, False)
    assert h2 and t2 <= 1e-15 and np.linalg.norm(n2 - n) < 1e-12
    # directions with zero components never produce NaN
    for d in (E[0], E[1], E[2], -E[2], unit([1, 1, 0]), unit([1, 1, 1])):
        for oo in (o, np.array([0.0, -5, 0.3]), np.array([1.0, 1.0, 1.0]), np.array([7.0, 7, 7])):
            for s in (True, False):
                h, t, n = k(oo, d, INF, s)
                assert not np.isnan(t) and np.all(np.isfinite(n))


def test_box_grazing_edges_vertices():
    x = np.array([1.0, 0, 0])
    for k in (SOLIDS["aabb"], SOLIDS["obb"], SOLIDS["polyhedron"]):
        # along a face (closed: hit), along an edge, just outside
        for o in ([-5.0, 1.0, 0.3], [-5.0, -1.0, 0.0], [-5.0, 1.0, 1.0]):
            h, t, n = k(np.array(o), x, INF, True)
            assert h and t == 4.0 and np.array_equal(n, -x), o
        assert not k(np.array([-5.0, np.nextafter(1.0, 2), 0.3]), x, INF, True)[0]
        # through a vertex
        d = -unit([1, 1, 1])
        h, t, n = k(np.array([2.0, 2, 2]), d, INF, True)
        assert h and abs(t - np.sqrt(3)) < 1e-15 and abs(n @ d) > 0.5
        # grazing a vertex from the side
        d = unit([1, -1, 0])
        h, t, n = k(np.array([0.0, 2.0, 1.0]), d, INF, True)
        assert h and abs(t - np.sqrt(2)) < 1e-15
    # tiny direction component with the origin exactly on the slab plane: no 0*inf NaN
    d = np.array([1.0, 1e-320, 0.0])
    h, t, n = R.ray_aabb(np.array([-5.0, -1.0, 0]), d, INF, MN, MX, True)
    assert h and t == 4.0 and np.array_equal(n, -x)
    h, t, n = R.ray_aabb(np.array([-5.0, np.nextafter(-1.0, -2), 0]), d, INF, MN, MX, True)
    assert not h
    # erratum L8407 (t2 > tmax typo) would keep the largest exit: check min-exit
    h, t, n = R.ray_aabb(np.array([-0.5, 0, 0]), unit([1, 10, 0]), INF, MN, MX, False)
    assert h and abs(t - np.sqrt(1.01)) < 1e-15 and np.array_equal(n, E[1])


def test_polyhedron_parallel_erratum():
    """Erratum L9406: a ray parallel to face planes and inside their slab must hit."""
    x = np.array([1.0, 0, 0])
    h, t, n = RP.ray_convex_polyhedron(np.array([-5.0, 0.5, -0.5]), x, INF, CUBE_PLANES, True)
    assert h and t == 4.0 and np.array_equal(n, -x)
    assert not RP.ray_convex_polyhedron(np.array([-5.0, 1.5, 0]), x, INF, CUBE_PLANES, True)[0]
    # unbounded polyhedron (one halfspace), origin inside, solid=False: never exits
    assert not RP.ray_convex_polyhedron(np.zeros(3), -x, INF, CUBE_PLANES[:1], False)[0]
    # degenerate (flat) tetrahedron: finite answers
    flat = (np.zeros(3), E[0].copy(), E[1].copy(), np.array([1.0, 1, 0]))
    for o in ([0.2, 0.2, 1.0], [5.0, 5, 5]):
        h, t, n = RP.ray_tetrahedron(np.array(o), -E[2], INF, *flat, True)
        assert np.all(np.isfinite(n)) and not np.isnan(t)


def test_cylinder_cap_erratum_and_axis():
    z = np.array([0.0, 0, 1])
    # along the axis through the cap
    h, t, n = RR.ray_cylinder(np.array([0.3, 0.2, -5]), z, INF, P0, P1, 1.0, True)
    assert h and t == 4.0 and np.array_equal(n, -z)
    # erratum L9295: origin inside the infinite cylinder but below the cap; the side root is
    # negative yet the ray enters through the end cap
    d = unit([0.01, 0, 1])
    h, t, n = RR.ray_cylinder(np.array([0.5, 0, -5]), d, INF, P0, P1, 1.0, True)
    assert h and abs(t - 4.0 / d[2]) < 1e-14 and np.array_equal(n, -z)
    # from inside, solid=False, exits through the top cap
    h, t, n = RR.ray_cylinder(np.zeros(3), z, INF, P0, P1, 1.0, False)
    assert h and t == 1.0 and np.array_equal(n, z)
    # grazing the side (tangent line: closed, hit)
    h, t, n = RR.ray_cylinder(np.array([-5.0, 1.0, 0]), np.array([1.0, 0, 0]), INF, P0, P1, 1.0, True)
    assert h and abs(t - 5) < 1e-7 and abs(n[1] - 1) < 1e-7
    # rim
    h, t, n = RR.ray_cylinder(np.array([-5.0, 0, 1]), np.array([1.0, 0, 0]), INF, P0, P1, 1.0, True)
    assert h and t == 4.0
    # degenerate axis: empty
    assert not RR.ray_cylinder(np.array([-5.0, 0, 0]), np.array([1.0, 0, 0]), INF, P0, P0, 1.0, True)[0]


def test_capsule_degenerate_is_sphere_and_cone_axis():
    rng = np.random.default_rng(8)
    c = np.array([0.2, -0.1, 0.3])
    for _ in range(100):
        o = rng.normal(size=3) * 3
        d = unit(rng.normal(size=3))
        for s in (True, False):
            a = RR.ray_capsule(o, d, INF, c, c.copy(), 0.9, s)
            b = R.ray_sphere(o, d, INF, c, 0.9, s)
            assert a[0] == b[0]
            if a[0]:
                assert abs(a[1] - b[1]) < 1e-12 and np.linalg.norm(a[2] - b[2]) < 1e-9
    z = np.array([0.0, 0, 1])
    # cone apex at +z, base at -z: along the axis downwards hits the apex; upwards hits the base
    h, t, n = RR.ray_cone(np.array([0.0, 0, 5]), -z, INF, P1, P0, 1.0, True)
    assert h and t == 4.0 and np.array_equal(n, z)
    h, t, n = RR.ray_cone(np.array([0.2, 0.1, -5]), z, INF, P1, P0, 1.0, True)
    assert h and t == 4.0 and np.array_equal(n, -z)
    # parallel to a generator (A == 0 branch): x = 1 - (1 - z)/2 ... line x = 0.5 - z/2 + 0.5
    d = unit([-0.5, 0, 1])  # generator direction of the x>0 side going up
    o = np.array([0.5 + 0.25, 0, 0.0]) - 10 * d  # offset outward of the surface
    assert not RR.ray_cone(o, d, INF, P1, P0, 1.0, True)[0]
    o = np.array([0.25, 0, 0.0]) - 10 * d  # inside-parallel: enters through the base
    h, t, n = RR.ray_cone(o, d, INF, P1, P0, 1.0, True)
    assert h and np.array_equal(n, -z)
    # degenerate cone (apex == base): empty
    assert not RR.ray_cone(np.array([0.0, 0, 5]), -z, INF, P0, P0, 1.0, True)[0]
