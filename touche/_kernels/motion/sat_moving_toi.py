"""Moving SAT, first / last time of contact of two translating convex polytopes (S0 sections 5-6:
TFirst / TLast over the candidate axes), and the frame helpers the contact and intersection
sets share (shape layout, A moved into B's frame, back to the world). The method, the candidate
axes and the contact tolerance: sat_moving.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance as _tolerance

from touche._kernels.base import kinds
from touche._kernels.convex.support import relative_transform, to_world_vector
from touche._kernels.primitives.sat import project_extent


# |ea x eb|^2 <= PARALLEL |ea|^2 |eb|^2 (sin^2 angle) => the edge pair spans no usable axis.
PARALLEL = _tolerance.PARALLEL_SQ


# ----------------------------------------------------------------------------------------------
# shape layout helpers
@njit(cache=True, nogil=True)
def _is_flat(kind, params):
    return (kind == kinds.TRIANGLE or kind == kinds.POLYGON) and int(params[1]) > 0


@njit(cache=True, nogil=True)
def moved_points(params, points, rel, shift):
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
def moved_offsets(params, moved, nv, shift_x, shift_y, shift_z, rel):
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


@njit(cache=True, nogil=True, inline="always")
def _edge_cross(qa, i, qb, j):
    """(a x b, whether it spans an axis) of the edge directions a = qa[i], b = qb[j]: not when
    they are near-parallel (|a x b|^2 <= PARALLEL |a|^2 |b|^2, S0 erratum L511)."""
    ax = qa[i, 0]
    ay = qa[i, 1]
    az = qa[i, 2]
    bx = qb[j, 0]
    by = qb[j, 1]
    bz = qb[j, 2]
    cx = ay * bz - az * by
    cy = az * bx - ax * bz
    cz = ax * by - ay * bx
    spans = cx * cx + cy * cy + cz * cz > PARALLEL * (ax * ax + ay * ay + az * az) * (bx * bx + by * by + bz * bz)
    return cx, cy, cz, spans


@njit(cache=True, nogil=True, inline="always")
def _cross_axis(nx, ny, nz, q, row, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
    """_axis along n x e, e = q[row] (a direction)."""
    ex = q[row, 0]
    ey = q[row, 1]
    ez = q[row, 2]
    return _axis(ny * ez - nz * ey, nz * ex - nx * ez, nx * ey - ny * ex, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st)


@njit(cache=True, nogil=True)
def _in_plane_axes(q_flat, normal_row, q_other, edge_start, edge_count, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
    """The axes n x e of a flat shape's plane normal n = q_flat[normal_row] with the other shape's
    edge directions e = q_other[edge_start:edge_start + edge_count], through _axis; True when the
    contact-time interval became empty."""
    nx = q_flat[normal_row, 0]
    ny = q_flat[normal_row, 1]
    nz = q_flat[normal_row, 2]
    for j in range(edge_start, edge_start + edge_count):
        if _cross_axis(nx, ny, nz, q_other, j, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
            return True
    return False


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
        for j in range(db0, db0 + ndb):
            cx, cy, cz, spans = _edge_cross(qa, i, qb, j)
            if spans and _axis(cx, cy, cz, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                return True
    # 3. in-plane axes n x e of a flat shape against the other's edges (coplanar at contact)
    if _is_flat(ka, pa) and _in_plane_axes(qa, nva, qb, db0, ndb, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
        return True
    if _is_flat(kb, pb) and _in_plane_axes(qb, nvb, qa, da0, nda, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
        return True
    # 4. both at most one-dimensional (zero-area triangles): M is a parallelogram, segment or point
    if npa == 0 and npb == 0:
        ia = _first_direction(qa, da0, nda)
        ib = _first_direction(qb, db0, ndb)
        if ia >= 0 and ib >= 0:
            mx, my, mz, spans = _edge_cross(qa, ia, qb, ib)
            if spans:
                # parallelogram: its normal m (tested in 2.) and the in-plane normals m x e
                if _cross_axis(mx, my, mz, qa, ia, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st):
                    return True
                return _cross_axis(mx, my, mz, qb, ib, qa, nva, qb, nvb, wx, wy, wz, tol, t_max, st)
        ex = 0.0
        ey = 0.0
        ez = 0.0
        if ia >= 0:
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
def local_velocity(tb, va, vb):
    """Velocity of A relative to B, in B's frame: R_b^T (v_a - v_b)."""
    dx = va[0] - vb[0]
    dy = va[1] - vb[1]
    dz = va[2] - vb[2]
    return (tb[0, 0] * dx + tb[1, 0] * dy + tb[2, 0] * dz,
            tb[0, 1] * dx + tb[1, 1] * dy + tb[2, 1] * dz,
            tb[0, 2] * dx + tb[1, 2] * dy + tb[2, 2] * dz)


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
    qa = moved_points(pa, pta, rel, zero)
    wx, wy, wz = local_velocity(tb, va, vb)
    st = np.empty(9)
    empty = _toi_local(ka, pa, qa, kb, pb, ptb, wx, wy, wz, t_max, tolerance, st)
    if empty:
        return kinds.MISS, np.inf, np.nan, to_world_vector(tb, st[2], st[3], st[4])
    if st[0] > 0.0:
        return kinds.HIT, st[0], st[1], to_world_vector(tb, st[2], st[3], st[4])
    return kinds.ALREADY_TOUCHING, 0.0, st[1], to_world_vector(tb, st[6], st[7], st[8])


@njit(cache=True, nogil=True)
def to_world(tb, shift, local, count, out):
    for r in range(count):
        for i in range(3):
            out[r, i] = (tb[i, 0] * local[r, 0] + tb[i, 1] * local[r, 1] + tb[i, 2] * local[r, 2]
                         + tb[i, 3] + shift[i])
