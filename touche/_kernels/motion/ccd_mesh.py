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

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.convex.gjk import WARM_SIZE  # noqa: E402
from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.motion.ccd import motion_state  # noqa: E402
from touche._kernels.convex.support import relative_into  # noqa: E402
from touche._kernels.motion.ccd_node_bounds import B_MESH, B_PLANE, OBB_AXES, OBB_CENTER, OBB_HALF  # noqa: E402
from touche._kernels.motion.ccd_node_bounds import SPHERE_RADIUS, apply_pose, node_step, rotate_by  # noqa: E402
from touche._kernels.motion.ccd_leaf_bounds import axis_gap, centre_axis, contact_axis, leaf_gap  # noqa: E402
from touche._kernels.motion.ccd_leaf_bounds import leaf_step, sat_axis, triangle_moved  # noqa: E402
from touche._kernels.motion.ccd_mesh_hulls import hull_advance, tolerances  # noqa: E402


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

OUT_SIZE = 13  # (t, point (3), normal (3), triangle a, triangle b, steps, node pops, leaf pairs, leaf steps)
STATUS_MISS = kinds.MISS
STATUS_HIT = kinds.HIT
STATUS_TOUCHING = kinds.ALREADY_TOUCHING
STATUS_LIMIT = kinds.TOI_MAX_ITERATIONS


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
        gap, _step, _size = node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb, axes_a,
                                       np.inf)
        if not gap <= threshold:
            continue
        leaf_a = ni_a[ia, 2] < 0
        leaf_b = b_mode != B_MESH or ni_b[ib, 2] < 0
        if leaf_a and leaf_b:
            count_b = ni_b[ib, 1] if b_mode == B_MESH else 1
            for ka in range(ni_a[ia, 0], ni_a[ia, 0] + ni_a[ia, 1]):
                triangle_moved(tv_a, ka, rel, tri_a)
                for jb in range(count_b):
                    kb_index = ni_b[ib, 0] + jb if b_mode == B_MESH else 0
                    warm[0] = 0.0
                    d, mx, my, mz, nx, ny, nz = leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb,
                                                          pb, ptb, identity, threshold, warm)
                    if d <= threshold:
                        return ka, kb_index, d, mx, my, mz, visited
            continue
        if top + 2 > stack.shape[0]:
            grown = np.empty((2 * stack.shape[0], 2), dtype=np.int64)
            copy_into(grown[:top], stack[:top])
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
@njit(cache=True, nogil=True, inline="always")
def _heap_place(heap_t, heap_i, k, t, ia, ib):
    """Write the entry (t, ia, ib) to slot k."""
    heap_t[k] = t
    heap_i[k, 0] = ia
    heap_i[k, 1] = ib


@njit(cache=True, nogil=True)
def _heap_push(heap_t, heap_i, size, t, ia, ib):
    """Push (t, ia, ib); returns the (possibly grown) arrays and the new size."""
    if size == heap_t.shape[0]:
        grown_t = np.empty(2 * size)
        grown_i = np.empty((2 * size, 2), dtype=np.int64)
        copy_into(grown_t[:size], heap_t)
        copy_into(grown_i[:size], heap_i)
        heap_t = grown_t
        heap_i = grown_i
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if heap_t[parent] <= t:
            break
        _heap_place(heap_t, heap_i, k, heap_t[parent], heap_i[parent, 0], heap_i[parent, 1])
        k = parent
    _heap_place(heap_t, heap_i, k, t, ia, ib)
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
            _heap_place(heap_t, heap_i, k, heap_t[child], heap_i[child, 0], heap_i[child, 1])
            k = child
        _heap_place(heap_t, heap_i, k, last_t, last_a, last_b)
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
            triangle_moved(tv_a, ka, rel, tri_a)
            tri_b = tv_b[kb_index]
            # the normal: of the hulls' direction (into B's frame), the triangles' SAT axes (their
            # edge x edge crosses: an edge-edge contact) and face normals, the axis of largest gap
            nx = pose_b[0, 0] * witness[0] + pose_b[1, 0] * witness[1] + pose_b[2, 0] * witness[2]
            ny = pose_b[0, 1] * witness[0] + pose_b[1, 1] * witness[1] + pose_b[2, 1] * witness[2]
            nz = pose_b[0, 2] * witness[0] + pose_b[1, 2] * witness[1] + pose_b[2, 2] * witness[2]
            gap = -np.inf
            if nx == nx:
                gap = axis_gap(b_mode, tri_a, tri_b, nx, ny, nz, kb, pb, ptb, identity, hints)
            if b_mode == B_MESH:
                sat, sx, sy, sz = sat_axis(tri_a, tri_b)
                if sat > gap:
                    gap, nx, ny, nz = sat, sx, sy, sz
            nx, ny, nz = contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints, eps)
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
                gap, step, size_ab = node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb,
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
                copy_into(grown[:top], local[:top])
                copy_into(grown_gap[:top], local_gap[:top])
                local = grown
                local_gap = grown_gap
            first = top
            for child in range(children):
                ca = pair_a[child]
                cb = pair_b[child]
                pops += 1
                gap, step, size_ab = node_step(b_mode, two_sided, nb_a, ca, rel, la, nb_b, cb, lb, ball_b, ptb,
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
                    triangle_moved(tv_a, ka, rel, tri_a)
                    d, mx, my, mz, nx, ny, nz = leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb, pb,
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
                            nx, ny, nz = contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, d, kb, pb, ptb, identity, hints,
                                                       eps)
                        _record(out, s, mx, my, mz, nx, ny, nz, ids_a[ka], id_b)
                        best = s
                        found = True
                        break
                    if nx != nx:
                        # no direction from the distance kernel: any axis bounds the distance
                        # by its projection gap; take the one between the two sides' centres
                        nx, ny, nz = centre_axis(b_mode, tri_a, tri_b, ball_b)
                    gap, step, nx, ny, nz = leaf_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b,
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
                        px, py, pz = contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints,
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
    x, y, z = apply_pose(pose_b, out[1], out[2], out[3])
    nx, ny, nz = rotate_by(pose_b, out[4], out[5], out[6])
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
