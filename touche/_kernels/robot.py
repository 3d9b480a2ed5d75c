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
from .bounding import rotation_from_vector  # noqa: E402
from .jit import njit  # noqa: E402

JOINT_FIXED = 0
JOINT_REVOLUTE = 1
JOINT_PRISMATIC = 2


@njit(cache=True, nogil=True)
def _joint_motion(kind, axis, value, out):
    """``out`` (4, 4) = M(value): the rotation by ``value`` about the unit ``axis`` (Rodrigues,
    bounding.rotation_from_vector) or the translation ``value * axis``."""
    for r in range(4):
        for c in range(4):
            out[r, c] = 1.0 if r == c else 0.0
    if kind == JOINT_REVOLUTE:
        out[:3, :3] = rotation_from_vector(axis * value)
    elif kind == JOINT_PRISMATIC:
        out[0, 3] = value * axis[0]
        out[1, 3] = value * axis[1]
        out[2, 3] = value * axis[2]


@njit(cache=True, nogil=True, inline="always")
def _rigid_product(a, b, out):
    """out = a @ b for rigid (4, 4) transforms (the last row stays 0 0 0 1)."""
    for r in range(3):
        for c in range(4):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
        out[r, 3] += a[r, 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, nogil=True)
def forward_kinematics_many(parent, joint_type, origin, axis, dof, multiplier, offset, q, link_poses, lo, hi):
    """``link_poses[i, k]`` (4, 4): the world pose of link k at configuration ``q[i]``, for
    ``lo <= i < hi``. The root (link 0) sits at the identity."""
    joint_frame = np.empty((4, 4))
    motion = np.empty((4, 4))
    for i in range(lo, hi):
        for r in range(4):
            for c in range(4):
                link_poses[i, 0, r, c] = 1.0 if r == c else 0.0
        for k in range(1, parent.shape[0]):
            value = 0.0
            if dof[k] >= 0:
                value = multiplier[k] * q[i, dof[k]] + offset[k]
            _rigid_product(link_poses[i, parent[k]], origin[k], joint_frame)
            _joint_motion(joint_type[k], axis[k], value, motion)
            _rigid_product(joint_frame, motion, link_poses[i, k])


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
            ax = pose[0, 0] * axis[k, 0] + pose[0, 1] * axis[k, 1] + pose[0, 2] * axis[k, 2]
            ay = pose[1, 0] * axis[k, 0] + pose[1, 1] * axis[k, 1] + pose[1, 2] * axis[k, 2]
            az = pose[2, 0] * axis[k, 0] + pose[2, 1] * axis[k, 1] + pose[2, 2] * axis[k, 2]
            if joint_type[k] == JOINT_REVOLUTE:  # velocity axis x (point - joint origin)
                dx = point[0] - pose[0, 3]
                dy = point[1] - pose[1, 3]
                dz = point[2] - pose[2, 3]
                vx = ay * dz - az * dy
                vy = az * dx - ax * dz
                vz = ax * dy - ay * dx
            else:  # prismatic: the axis itself
                vx, vy, vz = ax, ay, az
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
