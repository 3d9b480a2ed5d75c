"""Moving SAT: the intersection set of two overlapping convex polytopes (3D): candidate points
(vertices inside the other shape, edge crossings), classified as a point, segment, polygon or
solid by the rank of their active planes. See sat_moving.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_segment_segment
from touche._kernels.convex.support import relative_transform
from touche._kernels.motion.sat_moving_toi import local_velocity, moved_offsets, moved_points, to_world
from touche._kernels.motion.sat_moving_contact import hull2d, plane_basis


# A candidate point of A n B is a vertex when its active plane normals span 3D: the triple
# product of unit normals must exceed this (1e-6 rad is far above round-off, far below any real
# facet angle of the shapes we build).
RANK_EPS = 1e-6


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
            copy_into(cand[m], qa[i])
            m += 1
    for i in range(nvb):
        if _inside(pa, qa, nva, oa, qb[i, 0], qb[i, 1], qb[i, 2], eps):
            copy_into(cand[m], qb[i])
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
                    copy_into(cand[m], 0.5 * (c1 + c2))
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
        copy_into(pts[j], cand[keep[j]])
    return _classify(pa, qa, oa, pb, qb, ob, pts, nk, eps, out)


@njit(cache=True, nogil=True, inline="always")
def _across_line(pts, i, p0, dx, dy, dz):
    """d x r for r = pts[i] - p0: its length is pts[i]'s distance to the line p0 + s d (unit d)."""
    rx = pts[i, 0] - p0[0]
    ry = pts[i, 1] - p0[1]
    rz = pts[i, 2] - p0[2]
    return dy * rz - dz * ry, dz * rx - dx * rz, dx * ry - dy * rx


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
        copy_into(out[0], p0)
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
        # squared distance to the line as |d x r|^2 (|r|^2 - (r.d)^2 cancels for long r)
        cx, cy, cz = _across_line(pts, i, p0, dx, dy, dz)
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
        copy_into(out[0], pts[ilo])
        copy_into(out[1], pts[ihi])
        return kinds.SET_SEGMENT, 2
    nx, ny, nz = _across_line(pts, far2, p0, dx, dy, dz)
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
        ux, uy, uz, vx, vy, vz = plane_basis(nx, ny, nz)
        xy = np.empty((nk, 2))
        level = p0[0] * nx + p0[1] * ny + p0[2] * nz
        for i in range(nk):
            xy[i, 0] = pts[i, 0] * ux + pts[i, 1] * uy + pts[i, 2] * uz
            xy[i, 1] = pts[i, 0] * vx + pts[i, 1] * vy + pts[i, 2] * vz
        hull, k = hull2d(xy, nk, eps)
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
            copy_into(out[count], pts[i])
            count += 1
    if count < 4:  # never expected; keep every point rather than lose the solid
        for i in range(nk):
            copy_into(out[i], pts[i])
        count = nk
    return kinds.SET_POLYHEDRON, count


def set_capacity(params_a, params_b, edges_a, edges_b):
    """Upper bound on the number of points a contact / intersection set of these shapes returns
    (Python helper for sizing the batch outputs)."""
    nva, npa = int(params_a[0]), int(params_a[1])
    nvb, npb = int(params_b[0]), int(params_b[1])
    return nva + nvb + len(edges_a) * npb + len(edges_b) * npa + len(edges_a) * len(edges_b) + 1


@njit(cache=True, nogil=True)
def intersection_at(pa, pta, eda, ta, va, pb, ptb, edb, tb, vb, t, tolerance):
    """Intersection set of A and B at time t (translations applied): (kind, count, world points)."""
    rel = relative_transform(ta, tb)
    wx, wy, wz = local_velocity(tb, va, vb)
    qa = moved_points(pa, pta, rel, np.array([wx * t, wy * t, wz * t]))
    oa = moved_offsets(pa, qa, int(pa[0]), wx * t, wy * t, wz * t, rel)
    ob = pb[4:4 + int(pb[1])].copy()
    cap = set_capacity_jit(pa, pb, eda, edb)
    local = np.empty((cap, 3))
    kind, count = _intersection_local(pa, qa, oa, eda, pb, ptb, ob, edb, tolerance, local)
    points = np.empty((cap, 3))
    to_world(tb, np.array([vb[0] * t, vb[1] * t, vb[2] * t]), local, count, points)
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
    return intersection_at(pa, pta, eda, ta, zero, pb, ptb, edb, tb, zero, 0.0, tolerance)
