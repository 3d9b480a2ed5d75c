"""Method of separating axes for translating convex polytopes in 3D: first / last time of
contact, the contact set at first contact and the intersection set of overlapping shapes.

Seeds: Eberly, "The Method of Separating Axes" (S0) sections 4-6 and 9 (moving objects, TFirst /
TLast per axis, contact sets); Ericson 5.2.1 (separating-axis test) and 5.5.2 (intersecting
moving convex objects). Shapes are polytopes of the packed layout of touche/shapes.py: triangle,
tetrahedron, box, convex polygon, convex polyhedron (a zero-area triangle acts as its segment or
point). Motion is translation with constant world velocities.

Everything runs in the frame of B (A is moved into it, like pairs.py) to keep round-off near B's
origin; results are mapped back to the world at the end.

Why the per-axis intervals are exact for translation: A(t) and B meet iff w t lies in the
Minkowski difference M = B - A (w = velocity of A relative to B). M is the intersection of the
half-spaces of its facets, and every facet normal of M is among the candidate axes (below), so
the set of contact times is the intersection of the per-axis time intervals (S0 section 5).

Candidate axes (facet normals of M):
  - the SAT face normals of both shapes (for a flat shape: its normal and in-plane side normals);
  - e_a x e_b for the unique edge directions, skipped when |e_a x e_b|^2 <= PARALLEL |e_a|^2
    |e_b|^2 (S0 erratum L511: these products CAN vanish; a skipped parallel pair spans no facet of
    M, so nothing is lost, and we never divide by them);
  - for a flat shape with normal n: n x e for every edge direction e of the OTHER shape (S0 errata:
    moving parallel triangles become coplanar at contact and then M is flat with in-plane facet
    normals n x E_i, n x F_j; the printed coplanar test with WhichSide rejects touching, so the
    comparisons here are closed, with a tolerance);
  - when both shapes are at most one-dimensional (zero-area triangles: segments / points) M is a
    parallelogram, a segment or a point: its normal and in-plane normals, or the segment direction
    and two perpendiculars, or the three coordinate axes.

Contact within ``tolerance``: two shapes are in contact at t when on every axis the gap between
the projected intervals is <= tolerance (distance units; axes are normalised). An axis whose gap
at t = 0 exceeds the tolerance enters at its exact closing time (gap / speed), so first-contact
times are exact, not early by tolerance / speed; exits keep the tolerance (grazing contacts
survive round-off), and coplanar flat shapes moving in their common plane (zero speed along the
normal, round-off in the projections) stay in contact along it.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance as _tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_segment_segment
from touche._kernels.convex.support import relative_transform
from touche._kernels.primitives.sat import project_extent
from touche._kernels.base.touching import touching_tolerance as _pair_tolerance

# |ea x eb|^2 <= PARALLEL |ea|^2 |eb|^2 (sin^2 angle) => the edge pair spans no usable axis.
PARALLEL = _tolerance.PARALLEL_SQ
# Feature selection for the contact set: vertices within FEATURE_FACTOR * tolerance of the
# support plane belong to the contact feature. At first contact the two supports are within
# `tolerance` of each other (the contact criterion) plus round-off well below it, so a few
# tolerances pick exactly the coplanar vertices of a touching face / edge.
FEATURE_FACTOR = 16.0
# A candidate point of A n B is a vertex when its active plane normals span 3D: the triple
# product of unit normals must exceed this (1e-6 rad is far above round-off, far below any real
# facet angle of the shapes we build).
RANK_EPS = 1e-6

SEPARATED_AXIS = -1.0


# ----------------------------------------------------------------------------------------------
# shape layout helpers
@njit(cache=True, nogil=True)
def _is_flat(kind, params):
    return (kind == kinds.TRIANGLE or kind == kinds.POLYGON) and int(params[1]) > 0


@njit(cache=True, nogil=True)
def _moved_points(params, points, rel, shift):
    """A's packed points in B's frame: vertex rows as points (plus ``shift``), the plane normals
    and edge directions as vectors."""
    nv = int(params[0])
    out = np.empty_like(points)
    for r in range(points.shape[0]):
        x = points[r, 0]
        y = points[r, 1]
        z = points[r, 2]
        for i in range(3):
            out[r, i] = rel[i, 0] * x + rel[i, 1] * y + rel[i, 2] * z
            if r < nv:
                out[r, i] += rel[i, 3] + shift[i]
    return out


@njit(cache=True, nogil=True)
def _moved_offsets(params, moved, nv, shift_x, shift_y, shift_z, rel):
    """Plane offsets of A in B's frame: d' = d + n' . (translation)."""
    n_planes = int(params[1])
    out = np.empty(n_planes)
    tx = rel[0, 3] + shift_x
    ty = rel[1, 3] + shift_y
    tz = rel[2, 3] + shift_z
    for k in range(n_planes):
        out[k] = params[4 + k] + moved[nv + k, 0] * tx + moved[nv + k, 1] * ty + moved[nv + k, 2] * tz
    return out


# ----------------------------------------------------------------------------------------------
# time of impact (S0 sections 5-6: TFirst / TLast over the candidate axes)
@njit(cache=True, nogil=True)
def _axis(lx, ly, lz, va, nva, vb, nvb, wx, wy, wz, tol, t_max, st):
    """Intersect the contact-time interval with this axis's; returns True when it became empty.

    st: [t_first, t_last, n_first(3), best static gap, its axis(3)]. A moves by w t relative to B.
    Per axis (unit L, speed s = w.L): contact iff maxA + s t >= minB - tol and minA + s t <= maxB
    + tol. Each is a half-line in t (s != 0) or all / no t (s == 0); never divides by zero.
    """
    ll = lx * lx + ly * ly + lz * lz
    if not ll > 0.0:
        return False
    inv = 1.0 / np.sqrt(ll)
    lx *= inv
    ly *= inv
    lz *= inv
    mina, maxa = project_extent(va, nva, lx, ly, lz)
    minb, maxb = project_extent(vb, nvb, lx, ly, lz)
    g_plus = minb - maxa  # B beyond A along +L
    g_minus = mina - maxb  # B beyond A along -L
    if g_plus >= g_minus:
        if g_plus > st[5]:
            st[5] = g_plus
            st[6] = lx
            st[7] = ly
            st[8] = lz
    elif g_minus > st[5]:
        st[5] = g_minus
        st[6] = -lx
        st[7] = -ly
        st[8] = -lz
    s = wx * lx + wy * ly + wz * lz
    g1 = g_plus - tol  # s t >= g1
    g2 = tol - g_minus  # s t <= g2
    # Entry times are exact when the axis starts clearly open (gap > tol); within tol at t = 0
    # the entry is <= 0 anyway. Exit times keep the tolerance (grazes stay contacts).
    if s > 0.0:
        low = (g_plus if g_plus > tol else g1) / s
        high = g2 / s
        if low > st[0]:
            st[0] = low
            st[2] = lx
            st[3] = ly
            st[4] = lz
        if high < st[1]:
            st[1] = high
    elif s < 0.0:
        low = (-g_minus if g_minus > tol else g2) / s
        high = g1 / s
        if low > st[0]:
            st[0] = low
            st[2] = -lx
            st[3] = -ly
            st[4] = -lz
        if high < st[1]:
            st[1] = high
    else:
        if g1 > 0.0 or g2 < 0.0:
            st[0] = np.inf
            st[2] = lx if g1 > 0.0 else -lx
            st[3] = ly if g1 > 0.0 else -ly
            st[4] = lz if g1 > 0.0 else -lz
            return True
    return st[0] > st[1] or st[0] > t_max


@njit(cache=True, nogil=True)
def _first_direction(points, start, count):
    for r in range(start, start + count):
        if points[r, 0] != 0.0 or points[r, 1] != 0.0 or points[r, 2] != 0.0:
            return r
    return -1


@njit(cache=True, nogil=True)
def _toi_local(ka, pa, qa, kb, pb, qb, wx, wy, wz, t_max, tol, st):
    """TFirst / TLast in B's frame (qa: A's packed points moved into it). Fills st; returns True
    when the contact-time interval within [0, t_max] is empty."""
    nva = int(pa[0])
    npa = int(pa[1])
    nda = int(pa[2])
    nsa = int(pa[3])
    nvb = int(pb[0])
    npb = int(pb[1])
    ndb = int(pb[2])
    nsb = int(pb[3])
    st[0] = 0.0
    st[1] = np.inf
    st[2] = np.nan
    st[3] = np.nan
    st[4] = np.nan
    st[5] = -np.inf
    st[6] = np.nan
    st[7] = np.nan
    st[8] = np.nan
    # 1. face normals (B's first: ties keep the first axis, so a face contact reports a face normal)
    for k in range(nvb, nvb + nsb):
        if _axis(qb[k, 0], qb[k, 1], qb[k, 2], qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
            return True
    for k in range(nva, nva + nsa):
        if _axis(qa[k, 0], qa[k, 1], qa[k, 2], qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
            return True
    da0 = nva + npa
    db0 = nvb + npb
    # 2. edge x edge, near-parallel pairs skipped (S0 erratum L511)
    for i in range(da0, da0 + nda):
        ax = qa[i, 0]
        ay = qa[i, 1]
        az = qa[i, 2]
        la = ax * ax + ay * ay + az * az
        for j in range(db0, db0 + ndb):
            bx = qb[j, 0]
            by = qb[j, 1]
            bz = qb[j, 2]
            cx = ay * bz - az * by
            cy = az * bx - ax * bz
            cz = ax * by - ay * bx
            if cx * cx + cy * cy + cz * cz <= PARALLEL * la * (bx * bx + by * by + bz * bz):
                continue
            if _axis(cx, cy, cz, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
    # 3. in-plane axes n x e of a flat shape against the other's edges (coplanar at contact)
    if _is_flat(ka, pa):
        nx = qa[nva, 0]
        ny = qa[nva, 1]
        nz = qa[nva, 2]
        for j in range(db0, db0 + ndb):
            bx = qb[j, 0]
            by = qb[j, 1]
            bz = qb[j, 2]
            if _axis(ny * bz - nz * by, nz * bx - nx * bz, nx * by - ny * bx,
                     qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
    if _is_flat(kb, pb):
        nx = qb[nvb, 0]
        ny = qb[nvb, 1]
        nz = qb[nvb, 2]
        for i in range(da0, da0 + nda):
            ax = qa[i, 0]
            ay = qa[i, 1]
            az = qa[i, 2]
            if _axis(ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax,
                     qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
    # 4. both at most one-dimensional (zero-area triangles): M is a parallelogram, segment or point
    if npa == 0 and npb == 0:
        ia = _first_direction(qa, da0, nda)
        ib = _first_direction(qb, db0, ndb)
        ex = 0.0
        ey = 0.0
        ez = 0.0
        mx = 0.0
        my = 0.0
        mz = 0.0
        if ia >= 0 and ib >= 0:
            ax = qa[ia, 0]
            ay = qa[ia, 1]
            az = qa[ia, 2]
            bx = qb[ib, 0]
            by = qb[ib, 1]
            bz = qb[ib, 2]
            mx = ay * bz - az * by
            my = az * bx - ax * bz
            mz = ax * by - ay * bx
            if mx * mx + my * my + mz * mz > PARALLEL * (ax * ax + ay * ay + az * az) * (bx * bx + by * by + bz * bz):
                # parallelogram: its normal m (tested in 2.) and the in-plane normals m x e
                if _axis(my * az - mz * ay, mz * ax - mx * az, mx * ay - my * ax,
                         qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                    return True
                return _axis(my * bz - mz * by, mz * bx - mx * bz, mx * by - my * bx,
                             qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st)
            ex = ax
            ey = ay
            ez = az
        elif ia >= 0:
            ex = qa[ia, 0]
            ey = qa[ia, 1]
            ez = qa[ia, 2]
        elif ib >= 0:
            ex = qb[ib, 0]
            ey = qb[ib, 1]
            ez = qb[ib, 2]
        if ex == 0.0 and ey == 0.0 and ez == 0.0:  # point vs point: three axes
            if _axis(1.0, 0.0, 0.0, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
            if _axis(0.0, 1.0, 0.0, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
            return _axis(0.0, 0.0, 1.0, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st)
        # M lies on a line along e: e and two perpendiculars fix it
        if abs(ex) < 0.6 * np.sqrt(ex * ex + ey * ey + ez * ez):
            px, py, pz = 0.0, ez, -ey  # e x (1, 0, 0)
        else:
            px, py, pz = -ez, 0.0, ex  # e x (0, 1, 0)
        if _axis(ex, ey, ez, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
            return True
        if _axis(px, py, pz, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
            return True
        return _axis(ey * pz - ez * py, ez * px - ex * pz, ex * py - ey * px,
                     qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st)
    return False


@njit(cache=True, nogil=True)
def _local_velocity(tb, va, vb):
    """Velocity of A relative to B, in B's frame: R_b^T (v_a - v_b)."""
    dx = va[0] - vb[0]
    dy = va[1] - vb[1]
    dz = va[2] - vb[2]
    return (tb[0, 0] * dx + tb[1, 0] * dy + tb[2, 0] * dz,
            tb[0, 1] * dx + tb[1, 1] * dy + tb[2, 1] * dz,
            tb[0, 2] * dx + tb[1, 2] * dy + tb[2, 2] * dz)


@njit(cache=True, nogil=True)
def _world_vector(tb, x, y, z):
    out = np.empty(3)
    for i in range(3):
        out[i] = tb[i, 0] * x + tb[i, 1] * y + tb[i, 2] * z
    return out


@njit(cache=True, nogil=True)
def polytope_time_of_impact(ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_max, tolerance):
    """First / last time of contact of two translating polytopes (S0 sections 5-6, Ericson 5.5.2).

    Steps: move A into B's frame; w = relative velocity; over the candidate axes (module doc)
    intersect the per-axis contact-time intervals with [0, inf); MISS when empty or when it starts
    after t_max. Returns (status, t_first, t_last, normal (3,) world, unit, A -> B):
      MISS: t_first = inf, t_last = nan, normal = the axis that proved it (or nan);
      HIT: t_first in (0, t_max], t_last >= t_first (may exceed t_max, inf when they move
        together), normal = the axis that gave TFirst;
      ALREADY_TOUCHING (within ``tolerance`` at t = 0): t_first = 0, normal = the axis of largest
        static gap (the minimum-translation direction when the candidate set is complete).
    """
    rel = relative_transform(ta, tb)
    zero = np.zeros(3)
    qa = _moved_points(pa, pta, rel, zero)
    wx, wy, wz = _local_velocity(tb, va, vb)
    st = np.empty(9)
    empty = _toi_local(ka, pa, qa, kb, pb, ptb, wx, wy, wz, t_max, tolerance, st)
    if empty:
        return kinds.MISS, np.inf, np.nan, _world_vector(tb, st[2], st[3], st[4])
    if st[0] > 0.0:
        return kinds.HIT, st[0], st[1], _world_vector(tb, st[2], st[3], st[4])
    return kinds.ALREADY_TOUCHING, 0.0, st[1], _world_vector(tb, st[6], st[7], st[8])


# ----------------------------------------------------------------------------------------------
# 2D convex sets (contact plane): hull, containment, intersection
@njit(cache=True, nogil=True)
def _hull2d(xy, m, eps):
    """Convex hull (monotone chain) of the first m rows of xy, CCW, with points closer than eps
    merged and collinear points dropped. Returns (indices (k,), k): k = 1 point, 2 segment."""
    # stable lexicographic order: sort by y first, then a stable sort by x
    oy = np.argsort(xy[:m, 1], kind="mergesort")
    ox = np.argsort(xy[oy, 0], kind="mergesort")
    order = oy[ox]
    hull = np.empty(2 * m + 1, dtype=np.int64)
    k = 0
    for pass_ in range(2):
        start = k
        for idx in range(m):
            i = order[idx] if pass_ == 0 else order[m - 1 - idx]
            if k > start and abs(xy[i, 0] - xy[hull[k - 1], 0]) <= eps and abs(xy[i, 1] - xy[hull[k - 1], 1]) <= eps:
                continue
            while k >= start + 2:
                o = hull[k - 2]
                a = hull[k - 1]
                ax = xy[a, 0] - xy[o, 0]
                ay = xy[a, 1] - xy[o, 1]
                bx = xy[i, 0] - xy[o, 0]
                by = xy[i, 1] - xy[o, 1]
                cross = ax * by - ay * bx
                if cross <= eps * np.sqrt(bx * bx + by * by):
                    k -= 1
                else:
                    break
            hull[k] = i
            k += 1
        k -= 1  # the last point of each chain starts the other
    if k < 1:
        k = 1
    # a point or segment: the chains double back; keep the distinct extreme points
    out = hull[:k].copy()
    if k == 2:
        a = out[0]
        b = out[1]
        if abs(xy[a, 0] - xy[b, 0]) <= eps and abs(xy[a, 1] - xy[b, 1]) <= eps:
            return out[:1], 1
    return out, k


@njit(cache=True, nogil=True)
def _inside2d(px, py, xy, hull, k, eps):
    """Point within eps of the convex set given by hull indices (CCW)."""
    if k == 1:
        dx = px - xy[hull[0], 0]
        dy = py - xy[hull[0], 1]
        return dx * dx + dy * dy <= eps * eps
    if k == 2:
        ax = xy[hull[0], 0]
        ay = xy[hull[0], 1]
        dx = xy[hull[1], 0] - ax
        dy = xy[hull[1], 1] - ay
        ll = dx * dx + dy * dy
        s = ((px - ax) * dx + (py - ay) * dy) / ll  # ll > eps^2 > 0 after merging
        s = min(1.0, max(0.0, s))
        ex = ax + s * dx - px
        ey = ay + s * dy - py
        return ex * ex + ey * ey <= eps * eps
    for i in range(k):
        a = hull[i]
        b = hull[(i + 1) % k]
        dx = xy[b, 0] - xy[a, 0]
        dy = xy[b, 1] - xy[a, 1]
        if dx * (py - xy[a, 1]) - dy * (px - xy[a, 0]) < -eps * np.sqrt(dx * dx + dy * dy):
            return False
    return True


@njit(cache=True, nogil=True)
def _intersect2d(xy, ha, ka, hb, kb, eps, out, m):
    """Append to out[m:] the candidate vertices of conv(ha) n conv(hb) (vertices inside the
    other, proper edge crossings); returns the new count."""
    for i in range(ka):
        p = ha[i]
        if _inside2d(xy[p, 0], xy[p, 1], xy, hb, kb, eps):
            out[m, 0] = xy[p, 0]
            out[m, 1] = xy[p, 1]
            m += 1
    for j in range(kb):
        q = hb[j]
        if _inside2d(xy[q, 0], xy[q, 1], xy, ha, ka, eps):
            out[m, 0] = xy[q, 0]
            out[m, 1] = xy[q, 1]
            m += 1
    if ka < 2 or kb < 2:
        return m
    ea = ka if ka > 2 else 1
    eb = kb if kb > 2 else 1
    for i in range(ea):
        a0 = ha[i]
        a1 = ha[(i + 1) % ka]
        dax = xy[a1, 0] - xy[a0, 0]
        day = xy[a1, 1] - xy[a0, 1]
        for j in range(eb):
            b0 = hb[j]
            b1 = hb[(j + 1) % kb]
            dbx = xy[b1, 0] - xy[b0, 0]
            dby = xy[b1, 1] - xy[b0, 1]
            den = dax * dby - day * dbx
            if den * den <= PARALLEL * (dax * dax + day * day) * (dbx * dbx + dby * dby):
                continue  # parallel edges: their overlap ends at vertices found above
            rx = xy[b0, 0] - xy[a0, 0]
            ry = xy[b0, 1] - xy[a0, 1]
            s = (rx * dby - ry * dbx) / den
            u = (rx * day - ry * dax) / den
            if -1e-12 <= s <= 1.0 + 1e-12 and -1e-12 <= u <= 1.0 + 1e-12:
                out[m, 0] = xy[a0, 0] + s * dax
                out[m, 1] = xy[a0, 1] + s * day
                m += 1
    return m


@njit(cache=True, nogil=True)
def _basis(nx, ny, nz):
    """Unit u, v with (u, v, n) right-handed, for unit n."""
    if abs(nx) < 0.6:
        ux, uy, uz = 0.0, nz, -ny
    else:
        ux, uy, uz = -nz, 0.0, nx
    ul = np.sqrt(ux * ux + uy * uy + uz * uz)
    ux /= ul
    uy /= ul
    uz /= ul
    return ux, uy, uz, ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux


@njit(cache=True, nogil=True)
def _contact_local(pa, qa, pb, qb, nx, ny, nz, tol, out):
    """Contact set of A (qa, already at the contact time) and B in B's frame along the unit
    normal n (A -> B): conv(A's vertices on its support plane) n conv(B's on its own), computed
    in the contact plane (S0 section 6, generalised to any vertex / edge / face pair).
    Writes out[:count] and returns (set kind, count)."""
    nva = int(pa[0])
    nvb = int(pb[0])
    feature = FEATURE_FACTOR * tol
    max_a = -np.inf
    for i in range(nva):
        h = qa[i, 0] * nx + qa[i, 1] * ny + qa[i, 2] * nz
        if h > max_a:
            max_a = h
    min_b = np.inf
    for i in range(nvb):
        h = qb[i, 0] * nx + qb[i, 1] * ny + qb[i, 2] * nz
        if h < min_b:
            min_b = h
    level = 0.5 * (max_a + min_b)
    ux, uy, uz, vx, vy, vz = _basis(nx, ny, nz)
    xy = np.empty((nva + nvb, 2))
    na = 0
    for i in range(nva):
        if qa[i, 0] * nx + qa[i, 1] * ny + qa[i, 2] * nz >= max_a - feature:
            xy[na, 0] = qa[i, 0] * ux + qa[i, 1] * uy + qa[i, 2] * uz
            xy[na, 1] = qa[i, 0] * vx + qa[i, 1] * vy + qa[i, 2] * vz
            na += 1
    nb = 0
    for i in range(nvb):
        if qb[i, 0] * nx + qb[i, 1] * ny + qb[i, 2] * nz <= min_b + feature:
            xy[na + nb, 0] = qb[i, 0] * ux + qb[i, 1] * uy + qb[i, 2] * uz
            xy[na + nb, 1] = qb[i, 0] * vx + qb[i, 1] * vy + qb[i, 2] * vz
            nb += 1
    eps = 4.0 * feature
    ha, ka = _hull2d(xy[:na], na, eps)
    hb_local, kb = _hull2d(xy[na:na + nb], nb, eps)
    hb = hb_local + na
    cand = np.empty((na + nb + (na + 1) * (nb + 1) + 2, 2))
    m = _intersect2d(xy, ha, ka, hb, kb, eps, cand, 0)
    if m == 0:
        # numerically empty (should not happen at a true first contact): the closest pair of
        # feature points stands for the contact
        best = np.inf
        for i in range(na):
            for j in range(na, na + nb):
                d = (xy[i, 0] - xy[j, 0]) ** 2 + (xy[i, 1] - xy[j, 1]) ** 2
                if d < best:
                    best = d
                    cand[0, 0] = 0.5 * (xy[i, 0] + xy[j, 0])
                    cand[0, 1] = 0.5 * (xy[i, 1] + xy[j, 1])
        m = 1
    hc, kc = _hull2d(cand, m, eps)
    for r in range(kc):
        x = cand[hc[r], 0]
        y = cand[hc[r], 1]
        out[r, 0] = level * nx + x * ux + y * vx
        out[r, 1] = level * ny + x * uy + y * vy
        out[r, 2] = level * nz + x * uz + y * vz
    kind = kinds.SET_POINT if kc == 1 else (kinds.SET_SEGMENT if kc == 2 else kinds.SET_POLYGON)
    return kind, kc


# ----------------------------------------------------------------------------------------------
# intersection set of overlapping shapes (3D)
@njit(cache=True, nogil=True)
def _inside(params, q, nv, offsets, px, py, pz, eps):
    """Point within eps of a polytope: its planes (flat shapes: both faces and the sides), or for
    a zero-area triangle (no planes) the distance to its longest edge (or its point)."""
    n_planes = int(params[1])
    if n_planes > 0:
        for k in range(n_planes):
            r = nv + k
            if q[r, 0] * px + q[r, 1] * py + q[r, 2] * pz - offsets[k] > eps:
                return False
        return True
    best = -1.0
    ia = 0
    ib = 0
    for i in range(nv):
        for j in range(i + 1, nv):
            d = (q[i, 0] - q[j, 0]) ** 2 + (q[i, 1] - q[j, 1]) ** 2 + (q[i, 2] - q[j, 2]) ** 2
            if d > best:
                best = d
                ia = i
                ib = j
    ax = q[ia, 0]
    ay = q[ia, 1]
    az = q[ia, 2]
    dx = q[ib, 0] - ax
    dy = q[ib, 1] - ay
    dz = q[ib, 2] - az
    s = 0.0
    if best > 0.0:
        s = ((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / best
        s = min(1.0, max(0.0, s))
    ex = ax + s * dx - px
    ey = ay + s * dy - py
    ez = az + s * dz - pz
    return ex * ex + ey * ey + ez * ez <= eps * eps


@njit(cache=True, nogil=True)
def _append_crossings(params_e, q_e, edges_e, params_p, q_p, nv_p, offsets_p, params_in, q_in, nv_in,
                      offsets_in, eps, out, m):
    """Points where edges of one shape cross planes of the other and lie inside it."""
    n_planes = int(params_p[1])
    for e in range(edges_e.shape[0]):
        i = edges_e[e, 0]
        j = edges_e[e, 1]
        for k in range(n_planes):
            r = nv_p + k
            di = q_e[i, 0] * q_p[r, 0] + q_e[i, 1] * q_p[r, 1] + q_e[i, 2] * q_p[r, 2] - offsets_p[k]
            dj = q_e[j, 0] * q_p[r, 0] + q_e[j, 1] * q_p[r, 1] + q_e[j, 2] * q_p[r, 2] - offsets_p[k]
            if (di < 0.0 < dj) or (dj < 0.0 < di):
                s = di / (di - dj)  # di, dj of opposite signs: the denominator is not zero
                x = q_e[i, 0] + s * (q_e[j, 0] - q_e[i, 0])
                y = q_e[i, 1] + s * (q_e[j, 1] - q_e[i, 1])
                z = q_e[i, 2] + s * (q_e[j, 2] - q_e[i, 2])
                if _inside(params_in, q_in, nv_in, offsets_in, x, y, z, eps):
                    out[m, 0] = x
                    out[m, 1] = y
                    out[m, 2] = z
                    m += 1
    return m


@njit(cache=True, nogil=True)
def _active_rank3(params, q, nv, offsets, px, py, pz, eps, normals, count):
    """Collect the unit normals of the planes active at p (|n.p - d| <= eps) into normals."""
    for k in range(int(params[1])):
        r = nv + k
        if abs(q[r, 0] * px + q[r, 1] * py + q[r, 2] * pz - offsets[k]) <= eps:
            normals[count, 0] = q[r, 0]
            normals[count, 1] = q[r, 1]
            normals[count, 2] = q[r, 2]
            count += 1
    return count


@njit(cache=True, nogil=True)
def _spans_3d(normals, count):
    for i in range(count):
        for j in range(i + 1, count):
            cx = normals[i, 1] * normals[j, 2] - normals[i, 2] * normals[j, 1]
            cy = normals[i, 2] * normals[j, 0] - normals[i, 0] * normals[j, 2]
            cz = normals[i, 0] * normals[j, 1] - normals[i, 1] * normals[j, 0]
            if cx * cx + cy * cy + cz * cz <= RANK_EPS * RANK_EPS:
                continue
            for k in range(count):
                if abs(cx * normals[k, 0] + cy * normals[k, 1] + cz * normals[k, 2]) > RANK_EPS:
                    return True
    return False


@njit(cache=True, nogil=True)
def _intersection_local(pa, qa, oa, eda, pb, qb, ob, edb, tol, out):
    """Vertices of A n B in B's frame (Ericson 5.2.1 / S0 section 9 candidates: vertices inside
    the other shape, edges crossing the other's planes; zero-area triangles through their edges).
    Writes out[:count]; returns (set kind, count)."""
    nva = int(pa[0])
    nvb = int(pb[0])
    npa = int(pa[1])
    npb = int(pb[1])
    eps = 4.0 * tol
    cap = nva + nvb + eda.shape[0] * npb + edb.shape[0] * npa + eda.shape[0] * edb.shape[0] + 1
    cand = np.empty((cap, 3))
    m = 0
    for i in range(nva):
        if _inside(pb, qb, nvb, ob, qa[i, 0], qa[i, 1], qa[i, 2], eps):
            cand[m] = qa[i]
            m += 1
    for i in range(nvb):
        if _inside(pa, qa, nva, oa, qb[i, 0], qb[i, 1], qb[i, 2], eps):
            cand[m] = qb[i]
            m += 1
    m = _append_crossings(pa, qa, eda, pb, qb, nvb, ob, pb, qb, nvb, ob, eps, cand, m)
    m = _append_crossings(pb, qb, edb, pa, qa, nva, oa, pa, qa, nva, oa, eps, cand, m)
    if npa == 0 or npb == 0:
        # a zero-area triangle has no planes: edge-edge meeting points stand in for crossings
        for e in range(eda.shape[0]):
            for f in range(edb.shape[0]):
                s, t, c1, c2 = closest_points_segment_segment(qa[eda[e, 0]], qa[eda[e, 1]], qb[edb[f, 0]], qb[edb[f, 1]])
                d = (c1[0] - c2[0]) ** 2 + (c1[1] - c2[1]) ** 2 + (c1[2] - c2[2]) ** 2
                if d <= eps * eps:
                    cand[m] = 0.5 * (c1 + c2)
                    m += 1
    if m == 0:
        return kinds.SET_EMPTY, 0
    # deduplicate within eps
    keep = np.empty(m, dtype=np.int64)
    nk = 0
    for i in range(m):
        duplicate = False
        for j in range(nk):
            r = keep[j]
            if (abs(cand[i, 0] - cand[r, 0]) <= eps and abs(cand[i, 1] - cand[r, 1]) <= eps
                    and abs(cand[i, 2] - cand[r, 2]) <= eps):
                duplicate = True
                break
        if not duplicate:
            keep[nk] = i
            nk += 1
    pts = np.empty((nk, 3))
    for j in range(nk):
        pts[j] = cand[keep[j]]
    return _classify(pa, qa, oa, pb, qb, ob, pts, nk, eps, out)


@njit(cache=True, nogil=True)
def _classify(pa, qa, oa, pb, qb, ob, pts, nk, eps, out):
    """Dimension of the point set (point, segment, polygon, polyhedron) and its vertices: the two
    extreme points of a segment, the ordered 2D hull of a polygon, and for a polyhedron the
    points whose active planes span 3D (the vertices of A n B)."""
    p0 = pts[0]
    far = 0
    best = 0.0
    for i in range(nk):
        d = (pts[i, 0] - p0[0]) ** 2 + (pts[i, 1] - p0[1]) ** 2 + (pts[i, 2] - p0[2]) ** 2
        if d > best:
            best = d
            far = i
    if best <= eps * eps:
        out[0] = p0
        return kinds.SET_POINT, 1
    dx = pts[far, 0] - p0[0]
    dy = pts[far, 1] - p0[1]
    dz = pts[far, 2] - p0[2]
    dl = np.sqrt(best)
    dx /= dl
    dy /= dl
    dz /= dl
    # farthest from the line
    best = 0.0
    far2 = 0
    for i in range(nk):
        rx = pts[i, 0] - p0[0]
        ry = pts[i, 1] - p0[1]
        rz = pts[i, 2] - p0[2]
        # squared distance to the line as |r x d|^2 (|r|^2 - (r.d)^2 cancels for long r)
        cx = ry * dz - rz * dy
        cy = rz * dx - rx * dz
        cz = rx * dy - ry * dx
        d = cx * cx + cy * cy + cz * cz
        if d > best:
            best = d
            far2 = i
    if best <= eps * eps:
        lo = np.inf
        hi = -np.inf
        ilo = 0
        ihi = 0
        for i in range(nk):
            s = (pts[i, 0] - p0[0]) * dx + (pts[i, 1] - p0[1]) * dy + (pts[i, 2] - p0[2]) * dz
            if s < lo:
                lo = s
                ilo = i
            if s > hi:
                hi = s
                ihi = i
        out[0] = pts[ilo]
        out[1] = pts[ihi]
        return kinds.SET_SEGMENT, 2
    rx = pts[far2, 0] - p0[0]
    ry = pts[far2, 1] - p0[1]
    rz = pts[far2, 2] - p0[2]
    nx = dy * rz - dz * ry
    ny = dz * rx - dx * rz
    nz = dx * ry - dy * rx
    nl = np.sqrt(nx * nx + ny * ny + nz * nz)
    nx /= nl
    ny /= nl
    nz /= nl
    thick = 0.0
    for i in range(nk):
        h = abs((pts[i, 0] - p0[0]) * nx + (pts[i, 1] - p0[1]) * ny + (pts[i, 2] - p0[2]) * nz)
        if h > thick:
            thick = h
    if thick <= eps:
        ux, uy, uz, vx, vy, vz = _basis(nx, ny, nz)
        xy = np.empty((nk, 2))
        level = p0[0] * nx + p0[1] * ny + p0[2] * nz
        for i in range(nk):
            xy[i, 0] = pts[i, 0] * ux + pts[i, 1] * uy + pts[i, 2] * uz
            xy[i, 1] = pts[i, 0] * vx + pts[i, 1] * vy + pts[i, 2] * vz
        hull, k = _hull2d(xy, nk, eps)
        for r in range(k):
            i = hull[r]
            out[r, 0] = pts[i, 0]
            out[r, 1] = pts[i, 1]
            out[r, 2] = pts[i, 2]
        kind = kinds.SET_POINT if k == 1 else (kinds.SET_SEGMENT if k == 2 else kinds.SET_POLYGON)
        return kind, k
    # a solid: keep the points whose active planes span 3D
    nva = int(pa[0])
    nvb = int(pb[0])
    normals = np.empty((int(pa[1]) + int(pb[1]), 3))
    count = 0
    for i in range(nk):
        c = _active_rank3(pa, qa, nva, oa, pts[i, 0], pts[i, 1], pts[i, 2], eps, normals, 0)
        c = _active_rank3(pb, qb, nvb, ob, pts[i, 0], pts[i, 1], pts[i, 2], eps, normals, c)
        if _spans_3d(normals, c):
            out[count] = pts[i]
            count += 1
    if count < 4:  # never expected; keep every point rather than lose the solid
        for i in range(nk):
            out[i] = pts[i]
        count = nk
    return kinds.SET_POLYHEDRON, count


@njit(cache=True, nogil=True)
def _to_world(tb, shift, local, count, out):
    for r in range(count):
        for i in range(3):
            out[r, i] = (tb[i, 0] * local[r, 0] + tb[i, 1] * local[r, 1] + tb[i, 2] * local[r, 2]
                         + tb[i, 3] + shift[i])


def set_capacity(params_a, params_b, edges_a, edges_b):
    """Upper bound on the number of points a contact / intersection set of these shapes returns
    (Python helper for sizing the batch outputs)."""
    nva, npa = int(params_a[0]), int(params_a[1])
    nvb, npb = int(params_b[0]), int(params_b[1])
    return nva + nvb + len(edges_a) * npb + len(edges_b) * npa + len(edges_a) * len(edges_b) + 1


@njit(cache=True, nogil=True)
def polytope_contact_set(ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t, normal, tolerance):
    """Contact set at time t (the first-contact time) along the world unit ``normal`` (A -> B).
    Returns (set_kind, count, points (max_count, 3) world; rows >= count unused)."""
    rel = relative_transform(ta, tb)
    wx, wy, wz = _local_velocity(tb, va, vb)
    shift = np.array([wx * t, wy * t, wz * t])
    qa = _moved_points(pa, pta, rel, shift)
    nx = tb[0, 0] * normal[0] + tb[1, 0] * normal[1] + tb[2, 0] * normal[2]
    ny = tb[0, 1] * normal[0] + tb[1, 1] * normal[1] + tb[2, 1] * normal[2]
    nz = tb[0, 2] * normal[0] + tb[1, 2] * normal[1] + tb[2, 2] * normal[2]
    local = np.empty((int(pa[0]) + int(pb[0]) + 1, 3))
    kind, count = _contact_local(pa, qa, pb, ptb, nx, ny, nz, tolerance, local)
    points = np.empty((local.shape[0], 3))
    world_shift = np.array([vb[0] * t, vb[1] * t, vb[2] * t])
    _to_world(tb, world_shift, local, count, points)
    return kind, count, points


@njit(cache=True, nogil=True)
def _intersection_at(pa, pta, eda, ta, va, pb, ptb, edb, tb, vb, t, tolerance):
    """Intersection set of A and B at time t (translations applied): (kind, count, world points)."""
    rel = relative_transform(ta, tb)
    wx, wy, wz = _local_velocity(tb, va, vb)
    qa = _moved_points(pa, pta, rel, np.array([wx * t, wy * t, wz * t]))
    oa = _moved_offsets(pa, qa, int(pa[0]), wx * t, wy * t, wz * t, rel)
    ob = pb[4:4 + int(pb[1])].copy()
    cap = set_capacity_jit(pa, pb, eda, edb)
    local = np.empty((cap, 3))
    kind, count = _intersection_local(pa, qa, oa, eda, pb, ptb, ob, edb, tolerance, local)
    points = np.empty((cap, 3))
    _to_world(tb, np.array([vb[0] * t, vb[1] * t, vb[2] * t]), local, count, points)
    return kind, count, points


@njit(cache=True, nogil=True)
def set_capacity_jit(pa, pb, eda, edb):
    return (int(pa[0]) + int(pb[0]) + eda.shape[0] * int(pb[1]) + edb.shape[0] * int(pa[1])
            + eda.shape[0] * edb.shape[0] + 1)


@njit(cache=True, nogil=True)
def polytope_intersection_set(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Intersection set A n B at t = 0: (set_kind, count, points (max_count, 3) world). SET_EMPTY
    with count 0 when they are separated by more than the tolerance."""
    zero = np.zeros(3)
    return _intersection_at(pa, pta, eda, ta, zero, pb, ptb, edb, tb, zero, 0.0, tolerance)


# ----------------------------------------------------------------------------------------------
# drivers
@njit(cache=True, nogil=True)
def _toi_pair(ka, pa, pta, tra, eda, sa, ta, va, kb, pb, ptb, trb, edb, sb, tb, vb, t_max, i,
              out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points):
    tol = _pair_tolerance(sa, ta, sb, tb)
    status, t_first, t_last, normal = polytope_time_of_impact(
        ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_max, tol)
    out_status[i] = status
    out_t[i] = t_first
    out_tlast[i] = t_last
    capacity = out_points.shape[1]
    if status == kinds.MISS:
        out_normal[i, :] = np.nan
        out_kind[i] = kinds.SET_EMPTY
        out_count[i] = 0
        out_points[i, :, :] = np.nan
        return
    out_normal[i, :] = normal
    if status == kinds.HIT:
        kind, count, points = polytope_contact_set(
            ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_first, normal, tol)
    else:
        kind, count, points = _intersection_at(pa, pta, eda, ta, va, pb, ptb, edb, tb, vb, 0.0, tol)
    out_kind[i] = kind
    out_count[i] = count
    for r in range(capacity):
        for c in range(3):
            out_points[i, r, c] = points[r, c] if r < count else np.nan


@njit(cache=True, nogil=True)
def time_of_impact_one(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                       out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points):
    """One pair ((1, 4, 4) poses, (1, 3) velocities, outputs of length 1), no thread pool."""
    _toi_pair(ka, pa, pta, tra, eda, sa, tas[0], vas[0], kb, pb, ptb, trb, edb, sb, tbs[0], vbs[0], t_max, 0,
              out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def time_of_impact_many(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                        out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points, lo, hi):
    """Batch: tas / tbs (n or 1, 4, 4), vas / vbs (n or 1, 3); batches of 1 broadcast. Outputs:
    status (n,) int8, t / t_last (n,), normal (n, 3), set kind (n,) int8, count (n,) int64,
    points (n, K, 3) NaN-padded (K = out_points.shape[1] >= set_capacity)."""
    # broadcast steps (computed once, not per pair)
    sta = 1 if tas.shape[0] > 1 else 0
    stb = 1 if tbs.shape[0] > 1 else 0
    sva = 1 if vas.shape[0] > 1 else 0
    svb = 1 if vbs.shape[0] > 1 else 0
    for i in range(lo, hi):
        ta = tas[i * sta]
        tb = tbs[i * stb]
        va = vas[i * sva]
        vb = vbs[i * svb]
        _toi_pair(ka, pa, pta, tra, eda, sa, ta, va, kb, pb, ptb, trb, edb, sb, tb, vb, t_max, i,
                  out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def toi_times_many_serial(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                          out_status, out_t):
    """Times only (no contact set), serial: for benchmarks and tests of the TFirst logic."""
    for i in range(out_status.shape[0]):
        ta = tas[i if tas.shape[0] > 1 else 0]
        tb = tbs[i if tbs.shape[0] > 1 else 0]
        va = vas[i if vas.shape[0] > 1 else 0]
        vb = vbs[i if vbs.shape[0] > 1 else 0]
        tol = _pair_tolerance(sa, ta, sb, tb)
        status, t_first, t_last, normal = polytope_time_of_impact(
            ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_max, tol)
        out_status[i] = status
        out_t[i] = t_first


@njit(cache=True, nogil=True)
def _intersection_pair(ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, i, out_kind, out_count, out_points):
    tol = _pair_tolerance(sa, ta, sb, tb)
    kind, count, points = polytope_intersection_set(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tol)
    out_kind[i] = kind
    out_count[i] = count
    for r in range(out_points.shape[1]):
        for c in range(3):
            out_points[i, r, c] = points[r, c] if r < count else np.nan


@njit(cache=True, nogil=True)
def intersection_one(ka, pa, pta, tra, eda, sa, tas, kb, pb, ptb, trb, edb, sb, tbs, out_kind, out_count, out_points):
    """One pair ((1, 4, 4) poses), no thread pool."""
    _intersection_pair(ka, pa, pta, tra, eda, sa, tas[0], kb, pb, ptb, trb, edb, sb, tbs[0], 0, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def intersection_many(ka, pa, pta, tra, eda, sa, tas, kb, pb, ptb, trb, edb, sb, tbs, out_kind, out_count, out_points,
                      lo, hi):
    """Batch intersection sets at t = 0; poses (n or 1, 4, 4) broadcast."""
    sta = 1 if tas.shape[0] > 1 else 0
    stb = 1 if tbs.shape[0] > 1 else 0
    for i in range(lo, hi):
        ta = tas[i * sta]
        tb = tbs[i * stb]
        _intersection_pair(ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, i, out_kind, out_count, out_points)
