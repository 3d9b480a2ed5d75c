"""Robot kinematics: forward kinematics of a kinematic tree for a batch of configurations, the
world poses of every collision geometry, bounding-sphere culling of link pairs, and the gradient
of a pair's signed distance with respect to the joint values.

The tree is flat arrays over links in topological order (a parent before its children, link 0 the
root). Link k > 0 hangs from ``parent[k]`` through one joint, whose fields sit at index k:

  joint_type[k]   JOINT_FIXED, JOINT_REVOLUTE (continuous joints too) or JOINT_PRISMATIC
  origin[k]       (4, 4) the joint frame in the parent link's frame (URDF <origin>)
  axis[k]         (3,) unit axis in the joint frame (URDF <axis>)
  dof[k]          the configuration column driving the joint (-1 for a fixed joint)
  multiplier[k], offset[k]
                  joint value = multiplier * q[dof] + offset (1, 0 except for URDF <mimic>)

The child link's frame is the joint frame moved by the joint: T_child = T_parent @ origin @ M(v),
M(v) a rotation by v about ``axis`` (revolute) or a translation by v * axis (prismatic). Its
origin is the joint's origin and R_child @ axis is the joint axis in the world, for both kinds
(a rotation about an axis leaves the axis fixed) -- which the gradient uses.

Batch kernels loop over configurations ``lo <= i < hi`` (touche._parallel.run hands out chunks).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.primitives.kinematics import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE  # noqa: E402, F401  (the codes robot/model.py reads here)
from touche._kernels.primitives.kinematics import rigid_product as _rigid_product  # noqa: E402
from touche._kernels.primitives.kinematics import tree_poses  # noqa: E402


@njit(cache=True, nogil=True)
def forward_kinematics_many(parent, joint_type, origin, axis, dof, multiplier, offset, q, link_poses, lo, hi):
    """``link_poses[i, k]`` (4, 4): the world pose of link k at configuration ``q[i]``, for
    ``lo <= i < hi``. The root (link 0) sits at the identity."""
    joint_frame = np.empty((4, 4))
    motion = np.empty((4, 4))
    for i in range(lo, hi):
        tree_poses(parent, joint_type, origin, axis, dof, multiplier, offset, q[i], link_poses[i], joint_frame, motion)


@njit(cache=True, nogil=True)
def geometry_poses_many(link_poses, geometry_link, geometry_origin, geometry_poses, lo, hi):
    """``geometry_poses[g, i]`` = link_poses[i, geometry_link[g]] @ geometry_origin[g]: the world
    pose of collision geometry g at configuration i (laid out by geometry first, so that each
    geometry's (n, 4, 4) batch is one contiguous block for touche's batch verbs)."""
    for i in range(lo, hi):
        for g in range(geometry_link.shape[0]):
            _rigid_product(link_poses[i, geometry_link[g]], geometry_origin[g], geometry_poses[g, i])


@njit(cache=True, nogil=True)
def sphere_overlaps_many(geometry_poses, centers, radii, pair_a, pair_b, obstacle_centers, obstacle_radii,
                         out, lo, hi):
    """Broad phase by bounding spheres: ``out[p, i]`` = whether the bounding spheres of pair p
    overlap at configuration i (closed: touching spheres overlap, so the narrow phase decides).

    Sphere of geometry g: centre ``centers[g]`` in its own frame, radius ``radii[g]``. A pair is
    (pair_a[p], pair_b[p]) of geometries; pair_b[p] < 0 names obstacle -pair_b[p] - 1, whose
    sphere is already in the world (``obstacle_centers``, ``obstacle_radii``; an unbounded
    obstacle has radius inf)."""
    for i in range(lo, hi):
        for p in range(pair_a.shape[0]):
            a = pair_a[p]
            b = pair_b[p]
            pa = geometry_poses[a, i]
            ca = centers[a]
            reach = radii[a]
            gap2 = 0.0
            if b >= 0:
                pb = geometry_poses[b, i]
                cb = centers[b]
                reach += radii[b]
                for r in range(3):
                    wa = pa[r, 0] * ca[0] + pa[r, 1] * ca[1] + pa[r, 2] * ca[2] + pa[r, 3]
                    wb = pb[r, 0] * cb[0] + pb[r, 1] * cb[1] + pb[r, 2] * cb[2] + pb[r, 3]
                    gap2 += (wa - wb) ** 2
            else:
                o = -b - 1
                reach += obstacle_radii[o]
                for r in range(3):
                    wa = pa[r, 0] * ca[0] + pa[r, 1] * ca[1] + pa[r, 2] * ca[2] + pa[r, 3]
                    gap2 += (wa - obstacle_centers[o, r]) ** 2
            out[p, i] = gap2 <= reach * reach  # inf reach: always a candidate


@njit(cache=True, nogil=True, inline="always")
def _world_axis(pose, axis, k):
    """Joint k's axis in the world: pose's rotation times axis[k]."""
    ax = pose[0, 0] * axis[k, 0] + pose[0, 1] * axis[k, 1] + pose[0, 2] * axis[k, 2]
    ay = pose[1, 0] * axis[k, 0] + pose[1, 1] * axis[k, 1] + pose[1, 2] * axis[k, 2]
    az = pose[2, 0] * axis[k, 0] + pose[2, 1] * axis[k, 1] + pose[2, 2] * axis[k, 2]
    return ax, ay, az


@njit(cache=True, nogil=True, inline="always")
def _axis_cross(pose, axis, k, point):
    """(world axis of joint k) x (point - joint origin): the velocity of ``point`` per unit
    rate of the revolute joint k."""
    ax, ay, az = _world_axis(pose, axis, k)
    dx = point[0] - pose[0, 3]
    dy = point[1] - pose[1, 3]
    dz = point[2] - pose[2, 3]
    return ay * dz - az * dy, az * dx - ax * dz, ax * dy - ay * dx


@njit(cache=True, nogil=True)
def _add_chain_velocity(link_poses, i, parent, joint_type, axis, dof, multiplier, link, point, normal, sign,
                        gradient):
    """gradient[dof] += sign * normal . (d point / d q[dof]) for a point fixed to ``link``, over
    every joint on the chain from ``link`` up to the root (a mimic joint adds its multiplier
    times its own column to its master's)."""
    k = link
    while k > 0:
        if dof[k] >= 0:
            pose = link_poses[i, k]
            if joint_type[k] == JOINT_REVOLUTE:  # velocity axis x (point - joint origin)
                vx, vy, vz = _axis_cross(pose, axis, k, point)
            else:  # prismatic: the axis itself
                vx, vy, vz = _world_axis(pose, axis, k)
            gradient[dof[k]] += sign * multiplier[k] * (normal[0] * vx + normal[1] * vy + normal[2] * vz)
        k = parent[k]


@njit(cache=True, nogil=True)
def distance_gradients_many(link_poses, parent, joint_type, axis, dof, multiplier, pair_link_a, pair_link_b,
                            point_a, point_b, normal, gradients, lo, hi):
    """``gradients[i, p]`` (dof,): the derivative of pair p's signed distance at configuration i
    with respect to the configuration, from its witness points and normal (from A to B):
    d(signed distance)/dq = normal . (J_b(point_b) - J_a(point_a)), J_x the linear-velocity
    Jacobian of a point fixed to link x (the envelope theorem: the witness points may be held
    fixed on their links when the closest pair is unique). ``pair_link_b[p] < 0``: a static
    obstacle (no velocity). A NaN normal (no witness) gives NaN."""
    for i in range(lo, hi):
        for p in range(pair_link_a.shape[0]):
            row = gradients[i, p]
            row[:] = 0.0
            n = normal[i, p]
            if not (np.isfinite(n[0]) and np.isfinite(n[1]) and np.isfinite(n[2])):
                row[:] = np.nan
                continue
            if pair_link_b[p] >= 0:
                _add_chain_velocity(link_poses, i, parent, joint_type, axis, dof, multiplier, pair_link_b[p],
                                    point_b[i, p], n, 1.0, row)
            _add_chain_velocity(link_poses, i, parent, joint_type, axis, dof, multiplier, pair_link_a[p],
                                point_a[i, p], n, -1.0, row)


# ------------------------------------------------------------------------------------------------
# motion checks: conservative advancement along straight joint-space segments
#
# Seed: conservative advancement (Mirtich, "Impulse-based dynamic simulation of rigid body
# systems", 1996, ch. 2; Schwarzer, Saha & Latombe, "Exact collision checking of robot paths",
# 2002, the link-speed bound below; Ericson, "Real-Time Collision Detection" 9.5.2 / 5.5.x).
# A segment is q(s) = q0 + s (q1 - q0), s in [0, 1]. For a pair (A, B) with distance d(s):
#
#   1. a constant rate bound: |d(s') - d(s)| <= bound * |s' - s| on the whole segment;
#   2. at s_k with a lower bound l_k <= d(s_k): no contact on [s_k, s_k + l_k / bound) because
#      d(s) >= l_k - bound (s - s_k) > 0 there; step s_{k+1} = s_k + l_k / bound;
#   3. stop with "contact" when l_k <= tolerance, with "free" when s_k + l_k / bound > 1.
#
# The rate bound (step 1). A point p fixed to link L moves, as s runs, with
#   dp/ds = sum over joints j on L's chain of (dv_j / ds) * (w_j x (p - o_j))   (revolute)
#                                          or (dv_j / ds) * a_j                  (prismatic)
# where v_j = multiplier_j q[dof_j] + offset_j (dv_j / ds = multiplier_j * (q1 - q0)[dof_j],
# constant on the segment), w_j / a_j the unit world axis and o_j a point on it: the origin of the
# joint's child link frame. |w_j x (p - o_j)| <= |p - o_j|, and |p - o_j| is at most the length of
# the chain of link origins from o_j down to o_L plus |p - o_L|:
#   |o_k - o_parent(k)| = |origin[k] translation + (prismatic) v_k axis_k| <= |t_k| + |v_k|,
#       |v_k| <= max(|v_k(q0)|, |v_k(q1)|) on the segment (v_k is linear in s);
#   |p - o_L| <= |centre of g's bounding sphere in L's frame| + its radius  ("reach" of g).
# With chain[L] = sum of those link steps from the root to L, |p - o_j| <= chain[L] - chain[j] +
# reach[g]: a configuration-free bound, valid at every s of the segment. So
#   |dp/ds| <= sum_j |dv_j/ds| * (revolute: chain[L] - chain[j] + reach[g]; prismatic: 1).
# Distance is invariant under a rigid motion of both members, so a self pair's distance depends
# only on the joints below the two links' lowest common ancestor C (seen from C's frame, the
# joints above it move nothing): the pair's bound sums those joints of A's chain and of B's; an
# obstacle pair (static obstacles) sums A's whole chain. The distance between two compact sets
# whose points move at speeds <= v_A, v_B changes at rate <= v_A + v_B: the pair's bound.

MOTION_ACTIVE = 0  # still advancing
MOTION_NEAR = 1  # the bounding spheres are close: the narrow phase gives the next lower bound
MOTION_FREE = 2  # certified apart for the rest of the segment
MOTION_CONTACT = 3  # lower bound <= tolerance at s: the first contact of the pair
MOTION_DROPPED = 4  # past an earlier contact of its segment (or of an earlier path segment)
MOTION_UNDECIDED = 5  # no reliable lower bound (a distance query did not converge) or out of steps


@njit(cache=True, nogil=True)
def _chain_lengths(parent, joint_type, origin, dof, multiplier, offset, q0, q1, out):
    """``out[k]`` = a bound on the length of the chain of link origins from the root to link k,
    over the whole segment q0 -> q1 (a prismatic joint's value bounded by its two ends)."""
    out[0] = 0.0
    for k in range(1, parent.shape[0]):
        step = np.sqrt(origin[k, 0, 3] ** 2 + origin[k, 1, 3] ** 2 + origin[k, 2, 3] ** 2)
        if joint_type[k] == JOINT_PRISMATIC:
            value = offset[k]
            if dof[k] >= 0:
                start = abs(multiplier[k] * q0[dof[k]] + offset[k])
                end = abs(multiplier[k] * q1[dof[k]] + offset[k])
                step += max(start, end)
            else:
                step += abs(value)
        out[k] = out[parent[k]] + step


@njit(cache=True, nogil=True)
def _joint_rate(k, joint_type, dof, multiplier, q0, q1, chain, link, reach):
    """The speed bound joint k gives a point within ``reach`` of link ``link``'s origin (k on its chain)."""
    if dof[k] < 0:
        return 0.0
    rate = abs(multiplier[k] * (q1[dof[k]] - q0[dof[k]]))
    if joint_type[k] == JOINT_REVOLUTE:
        return rate * (chain[link] - chain[k] + reach)
    return rate


@njit(cache=True, nogil=True)
def motion_rate_bounds(parent, joint_type, origin, dof, multiplier, offset, geometry_link, geometry_reach,
                       pair_a, pair_b, q0, q1, bounds, lo, hi):
    """``bounds[i, p]``: a bound on |d distance / ds| of pair p along segment i, q0[i] -> q1[i]
    (see the derivation above). ``pair_b[p] < 0``: a static obstacle."""
    chain = np.empty(parent.shape[0])
    for i in range(lo, hi):
        _chain_lengths(parent, joint_type, origin, dof, multiplier, offset, q0[i], q1[i], chain)
        for p in range(pair_a.shape[0]):
            a = pair_a[p]
            link_a = geometry_link[a]
            reach_a = geometry_reach[a]
            link_b = 0  # an obstacle: the walk climbs A's whole chain to the root
            reach_b = 0.0
            if pair_b[p] >= 0:
                link_b = geometry_link[pair_b[p]]
                reach_b = geometry_reach[pair_b[p]]
            total = 0.0
            ka = link_a
            kb = link_b
            while ka != kb:  # parents come before children: the larger index is never the ancestor
                if ka > kb:
                    total += _joint_rate(ka, joint_type, dof, multiplier, q0[i], q1[i], chain, link_a, reach_a)
                    ka = parent[ka]
                else:
                    total += _joint_rate(kb, joint_type, dof, multiplier, q0[i], q1[i], chain, link_b, reach_b)
                    kb = parent[kb]
            bounds[i, p] = total


@njit(cache=True, nogil=True)
def _sphere_gap(poses, geometry_link, geometry_origin, centers, radii, a, b, obstacle_centers, obstacle_radii):
    """Distance between the bounding spheres of geometry a and b (b < 0: obstacle -b - 1) at the
    link poses ``poses[0]``; negative when they overlap, -inf against an unbounded obstacle."""
    pose_a = poses[0, geometry_link[a]]
    world_a = np.empty(3)
    world_b = np.empty(3)
    _sphere_center_world(pose_a, geometry_origin[a], centers[a], world_a)
    reach = radii[a]
    if b >= 0:
        _sphere_center_world(poses[0, geometry_link[b]], geometry_origin[b], centers[b], world_b)
        reach += radii[b]
    else:
        copy_into(world_b, obstacle_centers[-b - 1])
        reach += obstacle_radii[-b - 1]
    if not np.isfinite(reach):
        return -np.inf
    gap = np.sqrt((world_a[0] - world_b[0]) ** 2 + (world_a[1] - world_b[1]) ** 2 + (world_a[2] - world_b[2]) ** 2)
    return gap - reach


@njit(cache=True, nogil=True)
def _sphere_center_world(link_pose, geometry_origin, center, out):
    """out = link_pose @ geometry_origin @ center (a point)."""
    local = np.empty(3)
    for r in range(3):
        local[r] = (geometry_origin[r, 0] * center[0] + geometry_origin[r, 1] * center[1]
                    + geometry_origin[r, 2] * center[2] + geometry_origin[r, 3])
    for r in range(3):
        out[r] = link_pose[r, 0] * local[0] + link_pose[r, 1] * local[1] + link_pose[r, 2] * local[2] + link_pose[r, 3]


@njit(cache=True, nogil=True)
def _configuration_at(q0, q1, s, out):
    for c in range(q0.shape[0]):
        out[0, c] = q0[c] + s * (q1[c] - q0[c])


@njit(cache=True, nogil=True)
def motion_sphere_advance(parent, joint_type, origin, axis, dof, multiplier, offset, geometry_link, geometry_origin,
                          centers, radii, obstacle_centers, obstacle_radii, pair_a, pair_b, q0, q1,
                          item_segment, item_pair, bounds, handoff, max_steps, s, state, lo, hi):
    """Advance items lo <= t < hi (an item: one pair on one segment, at ``s[t]``, ``state[t]``
    MOTION_ACTIVE) on the bounding spheres alone, a lower bound of the pair's distance that
    costs one forward kinematics: step s by gap / bound while the gap is at least
    ``handoff[t]``, at most ``max_steps`` times. The item ends MOTION_FREE (certified for the rest
    of its segment) or MOTION_NEAR (the narrow phase takes over at ``s[t]``)."""
    configuration = np.empty((1, q0.shape[1]))
    poses = np.empty((1, parent.shape[0], 4, 4))
    for t in range(lo, hi):
        if state[t] != MOTION_ACTIVE:
            continue
        i = item_segment[t]
        p = item_pair[t]
        bound = bounds[t]
        state[t] = MOTION_NEAR
        for _ in range(max_steps):
            _configuration_at(q0[i], q1[i], s[t], configuration)
            forward_kinematics_many(parent, joint_type, origin, axis, dof, multiplier, offset, configuration, poses, 0, 1)
            gap = _sphere_gap(poses, geometry_link, geometry_origin, centers, radii, pair_a[p], pair_b[p],
                              obstacle_centers, obstacle_radii)
            if gap > bound * (1.0 - s[t]):  # apart until s = 1 (a pair that does not move: any gap)
                state[t] = MOTION_FREE
                break
            if gap < handoff[t]:
                break
            s[t] += gap / bound


@njit(cache=True, nogil=True)
def _lowest_common_ancestor(parent, a, b):
    while a != b:  # parents come before children: the larger index is never the ancestor
        if a > b:
            a = parent[a]
        else:
            b = parent[b]
    return a


@njit(cache=True, nogil=True)
def _local_rate_terms(poses, chain, joint_type, axis, parent, dof, multiplier, q0, q1, link, stop, center, radius,
                      reach, out):
    """Add to ``out`` (rate0, rate1) the local speed bound of the points of a geometry (inside the
    ball ``center`` (world, now), ``radius``; ``reach`` from its link's origin) from the joints
    of its chain from ``link`` up to ``stop`` (exclusive), at the current poses: a point's speed
    from revolute joint k is |dv_k| * (its distance to k's axis line), at most |dv_k| * (the
    centre's distance to the line now + radius + V_k tau) a parameter step tau later, V_k the
    speed of the centre relative to link k's frame (where the axis is fixed): the joints below k,
    bounded by the chain lengths as in ``motion_rate_bounds``."""
    below = 0.0  # V_k: the chain bound of the joints already walked (below k)
    k = link
    while k != stop:
        if dof[k] >= 0:
            dv = abs(multiplier[k] * (q1[dof[k]] - q0[dof[k]]))
            if joint_type[k] == JOINT_REVOLUTE:
                cx, cy, cz = _axis_cross(poses[0, k], axis, k, center)
                out[0] += dv * (np.sqrt(cx * cx + cy * cy + cz * cz) + radius)
                out[1] += dv * below
                below += dv * (chain[link] - chain[k] + reach)
            elif joint_type[k] == JOINT_PRISMATIC:
                out[0] += dv
                below += dv
        k = parent[k]


@njit(cache=True, nogil=True)
def motion_pair_poses(parent, joint_type, origin, axis, dof, multiplier, offset, geometry_link, geometry_origin,
                      centers, radii, geometry_reach, pair_a, pair_b, q0, q1, item_segment, item_pair, s,
                      pose_a, pose_b, rate0, rate1, lo, hi):
    """World poses of the two geometries of items lo <= t < hi at their ``s[t]`` (``pose_b``
    left as it is for an obstacle), and the pair's local rate bound there: over the next
    parameter step tau, |d distance / ds| <= rate0[t] + rate1[t] * tau (the same joints as
    ``motion_rate_bounds``, with each revolute joint's distance to the geometry measured now
    instead of bounded by the chain lengths)."""
    configuration = np.empty((1, q0.shape[1]))
    poses = np.empty((1, parent.shape[0], 4, 4))
    chain = np.empty(parent.shape[0])
    center = np.empty(3)
    terms = np.empty(2)
    for t in range(lo, hi):
        i = item_segment[t]
        p = item_pair[t]
        _configuration_at(q0[i], q1[i], s[t], configuration)
        forward_kinematics_many(parent, joint_type, origin, axis, dof, multiplier, offset, configuration, poses, 0, 1)
        _chain_lengths(parent, joint_type, origin, dof, multiplier, offset, q0[i], q1[i], chain)
        a = pair_a[p]
        b = pair_b[p]
        link_a = geometry_link[a]
        link_b = geometry_link[b] if b >= 0 else 0
        stop = _lowest_common_ancestor(parent, link_a, link_b)
        terms[0] = 0.0
        terms[1] = 0.0
        _rigid_product(poses[0, link_a], geometry_origin[a], pose_a[t])
        _sphere_center_world(poses[0, link_a], geometry_origin[a], centers[a], center)
        _local_rate_terms(poses, chain, joint_type, axis, parent, dof, multiplier, q0[i], q1[i], link_a, stop, center,
                          radii[a], geometry_reach[a], terms)
        if b >= 0:
            _rigid_product(poses[0, link_b], geometry_origin[b], pose_b[t])
            _sphere_center_world(poses[0, link_b], geometry_origin[b], centers[b], center)
            _local_rate_terms(poses, chain, joint_type, axis, parent, dof, multiplier, q0[i], q1[i], link_b, stop,
                              center, radii[b], geometry_reach[b], terms)
        rate0[t] = terms[0]
        rate1[t] = terms[1]


@njit(cache=True, nogil=True)
def motion_distance_advance(lower_bound, reliable, bounds, rate0, rate1, tolerance, s, state):
    """One conservative-advancement step for the MOTION_NEAR items (all at once; cheap): with a
    lower bound l of the pair's distance at s, contact when l <= tolerance; else the certified
    step is the larger of l / bound (the segment-wide bound) and the tau solving
    rate0 tau + rate1 tau^2 / 2 = l (the local bound integrated over the step); free when the
    step passes s = 1, else s += step and the item is active again. An item whose distance query
    did not converge (``reliable`` False) and found no contact is undecided."""
    for t in range(s.shape[0]):
        if state[t] != MOTION_NEAR:
            continue
        low = lower_bound[t]
        if not low > tolerance:  # NaN too: an unbounded penetration depth (a plane through a solid)
            state[t] = MOTION_CONTACT if reliable[t] else MOTION_UNDECIDED
            continue
        if not reliable[t]:
            state[t] = MOTION_UNDECIDED
            continue
        step = np.inf  # a pair that does not move
        if bounds[t] > 0.0:
            step = low / bounds[t]
        local = rate0[t] + np.sqrt(rate0[t] * rate0[t] + 2.0 * rate1[t] * low)
        if local > 0.0:
            step = max(step, 2.0 * low / local)  # (the root of the quadratic, without cancellation)
        elif bounds[t] > 0.0:
            step = np.inf  # no joint moves this pair: the local bound is exact
        if step > 1.0 - s[t]:
            state[t] = MOTION_FREE
        else:
            s[t] += step
            state[t] = MOTION_ACTIVE


@njit(cache=True, nogil=True)
def motion_drop_after_contacts(item_segment, s, state, first_contact, first_segment, along_path):
    """Record each segment's earliest contact (``first_contact[i]``, inf when none) and drop the
    items that cannot come before it: an active item of that segment already past it, and (a path,
    ``along_path``) every item of a later segment than the first one with a contact
    (``first_segment[0]``)."""
    for t in range(s.shape[0]):
        if state[t] == MOTION_CONTACT:
            i = item_segment[t]
            if s[t] < first_contact[i]:
                first_contact[i] = s[t]
            if along_path and i < first_segment[0]:
                first_segment[0] = i
    for t in range(s.shape[0]):
        if state[t] == MOTION_ACTIVE or state[t] == MOTION_NEAR:
            i = item_segment[t]
            if s[t] >= first_contact[i] or (along_path and i > first_segment[0]):
                state[t] = MOTION_DROPPED
