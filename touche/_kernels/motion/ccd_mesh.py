"""Time of impact of triangle meshes: conservative advancement on the BVH with node-level motion
bounds (mesh-mesh, mesh-convex, mesh-plane), for every rigid motion of touche/motion.py.

Seeds: Ericson 9.5.7 (conservative advancement), Ericson 6.3 (simultaneous BVH descent with an
explicit stack), Eberly S1 §5 (screw motion x(t) = c + t v + Rot(t w)(x0 - c), with the X - K(t)
correction of SEED-NOTES S1 L62/L2130) and S1 §7 (a collision system over OBB trees: here the
trees of touche/bvh, read-only).

Why it never tunnels. Everything rests on one inequality. For convex sets P (on A) and Q (on B)
and any FIXED unit axis n, their distance is at least the gap of their projections,
    G(s) = min_{y in Q(s)} n.y - max_{x in P(s)} n.x.
A point x of a rigid body moving by (v, w) about the reference point c(s) (screw: c(s) = c + s v;
keyframe segment: the origin) has the velocity v + w x (x - c(s)), so its speed along n is
    q'(s) = n.v + (x(s) - c(s)).u,   u = n x w          (n.(w x y) = y.(n x w))
and, because x(s) - c(s) only rotates about w,
    |q''(s)| = |(w x y).u| <= |u| |w| |y|,   y = x - c   (|y| is constant on the segment).
So on [t, t + h] (h up to the end of the current keyframe segment of both motions):
    G(t + h) >= G(t) - a h - b h^2 / 2   (Taylor bound: a from the velocities at t, b from the
                                         acceleration bound),
    G(t + h) >= G(t) - a' h              (global bound: q' <= n.v + |u| |y| on the whole segment),
with a = max_P q'_A - min_Q q'_B (a maximum of a linear function over a triangle is at a vertex;
over a ball it is the centre's value + r |u|), b = max |q''_A| + max |q''_B|, and likewise a'.
The step h is the larger of the two bounds' first root of G - bound = margin, so the pair stays
more than ``margin`` apart on [t, t + h): a contact can never be stepped over. The Taylor bound
makes steps near a contact nearly exact (a ~ the true closing speed), the global one keeps far
steps long. Under pure translation (w = 0) a is exactly the closing speed along n and b = 0: the
step is the Newton step of the convex function d(t) (Ericson 9.5.7's GJK ray cast), which never
passes the first root and converges in a few steps.

The traversal (one per query; a batch of motions runs one per loop iteration). Node pairs of
the two trees (or node of A x the convex / plane B) sit on a heap keyed by a time ``t`` before
which nothing under them can touch: every triangle lies in its node's OBB, so the projection
gap of the two OBBs along the best of 7 axes (centre line, both boxes' face normals), advanced
by the bounds above (the box's rates over its corners: the node-level "point speed bound times
node size"), bounds all its triangle pairs. A popped pair advances until its OBB gap is within
DESCEND of the boxes' size, then splits both nodes when their balls are within SPLIT_BOTH of each
other, else the larger one (children inherit t: their triangles are the parent's); leaves
advance their triangle pair (or triangle vs convex / plane) by the exact projection gap until
the distance is <= eps (a contact: reported time t, so the time is never after the first
contact) or t passes the best contact found so far (pruned). Children are pushed nearest-last so
the earliest contact is found first and prunes the rest.

The hull prefix (hull_advance): a mesh lies in its convex hull, so the hulls' distance bounds
the meshes' from below, and conservative advancement of the two hulls (GJK direction, exact
projection gap along it, the ball bounds above) is a valid start for the BVH: it stops once the
hulls are within HANDOVER of their radii (then the tree takes over), or proves a MISS outright
when the hulls never come within eps. It replaces the far-field node steps (one GJK per step
instead of a growing front of node pairs); near the contact the tree's front is the cost.

The hull-contact shortcut: run to contact (HANDOVER = 0), the prefix proves the meshes more than
eps apart on [0, t) and leaves the hulls within 2 eps at t. If the hulls touch on the meshes'
own surfaces (a convex part of both: the hull's closest features are mesh triangles), a pair of
mesh triangles is within 3 eps at t, and t is the first contact: a static depth-first search
through the node pairs holding the hulls' closest points finds that pair (~30 node pairs), and
the tree's front near the contact never has to be proven clear. When the hulls touch over a
concavity (a seam, a hole) the search finds nothing and the tree runs from t as before.

Cost guard: near-misses (gaps just above eps) make small steps; after ``budget`` advancement
steps in one query the first time a leaf gap was <= ``eps_coarse`` is returned as a HIT when it
is not after any pair still waiting (so still never late), else TOI_MAX_ITERATIONS with the
earliest waiting time (a lower bound of any contact).

Conventions: tree arrays as touche/bvh (node_index (n, 3) [first, count, right], node_bounds
(n, 31) with the sphere at [27:31], tri_vertices (m, 3, 3) local, tri_ids (m,)); motions packed
as touche/_kernels/motion/ccd.py (SCREW / KEYFRAMES rows); out (OUT_SIZE,) = (t, point (3) of contact
(the midpoint of the closest points), normal (3) from A to B (NaN when the pair touched at its
first evaluation), triangle id on A, triangle id on B (-1 for a convex / plane B), advancement
steps, node pairs popped, leaf pairs advanced, leaf advancement steps).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance as _tol

from touche._kernels.base import kinds
from touche._kernels.motion.ccd import (KIND_KEYFRAMES, SEGMENT_SIZE, point_rate, support_world, ball_advance, first_order_step,
                  motion_rho, motion_state)
from touche._kernels.convex.gjk import GJK_MAX_ITERATIONS, WARM_SIZE, distance_single, gjk_pair_distance_warm
from touche._kernels.convex.support import relative_into
from touche._kernels.primitives.tri_distance import triangle_distance_sq

# node_bounds layout of touche/_kernels/trees/bvh_build.py (bounding sphere of the node's triangles);
# tests/test_ccd_mesh.py checks these against bvh_build and that the spheres hold the triangles
OBB_CENTER = 6
OBB_AXES = 9
OBB_HALF = 18
SPHERE_CENTER = 27
SPHERE_RADIUS = 30

# B's kind of object
B_MESH = 0
B_CONVEX = 1
B_PLANE = 2  # kinds.PLANE (two-sided) or kinds.HALFSPACE, translating only

# a node pair stops advancing and splits once its OBB gap is <= DESCEND * (r_a + r_b) (ball
# radii): far pairs advance as one (cheap), close ones split so their children can advance
# further (the value is a speed trade-off only; any value is safe; the kernel takes it as an
# argument, tuned in benchmarks/bench_ccd.py)
DESCEND = 0.0025
# the hull prefix (hull_advance) hands over to the BVH once the hulls' gap is <= HANDOVER x the
# sum of the bounding balls' radii (any value >= 0 is safe), and after HULL_STEPS advancement
# steps. 0: the hulls run to contact, where the hull-contact shortcut can end the query (a
# positive value hands over earlier and turns the shortcut off, which makes a hit several times
# slower on closed meshes: benchmarks/bench_ccd.py --mesh)
HANDOVER = 0.0
# a node pair splits both nodes (four children) when their balls' radii are within this factor
# of each other, else the larger one: fewer pair evaluations on the way down than one node at a
# time, and fewer than a tighter factor (measured with bench_ccd.py --mesh-file)
SPLIT_BOTH = 4.0
HULL_STEPS = 256
# the hulls' first-order step (first_order_step) once their gap is below NEAR_HULLS x the sum of the
# balls' radii (farther, the balls' bound is as good and its step costs no support walks)
NEAR_HULLS = 0.05
# parameters of the triangle of a mesh leaf as a GJK shape (kinds.TRIANGLE reads params[0] only);
# a tuple, made into an array inside the kernel: a global array is typed read-only, and GJK / EPA
# would compile once more for it (25 s of a cold warmup)
TRIANGLE_PARAMS = (3.0, 2.0, 3.0, 0.0)

OUT_SIZE = 13  # (t, point (3), normal (3), triangle a, triangle b, steps, node pops, leaf pairs, leaf steps)
STATUS_MISS = kinds.MISS
STATUS_HIT = kinds.HIT
STATUS_TOUCHING = kinds.ALREADY_TOUCHING
STATUS_LIMIT = kinds.TOI_MAX_ITERATIONS


@njit(cache=True, nogil=True, inline="always")
def _axis_terms(state, nx, ny, nz):
    """(n.v, u = n x w, |u|, |w|) of a motion state."""
    wx, wy, wz = state[3], state[4], state[5]
    ux = ny * wz - nz * wy
    uy = nz * wx - nx * wz
    uz = nx * wy - ny * wx
    return (nx * state[0] + ny * state[1] + nz * state[2], ux, uy, uz, np.sqrt(ux * ux + uy * uy + uz * uz),
            np.sqrt(wx * wx + wy * wy + wz * wz))


@njit(cache=True, nogil=True, inline="always")
def _ball_rates(state, nv, ux, uy, uz, ul, wl, x, y, z, r):
    """(max q', min q', |q''| bound, sup q', inf q') over a ball (centre x, y, z, radius r)."""
    yx = x - state[6]
    yy = y - state[7]
    yz = z - state[8]
    reach = np.sqrt(yx * yx + yy * yy + yz * yz) + r
    speed = nv + yx * ux + yy * uy + yz * uz
    return speed + r * ul, speed - r * ul, ul * wl * reach, nv + ul * reach, nv - ul * reach


@njit(cache=True, nogil=True)
def safe_step(gap, margin, a, b, a_global):
    """Largest h such that both bounds keep gap - (a h + b h^2 / 2) >= margin and
    gap - a_global h >= margin (the larger of the two bounds' steps; inf if neither closes)."""
    room = gap - margin
    if room <= 0.0:
        return 0.0
    if b > 0.0:
        taylor = 2.0 * room / (a + np.sqrt(a * a + 2.0 * b * room))
    elif a > 0.0:
        taylor = room / a
    else:
        taylor = np.inf
    if a_global > 0.0:
        flat = room / a_global
    else:
        flat = np.inf
    return max(taylor, flat)


@njit(cache=True, nogil=True, inline="always")
def _apply(m, x, y, z):
    """m (4, 4) applied to the point (x, y, z)."""
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z + m[0, 3],
            m[1, 0] * x + m[1, 1] * y + m[1, 2] * z + m[1, 3],
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z + m[2, 3])


@njit(cache=True, nogil=True, inline="always")
def _rotate_by(m, x, y, z):
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z,
            m[1, 0] * x + m[1, 1] * y + m[1, 2] * z,
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z)


# ----------------------------------------------------------------------------------------------
# the frame of one time: everything is expressed in B's local coordinates at that time (a rigid
# change of coordinates: gaps and the velocity bounds are unchanged); B's boxes, triangles and
# plane are then used as stored, A's are moved by rel = inv(pose_b) pose_a
@njit(cache=True, nogil=True)
def _to_b_frame(pose_b, state, local):
    """A motion state (v, w, c(t), end) in B's coordinates: v, w rotated, c moved."""
    for r in range(3):
        local[r] = pose_b[0, r] * state[0] + pose_b[1, r] * state[1] + pose_b[2, r] * state[2]
        local[3 + r] = pose_b[0, r] * state[3] + pose_b[1, r] * state[4] + pose_b[2, r] * state[5]
        local[6 + r] = (pose_b[0, r] * (state[6] - pose_b[0, 3]) + pose_b[1, r] * (state[7] - pose_b[1, 3])
                        + pose_b[2, r] * (state[8] - pose_b[2, 3]))
    local[9] = state[9]


@njit(cache=True, nogil=True)
def _evaluate(mpa, mpb, t, pose_a, pose_b, rel, la, lb, world_a, world_b, cache):
    """Poses, the relative pose rel = inv(pose_b) pose_a and both motion states in B's frame
    (la, lb) at t; world_a / world_b are scratch (10,). Cached: cache[0] is the last time."""
    if cache[0] == t:
        return
    motion_state(mpa, t, pose_a, world_a)
    motion_state(mpb, t, pose_b, world_b)
    _to_b_frame(pose_b, world_a, la)
    _to_b_frame(pose_b, world_b, lb)
    relative_into(pose_a, pose_b, rel)
    rel[3, 0] = 0.0
    rel[3, 1] = 0.0
    rel[3, 2] = 0.0
    rel[3, 3] = 1.0
    cache[0] = t


@njit(cache=True, nogil=True, inline="always")
def _side(state, nx, ny, nz, gx, gy, gz, spread_axes, hx, hy, hz, reach_local, ball):
    """Bounds on the normal speed along n of the contents of a box (centre g, unit axes as rows
    of spread_axes (3, 3) with half extents h; contents within reach_local of g), or of a ball
    (``ball``: centre g, radius reach_local), moving by ``state``: (q' at g, spread of q' over
    the contents, |q''| bound, segment-wide spread |u| (|g - c| + reach_local))."""
    wx, wy, wz = state[3], state[4], state[5]
    ux = ny * wz - nz * wy
    uy = nz * wx - nx * wz
    uz = nx * wy - ny * wx
    ul = np.sqrt(ux * ux + uy * uy + uz * uz)
    nv = nx * state[0] + ny * state[1] + nz * state[2]
    yx = gx - state[6]
    yy = gy - state[7]
    yz = gz - state[8]
    centre = nv + yx * ux + yy * uy + yz * uz
    spread = (hx * abs(spread_axes[0, 0] * ux + spread_axes[0, 1] * uy + spread_axes[0, 2] * uz)
              + hy * abs(spread_axes[1, 0] * ux + spread_axes[1, 1] * uy + spread_axes[1, 2] * uz)
              + hz * abs(spread_axes[2, 0] * ux + spread_axes[2, 1] * uy + spread_axes[2, 2] * uz))
    reach = np.sqrt(yx * yx + yy * yy + yz * yz) + reach_local
    spread = ul * reach_local if ball else min(spread, ul * reach_local)
    wl = np.sqrt(wx * wx + wy * wy + wz * wz)
    return centre, spread, ul * wl * reach, ul * reach


# ----------------------------------------------------------------------------------------------
# node pairs: the best projection gap of the two OBBs over 7 axes (centre line, both boxes' face
# normals) and the safe step along it
@njit(cache=True, nogil=True)
def _node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb, axes_a, descend):
    """(gap, step, size) of A's node ia (moved into B's frame) against B's node ib / convex ball
    / plane, all in B's frame. ``size`` = the sum of the boxes' h0 + h1 + h2 (the descend
    scale); when gap <= descend * size the step is not computed (0: the pair splits). axes_a
    (3, 3) is scratch for A's rotated axes."""
    # A's box in B's frame
    gx, gy, gz = _apply(rel, nb_a[ia, OBB_CENTER], nb_a[ia, OBB_CENTER + 1], nb_a[ia, OBB_CENTER + 2])
    for i in range(3):
        x, y, z = _rotate_by(rel, nb_a[ia, OBB_AXES + 3 * i], nb_a[ia, OBB_AXES + 3 * i + 1],
                             nb_a[ia, OBB_AXES + 3 * i + 2])
        axes_a[i, 0] = x
        axes_a[i, 1] = y
        axes_a[i, 2] = z
    ha0 = nb_a[ia, OBB_HALF]
    ha1 = nb_a[ia, OBB_HALF + 1]
    ha2 = nb_a[ia, OBB_HALF + 2]
    diag_a = ha0 + ha1 + ha2  # >= the half diagonal: every content point is within it of g
    if b_mode == B_PLANE:
        pnx, pny, pnz = ptb[1, 0], ptb[1, 1], ptb[1, 2]
        height = pnx * gx + pny * gy + pnz * gz - (pnx * ptb[0, 0] + pny * ptb[0, 1] + pnz * ptb[0, 2])
        if height >= 0.0 or not two_sided:
            nx, ny, nz = -pnx, -pny, -pnz
        else:
            nx, ny, nz = pnx, pny, pnz
            height = -height
        gap = height - (ha0 * abs(axes_a[0, 0] * nx + axes_a[0, 1] * ny + axes_a[0, 2] * nz)
                        + ha1 * abs(axes_a[1, 0] * nx + axes_a[1, 1] * ny + axes_a[1, 2] * nz)
                        + ha2 * abs(axes_a[2, 0] * nx + axes_a[2, 1] * ny + axes_a[2, 2] * nz))
        if gap <= descend * diag_a:
            return gap, 0.0, diag_a
        centre_a, spread_a, acc_a, flat_a = _side(la, nx, ny, nz, gx, gy, gz, axes_a, ha0, ha1, ha2, diag_a, False)
        nva = nx * la[0] + ny * la[1] + nz * la[2]
        nvb = nx * lb[0] + ny * lb[1] + nz * lb[2]
        return gap, safe_step(gap, 0.0, centre_a + spread_a - nvb, acc_a, nva + flat_a - nvb), diag_a
    if b_mode == B_MESH:
        hx = nb_b[ib, OBB_CENTER]
        hy = nb_b[ib, OBB_CENTER + 1]
        hz = nb_b[ib, OBB_CENTER + 2]
        hb0 = nb_b[ib, OBB_HALF]
        hb1 = nb_b[ib, OBB_HALF + 1]
        hb2 = nb_b[ib, OBB_HALF + 2]
        diag_b = hb0 + hb1 + hb2
    else:
        hx, hy, hz = ball_b[0], ball_b[1], ball_b[2]
        hb0 = 0.0
        hb1 = 0.0
        hb2 = 0.0
        diag_b = ball_b[3]
    dx = hx - gx
    dy = hy - gy
    dz = hz - gz
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    # projections: da_i = a_i . d, db_j = b_j . d, R_ij = a_i . b_j
    da0 = axes_a[0, 0] * dx + axes_a[0, 1] * dy + axes_a[0, 2] * dz
    da1 = axes_a[1, 0] * dx + axes_a[1, 1] * dy + axes_a[1, 2] * dz
    da2 = axes_a[2, 0] * dx + axes_a[2, 1] * dy + axes_a[2, 2] * dz
    best = -np.inf
    nx = 1.0
    ny = 0.0
    nz = 0.0
    if b_mode == B_MESH:
        bo = OBB_AXES
        r00 = axes_a[0, 0] * nb_b[ib, bo] + axes_a[0, 1] * nb_b[ib, bo + 1] + axes_a[0, 2] * nb_b[ib, bo + 2]
        r01 = axes_a[0, 0] * nb_b[ib, bo + 3] + axes_a[0, 1] * nb_b[ib, bo + 4] + axes_a[0, 2] * nb_b[ib, bo + 5]
        r02 = axes_a[0, 0] * nb_b[ib, bo + 6] + axes_a[0, 1] * nb_b[ib, bo + 7] + axes_a[0, 2] * nb_b[ib, bo + 8]
        r10 = axes_a[1, 0] * nb_b[ib, bo] + axes_a[1, 1] * nb_b[ib, bo + 1] + axes_a[1, 2] * nb_b[ib, bo + 2]
        r11 = axes_a[1, 0] * nb_b[ib, bo + 3] + axes_a[1, 1] * nb_b[ib, bo + 4] + axes_a[1, 2] * nb_b[ib, bo + 5]
        r12 = axes_a[1, 0] * nb_b[ib, bo + 6] + axes_a[1, 1] * nb_b[ib, bo + 7] + axes_a[1, 2] * nb_b[ib, bo + 8]
        r20 = axes_a[2, 0] * nb_b[ib, bo] + axes_a[2, 1] * nb_b[ib, bo + 1] + axes_a[2, 2] * nb_b[ib, bo + 2]
        r21 = axes_a[2, 0] * nb_b[ib, bo + 3] + axes_a[2, 1] * nb_b[ib, bo + 4] + axes_a[2, 2] * nb_b[ib, bo + 5]
        r22 = axes_a[2, 0] * nb_b[ib, bo + 6] + axes_a[2, 1] * nb_b[ib, bo + 7] + axes_a[2, 2] * nb_b[ib, bo + 8]
        db0 = nb_b[ib, bo] * dx + nb_b[ib, bo + 1] * dy + nb_b[ib, bo + 2] * dz
        db1 = nb_b[ib, bo + 3] * dx + nb_b[ib, bo + 4] * dy + nb_b[ib, bo + 5] * dz
        db2 = nb_b[ib, bo + 6] * dx + nb_b[ib, bo + 7] * dy + nb_b[ib, bo + 8] * dz
        # A's faces
        g = abs(da0) - ha0 - (hb0 * abs(r00) + hb1 * abs(r01) + hb2 * abs(r02))
        if g > best:
            best = g
            sign = 1.0 if da0 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[0, 0], sign * axes_a[0, 1], sign * axes_a[0, 2]
        g = abs(da1) - ha1 - (hb0 * abs(r10) + hb1 * abs(r11) + hb2 * abs(r12))
        if g > best:
            best = g
            sign = 1.0 if da1 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[1, 0], sign * axes_a[1, 1], sign * axes_a[1, 2]
        g = abs(da2) - ha2 - (hb0 * abs(r20) + hb1 * abs(r21) + hb2 * abs(r22))
        if g > best:
            best = g
            sign = 1.0 if da2 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[2, 0], sign * axes_a[2, 1], sign * axes_a[2, 2]
        # B's faces
        g = abs(db0) - hb0 - (ha0 * abs(r00) + ha1 * abs(r10) + ha2 * abs(r20))
        if g > best:
            best = g
            sign = 1.0 if db0 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo], sign * nb_b[ib, bo + 1], sign * nb_b[ib, bo + 2]
        g = abs(db1) - hb1 - (ha0 * abs(r01) + ha1 * abs(r11) + ha2 * abs(r21))
        if g > best:
            best = g
            sign = 1.0 if db1 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo + 3], sign * nb_b[ib, bo + 4], sign * nb_b[ib, bo + 5]
        g = abs(db2) - hb2 - (ha0 * abs(r02) + ha1 * abs(r12) + ha2 * abs(r22))
        if g > best:
            best = g
            sign = 1.0 if db2 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo + 6], sign * nb_b[ib, bo + 7], sign * nb_b[ib, bo + 8]
        if dist > 0.0:
            g = dist - (ha0 * abs(da0) + ha1 * abs(da1) + ha2 * abs(da2)
                        + hb0 * abs(db0) + hb1 * abs(db1) + hb2 * abs(db2)) / dist
            if g > best:
                best = g
                nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:  # a ball of B: A's faces and the centre line
        g = abs(da0) - ha0 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da0 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[0, 0], sign * axes_a[0, 1], sign * axes_a[0, 2]
        g = abs(da1) - ha1 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da1 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[1, 0], sign * axes_a[1, 1], sign * axes_a[1, 2]
        g = abs(da2) - ha2 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da2 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[2, 0], sign * axes_a[2, 1], sign * axes_a[2, 2]
        if dist > 0.0:
            g = dist - (ha0 * abs(da0) + ha1 * abs(da1) + ha2 * abs(da2)) / dist - diag_b
            if g > best:
                best = g
                nx, ny, nz = dx / dist, dy / dist, dz / dist
    size = diag_a + diag_b
    if best <= descend * size:
        return best, 0.0, size
    centre_a, spread_a, acc_a, flat_a = _side(la, nx, ny, nz, gx, gy, gz, axes_a, ha0, ha1, ha2, diag_a, False)
    if b_mode == B_MESH:
        bx = nb_b[ib, OBB_AXES:OBB_AXES + 9].reshape(3, 3)
        centre_b, spread_b, acc_b, flat_b = _side(lb, nx, ny, nz, hx, hy, hz, bx, hb0, hb1, hb2, diag_b, False)
    else:
        centre_b, spread_b, acc_b, flat_b = _side(lb, nx, ny, nz, hx, hy, hz, axes_a, 0.0, 0.0, 0.0, diag_b, True)
    nva = nx * la[0] + ny * la[1] + nz * la[2]
    nvb = nx * lb[0] + ny * lb[1] + nz * lb[2]
    # Taylor: (max q'_A) - (min q'_B); segment-wide: sup q'_A = n.v_A + |u| reach (flat_a)
    return best, safe_step(best, 0.0, (centre_a + spread_a) - (centre_b - spread_b), acc_a + acc_b,
                           (nva + flat_a) - (nvb - flat_b)), size


# ----------------------------------------------------------------------------------------------
# leaves (B's frame)
@njit(cache=True, nogil=True)
def _triangle_moved(tv, k, rel, out):
    for c in range(3):
        x, y, z = _apply(rel, tv[k, c, 0], tv[k, c, 1], tv[k, c, 2])
        out[c, 0] = x
        out[c, 1] = y
        out[c, 2] = z


@njit(cache=True, nogil=True)
def _triangle_triangle_gap(ta, tb):
    """(distance, closest points' midpoint (3), unit direction A -> B (NaN if touching)) of two
    triangles (3, 3) in one frame."""
    A = (ta[0, 0], ta[0, 1], ta[0, 2], ta[1, 0], ta[1, 1], ta[1, 2], ta[2, 0], ta[2, 1], ta[2, 2])
    B = (tb[0, 0], tb[0, 1], tb[0, 2], tb[1, 0], tb[1, 1], tb[1, 2], tb[2, 0], tb[2, 1], tb[2, 2])
    d2, pa, pb = triangle_distance_sq(A, B)
    d = np.sqrt(d2)
    mx = 0.5 * (pa[0] + pb[0])
    my = 0.5 * (pa[1] + pb[1])
    mz = 0.5 * (pa[2] + pb[2])
    if d == 0.0:
        return 0.0, mx, my, mz, np.nan, np.nan, np.nan
    return d, mx, my, mz, (pb[0] - pa[0]) / d, (pb[1] - pa[1]) / d, (pb[2] - pa[2]) / d


@njit(cache=True, nogil=True)
def _leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb, pb, ptb, identity, eps, warm):
    """Distance of A's triangle (tri_a, B's frame) to B's triangle / convex / plane: (distance
    (< 0 when a convex or plane overlaps), contact point (3), unit direction A -> B (NaN when
    undefined)), all in B's frame."""
    if b_mode == B_MESH:
        return _triangle_triangle_gap(tri_a, tv_b[kb_index])
    if b_mode == B_CONVEX:
        triangle_params = np.empty(4)
        for i in range(4):
            triangle_params[i] = TRIANGLE_PARAMS[i]
        signed, point_a, point_b, normal, gjk_status, iterations = gjk_pair_distance_warm(
            kinds.TRIANGLE, triangle_params, tv_a[ka], rel, kb, pb, ptb, identity, eps, warm)
        return (signed, 0.5 * (point_a[0] + point_b[0]), 0.5 * (point_a[1] + point_b[1]),
                0.5 * (point_a[2] + point_b[2]), normal[0], normal[1], normal[2])
    pnx, pny, pnz = ptb[1, 0], ptb[1, 1], ptb[1, 2]
    offset = pnx * ptb[0, 0] + pny * ptb[0, 1] + pnz * ptb[0, 2]
    lo = np.inf
    hi = -np.inf
    low = 0
    high = 0
    for c in range(3):
        level = pnx * tri_a[c, 0] + pny * tri_a[c, 1] + pnz * tri_a[c, 2] - offset
        if level < lo:
            lo = level
            low = c
        if level > hi:
            hi = level
            high = c
    if lo >= 0.0 or not two_sided:  # above (or a half-space): the lowest corner is nearest
        return lo, tri_a[low, 0], tri_a[low, 1], tri_a[low, 2], -pnx, -pny, -pnz
    if hi <= 0.0:  # below a two-sided plane
        return -hi, tri_a[high, 0], tri_a[high, 1], tri_a[high, 2], pnx, pny, pnz
    return max(lo, -hi), tri_a[low, 0], tri_a[low, 1], tri_a[low, 2], -pnx, -pny, -pnz  # crossing


@njit(cache=True, nogil=True)
def _centre_axis(b_mode, tri_a, tri_b, ball_b):
    """Unit axis from the centroid of A's triangle to B's triangle centroid / ball centre (B's
    frame); (1, 0, 0) when they coincide."""
    ax = (tri_a[0, 0] + tri_a[1, 0] + tri_a[2, 0]) / 3.0
    ay = (tri_a[0, 1] + tri_a[1, 1] + tri_a[2, 1]) / 3.0
    az = (tri_a[0, 2] + tri_a[1, 2] + tri_a[2, 2]) / 3.0
    if b_mode == B_MESH:
        bx = (tri_b[0, 0] + tri_b[1, 0] + tri_b[2, 0]) / 3.0
        by = (tri_b[0, 1] + tri_b[1, 1] + tri_b[2, 1]) / 3.0
        bz = (tri_b[0, 2] + tri_b[1, 2] + tri_b[2, 2]) / 3.0
    else:
        bx, by, bz = ball_b[0], ball_b[1], ball_b[2]
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    length = np.sqrt(dx * dx + dy * dy + dz * dz)
    if length == 0.0:
        return 1.0, 0.0, 0.0
    return dx / length, dy / length, dz / length


@njit(cache=True, nogil=True, inline="always")
def _vertex_rates(state, nv, ux, uy, uz, ul, wl, x, y, z):
    """(q' at the point, |q''| bound, |u| |x - c|) of a point moving by ``state`` along n."""
    yx = x - state[6]
    yy = y - state[7]
    yz = z - state[8]
    reach = np.sqrt(yx * yx + yy * yy + yz * yz)
    return nv + yx * ux + yy * uy + yz * uz, ul * wl * reach, ul * reach


@njit(cache=True, nogil=True)
def _sat_axis(tri_a, tri_b):
    """The separating axis of two triangles (B's frame) of largest projection gap among their
    face normals and the 9 edge x edge crosses (unit, oriented from A to B): (gap, nx, ny, nz).
    Built from the coordinates, these axes keep full accuracy at tiny distances, where the
    direction between the closest points carries a rounding error ~ 1e-16 / distance."""
    best = -np.inf
    bx = 1.0
    by = 0.0
    bz = 0.0
    for k in range(11):
        if k < 2:
            tri = tri_a if k == 0 else tri_b
            ex, ey, ez = tri[1, 0] - tri[0, 0], tri[1, 1] - tri[0, 1], tri[1, 2] - tri[0, 2]
            fx, fy, fz = tri[2, 0] - tri[0, 0], tri[2, 1] - tri[0, 1], tri[2, 2] - tri[0, 2]
        else:
            i = (k - 2) // 3
            j = (k - 2) % 3
            ex, ey, ez = (tri_a[(i + 1) % 3, 0] - tri_a[i, 0], tri_a[(i + 1) % 3, 1] - tri_a[i, 1],
                          tri_a[(i + 1) % 3, 2] - tri_a[i, 2])
            fx, fy, fz = (tri_b[(j + 1) % 3, 0] - tri_b[j, 0], tri_b[(j + 1) % 3, 1] - tri_b[j, 1],
                          tri_b[(j + 1) % 3, 2] - tri_b[j, 2])
        lx = ey * fz - ez * fy
        ly = ez * fx - ex * fz
        lz = ex * fy - ey * fx
        length = np.sqrt(lx * lx + ly * ly + lz * lz)
        if length == 0.0:
            continue
        lx /= length
        ly /= length
        lz /= length
        hi_a = -np.inf
        lo_a = np.inf
        hi_b = -np.inf
        lo_b = np.inf
        for c in range(3):
            pa = lx * tri_a[c, 0] + ly * tri_a[c, 1] + lz * tri_a[c, 2]
            pb = lx * tri_b[c, 0] + ly * tri_b[c, 1] + lz * tri_b[c, 2]
            hi_a = max(hi_a, pa)
            lo_a = min(lo_a, pa)
            hi_b = max(hi_b, pb)
            lo_b = min(lo_b, pb)
        if lo_b - hi_a > best:
            best, bx, by, bz = lo_b - hi_a, lx, ly, lz
        if lo_a - hi_b > best:
            best, bx, by, bz = lo_a - hi_b, -lx, -ly, -lz
    return best, bx, by, bz


@njit(cache=True, nogil=True)
def _leaf_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps):
    """_axis_step along the closest points' direction n; for two triangles whose projection gap
    along n is below half their distance (n dominated by rounding at tiny distances), along the
    best SAT axis instead. Returns (gap, step, nx, ny, nz) with the axis used."""
    gap, step = _axis_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps)
    if b_mode == B_MESH and gap < 0.5 * d:
        sat, sx, sy, sz = _sat_axis(tri_a, tri_b)
        if sat > gap:
            gap, step = _axis_step(b_mode, tri_a, tri_b, la, lb, sx, sy, sz, d, kb, pb, ptb, ball_b, identity, hints,
                                   eps)
            return gap, step, sx, sy, sz
    return gap, step, nx, ny, nz


@njit(cache=True, nogil=True)
def _axis_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps):
    """(projection gap along n (<= the distance), safe step), B's frame. The largest of n.x over
    A's triangle is at a vertex (and the smallest over B's triangle), so the gap stays above
    the margin while every (vertex of A, vertex of B) pair's gap does: the step is the smallest
    of the pairs' safe steps. Per pair the bounds are tight where it matters: in a graze the
    vertex reaching contact slows to zero while another vertex far from it may still approach
    fast (a bound over the whole triangle at once then converges only harmonically). B a convex:
    its support along n with its bounding ball's rates; a plane: every point has B's velocity."""
    wx, wy, wz = la[3], la[4], la[5]
    uxa = ny * wz - nz * wy
    uya = nz * wx - nx * wz
    uza = nx * wy - ny * wx
    ula = np.sqrt(uxa * uxa + uya * uya + uza * uza)
    wla = np.sqrt(wx * wx + wy * wy + wz * wz)
    nva = nx * la[0] + ny * la[1] + nz * la[2]
    wx, wy, wz = lb[3], lb[4], lb[5]
    uxb = ny * wz - nz * wy
    uyb = nz * wx - nx * wz
    uzb = nx * wy - ny * wx
    ulb = np.sqrt(uxb * uxb + uyb * uyb + uzb * uzb)
    wlb = np.sqrt(wx * wx + wy * wy + wz * wz)
    nvb = nx * lb[0] + ny * lb[1] + nz * lb[2]
    # B's side: up to three (level, q', |q''|, |u| reach) rows
    count_b = 3 if b_mode == B_MESH else 1
    level_b = np.empty(3)
    speed_b = np.empty(3)
    acc_b = np.empty(3)
    arm_b = np.empty(3)
    if b_mode == B_MESH:
        for j in range(3):
            level_b[j] = nx * tri_b[j, 0] + ny * tri_b[j, 1] + nz * tri_b[j, 2]
            speed_b[j], acc_b[j], arm_b[j] = _vertex_rates(lb, nvb, uxb, uyb, uzb, ulb, wlb, tri_b[j, 0], tri_b[j, 1],
                                                           tri_b[j, 2])
    elif b_mode == B_CONVEX:
        sx, sy, sz = support_world(kb, pb, ptb, identity, -nx, -ny, -nz, hints)
        level_b[0] = nx * sx + ny * sy + nz * sz
        centre, acc, arm = _vertex_rates(lb, nvb, uxb, uyb, uzb, ulb, wlb, ball_b[0], ball_b[1], ball_b[2])
        speed_b[0] = centre - ball_b[3] * ulb  # the ball's slowest point
        acc_b[0] = acc + ulb * wlb * ball_b[3]
        arm_b[0] = arm + ulb * ball_b[3]
    else:
        level_b[0] = np.inf  # set below from A's highest vertex and d
        speed_b[0] = nvb
        acc_b[0] = 0.0
        arm_b[0] = 0.0
    hi_a = -np.inf
    for i in range(3):
        hi_a = max(hi_a, nx * tri_a[i, 0] + ny * tri_a[i, 1] + nz * tri_a[i, 2])
    if b_mode == B_PLANE:
        level_b[0] = hi_a + d
    lo_b = level_b[0]

    for j in range(1, count_b):
        lo_b = min(lo_b, level_b[j])
    gap = lo_b - hi_a  # <= the distance for any axis (the projection gap of convex sets)
    margin = 0.5 * eps
    if gap <= margin:
        return gap, 0.0
    step = np.inf
    for i in range(3):
        level_a = nx * tri_a[i, 0] + ny * tri_a[i, 1] + nz * tri_a[i, 2]
        speed_a, acc_a, arm_a = _vertex_rates(la, nva, uxa, uya, uza, ula, wla, tri_a[i, 0], tri_a[i, 1], tri_a[i, 2])
        for j in range(count_b):
            step = min(step, safe_step(level_b[j] - level_a, margin, speed_a - speed_b[j], acc_a + acc_b[j],
                                       (nva + arm_a) - (nvb - arm_b[j])))
    return gap, step


@njit(cache=True, nogil=True)
def _axis_gap(b_mode, tri_a, tri_b, nx, ny, nz, kb, pb, ptb, identity, hints):
    """Projection gap along unit n of A's triangle and B's triangle / convex (B's frame)."""
    hi = -np.inf
    for c in range(3):
        hi = max(hi, nx * tri_a[c, 0] + ny * tri_a[c, 1] + nz * tri_a[c, 2])
    if b_mode == B_MESH:
        lo = np.inf
        for c in range(3):
            lo = min(lo, nx * tri_b[c, 0] + ny * tri_b[c, 1] + nz * tri_b[c, 2])
    else:
        sx, sy, sz = support_world(kb, pb, ptb, identity, -nx, -ny, -nz, hints)
        lo = nx * sx + ny * sy + nz * sz
    return lo - hi


@njit(cache=True, nogil=True)
def _contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints, eps):
    """The contact normal: of n (the closest points' direction, projection gap ``gap``; NaN if
    none) and the face normals of A's and B's triangles (either sign), the axis of largest
    projection gap, a face normal winning when it is within eps of the best. At a vertex-face
    or face-face contact the face normal is the physical normal, while the closest points of two
    parallel faces are not unique and their direction tilts by (lateral offset / distance)."""
    best = gap if nx == nx else -np.inf
    bx, by, bz = nx, ny, nz
    last = 2 if b_mode == B_MESH else 1
    for side in range(last):
        tri = tri_a if side == 0 else tri_b
        ex = tri[1, 0] - tri[0, 0]
        ey = tri[1, 1] - tri[0, 1]
        ez = tri[1, 2] - tri[0, 2]
        fx = tri[2, 0] - tri[0, 0]
        fy = tri[2, 1] - tri[0, 1]
        fz = tri[2, 2] - tri[0, 2]
        cx = ey * fz - ez * fy
        cy = ez * fx - ex * fz
        cz = ex * fy - ey * fx
        length = np.sqrt(cx * cx + cy * cy + cz * cz)
        if length == 0.0:
            continue
        cx /= length
        cy /= length
        cz /= length
        for sign in (1.0, -1.0):
            g = _axis_gap(b_mode, tri_a, tri_b, sign * cx, sign * cy, sign * cz, kb, pb, ptb, identity, hints)
            if g >= best - eps:
                best = max(best, g)
                bx, by, bz = sign * cx, sign * cy, sign * cz
    return bx, by, bz


@njit(cache=True, nogil=True)
def _record(out, s, mx, my, mz, nx, ny, nz, id_a, id_b):
    out[0] = s
    out[1] = mx
    out[2] = my
    out[3] = mz
    out[4] = nx
    out[5] = ny
    out[6] = nz
    out[7] = id_a
    out[8] = id_b


# ----------------------------------------------------------------------------------------------
# query set-up
@njit(cache=True, nogil=True)
def row_bounds(mp, ball):
    """(bound on the speed of any point of a shape within ``ball`` (local (cx, cy, cz, r)),
    largest |coordinate| of the motion's origins / reference points) of one packed motion row:
    they scale the coarse tolerance and the touching tolerance (not used for safety)."""
    reach_local = np.sqrt(ball[0] * ball[0] + ball[1] * ball[1] + ball[2] * ball[2]) + ball[3]
    speed = 0.0
    extent = 0.0
    if int(mp[0]) == KIND_KEYFRAMES:
        for k in range(int(mp[1])):
            base = 2 + k * SEGMENT_SIZE
            v = np.sqrt(mp[base + 17] ** 2 + mp[base + 18] ** 2 + mp[base + 19] ** 2)
            w = np.sqrt(mp[base + 14] ** 2 + mp[base + 15] ** 2 + mp[base + 16] ** 2)
            speed = max(speed, v + w * reach_local)
            for r in range(3):
                extent = max(extent, abs(mp[base + 11 + r]),
                             abs(mp[base + 11 + r] + (mp[base + 1] - mp[base]) * mp[base + 17 + r]))
    else:
        v = np.sqrt(mp[17] ** 2 + mp[18] ** 2 + mp[19] ** 2)
        w = np.sqrt(mp[20] ** 2 + mp[21] ** 2 + mp[22] ** 2)
        arm = np.sqrt((mp[4] - mp[23]) ** 2 + (mp[8] - mp[24]) ** 2 + (mp[12] - mp[25]) ** 2)
        speed = v + w * (arm + reach_local)
        for r in range(3):
            extent = max(extent, abs(mp[4 + 4 * r]))
    return speed, extent


@njit(cache=True, nogil=True)
def motion_bounds(rows, ball):
    """row_bounds maximised over packed motion rows (n, P)."""
    speed = 0.0
    extent = 0.0
    for i in range(rows.shape[0]):
        s, e = row_bounds(rows[i], ball)
        speed = max(speed, s)
        extent = max(extent, e)
    return speed, extent


@njit(cache=True, nogil=True)
def tolerances(mpa, ball_a, mpb, ball_b, scale, t_max, time_tolerance):
    """(eps, eps_coarse) of one query: eps the touching tolerance (touche.tolerance) of the
    shapes' size plus their origins' reach; eps_coarse the distance covered at the speed bound
    in time_tolerance x t_max (the contact accepted after the step budget, see the module doc)."""
    speed_a, extent_a = row_bounds(mpa, ball_a)
    speed_b, extent_b = row_bounds(mpb, ball_b)
    eps = _tol.ABSOLUTE + _tol.RELATIVE * (scale + max(extent_a, extent_b))
    horizon = t_max if t_max < np.inf else 1.0
    return eps, max(16.0 * eps, time_tolerance * horizon * (speed_a + speed_b))


# ----------------------------------------------------------------------------------------------
# the hull prefix: conservative advancement of the two convex hulls (or A's hull and convex B)
@njit(cache=True, nogil=True)
def hull_advance(ka, pa, pta, ball_a, mpa, kb, pb, ptb, ball_b, mpb, t_max, margin, handover, max_steps, witness):
    """Advance the convex hulls of A and B (any convex kinds, local frames, inside the local
    balls ball_a / ball_b) from t = 0 while their distance stays above ``margin``: a mesh lies
    in its hull, so the meshes stay more than ``margin`` apart on [0, t) for the returned t. Stops
    once the hulls' projection gap is <= ``handover`` (the BVH takes over there), after
    ``max_steps`` steps, or past t_max. Returns (t, steps, missed): missed when the hulls stay
    more than ``margin`` apart on all of [0, t_max] (so do the meshes: a MISS).

    Each step: GJK gives the hulls' closest points' direction n; the gap used is the exact
    projection gap along n (support of B along -n minus support of A along n: a lower bound of
    the distance for any n, free of GJK's termination error), and the step is the Taylor /
    segment-wide bound of the module doc for the two bounding balls along n (every hull point is
    in its ball), so the hulls cannot close more than that gap within the step.

    Also returns ``closed``: it stopped because the hulls came within ``handover`` (not at the
    step cap or t_max); then ``witness`` (9,) holds the last GJK direction (A -> B) and closest
    points on A's and B's hulls, world frame. Returns (t, steps, missed, closed)."""
    pose_a = np.empty((4, 4))
    pose_b = np.empty((4, 4))
    state_a = np.empty(10)
    state_b = np.empty(10)
    warm = np.zeros(WARM_SIZE)
    hints_a = np.zeros(2, dtype=np.int64)
    hints_b = np.zeros(2, dtype=np.int64)
    # the bounding balls first: their gap bounds the hulls' (the balls hold them), a step costs
    # no support walk, and far apart they step as far as the hulls would
    t, first, missed = ball_advance(mpa, ball_a, motion_rho(mpa, ball_a), mpb, ball_b, motion_rho(mpb, ball_b), t_max,
                                    margin, max_steps, pose_a, state_a, pose_b, state_b)
    if missed:
        return t_max, first, True, False
    for step in range(first, max_steps):
        motion_state(mpa, t, pose_a, state_a)
        motion_state(mpb, t, pose_b, state_b)
        signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = distance_single(
            ka, pa, pta, pose_a, kb, pb, ptb, pose_b, margin, warm, GJK_MAX_ITERATIONS)
        # GJK's last support vertices (A's, B's: near the closest points) start the walks below
        hints_a[0] = int(warm[25])
        hints_b[0] = int(warm[26])
        witness[0], witness[1], witness[2] = nx, ny, nz
        witness[3], witness[4], witness[5] = ax, ay, az
        witness[6], witness[7], witness[8] = bx, by, bz
        if not (signed > handover) or nx != nx:
            return t, step + 1, False, True
        hx, hy, hz = support_world(ka, pa, pta, pose_a, nx, ny, nz, hints_a)
        lx, ly, lz = support_world(kb, pb, ptb, pose_b, -nx, -ny, -nz, hints_b)
        gap = (nx * lx + ny * ly + nz * lz) - (nx * hx + ny * hy + nz * hz)
        if not (gap > handover):
            return t, step + 1, False, True
        cx, cy, cz = _apply(pose_a, ball_a[0], ball_a[1], ball_a[2])
        nv, ux, uy, uz, ul_a, wl = _axis_terms(state_a, nx, ny, nz)
        hi_a, lo_a, acc_a, sup_a, inf_a = _ball_rates(state_a, nv, ux, uy, uz, ul_a, wl, cx, cy, cz, ball_a[3])
        cx, cy, cz = _apply(pose_b, ball_b[0], ball_b[1], ball_b[2])
        nv, ux, uy, uz, ul_b, wl = _axis_terms(state_b, nx, ny, nz)
        hi_b, lo_b, acc_b, sup_b, inf_b = _ball_rates(state_b, nv, ux, uy, uz, ul_b, wl, cx, cy, cz, ball_b[3])
        h = safe_step(gap, margin, hi_a - lo_b, acc_a + acc_b, sup_a - inf_b)
        if (ul_a > 0.0 or ul_b > 0.0) and h > 0.0 and gap < NEAR_HULLS * (ball_a[3] + ball_b[3]):
            # rotation: the balls' first-order bound is loose (every point's speed), the shapes'
            # own is exact to first order: a longer step, still safe (first_order_step)
            closing = point_rate(state_a, nx, ny, nz, hx, hy, hz) - point_rate(state_b, nx, ny, nz, lx, ly, lz)
            h = first_order_step(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny,
                                 nz, gap, margin, acc_a + acc_b, h, closing,
                                 min(min(state_a[9], state_b[9]), t_max) - t)
        following = min(t + h, min(state_a[9], state_b[9]))
        if following > t_max:
            return t_max, step + 1, True, False
        if not following > t:
            following = np.nextafter(t, np.inf)
        t = following
    return t, max_steps, False, False


# ----------------------------------------------------------------------------------------------
# the hull contact: where the hulls touch on the meshes' own surfaces, the hull prefix's time is
# the meshes' first contact (no tree front to prove)
@njit(cache=True, nogil=True, inline="always")
def _box_holds(nb, i, p, near):
    """Whether node i's OBB (local frame) holds the local point p to within ``near``."""
    dx = p[0] - nb[i, OBB_CENTER]
    dy = p[1] - nb[i, OBB_CENTER + 1]
    dz = p[2] - nb[i, OBB_CENTER + 2]
    for k in range(3):
        o = OBB_AXES + 3 * k
        if abs(dx * nb[i, o] + dy * nb[i, o + 1] + dz * nb[i, o + 2]) > nb[i, OBB_HALF + k] + near:
            return False
    return True


@njit(cache=True, nogil=True)
def _touching_pair(b_mode, two_sided, ni_a, nb_a, tv_a, ni_b, nb_b, tv_b, kb, pb, ptb, ball_b, rel, la, lb,
                   identity, threshold, axes_a, tri_a, warm, witness_a, witness_b, near):
    """Depth-first search, at the time of ``rel`` (A's pose in B's frame), for a triangle of A
    within ``threshold`` of B's triangle / convex (static: node pairs whose OBB gap exceeds the
    threshold are skipped), near the hulls' closest points: only nodes whose OBB holds
    witness_a (A's local frame) / witness_b (B's) to within ``near`` (the pair of triangles
    realising the hulls' distance holds them when the hulls touch on the meshes' surfaces; the
    others are not looked for: a miss of this search only costs the tree's search). Returns
    (triangle of A, triangle of B (0 for a convex), distance, closest points' midpoint (3), node
    pairs visited); triangle of A -1 when there is none."""
    stack = np.empty((64, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    visited = 0
    while top > 0:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        if not (_box_holds(nb_a, ia, witness_a, near) and (b_mode != B_MESH or _box_holds(nb_b, ib, witness_b, near))):
            continue
        visited += 1
        # descend = inf: only the gap, no step
        gap, _step, _size = _node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb, axes_a,
                                       np.inf)
        if not gap <= threshold:
            continue
        leaf_a = ni_a[ia, 2] < 0
        leaf_b = b_mode != B_MESH or ni_b[ib, 2] < 0
        if leaf_a and leaf_b:
            count_b = ni_b[ib, 1] if b_mode == B_MESH else 1
            for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                _triangle_moved(tv_a, ka, rel, tri_a)
                for jb in range(count_b):
                    kb_index = ni_b[ib, 0] + jb if b_mode == B_MESH else 0
                    warm[0] = 0.0
                    d, mx, my, mz, nx, ny, nz = _leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb,
                                                          pb, ptb, identity, threshold, warm)
                    if d <= threshold:
                        return ka, kb_index, d, mx, my, mz, visited
            continue
        if top + 2 > stack.shape[0]:
            grown = np.empty((2 * stack.shape[0], 2), dtype=np.int64)
            grown[:top] = stack[:top]
            stack = grown
        if not leaf_a and (leaf_b or nb_a[ia, SPHERE_RADIUS] >= nb_b[ib, SPHERE_RADIUS]):
            stack[top, 0], stack[top, 1] = ni_a[ia, 2], ib
            stack[top + 1, 0], stack[top + 1, 1] = ia + 1, ib
        else:
            stack[top, 0], stack[top, 1] = ia, ni_b[ib, 2]
            stack[top + 1, 0], stack[top + 1, 1] = ia, ib + 1
        top += 2
    return -1, -1, np.inf, np.nan, np.nan, np.nan, visited


# ----------------------------------------------------------------------------------------------
# binary min-heap of node pairs keyed by their time bound (best-first search)
@njit(cache=True, nogil=True)
def _heap_push(heap_t, heap_i, size, t, ia, ib):
    """Push (t, ia, ib); returns the (possibly grown) arrays and the new size."""
    if size == heap_t.shape[0]:
        grown_t = np.empty(2 * size)
        grown_i = np.empty((2 * size, 2), dtype=np.int64)
        grown_t[:size] = heap_t
        grown_i[:size] = heap_i
        heap_t = grown_t
        heap_i = grown_i
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if heap_t[parent] <= t:
            break
        heap_t[k] = heap_t[parent]
        heap_i[k, 0] = heap_i[parent, 0]
        heap_i[k, 1] = heap_i[parent, 1]
        k = parent
    heap_t[k] = t
    heap_i[k, 0] = ia
    heap_i[k, 1] = ib
    return heap_t, heap_i, size + 1


@njit(cache=True, nogil=True)
def _heap_pop(heap_t, heap_i, size):
    """Remove the minimum; returns (t, ia, ib, new size)."""
    t = heap_t[0]
    ia = heap_i[0, 0]
    ib = heap_i[0, 1]
    size -= 1
    if size > 0:
        last_t = heap_t[size]
        last_a = heap_i[size, 0]
        last_b = heap_i[size, 1]
        k = 0
        while True:
            child = 2 * k + 1
            if child >= size:
                break
            if child + 1 < size and heap_t[child + 1] < heap_t[child]:
                child += 1
            if heap_t[child] >= last_t:
                break
            heap_t[k] = heap_t[child]
            heap_i[k, 0] = heap_i[child, 0]
            heap_i[k, 1] = heap_i[child, 1]
            k = child
        heap_t[k] = last_t
        heap_i[k, 0] = last_a
        heap_i[k, 1] = last_b
    return t, ia, ib, size


@njit(cache=True, nogil=True)
def mesh_toi(ni_a, nb_a, tv_a, ids_a, ball_a, mpa, b_mode, ni_b, nb_b, tv_b, ids_b, kb, pb, ptb, ball_b, mpb,
             t_max, scale, time_tolerance, budget, descend, hka, hpa, hpta, hkb, hpb, hptb, handover, hull_slack, out):
    """First contact in [0, t_max] of mesh A (its tree) and B: a mesh (b_mode B_MESH, its tree),
    a finite convex shape (B_CONVEX: packed kb, pb, ptb and a local bounding ball ball_b (4,))
    or a plane / half-space (B_PLANE, translating). ``ball_a`` / ``ball_b``: local bounding
    balls (the tolerances' speed bounds); ``scale``: the shapes' size (touching tolerance);
    ``time_tolerance``: a fraction of t_max (the coarse tolerance). The hull prefix: when hka >= 0,
    (hka, hpa, hpta) is a packed convex shape holding A's triangles (its convex hull) and (hkb,
    hpb, hptb) one holding B (B's hull, or B itself when convex); hull_advance moves both from
    t = 0 until their gap is <= ``handover`` x (sum of the balls' radii) (or 2 eps), and the BVH
    starts there (a MISS without the BVH when the hulls never come within eps); ``hull_slack``
    bounds how far a mesh vertex may lie outside its hull (the hull builder's rounding), added to
    the hulls' margin. See the module doc. Returns the status; out (OUT_SIZE,) as documented (world frame)."""
    eps, eps_coarse = tolerances(mpa, ball_a, mpb, ball_b, scale, t_max, time_tolerance)
    t_start = 0.0
    hull_steps = 0
    closed = False
    witness = np.full(9, np.nan)
    hull_stop = max(2.0 * (eps + hull_slack), handover * (ball_a[3] + ball_b[3]))
    if hka >= 0:
        t_start, hull_steps, missed, closed = hull_advance(hka, hpa, hpta, ball_a, mpa, hkb, hpb, hptb, ball_b, mpb,
                                                           t_max, eps + hull_slack, hull_stop, HULL_STEPS, witness)
        if missed:
            for i in range(OUT_SIZE):
                out[i] = np.nan
            out[0] = np.inf
            out[7] = -1.0
            out[8] = -1.0
            out[9] = hull_steps
            out[10] = 0
            out[11] = 0
            out[12] = 0
            return STATUS_MISS
    pose_a = np.empty((4, 4))
    pose_b = np.empty((4, 4))
    rel = np.empty((4, 4))
    identity = np.eye(4)
    la = np.empty(10)
    lb = np.empty(10)
    world_a = np.empty(10)
    world_b = np.empty(10)
    cache = np.full(1, np.nan)
    tri_a = np.empty((3, 3))
    axes_a = np.empty((3, 3))
    warm = np.zeros(WARM_SIZE)
    hints = np.zeros(2, dtype=np.int64)
    coarse = np.full(9, np.nan)
    heap_t = np.empty(256)
    heap_i = np.empty((256, 2), dtype=np.int64)
    for i in range(OUT_SIZE):
        out[i] = np.nan
    out[7] = -1.0
    out[8] = -1.0
    two_sided = kb == kinds.PLANE
    best = t_max
    found = False
    pops = 0
    if closed and not hull_stop > 2.0 * (eps + hull_slack):
        # The hulls ran to contact: they were more than eps + slack apart on [0, t_start) (so were
        # the meshes) and are within hull_stop now. When the meshes' own triangles are that close
        # (within hull_stop + eps: the hulls touch on the meshes' surfaces, as on convex parts),
        # t_start is the first contact, found without the tree's front near the contact (which
        # would have to be proven clear up to it, ~1,000 node pairs on a 10k-triangle ball).
        _evaluate(mpa, mpb, t_start, pose_a, pose_b, rel, la, lb, world_a, world_b, cache)
        witness_a = np.empty(3)
        witness_b = np.empty(3)
        for r in range(3):  # the hulls' closest points into the meshes' local frames
            witness_a[r] = (pose_a[0, r] * (witness[3] - pose_a[0, 3]) + pose_a[1, r] * (witness[4] - pose_a[1, 3])
                            + pose_a[2, r] * (witness[5] - pose_a[2, 3]))
            witness_b[r] = (pose_b[0, r] * (witness[6] - pose_b[0, 3]) + pose_b[1, r] * (witness[7] - pose_b[1, 3])
                            + pose_b[2, r] * (witness[8] - pose_b[2, 3]))
        near = hull_stop + eps + 1e-9 * (ball_a[3] + ball_b[3])
        ka, kb_index, d, mx, my, mz, visited = _touching_pair(b_mode, two_sided, ni_a, nb_a, tv_a, ni_b, nb_b, tv_b,
                                                              kb, pb, ptb, ball_b, rel, la, lb, identity,
                                                              hull_stop + eps, axes_a, tri_a, warm, witness_a,
                                                              witness_b, near)
        pops += visited
        if ka >= 0:
            _triangle_moved(tv_a, ka, rel, tri_a)
            tri_b = tv_b[kb_index]
            # the normal: of the hulls' direction (into B's frame), the triangles' SAT axes (their
            # edge x edge crosses: an edge-edge contact) and face normals, the axis of largest gap
            nx = pose_b[0, 0] * witness[0] + pose_b[1, 0] * witness[1] + pose_b[2, 0] * witness[2]
            ny = pose_b[0, 1] * witness[0] + pose_b[1, 1] * witness[1] + pose_b[2, 1] * witness[2]
            nz = pose_b[0, 2] * witness[0] + pose_b[1, 2] * witness[1] + pose_b[2, 2] * witness[2]
            gap = -np.inf
            if nx == nx:
                gap = _axis_gap(b_mode, tri_a, tri_b, nx, ny, nz, kb, pb, ptb, identity, hints)
            if b_mode == B_MESH:
                sat, sx, sy, sz = _sat_axis(tri_a, tri_b)
                if sat > gap:
                    gap, nx, ny, nz = sat, sx, sy, sz
            nx, ny, nz = _contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints, eps)
            id_b = float(ids_b[kb_index]) if b_mode == B_MESH else -1.0
            _record(out, t_start, mx, my, mz, nx, ny, nz, ids_a[ka], id_b)
            best = t_start
            found = True
    coarse_t = np.inf
    steps = hull_steps
    leaves = 0
    leaf_steps = 0
    exhausted = False
    s = 0.0
    # Best-first over the heap (pairs keyed by their time bound). A popped pair advances until
    # it must split, or yields once its time passes the earliest waiting one. A split at time t
    # evaluates both children at once in the same frame: a child that can advance goes to the
    # heap at its advanced time (or is pruned), one that must split or is a leaf pair goes on a
    # local stack at t (the nearer on top), drained before the next heap pop.
    local = np.empty((64, 2), dtype=np.int64)
    local_gap = np.empty(64)
    pair_a = np.empty(4, dtype=np.int64)
    pair_b = np.empty(4, dtype=np.int64)
    top = 0
    size = 0
    if not found:
        heap_t, heap_i, size = _heap_push(heap_t, heap_i, 0, t_start, 0, 0)
    t = t_start
    ia = 0
    ib = 0
    while size > 0 or top > 0:
        if top > 0:
            top -= 1
            ia = local[top, 0]
            ib = local[top, 1]
            if t > best or (found and t >= best):
                continue
        else:
            t, ia, ib, size = _heap_pop(heap_t, heap_i, size)
            if t > best or (found and t >= best):
                break  # every waiting pair starts at or after this time
            pops += 1
            # advance the node pair until it must split; yield past the earliest waiting pair
            pruned = False
            deferred = False
            while True:
                _evaluate(mpa, mpb, t, pose_a, pose_b, rel, la, lb, world_a, world_b, cache)
                gap, step, size_ab = _node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb,
                                                axes_a, descend)
                if gap <= descend * size_ab:
                    break
                following = min(t + step, min(la[9], lb[9]))
                if following > best or (found and following >= best):
                    pruned = True
                    break
                if not following > t:
                    following = np.nextafter(t, np.inf)
                t = following
                steps += 1
                if steps >= budget:
                    exhausted = True
                    break
                if size > 0 and t > heap_t[0]:
                    deferred = True
                    break
            if exhausted or deferred:
                heap_t, heap_i, size = _heap_push(heap_t, heap_i, size, t, ia, ib)
                if exhausted:
                    break
                continue
            if pruned:
                continue
        leaf_a = ni_a[ia, 2] < 0
        leaf_b = b_mode != B_MESH or ni_b[ib, 2] < 0
        if not (leaf_a and leaf_b):
            # split the larger node, or both when their balls are within SPLIT_BOTH of each other
            # (children inherit t: their triangles are the parent's)
            children = 2
            ra = nb_a[ia, SPHERE_RADIUS]
            rb = nb_b[ib, SPHERE_RADIUS] if b_mode == B_MESH else 0.0
            if not leaf_a and not leaf_b and SPLIT_BOTH * ra >= rb and SPLIT_BOTH * rb >= ra:
                children = 4
                pair_a[0], pair_b[0], pair_a[1], pair_b[1] = ia + 1, ib + 1, ia + 1, ni_b[ib, 2]
                pair_a[2], pair_b[2], pair_a[3], pair_b[3] = ni_a[ia, 2], ib + 1, ni_a[ia, 2], ni_b[ib, 2]
            elif not leaf_a and (leaf_b or ra >= rb):
                pair_a[0], pair_b[0], pair_a[1], pair_b[1] = ia + 1, ib, ni_a[ia, 2], ib
            else:
                pair_a[0], pair_b[0], pair_a[1], pair_b[1] = ia, ib + 1, ia, ni_b[ib, 2]
            _evaluate(mpa, mpb, t, pose_a, pose_b, rel, la, lb, world_a, world_b, cache)
            if top + children > local.shape[0]:
                grown = np.empty((2 * local.shape[0], 2), dtype=np.int64)
                grown_gap = np.empty(2 * local.shape[0])
                grown[:top] = local[:top]
                grown_gap[:top] = local_gap[:top]
                local = grown
                local_gap = grown_gap
            first = top
            for child in range(children):
                ca = pair_a[child]
                cb = pair_b[child]
                pops += 1
                gap, step, size_ab = _node_step(b_mode, two_sided, nb_a, ca, rel, la, nb_b, cb, lb, ball_b, ptb,
                                                axes_a, descend)
                if gap <= descend * size_ab:
                    # onto the local stack, kept in decreasing gap order (the nearest on top)
                    k = top
                    while k > first and local_gap[k - 1] < gap:
                        local[k, 0] = local[k - 1, 0]
                        local[k, 1] = local[k - 1, 1]
                        local_gap[k] = local_gap[k - 1]
                        k -= 1
                    local[k, 0] = ca
                    local[k, 1] = cb
                    local_gap[k] = gap
                    top += 1
                    continue
                following = min(t + step, min(la[9], lb[9]))
                if following > best or (found and following >= best):
                    continue
                if not following > t:
                    following = np.nextafter(t, np.inf)
                steps += 1
                heap_t, heap_i, size = _heap_push(heap_t, heap_i, size, following, ca, cb)
            continue
        # leaf pair: each triangle pair (or triangle vs B) advanced by its projection gap
        leaves += 1
        count_b = ni_b[ib, 1] if b_mode == B_MESH else 1
        for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
            for jb in range(count_b):
                kb_index = ni_b[ib, 0] + jb if b_mode == B_MESH else 0
                id_b = float(ids_b[kb_index]) if b_mode == B_MESH else -1.0
                tri_b = tv_b[kb_index]
                s = t
                px = np.nan
                py = np.nan
                pz = np.nan
                warm[0] = 0.0
                while not (s > best or (found and s >= best)):
                    _evaluate(mpa, mpb, s, pose_a, pose_b, rel, la, lb, world_a, world_b, cache)
                    _triangle_moved(tv_a, ka, rel, tri_a)
                    d, mx, my, mz, nx, ny, nz = _leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb, pb,
                                                          ptb, identity, eps, warm)
                    steps += 1
                    leaf_steps += 1
                    if d <= eps or (nx != nx and d <= eps_coarse):
                        # a contact (or touching cores without a direction: a contact at the
                        # resolution of the distance kernel). The normal is the last direction
                        # seen while the pair was more than eps apart (at d <= eps the closest
                        # points' direction is rounding noise), else the current one if any
                        # (NaN when touching at once)
                        if px == px:
                            nx, ny, nz = px, py, pz
                        elif b_mode != B_PLANE:
                            if not d > 0.0:
                                nx, ny, nz = np.nan, np.nan, np.nan
                            nx, ny, nz = _contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, d, kb, pb, ptb, identity, hints,
                                                       eps)
                        _record(out, s, mx, my, mz, nx, ny, nz, ids_a[ka], id_b)
                        best = s
                        found = True
                        break
                    if nx != nx:
                        # no direction from the distance kernel: any axis bounds the distance
                        # by its projection gap; take the one between the two sides' centres
                        nx, ny, nz = _centre_axis(b_mode, tri_a, tri_b, ball_b)
                    gap, step, nx, ny, nz = _leaf_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b,
                                                       identity, hints, eps)
                    if d <= eps_coarse and s < coarse_t:
                        coarse_t = s
                        _record(coarse, s, mx, my, mz, nx, ny, nz, ids_a[ka], id_b)
                    if gap <= eps and d <= eps_coarse:
                        # the exact projection gap is within eps where the distance kernel's
                        # direction is not exact: accept the contact at the coarse tolerance
                        _record(out, s, mx, my, mz, nx, ny, nz, ids_a[ka], id_b)
                        best = s
                        found = True
                        break
                    if b_mode == B_PLANE:
                        px, py, pz = nx, ny, nz
                    else:
                        px, py, pz = _contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints,
                                                   eps)
                    following = min(s + step, min(la[9], lb[9]))
                    if not following > s:
                        following = np.nextafter(s, np.inf)
                    s = following
                    if steps >= budget:
                        exhausted = True
                        break
                if exhausted:
                    break
            if exhausted:
                break
        if exhausted:
            heap_t, heap_i, size = _heap_push(heap_t, heap_i, size, t, ia, ib)
            break
    out[9] = steps
    out[10] = pops
    out[11] = leaves
    out[12] = leaf_steps
    status = STATUS_MISS
    if exhausted:
        lower = best
        for i in range(size):
            lower = min(lower, heap_t[i])
        if top > 0:
            lower = min(lower, t)
        if coarse_t <= lower and (not found or coarse_t < best):
            for i in range(9):
                out[i] = coarse[i]
            status = STATUS_HIT if coarse_t > 0.0 else STATUS_TOUCHING
        elif found and best <= lower:
            status = STATUS_HIT if best > 0.0 else STATUS_TOUCHING
        else:
            for i in range(9):
                out[i] = np.nan
            out[0] = lower
            return STATUS_LIMIT
    elif found:
        status = STATUS_HIT if best > 0.0 else STATUS_TOUCHING
    else:
        out[0] = np.inf
        return STATUS_MISS
    # the contact point and normal were found in B's frame at time out[0]: to the world
    motion_state(mpb, out[0], pose_b, world_b)
    x, y, z = _apply(pose_b, out[1], out[2], out[3])
    nx, ny, nz = _rotate_by(pose_b, out[4], out[5], out[6])
    out[1] = x
    out[2] = y
    out[3] = z
    out[4] = nx
    out[5] = ny
    out[6] = nz
    return status


@njit(cache=True, nogil=True)
def mesh_toi_many(ni_a, nb_a, tv_a, ids_a, ball_a, mpa, b_mode, ni_b, nb_b, tv_b, ids_b, kb, pb, ptb, ball_b, mpb,
                  t_max, scale, time_tolerance, budget, descend, hka, hpa, hpta, hkb, hpb, hptb, handover, hull_slack,
                  out_status, out, lo, hi):
    """Batch of mesh_toi over motion rows mpa (n|1, P), mpb (n|1, Q) (a batch of 1 broadcasts;
    each row gets the tolerances of its own motions, so a batch equals its single calls):
    out_status (n,) int8, out (n, OUT_SIZE)."""
    step_a = 1 if mpa.shape[0] > 1 else 0
    step_b = 1 if mpb.shape[0] > 1 else 0
    for i in range(lo, hi):
        out_status[i] = mesh_toi(ni_a, nb_a, tv_a, ids_a, ball_a, mpa[i * step_a], b_mode, ni_b, nb_b, tv_b, ids_b, kb,
                                 pb, ptb, ball_b, mpb[i * step_b], t_max, scale, time_tolerance, budget, descend, hka, hpa,
                                 hpta, hkb, hpb, hptb, handover, hull_slack, out[i])
