"""Overlap kernels (touche/_kernels/primitives/overlap.py) and the generic SAT (sat.py) vs naive references."""
import numpy as np
import pytest

from touche._kernels import overlap as K
from touche._kernels import sat as S
from naive import overlap as N

NCASES = 300


def f64(x):
    return np.ascontiguousarray(x, dtype=np.float64)


def rot(rng):
    return f64(N.random_rotation(rng))


def unit(rng):
    v = rng.normal(size=3)
    return f64(v / np.linalg.norm(v))


def run_random(gen, kernel, seed, margin, n=NCASES):
    """gen(rng) -> (args, signed reference value; <= 0 means overlap). Cases within `margin`
    of touching are skipped. Asserts agreement and a 20-80 % hit rate."""
    rng = np.random.default_rng(seed)
    hits = used = 0
    for _ in range(n):
        args, ref = gen(rng)
        if abs(ref) <= margin:
            continue
        got = kernel(*args)
        if isinstance(got, tuple):
            got = got[0]
        exp = ref <= 0
        assert bool(got) == exp, (args, ref)
        used += 1
        hits += exp
    assert used >= 0.9 * n
    rate = hits / used
    assert 0.2 <= rate <= 0.8, rate
    return rate


# ------------------------------------------------------------------------ generators


def g_aabb_aabb(rng):
    c1, c2 = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    h1, h2 = rng.uniform(0.1, 0.8, 3), rng.uniform(0.1, 0.8, 3)
    mn1, mx1, mn2, mx2 = f64(c1 - h1), f64(c1 + h1), f64(c2 - h2), f64(c2 + h2)
    ref = N.hull_signed_distance(N.aabb_corners(mn1, mx1), N.aabb_corners(mn2, mx2))
    return (mn1, mx1, mn2, mx2), ref


def g_sphere_sphere(rng):
    c1, c2 = f64(rng.uniform(-0.8, 0.8, 3)), f64(rng.uniform(-0.8, 0.8, 3))
    r1, r2 = rng.uniform(0.1, 0.8, 2)
    return (c1, r1, c2, r2), np.linalg.norm(c1 - c2) - r1 - r2


def g_obb_obb(rng):
    c1, c2 = f64(rng.uniform(-0.8, 0.8, 3)), f64(rng.uniform(-0.8, 0.8, 3))
    A1, A2 = rot(rng), rot(rng)
    h1, h2 = f64(rng.uniform(0.05, 0.6, 3)), f64(rng.uniform(0.05, 0.6, 3))
    ref = N.hull_signed_distance(N.box_corners(c1, A1, h1), N.box_corners(c2, A2, h2))
    return (c1, A1, h1, c2, A2, h2, 1e-12), ref


def g_sphere_capsule(rng):
    c, a, b = (f64(rng.uniform(-0.7, 0.7, 3)) for _ in range(3))
    r, rc = rng.uniform(0.05, 0.4, 2)
    return (c, r, a, b, rc), N.origin_hull_distance(N.minkowski_diff(c[None], np.array([a, b]))) - r - rc


def g_capsule_capsule(rng):
    a1, b1, a2, b2 = (f64(rng.uniform(-1, 1, 3)) for _ in range(4))
    if rng.random() < 0.1:
        b1 = a1.copy()  # zero-length segment
    if rng.random() < 0.1:  # parallel segments
        b2 = f64(a2 + (b1 - a1) * rng.uniform(-1, 1))
    r1, r2 = rng.uniform(0.05, 0.35, 2)
    D = N.minkowski_diff(np.array([a1, b1]), np.array([a2, b2]))
    return (a1, b1, r1, a2, b2, r2), N.origin_hull_distance(D) - r1 - r2


def g_lozenge(rng):
    out = []
    corners = []
    for _ in range(2):
        c = f64(rng.uniform(-0.6, 0.6, 3))
        R = rot(rng)
        if rng.random() < 0.15:
            R = np.eye(3)  # parallel / coplanar configurations
            c[2] = 0.0
        u, v = f64(R[:, 0]), f64(R[:, 1])
        eu, ev = rng.uniform(0.05, 0.6, 2)
        r = rng.uniform(0.0, 0.25)
        out += [c, u, v, eu, ev, r]
        corners.append(N.rect_corners(c, u, v, eu, ev))
    ref = N.origin_hull_distance(N.minkowski_diff(corners[0], corners[1])) - out[5] - out[11]
    return tuple(out), ref


def g_plane(rng):
    n = unit(rng)
    d = rng.uniform(-1, 1)
    return n, d


def g_sphere_plane(rng):
    c = f64(rng.uniform(-1, 1, 3))
    r = rng.uniform(0.05, 0.6)
    n, d = g_plane(rng)
    return (c, r, n, d), abs(n @ c - d) - r


def g_sphere_halfspace(rng):
    c = f64(rng.uniform(-1, 1, 3))
    r = rng.uniform(0.05, 0.6)
    n, d = g_plane(rng)
    return (c, r, n, d), (n @ c - d) - r


def g_sphere_inside(rng):
    c = f64(rng.uniform(-1, 1, 3))
    r = rng.uniform(0.05, 0.6)
    n, d = g_plane(rng)
    return (c, r, n, d), (n @ c - d) + r


def _box_proj(P, n, d):
    p = P @ n - d
    return p.min(), p.max()


def g_obb_plane(rng, halfspace=False):
    c, A, h = f64(rng.uniform(-1, 1, 3)), rot(rng), f64(rng.uniform(0.05, 0.5, 3))
    n, d = g_plane(rng)
    lo, hi = _box_proj(N.box_corners(c, A, h), n, d)
    ref = lo if halfspace else max(lo, -hi)
    return (c, A, h, n, d), ref


def g_aabb_plane(rng):
    c, h = rng.uniform(-1, 1, 3), rng.uniform(0.05, 0.5, 3)
    mn, mx = f64(c - h), f64(c + h)
    n, d = g_plane(rng)
    lo, hi = _box_proj(N.aabb_corners(mn, mx), n, d)
    return (mn, mx, n, d), max(lo, -hi)


def g_cone(rng, halfspace=False):
    apex, ax = f64(rng.uniform(-1, 1, 3)), unit(rng)
    h, r = rng.uniform(0.1, 1.0), rng.uniform(0.05, 0.6)
    n, d = g_plane(rng)
    if rng.random() < 0.05:
        ax = n.copy()  # axis parallel to the normal
    lo, hi = _box_proj(N.cone_samples(apex, ax, h, r), n, d)
    ref = lo if halfspace else max(lo, -hi)
    return (apex, ax, h, r, n, d), ref


def g_sphere_aabb(rng):
    c = f64(rng.uniform(-0.7, 0.7, 3))
    r = rng.uniform(0.1, 0.6)
    bc, h = rng.uniform(-0.5, 0.5, 3), rng.uniform(0.05, 0.5, 3)
    mn, mx = f64(bc - h), f64(bc + h)
    P = N.aabb_corners(mn, mx)
    return (c, r, mn, mx), N.origin_hull_distance(P - c) - r


def g_sphere_obb(rng):
    c = f64(rng.uniform(-0.8, 0.8, 3))
    r = rng.uniform(0.1, 0.6)
    oc, A, h = f64(rng.uniform(-0.5, 0.5, 3)), rot(rng), f64(rng.uniform(0.05, 0.5, 3))
    P = N.box_corners(oc, A, h)
    return (c, r, oc, A, h), N.origin_hull_distance(P - c) - r


def rand_tri(rng, spread=1.0, size=0.8):
    c = rng.uniform(-spread, spread, 3)
    T = [f64(c + rng.uniform(-size, size, 3)) for _ in range(3)]
    u = rng.random()
    if u < 0.05:
        T[2] = f64(T[0] + 0.3 * (T[1] - T[0]))  # collinear (segment)
    elif u < 0.07:
        T[1] = T[0].copy()
        T[2] = T[0].copy()  # a point
    return T


def g_sphere_triangle(rng):
    c = f64(rng.uniform(-0.6, 0.6, 3))
    r = rng.uniform(0.1, 0.6)
    a, b, tc = rand_tri(rng, 0.3, 0.6)
    return (c, r, a, b, tc), N.origin_hull_distance(np.array([a, b, tc]) - c) - r


def rand_polygon(rng, k):
    R = rot(rng)
    center = rng.uniform(-0.3, 0.3, 3)
    th = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = rng.uniform(0.2, 0.8)
    V = center + rad * (np.cos(th)[:, None] * R[:, 0] + np.sin(th)[:, None] * R[:, 1])
    return f64(V), f64(R[:, 2])


def g_sphere_polygon(rng):
    c = f64(rng.uniform(-0.6, 0.6, 3))
    r = rng.uniform(0.1, 0.6)
    V, n = rand_polygon(rng, int(rng.integers(3, 8)))
    if rng.random() < 0.5:
        n = f64(-n)  # either winding
    return (c, r, V, n), N.origin_hull_distance(V - c) - r


def g_triangle_aabb(rng):
    a, b, c = rand_tri(rng, 0.5, 0.6)
    bc, h = f64(rng.uniform(-0.5, 0.5, 3)), f64(rng.uniform(0.05, 0.5, 3))
    ref = _tri_ref(np.array([a, b, c]), N.box_corners(bc, np.eye(3), h))
    return (a, b, c, bc, h), ref


def g_triangle_obb(rng):
    a, b, c = rand_tri(rng, 0.5, 0.6)
    oc, A, h = f64(rng.uniform(-0.5, 0.5, 3)), rot(rng), f64(rng.uniform(0.05, 0.5, 3))
    ref = _tri_ref(np.array([a, b, c]), N.box_corners(oc, A, h))
    return (a, b, c, oc, A, h), ref


def _tri_ref(P, Q):
    ref = N.hull_signed_distance(P, Q)
    if ref is None:  # flat Minkowski difference
        ref = N.origin_hull_distance(N.minkowski_diff(P, Q))
        ref = ref if ref > 0 else -1.0  # overlapping but flat: no depth, treat as clear hit
        if not N.hulls_intersect_lp(P, Q):
            ref = max(ref, 1.0)
    return ref


def g_triangle_triangle(rng):
    A = rand_tri(rng, 0.5, 0.8)
    B = [f64(x + np.mean(A, axis=0)) for x in rand_tri(rng, 0.3, 0.8)]
    return tuple(A) + tuple(B), _tri_ref(np.array(A), np.array(B))


def g_triangle_triangle_coplanar(rng):
    """Both triangles in the plane z = z0 (exact); reference = 2D signed distance from the
    facets of the planar Minkowski difference."""
    z0 = rng.uniform(-1, 1)
    A = [f64([*rng.uniform(-0.8, 0.8, 2), z0]) for _ in range(3)]
    B = [f64([*rng.uniform(-0.8, 0.8, 2), z0]) for _ in range(3)]
    if rng.random() < 0.1:
        B[2] = f64(B[0] + 0.25 * (B[1] - B[0]))  # zero-area
    D = N.minkowski_diff(np.array(A), np.array(B))
    ref = N.origin_hull_distance(D)
    if ref == 0.0:
        ref = N.ConvexHull(D[:, :2]).equations[:, 2].max()
    return tuple(A) + tuple(B), ref


RANDOM_CASES = [
    ("aabb_aabb", g_aabb_aabb, K.test_aabb_aabb, 1e-9),
    ("sphere_sphere", g_sphere_sphere, K.test_sphere_sphere, 1e-9),
    ("obb_obb", g_obb_obb, K.test_obb_obb, 1e-9),
    ("sphere_capsule", g_sphere_capsule, K.test_sphere_capsule, 1e-9),
    ("capsule_capsule", g_capsule_capsule, K.test_capsule_capsule, 1e-9),
    ("lozenge_lozenge", g_lozenge, K.test_lozenge_lozenge, 1e-9),
    ("sphere_plane", g_sphere_plane, K.test_sphere_plane, 1e-9),
    ("sphere_halfspace", g_sphere_halfspace, K.test_sphere_halfspace, 1e-9),
    ("sphere_inside_halfspace", g_sphere_inside, K.sphere_inside_halfspace, 1e-9),
    ("obb_plane", g_obb_plane, K.test_obb_plane, 1e-9),
    ("obb_halfspace", lambda r: g_obb_plane(r, True), K.test_obb_halfspace, 1e-9),
    ("aabb_plane", g_aabb_plane, K.test_aabb_plane, 1e-9),
    # the cone reference samples 20000 base points: error <= r (1 - cos(pi/20000)) ~ 1e-8 r
    ("cone_plane", g_cone, K.test_cone_plane, 1e-7),
    ("cone_halfspace", lambda r: g_cone(r, True), K.test_cone_halfspace, 1e-7),
    ("sphere_aabb", g_sphere_aabb, K.test_sphere_aabb, 1e-9),
    ("sphere_obb", g_sphere_obb, K.test_sphere_obb, 1e-9),
    ("sphere_triangle", g_sphere_triangle, K.test_sphere_triangle, 1e-9),
    ("sphere_polygon", g_sphere_polygon, K.test_sphere_polygon, 1e-9),
    ("triangle_aabb", g_triangle_aabb, K.test_triangle_aabb, 1e-9),
    ("triangle_obb", g_triangle_obb, K.test_triangle_obb, 1e-9),
    ("triangle_triangle", g_triangle_triangle, K.test_triangle_triangle, 1e-9),
    ("triangle_triangle_coplanar", g_triangle_triangle_coplanar, K.test_triangle_triangle, 1e-9),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,gen,kernel,margin", RANDOM_CASES, ids=[c[0] for c in RANDOM_CASES])
def test_random_vs_reference(name, gen, kernel, margin):
    run_random(gen, kernel, seed=sum(map(ord, name)), margin=margin)


# ------------------------------------------------------------------------ closest points q


def test_sphere_closest_points_vs_reference():
    rng = np.random.default_rng(7)
    for gen, kind in ((g_sphere_aabb, "aabb"), (g_sphere_obb, "obb"), (g_sphere_triangle, "tri")):
        for _ in range(100):
            args, ref = gen(rng)
            c, r = args[0], args[1]
            if kind == "aabb":
                hit, q = K.test_sphere_aabb(*args)
                P = N.aabb_corners(args[2], args[3])
            elif kind == "obb":
                hit, q = K.test_sphere_obb(*args)
                P = N.box_corners(args[2], args[3], args[4])
            else:
                hit, q = K.test_sphere_triangle(*args)
                P = np.array(args[2:5])
            dist = ref + r
            assert abs(np.linalg.norm(c - q) - dist) <= 1e-9
            assert N.origin_hull_distance(P - q) <= 1e-9  # q lies on the shape


# ------------------------------------------------------------------------ hand cases


E3 = np.eye(3)
Z = np.zeros(3)


def v(*x):
    return f64(x)


@pytest.mark.parametrize("s", [2.0**-20, 1.0, 2.0**20])
def test_touching_and_scales(s):
    one = v(1, 1, 1) * s
    # AABB: touching face / edge / vertex
    assert K.test_aabb_aabb(Z, one, v(1, 0, 0) * s, v(2, 1, 1) * s)
    assert K.test_aabb_aabb(Z, one, v(1, 1, 0) * s, v(2, 2, 1) * s)
    assert K.test_aabb_aabb(Z, one, one, 2 * one)
    assert not K.test_aabb_aabb(Z, one, v(1.01, 0, 0) * s, v(2, 1, 1) * s)
    # spheres touching
    assert K.test_sphere_sphere(Z, 1.0 * s, v(2, 0, 0) * s, 1.0 * s)
    assert not K.test_sphere_sphere(Z, 1.0 * s, v(2.001, 0, 0) * s, 1.0 * s)
    # OBB with identical axes (parallel edges: null cross axes -> needs the epsilon)
    h = v(0.5, 0.5, 0.5) * s
    R = rot(np.random.default_rng(1))
    for eps in (0.0, 1e-9):
        assert K.test_obb_obb(Z, E3, h, v(1, 0, 0) * s, E3, h, eps)  # face touching
        assert K.test_obb_obb(Z, E3, h, v(1, 1, 1) * s, E3, h, eps)  # vertex touching
        assert not K.test_obb_obb(Z, E3, h, v(1.01, 0, 0) * s, E3, h, eps)
    c2 = f64(R @ v(0.99, 0.3, -0.2) * s)
    assert K.test_obb_obb(Z, R, h, c2, R, h, 1e-9)  # rotated, identical axes, overlapping
    assert not K.test_obb_obb(Z, R, h, f64(R @ v(1.01, 0.3, -0.2) * s), R, h, 1e-9)
    # capsules: touching, zero-length, parallel
    a, b = v(0, 0, 0) * s, v(1, 0, 0) * s
    assert K.test_capsule_capsule(a, b, 0.5 * s, v(0.5, 1, 0) * s, v(3, 1, 0) * s, 0.5 * s)
    assert not K.test_capsule_capsule(a, b, 0.5 * s, v(0.5, 1.01, 0) * s, v(3, 1.01, 0) * s, 0.5 * s)
    assert K.test_capsule_capsule(a, a, 0.5 * s, v(0, 1, 0) * s, v(0, 1, 0) * s, 0.5 * s)
    assert not K.test_capsule_capsule(a, a, 0.5 * s, v(0, 1.1, 0) * s, v(0, 1.1, 0) * s, 0.5 * s)
    assert K.test_capsule_capsule(a, b, 0.25 * s, v(2, 0, 0) * s, v(3, 0, 0) * s, 0.75 * s)  # collinear
    assert K.test_sphere_capsule(v(0.5, 1, 0) * s, 0.5 * s, a, b, 0.5 * s)
    assert K.test_sphere_capsule(v(0.5, 1, 0) * s, 0.5 * s, a, a, 0.7 * s)
    assert not K.test_sphere_capsule(v(0.5, 1, 0) * s, 0.5 * s, a, a, 0.6 * s)
    # planes touching
    n = v(0, 0, 1)
    assert K.test_sphere_plane(v(0, 0, 1) * s, 1.0 * s, n, 0.0)
    assert K.test_sphere_halfspace(v(0, 0, 1) * s, 1.0 * s, n, 0.0)
    assert K.sphere_inside_halfspace(v(0, 0, -1) * s, 1.0 * s, n, 0.0)
    assert not K.sphere_inside_halfspace(v(0, 0, -0.99) * s, 1.0 * s, n, 0.0)
    assert K.test_aabb_plane(Z, one, n, 1.0 * s)
    assert K.test_obb_plane(one, E3, h, n, 1.5 * s)
    assert not K.test_obb_halfspace(one, E3, h, n, 0.49 * s)
    # cone: tip touching / base touching / axis parallel to normal
    assert K.test_cone_plane(Z, v(0, 0, 1), 1.0 * s, 0.5 * s, n, 0.0)
    assert K.test_cone_plane(Z, v(0, 0, 1), 1.0 * s, 0.5 * s, n, 1.0 * s)
    assert not K.test_cone_plane(Z, v(0, 0, 1), 1.0 * s, 0.5 * s, n, 1.01 * s)
    assert K.test_cone_plane(Z, v(1, 0, 0), 1.0 * s, 0.5 * s, n, 0.5 * s)  # side touching
    assert not K.test_cone_halfspace(Z, v(1, 0, 0), 1.0 * s, 0.5 * s, n, -0.51 * s)
    assert K.test_cone_halfspace(Z, v(1, 0, 0), 1.0 * s, 0.5 * s, n, -0.5 * s)
    # sphere vs box / triangle touching, q
    hit, q = K.test_sphere_aabb(v(2, 0.5, 0.5) * s, 1.0 * s, Z, one)
    assert hit and np.allclose(q, v(1, 0.5, 0.5) * s)
    hit, q = K.test_sphere_obb(v(2, 0, 0) * s, 1.5 * s, Z, E3, h)
    assert hit and np.allclose(q, v(0.5, 0, 0) * s)
    hit, q = K.test_sphere_triangle(v(0.2, 0.2, 1) * s, 1.0 * s, Z, v(1, 0, 0) * s, v(0, 1, 0) * s)
    assert hit and np.allclose(q, v(0.2, 0.2, 0) * s)
    hit, q = K.test_sphere_triangle(v(0.2, 0.2, 1) * s, 0.99 * s, Z, v(1, 0, 0) * s, v(0, 1, 0) * s)
    assert not hit
    # sphere vs polygon: face, edge, either winding
    sq = f64(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]) * s)
    assert K.test_sphere_polygon(v(0.5, 0.5, 1) * s, 1.0 * s, sq, n)
    assert K.test_sphere_polygon(v(0.5, 0.5, 1) * s, 1.0 * s, sq[::-1].copy(), n)
    assert K.test_sphere_polygon(v(2, 0.5, 0) * s, 1.0 * s, sq, n)
    assert not K.test_sphere_polygon(v(2, 0.5, 0) * s, 0.99 * s, sq, n)
    assert not K.test_sphere_polygon(v(1.5, 1.5, 0) * s, 0.7 * s, sq, n)
    # triangle vs box touching
    assert K.test_triangle_aabb(v(1, 0, 0) * s, v(2, 0, 0) * s, v(1, 1, 0) * s, Z, h * 2)
    assert K.test_triangle_aabb(v(1, 1, 1) * s, v(2, 1, 1) * s, v(1, 2, 1) * s, Z, h * 2)
    assert not K.test_triangle_aabb(v(1.01, 1, 1) * s, v(2, 1, 1) * s, v(1, 2, 1) * s, Z, h * 2)
    assert K.test_triangle_obb(v(1, 0, 0) * s, v(2, 0, 0) * s, v(1, 1, 0) * s, Z, E3, h * 2)
    # lozenge touching (coplanar side by side, stacked parallel, crossed)
    ex, ey = v(1, 0, 0), v(0, 1, 0)
    assert K.test_lozenge_lozenge(Z, ex, ey, 1.0 * s, 1.0 * s, 0.0, v(2, 0, 0) * s, ex, ey, 1.0 * s, 1.0 * s, 0.0)
    assert not K.test_lozenge_lozenge(Z, ex, ey, 1.0 * s, 1.0 * s, 0.0, v(2.01, 0, 0) * s, ex, ey, 1.0 * s, 1.0 * s, 0.0)
    assert K.test_lozenge_lozenge(Z, ex, ey, 1.0 * s, 1.0 * s, 0.5 * s, v(0.3, 0, 1) * s, ex, ey, 1.0 * s, 1.0 * s, 0.5 * s)
    assert not K.test_lozenge_lozenge(Z, ex, ey, 1.0 * s, 1.0 * s, 0.5 * s, v(0.3, 0, 1.01) * s, ex, ey, 1.0 * s, 1.0 * s, 0.5 * s)
    ez = v(0, 0, 1)
    assert K.test_lozenge_lozenge(Z, ex, ey, 1.0 * s, 0.1 * s, 0.0, Z, ey, ez, 0.1 * s, 1.0 * s, 0.0)  # plus sign


@pytest.mark.parametrize("s", [2.0**-20, 1.0, 2.0**20])
def test_triangle_triangle_hand(s):
    T = K.test_triangle_triangle
    a0, a1, a2 = v(0, 0, 0) * s, v(1, 0, 0) * s, v(0, 1, 0) * s
    # coplanar: overlapping, touching at edge / vertex, disjoint, contained
    assert T(a0, a1, a2, v(0.2, 0.2, 0) * s, v(2, 0.2, 0) * s, v(0.2, 2, 0) * s)
    assert T(a0, a1, a2, v(1, 0, 0) * s, v(0, 1, 0) * s, v(1, 1, 0) * s)  # shared edge
    assert T(a0, a1, a2, v(1, 0, 0) * s, v(2, 0, 0) * s, v(2, 1, 0) * s)  # vertex
    assert T(a0, a1, a2, v(0.5, 0.5, 0) * s, v(2, 1, 0) * s, v(1, 2, 0) * s)  # vertex on edge
    assert not T(a0, a1, a2, v(0.51, 0.51, 0) * s, v(2, 1, 0) * s, v(1, 2, 0) * s)
    assert not T(a0, a1, a2, v(1.01, 0, 0) * s, v(2, 0, 0) * s, v(2, 1, 0) * s)
    assert T(a0, a1, a2, v(0.1, 0.1, 0) * s, v(0.2, 0.1, 0) * s, v(0.1, 0.2, 0) * s)  # contained
    assert T(v(0.1, 0.1, 0) * s, v(0.2, 0.1, 0) * s, v(0.1, 0.2, 0) * s, a0, a1, a2)
    # coplanar in an oblique plane z = x (exactly representable)
    b = [v(0, 0, 0) * s, v(1, 0, 1) * s, v(0, 1, 0) * s]
    assert T(*b, v(0.25, 0.25, 0.25) * s, v(2, 0.25, 2) * s, v(0.25, 2, 0.25) * s)
    assert not T(*b, v(0.6, 0.6, 0.6) * s, v(2, 1, 2) * s, v(1, 2, 1) * s)
    # non-coplanar: piercing, vertex on face, edge-edge crossing, parallel planes
    assert T(a0, a1, a2, v(0.2, 0.2, -1) * s, v(0.2, 0.2, 1) * s, v(0.3, 0.3, 1) * s)
    assert T(a0, a1, a2, v(0.2, 0.2, 0) * s, v(0.2, 0.2, 1) * s, v(0.4, 0.3, 1) * s)
    assert not T(a0, a1, a2, v(0.2, 0.2, 1e-3) * s, v(0.2, 0.2, 1) * s, v(0.4, 0.3, 1) * s)
    assert T(a0, a1, a2, v(0.5, -1, 0) * s, v(0.5, 1, 0) * s, v(0.5, 0, 1) * s)  # edge crossing
    assert not T(a0, a1, a2, v(0.3, 0.3, 1e-3) * s, v(2, 0.3, 1e-3) * s, v(0.3, 2, 1e-3) * s)
    # zero-area triangles: collinear (segment) and point
    seg = (v(0.2, 0.2, -1) * s, v(0.2, 0.2, 1) * s, v(0.2, 0.2, 0.5) * s)
    assert T(a0, a1, a2, *seg)
    assert T(*seg, a0, a1, a2)
    seg_off = (v(1, 1, -1) * s, v(1, 1, 1) * s, v(1, 1, 0.5) * s)
    assert not T(a0, a1, a2, *seg_off)
    pt = (v(0.3, 0.3, 0) * s,) * 3
    assert T(a0, a1, a2, *pt)
    assert not T(a0, a1, a2, *(v(0.3, 0.3, 1e-3) * s,) * 3)
    assert T(*pt, *pt)
    assert not T(*pt, *(v(0.3, 0.3, 1e-3) * s,) * 3)
    # two collinear-degenerate triangles: parallel separated segments, crossing segments
    s1 = (v(0, 0, 0) * s, v(1, 0, 0) * s, v(0.5, 0, 0) * s)
    assert not T(*s1, v(0, 1e-3, 0) * s, v(1, 1e-3, 0) * s, v(0.5, 1e-3, 0) * s)
    assert not T(*s1, v(1.01, 0, 0) * s, v(2, 0, 0) * s, v(1.5, 0, 0) * s)
    assert T(*s1, v(1, 0, 0) * s, v(2, 0, 0) * s, v(1.5, 0, 0) * s)
    assert T(*s1, v(0.5, -1, 0) * s, v(0.5, 1, 0) * s, v(0.5, 0.5, 0) * s)
    assert T(*s1, v(0.3, -1, 0) * s, v(0.3, 1, 0) * s, v(0.3, 0.5, 0) * s)  # inexact crossing
    assert T(a0, a1, a2, v(0.5, 0.5, 0) * s, v(2, 2, 0) * s, v(1, 1, 0) * s)  # segment touching edge
    # offset far from the origin
    off = v(1e3, -2e3, 5e2) * s
    assert T(a0 + off, a1 + off, a2 + off, v(1, 0, 0) * s + off, v(2, 0, 0) * s + off, v(2, 1, 0) * s + off)


# ------------------------------------------------------------------------ SAT


def box_poly(c, A, h):
    V = f64(N.box_corners(c, A, h))
    return V, f64(A.T.copy()), f64(A.T.copy())


def tri_poly(T):
    T = f64(T)
    E = f64(np.array([T[1] - T[0], T[2] - T[1], T[0] - T[2]]))
    n = np.cross(E[0], -E[2])
    return T, E, S.sat_axes_flat(T, f64(n / np.linalg.norm(n)))


def seg_poly(a, b, other_normal=None):
    V = f64(np.array([a, b]))
    E = f64((b - a)[None])
    if other_normal is None:
        return V, E, np.zeros((0, 3))
    return V, E, f64(np.cross(other_normal, b - a)[None])


def tetra_poly(P):
    P = f64(P)
    hull = N.ConvexHull(P)
    normals = f64(hull.equations[:, :3])
    E = f64(np.array([P[j] - P[i] for i in range(4) for j in range(i + 1, 4)]))
    return P, E, normals


def _sat_pair(rng, kind):
    def box():
        return box_poly(f64(rng.uniform(-0.6, 0.6, 3)), rot(rng), f64(rng.uniform(0.1, 0.6, 3)))

    def tri():
        c = rng.uniform(-0.5, 0.5, 3)
        return tri_poly(c + rng.uniform(-0.9, 0.9, (3, 3)))

    if kind == "box-box":
        return box(), box()
    if kind == "box-tri":
        return box(), tri()
    if kind == "tri-tri":
        return tri(), tri()
    if kind == "tri-tri-coplanar":
        R = rot(rng)
        z = rng.uniform(-1, 1)
        P = [np.c_[rng.uniform(-1, 1, (3, 2)), np.full(3, z)] @ R.T for _ in range(2)]
        return tri_poly(P[0]), tri_poly(P[1])
    if kind == "seg-box":
        a = rng.uniform(-0.5, 0.5, 3)
        return seg_poly(a, a + rng.uniform(-1.5, 1.5, 3)), box()
    if kind == "seg-tri":
        t = tri()
        n = t[2][0]
        w = rng.dirichlet(np.ones(3))
        x = w @ t[0] + rng.uniform(-0.1, 0.1, 3)  # near a random point of the triangle
        d = rng.uniform(-1, 1, 3)
        u = rng.uniform(-0.3, 1.3)
        return seg_poly(x - u * d, x + (1 - u) * d, n), t
    if kind == "tetra-box":
        c = rng.uniform(-0.8, 0.8, 3)
        return tetra_poly(c + rng.uniform(-0.7, 0.7, (4, 3))), box()
    raise ValueError(kind)


SAT_KINDS = ["box-box", "box-tri", "tri-tri", "tri-tri-coplanar", "seg-box", "seg-tri", "tetra-box"]


def _unit_sphere_dirs(n, rng):
    d = rng.normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1)[:, None]


@pytest.mark.parametrize("kind", SAT_KINDS)
def test_sat_convex_vs_reference(kind):
    """Checks per case:
    1. sign: separation > 0 iff the LP says the hulls are disjoint (near-zero cases skipped);
    2. consistency: the returned axis is unit, oriented A -> B, and the gap along it
       (recomputed in numpy) equals `separation`, so separation <= sup_L gap(L);
    3. completeness when overlapping: separation >= max gap over 20000 random directions
       (a lower bound of the true sup) and, when the Minkowski difference is full-dimensional,
       separation == its max facet offset (the exact -MTD) within 1e-9.
    """
    rng = np.random.default_rng(sum(map(ord, kind)))
    dirs = _unit_sphere_dirs(20000, rng)
    hits = used = 0
    ncase = 60
    for i in range(ncase):
        (Va, Ea, Na), (Vb, Eb, Nb) = _sat_pair(rng, kind)
        sep, axis = S.sat_convex(Va, Ea, Na, Vb, Eb, Nb)
        assert abs(np.linalg.norm(axis) - 1) < 1e-12
        g = N.gap_along(Va, Vb, axis)[0]
        assert abs(g - sep) <= 1e-12 * (1 + abs(sep))
        pa, pb = Va @ axis, Vb @ axis
        assert (pb.min() + pb.max()) >= (pa.min() + pa.max()) - 1e-12
        inter = N.hulls_intersect_lp(Va, Vb)
        if abs(sep) > 1e-9:
            assert (sep > 0) == (not inter), (kind, i, sep)
        if not inter:
            continue
        used += 1
        hits += 1
        sampled = N.gap_along(Va, Vb, dirs).max()
        assert sep >= sampled - 1e-9, (kind, i, sep, sampled)
        fn = N.minkowski_facet_normals(Va, Vb)
        if fn is not None:
            assert abs(sep - fn[1].max()) <= 1e-9, (kind, i, sep, fn[1].max())
    assert 0.2 * ncase <= hits <= 0.8 * ncase or kind == "tri-tri-coplanar", hits


@pytest.mark.parametrize("kind", SAT_KINDS)
def test_sat_convex_separated_is_the_sign_of_sat_convex(kind):
    """The early-exit boolean (sat_convex_separated) answers ``sat_convex(...)[0] > 0`` exactly,
    on random pairs and on the same pairs moved to touch along the returned axis (the gap 0
    exactly or within a rounding: the sign must still match bit for bit)."""
    rng = np.random.default_rng(sum(map(ord, kind)) + 7)
    separated = 0
    for _ in range(80):
        (Va, Ea, Na), (Vb, Eb, Nb) = _sat_pair(rng, kind)
        sep, axis = S.sat_convex(Va, Ea, Na, Vb, Eb, Nb)
        assert S.sat_convex_separated(Va, Ea, Na, Vb, Eb, Nb) == (sep > 0.0)
        separated += sep > 0.0
        touching = f64(Vb - sep * axis)  # B moved along the axis until the gap is (about) 0
        sep_t, _ = S.sat_convex(Va, Ea, Na, touching, Eb, Nb)
        assert S.sat_convex_separated(Va, Ea, Na, touching, Eb, Nb) == (sep_t > 0.0)
    assert 0 < separated < 80 or kind == "tri-tri-coplanar"


def test_sat_hand_cases():
    # box-box, face touching and overlapping by 0.25 along x
    A = box_poly(Z, E3, v(0.5, 0.5, 0.5))
    sep, ax = S.sat_convex(*A, *box_poly(v(1, 0, 0), E3, v(0.5, 0.5, 0.5)))
    assert sep == 0.0 and np.allclose(ax, [1, 0, 0])
    sep, ax = S.sat_convex(*A, *box_poly(v(-0.75, 0.1, 0), E3, v(0.5, 0.5, 0.5)))
    assert abs(sep + 0.25) < 1e-15 and np.allclose(ax, [-1, 0, 0])
    # coplanar triangles: shared edge -> touching (0), disjoint -> > 0
    t1 = tri_poly([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    sep, _ = S.sat_convex(*t1, *tri_poly([[1, 0, 0], [0, 1, 0], [1, 1, 0]]))
    assert sep == 0.0
    sep, ax = S.sat_convex(*t1, *tri_poly([[1.5, 0, 0], [2, 0, 0], [1.5, 1, 0]]))
    assert abs(sep - 0.5) < 1e-15 and np.allclose(ax, [1, 0, 0])
    # segment crossing a triangle -> overlap 0 (flat Minkowski difference); segment above
    n = t1[2][0]
    sep, _ = S.sat_convex(*seg_poly(v(0.2, 0.2, -1), v(0.2, 0.2, 1), n), *t1)
    assert sep <= 0
    sep, ax = S.sat_convex(*seg_poly(v(0.2, 0.2, 0.5), v(0.3, 0.2, 1), n), *t1)
    assert abs(sep - 0.5) < 1e-15 and np.allclose(ax, [0, 0, -1])
    # coplanar segment beside the triangle: needs the n x d axis passed by the caller
    sep, ax = S.sat_convex(*seg_poly(v(1, 1, 0), v(0, 2, 0), n), *t1)
    assert abs(sep - np.sqrt(0.5)) < 1e-12
    # sat_axes_flat shape
    assert S.sat_axes_flat(t1[0], f64(n)).shape == (4, 3)


# ------------------------------------------------------------------------ scales 1e-6, 1e6

# indices of the length-like arguments of each kernel (scaled); the others are directions,
# rotations or dimensionless (OBB epsilon)
SCALED_ARGS = {
    "aabb_aabb": (0, 1, 2, 3), "sphere_sphere": (0, 1, 2, 3), "obb_obb": (0, 2, 3, 5),
    "sphere_capsule": (0, 1, 2, 3, 4), "capsule_capsule": (0, 1, 2, 3, 4, 5),
    "lozenge_lozenge": (0, 3, 4, 5, 6, 9, 10, 11),
    "sphere_plane": (0, 1, 3), "sphere_halfspace": (0, 1, 3), "sphere_inside_halfspace": (0, 1, 3),
    "obb_plane": (0, 2, 4), "obb_halfspace": (0, 2, 4), "aabb_plane": (0, 1, 3),
    "cone_plane": (0, 2, 3, 5), "cone_halfspace": (0, 2, 3, 5),
    "sphere_aabb": (0, 1, 2, 3), "sphere_obb": (0, 1, 2, 4), "sphere_triangle": (0, 1, 2, 3, 4),
    "sphere_polygon": (0, 1, 2), "triangle_aabb": (0, 1, 2, 3, 4), "triangle_obb": (0, 1, 2, 3, 5),
    "triangle_triangle": (0, 1, 2, 3, 4, 5), "triangle_triangle_coplanar": (0, 1, 2, 3, 4, 5),
}


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_random_scaled(scale):
    for name, gen, kernel, margin in RANDOM_CASES:
        idx = SCALED_ARGS[name]

        def sgen(rng, gen=gen, idx=idx):
            args, ref = gen(rng)
            args = tuple(f64(a * scale) if (i in idx and isinstance(a, np.ndarray))
                         else (a * scale if i in idx else a) for i, a in enumerate(args))
            return args, ref * scale

        run_random(sgen, kernel, seed=sum(map(ord, name)) + 1, margin=margin * scale, n=100)


# ------------------------------------------------------------------------ one home per primitive


def _edge_case_triangles(rng, n):
    """Triangle pairs on purpose at the edge cases: shared vertex (touching), coplanar, zero-area
    (segment / point) triangles, and plain random ones; scales 1e-6 .. 1e6."""
    ta = rng.normal(size=(n, 3, 3))
    tb = ta.mean(axis=1, keepdims=True) + rng.normal(size=(n, 3, 3)) * 0.7 + rng.normal(size=(n, 1, 3)) * 0.6
    kind = np.arange(n) % 5
    tb[kind == 0, 0] = ta[kind == 0, 1]                        # touching at a shared vertex
    ta[kind == 1, :, 2] = 0.25                                  # coplanar (exact plane z = 0.25)
    tb[kind == 1, :, 2] = 0.25
    ta[kind == 2, 2] = 0.5 * (ta[kind == 2, 0] + ta[kind == 2, 1])  # zero-area: segments
    tb[kind == 3] = tb[kind == 3, :1]                           # zero-area: points
    scale = 10.0 ** rng.integers(-6, 7, size=(n, 1, 1))
    return np.ascontiguousarray(ta * scale), np.ascontiguousarray(tb * scale), kind, scale.ravel()


def test_triangle_triangle_one_home_edge_cases():
    """overlap.test_triangle_triangle and sat_fast's batch driver answer through the one home
    (overlap.triangles_overlap): identical answers, right against the naive SAT / LP away from
    the touching band, and every shared-vertex pair reported as overlapping."""
    from naive import sat_fast as NS
    from touche._kernels import sat_fast

    ta, tb, kind, scale = _edge_case_triangles(np.random.default_rng(1717), 2000)
    single = np.array([K.test_triangle_triangle(*ta[k], *tb[k]) for k in range(len(ta))])
    batch = np.empty(len(ta), dtype=np.bool_)
    sat_fast.triangle_triangle_overlap_many(ta, tb, batch, 0, len(ta))
    np.testing.assert_array_equal(single, batch)
    assert single[kind == 0].all()
    gap = NS.triangle_triangle_gap(ta, tb)
    clear = np.abs(gap) > 1e-9 * scale
    for k in range(5):
        assert (clear & (kind == k)).sum() > 50, k
    np.testing.assert_array_equal(single[clear], gap[clear] <= 0)
    assert 0.2 < single[kind != 0].mean() < 0.8
    for k in np.flatnonzero(clear)[::40]:
        assert single[k] == NS.lp_overlap(ta[k], tb[k]), k


def test_obb_obb_one_home_agrees():
    """overlap.test_obb_obb (column axes), sat_fast.obb_obb_overlap (row axes, batch) and the
    box-box fast path all run overlap.obb_obb_overlap_relative: identical answers, touching boxes
    overlap."""
    from touche import tolerance
    from touche._kernels import sat_fast

    rng = np.random.default_rng(1718)
    n = 3000
    c = rng.uniform(-2, 2, (2, n, 3))
    cols = np.stack([[N.random_rotation(rng) for _ in range(n)] for _ in range(2)])
    cols[:, : n // 4] = np.round(cols[:, : n // 4])  # some axis-aligned (or face-swapped) pairs ...
    cols[:, : n // 4] = np.eye(3)
    h = rng.uniform(0.1, 1.5, (2, n, 3))
    c[1, : n // 8] = c[0, : n // 8] + h[0, : n // 8] + h[1, : n // 8]  # ... touching at a corner
    rows = np.ascontiguousarray(cols.transpose(0, 1, 3, 2))
    cols = np.ascontiguousarray(cols)
    eps = tolerance.OBB_EPSILON
    single = np.array([K.test_obb_obb(c[0, k], cols[0, k], h[0, k], c[1, k], cols[1, k], h[1, k], eps)
                       for k in range(n)])
    batch = np.empty(n, dtype=np.bool_)
    sat_fast.obb_obb_overlap_many(c[0], rows[0], h[0], c[1], rows[1], h[1], batch, 0, n)
    np.testing.assert_array_equal(single, batch)
    assert single[: n // 8].all()
    assert 0.2 < single.mean() < 0.8
