"""Lower bounds of the distance between two nodes of two bounding-volume hierarchies (and between
two triangles): swept-sphere rectangles (RSS, Eberly S1 7; rect_rect_distance and its cheaper
bounds), the OBB projection gaps (Ericson 4.4.1 axes), bounding spheres, and the separating
plane gap of two triangles. The distance searches (bvh_distance, bvh_coherence), the threshold
queries (bvh_threshold) and the clearance kernels prune node pairs with them.

Frames (``rot``, ``trans`` map B's mesh frame into A's), tree layout, descent rule: bvh_descent.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.trees.bvh_volumes import OBB_AXES, OBB_CENTER, OBB_HALF, RSS_LENGTHS, RSS_ORIGIN  # noqa: E402
from touche._kernels.trees.bvh_volumes import RSS_RADIUS, SPHERE_CENTER, SPHERE_RADIUS, moved_point_gap2  # noqa: E402
from touche._kernels.primitives.tri_distance import edges_normal, segment_segment  # noqa: E402


# ---------------------------------------------------------------------------------------------
# distance lower bounds
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _rect_corner(o0, o1, o2, u0, u1, u2, v0, v1, v2, lu, lv, k):
    """Corner k (0..3, in order around the rectangle) of o + [0,lu] u + [0,lv] v, a 3-tuple."""
    su = lu if (k == 1 or k == 2) else 0.0
    sv = lv if k >= 2 else 0.0
    return (o0 + su * u0 + sv * v0, o1 + su * u1 + sv * v1, o2 + su * u2 + sv * v2)


@njit(cache=True, nogil=True)
def _crosses_rect(p, q, o, u, v, n, lu, lv):
    """Segment pq crosses the plane of the rectangle (normal n) strictly, inside the rectangle."""
    dp = (p[0] - o[0]) * n[0] + (p[1] - o[1]) * n[1] + (p[2] - o[2]) * n[2]
    dq = (q[0] - o[0]) * n[0] + (q[1] - o[1]) * n[1] + (q[2] - o[2]) * n[2]
    if not ((dp < 0.0 < dq) or (dq < 0.0 < dp)):
        return False
    t = dp / (dp - dq)
    x0 = p[0] + t * (q[0] - p[0]) - o[0]
    x1 = p[1] + t * (q[1] - p[1]) - o[1]
    x2 = p[2] + t * (q[2] - p[2]) - o[2]
    a = x0 * u[0] + x1 * u[1] + x2 * u[2]
    b = x0 * v[0] + x1 * v[1] + x2 * v[2]
    return 0.0 <= a <= lu and 0.0 <= b <= lv


@njit(cache=True, nogil=True)
def _point_rect_sq(p, o, u, v, lu, lv):
    x0 = p[0] - o[0]
    x1 = p[1] - o[1]
    x2 = p[2] - o[2]
    a = min(max(x0 * u[0] + x1 * u[1] + x2 * u[2], 0.0), lu)
    b = min(max(x0 * v[0] + x1 * v[1] + x2 * v[2], 0.0), lv)
    y0 = x0 - a * u[0] - b * v[0]
    y1 = x1 - a * u[1] - b * v[1]
    y2 = x2 - a * u[2] - b * v[2]
    return y0 * y0 + y1 * y1 + y2 * y2


@njit(cache=True, nogil=True)
def _corner(ca, cb, k):
    if k < 4:
        return ca[k]
    return cb[k - 4]


@njit(cache=True, nogil=True)
def rect_rect_distance(oa, ua, va, lua, lva, ob, ub, vb, lub, lvb, stop_below):
    """Exact distance between two solid rectangles o + [0,lu] u + [0,lv] v (unit u, v; all
    3-tuples) in one frame. 0 when an edge of one crosses the other; otherwise the closest pair
    of two disjoint convex polygons has a point on an edge of each, or a vertex of one against the
    other's face (an edge parallel to the other's plane reaches it at an endpoint too), so the 16
    edge-edge and 8 vertex-rectangle distances are complete.
    Early exit: once some candidate is closer than ``stop_below`` that candidate's distance is
    returned (an upper estimate of the exact distance, below ``stop_below``): callers that only
    need to know whether the distance reaches ``stop_below`` skip the other candidates."""
    stop_sq = stop_below * stop_below if stop_below > 0.0 else -1.0
    ca = (_rect_corner(oa[0], oa[1], oa[2], ua[0], ua[1], ua[2], va[0], va[1], va[2], lua, lva, 0),
          _rect_corner(oa[0], oa[1], oa[2], ua[0], ua[1], ua[2], va[0], va[1], va[2], lua, lva, 1),
          _rect_corner(oa[0], oa[1], oa[2], ua[0], ua[1], ua[2], va[0], va[1], va[2], lua, lva, 2),
          _rect_corner(oa[0], oa[1], oa[2], ua[0], ua[1], ua[2], va[0], va[1], va[2], lua, lva, 3))
    cb = (_rect_corner(ob[0], ob[1], ob[2], ub[0], ub[1], ub[2], vb[0], vb[1], vb[2], lub, lvb, 0),
          _rect_corner(ob[0], ob[1], ob[2], ub[0], ub[1], ub[2], vb[0], vb[1], vb[2], lub, lvb, 1),
          _rect_corner(ob[0], ob[1], ob[2], ub[0], ub[1], ub[2], vb[0], vb[1], vb[2], lub, lvb, 2),
          _rect_corner(ob[0], ob[1], ob[2], ub[0], ub[1], ub[2], vb[0], vb[1], vb[2], lub, lvb, 3))
    na = (ua[1] * va[2] - ua[2] * va[1], ua[2] * va[0] - ua[0] * va[2], ua[0] * va[1] - ua[1] * va[0])
    nb = (ub[1] * vb[2] - ub[2] * vb[1], ub[2] * vb[0] - ub[0] * vb[2], ub[0] * vb[1] - ub[1] * vb[0])
    for k in range(4):
        if _crosses_rect(cb[k], cb[(k + 1) % 4], oa, ua, va, na, lua, lva):
            return 0.0
        if _crosses_rect(ca[k], ca[(k + 1) % 4], ob, ub, vb, nb, lub, lvb):
            return 0.0
    best = np.inf
    for k in range(4):
        best = min(best, _point_rect_sq(cb[k], oa, ua, va, lua, lva))
        best = min(best, _point_rect_sq(ca[k], ob, ub, vb, lub, lvb))
    if best < stop_sq:
        return np.sqrt(best)
    for i in range(4):
        p = ca[i]
        q = ca[(i + 1) % 4]
        for j in range(4):
            r = cb[j]
            t = cb[(j + 1) % 4]
            d, _, _ = segment_segment(p[0], p[1], p[2], q[0], q[1], q[2], r[0], r[1], r[2], t[0], t[1], t[2])
            best = min(best, d)
            if best < stop_sq:
                return np.sqrt(best)
    return np.sqrt(best)


@njit(cache=True, nogil=True)
def _sphere_bound(nb_a, ia, nb_b, ib, rot, trans):
    d2 = moved_point_gap2(nb_a, ia, nb_b, ib, rot, trans, SPHERE_CENTER)
    return np.sqrt(d2) - nb_a[ia, SPHERE_RADIUS] - nb_b[ib, SPHERE_RADIUS]


@njit(cache=True, nogil=True)
def rss_lower_bound(nb_a, ia, nb_b, ib, rot, trans, best):
    """``(bound, key)``: ``bound`` a valid lower bound of the distance between the contents of A's
    node ia and B's node ib, ``key`` the value to order the search by. The sphere bound first;
    when it cannot prune (< ``best``), the exact distance of the two RSS rectangles minus both
    radii (tight for the flat clusters meshes are made of), computed only as far as needed to
    tell whether it reaches ``best``: if not, ``bound`` stays the sphere bound and ``key`` is the
    rectangle estimate."""
    bound = _sphere_bound(nb_a, ia, nb_b, ib, rot, trans)
    if bound >= best:
        return bound, bound
    radii = nb_a[ia, RSS_RADIUS] + nb_b[ib, RSS_RADIUS]
    x = nb_b[ib, RSS_ORIGIN]
    y = nb_b[ib, RSS_ORIGIN + 1]
    z = nb_b[ib, RSS_ORIGIN + 2]
    ob = (rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z + trans[0],
          rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z + trans[1],
          rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z + trans[2])
    x = nb_b[ib, OBB_AXES]
    y = nb_b[ib, OBB_AXES + 1]
    z = nb_b[ib, OBB_AXES + 2]
    ub = (rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z, rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z,
          rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z)
    x = nb_b[ib, OBB_AXES + 3]
    y = nb_b[ib, OBB_AXES + 4]
    z = nb_b[ib, OBB_AXES + 5]
    vb = (rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z, rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z,
          rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z)
    oa = (nb_a[ia, RSS_ORIGIN], nb_a[ia, RSS_ORIGIN + 1], nb_a[ia, RSS_ORIGIN + 2])
    ua = (nb_a[ia, OBB_AXES], nb_a[ia, OBB_AXES + 1], nb_a[ia, OBB_AXES + 2])
    va = (nb_a[ia, OBB_AXES + 3], nb_a[ia, OBB_AXES + 4], nb_a[ia, OBB_AXES + 5])
    stop = best + radii if best < np.inf else 0.0
    rect = rect_rect_distance(oa, ua, va, nb_a[ia, RSS_LENGTHS], nb_a[ia, RSS_LENGTHS + 1],
                              ob, ub, vb, nb_b[ib, RSS_LENGTHS], nb_b[ib, RSS_LENGTHS + 1], stop)
    key = max(bound, rect - radii)
    if rect < stop:  # early exit: rect is an upper estimate, not a bound
        return bound, key
    return key, key


@njit(cache=True, nogil=True)
def _support_gap(dx, dy, dz, ha0, ha1, t0, t1, t2, u0, u1, u2, v0, v1, v2, hb0, hb1):
    """Gap of the projections of rectangles A (center 0, axes x, y, half sides ha0, ha1) and B
    (center t, unit axes u, v, half sides hb0, hb1) on direction d (any length > 0), divided by
    |d|: min over B of d.x - max over A of d.x. Always a lower bound of their distance; equal to
    it when d joins a closest pair (Ericson 5.2.1: a separating direction)."""
    du = dx * u0 + dy * u1 + dz * u2
    dv = dx * v0 + dy * v1 + dz * v2
    low_b = dx * t0 + dy * t1 + dz * t2 - hb0 * abs(du) - hb1 * abs(dv)
    high_a = ha0 * abs(dx) + ha1 * abs(dy)
    return (low_b - high_a) / np.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, nogil=True)
def rect_distance_bounds(ha0, ha1, t0, t1, t2, u0, u1, u2, v0, v1, v2, hb0, hb1, lower, stop):
    """Distance of two rectangles in A's frame -- A centered at the origin in the plane z = 0
    with half sides ha0 (x), ha1 (y); B centered at t with unit axes u, v and half sides hb0,
    hb1 -- as bounds ``(lower, upper)``, computed only as far as needed to compare with
    ``stop``: it returns once ``upper < stop`` (cannot reach it), ``lower >= stop`` (reaches it)
    or ``lower >= upper`` (exact); ``stop`` NaN: the exact distance (lower == upper).

    The candidates of the complete enumeration (two disjoint convex polygons: a vertex of one
    against the other's face, or an edge of each; 0 when an edge crosses the other polygon)
    each give an upper bound |D| (D joins their closest points) and, through the projections on
    D (_support_gap), a lower bound; the true closest pair certifies itself (both bounds meet),
    usually among the first candidates, so most calls stop early (the enumeration of
    rect_rect_distance always runs to the end when the distance reaches its threshold).
    ``lower``: a known lower bound (e.g. a separating-axis gap; > 0 skips the crossing tests)."""
    upper = np.inf
    n0 = u1 * v2 - u2 * v1  # B's normal
    n1 = u2 * v0 - u0 * v2
    n2 = u0 * v1 - u1 * v0
    # corners, in order around: A's in A's frame, B's in A's frame and A's in B's frame
    x0 = hb0 * u0
    x1 = hb0 * u1
    x2 = hb0 * u2
    y0 = hb1 * v0
    y1 = hb1 * v1
    y2 = hb1 * v2
    q00 = t0 - x0 - y0
    q01 = t1 - x1 - y1
    q02 = t2 - x2 - y2
    q10 = t0 + x0 - y0
    q11 = t1 + x1 - y1
    q12 = t2 + x2 - y2
    q20 = t0 + x0 + y0
    q21 = t1 + x1 + y1
    q22 = t2 + x2 + y2
    q30 = t0 - x0 + y0
    q31 = t1 - x1 + y1
    q32 = t2 - x2 + y2
    qb = ((q00, q01, q02), (q10, q11, q12), (q20, q21, q22), (q30, q31, q32))
    ca = ((-ha0, -ha1, 0.0), (ha0, -ha1, 0.0), (ha0, ha1, 0.0), (-ha0, ha1, 0.0))
    # A's corners in B's frame (u, v, n coordinates about B's center)
    wb0 = ((-ha0 - t0) * u0 + (-ha1 - t1) * u1 - t2 * u2, (-ha0 - t0) * v0 + (-ha1 - t1) * v1 - t2 * v2,
          (-ha0 - t0) * n0 + (-ha1 - t1) * n1 - t2 * n2)
    wb1 = ((ha0 - t0) * u0 + (-ha1 - t1) * u1 - t2 * u2, (ha0 - t0) * v0 + (-ha1 - t1) * v1 - t2 * v2,
           (ha0 - t0) * n0 + (-ha1 - t1) * n1 - t2 * n2)
    wb2 = ((ha0 - t0) * u0 + (ha1 - t1) * u1 - t2 * u2, (ha0 - t0) * v0 + (ha1 - t1) * v1 - t2 * v2,
           (ha0 - t0) * n0 + (ha1 - t1) * n1 - t2 * n2)
    wb3 = ((-ha0 - t0) * u0 + (ha1 - t1) * u1 - t2 * u2, (-ha0 - t0) * v0 + (ha1 - t1) * v1 - t2 * v2,
           (-ha0 - t0) * n0 + (ha1 - t1) * n1 - t2 * n2)
    wa = (wb0, wb1, wb2, wb3)
    if not lower > 0.0:
        # an edge of one crossing the other rectangle (strict sign change of the plane side)
        for k in range(4):
            p = qb[k]
            q = qb[(k + 1) % 4]
            if (p[2] < 0.0 < q[2]) or (q[2] < 0.0 < p[2]):
                s = p[2] / (p[2] - q[2])
                if abs(p[0] + s * (q[0] - p[0])) <= ha0 and abs(p[1] + s * (q[1] - p[1])) <= ha1:
                    return 0.0, 0.0
            p = wa[k]
            q = wa[(k + 1) % 4]
            if (p[2] < 0.0 < q[2]) or (q[2] < 0.0 < p[2]):
                s = p[2] / (p[2] - q[2])
                if abs(p[0] + s * (q[0] - p[0])) <= hb0 and abs(p[1] + s * (q[1] - p[1])) <= hb1:
                    return 0.0, 0.0
    # a vertex above the other's face: D along that face's normal
    for k in range(4):
        p = qb[k]
        if abs(p[0]) <= ha0 and abs(p[1]) <= ha1:
            d = abs(p[2])
            if d < upper:
                upper = d
            if d > 0.0:
                lower = max(lower, _support_gap(0.0, 0.0, p[2], ha0, ha1, t0, t1, t2, u0, u1, u2, v0, v1, v2, hb0, hb1))
            else:
                return 0.0, 0.0
        w = wa[k]
        if abs(w[0]) <= hb0 and abs(w[1]) <= hb1:
            d = abs(w[2])
            if d < upper:
                upper = d
            if d > 0.0:  # from A's vertex to its foot on B: -w_n n
                lower = max(lower, _support_gap(-w[2] * n0, -w[2] * n1, -w[2] * n2, ha0, ha1, t0, t1, t2, u0, u1,
                                                u2, v0, v1, v2, hb0, hb1))
            else:
                return 0.0, 0.0
        if upper < stop or lower >= stop or lower >= upper:
            return min(lower, upper), upper
    # edge pairs
    for i in range(4):
        p = ca[i]
        q = ca[(i + 1) % 4]
        for j in range(4):
            r = qb[j]
            w = qb[(j + 1) % 4]
            d2, x, y = segment_segment(p[0], p[1], p[2], q[0], q[1], q[2], r[0], r[1], r[2], w[0], w[1], w[2])
            d = np.sqrt(d2)
            if d < upper:
                upper = d
            if d > 0.0:
                lower = max(lower, _support_gap(y[0] - x[0], y[1] - x[1], y[2] - x[2], ha0, ha1, t0, t1, t2, u0, u1,
                                                u2, v0, v1, v2, hb0, hb1))
            else:
                return 0.0, 0.0
            if upper < stop or lower >= stop or lower >= upper:
                return min(lower, upper), upper
    return upper, upper  # the enumeration is complete: the minimum is the distance


@njit(cache=True, nogil=True)
def rss_pair_bound(nb_a, ia, nb_b, ib, rot, trans, best):
    """``(bound, key)`` as rss_lower_bound, cheaper: the sphere bound; then the separating-axis
    gaps of the two RSS rectangles (flat boxes: the 2 + 2 face-plane axes... all 6 face axes
    and the 4 edge-edge cross axes, each gap divided by its axis length: a valid lower bound of
    the rectangles' distance, exact when their closest features are a vertex and a face or two
    edge interiors); only when those do not reach ``best`` the exact rectangle distance (with
    its early exit) for a tighter bound and the search order."""
    bound = _sphere_bound(nb_a, ia, nb_b, ib, rot, trans)
    if bound >= best:
        return bound, bound
    radii = nb_a[ia, RSS_RADIUS] + nb_b[ib, RSS_RADIUS]
    # A's rectangle frame (a0, a1, a2 = a0 x a1) and B's moved into A's mesh frame
    a00 = nb_a[ia, OBB_AXES]
    a01 = nb_a[ia, OBB_AXES + 1]
    a02 = nb_a[ia, OBB_AXES + 2]
    a10 = nb_a[ia, OBB_AXES + 3]
    a11 = nb_a[ia, OBB_AXES + 4]
    a12 = nb_a[ia, OBB_AXES + 5]
    a20 = a01 * a12 - a02 * a11
    a21 = a02 * a10 - a00 * a12
    a22 = a00 * a11 - a01 * a10
    x = nb_b[ib, OBB_AXES]
    y = nb_b[ib, OBB_AXES + 1]
    z = nb_b[ib, OBB_AXES + 2]
    b00 = rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z
    b01 = rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z
    b02 = rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z
    x = nb_b[ib, OBB_AXES + 3]
    y = nb_b[ib, OBB_AXES + 4]
    z = nb_b[ib, OBB_AXES + 5]
    b10 = rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z
    b11 = rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z
    b12 = rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z
    b20 = b01 * b12 - b02 * b11
    b21 = b02 * b10 - b00 * b12
    b22 = b00 * b11 - b01 * b10
    ha0 = 0.5 * nb_a[ia, RSS_LENGTHS]
    ha1 = 0.5 * nb_a[ia, RSS_LENGTHS + 1]
    hb0 = 0.5 * nb_b[ib, RSS_LENGTHS]
    hb1 = 0.5 * nb_b[ib, RSS_LENGTHS + 1]
    # rectangle centers: A's in A's frame, B's moved
    x = nb_b[ib, RSS_ORIGIN]
    y = nb_b[ib, RSS_ORIGIN + 1]
    z = nb_b[ib, RSS_ORIGIN + 2]
    dx = rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z + trans[0] + hb0 * b00 + hb1 * b10
    dy = rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z + trans[1] + hb0 * b01 + hb1 * b11
    dz = rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z + trans[2] + hb0 * b02 + hb1 * b12
    dx -= nb_a[ia, RSS_ORIGIN] + ha0 * a00 + ha1 * a10
    dy -= nb_a[ia, RSS_ORIGIN + 1] + ha0 * a01 + ha1 * a11
    dz -= nb_a[ia, RSS_ORIGIN + 2] + ha0 * a02 + ha1 * a12
    t0 = dx * a00 + dy * a01 + dz * a02
    t1 = dx * a10 + dy * a11 + dz * a12
    t2 = dx * a20 + dy * a21 + dz * a22
    r00 = a00 * b00 + a01 * b01 + a02 * b02
    r01 = a00 * b10 + a01 * b11 + a02 * b12
    r02 = a00 * b20 + a01 * b21 + a02 * b22
    r10 = a10 * b00 + a11 * b01 + a12 * b02
    r11 = a10 * b10 + a11 * b11 + a12 * b12
    r12 = a10 * b20 + a11 * b21 + a12 * b22
    r20 = a20 * b00 + a21 * b01 + a22 * b02
    r21 = a20 * b10 + a21 * b11 + a22 * b12
    r22 = a20 * b20 + a21 * b21 + a22 * b22
    # face axes (unit): A's normal first (the usual separating direction of stacked clusters)
    gap = abs(t2) - hb0 * abs(r20) - hb1 * abs(r21)
    gap = max(gap, abs(t0 * r02 + t1 * r12 + t2 * r22) - ha0 * abs(r02) - ha1 * abs(r12))
    gap = max(gap, abs(t0) - ha0 - hb0 * abs(r00) - hb1 * abs(r01))
    gap = max(gap, abs(t1) - ha1 - hb0 * abs(r10) - hb1 * abs(r11))
    gap = max(gap, abs(t0 * r00 + t1 * r10 + t2 * r20) - ha0 * abs(r00) - ha1 * abs(r10) - hb0)
    gap = max(gap, abs(t0 * r01 + t1 * r11 + t2 * r21) - ha0 * abs(r01) - ha1 * abs(r11) - hb1)
    # the line through the rectangle centres (unit d / |d|): the tight axis when the nodes are far
    # apart compared with their sizes, where no face axis is (far-apart meshes: every node pair
    # then has a sphere bound just below the best distance)
    length2 = t0 * t0 + t1 * t1 + t2 * t2
    if length2 > 0.0:
        length = np.sqrt(length2)
        gap = max(gap, (length2 - ha0 * abs(t0) - ha1 * abs(t1) - hb0 * abs(t0 * r00 + t1 * r10 + t2 * r20)
                        - hb1 * abs(t0 * r01 + t1 * r11 + t2 * r21)) / length)
    if gap - radii >= best:  # the face axes prune: skip the square roots of the edge axes
        return max(bound, gap - radii), max(bound, gap - radii)
    # edge x edge axes a_i x b_j (i, j in {0, 1}), |a_i x b_j| = sqrt(1 - r_ij^2) (Ericson 4.4.1
    # with the normal half extents 0); near-parallel edges are covered by the face axes
    s = 1.0 - r00 * r00
    if s > 1e-12:
        gap = max(gap, (abs(t2 * r10 - t1 * r20) - ha1 * abs(r20) - hb1 * abs(r02)) / np.sqrt(s))
    s = 1.0 - r01 * r01
    if s > 1e-12:
        gap = max(gap, (abs(t2 * r11 - t1 * r21) - ha1 * abs(r21) - hb0 * abs(r02)) / np.sqrt(s))
    s = 1.0 - r10 * r10
    if s > 1e-12:
        gap = max(gap, (abs(t0 * r20 - t2 * r00) - ha0 * abs(r20) - hb1 * abs(r12)) / np.sqrt(s))
    s = 1.0 - r11 * r11
    if s > 1e-12:
        gap = max(gap, (abs(t0 * r21 - t2 * r01) - ha0 * abs(r21) - hb0 * abs(r12)) / np.sqrt(s))
    gap -= radii
    if gap > bound:
        bound = gap
    if bound >= best:
        return bound, bound
    # the rectangles' distance, as far as needed: exact while no best exists (NaN stop)
    stop = best + radii if best < np.inf else np.nan
    low, high = rect_distance_bounds(ha0, ha1, t0, t1, t2, r00, r10, r20, r01, r11, r21, hb0, hb1,
                                     gap + radii, stop)
    bound = max(bound, low - radii)
    return bound, max(bound, high - radii)


@njit(cache=True, nogil=True)
def obb_pair_gap(bounds_a, a, bounds_b, b, rot, trans):
    """A lower bound of the distance between the contents of node a (part A) and node b (part B):
    the largest of the sphere gap and the separations of the two oriented boxes along the six
    box axes and along the line through the box centres (each a separating-axis gap, Ericson
    4.4.1, hence at most the distance). Returns ``(gap, distance between the box centres)``."""
    # sphere gap
    s0 = bounds_b[b, SPHERE_CENTER]
    s1 = bounds_b[b, SPHERE_CENTER + 1]
    s2 = bounds_b[b, SPHERE_CENTER + 2]
    g0 = rot[0, 0] * s0 + rot[0, 1] * s1 + rot[0, 2] * s2 + trans[0] - bounds_a[a, SPHERE_CENTER]
    g1 = rot[1, 0] * s0 + rot[1, 1] * s1 + rot[1, 2] * s2 + trans[1] - bounds_a[a, SPHERE_CENTER + 1]
    g2 = rot[2, 0] * s0 + rot[2, 1] * s1 + rot[2, 2] * s2 + trans[2] - bounds_a[a, SPHERE_CENTER + 2]
    gap = np.sqrt(g0 * g0 + g1 * g1 + g2 * g2) - bounds_a[a, SPHERE_RADIUS] - bounds_b[b, SPHERE_RADIUS]
    # B's box centre in A's frame, and the offset w between the box centres
    cb0 = bounds_b[b, OBB_CENTER]
    cb1 = bounds_b[b, OBB_CENTER + 1]
    cb2 = bounds_b[b, OBB_CENTER + 2]
    w0 = rot[0, 0] * cb0 + rot[0, 1] * cb1 + rot[0, 2] * cb2 + trans[0] - bounds_a[a, OBB_CENTER]
    w1 = rot[1, 0] * cb0 + rot[1, 1] * cb1 + rot[1, 2] * cb2 + trans[1] - bounds_a[a, OBB_CENTER + 1]
    w2 = rot[2, 0] * cb0 + rot[2, 1] * cb1 + rot[2, 2] * cb2 + trans[2] - bounds_a[a, OBB_CENTER + 2]
    length = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    d0 = bounds_a[a, OBB_AXES] * w0 + bounds_a[a, OBB_AXES + 1] * w1 + bounds_a[a, OBB_AXES + 2] * w2
    d1 = bounds_a[a, OBB_AXES + 3] * w0 + bounds_a[a, OBB_AXES + 4] * w1 + bounds_a[a, OBB_AXES + 5] * w2
    d2 = bounds_a[a, OBB_AXES + 6] * w0 + bounds_a[a, OBB_AXES + 7] * w1 + bounds_a[a, OBB_AXES + 8] * w2
    # C[i, k] = |(axis i of box a) . (axis k of box b, rotated into A's frame)|; e_k = w . (that axis)
    c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = 0.0
    e0 = e1 = e2 = 0.0
    for k in range(3):
        y0 = bounds_b[b, OBB_AXES + 3 * k]
        y1 = bounds_b[b, OBB_AXES + 3 * k + 1]
        y2 = bounds_b[b, OBB_AXES + 3 * k + 2]
        v0 = rot[0, 0] * y0 + rot[0, 1] * y1 + rot[0, 2] * y2
        v1 = rot[1, 0] * y0 + rot[1, 1] * y1 + rot[1, 2] * y2
        v2 = rot[2, 0] * y0 + rot[2, 1] * y1 + rot[2, 2] * y2
        x0 = abs(bounds_a[a, OBB_AXES] * v0 + bounds_a[a, OBB_AXES + 1] * v1 + bounds_a[a, OBB_AXES + 2] * v2)
        x1 = abs(bounds_a[a, OBB_AXES + 3] * v0 + bounds_a[a, OBB_AXES + 4] * v1 + bounds_a[a, OBB_AXES + 5] * v2)
        x2 = abs(bounds_a[a, OBB_AXES + 6] * v0 + bounds_a[a, OBB_AXES + 7] * v1 + bounds_a[a, OBB_AXES + 8] * v2)
        ek = w0 * v0 + w1 * v1 + w2 * v2
        if k == 0:
            c00, c10, c20, e0 = x0, x1, x2, ek
        elif k == 1:
            c01, c11, c21, e1 = x0, x1, x2, ek
        else:
            c02, c12, c22, e2 = x0, x1, x2, ek
    ha0 = bounds_a[a, OBB_HALF]
    ha1 = bounds_a[a, OBB_HALF + 1]
    ha2 = bounds_a[a, OBB_HALF + 2]
    hb0 = bounds_b[b, OBB_HALF]
    hb1 = bounds_b[b, OBB_HALF + 1]
    hb2 = bounds_b[b, OBB_HALF + 2]
    gap = max(gap, abs(d0) - ha0 - (c00 * hb0 + c01 * hb1 + c02 * hb2))
    gap = max(gap, abs(d1) - ha1 - (c10 * hb0 + c11 * hb1 + c12 * hb2))
    gap = max(gap, abs(d2) - ha2 - (c20 * hb0 + c21 * hb1 + c22 * hb2))
    gap = max(gap, abs(e0) - hb0 - (c00 * ha0 + c10 * ha1 + c20 * ha2))
    gap = max(gap, abs(e1) - hb1 - (c01 * ha0 + c11 * ha1 + c21 * ha2))
    gap = max(gap, abs(e2) - hb2 - (c02 * ha0 + c12 * ha1 + c22 * ha2))
    if length > 0.0:  # the line through the centres
        gap = max(gap, length - (abs(d0) * ha0 + abs(d1) * ha1 + abs(d2) * ha2
                                 + abs(e0) * hb0 + abs(e1) * hb1 + abs(e2) * hb2) / length)
    return gap, length


@njit(cache=True, nogil=True)
def pair_lower_bound(nb_a, ia, nb_b, ib, rot, trans, best):
    """``(bound, key)`` of a node pair for a distance search (branch and bound): the oriented
    boxes' gap (obb_pair_gap: cheap, and tight when the nodes are far apart compared with their
    sizes), then, when that does not reach ``best``, rss_pair_bound (the swept-sphere
    rectangles: tight for the flat clusters of surfaces near contact). Either bound alone was
    slower on the benchmark panel: the boxes alone 1.5x the time of both over its meshes, the
    rectangles alone up to 2x on far poses (touche.clearance's search; touche.bvh's distance,
    whose leaf tests differ, measured no faster with it and keeps rss_pair_bound)."""
    gap = obb_pair_gap(nb_a, ia, nb_b, ib, rot, trans)[0]
    if gap >= best:
        return gap, gap
    bound, key = rss_pair_bound(nb_a, ia, nb_b, ib, rot, trans, best)
    if gap > bound:
        return gap, max(key, gap)
    return bound, key


@njit(cache=True, nogil=True)
def _plane_gap(A, B):
    """How far B's vertices lie beyond A's plane on one side (0 if they straddle it or A has no
    area): a lower bound of the distance of triangles A and B (9-tuples)."""
    e0, e1, e2, f0, f1, f2, nx, ny, nz = edges_normal(A)
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    if not nn > 0.0:
        return 0.0
    # A's own projections are 0 only up to the rounding of n (large for needle triangles): use
    # the real interval of A along n, so the gap stays a bound for any computed n
    a1 = e0 * nx + e1 * ny + e2 * nz
    a2 = f0 * nx + f1 * ny + f2 * nz
    s0 = (B[0] - A[0]) * nx + (B[1] - A[1]) * ny + (B[2] - A[2]) * nz
    s1 = (B[3] - A[0]) * nx + (B[4] - A[1]) * ny + (B[5] - A[2]) * nz
    s2 = (B[6] - A[0]) * nx + (B[7] - A[1]) * ny + (B[8] - A[2]) * nz
    lo_a = min(0.0, min(a1, a2))
    hi_a = max(0.0, max(a1, a2))
    return max(min(s0, min(s1, s2)) - hi_a, lo_a - max(s0, max(s1, s2))) / nn


@njit(cache=True, nogil=True)
def triangle_gap(A, B):
    """A cheap lower bound of the distance of triangles A and B (9-tuples): the larger of the
    gap of their boxes and the plane gaps both ways. At the leaves of a distance query most
    triangle pairs are already farther than the best pair found (measured on diff_ring.stl:
    ~99 %); this bound skips about half of them for ~1/6 of the exact test's cost."""
    gx = max(min(A[0], min(A[3], A[6])) - max(B[0], max(B[3], B[6])),
             min(B[0], min(B[3], B[6])) - max(A[0], max(A[3], A[6])), 0.0)
    gy = max(min(A[1], min(A[4], A[7])) - max(B[1], max(B[4], B[7])),
             min(B[1], min(B[4], B[7])) - max(A[1], max(A[4], A[7])), 0.0)
    gz = max(min(A[2], min(A[5], A[8])) - max(B[2], max(B[5], B[8])),
             min(B[2], min(B[5], B[8])) - max(A[2], max(A[5], A[8])), 0.0)
    return max(np.sqrt(gx * gx + gy * gy + gz * gz), max(_plane_gap(A, B), _plane_gap(B, A)))


@njit(cache=True, nogil=True)
def axis_pair_gap(nb_a, ia, nb_b, ib, n0, n1, n2, m0, m1, m2, tn):
    """Gap of the oriented boxes of A's node ia and B's node ib along the unit direction n (A's
    frame): min over B's box of n.x - max over A's box of n.x, a lower bound of the distance of
    their contents for any unit n (a separating-axis gap, Ericson 4.4.1). B's box is projected in
    its own frame: ``m = rot^T n``, ``tn = trans . n``."""
    return (tn - box_support(nb_b, ib, -m0, -m1, -m2)) - box_support(nb_a, ia, n0, n1, n2)


@njit(cache=True, nogil=True, inline="always")
def box_support(nb, node, d0, d1, d2):
    """Largest d.x over the oriented box of ``node`` (d in the node's mesh frame)."""
    return (nb[node, OBB_CENTER] * d0 + nb[node, OBB_CENTER + 1] * d1 + nb[node, OBB_CENTER + 2] * d2
            + nb[node, OBB_HALF] * abs(nb[node, OBB_AXES] * d0 + nb[node, OBB_AXES + 1] * d1 + nb[node, OBB_AXES + 2] * d2)
            + nb[node, OBB_HALF + 1] * abs(nb[node, OBB_AXES + 3] * d0 + nb[node, OBB_AXES + 4] * d1
                                           + nb[node, OBB_AXES + 5] * d2)
            + nb[node, OBB_HALF + 2] * abs(nb[node, OBB_AXES + 6] * d0 + nb[node, OBB_AXES + 7] * d1
                                           + nb[node, OBB_AXES + 8] * d2))
