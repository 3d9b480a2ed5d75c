"""Tests for touche/_kernels/base/predicates.py and touche/_kernels/primitives/containment.py against the exact /
brute-force references in tests/naive/predicates.py."""

from fractions import Fraction as Fr

import numpy as np

from touche._kernels import containment as C
from touche._kernels import predicates as P

from naive import predicates as N


def sg(x):
    return (x > 0) - (x < 0)


def wild(rng, n):
    """Doubles with random exponents over the whole range, zeros and repeats."""
    m = rng.standard_normal(n) * rng.choice([1.0, 1.0 + 2.0 ** -52, 3.0], n)
    if rng.random() < 0.5:
        e = rng.integers(-1074, 1000, n)
    else:
        e = rng.integers(-300, 300, n)
    v = np.ldexp(m, e)
    v[rng.random(n) < 0.15] = 0.0
    if rng.random() < 0.3:
        v[rng.integers(n)] = v[rng.integers(n)]
    return v


# ============================================================================ orient2d


def test_orient2d_random_and_nearly_collinear():
    rng = np.random.default_rng(1)
    n_checked = 0
    for k in range(1500):
        p = rng.standard_normal(6) * 10.0 ** rng.integers(-6, 7)
        if k % 3:
            # c = a + s (b - a) computed in floating point: nearly collinear
            s = rng.random() * 3 - 1
            p[4] = p[0] + s * (p[2] - p[0])
            p[5] = p[1] + s * (p[3] - p[1])
        assert sg(P.orient2d(*p)) == sg(N.orient2d_exact(*p)), p.tolist()
        # all 6 argument permutations give consistent signs
        a, b, c = p[0:2], p[2:4], p[4:6]
        assert sg(P.orient2d(*b, *c, *a)) == sg(P.orient2d(*p))
        assert sg(P.orient2d(*b, *a, *c)) == -sg(P.orient2d(*p))
        n_checked += 1
    assert n_checked == 1500


def test_orient2d_grid_near_line_naive_fails_ours_exact():
    """Classic failure of the double formula: points c = (0.5 + i u, 0.5 + j u), u = 2^-53,
    against the line through (12, 12) and (24, 24)."""
    u = 2.0 ** -53
    naive_wrong = 0
    n = 0
    for i in range(64):
        for j in range(64):
            cx, cy = 0.5 + i * u, 0.5 + j * u
            exact = sg(N.orient2d_exact(cx, cy, 12.0, 12.0, 24.0, 24.0))
            ours = sg(P.orient2d(cx, cy, 12.0, 12.0, 24.0, 24.0))
            naive = sg(N.orient2d_naive_float(cx, cy, 12.0, 12.0, 24.0, 24.0))
            assert ours == exact, (i, j)
            naive_wrong += naive != exact
            n += 1
    assert naive_wrong > n // 10  # the naive formula is wrong on many of them


def test_orient2d_explicit_naive_counterexample():
    u = 2.0 ** -53
    found = None
    for i in range(64):
        for j in range(64):
            args = (0.5 + i * u, 0.5 + j * u, 12.0, 12.0, 24.0, 24.0)
            if sg(N.orient2d_naive_float(*args)) != sg(N.orient2d_exact(*args)):
                found = args
                break
        if found:
            break
    assert found is not None
    assert sg(P.orient2d(*found)) == sg(N.orient2d_exact(*found))


def test_orient2d_wild_exponents_exact_path():
    rng = np.random.default_rng(2)
    for _ in range(1500):
        p = wild(rng, 6)
        assert sg(P.orient2d(*p)) == sg(N.orient2d_exact(*p)), p.tolist()
    # huge cancellation, product overflow, and subnormal contributions
    big = 2.0 ** 1000
    cases = [
        (big, big, -big, -big, 0.0, 5e-324),
        (big, 1.0, -big, -1.0, 0.0, 0.0),
        (1e308, 1e308, -1e308, -1e308, 1e308 * (1 - 2 ** -52), 1e308),
        (5e-324, 0.0, 0.0, 5e-324, 0.0, 0.0),
        (1e-320, 1e-320, 3e-320, 3e-320, 2e-320, 2e-320),
        (1e300, 1e-300, 2e300, 2e-300, 3e300, 3e-300),
        (1e300, 1e-300, 2e300, 2e-300, 3e300, 3e-300 + 1e-316),
    ]
    for c in cases:
        assert sg(P.orient2d(*c)) == sg(N.orient2d_exact(*c)), c
    assert P.orient2d(*cases[4]) == 0.0
    assert P.orient2d(*cases[5]) == 0.0 or sg(N.orient2d_exact(*cases[5])) != 0


def test_orient2d_convention_and_magnitude():
    assert P.orient2d(0.0, 0.0, 1.0, 0.0, 0.0, 1.0) == 1.0  # ccw -> +, twice the area
    assert P.orient2d(0.0, 0.0, 0.0, 1.0, 1.0, 0.0) == -1.0
    assert P.orient2d(0.0, 0.0, 1.0, 1.0, 2.0, 2.0) == 0.0
    assert P.orient2d(1.0, 2.0, 9.0, 0.0, 5.0, 8.0) == 56.0  # twice the area 28


# ============================================================================ orient3d


def test_orient3d_known_det_item11():
    # SEED-NOTES 2.11: det[[4,-2,6],[2,5,0],[-2,1,-4]] = -24 = orient3d(rows, origin)
    a, b, c = np.array([4.0, -2, 6]), np.array([2.0, 5, 0]), np.array([-2.0, 1, -4])
    assert P.orient3d(a, b, c, np.zeros(3)) == -24.0
    assert N.orient3d_exact(a, b, c, np.zeros(3)) == -24


def test_orient3d_sign_convention():
    a, b, c = np.array([0.0, 0, 0]), np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    above = np.array([0.2, 0.2, 1.0])  # abc is ccw seen from here (normal +z)
    assert P.orient3d(a, b, c, above) < 0  # Ericson: negative when d above
    assert P.orient3d(a, b, c, -above) > 0
    assert P.orient3d(a, b, c, np.array([5.0, -3.0, 0.0])) == 0.0


def test_orient3d_random_and_nearly_coplanar():
    rng = np.random.default_rng(3)
    for k in range(600):
        Q = rng.standard_normal((4, 3)) * 10.0 ** rng.integers(-6, 7)
        if k % 3:
            s, t = rng.random(2) * 2 - 0.5
            Q[3] = Q[0] + s * (Q[1] - Q[0]) + t * (Q[2] - Q[0])
        assert sg(P.orient3d(*Q)) == sg(N.orient3d_exact(*Q)), Q.tolist()
    # grid of points near the plane x + y + z = 1.5 at ulp offsets
    u = 2.0 ** -52
    a, b, c = np.array([1.5, 0, 0]), np.array([0, 1.5, 0]), np.array([0, 0, 1.5])
    for i in range(12):
        for j in range(12):
            d = np.array([0.5 + i * u, 0.5 + j * u, 0.5])
            assert sg(P.orient3d(a, b, c, d)) == sg(N.orient3d_exact(a, b, c, d))
    for _ in range(400):
        Q = wild(rng, 12).reshape(4, 3)
        if rng.random() < 0.3:
            Q[3] = Q[rng.integers(3)]
        assert sg(P.orient3d(*Q)) == sg(N.orient3d_exact(*Q)), Q.tolist()


# ============================================================================ incircle / insphere


def test_incircle2d_exact_sign():
    rng = np.random.default_rng(4)
    for k in range(400):
        if k % 2:
            th = rng.random(4) * 2 * np.pi
            r = 10.0 ** rng.integers(-3, 4)
            Q = np.c_[np.cos(th), np.sin(th)] * r + rng.standard_normal(2)  # nearly cocircular
        else:
            Q = rng.standard_normal((4, 2))
        assert sg(P.incircle2d(*Q.ravel())) == sg(N.incircle_exact(*Q)), Q.tolist()
    for _ in range(200):
        Q = wild(rng, 8).reshape(4, 2)
        assert sg(P.incircle2d(*Q.ravel())) == sg(N.incircle_exact(*Q)), Q.tolist()
    # exact cocircular, inside, outside (ccw triangle)
    assert P.incircle2d(1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0) == 0.0
    assert P.incircle2d(1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.1, 0.0) > 0
    assert P.incircle2d(1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 2.0, 0.0) < 0


def test_insphere_exact_sign():
    rng = np.random.default_rng(5)
    for k in range(120):
        Q = rng.standard_normal((5, 3))
        if k % 2:
            Q = Q / np.linalg.norm(Q, axis=1)[:, None] * 3.0 + 1.0  # nearly cospherical
        assert sg(P.insphere(*Q)) == sg(N.insphere_exact(*Q)), Q.tolist()
    for _ in range(60):
        Q = wild(rng, 15).reshape(5, 3)
        assert sg(P.insphere(*Q)) == sg(N.insphere_exact(*Q)), Q.tolist()
    a, b, c, d = (np.array(v, float) for v in ([1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0]))
    if P.orient3d(a, b, c, d) < 0:
        b, c = c, b
    assert P.orient3d(a, b, c, d) > 0
    assert P.insphere(a, b, c, d, np.array([0.0, -1.0, 0.0])) == 0.0
    assert P.insphere(a, b, c, d, np.array([0.0, 0.1, 0.0])) > 0
    assert P.insphere(a, b, c, d, np.array([0.0, 2.0, 0.0])) < 0


# ============================================================================ barycentric


def test_barycentric_vs_fractions():
    rng = np.random.default_rng(6)
    for k in range(300):
        s = [1e-6, 1.0, 1e6][k % 3]
        a, b, c, p = rng.standard_normal((4, 3)) * s
        ok, u, v, w = C.barycentric(p, a, b, c)
        ref = N.barycentric_exact(p, a, b, c)
        assert ok
        for x, y in zip((u, v, w), ref):
            assert abs(x - float(y)) <= 1e-8 * (1 + abs(float(y)))
        assert abs(u + v + w - 1) < 1e-12


def test_barycentric_degenerate_finite():
    a = np.array([0.0, 0, 0])
    b = np.array([2.0, 0, 0])
    c = np.array([1.0, 0, 0])
    ok, u, v, w = C.barycentric(np.array([0.5, 1.0, 0]), a, b, c)
    assert not ok and (u, v, w) == (0.75, 0.25, 0.0)
    ok, u, v, w = C.barycentric(np.array([0.5, 1.0, 0]), a, a, a)
    assert not ok and (u, v, w) == (1.0, 0.0, 0.0)
    ok, u, v, w = C.barycentric(np.array([3.0, 0, 0]), a, c, b)  # longest edge a-c is index 1->?
    assert not ok and np.isfinite([u, v, w]).all() and abs(u + v + w - 1) < 1e-15
    # vertices reproduce unit coordinates
    rng = np.random.default_rng(7)
    a, b, c = rng.standard_normal((3, 3))
    for p, e in ((a, (1, 0, 0)), (b, (0, 1, 0)), (c, (0, 0, 1))):
        ok, *uvw = C.barycentric(p, a, b, c)
        assert ok and np.allclose(uvw, e, atol=1e-12)


# ============================================================================ point in triangle


def test_item2_triangle_equals_three_halfplanes():
    # SEED-NOTES 2.2: triangle (1,2),(9,0),(5,8) = {x+4y>=9, 4x+2y<=36, 3x-2y>=-1}
    hits = 0
    n = 0
    for xi in range(1, 20):
        for yi in range(-2, 35):
            x, y = xi / 2.0, yi / 4.0
            ref = (x + 4 * y >= 9) and (4 * x + 2 * y <= 36) and (3 * x - 2 * y >= -1)
            got = C.point_in_triangle_2d(x, y, 1.0, 2.0, 9.0, 0.0, 5.0, 8.0)
            got_cw = C.point_in_triangle_2d(x, y, 1.0, 2.0, 5.0, 8.0, 9.0, 0.0)
            assert got == ref == got_cw, (x, y)
            hits += ref
            n += 1
    assert 0.2 < hits / n < 0.8


def test_point_in_triangle_2d_vs_exact():
    rng = np.random.default_rng(8)
    hits = 0
    n = 0
    for k in range(400):
        s = [1e-6, 1.0, 1e6][k % 3]
        T = rng.integers(-8, 9, (3, 2)).astype(float)
        if k % 7 == 0:
            T[2] = T[0] + (T[1] - T[0]) * rng.integers(-2, 3)  # collinear / coincident
        if k % 11 == 0:
            T[1] = T[0]
        cands = [rng.integers(-8, 9, 2).astype(float), T[k % 3].copy(),
                 (T[0] + T[1]) / 2, (T[1] + T[2]) / 2, rng.uniform(-8, 8, 2)]
        for p in cands:
            Ts, ps = T * s, p * s
            got = C.point_in_triangle_2d(*ps, *Ts.ravel())
            ref = N.point_in_triangle_2d_exact(ps, Ts[0], Ts[1], Ts[2])
            assert got == ref, (ps.tolist(), Ts.tolist())
            hits += got
            n += 1
    assert 0.2 < hits / n < 0.8


def test_point_in_triangle_3d():
    rng = np.random.default_rng(9)
    hits = 0
    n = 0
    for k in range(500):
        a, b, c = rng.standard_normal((3, 3))
        nrm = np.cross(b - a, c - a)
        nrm /= np.linalg.norm(nrm)
        uvw = rng.uniform(-0.3, 1.0, 3)
        uvw /= uvw.sum()
        off = rng.uniform(-2e-3, 2e-3)
        p = uvw[0] * a + uvw[1] * b + uvw[2] * c + off * nrm
        eps = 1e-3
        ref_in = (uvw >= 0).all() and abs(off) <= eps
        margin = min(abs(uvw).min(), abs(abs(off) - eps))
        if margin < 1e-7:
            continue
        got = C.point_in_triangle_3d(p, a, b, c, eps)
        assert got == ref_in
        hits += got
        n += 1
    assert n > 300 and 0.2 < hits / n < 0.8
    # boundary on purpose (integer data: exact): vertices, edge midpoints
    a, b, c = np.array([0.0, 0, 1]), np.array([4.0, 0, 1]), np.array([0.0, 4, 3])
    for p in (a, b, c, (a + b) / 2, (b + c) / 2, (c + a) / 2):
        assert C.point_in_triangle_3d(p, a, b, c, 0.0)
    assert not C.point_in_triangle_3d(np.array([2.0, 2.1, 2.05]), a, b, c, 0.0)
    # degenerate triangle: segment
    s0, s1 = np.array([0.0, 0, 0]), np.array([2.0, 0, 0])
    assert C.point_in_triangle_3d(np.array([1.0, 1e-4, 0]), s0, s1, s1, 1e-3)
    assert not C.point_in_triangle_3d(np.array([1.0, 1e-2, 0]), s0, s1, s1, 1e-3)
    assert C.point_in_triangle_3d(np.array([0.0, 0, 0]), s0, s0, s0, 0.0)


# ============================================================================ polygons


def _random_convex_polygon(rng, scale=1.0):
    pts = rng.integers(-20, 21, (rng.integers(3, 30), 2)).astype(float) * scale
    H = N.convex_hull_exact(pts)
    while len(H) < 3:
        pts = rng.integers(-20, 21, (10, 2)).astype(float) * scale
        H = N.convex_hull_exact(pts)
    xs = np.array([float(h[0]) for h in H])
    ys = np.array([float(h[1]) for h in H])
    return xs, ys


def test_point_in_convex_polygon_vs_exact():
    rng = np.random.default_rng(10)
    hits = 0
    n = 0
    for k in range(300):
        s = [2.0 ** -20, 1.0, 2.0 ** 20][k % 3]  # power-of-2 scales keep the data exact
        xs, ys = _random_convex_polygon(rng, s)
        m = len(xs)
        r = rng.integers(m)
        cands = [rng.integers(-22, 23, 2) * s, rng.uniform(-22, 22, 2) * s,
                 np.array([xs[r], ys[r]]),
                 np.array([(xs[r] + xs[(r + 1) % m]) / 2, (ys[r] + ys[(r + 1) % m]) / 2])]
        for p in cands:
            got = C.point_in_convex_polygon_2d(float(p[0]), float(p[1]), xs, ys)
            ref = N.point_in_polygon_exact(p[0], p[1], xs, ys)
            assert got == ref, (p.tolist(), xs.tolist(), ys.tolist())
            # the general crossings test must agree on convex polygons too
            assert C.point_in_polygon_2d(float(p[0]), float(p[1]), xs, ys) == ref
            hits += got
            n += 1
    assert 0.2 < hits / n < 0.8
    # scale 1e6 / 1e-6 (inexact scaling; the reference uses the same floats)
    for s in (1e-6, 1e6):
        xs, ys = _random_convex_polygon(rng)
        xs, ys = xs * s, ys * s
        for _ in range(50):
            p = rng.uniform(-22, 22, 2) * s
            assert C.point_in_convex_polygon_2d(p[0], p[1], xs, ys) == \
                N.point_in_polygon_exact(p[0], p[1], xs, ys)


def _random_star_polygon(rng):
    m = rng.integers(3, 16)
    ang = np.sort(rng.choice(np.arange(0, 360, 10), m, replace=False)) * np.pi / 180
    rad = rng.uniform(2, 12, m)
    xs = np.round(rad * np.cos(ang))
    ys = np.round(rad * np.sin(ang))
    if rng.random() < 0.5:
        xs, ys = xs[::-1].copy(), ys[::-1].copy()
    return xs, ys


def _is_simple_exact(xs, ys):
    n = len(xs)
    V = list(zip(xs, ys))
    if len(set(V)) != n:
        return False

    def o(a, b, c):
        return N.sign(N.orient2d_exact(*a, *b, *c))

    def inter(a, b, c, d):
        o1, o2, o3, o4 = o(a, b, c), o(a, b, d), o(c, d, a), o(c, d, b)
        if o1 != o2 and o3 != o4 and 0 not in (o1, o2, o3, o4):
            return True
        return (N.on_segment_exact(c, a, b) or N.on_segment_exact(d, a, b)
                or N.on_segment_exact(a, c, d) or N.on_segment_exact(b, c, d))

    for i in range(n):
        for j in range(i + 1, n):
            if j == i + 1 or (i == 0 and j == n - 1):
                # adjacent: only the shared vertex may be common (no overlap)
                a, b = V[i], V[(i + 1) % n]
                c, d = V[j], V[(j + 1) % n]
                shared = b if j == i + 1 else a
                others = [q for q in (a, b, c, d) if q != shared]
                if len(others) == 2 and o(shared, *others) == 0:
                    dx1 = (others[0][0] - shared[0], others[0][1] - shared[1])
                    dx2 = (others[1][0] - shared[0], others[1][1] - shared[1])
                    if dx1[0] * dx2[0] + dx1[1] * dx2[1] > 0:
                        return False
                continue
            if inter(V[i], V[(i + 1) % n], V[j], V[(j + 1) % n]):
                return False
    return True


def test_point_in_polygon_general_vs_winding():
    rng = np.random.default_rng(11)
    hits = 0
    n = 0
    polys = 0
    while polys < 60:
        xs, ys = _random_star_polygon(rng)
        if not _is_simple_exact(xs, ys):
            continue
        polys += 1
        m = len(xs)
        for q in range(7):
            if q < 3:
                p = rng.integers(-12, 13, 2).astype(float)  # grid: rays through vertices
            elif q == 3:
                r = rng.integers(m)
                p = np.array([xs[r], ys[r]])
            elif q in (4, 5):
                r = rng.integers(m)
                p = np.array([(xs[r] + xs[(r + 1) % m]) / 2, (ys[r] + ys[(r + 1) % m]) / 2])
            else:
                p = rng.uniform(-12, 12, 2)
            got = C.point_in_polygon_2d(float(p[0]), float(p[1]), xs, ys)
            ref = N.point_in_polygon_exact(p[0], p[1], xs, ys)
            assert got == ref, (p.tolist(), xs.tolist(), ys.tolist())
            hits += got
            n += 1
    assert n >= 300 and 0.2 < hits / n < 0.8


def test_point_in_polygon_concave_fixed():
    # U shape with a horizontal edge collinear with test rays through vertices
    xs = np.array([0.0, 3, 3, 2, 2, 1, 1, 0])
    ys = np.array([0.0, 0, 3, 3, 1, 1, 3, 3])
    cases = {(0.5, 2): True, (1.5, 2): False, (1.5, 1): True, (2.5, 3): True, (1.5, 3): False,
             (3, 1.5): True, (3.5, 0): False, (-1, 3): False, (-1, 1): False, (2, 2): True,
             (1.5, 0.5): True, (4, 3): False}
    for (x, y), ref in cases.items():
        assert C.point_in_polygon_2d(float(x), float(y), xs, ys) == ref, (x, y)
        assert N.point_in_polygon_exact(x, y, xs, ys) == ref


def test_is_convex_polygon_vs_exact():
    rng = np.random.default_rng(12)
    hits = 0
    n = 0
    for k in range(300):
        xs, ys = _random_convex_polygon(rng)
        mode = k % 5
        if mode == 1:
            xs, ys = xs[::-1].copy(), ys[::-1].copy()  # cw: still convex
        elif mode == 2 and len(xs) >= 4:
            perm = rng.permutation(len(xs))
            xs, ys = xs[perm], ys[perm]
        elif mode == 3:
            i = rng.integers(len(xs))
            j = (i + 1) % len(xs)
            # insert the edge midpoint (collinear vertex) or a duplicate vertex
            mx, my = ((xs[i] + xs[j]) / 2, (ys[i] + ys[j]) / 2) if rng.random() < 0.5 \
                else (xs[i], ys[i])
            xs, ys = np.insert(xs, j, mx), np.insert(ys, j, my)
        elif mode == 4:
            i = rng.integers(len(xs))
            xs = xs.copy()
            xs[i] += rng.uniform(-3, 3)  # may dent the polygon
        got = C.is_convex_polygon_2d(xs, ys)
        ref = N.is_strictly_convex_exact(xs, ys)
        assert got == ref, (xs.tolist(), ys.tolist())
        hits += got
        n += 1
    assert 0.2 < hits / n < 0.8
    ang = np.arange(5) * 4 * np.pi / 5  # pentagram
    assert not C.is_convex_polygon_2d(np.cos(ang), np.sin(ang))
    assert C.is_convex_polygon_2d(np.cos(ang / 2), np.sin(ang / 2))
    assert not C.is_convex_polygon_2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]))


# ============================================================================ polyhedra, planes


def test_point_in_convex_polyhedron_vs_delaunay():
    from scipy.spatial import ConvexHull, Delaunay

    rng = np.random.default_rng(13)
    hits = 0
    n = 0
    for k in range(60):
        s = [1e-6, 1.0, 1e6][k % 3]
        V = rng.standard_normal((rng.integers(5, 20), 3)) * s
        hull = ConvexHull(V)
        planes = np.c_[hull.equations[:, :3], -hull.equations[:, 3]].copy()
        dl = Delaunay(V[hull.vertices])
        for p in rng.uniform(-1.6, 1.6, (8, 3)) * s:
            dist = (planes[:, :3] @ p - planes[:, 3]).max()
            if abs(dist) < 1e-9 * s:
                continue
            got = C.point_in_convex_polyhedron(p, planes)
            assert got == (dl.find_simplex(p) >= 0)
            if k < 5:
                assert got == N.point_in_convex_polyhedron_lp(p, V)
            hits += got
            n += 1
    assert n >= 300 and 0.2 < hits / n < 0.8
    # closed: cube faces, edges, vertices (exact data)
    cube = np.array([[1.0, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1],
                     [0, 0, 1, 1], [0, 0, -1, 1]])
    for p in ([1, 1, 1], [1, 0, 0], [1, 1, 0], [-1, 0.5, 1], [0, 0, 0]):
        assert C.point_in_convex_polyhedron(np.array(p, float), cube)
    for p in ([1.0000001, 0, 0], [0, 0, -1.5]):
        assert not C.point_in_convex_polyhedron(np.array(p, float), cube)


def test_plane_from_points():
    rng = np.random.default_rng(14)
    for k in range(300):
        s = [1e-6, 1.0, 1e6][k % 3]
        a, b, c = rng.standard_normal((3, 3)) * s
        ok, nrm, d = C.plane_from_points(a, b, c)
        assert ok and abs(np.linalg.norm(nrm) - 1) < 1e-14
        for q in (a, b, c):
            assert abs(nrm @ q - d) <= 1e-9 * s
        assert np.cross(b - a, c - a) @ nrm > 0
        assert abs(C.signed_distance_plane(a + 2.5 * s * nrm, nrm, d) - 2.5 * s) <= 1e-9 * s
    # exactly collinear / coincident -> not ok; nearly collinear but exact non-collinear -> ok
    a, b = np.array([1.0, 2.0, 3.0]), np.array([3.0, 6.0, 11.0])
    for t in (-1.0, 0.0, 0.5, 2.0, 5.0):
        assert not C.plane_from_points(a, b, a + t * (b - a))[0]
    assert not C.plane_from_points(a, a, a)[0]
    c = a + 0.5 * (b - a)
    c[2] = np.nextafter(c[2], 100)
    ok, nrm, d = C.plane_from_points(a, b, c)
    assert ok and np.isfinite(nrm).all() and abs(np.linalg.norm(nrm) - 1) < 1e-14
    ref = np.array([float(x) for x in _cross_exact(a, b, c)])
    assert np.allclose(nrm, ref / np.linalg.norm(ref), atol=1e-12)


def _cross_exact(a, b, c):
    A, B, Cc = [[Fr(float(t)) for t in q] for q in (a, b, c)]
    u = [B[i] - A[i] for i in range(3)]
    v = [Cc[i] - A[i] for i in range(3)]
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def test_intersect_plane_plane():
    rng = np.random.default_rng(15)
    for k in range(300):
        s = [1e-6, 1.0, 1e6][k % 3]
        n1, n2 = rng.standard_normal((2, 3))
        n1 /= np.linalg.norm(n1)
        n2 /= np.linalg.norm(n2)
        d1, d2 = rng.standard_normal(2) * s
        ok, p, u = C.intersect_plane_plane(n1, d1, n2, d2)
        assert ok
        assert abs(n1 @ p - d1) <= 1e-9 * s and abs(n2 @ p - d2) <= 1e-9 * s
        assert abs(n1 @ u) < 1e-12 and abs(n2 @ u) < 1e-12 and abs(np.linalg.norm(u) - 1) < 1e-12
        assert abs(p @ u) <= 1e-9 * s  # point closest to the origin
    n = np.array([0.0, 0.6, 0.8])
    assert not C.intersect_plane_plane(n, 1.0, n, 2.0)[0]
    assert not C.intersect_plane_plane(n, 1.0, -n, -1.0)[0]
    ok, p, u = C.intersect_plane_plane(np.array([1.0, 0, 0]), 2.0, np.array([0.0, 1, 0]), 3.0)
    assert ok and np.allclose(p, [2, 3, 0]) and np.allclose(u, [0, 0, 1])


def test_intersect_three_planes():
    rng = np.random.default_rng(16)
    for k in range(300):
        s = [1e-6, 1.0, 1e6][k % 3]
        Nm = rng.standard_normal((3, 3))
        Nm /= np.linalg.norm(Nm, axis=1)[:, None]
        d = rng.standard_normal(3) * s
        ok, p = C.intersect_three_planes(Nm[0], d[0], Nm[1], d[1], Nm[2], d[2])
        ref = np.linalg.solve(Nm, d)
        cond = np.linalg.cond(Nm)
        assert ok
        assert np.allclose(p, ref, rtol=0, atol=1e-12 * s * cond ** 2 + 1e-300)
    # three planes through one line (third normal in the span of the first two) -> not ok
    n1, n2 = np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    n3 = np.array([0.6, 0.8, 0.0])
    assert not C.intersect_three_planes(n1, 1.0, n2, 1.0, n3, 1.4)[0]
    assert not C.intersect_three_planes(n1, 1.0, n1, 2.0, n2, 1.0)[0]  # two parallel
    ok, p = C.intersect_three_planes(n1, 1.0, n2, 2.0, np.array([0.0, 0, 1]), 3.0)
    assert ok and np.array_equal(p, [1.0, 2.0, 3.0])
