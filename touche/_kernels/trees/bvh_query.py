"""Traversals of two bounding-volume hierarchies (layout: bvh_build.py): overlapping triangle
pairs (boolean / all pairs, resumable, with S1 7.1 depth limits) and the distance with closest
points (branch and bound). Ericson 6.3 (descent rules, iterative traversal with an explicit
stack), 6.4 (OBB trees); Eberly S1 7.

Frames: tree A in its mesh frame, tree B in its own; ``rot (3, 3)``, ``trans (3,)`` map B's mesh
frame into A's (``x_A = rot @ x_B + trans``). Everything is computed in A's mesh frame.

Descent rule: at a node pair one node is split, never both (erratum S1 L2426-2461: descending
both trees at one pair reports leaf pairs several times): the one with the larger bounding
sphere, unless it is a leaf (or at its depth limit). Every pair of leaves is thus visited at
most once, and every reported pair is reported exactly once.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit

from touche._kernels.trees.bvh_build import (  # noqa: E402
    AABB_MAX,
    AABB_MIN,
    OBB_AXES,
    OBB_CENTER,
    OBB_HALF,
    RSS_LENGTHS,
    RSS_ORIGIN,
    RSS_RADIUS,
    SPHERE_CENTER,
    SPHERE_RADIUS,
)
from touche._kernels.primitives.closest import closest_points_triangle_triangle  # noqa: E402
from touche._kernels.primitives.overlap import obb_obb_overlap_relative  # noqa: E402
from touche._kernels.base.posecheck import is_rigid_transform  # noqa: E402
from touche._kernels.primitives.sat_boxes import triangle_obb_overlap  # noqa: E402
from touche._kernels.primitives.sat_triangles import triangle_triangle_overlap  # noqa: E402
from touche._kernels.primitives.tri_distance import (  # noqa: E402
    edges_normal,
    load_moved_triangle,
    load_triangle,
    segment_segment,
    triangle_distance_sq,
)

BV_OBB = 0
BV_AABB = 1
BV_SPHERE = 2
BV_RSS = 3
BV_KDOP = 4

OBB_EPSILON = 1e-12  # Ericson 4.4.2: |R_ij| + eps keeps near-parallel edge axes from separating

# out rows of tree_collide: [item_a, item_b, a_is_node, b_is_node]
ITEM_TRIANGLE = 0
ITEM_NODE = 1


# ---------------------------------------------------------------------------------------------
# node-pair tests in A's frame
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def obb_overlap(ca0, ca1, ca2, a, ha0, ha1, ha2, cb0, cb1, cb2, b, hb0, hb1, hb2):
    """15-axis SAT of two OBBs given in the same frame; ``a``, ``b`` are (9,) row-major axes
    (rows = unit axes). Closed: touching overlaps. B in A's frame here, the test itself is
    overlap.obb_obb_overlap_relative."""
    dx = cb0 - ca0
    dy = cb1 - ca1
    dz = cb2 - ca2
    t0 = dx * a[0] + dy * a[1] + dz * a[2]
    t1 = dx * a[3] + dy * a[4] + dz * a[5]
    t2 = dx * a[6] + dy * a[7] + dz * a[8]
    r00 = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    r01 = a[0] * b[3] + a[1] * b[4] + a[2] * b[5]
    r02 = a[0] * b[6] + a[1] * b[7] + a[2] * b[8]
    r10 = a[3] * b[0] + a[4] * b[1] + a[5] * b[2]
    r11 = a[3] * b[3] + a[4] * b[4] + a[5] * b[5]
    r12 = a[3] * b[6] + a[4] * b[7] + a[5] * b[8]
    r20 = a[6] * b[0] + a[7] * b[1] + a[8] * b[2]
    r21 = a[6] * b[3] + a[7] * b[4] + a[8] * b[5]
    r22 = a[6] * b[6] + a[7] * b[7] + a[8] * b[8]
    return obb_obb_overlap_relative((t0, t1, t2), (r00, r01, r02, r10, r11, r12, r20, r21, r22),
                                    (ha0, ha1, ha2), (hb0, hb1, hb2), OBB_EPSILON)


@njit(cache=True, nogil=True)
def _node_obb_b(nb_b, ib, rot, trans, cb, ub):
    """OBB of B's node ib moved into A's frame: center -> cb (3,), axis rows -> ub (9,)."""
    for i in range(3):
        cb[i] = (rot[i, 0] * nb_b[ib, OBB_CENTER] + rot[i, 1] * nb_b[ib, OBB_CENTER + 1]
                 + rot[i, 2] * nb_b[ib, OBB_CENTER + 2] + trans[i])
    for r in range(3):
        x = nb_b[ib, OBB_AXES + 3 * r]
        y = nb_b[ib, OBB_AXES + 3 * r + 1]
        z = nb_b[ib, OBB_AXES + 3 * r + 2]
        for i in range(3):
            ub[3 * r + i] = rot[i, 0] * x + rot[i, 1] * y + rot[i, 2] * z


@njit(cache=True, nogil=True)
def _nodes_overlap(nb_a, ia, nb_b, ib, rot, trans, bv, cb, ub, identity):
    if bv == BV_SPHERE:
        d2 = 0.0
        for i in range(3):
            c = (rot[i, 0] * nb_b[ib, SPHERE_CENTER] + rot[i, 1] * nb_b[ib, SPHERE_CENTER + 1]
                 + rot[i, 2] * nb_b[ib, SPHERE_CENTER + 2] + trans[i])
            d = c - nb_a[ia, SPHERE_CENTER + i]
            d2 += d * d
        r = nb_a[ia, SPHERE_RADIUS] + nb_b[ib, SPHERE_RADIUS]
        return d2 <= r * r
    if bv == BV_AABB:
        # B's box is an OBB with the axes of rot in A's frame; A's box is axis-aligned
        for i in range(3):
            c = 0.0
            for k in range(3):
                c += rot[i, k] * 0.5 * (nb_b[ib, AABB_MIN + k] + nb_b[ib, AABB_MAX + k])
            cb[i] = c + trans[i]
        for r in range(3):
            for i in range(3):
                ub[3 * r + i] = rot[i, r]
        return obb_overlap(
            0.5 * (nb_a[ia, AABB_MIN] + nb_a[ia, AABB_MAX]), 0.5 * (nb_a[ia, AABB_MIN + 1] + nb_a[ia, AABB_MAX + 1]),
            0.5 * (nb_a[ia, AABB_MIN + 2] + nb_a[ia, AABB_MAX + 2]), identity,
            0.5 * (nb_a[ia, AABB_MAX] - nb_a[ia, AABB_MIN]), 0.5 * (nb_a[ia, AABB_MAX + 1] - nb_a[ia, AABB_MIN + 1]),
            0.5 * (nb_a[ia, AABB_MAX + 2] - nb_a[ia, AABB_MIN + 2]),
            cb[0], cb[1], cb[2], ub,
            0.5 * (nb_b[ib, AABB_MAX] - nb_b[ib, AABB_MIN]), 0.5 * (nb_b[ib, AABB_MAX + 1] - nb_b[ib, AABB_MIN + 1]),
            0.5 * (nb_b[ib, AABB_MAX + 2] - nb_b[ib, AABB_MIN + 2]),
        )
    if bv == BV_RSS:
        return _rss_lower_bound(nb_a, ia, nb_b, ib, rot, trans, np.inf)[0] <= 0.0
    _node_obb_b(nb_b, ib, rot, trans, cb, ub)
    return obb_overlap(
        nb_a[ia, OBB_CENTER], nb_a[ia, OBB_CENTER + 1], nb_a[ia, OBB_CENTER + 2], nb_a[ia, OBB_AXES:OBB_AXES + 9],
        nb_a[ia, OBB_HALF], nb_a[ia, OBB_HALF + 1], nb_a[ia, OBB_HALF + 2],
        cb[0], cb[1], cb[2], ub, nb_b[ib, OBB_HALF], nb_b[ib, OBB_HALF + 1], nb_b[ib, OBB_HALF + 2],
    )


@njit(cache=True, nogil=True)
def _kdop_pair(nb_a, dops_a, ia, nb_b, dops_b, ib, directions, rot, trans, cb, ub):
    """Overlap test of two nodes with k-DOPs (``dops (n, 2h)``: the node's min projections on the
    h ``directions``, then the maxima; each tree in its own mesh frame; Ericson 4.6). Under a pure
    translation (``rot`` exactly the identity) the exact slab test of A's k-DOP against B's
    translated one. A rotated k-DOP is no k-DOP in the other frame (realigning it exactly needs
    its vertices, Ericson 4.6.4), so then the test is conservative: the OBB test of the nodes, A's
    slabs against B's OBB projected on each direction, and B's slabs against A's OBB (all three
    are necessary for an overlap)."""
    h = directions.shape[0]
    if (rot[0, 0] == 1.0 and rot[1, 1] == 1.0 and rot[2, 2] == 1.0 and rot[0, 1] == 0.0 and rot[0, 2] == 0.0
            and rot[1, 0] == 0.0 and rot[1, 2] == 0.0 and rot[2, 0] == 0.0 and rot[2, 1] == 0.0):
        for j in range(h):
            shift = directions[j, 0] * trans[0] + directions[j, 1] * trans[1] + directions[j, 2] * trans[2]
            if dops_b[ib, j] + shift > dops_a[ia, h + j] or dops_b[ib, h + j] + shift < dops_a[ia, j]:
                return False
        return True
    _node_obb_b(nb_b, ib, rot, trans, cb, ub)
    if not _obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[ib, OBB_HALF], nb_b[ib, OBB_HALF + 1],
                     nb_b[ib, OBB_HALF + 2]):
        return False
    for j in range(h):  # A's slabs vs B's OBB (in A's frame)
        d0 = directions[j, 0]
        d1 = directions[j, 1]
        d2 = directions[j, 2]
        c = d0 * cb[0] + d1 * cb[1] + d2 * cb[2]
        r = 0.0
        for k in range(3):
            r += nb_b[ib, OBB_HALF + k] * abs(d0 * ub[3 * k] + d1 * ub[3 * k + 1] + d2 * ub[3 * k + 2])
        if c - r > dops_a[ia, h + j] or c + r < dops_a[ia, j]:
            return False
    # B's slabs vs A's OBB moved into B's frame: x_B = rot^T (x_A - trans)
    ax = nb_a[ia, OBB_CENTER] - trans[0]
    ay = nb_a[ia, OBB_CENTER + 1] - trans[1]
    az = nb_a[ia, OBB_CENTER + 2] - trans[2]
    for j in range(h):
        # the direction in A's frame: rot d
        e0 = rot[0, 0] * directions[j, 0] + rot[0, 1] * directions[j, 1] + rot[0, 2] * directions[j, 2]
        e1 = rot[1, 0] * directions[j, 0] + rot[1, 1] * directions[j, 1] + rot[1, 2] * directions[j, 2]
        e2 = rot[2, 0] * directions[j, 0] + rot[2, 1] * directions[j, 1] + rot[2, 2] * directions[j, 2]
        c = e0 * ax + e1 * ay + e2 * az
        r = 0.0
        for k in range(3):
            r += nb_a[ia, OBB_HALF + k] * abs(e0 * nb_a[ia, OBB_AXES + 3 * k] + e1 * nb_a[ia, OBB_AXES + 3 * k + 1]
                                               + e2 * nb_a[ia, OBB_AXES + 3 * k + 2])
        if c - r > dops_b[ib, h + j] or c + r < dops_b[ib, j]:
            return False
    return True


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
    d2 = 0.0
    for i in range(3):
        c = (rot[i, 0] * nb_b[ib, SPHERE_CENTER] + rot[i, 1] * nb_b[ib, SPHERE_CENTER + 1]
             + rot[i, 2] * nb_b[ib, SPHERE_CENTER + 2] + trans[i])
        d = c - nb_a[ia, SPHERE_CENTER + i]
        d2 += d * d
    return np.sqrt(d2) - nb_a[ia, SPHERE_RADIUS] - nb_b[ib, SPHERE_RADIUS]


@njit(cache=True, nogil=True)
def child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b):
    """``(c1a, c2a, c1b, c2b)``: the two child pairs of the node pair (ia, ib) in a distance
    descent: the node with the larger bounding sphere is split (B's when A is a leaf)."""
    if leaf_b or (not leaf_a and nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS]):
        return ia + 1, ni_a[ia, 2], ib, ib
    return ia, ia, ib + 1, ni_b[ib, 2]


@njit(cache=True, nogil=True)
def push_nearer_last(stack, bounds, top, best, c1a, c1b, l1, key1, c2a, c2b, l2, key2):
    """Push the child pairs whose lower bound is below ``best`` with their bounds, the farther
    (by its search key) first so that the nearer is popped next; returns the new stack top."""
    if key1 > key2:
        c1a, c2a = c2a, c1a
        c1b, c2b = c2b, c1b
        l1, l2 = l2, l1
    if l2 < best:
        stack[top, 0] = c2a
        stack[top, 1] = c2b
        bounds[top] = l2
        top += 1
    if l1 < best:
        stack[top, 0] = c1a
        stack[top, 1] = c1b
        bounds[top] = l1
        top += 1
    return top


@njit(cache=True, nogil=True)
def _rss_lower_bound(nb_a, ia, nb_b, ib, rot, trans, best):
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


# ---------------------------------------------------------------------------------------------
# leaves
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _move_triangle(tv_b, k, rot, trans, out):
    """Triangle k of B into A's frame, written to out[0] ((1, 3, 3) buffer)."""
    for c in range(3):
        x = tv_b[k, c, 0]
        y = tv_b[k, c, 1]
        z = tv_b[k, c, 2]
        for i in range(3):
            out[0, c, i] = rot[i, 0] * x + rot[i, 1] * y + rot[i, 2] * z + trans[i]


@njit(cache=True, nogil=True)
def _is_leaf(ni, node, level, limit):
    return ni[node, 2] < 0 or (limit >= 0 and level >= limit)


# ---------------------------------------------------------------------------------------------
# collide: all overlapping pairs, resumable
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def tree_collide(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, limit_a, limit_b,
                 stack, top, out, max_out):
    """tree_collide_with for every bounding volume but the k-DOP (no k-DOP arrays)."""
    none = np.zeros((0, 0))
    return tree_collide_with(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, none, none, none,
                             limit_a, limit_b, stack, top, out, max_out)


@njit(cache=True, nogil=True)
def tree_collide_with(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, dops_a, dops_b, directions,
                      limit_a, limit_b, stack, top, out, max_out):
    """Continue a collision traversal (``bv == BV_KDOP``: ``dops_a``, ``dops_b`` the trees' node
    k-DOPs along ``directions``, see _kdop_pair; otherwise unused). ``stack (capacity, 4)`` rows ``[node_a, node_b, depth_a,
    depth_b]`` (start: one row [0, 0, 0, 0], ``top = 1``; capacity >= depth_a + depth_b + 2);
    stops once ``max_out`` rows are written, but a leaf pair is always finished, so ``out`` needs
    room for ``max_out + leaf_a * leaf_b + leaf_a + leaf_b`` rows (leaf_* = the trees' largest
    leaf sizes). ``out`` rows: ``[item_a, item_b, kind_a, kind_b]`` with kind ITEM_TRIANGLE (item =
    the original triangle index) or ITEM_NODE (item = node id: a node at its depth limit, S1 7.1;
    its OBB overlapped). Returns ``(top, count)``: ``top == 0`` when the traversal is complete;
    otherwise call again with the same stack to get the next results (a caller stops the search
    by not calling again). ``limit_a``/``limit_b``: depth limits, negative = full depth (root =
    depth 0, a node at the limit is treated as a leaf)."""
    count = 0
    cb = np.empty(3)
    ub = np.empty(9)
    identity = np.zeros(9)
    identity[0] = identity[4] = identity[8] = 1.0
    moved = np.empty((1, 3, 3))
    obb_c = np.empty((1, 3))
    obb_u = np.empty((1, 3, 3))
    obb_h = np.empty((1, 3))
    while top > 0 and count < max_out:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        da = stack[top, 2]
        db = stack[top, 3]
        if bv == BV_KDOP:
            if not _kdop_pair(nb_a, dops_a, ia, nb_b, dops_b, ib, directions, rot, trans, cb, ub):
                continue
        elif not _nodes_overlap(nb_a, ia, nb_b, ib, rot, trans, bv, cb, ub, identity):
            continue
        leaf_a = _is_leaf(ni_a, ia, da, limit_a)
        leaf_b = _is_leaf(ni_b, ib, db, limit_b)
        if leaf_a and leaf_b:
            real_a = ni_a[ia, 2] < 0
            real_b = ni_b[ib, 2] < 0
            if real_a and real_b:
                for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                    _move_triangle(tv_b, kb, rot, trans, moved)
                    for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                        if triangle_triangle_overlap(tv_a, ka, moved, 0):
                            out[count, 0] = ids_a[ka]
                            out[count, 1] = ids_b[kb]
                            out[count, 2] = ITEM_TRIANGLE
                            out[count, 3] = ITEM_TRIANGLE
                            count += 1
            elif real_b:  # A's node at its depth limit against B's triangles
                obb_c[0, :] = nb_a[ia, OBB_CENTER:OBB_CENTER + 3]
                obb_h[0, :] = nb_a[ia, OBB_HALF:OBB_HALF + 3]
                for r in range(3):
                    obb_u[0, r, :] = nb_a[ia, OBB_AXES + 3 * r:OBB_AXES + 3 * r + 3]
                for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                    _move_triangle(tv_b, kb, rot, trans, moved)
                    if triangle_obb_overlap(moved, 0, obb_c, obb_u, obb_h, 0):
                        out[count, 0] = ia
                        out[count, 1] = ids_b[kb]
                        out[count, 2] = ITEM_NODE
                        out[count, 3] = ITEM_TRIANGLE
                        count += 1
            elif real_a:  # B's node at its depth limit against A's triangles
                _node_obb_b(nb_b, ib, rot, trans, cb, ub)
                obb_c[0, :] = cb
                obb_h[0, :] = nb_b[ib, OBB_HALF:OBB_HALF + 3]
                for r in range(3):
                    obb_u[0, r, :] = ub[3 * r:3 * r + 3]
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    if triangle_obb_overlap(tv_a, ka, obb_c, obb_u, obb_h, 0):
                        out[count, 0] = ids_a[ka]
                        out[count, 1] = ib
                        out[count, 2] = ITEM_TRIANGLE
                        out[count, 3] = ITEM_NODE
                        count += 1
            else:
                out[count, 0] = ia
                out[count, 1] = ib
                out[count, 2] = ITEM_NODE
                out[count, 3] = ITEM_NODE
                count += 1
            continue
        split_a = leaf_b or (not leaf_a and nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS])
        if split_a:
            right = ni_a[ia, 2]
            stack[top, 0] = right
            stack[top, 1] = ib
            stack[top, 2] = da + 1
            stack[top, 3] = db
            stack[top + 1, 0] = ia + 1
            stack[top + 1, 1] = ib
            stack[top + 1, 2] = da + 1
            stack[top + 1, 3] = db
        else:
            right = ni_b[ib, 2]
            stack[top, 0] = ia
            stack[top, 1] = right
            stack[top, 2] = da
            stack[top, 3] = db + 1
            stack[top + 1, 0] = ia
            stack[top + 1, 1] = ib + 1
            stack[top + 1, 2] = da
            stack[top + 1, 3] = db + 1
        top += 2
    return top, count


@njit(cache=True, nogil=True)
def tree_intersects(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf):
    """True when some triangle pair overlaps (early out). Returns (hit, id_a, id_b)."""
    stack[0, :] = 0
    out = np.empty((1 + max_leaf * max_leaf + 2 * max_leaf, 4), dtype=np.int64)
    top, count = tree_collide(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, -1, -1,
                              stack, 1, out, 1)
    if count > 0:
        return True, out[0, 0], out[0, 1]
    return False, -1, -1


@njit(cache=True, nogil=True)
def _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf):
    """tree_intersects; OBB trees take tree_overlap_direct (same answer, faster)."""
    if bv == BV_OBB:
        hit, ka, kb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack)
        if hit:
            return True, ids_a[ka], ids_b[kb]
        return False, -1, -1
    return tree_intersects(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf)


@njit(cache=True, nogil=True)
def relative_rotation_translation(pose_a, pose_b, rot, trans):
    """rot, trans = the part of inv(pose_a) @ pose_b (both rigid)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += pose_a[k, i] * pose_b[k, j]
            rot[i, j] = s
        s = 0.0
        for k in range(3):
            s += pose_a[k, i] * (pose_b[k, 3] - pose_a[k, 3])
        trans[i] = s


@njit(cache=True, nogil=True)
def tree_intersects_one(ni_a, nb_a, tv_a, ids_a, pose_a, ni_b, nb_b, tv_b, ids_b, pose_b, bv, stack_rows, max_leaf,
                        out_hit, out_ids):
    """One pose pair ((4, 4) each) without the thread pool; outputs as tree_intersects_many."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    hit, ta, tb = _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf)
    out_hit[0] = hit
    out_ids[0, 0] = ta
    out_ids[0, 1] = tb


@njit(cache=True, nogil=True)
def tree_intersects_many(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, bv, stack_rows,
                         max_leaf, out_hit, out_ids, lo, hi):
    """Batch of poses ((n|1, 4, 4) each, broadcast): out_hit (n,), out_ids (n, 2) (-1 when no hit);
    this call fills entries ``lo .. hi - 1`` (the thread pool's chunk, touche._parallel.run)."""
    step_a = 1 if poses_a.shape[0] > 1 else 0
    step_b = 1 if poses_b.shape[0] > 1 else 0
    for k in range(lo, hi):
        pa = poses_a[k * step_a]
        pb = poses_b[k * step_b]
        rot = np.empty((3, 3))
        trans = np.empty(3)
        relative_rotation_translation(pa, pb, rot, trans)
        stack = np.empty((stack_rows, 4), dtype=np.int64)
        hit, ta, tb = _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack,
                                      max_leaf)
        out_hit[k] = hit
        out_ids[k, 0] = ta
        out_ids[k, 1] = tb


# ---------------------------------------------------------------------------------------------
# distance (branch and bound)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def tree_distance(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, upper, stack, bounds):
    """Smallest distance between the triangles of A and B (0 when some pair touches or crosses)
    with the closest points in A's frame and the original triangle ids. Branch and bound with an
    explicit stack (``stack (capacity, >= 2)``): a node pair whose lower bound (sphere / OBB face-gap) is >= the best distance
    so far is pruned; of two children the nearer is visited first so the bound tightens early.
    ``upper``: a known upper bound (inf if none; pairs at or beyond it are skipped, and if
    nothing closer exists the result is (inf, NaN points, -1 ids)). ``stack (capacity, 2)``,
    ``bounds (capacity,)`` scratch. Returns (distance, point_a (3,), point_b (3,), id_a, id_b)."""
    best = upper
    best_a = np.full(3, np.nan)
    best_b = np.full(3, np.nan)
    best_ta = -1
    best_tb = -1
    stack[0, 0] = 0
    stack[0, 1] = 0
    bounds[0] = _rss_lower_bound(nb_a, 0, nb_b, 0, rot, trans, best)[0]
    top = 1
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        if bounds[top] >= best:
            continue
        leaf_a = ni_a[ia, 2] < 0
        leaf_b = ni_b[ib, 2] < 0
        if leaf_a and leaf_b:
            for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                B = load_moved_triangle(tv_b, kb, rot, trans)
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    d2, pa, pb = triangle_distance_sq(load_triangle(tv_a, ka), B)
                    d = np.sqrt(d2)
                    if d < best:
                        best = d
                        for i in range(3):
                            best_a[i] = pa[i]
                            best_b[i] = pb[i]
                        best_ta = ids_a[ka]
                        best_tb = ids_b[kb]
            if best == 0.0:
                break
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        l1, key1 = _rss_lower_bound(nb_a, c1a, nb_b, c1b, rot, trans, best)
        l2, key2 = _rss_lower_bound(nb_a, c2a, nb_b, c2b, rot, trans, best)
        top = push_nearer_last(stack, bounds, top, best, c1a, c1b, l1, key1, c2a, c2b, l2, key2)
    return best, best_a, best_b, best_ta, best_tb


@njit(cache=True, nogil=True)
def tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, max_leaf, stack, bounds):
    """tree_distance, but an overlapping pair is first looked for with the (much cheaper)
    collision traversal: with the meshes crossing, the distance's branch and bound would have to
    wade through every overlapping node pair to find a zero. Same results in A's frame."""
    hit, ka, kb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack)
    if hit:
        ta = ids_a[ka]
        tb = ids_b[kb]
        moved = np.empty((1, 3, 3))
        _move_triangle(tv_b, kb, rot, trans, moved)
        pa, pb = closest_points_triangle_triangle(tv_a[ka, 0], tv_a[ka, 1], tv_a[ka, 2], moved[0, 0], moved[0, 1],
                                                  moved[0, 2])
        return 0.0, pa, pa.copy(), ta, tb
    return tree_distance_direct(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, np.inf,
                                DIRECT_LEAF_DISTANCE, stack, bounds)


@njit(cache=True, nogil=True)
def _tree_position(ids, original):
    for k in range(ids.shape[0]):
        if ids[k] == original:
            return k
    return -1


@njit(cache=True, nogil=True)
def tree_distance_one(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, stack_rows, max_leaf,
                      out_distance, out_point_a, out_point_b, out_ids):
    """tree_distance_many for one pose pair ((1, 4, 4) each) without the thread pool."""
    pa = poses_a[0]
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pa, poses_b[0], rot, trans)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    bounds = np.empty(stack_rows)
    d, qa, qb, ta, tb = tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans,
                                              max_leaf, stack, bounds)
    out_distance[0] = d
    for i in range(3):
        out_point_a[0, i] = pa[i, 0] * qa[0] + pa[i, 1] * qa[1] + pa[i, 2] * qa[2] + pa[i, 3]
        out_point_b[0, i] = pa[i, 0] * qb[0] + pa[i, 1] * qb[1] + pa[i, 2] * qb[2] + pa[i, 3]
    out_ids[0, 0] = ta
    out_ids[0, 1] = tb


@njit(cache=True, nogil=True)
def tree_distance_many(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, stack_rows, max_leaf,
                       out_distance, out_point_a, out_point_b, out_ids, lo, hi):
    """Batch ((n|1, 4, 4) poses each, broadcast): distances (n,) (0 when the surfaces touch or
    cross), closest points in WORLD coordinates (n, 3) each, original triangle ids (n, 2); this
    call fills entries ``lo .. hi - 1`` (the thread pool's chunk, touche._parallel.run)."""
    step_a = 1 if poses_a.shape[0] > 1 else 0
    step_b = 1 if poses_b.shape[0] > 1 else 0
    for k in range(lo, hi):
        pa = poses_a[k * step_a]
        pb = poses_b[k * step_b]
        rot = np.empty((3, 3))
        trans = np.empty(3)
        relative_rotation_translation(pa, pb, rot, trans)
        stack = np.empty((stack_rows, 4), dtype=np.int64)
        bounds = np.empty(stack_rows)
        d, qa, qb, ta, tb = tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans,
                                                  max_leaf, stack, bounds)
        out_distance[k] = d
        for i in range(3):
            out_point_a[k, i] = pa[i, 0] * qa[0] + pa[i, 1] * qa[1] + pa[i, 2] * qa[2] + pa[i, 3]
            out_point_b[k, i] = pa[i, 0] * qb[0] + pa[i, 1] * qb[1] + pa[i, 2] * qb[2] + pa[i, 3]
        out_ids[k, 0] = ta
        out_ids[k, 1] = tb


# ---------------------------------------------------------------------------------------------
# the fast paths behind touche.bvh.intersects / distance (and touche.intersects / distance)
# ---------------------------------------------------------------------------------------------

# Boolean and distance traversals treat a node of at most DIRECT_LEAF triangles as a leaf and
# test its triangles directly ("leaf-direct", Ericson 6.3.4): on diff_ring.stl (57,640
# triangles) this halves the node pairs of a distance query and cuts a boolean query's OBB tests
# by ~40 % for a few more triangle tests. The tree below such a node is simply not used here
# (a leaf_size=4 build gives the same truncated tree: the builds are deterministic top-down).
DIRECT_LEAF = 4
# Distance: with the leaf pairs pruned along the closest pair's direction (_distance_search: a
# triangle pair that cannot be nearer costs a dozen multiplications) larger leaves pay; over the
# whole benchmark panel (15 meshes, far and near poses, one process) 8 measured 0.78-1.03x the
# time of 6, 3 and 4 slower on every mesh, 12 up to 1.28x on some (z1_link01 near).
DIRECT_LEAF_DISTANCE = 8


@njit(cache=True, nogil=True)
def is_direct_leaf(ni, node, direct):
    return ni[node, 2] < 0 or ni[node, 1] <= direct


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
    """``(bound, key)`` as _rss_lower_bound, cheaper: the sphere bound; then the separating-axis
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
def tree_distance_direct(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, upper, direct, stack,
                         bounds):
    """tree_distance with leaf-direct nodes (<= ``direct`` triangles), the cheaper rss_pair_bound
    and the pruning along the closest pair's direction (_distance_search). Same contract and
    results (distance exact up to rounding; among equal distances another pair may be
    reported)."""
    best, best_a, best_b, ka, kb = _distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, upper,
                                                    np.full(3, np.nan), np.full(3, np.nan), -1, -1, direct, stack,
                                                    bounds)
    if ka < 0:
        return best, best_a, best_b, -1, -1
    return best, best_a, best_b, ids_a[ka], ids_b[kb]


@njit(cache=True, nogil=True)
def _obb_pair(nb_a, ia, cbx, cby, cbz, ub, hb0, hb1, hb2):
    """A's node ia (its OBB in A's frame) against a box given in A's frame."""
    return obb_overlap(
        nb_a[ia, OBB_CENTER], nb_a[ia, OBB_CENTER + 1], nb_a[ia, OBB_CENTER + 2], nb_a[ia, OBB_AXES:OBB_AXES + 9],
        nb_a[ia, OBB_HALF], nb_a[ia, OBB_HALF + 1], nb_a[ia, OBB_HALF + 2], cbx, cby, cbz, ub, hb0, hb1, hb2,
    )


@njit(cache=True, nogil=True)
def _center_gap2(nb_a, ia, cbx, cby, cbz):
    return ((nb_a[ia, OBB_CENTER] - cbx) ** 2 + (nb_a[ia, OBB_CENTER + 1] - cby) ** 2
            + (nb_a[ia, OBB_CENTER + 2] - cbz) ** 2)


@njit(cache=True, nogil=True)
def tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, direct, stack):
    """Whether some triangle pair overlaps (closed), OBB tree against OBB tree with leaf-direct
    nodes (<= ``direct`` triangles). Children are tested when their parent pair is expanded
    (B's OBB is moved into A's frame once for both of A's children) and only overlapping pairs
    are pushed, the pair with the nearer OBB centers last (popped first: surfaces cross where
    their clusters are close). Returns ``(hit, tree position in A, tree position in B)``
    (-1, -1 when none); ``stack (>= depth_a + depth_b + 2, >= 2)`` int64 scratch."""
    cb = np.empty(3)
    ub = np.empty(9)
    ub2 = np.empty(9)
    moved = np.empty((1, 3, 3))
    _node_obb_b(nb_b, 0, rot, trans, cb, ub)
    if not _obb_pair(nb_a, 0, cb[0], cb[1], cb[2], ub, nb_b[0, OBB_HALF], nb_b[0, OBB_HALF + 1],
                     nb_b[0, OBB_HALF + 2]):
        return False, -1, -1
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        leaf_a = is_direct_leaf(ni_a, ia, direct)
        leaf_b = is_direct_leaf(ni_b, ib, direct)
        if leaf_a and leaf_b:
            for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                _move_triangle(tv_b, kb, rot, trans, moved)
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    if triangle_triangle_overlap(tv_a, ka, moved, 0):
                        return True, ka, kb
            continue
        if leaf_b or (not leaf_a and nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS]):
            _node_obb_b(nb_b, ib, rot, trans, cb, ub)
            h0 = nb_b[ib, OBB_HALF]
            h1 = nb_b[ib, OBB_HALF + 1]
            h2 = nb_b[ib, OBB_HALF + 2]
            c1 = ia + 1
            c2 = ni_a[ia, 2]
            hit1 = _obb_pair(nb_a, c1, cb[0], cb[1], cb[2], ub, h0, h1, h2)
            hit2 = _obb_pair(nb_a, c2, cb[0], cb[1], cb[2], ub, h0, h1, h2)
            if hit1 and hit2:
                if _center_gap2(nb_a, c1, cb[0], cb[1], cb[2]) < _center_gap2(nb_a, c2, cb[0], cb[1], cb[2]):
                    c1, c2 = c2, c1
                stack[top, 0] = c1
                stack[top, 1] = ib
                stack[top + 1, 0] = c2
                stack[top + 1, 1] = ib
                top += 2
            elif hit1 or hit2:
                stack[top, 0] = c1 if hit1 else c2
                stack[top, 1] = ib
                top += 1
        else:
            c1 = ib + 1
            c2 = ni_b[ib, 2]
            _node_obb_b(nb_b, c1, rot, trans, cb, ub)
            hit1 = _obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[c1, OBB_HALF], nb_b[c1, OBB_HALF + 1],
                             nb_b[c1, OBB_HALF + 2])
            g1 = _center_gap2(nb_a, ia, cb[0], cb[1], cb[2])
            _node_obb_b(nb_b, c2, rot, trans, cb, ub2)
            hit2 = _obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub2, nb_b[c2, OBB_HALF], nb_b[c2, OBB_HALF + 1],
                             nb_b[c2, OBB_HALF + 2])
            if hit1 and hit2:
                if g1 < _center_gap2(nb_a, ia, cb[0], cb[1], cb[2]):
                    c1, c2 = c2, c1
                stack[top, 0] = ia
                stack[top, 1] = c1
                stack[top + 1, 0] = ia
                stack[top + 1, 1] = c2
                top += 2
            elif hit1 or hit2:
                stack[top, 0] = ia
                stack[top, 1] = c1 if hit1 else c2
                top += 1
    return False, -1, -1


@njit(cache=True, nogil=True)
def _rigid(m):
    """Finite, last row (0, 0, 0, 1), orthonormal right-handed rotation (posecheck's test)."""
    return is_rigid_transform(m)


@njit(cache=True, nogil=True)
def tree_intersects_pair(ni_a, nb_a, tv_a, pose_a, ni_b, nb_b, tv_b, pose_b, stack_rows):
    """One pose pair ((4, 4) each, checked here) from Python with the fewest arguments to unbox:
    1 / 0, or -3 / -4 when pose_a / pose_b is not a rigid transform (OBB trees, leaf-direct)."""
    if not _rigid(pose_a):
        return -3
    if not _rigid(pose_b):
        return -4
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 2), dtype=np.int64)
    hit, _, _ = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack)
    return 1 if hit else 0


# ---------------------------------------------------------------------------------------------
# temporal coherence (Ericson 6.7): witness pairs and front tracking, for a sequence of queries
# between the same two trees at slowly changing poses (touche.bvh.CoherentPair)
# ---------------------------------------------------------------------------------------------

FRONT_GROWTH = 4  # a front grown past this many times its size after a full traversal is dropped


@njit(cache=True, nogil=True)
def _front_push(fronts, dst, count, capacity, ia, ib):
    if count < capacity:
        fronts[dst, count, 0] = ia
        fronts[dst, count, 1] = ib
    return count + 1


@njit(cache=True, nogil=True)
def _moved_center_gap2(nb_a, ia, nb_b, ib, rot, trans):
    """Squared distance of A's node OBB center and B's (moved into A's frame)."""
    d2 = 0.0
    for i in range(3):
        c = (rot[i, 0] * nb_b[ib, OBB_CENTER] + rot[i, 1] * nb_b[ib, OBB_CENTER + 1]
             + rot[i, 2] * nb_b[ib, OBB_CENTER + 2] + trans[i])
        d = c - nb_a[ia, OBB_CENTER + i]
        d2 += d * d
    return d2


@njit(cache=True, nogil=True)
def _front_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, fronts, src, seeds, dst, budget, stack, cb, ub,
                  moved, witness):
    """Overlap search from the root pair (``seeds < 0``) or from the ``seeds`` pairs of front
    buffer ``src``, writing the new front into buffer ``dst``. Returns ``(code, count)``: code 1
    = an overlapping triangle pair (witness set: triangle positions, then the leaf nodes), 0 =
    complete (count = new front size, possibly above the capacity), 2 = stopped after
    ``budget`` node pairs."""
    capacity = fronts.shape[1]
    count = 0
    pops = 0
    moved_ib = -1  # B's node whose OBB is in cb, ub (siblings share it: A was split)
    for s in range(max(seeds, 1)):
        if seeds < 0:
            stack[0, 0] = 0
            stack[0, 1] = 0
        else:
            stack[0, 0] = fronts[src, s, 0]
            stack[0, 1] = fronts[src, s, 1]
        top = 1
        while top > 0:
            pops += 1
            if pops > budget:
                return 2, count
            top -= 1
            ia = stack[top, 0]
            ib = stack[top, 1]
            if ib != moved_ib:
                _node_obb_b(nb_b, ib, rot, trans, cb, ub)
                moved_ib = ib
            if not _obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[ib, OBB_HALF], nb_b[ib, OBB_HALF + 1],
                             nb_b[ib, OBB_HALF + 2]):
                count = _front_push(fronts, dst, count, capacity, ia, ib)
                continue
            leaf_a = is_direct_leaf(ni_a, ia, DIRECT_LEAF)
            leaf_b = is_direct_leaf(ni_b, ib, DIRECT_LEAF)
            if leaf_a and leaf_b:
                for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                    _move_triangle(tv_b, kb, rot, trans, moved)
                    for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                        if triangle_triangle_overlap(tv_a, ka, moved, 0):
                            witness[0] = ka
                            witness[1] = kb
                            witness[2] = ia
                            witness[3] = ib
                            return 1, count
                count = _front_push(fronts, dst, count, capacity, ia, ib)
                continue
            # children are tested when popped (a disjoint one joins the front); the pair with the
            # nearer OBB centers is pushed last (popped first), as in tree_overlap_direct
            if leaf_b or (not leaf_a and nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS]):
                c1 = ia + 1
                c2 = ni_a[ia, 2]
                if _center_gap2(nb_a, c1, cb[0], cb[1], cb[2]) < _center_gap2(nb_a, c2, cb[0], cb[1], cb[2]):
                    c1, c2 = c2, c1
                stack[top, 0] = c1
                stack[top, 1] = ib
                stack[top + 1, 0] = c2
                stack[top + 1, 1] = ib
            else:
                c1 = ib + 1
                c2 = ni_b[ib, 2]
                if _moved_center_gap2(nb_a, ia, nb_b, c1, rot, trans) < _moved_center_gap2(nb_a, ia, nb_b, c2, rot,
                                                                                            trans):
                    c1, c2 = c2, c1
                stack[top, 0] = ia
                stack[top, 1] = c1
                stack[top + 1, 0] = ia
                stack[top + 1, 1] = c2
            top += 2
    return 0, count


@njit(cache=True, nogil=True)
def tree_overlap_tracked(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, pose_a, pose_b, witness, fronts, state, stack_rows):
    """Boolean overlap reusing the previous queries' work.

    ``witness (4,)`` int64: the triangle pair (tree positions) that overlapped last time and its
    leaf-node pair (-1: none). Tested first: the pair, then every triangle pair of the two leaves
    (a contact that slides to a neighbouring triangle stays local).
    ``fronts (2, capacity, 2)`` int64, ``state (3,)`` int64 ``[front size (-1: none), size after
    the last traversal from the root, current buffer]``. A complete traversal (one that found no
    overlap) ends on a front: the node pairs found disjoint and the leaf pairs tested; they
    partition every triangle pair, at ANY pose, so a query may search from them instead of from
    the root pair: pairs still disjoint cost one test, overlapping ones are searched below, and
    the new front replaces the old. A front only deepens, so each query first tries the root
    with a budget of a quarter of the front (a far-apart pair is settled at the root; a front
    left deep by an earlier close approach is then replaced); only if that runs out the front
    is searched. (Measured: the front saves little over a fresh traversal for separated
    meshes -- the fresh one tests children as it expands them, so its cost is about the front's
    size too; the witness is what makes sustained contact cheap.) An overlap stops the search with the witness; the current front stays (still a
    partition). Fronts past the capacity, or grown FRONT_GROWTH times past their size after a
    root traversal, are dropped. Returns 1 / 0, or -3 / -4 for a non-rigid pose; the same
    answers as tree_overlap_direct."""
    if not _rigid(pose_a):
        return -3
    if not _rigid(pose_b):
        return -4
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    moved = np.empty((1, 3, 3))
    if witness[0] >= 0:
        _move_triangle(tv_b, witness[1], rot, trans, moved)
        if triangle_triangle_overlap(tv_a, witness[0], moved, 0):
            return 1
        la = witness[2]
        lb = witness[3]
        for kb in range(ni_b[lb, 0], ni_b[lb, 0] + ni_b[lb, 1]):
            _move_triangle(tv_b, kb, rot, trans, moved)
            for ka in range(ni_a[la, 0], ni_a[la, 0] + ni_a[la, 1]):
                if triangle_triangle_overlap(tv_a, ka, moved, 0):
                    witness[0] = ka
                    witness[1] = kb
                    return 1
        for i in range(4):
            witness[i] = -1
    cb = np.empty(3)
    ub = np.empty(9)
    stack = np.empty((stack_rows, 2), dtype=np.int64)
    capacity = fronts.shape[1]
    src = state[2]
    dst = 1 - src
    size = state[0]
    budget = np.iinfo(np.int64).max
    if size >= 0:
        budget = size // 4 + 8
    code, count = _front_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, fronts, src, -1, dst, budget, stack,
                                cb, ub, moved, witness)
    from_root = code != 2
    if code == 2:
        code, count = _front_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, fronts, src, size, dst,
                                    np.iinfo(np.int64).max, stack, cb, ub, moved, witness)
    if code == 1:
        return 1  # the current front stays (dst is incomplete)
    if count > capacity or (not from_root and count > FRONT_GROWTH * state[1] + 64):
        state[0] = -1  # too big, or grown too much: next time from the root
        return 0
    state[0] = count
    if from_root:
        state[1] = count
    state[2] = dst
    return 0


@njit(cache=True, nogil=True)
def axis_pair_gap(nb_a, ia, nb_b, ib, n0, n1, n2, m0, m1, m2, tn):
    """Gap of the oriented boxes of A's node ia and B's node ib along the unit direction n (A's
    frame): min over B's box of n.x - max over A's box of n.x, a lower bound of the distance of
    their contents for any unit n (a separating-axis gap, Ericson 4.4.1). B's box is projected in
    its own frame: ``m = rot^T n``, ``tn = trans . n``."""
    ca = nb_a[ia, OBB_CENTER] * n0 + nb_a[ia, OBB_CENTER + 1] * n1 + nb_a[ia, OBB_CENTER + 2] * n2
    ra = (nb_a[ia, OBB_HALF] * abs(nb_a[ia, OBB_AXES] * n0 + nb_a[ia, OBB_AXES + 1] * n1 + nb_a[ia, OBB_AXES + 2] * n2)
          + nb_a[ia, OBB_HALF + 1] * abs(nb_a[ia, OBB_AXES + 3] * n0 + nb_a[ia, OBB_AXES + 4] * n1
                                         + nb_a[ia, OBB_AXES + 5] * n2)
          + nb_a[ia, OBB_HALF + 2] * abs(nb_a[ia, OBB_AXES + 6] * n0 + nb_a[ia, OBB_AXES + 7] * n1
                                         + nb_a[ia, OBB_AXES + 8] * n2))
    cb = nb_b[ib, OBB_CENTER] * m0 + nb_b[ib, OBB_CENTER + 1] * m1 + nb_b[ib, OBB_CENTER + 2] * m2 + tn
    rb = (nb_b[ib, OBB_HALF] * abs(nb_b[ib, OBB_AXES] * m0 + nb_b[ib, OBB_AXES + 1] * m1 + nb_b[ib, OBB_AXES + 2] * m2)
          + nb_b[ib, OBB_HALF + 1] * abs(nb_b[ib, OBB_AXES + 3] * m0 + nb_b[ib, OBB_AXES + 4] * m1
                                         + nb_b[ib, OBB_AXES + 5] * m2)
          + nb_b[ib, OBB_HALF + 2] * abs(nb_b[ib, OBB_AXES + 6] * m0 + nb_b[ib, OBB_AXES + 7] * m1
                                         + nb_b[ib, OBB_AXES + 8] * m2))
    return (cb - rb) - (ca + ra)


@njit(cache=True, nogil=True)
def _child_bound(nb_a, ia, nb_b, ib, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn):
    """``(bound, key)`` of a child pair: the gap along the closest pair's direction first (when
    there is one: ``axis``), rss_pair_bound when that does not reach ``best``."""
    if axis:
        gap = axis_pair_gap(nb_a, ia, nb_b, ib, n0, n1, n2, m0, m1, m2, tn)
        if gap >= best:
            return gap, gap
    return rss_pair_bound(nb_a, ia, nb_b, ib, rot, trans, best)


@njit(cache=True, nogil=True)
def _distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, best, best_a, best_b, best_ka, best_kb, direct,
                     stack, bounds):
    """The branch and bound of tree_distance_direct from a given best pair (tree positions;
    -1 and best = inf for none; ``best_a``, ``best_b`` its closest points in A's frame). Returns
    (distance, point_a, point_b, position_a, position_b).

    Pruning along the closest pair's direction: once a pair at distance best > 0 is known, the
    unit vector n from its point on A to its point on B separates the meshes' nearest parts
    (Ericson 5.2.1), and the gap of two sets' projections on n is a lower bound of their
    distance for any unit n. With the meshes far apart (compared with their triangles) nearly
    every candidate pair near the answer is within a fraction of a percent of the best distance,
    and this bound, nearly exact there, is what prunes them: first at the child node pairs
    (axis_pair_gap, before rss_pair_bound), then per triangle pair at the leaves (B's triangle
    projected in its own frame, moved into A's only for a pair that passes; then triangle_gap,
    then the exact distance). Measured over the benchmark panel's far poses (24 per mesh, 15
    meshes): exact triangle distances fell 8-25x (soccerball 3,029 -> 196 per query), the query
    time 0.4-0.75x; n is updated at each improvement."""
    axis = False
    n0 = n1 = n2 = m0 = m1 = m2 = tn = 0.0
    if best_ka >= 0 and best > 0.0:
        u0 = best_b[0] - best_a[0]
        u1 = best_b[1] - best_a[1]
        u2 = best_b[2] - best_a[2]
        length = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        if length > 0.0:
            axis = True
            n0 = u0 / length
            n1 = u1 / length
            n2 = u2 / length
            m0 = rot[0, 0] * n0 + rot[1, 0] * n1 + rot[2, 0] * n2
            m1 = rot[0, 1] * n0 + rot[1, 1] * n1 + rot[2, 1] * n2
            m2 = rot[0, 2] * n0 + rot[1, 2] * n1 + rot[2, 2] * n2
            tn = trans[0] * n0 + trans[1] * n1 + trans[2] * n2
    stack[0, 0] = 0
    stack[0, 1] = 0
    bounds[0] = rss_pair_bound(nb_a, 0, nb_b, 0, rot, trans, best)[0]
    top = 1
    while top > 0 and best > 0.0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        if bounds[top] >= best:
            continue
        leaf_a = is_direct_leaf(ni_a, ia, direct)
        leaf_b = is_direct_leaf(ni_b, ib, direct)
        if leaf_a and leaf_b:
            for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                low_b = -np.inf  # min of n.x over B's triangle (A's frame)
                if axis:
                    low_b = min(m0 * tv_b[kb, 0, 0] + m1 * tv_b[kb, 0, 1] + m2 * tv_b[kb, 0, 2],
                                m0 * tv_b[kb, 1, 0] + m1 * tv_b[kb, 1, 1] + m2 * tv_b[kb, 1, 2],
                                m0 * tv_b[kb, 2, 0] + m1 * tv_b[kb, 2, 1] + m2 * tv_b[kb, 2, 2]) + tn
                moved = False
                B = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    if axis and low_b - max(n0 * tv_a[ka, 0, 0] + n1 * tv_a[ka, 0, 1] + n2 * tv_a[ka, 0, 2],
                                            n0 * tv_a[ka, 1, 0] + n1 * tv_a[ka, 1, 1] + n2 * tv_a[ka, 1, 2],
                                            n0 * tv_a[ka, 2, 0] + n1 * tv_a[ka, 2, 1] + n2 * tv_a[ka, 2, 2]) >= best:
                        continue
                    if not moved:
                        B = load_moved_triangle(tv_b, kb, rot, trans)
                        moved = True
                    A = load_triangle(tv_a, ka)
                    if triangle_gap(A, B) >= best:
                        continue
                    d2, pa, pb = triangle_distance_sq(A, B)
                    d = np.sqrt(d2)
                    if d < best:
                        best = d
                        for i in range(3):
                            best_a[i] = pa[i]
                            best_b[i] = pb[i]
                        best_ka = ka
                        best_kb = kb
                        u0 = pb[0] - pa[0]
                        u1 = pb[1] - pa[1]
                        u2 = pb[2] - pa[2]
                        length = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
                        if length > 0.0:
                            axis = True
                            n0 = u0 / length
                            n1 = u1 / length
                            n2 = u2 / length
                            m0 = rot[0, 0] * n0 + rot[1, 0] * n1 + rot[2, 0] * n2
                            m1 = rot[0, 1] * n0 + rot[1, 1] * n1 + rot[2, 1] * n2
                            m2 = rot[0, 2] * n0 + rot[1, 2] * n1 + rot[2, 2] * n2
                            tn = trans[0] * n0 + trans[1] * n1 + trans[2] * n2
                            low_b = min(n0 * B[0] + n1 * B[1] + n2 * B[2], n0 * B[3] + n1 * B[4] + n2 * B[5],
                                        n0 * B[6] + n1 * B[7] + n2 * B[8])
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        l1, key1 = _child_bound(nb_a, c1a, nb_b, c1b, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn)
        l2, key2 = _child_bound(nb_a, c2a, nb_b, c2b, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn)
        top = push_nearer_last(stack, bounds, top, best, c1a, c1b, l1, key1, c2a, c2b, l2, key2)
    return best, best_a, best_b, best_ka, best_kb


@njit(cache=True, nogil=True)
def tree_distance_tracked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, pose_a, pose_b, witness, stack_rows,
                          out):
    """Distance with the witness pair of the previous query (``witness (2,)`` tree positions,
    -1: none; updated): its current distance is the initial upper bound of the branch and bound,
    which then prunes from the first node pair on (Ericson 6.7.1: a closest pair changes slowly
    under small motions). A witness at distance 0 answers at once. ``out (9,)``: distance,
    point_a (3), point_b (3) in WORLD coordinates, original ids (2). Returns 0, or -3 / -4 for a
    non-rigid pose. Same distances as tree_distance_checked (exact up to rounding)."""
    if not _rigid(pose_a):
        return -3
    if not _rigid(pose_b):
        return -4
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    best = np.inf
    best_a = np.full(3, np.nan)
    best_b = np.full(3, np.nan)
    ka = witness[0]
    kb = witness[1]
    if ka >= 0:
        d2, pa, pb = triangle_distance_sq(load_triangle(tv_a, ka), load_moved_triangle(tv_b, kb, rot, trans))
        best = np.sqrt(d2)
        for i in range(3):
            best_a[i] = pa[i]
            best_b[i] = pb[i]
    if best > 0.0:
        stack = np.empty((stack_rows, 2), dtype=np.int64)
        # look for a crossing first (as tree_distance_checked): cheap next to the search, which
        # would otherwise have to wade through every overlapping node pair to find a zero
        hit, ha, hb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack)
        if hit:
            d2, pa, pb = triangle_distance_sq(load_triangle(tv_a, ha), load_moved_triangle(tv_b, hb, rot, trans))
            best = 0.0
            for i in range(3):
                best_a[i] = pa[i]
                best_b[i] = pa[i]
            ka = ha
            kb = hb
        else:
            bounds = np.empty(stack_rows)
            best, best_a, best_b, ka, kb = _distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, best,
                                                            best_a, best_b, ka, kb, DIRECT_LEAF_DISTANCE, stack,
                                                            bounds)
    witness[0] = ka
    witness[1] = kb
    out[0] = best
    for i in range(3):
        out[1 + i] = pose_a[i, 0] * best_a[0] + pose_a[i, 1] * best_a[1] + pose_a[i, 2] * best_a[2] + pose_a[i, 3]
        out[4 + i] = pose_a[i, 0] * best_b[0] + pose_a[i, 1] * best_b[1] + pose_a[i, 2] * best_b[2] + pose_a[i, 3]
    out[7] = ids_a[ka] if ka >= 0 else -1
    out[8] = ids_b[kb] if kb >= 0 else -1
    return 0


@njit(cache=True, nogil=True)
def tree_intersects_kdop_many(ni_a, nb_a, tv_a, ids_a, dops_a, poses_a, ni_b, nb_b, tv_b, ids_b, dops_b, poses_b,
                              directions, stack_rows, max_leaf, out_hit, out_ids, lo, hi):
    """tree_intersects_many with the trees' node k-DOPs (BV_KDOP, see _kdop_pair); entries
    ``lo .. hi - 1``."""
    step_a = 1 if poses_a.shape[0] > 1 else 0
    step_b = 1 if poses_b.shape[0] > 1 else 0
    for k in range(lo, hi):
        rot = np.empty((3, 3))
        trans = np.empty(3)
        relative_rotation_translation(poses_a[k * step_a], poses_b[k * step_b], rot, trans)
        stack = np.empty((stack_rows, 4), dtype=np.int64)
        stack[0, :] = 0
        out = np.empty((1 + max_leaf * max_leaf + 2 * max_leaf, 4), dtype=np.int64)
        top, count = tree_collide_with(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, BV_KDOP, dops_a,
                                       dops_b, directions, -1, -1, stack, 1, out, 1)
        out_hit[k] = count > 0
        out_ids[k, 0] = out[0, 0] if count > 0 else -1
        out_ids[k, 1] = out[0, 1] if count > 0 else -1


# ---------------------------------------------------------------------------------------------
# safety margins and certified lower bounds (issue 19): touche.intersects(margin=) and
# touche.distance(lower_bound_only=True) for two meshes
# ---------------------------------------------------------------------------------------------

# A lower-bound query expands node pairs this many levels below the roots; a pair reached there
# contributes its bound (pair_lower_bound) as it is, unless that bound is 0 (its boxes meet):
# such a pair is expanded to its triangles, so the bound is 0 only when two triangles touch.
LOWER_BOUND_LEVELS = 6


@njit(cache=True, nogil=True)
def tree_within_margin(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, margin, direct, stack):
    """Whether some triangle of A lies within ``margin`` (>= 0) of some triangle of B: the
    boolean descent with every node pair's distance bound (pair_lower_bound) compared with the
    margin instead of 0 -- a pair whose bound exceeds it is pruned -- and, at leaf-direct nodes
    (<= ``direct`` triangles), triangle_gap then the exact triangle distance; stops at the first
    pair within the margin. ``stack (capacity, >= 2)`` int64 scratch."""
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        if pair_lower_bound(nb_a, ia, nb_b, ib, rot, trans, margin)[0] > margin:
            continue
        leaf_a = is_direct_leaf(ni_a, ia, direct)
        leaf_b = is_direct_leaf(ni_b, ib, direct)
        if leaf_a and leaf_b:
            for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                B = load_moved_triangle(tv_b, kb, rot, trans)
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    A = load_triangle(tv_a, ka)
                    if triangle_gap(A, B) > margin:
                        continue
                    # sqrt, then compare: the same number touche.distance reports
                    if np.sqrt(triangle_distance_sq(A, B)[0]) <= margin:
                        return True
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        stack[top, 0] = c2a
        stack[top, 1] = c2b
        stack[top + 1, 0] = c1a
        stack[top + 1, 1] = c1b
        top += 2
    return False


@njit(cache=True, nogil=True)
def tree_distance_lower_bound(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, levels, direct, stack):
    """A certified lower bound L of the distance of A's and B's triangles: the smallest bound
    over a front of node pairs ``levels`` below the roots (pairs whose bound is 0 are expanded
    to their triangles, whose exact distances enter L), so 0 <= L <= distance, and L = 0 only
    when two triangles touch or cross. A pair whose bound is already >= the smallest found is
    skipped (its triangles are farther than L). ``stack (capacity, >= 3)`` int64 scratch."""
    best = np.inf
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = 0
    top = 1
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        level = stack[top, 2]
        bound = pair_lower_bound(nb_a, ia, nb_b, ib, rot, trans, best)[0]
        if bound >= best:
            continue
        leaf_a = is_direct_leaf(ni_a, ia, direct)
        leaf_b = is_direct_leaf(ni_b, ib, direct)
        if leaf_a and leaf_b:
            for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                B = load_moved_triangle(tv_b, kb, rot, trans)
                for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                    A = load_triangle(tv_a, ka)
                    if triangle_gap(A, B) >= best:
                        continue
                    best = min(best, np.sqrt(triangle_distance_sq(A, B)[0]))
            if best == 0.0:
                return 0.0
            continue
        if level >= levels and bound > 0.0:
            best = bound  # < best (checked above)
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        stack[top, 0] = c2a
        stack[top, 1] = c2b
        stack[top, 2] = level + 1
        stack[top + 1, 0] = c1a
        stack[top + 1, 1] = c1b
        stack[top + 1, 2] = level + 1
        top += 2
    return max(best, 0.0)


@njit(cache=True, nogil=True)
def tree_threshold_many(ni_a, nb_a, tv_a, poses_a, ni_b, nb_b, tv_b, poses_b, stack_rows, threshold, out, lo, hi):
    """Margin tests (``threshold`` = the margin, >= 0: out 0.0 within, inf beyond) or lower
    bounds (``threshold`` < 0: out L) of pose pairs lo .. hi - 1 ((n|1, 4, 4) poses each,
    broadcast, validated by the caller); the threshold convention of pairs.LOWER_BOUND_QUERY."""
    step_a = 1 if poses_a.shape[0] > 1 else 0
    step_b = 1 if poses_b.shape[0] > 1 else 0
    rot = np.empty((3, 3))
    trans = np.empty(3)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    for k in range(lo, hi):
        relative_rotation_translation(poses_a[k * step_a], poses_b[k * step_b], rot, trans)
        if threshold < 0.0:
            out[k] = tree_distance_lower_bound(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, LOWER_BOUND_LEVELS,
                                               DIRECT_LEAF_DISTANCE, stack)
        elif tree_within_margin(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, threshold, DIRECT_LEAF, stack):
            out[k] = 0.0
        else:
            out[k] = np.inf
