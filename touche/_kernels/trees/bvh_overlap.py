"""Boolean traversals of two bounding-volume hierarchies: all overlapping triangle pairs
(``tree_collide``, resumable, with S1 7.1 depth limits, for every bounding volume ``BV_*``), the
first overlapping pair (``tree_intersects*``) and the leaf-direct fast path behind
touche.bvh.intersects / touche.intersects (``tree_overlap_direct``).

Frames (``rot``, ``trans`` map B's mesh frame into A's), tree layout, descent rule: bvh_descent.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit, strict_entry  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.trees.bvh_volumes import AABB_MAX, AABB_MIN, OBB_AXES, OBB_CENTER, OBB_HALF  # noqa: E402
from touche._kernels.trees.bvh_volumes import SPHERE_CENTER, SPHERE_RADIUS, moved_point_gap2  # noqa: E402
from touche._kernels.primitives.sat_boxes import triangle_obb_overlap  # noqa: E402
from touche._kernels.primitives.sat_triangles import triangle_triangle_overlap  # noqa: E402
from touche._kernels.trees.bvh_descent import DIRECT_LEAF, checked_relative_pose  # noqa: E402
from touche._kernels.trees.bvh_descent import move_triangle, node_obb_b, obb_overlap, obb_pair  # noqa: E402
from touche._kernels.trees.bvh_descent import batch_pose, relative_rotation_translation  # noqa: E402
from touche._kernels.trees.bvh_descent import leaf_pair_overlap  # noqa: E402
from touche._kernels.trees.bvh_bounds import rss_lower_bound  # noqa: E402
from touche._kernels.trees.bvh_winding import signed_crossings  # noqa: E402


BV_OBB = 0
BV_AABB = 1
BV_SPHERE = 2
BV_RSS = 3
BV_KDOP = 4

# float64 scratch of tree_overlap_direct: B's node centre (3), two sets of its axes (9 + 9) and a
# triangle of B moved into A's frame (9)
OVERLAP_SCRATCH = 30

# out rows of tree_collide: [item_a, item_b, a_is_node, b_is_node]
ITEM_TRIANGLE = 0
ITEM_NODE = 1


@njit(cache=True, nogil=True)
def _nodes_overlap(nb_a, ia, nb_b, ib, rot, trans, bv, cb, ub, identity):
    if bv == BV_SPHERE:
        d2 = moved_point_gap2(nb_a, ia, nb_b, ib, rot, trans, SPHERE_CENTER)
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
        return rss_lower_bound(nb_a, ia, nb_b, ib, rot, trans, np.inf)[0] <= 0.0
    node_obb_b(nb_b, ib, rot, trans, cb, ub)
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
    node_obb_b(nb_b, ib, rot, trans, cb, ub)
    if not obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[ib, OBB_HALF], nb_b[ib, OBB_HALF + 1],
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
                    move_triangle(tv_b, kb, rot, trans, moved)
                    for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                        if triangle_triangle_overlap(tv_a, ka, moved, 0):
                            out[count, 0] = ids_a[ka]
                            out[count, 1] = ids_b[kb]
                            out[count, 2] = ITEM_TRIANGLE
                            out[count, 3] = ITEM_TRIANGLE
                            count += 1
            elif real_b:  # A's node at its depth limit against B's triangles
                copy_into(obb_c[0, :], nb_a[ia, OBB_CENTER:OBB_CENTER + 3])
                copy_into(obb_h[0, :], nb_a[ia, OBB_HALF:OBB_HALF + 3])
                for r in range(3):
                    copy_into(obb_u[0, r, :], nb_a[ia, OBB_AXES + 3 * r:OBB_AXES + 3 * r + 3])
                for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
                    move_triangle(tv_b, kb, rot, trans, moved)
                    if triangle_obb_overlap(moved, 0, obb_c, obb_u, obb_h, 0):
                        out[count, 0] = ia
                        out[count, 1] = ids_b[kb]
                        out[count, 2] = ITEM_NODE
                        out[count, 3] = ITEM_TRIANGLE
                        count += 1
            elif real_a:  # B's node at its depth limit against A's triangles
                node_obb_b(nb_b, ib, rot, trans, cb, ub)
                copy_into(obb_c[0, :], cb)
                copy_into(obb_h[0, :], nb_b[ib, OBB_HALF:OBB_HALF + 3])
                for r in range(3):
                    copy_into(obb_u[0, r, :], ub[3 * r:3 * r + 3])
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
def _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf, scratch):
    """tree_intersects; OBB trees take tree_overlap_direct (same answer, faster; ``scratch`` its
    float64 scratch)."""
    if bv == BV_OBB:
        hit, ka, kb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack, scratch)
        if hit:
            return True, ids_a[ka], ids_b[kb]
        return False, -1, -1
    return tree_intersects(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf)


@njit(cache=True, nogil=True)
def tree_intersects_one(ni_a, nb_a, tv_a, ids_a, pose_a, ni_b, nb_b, tv_b, ids_b, pose_b, bv, stack_rows, max_leaf,
                        out_hit, out_ids):
    """One pose pair ((4, 4) each) without the thread pool; outputs as tree_intersects_many."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    hit, ta, tb = _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack, max_leaf,
                                  np.empty(OVERLAP_SCRATCH))
    out_hit[0] = hit
    out_ids[0, 0] = ta
    out_ids[0, 1] = tb


@njit(cache=True, nogil=True, inline="always")
def _batch_scratch(stack_rows):
    """The per-chunk scratch of the boolean batch loops: relative rotation and translation, the
    traversal stack, tree_overlap_direct's floats, the roots' test (B's root centre and axes)."""
    return (np.empty((3, 3)), np.empty(3), np.empty((stack_rows, 4), dtype=np.int64), np.empty(OVERLAP_SCRATCH),
            np.empty(3), np.empty(9))


@njit(cache=True, nogil=True)
def tree_intersects_many(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, bv, stack_rows,
                         max_leaf, out_hit, out_ids, lo, hi):
    """Batch of poses ((n|1, 4, 4) each, broadcast): out_hit (n,), out_ids (n, 2) (-1 when no hit);
    this call fills entries ``lo .. hi - 1`` (the thread pool's chunk, touche._parallel.run)."""
    rot, trans, stack, scratch, root_center, root_axes = _batch_scratch(stack_rows)
    for k in range(lo, hi):
        relative_rotation_translation(batch_pose(poses_a, k), batch_pose(poses_b, k), rot, trans)
        if bv == BV_OBB and not obb_roots_overlap(nb_a, nb_b, rot, trans, root_center, root_axes):
            hit, ta, tb = False, -1, -1
        else:
            hit, ta, tb = _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack,
                                          max_leaf, scratch)
        out_hit[k] = hit
        out_ids[k, 0] = ta
        out_ids[k, 1] = tb


@njit(cache=True, nogil=True, inline="always")
def obb_roots_overlap(nb_a, nb_b, rot, trans, cb, ub):
    """Whether the root OBBs of two trees overlap, B's moved into A's frame by ``rot``, ``trans``
    (``cb (3,)``, ``ub (9,)``: scratch). Batch loops test it before calling the traversal: a call
    that passes a dozen arrays costs ~2-3x the root test itself (reference counts, arguments),
    and far poses end at the roots."""
    node_obb_b(nb_b, 0, rot, trans, cb, ub)
    return obb_pair(nb_a, 0, cb[0], cb[1], cb[2], ub, nb_b[0, OBB_HALF], nb_b[0, OBB_HALF + 1],
                    nb_b[0, OBB_HALF + 2])


@njit(cache=True, nogil=True)
def tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, direct, stack, scratch):
    """Whether some triangle pair overlaps (closed), OBB tree against OBB tree with leaf-direct
    nodes (<= ``direct`` triangles). Children are tested when their parent pair is expanded
    (B's OBB is moved into A's frame once for both of A's children) and only overlapping pairs
    are pushed, the pair with the nearer OBB centers last (popped first: surfaces cross where
    their clusters are close). Returns ``(hit, tree position in A, tree position in B)``
    (-1, -1 when none); ``stack (>= depth_a + depth_b + 2, >= 2)`` int64 scratch, ``scratch
    (>= OVERLAP_SCRATCH,)`` float64 scratch (a batch loop passes the same arrays for every pose:
    four allocations per pose were most of a far pose's cost, where the roots already miss)."""
    cb = scratch[0:3]
    ub = scratch[3:12]
    ub2 = scratch[12:21]
    moved = scratch[21:30].reshape((1, 3, 3))
    if not obb_roots_overlap(nb_a, nb_b, rot, trans, cb, ub):
        return False, -1, -1
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        # bvh_descent.is_direct_leaf, center_gap2 and the stack pushes written out in this loop:
        # a helper, even inlined, binds the arrays it takes, and their reference counting per
        # node pair cost ~18 % of a mesh-mesh hit
        leaf_a = ni_a[ia, 2] < 0 or ni_a[ia, 1] <= direct
        leaf_b = ni_b[ib, 2] < 0 or ni_b[ib, 1] <= direct
        if leaf_a and leaf_b:
            ka, kb = leaf_pair_overlap(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, moved)
            if ka >= 0:
                return True, ka, kb
            continue
        if leaf_b or (not leaf_a and nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS]):
            node_obb_b(nb_b, ib, rot, trans, cb, ub)
            h0 = nb_b[ib, OBB_HALF]
            h1 = nb_b[ib, OBB_HALF + 1]
            h2 = nb_b[ib, OBB_HALF + 2]
            c1 = ia + 1
            c2 = ni_a[ia, 2]
            hit1 = obb_pair(nb_a, c1, cb[0], cb[1], cb[2], ub, h0, h1, h2)
            hit2 = obb_pair(nb_a, c2, cb[0], cb[1], cb[2], ub, h0, h1, h2)
            if hit1 and hit2:
                gap1 = ((nb_a[c1, OBB_CENTER] - cb[0]) ** 2 + (nb_a[c1, OBB_CENTER + 1] - cb[1]) ** 2
                        + (nb_a[c1, OBB_CENTER + 2] - cb[2]) ** 2)
                gap2 = ((nb_a[c2, OBB_CENTER] - cb[0]) ** 2 + (nb_a[c2, OBB_CENTER + 1] - cb[1]) ** 2
                        + (nb_a[c2, OBB_CENTER + 2] - cb[2]) ** 2)
                if gap1 < gap2:
                    c1, c2 = c2, c1
            if hit1:
                stack[top, 0] = c1
                stack[top, 1] = ib
                top += 1
            if hit2:
                stack[top, 0] = c2
                stack[top, 1] = ib
                top += 1
        else:
            c1 = ib + 1
            c2 = ni_b[ib, 2]
            node_obb_b(nb_b, c1, rot, trans, cb, ub)
            hit1 = obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[c1, OBB_HALF], nb_b[c1, OBB_HALF + 1],
                             nb_b[c1, OBB_HALF + 2])
            g1 = ((nb_a[ia, OBB_CENTER] - cb[0]) ** 2 + (nb_a[ia, OBB_CENTER + 1] - cb[1]) ** 2
                  + (nb_a[ia, OBB_CENTER + 2] - cb[2]) ** 2)
            node_obb_b(nb_b, c2, rot, trans, cb, ub2)
            hit2 = obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub2, nb_b[c2, OBB_HALF], nb_b[c2, OBB_HALF + 1],
                             nb_b[c2, OBB_HALF + 2])
            g2 = ((nb_a[ia, OBB_CENTER] - cb[0]) ** 2 + (nb_a[ia, OBB_CENTER + 1] - cb[1]) ** 2
                  + (nb_a[ia, OBB_CENTER + 2] - cb[2]) ** 2)
            if hit1 and hit2 and g1 < g2:
                c1, c2 = c2, c1
            if hit1:
                stack[top, 0] = ia
                stack[top, 1] = c1
                top += 1
            if hit2:
                stack[top, 0] = ia
                stack[top, 1] = c2
                top += 1
    return False, -1, -1


@strict_entry
@njit(cache=True, nogil=True)
def tree_intersects_pair(ni_a, nb_a, tv_a, pose_a, ni_b, nb_b, tv_b, pose_b, stack_rows):
    """One pose pair ((4, 4) each, checked here) from Python with the fewest arguments to unbox:
    1 / 0, or -3 / -4 when pose_a / pose_b is not a rigid transform (OBB trees, leaf-direct)."""
    pose_code, rot, trans = checked_relative_pose(pose_a, pose_b)
    if pose_code < 0:
        return pose_code
    scratch = np.empty(OVERLAP_SCRATCH)
    if not obb_roots_overlap(nb_a, nb_b, rot, trans, scratch[0:3], scratch[3:12]):
        return 0  # far apart: no stack, no traversal call
    stack = np.empty((stack_rows, 2), dtype=np.int64)
    hit, _, _ = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack, scratch)
    return 1 if hit else 0


# the layout of a mesh's containment data for solid_tree_intersects_pair (built by
# touche.solids.component_representatives): the mesh's box, a sphere around it, and one vertex
# per connected component, in the mesh's frame
HELD_LOW, HELD_HIGH, HELD_CENTER, HELD_RADIUS, HELD_POINTS = 0, 3, 6, 9, 10


@njit(cache=True, nogil=True)
def _representative_in_solid_box(solid_pose, solid_held, other_pose, other_held, k):
    """(inside the box, x, y, z): the other mesh's component representative ``k`` moved into the
    solid's frame, and whether it lies in the solid's box."""
    s = solid_pose
    o = other_pose
    x = other_held[HELD_POINTS + 3 * k]
    y = other_held[HELD_POINTS + 3 * k + 1]
    z = other_held[HELD_POINTS + 3 * k + 2]
    wx = o[0, 0] * x + o[0, 1] * y + o[0, 2] * z + o[0, 3] - s[0, 3]
    wy = o[1, 0] * x + o[1, 1] * y + o[1, 2] * z + o[1, 3] - s[1, 3]
    wz = o[2, 0] * x + o[2, 1] * y + o[2, 2] * z + o[2, 3] - s[2, 3]
    px = s[0, 0] * wx + s[1, 0] * wy + s[2, 0] * wz
    py = s[0, 1] * wx + s[1, 1] * wy + s[2, 1] * wz
    pz = s[0, 2] * wx + s[1, 2] * wy + s[2, 2] * wz
    inside = (solid_held[HELD_LOW] <= px <= solid_held[HELD_HIGH] and solid_held[HELD_LOW + 1] <= py <= solid_held[HELD_HIGH + 1]
              and solid_held[HELD_LOW + 2] <= pz <= solid_held[HELD_HIGH + 2])
    return inside, px, py, pz


@njit(cache=True, nogil=True)
def _representative_in_box(solid_pose, solid_held, other_pose, other_held):
    """Some component representative of the other mesh, moved into the solid's frame, lies in
    the solid's box."""
    for k in range((other_held.shape[0] - HELD_POINTS) // 3):
        if _representative_in_solid_box(solid_pose, solid_held, other_pose, other_held, k)[0]:
            return True
    return False


@njit(cache=True, nogil=True)
def _may_hold(pose_a, pose_b, held_a, held_b, solid_a, solid_b):
    """Whether a solid among two meshes whose surfaces do not meet may hold the other: their
    bounding spheres reach each other and a component representative of the other mesh lies in
    the solid's box (necessary conditions; the exact test is the caller's)."""
    a = pose_a
    b = pose_b
    x = held_a[HELD_CENTER]
    y = held_a[HELD_CENTER + 1]
    z = held_a[HELD_CENTER + 2]
    u = held_b[HELD_CENTER]
    v = held_b[HELD_CENTER + 1]
    w = held_b[HELD_CENTER + 2]
    # touche.solids._spheres_apart's arithmetic
    gx = a[0, 0] * x + a[0, 1] * y + a[0, 2] * z + a[0, 3] - (b[0, 0] * u + b[0, 1] * v + b[0, 2] * w + b[0, 3])
    gy = a[1, 0] * x + a[1, 1] * y + a[1, 2] * z + a[1, 3] - (b[1, 0] * u + b[1, 1] * v + b[1, 2] * w + b[1, 3])
    gz = a[2, 0] * x + a[2, 1] * y + a[2, 2] * z + a[2, 3] - (b[2, 0] * u + b[2, 1] * v + b[2, 2] * w + b[2, 3])
    reach = held_a[HELD_RADIUS] + held_b[HELD_RADIUS]
    if gx * gx + gy * gy + gz * gz > reach * reach:
        return False
    if solid_a and _representative_in_box(pose_a, held_a, pose_b, held_b):
        return True
    return solid_b and _representative_in_box(pose_b, held_b, pose_a, held_a)


@njit(cache=True, nogil=True)
def solid_tree_intersects_pair(ni_a, nb_a, tv_a, pose_a, ni_b, nb_b, tv_b, pose_b, stack_rows, held_a, held_b,
                               solid_a, solid_b):
    """tree_intersects_pair for a pair with a solid mesh, and the cheap half of its containment
    test in the same call (a single pair's Python steps cost several times the tree descent):
    1 when the surfaces meet; 0 when they do not and neither solid can hold the other mesh
    (the bounding spheres are apart, or no component representative of the other mesh lies in
    the solid's box); 2 when a representative lies in a solid's box (the caller runs the exact
    winding-number test); -3 / -4 for a pose that is not a rigid transform."""
    code = tree_intersects_pair(ni_a, nb_a, tv_a, pose_a, ni_b, nb_b, tv_b, pose_b, stack_rows)
    if code != 0:
        return code
    return 2 if _may_hold(pose_a, pose_b, held_a, held_b, solid_a, solid_b) else 0


@njit(cache=True, nogil=True)
def solid_tree_intersects_many(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, bv, stack_rows,
                               max_leaf, held_a, held_b, solid_a, solid_b, out_code, lo, hi):
    """tree_intersects_many for a pair with a solid mesh, with solid_tree_intersects_pair's codes
    (1 the surfaces meet, 0 neither solid can hold the other mesh, 2 a representative lies in a
    solid's box: the caller's exact test) in ``out_code[lo .. hi - 1]``: one pass over the batch
    instead of the surface test and then a candidates pass (a far batch's fixed cost)."""
    rot, trans, stack, scratch, root_center, root_axes = _batch_scratch(stack_rows)
    for k in range(lo, hi):
        pose_a = batch_pose(poses_a, k)
        pose_b = batch_pose(poses_b, k)
        relative_rotation_translation(pose_a, pose_b, rot, trans)
        hit = False
        if bv != BV_OBB or obb_roots_overlap(nb_a, nb_b, rot, trans, root_center, root_axes):
            hit, _, _ = _intersects_any(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, bv, stack,
                                        max_leaf, scratch)
        if hit:
            out_code[k] = 1
        else:
            out_code[k] = 2 if _may_hold(pose_a, pose_b, held_a, held_b, solid_a, solid_b) else 0


@njit(cache=True, nogil=True)
def _held_code(solid_pose, solid_held, other_pose, other_held, rec_f, rec_i, root, root_box, tri, depth, direction):
    """Whether the solid holds a component of the other mesh (whose surfaces it does not meet):
    1 when some component representative, moved into the solid's frame (_representative_in_box's
    arithmetic), lies in the solid's box with a certified non-zero crossing count along
    ``direction`` (touche.meshquery._inside_closed_any's rule); 0 when every representative in the
    box has a certified count of 0; 2 when a count was not certified (the caller's exact test)."""
    stack_a = np.empty(2 * depth + 8, dtype=np.int64)
    stack_b = np.empty(2 * depth + 8, dtype=np.int64)
    undecided = False
    for k in range((other_held.shape[0] - HELD_POINTS) // 3):
        inside, px, py, pz = _representative_in_solid_box(solid_pose, solid_held, other_pose, other_held, k)
        if not inside:
            continue
        total, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, px, py, pz, direction[0], direction[1],
                                          direction[2], stack_a, stack_b)
        if not certain:
            undecided = True
        elif total != 0:
            return 1
    return 2 if undecided else 0


@njit(cache=True, nogil=True)
def solid_held_pair(pose_a, pose_b, held_a, held_b, solid_a, solid_b, rec_f_a, rec_i_a, root_a, root_box_a, tri_a,
                    depth_a, rec_f_b, rec_i_b, root_b, root_box_b, tri_b, depth_b, direction):
    """The exact half of the containment test of one pose pair whose surfaces do not meet (after
    solid_tree_intersects_pair's 2): 1 when a solid holds a component of the other mesh, 0 when
    neither does, 2 when a crossing count was not certified (the caller's winding-number test).
    A mesh that is not solid passes the other's crossing data in its place (unused)."""
    code_a = 0
    if solid_a:
        code_a = _held_code(pose_a, held_a, pose_b, held_b, rec_f_a, rec_i_a, root_a, root_box_a, tri_a, depth_a,
                            direction)
        if code_a == 1:
            return 1
    code_b = 0
    if solid_b:
        code_b = _held_code(pose_b, held_b, pose_a, held_a, rec_f_b, rec_i_b, root_b, root_box_b, tri_b, depth_b,
                            direction)
        if code_b == 1:
            return 1
    return 2 if code_a == 2 or code_b == 2 else 0


@njit(cache=True, nogil=True)
def solid_held_many(poses_a, poses_b, rows, held_a, held_b, solid_a, solid_b, rec_f_a, rec_i_a, root_a, root_box_a,
                    tri_a, depth_a, rec_f_b, rec_i_b, root_b, root_box_b, tri_b, depth_b, direction, out_code, lo, hi):
    """solid_held_pair for the pose pairs ``rows[lo .. hi - 1]`` (poses (1 or n, 4, 4), a batch of
    one broadcasts): ``out_code[i]`` for ``rows[i]``."""
    for i in range(lo, hi):
        k = rows[i]
        out_code[i] = solid_held_pair(poses_a[k if poses_a.shape[0] > 1 else 0],
                                      poses_b[k if poses_b.shape[0] > 1 else 0], held_a, held_b, solid_a, solid_b,
                                      rec_f_a, rec_i_a, root_a, root_box_a, tri_a, depth_a,
                                      rec_f_b, rec_i_b, root_b, root_box_b, tri_b, depth_b, direction)


@njit(cache=True, nogil=True)
def solid_candidates_many(poses_a, poses_b, held_a, held_b, solid_a, solid_b, surface, out_candidate, lo, hi):
    """For pose pairs ``lo .. hi - 1`` (poses (1 or n, 4, 4), a batch of one broadcasts) whose
    surfaces do not meet (``surface[k]`` False): ``out_candidate[k]`` True when a solid may hold
    the other mesh (_may_hold; the exact winding-number test is the caller's), else False."""
    for k in range(lo, hi):
        out_candidate[k] = not surface[k] and _may_hold(poses_a[k if poses_a.shape[0] > 1 else 0],
                                                        poses_b[k if poses_b.shape[0] > 1 else 0], held_a, held_b,
                                                        solid_a, solid_b)


@njit(cache=True, nogil=True)
def tree_intersects_kdop_many(ni_a, nb_a, tv_a, ids_a, dops_a, poses_a, ni_b, nb_b, tv_b, ids_b, dops_b, poses_b,
                              directions, stack_rows, max_leaf, out_hit, out_ids, lo, hi):
    """tree_intersects_many with the trees' node k-DOPs (BV_KDOP, see _kdop_pair); entries
    ``lo .. hi - 1``."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    out = np.empty((1 + max_leaf * max_leaf + 2 * max_leaf, 4), dtype=np.int64)
    for k in range(lo, hi):
        relative_rotation_translation(batch_pose(poses_a, k), batch_pose(poses_b, k), rot, trans)
        stack[0, :] = 0
        top, count = tree_collide_with(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, BV_KDOP, dops_a,
                                       dops_b, directions, -1, -1, stack, 1, out, 1)
        out_hit[k] = count > 0
        out_ids[k, 0] = out[0, 0] if count > 0 else -1
        out_ids[k, 1] = out[0, 1] if count > 0 else -1
