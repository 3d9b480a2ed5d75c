"""Distance between two bounding-volume hierarchies with closest points and the original triangle
ids: branch and bound over node pairs (``tree_distance``), and the leaf-direct search behind
touche.bvh.distance / touche.distance (``distance_search``: node and leaf pairs pruned along the
closest pair's direction, by the nodes' exact supports in the far field).

Frames (``rot``, ``trans`` map B's mesh frame into A's), tree layout, descent rule: bvh_descent.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit, strict_entry  # noqa: E402
from touche._kernels.primitives.closest import closest_points_triangle_triangle  # noqa: E402
from touche._kernels.primitives.tri_distance import load_moved_triangle, load_triangle  # noqa: E402
from touche._kernels.primitives.tri_distance import triangle_distance_sq  # noqa: E402
from touche._kernels.trees.bvh_descent import DIRECT_LEAF, DIRECT_LEAF_DISTANCE, child_pairs  # noqa: E402
from touche._kernels.trees.bvh_descent import is_direct_leaf, move_triangle, push_nearer_last  # noqa: E402
from touche._kernels.trees.bvh_descent import batch_pose, relative_rotation_translation  # noqa: E402
from touche._kernels.trees.bvh_bounds import axis_pair_gap, box_support, rss_lower_bound, rss_pair_bound  # noqa: E402
from touche._kernels.trees.bvh_bounds import triangle_gap  # noqa: E402
from touche._kernels.trees.bvh_overlap import OVERLAP_SCRATCH, tree_overlap_direct  # noqa: E402
from touche._kernels.trees.bvh_volumes import OBB_AXES, OBB_HALF, SPHERE_RADIUS  # noqa: E402
from touche._kernels.base.posecheck import invalid_pose  # noqa: E402
from touche._kernels.base.touching import touching_tolerance  # noqa: E402


# ---------------------------------------------------------------------------------------------
# distance (branch and bound)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _copy_points(best_a, best_b, pa, pb):
    """The closest pair (pa, pb) into best_a, best_b (3,)."""
    for i in range(3):
        best_a[i] = pa[i]
        best_b[i] = pb[i]


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
    bounds[0] = rss_lower_bound(nb_a, 0, nb_b, 0, rot, trans, best)[0]
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
                        _copy_points(best_a, best_b, pa, pb)
                        best_ta = ids_a[ka]
                        best_tb = ids_b[kb]
            if best == 0.0:
                break
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        l1, key1 = rss_lower_bound(nb_a, c1a, nb_b, c1b, rot, trans, best)
        l2, key2 = rss_lower_bound(nb_a, c2a, nb_b, c2b, rot, trans, best)
        top = push_nearer_last(stack, bounds, top, best, c1a, c1b, l1, key1, c2a, c2b, l2, key2)
    return best, best_a, best_b, best_ta, best_tb


@njit(cache=True, nogil=True)
def tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, max_leaf, stack, bounds):
    """tree_distance, but an overlapping pair is first looked for with the (much cheaper)
    collision traversal: with the meshes crossing, the distance's branch and bound would have to
    wade through every overlapping node pair to find a zero. Same results in A's frame."""
    hit, ka, kb = tree_overlap_direct(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, DIRECT_LEAF, stack,
                                      np.empty(OVERLAP_SCRATCH))
    if hit:
        ta = ids_a[ka]
        tb = ids_b[kb]
        moved = np.empty((1, 3, 3))
        move_triangle(tv_b, kb, rot, trans, moved)
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


# tree_distance_pair_into's codes besides the poses' INVALID_POSE_A / _B (touche.results.Status
# for the first two)
PAIR_SEPARATED, PAIR_TOUCHING, PAIR_MEETING = 0, 1, 3


@strict_entry
@njit(cache=True, nogil=True)
def tree_distance_pair_into(ni_a, nb_a, tv_a, ids_a, pose_a, ni_b, nb_b, tv_b, ids_b, pose_b, stack_rows, max_leaf,
                            scale_a, scale_b, out):
    """One pose pair from Python ((4, 4) each, checked here): touche.distance of two surface
    meshes in one call (the Python steps around tree_distance_one cost more than a far query).
    Fills ``out (10,)`` with the distance, the closest points (world) and, apart, the unit
    normal from A to B; returns (code, triangle id of A, of B): PAIR_SEPARATED / PAIR_TOUCHING
    (apart: distance above / within the touching band of touching.touching_tolerance), or
    PAIR_MEETING (the surfaces touch or cross: distance 0, the normal (a face normal) is the
    caller's), or INVALID_POSE_A / _B."""
    bad = invalid_pose(pose_a, pose_b)
    if bad:
        return bad, -1, -1
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    bounds = np.empty(stack_rows)
    d, qa, qb, ta, tb = tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans,
                                              max_leaf, stack, bounds)
    out[0] = d
    for i in range(3):  # tree_distance_one's arithmetic
        out[1 + i] = pose_a[i, 0] * qa[0] + pose_a[i, 1] * qa[1] + pose_a[i, 2] * qa[2] + pose_a[i, 3]
        out[4 + i] = pose_a[i, 0] * qb[0] + pose_a[i, 1] * qb[1] + pose_a[i, 2] * qb[2] + pose_a[i, 3]
    if not d > 0.0:
        return PAIR_MEETING, ta, tb
    for i in range(3):
        out[7 + i] = (out[4 + i] - out[1 + i]) / d
    if d > touching_tolerance(scale_a, pose_a, scale_b, pose_b):
        return PAIR_SEPARATED, ta, tb
    return PAIR_TOUCHING, ta, tb


@njit(cache=True, nogil=True)
def tree_distance_many(ni_a, nb_a, tv_a, ids_a, poses_a, ni_b, nb_b, tv_b, ids_b, poses_b, stack_rows, max_leaf,
                       out_distance, out_point_a, out_point_b, out_ids, lo, hi):
    """Batch ((n|1, 4, 4) poses each, broadcast): distances (n,) (0 when the surfaces touch or
    cross), closest points in WORLD coordinates (n, 3) each, original triangle ids (n, 2); this
    call fills entries ``lo .. hi - 1`` (the thread pool's chunk, touche._parallel.run)."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    bounds = np.empty(stack_rows)
    for k in range(lo, hi):
        pa = batch_pose(poses_a, k)
        relative_rotation_translation(pa, batch_pose(poses_b, k), rot, trans)
        d, qa, qb, ta, tb = tree_distance_checked(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans,
                                                  max_leaf, stack, bounds)
        out_distance[k] = d
        for i in range(3):
            out_point_a[k, i] = pa[i, 0] * qa[0] + pa[i, 1] * qa[1] + pa[i, 2] * qa[2] + pa[i, 3]
            out_point_b[k, i] = pa[i, 0] * qb[0] + pa[i, 1] * qb[1] + pa[i, 2] * qb[2] + pa[i, 3]
        out_ids[k, 0] = ta
        out_ids[k, 1] = tb


@njit(cache=True, nogil=True)
def tree_distance_direct(ni_a, nb_a, tv_a, ids_a, ni_b, nb_b, tv_b, ids_b, rot, trans, upper, direct, stack,
                         bounds):
    """tree_distance with leaf-direct nodes (<= ``direct`` triangles), the cheaper rss_pair_bound
    and the pruning along the closest pair's direction (distance_search). Same contract and
    results (distance exact up to rounding; among equal distances another pair may be
    reported)."""
    best, best_a, best_b, ka, kb = distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, upper,
                                                    np.full(3, np.nan), np.full(3, np.nan), -1, -1, direct, stack,
                                                    bounds)
    if ka < 0:
        return best, best_a, best_b, -1, -1
    return best, best_a, best_b, ids_a[ka], ids_b[kb]


# A node pair is in the far field when its bounding spheres' radii sum to less than
# best / FAR_FIELD: the nodes are small against their distance, every pair near the answer is
# within a fraction of a percent of it, and the oriented boxes' projections on the pruning axis
# overshoot the nodes' contents by about a node's width times the tilt of its box. There the
# pair's gap along the axis is taken from the exact supports of both nodes (the largest n.x of
# their triangles' corners, _node_support), which prunes most of those pairs: over the benchmark
# panel's far poses node pairs popped fell 3-7x (soccerball 1,237 -> 249 per query). The
# constant is a ratio of lengths, not fitted to a mesh; measured on the panel (far and near
# poses, node pairs popped and time): with 0.5 the supports are computed on near poses too and
# cost more than they prune there; with 8 only a third of the far poses' gain remains.
FAR_FIELD = 2.0
# The supports are upper bounds within this fraction of the best distance of the exact ones
# (_node_support): pairs that close to the best are not pruned by them anyway.
SUPPORT_SLACK = 1e-9
# Nodes visited per support (_node_support): a support costs at most about as much as a few node
# pairs of the search; beyond, the boxes' reach is the bound.
SUPPORT_VISITS = 64


@njit(cache=True, nogil=True, inline="always")
def box_overshoot(nb, node, d0, d1, d2):
    """How far the box of ``node`` may reach beyond its contents along d: 2 (p0 + p1 + p2 - max p_i)
    with p_i = h_i |u_i . d|. Only decides whether exact supports are worth computing (the
    box's pad of a few ulps is not accounted for)."""
    p0 = nb[node, OBB_HALF] * abs(nb[node, OBB_AXES] * d0 + nb[node, OBB_AXES + 1] * d1 + nb[node, OBB_AXES + 2] * d2)
    p1 = nb[node, OBB_HALF + 1] * abs(nb[node, OBB_AXES + 3] * d0 + nb[node, OBB_AXES + 4] * d1
                                      + nb[node, OBB_AXES + 5] * d2)
    p2 = nb[node, OBB_HALF + 2] * abs(nb[node, OBB_AXES + 6] * d0 + nb[node, OBB_AXES + 7] * d1
                                      + nb[node, OBB_AXES + 8] * d2)
    return 2.0 * (p0 + p1 + p2 - max(p0, max(p1, p2)))


@njit(cache=True, nogil=True, inline="always")
def _memo_get(memo_index, memo_value, fill, base, node):
    """The memoised support of ``node`` or NaN. Each tree's memo is a sparse set (Briggs &
    Torczon) in columns ``base ..`` of ``memo_index`` (row 0: node -> entry, row 1: entry -> node)
    and ``memo_value``: row 0 is never initialised, an entry counts only when it is below the
    fill and points back at the node, so emptying the memo (a new pruning axis) is fill = 0."""
    i = memo_index[0, base + node]
    if 0 <= i < fill and memo_index[1, base + i] == node:
        return memo_value[base + i]
    return np.nan


@njit(cache=True, nogil=True)
def _node_support(ni, nb, tv, node, d0, d1, d2, direct, memo_index, memo_value, fills, side, base, slack, work):
    """An upper bound of the largest d.x over the corners of ``node``'s triangles, within
    ``slack`` of it, memoised per pruning axis (``fills[side]``, columns from ``base``: _memo_get;
    the node and the leaves it reaches are memoised). Branch and bound over the subtree with the
    explicit stack ``work`` (>= 2 x the tree's depth): the child whose box reaches farther along d
    first, a node whose box reaches at most ``slack`` beyond what is held stands for itself by its
    box's reach (a flat face across d ties every corner, and without the slack the search would
    visit all of them). At most ``fills[2]`` nodes are opened (counted down; then the boxes'
    reach stands for the rest), so that a large node costs no more than a few node pairs of the
    search. A loop, not a recursion: numba compiled the recursive form in ~5 s."""
    known = _memo_get(memo_index, memo_value, fills[side], base, node)
    if known == known:
        return known
    high = -np.inf
    work[0] = node
    top = 1
    while top > 0:
        top -= 1
        x = work[top]
        reach = _memo_get(memo_index, memo_value, fills[side], base, x)
        if reach == reach:  # memoised: exact within the slack
            high = max(high, reach)
            continue
        reach = box_support(nb, x, d0, d1, d2)
        if reach <= high + slack or fills[2] <= 0:  # covered, or this bound's visits are spent
            high = max(high, reach)
            continue
        fills[2] -= 1
        if is_direct_leaf(ni, x, direct):
            corner = -np.inf
            for k in range(ni[x, 0], ni[x, 0] + ni[x, 1]):
                for j in range(3):
                    corner = max(corner, d0 * tv[k, j, 0] + d1 * tv[k, j, 1] + d2 * tv[k, j, 2])
            _memo_put(memo_index, memo_value, fills, side, base, x, corner)
            high = max(high, corner)
            continue
        near = x + 1
        other = ni[x, 2]
        if box_support(nb, near, d0, d1, d2) < box_support(nb, other, d0, d1, d2):
            near, other = other, near
        work[top] = other
        work[top + 1] = near  # popped first
        top += 2
    # a child's box may reach beyond its parent's: both bound the node, take the nearer
    high = min(high, box_support(nb, node, d0, d1, d2))
    _memo_put(memo_index, memo_value, fills, side, base, node, high)
    return high


@njit(cache=True, nogil=True, inline="always")
def _memo_put(memo_index, memo_value, fills, side, base, node, value):
    i = fills[side]
    memo_index[1, base + i] = node
    memo_index[0, base + node] = i
    memo_value[base + i] = value
    fills[side] = i + 1


@njit(cache=True, nogil=True)
def _child_bound(nb_a, ia, nb_b, ib, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn):
    """``(bound, key)`` of a child pair: the gap along the closest pair's direction first (when
    there is one: ``axis``), rss_pair_bound when that does not reach ``best``; in the far field
    (FAR_FIELD) ``(gap, NaN)``: the caller goes on with _far_child_bound."""
    if axis:
        gap = axis_pair_gap(nb_a, ia, nb_b, ib, n0, n1, n2, m0, m1, m2, tn)
        if gap >= best:
            return gap, gap
        if (nb_a[ia, SPHERE_RADIUS] + nb_b[ib, SPHERE_RADIUS]) * FAR_FIELD < best:
            return gap, np.nan
    return rss_pair_bound(nb_a, ia, nb_b, ib, rot, trans, best)


@njit(cache=True, nogil=True)
def _far_child_bound(ni_a, nb_a, tv_a, ia, ni_b, nb_b, tv_b, ib, rot, trans, best, gap, n0, n1, n2, m0, m1, m2,
                     tn, direct, memo_index, memo_value, fills, work):
    """_child_bound in the far field, from the boxes' gap: the exact supports' gap along the axis
    (A's highest n.x, B's lowest m.x + tn: _node_support, B's memo in the columns after A's),
    then rss_pair_bound."""
    # the supports can prune only if the boxes leave them room: a fitted box touches its node's
    # corners on every face (bvh_volumes.fit_node), so the support is at least the reach of the
    # face that reaches farthest along the axis, i.e. the box's reach minus box_overshoot
    room = gap + box_overshoot(nb_a, ia, n0, n1, n2) + box_overshoot(nb_b, ib, -m0, -m1, -m2)
    if room >= best:
        slack = SUPPORT_SLACK * best
        fills[2] = SUPPORT_VISITS
        high_a = _node_support(ni_a, nb_a, tv_a, ia, n0, n1, n2, direct, memo_index, memo_value, fills, 0, 0, slack,
                               work)
        fills[2] = SUPPORT_VISITS
        high_b = _node_support(ni_b, nb_b, tv_b, ib, -m0, -m1, -m2, direct, memo_index, memo_value, fills, 1,
                               ni_a.shape[0], slack, work)
        gap = max(gap, tn - high_b - high_a)
        if gap >= best:
            return gap, gap
    bound, key = rss_pair_bound(nb_a, ia, nb_b, ib, rot, trans, best)
    return max(bound, gap), key


@njit(cache=True, nogil=True, inline="always")
def _axis_update(u0, u1, u2, rot, trans, n0, n1, n2, m0, m1, m2, tn):
    """distance_search's pruning axis from the closest pair's difference u (A's frame): (True,
    n = u / |u|, m = rot^T n (B's frame), tn = trans . n), or (False, the axis passed) when u is 0."""
    length = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if length > 0.0:
        n0 = u0 / length
        n1 = u1 / length
        n2 = u2 / length
        m0 = rot[0, 0] * n0 + rot[1, 0] * n1 + rot[2, 0] * n2
        m1 = rot[0, 1] * n0 + rot[1, 1] * n1 + rot[2, 1] * n2
        m2 = rot[0, 2] * n0 + rot[1, 2] * n1 + rot[2, 2] * n2
        tn = trans[0] * n0 + trans[1] * n1 + trans[2] * n2
        return True, n0, n1, n2, m0, m1, m2, tn
    return False, n0, n1, n2, m0, m1, m2, tn


@njit(cache=True, nogil=True)
def distance_search(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, best, best_a, best_b, best_ka, best_kb, direct,
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
    time 0.4-0.75x; n is updated at each improvement.

    In the far field (FAR_FIELD: node pairs small against the best distance) the boxes'
    projections are replaced by the nodes' exact supports along n (_far_child_bound,
    _node_support, memoised until n changes): node pairs popped fell 3-7x on the panel's far
    poses (soccerball 1,237 -> 249 per query)."""
    axis = False
    n0 = n1 = n2 = m0 = m1 = m2 = tn = 0.0
    if best_ka >= 0 and best > 0.0:
        axis, n0, n1, n2, m0, m1, m2, tn = _axis_update(best_b[0] - best_a[0], best_b[1] - best_a[1],
                                                        best_b[2] - best_a[2], rot, trans, n0, n1, n2, m0, m1,
                                                        m2, tn)
    # the far field's support memo (_far_child_bound), made on first use: near poses seldom need it
    memo_index = np.empty((2, 0), np.int64)
    memo_value = np.empty(0)
    work = np.empty(0, np.int64)
    fills = np.zeros(3, np.int64)  # the memo fills of A and B, the visits left (_node_support)
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
                        _copy_points(best_a, best_b, pa, pb)
                        best_ka = ka
                        best_kb = kb
                        found, n0, n1, n2, m0, m1, m2, tn = _axis_update(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2],
                                                                         rot, trans, n0, n1, n2, m0, m1, m2, tn)
                        if found:
                            axis = True
                            fills[0] = 0  # supports along the old axis are no bounds along the new one
                            fills[1] = 0
                            low_b = min(n0 * B[0] + n1 * B[1] + n2 * B[2], n0 * B[3] + n1 * B[4] + n2 * B[5],
                                        n0 * B[6] + n1 * B[7] + n2 * B[8])
            continue
        c1a, c2a, c1b, c2b = child_pairs(ni_a, nb_a, ni_b, nb_b, ia, ib, leaf_a, leaf_b)
        l1, key1 = _child_bound(nb_a, c1a, nb_b, c1b, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn)
        l2, key2 = _child_bound(nb_a, c2a, nb_b, c2b, rot, trans, best, axis, n0, n1, n2, m0, m1, m2, tn)
        if key1 != key1 or key2 != key2:  # the far field
            if memo_value.shape[0] == 0:
                memo_index = np.empty((2, ni_a.shape[0] + ni_b.shape[0]), np.int64)
                memo_value = np.empty(ni_a.shape[0] + ni_b.shape[0])
                work = np.empty(stack.shape[0], np.int64)
            if key1 != key1:
                l1, key1 = _far_child_bound(ni_a, nb_a, tv_a, c1a, ni_b, nb_b, tv_b, c1b, rot, trans, best, l1, n0, n1,
                                            n2, m0, m1, m2, tn, direct, memo_index, memo_value, fills, work)
            if key2 != key2:
                l2, key2 = _far_child_bound(ni_a, nb_a, tv_a, c2a, ni_b, nb_b, tv_b, c2b, rot, trans, best, l2, n0, n1,
                                            n2, m0, m1, m2, tn, direct, memo_index, memo_value, fills, work)
        top = push_nearer_last(stack, bounds, top, best, c1a, c1b, l1, key1, c2a, c2b, l2, key2)
    return best, best_a, best_b, best_ka, best_kb
