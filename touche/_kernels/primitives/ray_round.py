"""Rays against round solids: solid capped cylinders (Ericson 5.3.7), capsules and cones, each
through the chord of the line inside the solid. The uniform ray
contract and the shared helpers (chord decision, stable quadratic roots, sphere chord) live in
ray.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.primitives.ray import INF, choose_hit, quadratic_roots, safe_norm, safe_unit, sphere_interval
from touche._kernels.primitives.ray import chord_hit, clip_chord, no_hit, unit_or_reversed


# --------------------------------------------------------------------------- cylinder / capsule / cone


@njit(cache=True, nogil=True)
def _far_shift(o, d, c, rb):
    """For an origin far from a shape (|o - c| > 4 rb, c/rb a bounding sphere) move it to
    the point of the line closest to c, so that quadratics are solved at the shape's scale
    (no catastrophic cancellation in B^2 - A C). Returns (o', t0) with o' = o + t0 d;
    callers add t0 back. Near origins are left untouched (t0 = 0) so that origin-on-surface
    answers stay exact."""
    mc0 = o[0] - c[0]
    mc1 = o[1] - c[1]
    mc2 = o[2] - c[2]
    o2 = np.empty(3)
    if mc0 * mc0 + mc1 * mc1 + mc2 * mc2 <= 16.0 * rb * rb:
        for i in range(3):
            o2[i] = o[i]
        return o2, 0.0
    t0 = -(mc0 * d[0] + mc1 * d[1] + mc2 * d[2])
    for i in range(3):
        o2[i] = o[i] + t0 * d[i]
    return o2, t0


@njit(cache=True, nogil=True)
def _cyl_interval(o, d, p0, p1, r):
    """_cyl_interval_core after the far-origin shift (see _far_shift)."""
    c = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        c[i] = 0.5 * (p0[i] + p1[i])
        w[i] = 0.5 * (p1[i] - p0[i])
    hh = safe_norm(w)
    o2, t0 = _far_shift(o, d, c, np.sqrt(hh * hh + r * r))
    ok, t_in, f_in, t_out, f_out = _cyl_interval_core(o2, d, p0, p1, r)
    return ok, t_in + t0, f_in, t_out + t0, f_out


@njit(cache=True, nogil=True, inline="always")
def _axial_split(o, d, p, q):
    """The line o + t d in the frame of the axis p -> q (length H, unit direction a): the axial
    parts ma = (o - p).a, da = d.a, the radial parts mp = (o - p) - ma a, dp = d - da a, and the
    chord [t_in, t_out] of the line in the slab 0 <= (x - p).a <= H, with faces 1 (the plane
    through p) and 2 (through q). Returns (ok, H, ma, da, mp, dp, t_in, f_in, t_out, f_out);
    ok False for p == q or a line parallel to the slab and outside it. A line across the slab
    (da == 0) has the chord (-inf, inf): a face at an infinite end is never reported.
    Inline: called, returning its two arrays made ray_cylinder / ray_cone 6-9 % slower."""
    w = np.empty(3)
    for i in range(3):
        w[i] = q[i] - p[i]
    H = safe_norm(w)
    if not (H > 0.0):
        return False, H, 0.0, 0.0, w, w, INF, 0, -INF, 0
    ax = np.empty(3)
    m = np.empty(3)
    for i in range(3):
        ax[i] = w[i] / H
        m[i] = o[i] - p[i]
    ma = _dot(m, ax)
    da = _dot(d, ax)
    t_in = -INF
    t_out = INF
    f_in = 1
    f_out = 2
    if da == 0.0:
        if ma < 0.0 or ma > H:
            return False, H, ma, da, w, w, INF, 0, -INF, 0
    else:
        t1 = -ma / da
        t2 = (H - ma) / da
        if da > 0.0:
            t_in = t1
            t_out = t2
        else:
            t_in = t2
            f_in = 2
            t_out = t1
            f_out = 1
    mp = np.empty(3)
    dp = np.empty(3)
    for i in range(3):
        mp[i] = m[i] - ma * ax[i]
        dp[i] = d[i] - da * ax[i]
    return True, H, ma, da, mp, dp, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def _cyl_interval_core(o, d, p0, p1, r):
    """Chord of the line inside the closed capped cylinder (p0, p1, r).
    Own formulation of Ericson 5.3.7 as an intersection of two convex sets: axial slab
    0 <= (x-p0).a <= H and the infinite radial cylinder |x_perp| <= r (quadratic). Cap
    entries are kept (erratum E L9295: the listing rejects a root t < 0 even when the
    segment enters through an end cap). Face codes: 0 side, 1 cap at p0, 2 cap at p1.
    Returns (ok, t_in, f_in, t_out, f_out); ok False also for a degenerate axis p0 == p1."""
    ok, H, ma, da, mp, dp, t_in, f_in, t_out, f_out = _axial_split(o, d, p0, p1)
    if not ok:
        return False, INF, 0, -INF, 0
    A = _dot(dp, dp)
    lmp = safe_norm(mp)
    C = (lmp - r) * (lmp + r)
    if A == 0.0:
        if C > 0.0:
            return False, INF, 0, -INF, 0
    else:
        # radial circle |mp + t dp| <= r solved about the closest approach (as 5.3.2)
        tc = -_dot(mp, dp) / A
        pc = np.empty(3)
        for i in range(3):
            pc[i] = mp[i] + tc * dp[i]
        pcl = safe_norm(pc)
        h2 = (r - pcl) * (r + pcl)
        if h2 < 0.0:
            if C > 0.0:
                return False, INF, 0, -INF, 0
            h2 = 0.0
        sh = np.sqrt(h2 / A)
        if tc > 0.0:
            r2 = tc + sh
            r1 = (C / A) / r2
        elif tc < 0.0:
            r1 = tc - sh
            r2 = (C / A) / r1
        else:
            r1 = -sh
            r2 = sh
        if r1 > r2:
            tm = 0.5 * (r1 + r2)
            r1 = tm
            r2 = tm
        t_in, f_in, t_out, f_out = clip_chord(t_in, f_in, t_out, f_out, r1, 0, r2, 0)  # lateral: face 0
    if t_in > t_out:
        return False, INF, 0, -INF, 0
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_cylinder(o, d, t_max, p0, p1, r, solid):
    """Ray vs solid capped cylinder (Ericson 5.3.7, see _cyl_interval; end-cap erratum
    L9295 fixed). Normal: radial unit vector on the side, -axis on the p0 cap, +axis on
    the p1 cap. Degenerate axis (p0 == p1): the cylinder is treated as empty (no hit)."""
    ok, t_in, f_in, t_out, f_out = _cyl_interval(o, d, p0, p1, r)
    code, t, f = chord_hit(ok, t_in, f_in, t_out, f_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    w = np.empty(3)
    for i in range(3):
        w[i] = p1[i] - p0[i]
    ax = safe_unit(w)
    if f == 1:
        return True, t, -ax
    if f == 2:
        return True, t, ax
    x = np.empty(3)
    for i in range(3):
        x[i] = o[i] + t * d[i] - p0[i]
    h = _dot(x, ax)
    for i in range(3):
        x[i] -= h * ax[i]
    nrm = unit_or_reversed(x, d)  # -d: r == 0, measure-zero
    return True, t, nrm


@njit(cache=True, nogil=True)
def ray_capsule(o, d, t_max, a, b, r, solid):
    """Ray vs solid capsule = union of the capped cylinder (a, b, r) and balls at a and b.
    The line meets the (convex) capsule in one interval = union of the three part chords.
    Normal: (x - closest point on ab)/|.|. Degenerate a == b: the cylinder part is empty,
    so the capsule acts as a sphere."""
    ok1, s1, s2, h1, pc1 = sphere_interval(o, d, a, r)
    ok2, u1, u2, h2, pc2 = sphere_interval(o, d, b, r)
    ok3, c1, fi, c2, fo = _cyl_interval(o, d, a, b, r)
    t_in = INF
    t_out = -INF
    if ok1:
        t_in = min(t_in, s1)
        t_out = max(t_out, s2)
    if ok2:
        t_in = min(t_in, u1)
        t_out = max(t_out, u2)
    if ok3:
        t_in = min(t_in, c1)
        t_out = max(t_out, c2)
    if not (ok1 or ok2 or ok3):
        return False, INF, np.zeros(3)
    code, t = choose_hit(t_in, t_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    x = np.empty(3)
    ab = np.empty(3)
    for i in range(3):
        x[i] = o[i] + t * d[i]
        ab[i] = b[i] - a[i]
    abab = _dot(ab, ab)
    s = 0.0
    if abab > 0.0:
        s = ((x[0] - a[0]) * ab[0] + (x[1] - a[1]) * ab[1] + (x[2] - a[2]) * ab[2]) / abab
        s = min(1.0, max(0.0, s))
    v = np.empty(3)
    for i in range(3):
        v[i] = x[i] - (a[i] + s * ab[i])
    return True, t, unit_or_reversed(v, d)


@njit(cache=True, nogil=True)
def _cone_interval(o, d, apex, base_center, r):
    """Chord of the line in the solid cone (apex, base disc centre, base radius r).
    Steps: axis a = unit(base - apex), H = |base - apex|, k = r/H; axial slab 0 <= h <= H
    (h = (x-apex).a); lateral double cone |x_perp|^2 <= k^2 h^2 gives the quadratic
    A t^2 + 2 B t + C <= 0; inside the slab only the upper nappe remains, so the chord is
    the slab interval intersected with {Q <= 0} (A > 0: between the roots; A < 0: outside
    the roots, only one piece survives the slab; A == 0: linear).
    Face codes: 0 lateral, 1 apex plane, 2 base. Returns (ok, t_in, f_in, t_out, f_out)."""
    ok, H, ma, da, mp, dp, s0, f0, s1, f1 = _axial_split(o, d, apex, base_center)
    if not ok:
        return False, INF, 0, -INF, 0
    k = r / H
    k2 = k * k
    A = _dot(dp, dp) - k2 * da * da
    B = _dot(mp, dp) - k2 * ma * da
    lmp = safe_norm(mp)
    C = (lmp - k * ma) * (lmp + k * ma)
    t_in = s0
    f_in = f0
    t_out = s1
    f_out = f1
    if A > 0.0:
        ok, r1, r2 = quadratic_roots(A, B, C)
        if not ok:
            return False, INF, 0, -INF, 0
        t_in, f_in, t_out, f_out = clip_chord(t_in, f_in, t_out, f_out, r1, 0, r2, 0)  # lateral: face 0
    elif A < 0.0:
        ok, r1, r2 = quadratic_roots(A, B, C)
        if ok:
            # Q <= 0 on (-inf, r1] U [r2, inf); the slab keeps one piece (upper nappe)
            a0 = s0
            a1 = min(s1, r1)
            b0 = max(s0, r2)
            b1 = s1
            if a1 >= a0 and (b1 < b0 or (a1 - a0) >= (b1 - b0)):
                if r1 < t_out:
                    t_out = r1
                    f_out = 0
            else:
                if r2 > t_in:
                    t_in = r2
                    f_in = 0
    else:
        if B == 0.0:
            if C > 0.0:
                return False, INF, 0, -INF, 0
        else:
            t0 = -C / (2.0 * B)
            if B > 0.0:
                if t0 < t_out:
                    t_out = t0
                    f_out = 0
            else:
                if t0 > t_in:
                    t_in = t0
                    f_in = 0
    if not (t_in <= t_out):
        return False, INF, 0, -INF, 0
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_cone(o, d, t_max, apex, base_center, r, solid):
    """Ray vs solid cone (apex, base disc centre, base radius r); chord from _cone_interval
    (after the far-origin shift), then the uniform decision.
    Normal: base +a; lateral unit(H e_rho - r a); apex point -a.
    Degenerate apex == base_center: treated as empty (no hit)."""
    c = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        c[i] = 0.5 * (apex[i] + base_center[i])
        w[i] = base_center[i] - apex[i]
    H = safe_norm(w)
    if not (H > 0.0):
        return False, INF, np.zeros(3)
    o2, t0 = _far_shift(o, d, c, np.sqrt(0.25 * H * H + r * r))
    ok, t_in, f_in, t_out, f_out = _cone_interval(o2, d, apex, base_center, r)
    code, t, f = chord_hit(ok, t_in + t0, f_in, t_out + t0, f_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    ax = np.empty(3)
    m = np.empty(3)
    for i in range(3):
        ax[i] = w[i] / H
        m[i] = o[i] - apex[i]
    nrm = np.empty(3)
    if f == 2:
        for i in range(3):
            nrm[i] = ax[i]
        return True, t, nrm
    if f == 1:
        for i in range(3):
            nrm[i] = -ax[i]
        return True, t, nrm
    x = np.empty(3)
    for i in range(3):
        x[i] = m[i] + t * d[i]
    h = _dot(x, ax)
    for i in range(3):
        x[i] -= h * ax[i]
    e = safe_unit(x)
    if e[0] == 0.0 and e[1] == 0.0 and e[2] == 0.0:
        for i in range(3):
            nrm[i] = -ax[i]
        return True, t, nrm
    for i in range(3):
        nrm[i] = H * e[i] - r * ax[i]
    return True, t, safe_unit(nrm)
