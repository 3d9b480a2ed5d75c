"""Ray / line / segment intersection kernels (Ericson 5.3).

Uniform ray contract (every ``ray_<shape>``)::

    ray_<shape>(o, d, t_max, <shape params>, solid) -> (hit: bool, t: float, normal: (3,) float64)

* ``o`` origin, ``d`` direction of UNIT length (the caller normalises), ``t_max >= 0``
  (may be ``np.inf``); ``t`` is therefore a distance.
* ``hit`` iff the ray meets the shape at some ``t`` in the CLOSED range ``[0, t_max]``;
  ``t`` is the first such value.  A cut-off exactly at the surface counts as a hit
  (the computed ``t`` is compared with ``t <= t_max``).
* ``normal``: unit outward surface normal at the hit.  For two-sided flat things (plane,
  triangle, convex polygon) it is the normal facing the ray origin side, i.e. opposite
  to ``d``.
* Solids are closed sets.  The line meets a convex solid in an interval ``[t_in, t_out]``.
  If the origin lies in the closed solid (``t_in <= 0 <= t_out``, boundary included):
  ``solid=True`` -> ``(True, 0.0, zeros(3))``; ``solid=False`` -> the exit point ``t_out``
  (end of the chord containing the origin) with the outward normal there.  So an origin
  on the surface moving outward gives ``t = 0``; moving inward gives the far side.
* No hit: ``(False, np.inf, zeros(3))``.

Every kernel is allocation-light, never divides by a quantity that can be zero without a
guarded branch, and never adds an epsilon to a denominator.

Here: the shared helpers, planes, half-spaces, spheres, ellipsoids and boxes; ray_polytopes.py
holds triangles, polygons and convex polyhedra, ray_round.py cylinders, capsules and cones.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import dot as _dot  # noqa: E402


INF = np.inf


# --------------------------------------------------------------------------- helpers


@njit(cache=True, nogil=True)
def triple_product(a, b, c):
    """Scalar triple product [a b c] = a . (b x c)."""
    return (a[0] * (b[1] * c[2] - b[2] * c[1])
            + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


@njit(cache=True, nogil=True, inline="always")
def _scaled(v):
    """(ok, m, v / m, |v / m|) with m = max |v_i|: dividing by m first keeps the squares clear of
    under/overflow. ok False (and m alone meaningful) for a zero or non-finite v."""
    m = max(abs(v[0]), max(abs(v[1]), abs(v[2])))
    if not (m > 0.0) or m == INF:
        return False, m, 0.0, 0.0, 0.0, 0.0
    x0 = v[0] / m
    x1 = v[1] / m
    x2 = v[2] / m
    return True, m, x0, x1, x2, np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


@njit(cache=True, nogil=True)
def safe_unit(v):
    """v / |v|, scaled first against under/overflow; zeros(3) for a zero (or non-finite) v."""
    out = np.zeros(3)
    ok, m, x0, x1, x2, n = _scaled(v)
    if ok:
        out[0] = x0 / n
        out[1] = x1 / n
        out[2] = x2 / n
    return out


@njit(cache=True, nogil=True)
def safe_norm(v):
    ok, m, x0, x1, x2, n = _scaled(v)
    return m * n if ok else m


@njit(cache=True, nogil=True)
def choose_hit(t_in, t_out, t_max, solid):
    """Decide the answer from the chord [t_in, t_out] of the line inside a closed convex solid.

    Returns (code, t): code 0 = miss, 1 = origin inside & solid, 2 = entry hit at t,
    3 = exit hit at t (origin inside, solid=False)."""
    if not (t_in <= t_out):
        return 0, INF
    if t_out < 0.0:
        return 0, INF
    if t_in <= 0.0:
        if solid:
            return 1, 0.0
        if t_out <= t_max and t_out < INF:
            return 3, t_out + 0.0
        return 0, INF
    if t_in <= t_max:
        return 2, t_in
    return 0, INF


@njit(cache=True, nogil=True, inline="always")
def chord_hit(ok, t_in, f_in, t_out, f_out, t_max, solid):
    """choose_hit on a chord with its faces (``ok`` False: no chord): (code, t, face hit)."""
    if not ok:
        return 0, INF, f_in
    code, t = choose_hit(t_in, t_out, t_max, solid)
    return code, t, (f_in if code == 2 else f_out)


@njit(cache=True, nogil=True, inline="always")
def clip_chord(t_in, f_in, t_out, f_out, t1, f1, t2, f2):
    """The chord [t_in, t_out] (faces f_in, f_out) cut to [t1, t2] (faces f1, f2): a bound that
    tightens an end takes its face along."""
    if t1 > t_in:
        t_in = t1
        f_in = f1
    if t2 < t_out:
        t_out = t2
        f_out = f2
    return t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True, inline="always")
def no_hit(code):
    """The answer of a ray that misses (choose_hit code 0) or starts inside a solid (code 1)."""
    if code == 1:
        return True, 0.0, np.zeros(3)
    return False, INF, np.zeros(3)


@njit(cache=True, nogil=True)
def quadratic_roots(A, B, C):
    """Real roots r1 <= r2 of A t^2 + 2 B t + C (A != 0), numerically stable form.
    Returns (ok, r1, r2); ok False when the discriminant is negative."""
    disc = B * B - A * C
    if disc < 0.0:
        return False, 0.0, 0.0
    s = np.sqrt(disc)
    if B >= 0.0:
        q = -(B + s)
    else:
        q = -(B - s)
    if q == 0.0:
        # B == 0 and disc == 0 -> A*C == 0 -> C == 0: double root at 0
        return True, 0.0, 0.0
    x1 = q / A
    x2 = C / q
    if x1 <= x2:
        return True, x1, x2
    return True, x2, x1


# --------------------------------------------------------------------------- plane family


@njit(cache=True, nogil=True)
def segment_plane(a, b, n, dp):
    """Ericson 5.3.1: segment ab against plane n.x = dp -> (hit, t, q), q = a + t (b - a).

    Steps: t = (dp - n.a) / n.(b - a); hit iff 0 <= t <= 1.
    Parallel segment (n.(b-a) == 0, includes a == b): hit iff a lies on the plane, then
    (True, 0.0, a) (the whole segment lies in the plane).  No hit: (False, inf, zeros)."""
    ab0 = b[0] - a[0]
    ab1 = b[1] - a[1]
    ab2 = b[2] - a[2]
    denom = n[0] * ab0 + n[1] * ab1 + n[2] * ab2
    num = dp - _dot(n, a)
    q = np.zeros(3)
    if denom == 0.0:
        if num == 0.0:
            q[0] = a[0]
            q[1] = a[1]
            q[2] = a[2]
            return True, 0.0, q
        return False, INF, q
    t = num / denom
    if t >= 0.0 and t <= 1.0:
        t = t + 0.0  # no -0.0
        q[0] = a[0] + t * ab0
        q[1] = a[1] + t * ab1
        q[2] = a[2] + t * ab2
        return True, t, q
    return False, INF, q


@njit(cache=True, nogil=True)
def ray_plane(o, d, t_max, n, dp, solid):
    """Ray against the two-sided plane n.x = dp (Ericson 5.3.1 with a ray); solid ignored.

    Normal = n if n.d < 0 else -n (faces the origin side).  A ray lying in the plane hits at
    t = 0 (normal -n, since n.d == 0)."""
    denom = _dot(n, d)
    dist = _dot(n, o) - dp
    nrm = np.zeros(3)
    if denom == 0.0:
        if dist == 0.0:
            for i in range(3):
                nrm[i] = -n[i]
            return True, 0.0, nrm
        return False, INF, nrm
    t = -dist / denom
    if t >= 0.0 and t <= t_max:
        s = 1.0 if denom < 0.0 else -1.0
        for i in range(3):
            nrm[i] = s * n[i]
        return True, t + 0.0, nrm
    return False, INF, nrm


@njit(cache=True, nogil=True)
def ray_halfspace(o, d, t_max, n, dp, solid):
    """Ray against the closed halfspace n.x <= dp.  Outward normal is always n.
    Steps: chord of the line = [t, inf) when entering (n.d < 0), (-inf, t] when exiting,
    everything / nothing when parallel; then the uniform decision (see module doc)."""
    denom = _dot(n, d)
    dist = _dot(n, o) - dp
    t_in = -INF
    t_out = INF
    if denom == 0.0:
        if dist > 0.0:
            return False, INF, np.zeros(3)
    else:
        t = -dist / denom
        if denom < 0.0:
            t_in = t
        else:
            t_out = t
    code, t = choose_hit(t_in, t_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    nrm = np.empty(3)
    for i in range(3):
        nrm[i] = n[i]
    return True, t, nrm


# --------------------------------------------------------------------------- sphere


@njit(cache=True, nogil=True)
def sphere_interval(o, d, c, r):
    """Chord [t1, t2] of the line o + t d (unit d) inside the closed ball (c, r).

    Ericson 5.3.2, reformulated for stability: work relative to the closest approach
    pc = m - (m.d) d (m = o - c), h^2 = r^2 - |pc|^2 = (r-|pc|)(r+|pc|), roots -b -/+ h;
    the root with cancellation is recovered from the product t1 t2 = |m|^2 - r^2.
    Returns (ok, t1, t2, h, pc)."""
    m = np.empty(3)
    for i in range(3):
        m[i] = o[i] - c[i]
    b = _dot(m, d)
    pc = np.empty(3)
    for i in range(3):
        pc[i] = m[i] - b * d[i]
    lm = safe_norm(m)
    cc = (lm - r) * (lm + r)  # |m|^2 - r^2, sign decides inside/outside
    pcl = safe_norm(pc)
    h2 = (r - pcl) * (r + pcl)
    if h2 < 0.0:
        if cc > 0.0:
            return False, INF, -INF, 0.0, pc
        h2 = 0.0  # origin in the closed ball: rounding only
    h = np.sqrt(h2)
    if b > 0.0:
        t1 = -b - h
        t2 = cc / t1  # t1 < 0 here
    elif b < 0.0:
        t2 = -b + h
        t1 = cc / t2  # t2 > 0 here
    else:
        t1 = -h
        t2 = h
    if t1 > t2:  # rounding at tangency
        tm = 0.5 * (t1 + t2)
        t1 = tm
        t2 = tm
    return True, t1, t2, h, pc


@njit(cache=True, nogil=True, inline="always")
def unit_or_reversed(v, d):
    """A hit normal: ``safe_unit(v)``, or ``-d`` when ``v`` is zero (a zero-radius shape)."""
    nrm = safe_unit(v)
    if nrm[0] == 0.0 and nrm[1] == 0.0 and nrm[2] == 0.0:
        for i in range(3):
            nrm[i] = -d[i]
    return nrm


@njit(cache=True, nogil=True)
def ray_sphere(o, d, t_max, c, r, solid):
    """Ericson 5.3.2 ray vs closed sphere (stable variant, see sphere_interval).
    Normal at the hit point x: (x - c)/|x - c| evaluated as pc -/+ h d (no far-origin
    cancellation); a zero-radius sphere hit returns -d as its normal."""
    ok, t1, t2, h, pc = sphere_interval(o, d, c, r)
    code, t = choose_hit(t1, t2, t_max, solid) if ok else (0, INF)
    if code < 2:
        return no_hit(code)
    s = -h if code == 2 else h
    v = np.empty(3)
    for i in range(3):
        v[i] = pc[i] + s * d[i]
    return True, t, unit_or_reversed(v, d)


@njit(cache=True, nogil=True)
def ray_ellipsoid(o, d, t_max, points, solid):
    """Ray vs the solid ellipsoid ``points[0] + sum_i u_i points[i]``, |u| <= 1 (rows 1..3 are the
    orthogonal semi-axis vectors). The ray maps to u-space (a unit ball) where the stable sphere
    chord applies; ray parameters are the same in both spaces once the mapped direction is
    normalised (s = t * |d_u|). Normal: the gradient sum_i points[i] u_i / |points[i]|^2."""
    o_u = np.empty(3)
    d_u = np.empty(3)
    for i in range(3):
        axis = points[i + 1]
        squared = _dot(axis, axis)
        o_u[i] = (axis[0] * (o[0] - points[0, 0]) + axis[1] * (o[1] - points[0, 1]) + axis[2] * (o[2] - points[0, 2])) / squared
        d_u[i] = _dot(axis, d) / squared
    length = safe_norm(d_u)
    for i in range(3):
        d_u[i] /= length
    ok, s1, s2, _, _ = sphere_interval(o_u, d_u, np.zeros(3), 1.0)
    code, t = choose_hit(s1 / length, s2 / length, t_max, solid) if ok else (0, INF)
    if code < 2:
        return no_hit(code)
    gradient = np.zeros(3)
    for i in range(3):
        axis = points[i + 1]
        u_i = o_u[i] + (t * length) * d_u[i]
        gradient += (u_i / _dot(axis, axis)) * axis
    return True, t, safe_unit(gradient)


# --------------------------------------------------------------------------- boxes


@njit(cache=True, nogil=True)
def _slabs(o, d, mn, mx):
    """Ericson 5.3.3 slab test over the whole line. Returns (ok, t_in, f_in, t_out, f_out);
    face code f = 2*axis + (0 for the min face, 1 for the max face).
    A zero direction component is handled without division (inside the slab: no constraint;
    outside: miss).  Uses (mn - o)/d, never (mn - o)*(1/d), so no 0*inf = NaN."""
    t_in = -INF
    t_out = INF
    f_in = -1
    f_out = -1
    for i in range(3):
        if d[i] == 0.0:
            if o[i] < mn[i] or o[i] > mx[i]:
                return False, INF, -1, -INF, -1
        else:
            t1 = (mn[i] - o[i]) / d[i]
            t2 = (mx[i] - o[i]) / d[i]
            f1 = 2 * i
            f2 = 2 * i + 1
            if t1 > t2:
                tmp = t1
                t1 = t2
                t2 = tmp
                f1 = 2 * i + 1
                f2 = 2 * i
            # erratum E L8407: the book prints `t2 > tmax` for the exit test `t2 < t_out`
            t_in, f_in, t_out, f_out = clip_chord(t_in, f_in, t_out, f_out, t1, f1, t2, f2)
            if t_in > t_out:
                return False, INF, -1, -INF, -1
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_aabb(o, d, t_max, mn, mx, solid):
    """Ericson 5.3.3 ray vs closed AABB: slab chord then the uniform decision.
    Normal: -e_i for the min face of axis i, +e_i for the max face."""
    ok, t_in, f_in, t_out, f_out = _slabs(o, d, mn, mx)
    code, t, f = chord_hit(ok, t_in, f_in, t_out, f_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    nrm = np.zeros(3)
    nrm[f // 2] = 1.0 if (f % 2) == 1 else -1.0
    return True, t, nrm


@njit(cache=True, nogil=True)
def ray_obb(o, d, t_max, c, axes, half, solid):
    """Ray vs closed OBB: express o, d in box space (axes columns are the unit axes),
    run the slab test against [-half, half], rotate the face normal back."""
    lo = np.empty(3)
    ld = np.empty(3)
    mn = np.empty(3)
    for j in range(3):
        so = 0.0
        sd = 0.0
        for i in range(3):
            so += axes[i, j] * (o[i] - c[i])
            sd += axes[i, j] * d[i]
        lo[j] = so
        ld[j] = sd
        mn[j] = -half[j]
    ok, t_in, f_in, t_out, f_out = _slabs(lo, ld, mn, half)
    code, t, f = chord_hit(ok, t_in, f_in, t_out, f_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    s = 1.0 if (f % 2) == 1 else -1.0
    j = f // 2
    v = np.empty(3)
    for i in range(3):
        v[i] = s * axes[i, j]
    return True, t, safe_unit(v)
