"""Node-pair tests and descent helpers shared by the traversals of two bounding-volume hierarchies
(bvh_overlap, bvh_distance, bvh_coherence, bvh_threshold, clearance): the OBB overlap test of
two nodes (Ericson 4.4.1), the order children are pushed in, a triangle of B moved into A's
frame, the relative pose of two trees, and which nodes count as leaves (DIRECT_LEAF). Ericson
6.3 (descent rules, iterative traversal with an explicit stack), 6.4 (OBB trees); Eberly S1 7.

Frames: tree A in its mesh frame, tree B in its own; ``rot (3, 3)``, ``trans (3,)`` map B's mesh
frame into A's (``x_A = rot @ x_B + trans``). Everything is computed in A's mesh frame. Trees are
touche.bvh's flat arrays (layout: bvh_volumes.py).

Descent rule: at a node pair one node is split, never both (erratum S1 L2426-2461: descending
both trees at one pair reports leaf pairs several times): the one with the larger bounding
sphere, unless it is a leaf (or at its depth limit). Every pair of leaves is thus visited at
most once, and every reported pair is reported exactly once.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.trees.bvh_volumes import OBB_AXES, OBB_CENTER, OBB_HALF, SPHERE_RADIUS  # noqa: E402
from touche._kernels.base.posecheck import is_rigid_transform  # noqa: E402
from touche._kernels.primitives.overlap import obb_obb_overlap_relative  # noqa: E402
from touche._kernels.primitives.sat_triangles import triangle_triangle_overlap  # noqa: E402


OBB_EPSILON = 1e-12  # Ericson 4.4.2: |R_ij| + eps keeps near-parallel edge axes from separating


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


# node_obb_b, obb_pair, center_gap2, is_direct_leaf: inline, called per node pair. An inlined
# helper still binds the arrays it takes (reference counting per call): the hottest loop,
# bvh_overlap.tree_overlap_direct, writes the smallest of them out instead
@njit(cache=True, nogil=True, inline="always")
def node_obb_b(nb_b, ib, rot, trans, cb, ub):
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


# ---------------------------------------------------------------------------------------------
# leaves
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def move_triangle(tv_b, k, rot, trans, out):
    """Triangle k of B into A's frame, written to out[0] ((1, 3, 3) buffer)."""
    for c in range(3):
        x = tv_b[k, c, 0]
        y = tv_b[k, c, 1]
        z = tv_b[k, c, 2]
        for i in range(3):
            out[0, c, i] = rot[i, 0] * x + rot[i, 1] * y + rot[i, 2] * z + trans[i]


@njit(cache=True, nogil=True, inline="always")
def leaf_pair_overlap(ni_a, tv_a, ia, ni_b, tv_b, ib, rot, trans, moved):
    """The first overlapping (closed) triangle pair of A's leaf ia and B's leaf ib, as tree
    positions ``(ka, kb)``, or (-1, -1); each of B's triangles is moved into A's frame once, into
    ``moved`` ((1, 3, 3) scratch)."""
    for kb in range(ni_b[ib, 0], ni_b[ib, 0] + ni_b[ib, 1]):
        move_triangle(tv_b, kb, rot, trans, moved)
        for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
            if triangle_triangle_overlap(tv_a, ka, moved, 0):
                return ka, kb
    return -1, -1


@njit(cache=True, nogil=True, inline="always")
def batch_pose(poses, k):
    """Pose of query k in a batch of (n|1, 4, 4) poses (a single pose serves every query)."""
    return poses[k if poses.shape[0] > 1 else 0]


@njit(cache=True, nogil=True)
def checked_relative_pose(pose_a, pose_b):
    """``(code, rot, trans)``: code 0 and the relative pose of two rigid (4, 4) poses, or code -3 /
    -4 when pose_a / pose_b is not a rigid transform (rot, trans then unset)."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    if not is_rigid_pose(pose_a):
        return -3, rot, trans
    if not is_rigid_pose(pose_b):
        return -4, rot, trans
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    return 0, rot, trans


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


# ---------------------------------------------------------------------------------------------
# the fast paths behind touche.bvh.intersects / distance (and touche.intersects / distance)
# ---------------------------------------------------------------------------------------------

# Boolean and distance traversals treat a node of at most DIRECT_LEAF triangles as a leaf and
# test its triangles directly ("leaf-direct", Ericson 6.3.4): on diff_ring.stl (57,640
# triangles) this halves the node pairs of a distance query and cuts a boolean query's OBB tests
# by ~40 % for a few more triangle tests. The tree below such a node is simply not used here
# (a leaf_size=4 build gives the same truncated tree: the builds are deterministic top-down).
DIRECT_LEAF = 4
# Distance: with the leaf pairs pruned along the closest pair's direction (distance_search: a
# triangle pair that cannot be nearer costs a dozen multiplications) larger leaves pay; over the
# whole benchmark panel (15 meshes, far and near poses, one process) 8 measured 0.78-1.03x the
# time of 6, 3 and 4 slower on every mesh, 12 up to 1.28x on some (z1_link01 near).
DIRECT_LEAF_DISTANCE = 8


@njit(cache=True, nogil=True, inline="always")
def is_direct_leaf(ni, node, direct):
    return ni[node, 2] < 0 or ni[node, 1] <= direct


@njit(cache=True, nogil=True, inline="always")
def obb_pair(nb_a, ia, cbx, cby, cbz, ub, hb0, hb1, hb2):
    """A's node ia (its OBB in A's frame) against a box given in A's frame."""
    return obb_overlap(
        nb_a[ia, OBB_CENTER], nb_a[ia, OBB_CENTER + 1], nb_a[ia, OBB_CENTER + 2], nb_a[ia, OBB_AXES:OBB_AXES + 9],
        nb_a[ia, OBB_HALF], nb_a[ia, OBB_HALF + 1], nb_a[ia, OBB_HALF + 2], cbx, cby, cbz, ub, hb0, hb1, hb2,
    )


@njit(cache=True, nogil=True, inline="always")
def center_gap2(nb_a, ia, cbx, cby, cbz):
    return ((nb_a[ia, OBB_CENTER] - cbx) ** 2 + (nb_a[ia, OBB_CENTER + 1] - cby) ** 2
            + (nb_a[ia, OBB_CENTER + 2] - cbz) ** 2)


@njit(cache=True, nogil=True)
def is_rigid_pose(m):
    """Finite, last row (0, 0, 0, 1), orthonormal right-handed rotation (posecheck's test)."""
    return is_rigid_transform(m)
