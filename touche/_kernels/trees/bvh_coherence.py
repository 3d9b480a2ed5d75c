"""Temporal coherence between two bounding-volume hierarchies (Ericson 6.7): witness pairs and
front tracking for a sequence of queries between the same two trees at slowly changing poses
(touche.bvh.CoherentPair): ``tree_overlap_tracked`` and ``tree_distance_tracked``.

Frames (``rot``, ``trans`` map B's mesh frame into A's), tree layout, descent rule: bvh_descent.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.trees.bvh_volumes import OBB_CENTER, OBB_HALF, SPHERE_RADIUS, moved_point_gap2  # noqa: E402
from touche._kernels.primitives.tri_distance import load_moved_triangle, load_triangle  # noqa: E402
from touche._kernels.primitives.tri_distance import triangle_distance_sq  # noqa: E402
from touche._kernels.primitives.sat_triangles import triangle_triangle_overlap  # noqa: E402
from touche._kernels.trees.bvh_descent import DIRECT_LEAF, DIRECT_LEAF_DISTANCE, center_gap2  # noqa: E402
from touche._kernels.trees.bvh_descent import checked_relative_pose, is_direct_leaf, move_triangle, node_obb_b  # noqa: E402
from touche._kernels.trees.bvh_descent import leaf_pair_overlap, obb_pair  # noqa: E402
from touche._kernels.trees.bvh_distance import distance_search  # noqa: E402
from touche._kernels.trees.bvh_overlap import OVERLAP_SCRATCH, tree_overlap_direct  # noqa: E402


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
                node_obb_b(nb_b, ib, rot, trans, cb, ub)
                moved_ib = ib
            if not obb_pair(nb_a, ia, cb[0], cb[1], cb[2], ub, nb_b[ib, OBB_HALF], nb_b[ib, OBB_HALF + 1],
                             nb_b[ib, OBB_HALF + 2]):
                count = _front_push(fronts, dst, count, capacity, ia, ib)
                continue
            leaf_a = is_direct_leaf(ni_a, ia, DIRECT_LEAF)
            leaf_b = is_direct_leaf(ni_b, ib, DIRECT_LEAF)
            if leaf_a and leaf_b:
                ka, kb = leaf_pair_overlap(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, moved)
                if ka >= 0:
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
                if center_gap2(nb_a, c1, cb[0], cb[1], cb[2]) < center_gap2(nb_a, c2, cb[0], cb[1], cb[2]):
                    c1, c2 = c2, c1
                stack[top, 0] = c1
                stack[top, 1] = ib
                stack[top + 1, 0] = c2
                stack[top + 1, 1] = ib
            else:
                c1 = ib + 1
                c2 = ni_b[ib, 2]
                if (moved_point_gap2(nb_a, ia, nb_b, c1, rot, trans, OBB_CENTER)
                        < moved_point_gap2(nb_a, ia, nb_b, c2, rot, trans, OBB_CENTER)):
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
    pose_code, rot, trans = checked_relative_pose(pose_a, pose_b)
    if pose_code < 0:
        return pose_code
    moved = np.empty((1, 3, 3))
    if witness[0] >= 0:
        move_triangle(tv_b, witness[1], rot, trans, moved)
        if triangle_triangle_overlap(tv_a, witness[0], moved, 0):
            return 1
        ka, kb = leaf_pair_overlap(ni_a, tv_a, witness[2], ni_b, tv_b, witness[3], rot, trans, moved)
        if ka >= 0:
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
def tree_distance_tracked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, pose_a, pose_b, witness, stack_rows,
                          out):
    """Distance with the witness pair of the previous query (``witness (2,)`` tree positions,
    -1: none; updated): its current distance is the initial upper bound of the branch and bound,
    which then prunes from the first node pair on (Ericson 6.7.1: a closest pair changes slowly
    under small motions). A witness at distance 0 answers at once. ``out (9,)``: distance,
    point_a (3), point_b (3) in WORLD coordinates, original ids (2). Returns 0, or -3 / -4 for a
    non-rigid pose. Same distances as tree_distance_checked (exact up to rounding)."""
    pose_code, rot, trans = checked_relative_pose(pose_a, pose_b)
    if pose_code < 0:
        return pose_code
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
        hit, ha, hb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack,
                                          np.empty(OVERLAP_SCRATCH))
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
            best, best_a, best_b, ka, kb = distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, best,
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
