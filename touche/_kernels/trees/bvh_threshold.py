"""Safety margins and certified lower bounds between two bounding-volume hierarchies (issue 19):
touche.intersects(margin=) and touche.distance(lower_bound_only=True) for two meshes
(``tree_threshold_many``).

Frames (``rot``, ``trans`` map B's mesh frame into A's), tree layout, descent rule: bvh_descent.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.primitives.tri_distance import load_moved_triangle, load_triangle  # noqa: E402
from touche._kernels.primitives.tri_distance import triangle_distance_sq  # noqa: E402
from touche._kernels.trees.bvh_descent import DIRECT_LEAF, DIRECT_LEAF_DISTANCE, child_pairs  # noqa: E402
from touche._kernels.trees.bvh_descent import batch_pose, is_direct_leaf, relative_rotation_translation  # noqa: E402
from touche._kernels.trees.bvh_bounds import pair_lower_bound, triangle_gap  # noqa: E402


# ---------------------------------------------------------------------------------------------
# safety margins and certified lower bounds (issue 19): touche.intersects(margin=) and
# touche.distance(lower_bound_only=True) for two meshes
# ---------------------------------------------------------------------------------------------

# A lower-bound query expands node pairs this many levels below the roots; a pair reached there
# contributes its bound (pair_lower_bound) as it is, unless that bound is 0 (its boxes meet):
# such a pair is expanded to its triangles, so the bound is 0 only when two triangles touch.
LOWER_BOUND_LEVELS = 6


@njit(cache=True, nogil=True, inline="always")
def _leaf_pair_distance(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, limit, stop):
    """The smallest distance between a triangle of A's leaf ia and one of B's leaf ib (sqrt of
    triangle_distance_sq: the same number touche.distance reports), or inf: pairs whose
    triangle_gap exceeds ``limit`` or the smallest distance found so far are skipped (they
    cannot come nearer); returns as soon as a distance is within ``stop``."""
    best = np.inf
    for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
        B = load_moved_triangle(tv_b, kb, rot, trans)
        for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
            A = load_triangle(tv_a, ka)
            if triangle_gap(A, B) > min(limit, best):
                continue
            best = min(best, np.sqrt(triangle_distance_sq(A, B)[0]))
            if best <= stop:
                return best
    return best


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
            if _leaf_pair_distance(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, margin, margin) <= margin:
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
            best = min(best, _leaf_pair_distance(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, best, 0.0))
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
    rot = np.empty((3, 3))
    trans = np.empty(3)
    stack = np.empty((stack_rows, 4), dtype=np.int64)
    for k in range(lo, hi):
        relative_rotation_translation(batch_pose(poses_a, k), batch_pose(poses_b, k), rot, trans)
        if threshold < 0.0:
            out[k] = tree_distance_lower_bound(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, LOWER_BOUND_LEVELS,
                                               DIRECT_LEAF_DISTANCE, stack)
        elif tree_within_margin(ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, rot, trans, threshold, DIRECT_LEAF, stack):
            out[k] = 0.0
        else:
            out[k] = np.inf
