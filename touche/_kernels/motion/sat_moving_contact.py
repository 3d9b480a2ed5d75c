"""Moving SAT: the contact set of two translating convex polytopes at first contact (S0 section 9):
the features within FEATURE_FACTOR * tolerance of the contact plane, intersected in that plane
(2D hulls and convex polygon clipping). See sat_moving.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base import kinds
from touche._kernels.convex.support import relative_transform
from touche._kernels.motion.sat_moving_toi import PARALLEL, local_velocity, moved_points, to_world


# Feature selection for the contact set: vertices within FEATURE_FACTOR * tolerance of the
# support plane belong to the contact feature. At first contact the two supports are within
# `tolerance` of each other (the contact criterion) plus round-off well below it, so a few
# tolerances pick exactly the coplanar vertices of a touching face / edge.
FEATURE_FACTOR = 16.0


# ----------------------------------------------------------------------------------------------
# 2D convex sets (contact plane): hull, containment, intersection
@njit(cache=True, nogil=True)
def hull2d(xy, m, eps):
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
def _append_inside2d(xy, h, k, h_in, k_in, eps, out, m):
    """Append to out[m:] the vertices of hull h (k indices) within eps of conv(h_in); returns
    the new count."""
    for i in range(k):
        p = h[i]
        if _inside2d(xy[p, 0], xy[p, 1], xy, h_in, k_in, eps):
            out[m, 0] = xy[p, 0]
            out[m, 1] = xy[p, 1]
            m += 1
    return m


@njit(cache=True, nogil=True)
def _intersect2d(xy, ha, ka, hb, kb, eps, out, m):
    """Append to out[m:] the candidate vertices of conv(ha) n conv(hb) (vertices inside the
    other, proper edge crossings); returns the new count."""
    m = _append_inside2d(xy, ha, ka, hb, kb, eps, out, m)
    m = _append_inside2d(xy, hb, kb, ha, ka, eps, out, m)
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
def plane_basis(nx, ny, nz):
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
    ux, uy, uz, vx, vy, vz = plane_basis(nx, ny, nz)
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
    ha, ka = hull2d(xy[:na], na, eps)
    hb_local, kb = hull2d(xy[na:na + nb], nb, eps)
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
    hc, kc = hull2d(cand, m, eps)
    for r in range(kc):
        x = cand[hc[r], 0]
        y = cand[hc[r], 1]
        out[r, 0] = level * nx + x * ux + y * vx
        out[r, 1] = level * ny + x * uy + y * vy
        out[r, 2] = level * nz + x * uz + y * vz
    kind = kinds.SET_POINT if kc == 1 else (kinds.SET_SEGMENT if kc == 2 else kinds.SET_POLYGON)
    return kind, kc


@njit(cache=True, nogil=True)
def polytope_contact_set(ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t, normal, tolerance):
    """Contact set at time t (the first-contact time) along the world unit ``normal`` (A -> B).
    Returns (set_kind, count, points (max_count, 3) world; rows >= count unused)."""
    rel = relative_transform(ta, tb)
    wx, wy, wz = local_velocity(tb, va, vb)
    shift = np.array([wx * t, wy * t, wz * t])
    qa = moved_points(pa, pta, rel, shift)
    nx = tb[0, 0] * normal[0] + tb[1, 0] * normal[1] + tb[2, 0] * normal[2]
    ny = tb[0, 1] * normal[0] + tb[1, 1] * normal[1] + tb[2, 1] * normal[2]
    nz = tb[0, 2] * normal[0] + tb[1, 2] * normal[1] + tb[2, 2] * normal[2]
    local = np.empty((int(pa[0]) + int(pb[0]) + 1, 3))
    kind, count = _contact_local(pa, qa, pb, ptb, nx, ny, nz, tolerance, local)
    points = np.empty((local.shape[0], 3))
    world_shift = np.array([vb[0] * t, vb[1] * t, vb[2] * t])
    to_world(tb, world_shift, local, count, points)
    return kind, count, points
