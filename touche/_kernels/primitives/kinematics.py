"""A kinematic tree at one configuration: the world pose of every link and of every collision
geometry (robot kinematics, touche/_kernels/motion/robot.py; the robot's pair table,
touche/_kernels/narrow/pair_table.py, which evaluates the tree configuration by configuration).

The tree is flat arrays over links in topological order (a parent before its children, link 0 the
root); link k > 0 hangs from ``parent[k]`` through one joint, whose fields sit at index k (see
motion/robot.py): ``joint_type``, ``origin`` (4, 4), ``axis`` (3,), ``dof`` (the configuration
column, -1 for a fixed joint), ``multiplier``, ``offset``. The child link's frame is
T_child = T_parent @ origin @ M(v), M(v) a rotation by v about ``axis`` (revolute) or a
translation by v * axis (prismatic).
"""

from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.primitives.bounding import rotation_into  # noqa: E402
from touche._kernels.base.jit import njit  # noqa: E402

JOINT_FIXED = 0
JOINT_REVOLUTE = 1
JOINT_PRISMATIC = 2


@njit(cache=True, nogil=True)
def joint_motion(kind, ax, ay, az, value, out):
    """``out`` (4, 4) = M(value): the rotation by ``value`` about the unit axis (ax, ay, az)
    (Rodrigues, bounding.rotation_into) or the translation ``value * axis``."""
    for r in range(4):
        for c in range(4):
            out[r, c] = 1.0 if r == c else 0.0
    if kind == JOINT_REVOLUTE:
        rotation_into(ax * value, ay * value, az * value, out)
    elif kind == JOINT_PRISMATIC:
        out[0, 3] = value * ax
        out[1, 3] = value * ay
        out[2, 3] = value * az


@njit(cache=True, nogil=True, inline="always")
def rigid_product_at(a, ia, b, ib, out, io):
    """out[io] = a[ia] @ b[ib] for rigid transforms in (n, 4, 4) arrays (the last row stays
    0 0 0 1), by index: in a loop over links or geometries, views of the rows would cost their
    reference counting, about as much as the product."""
    for r in range(3):
        for c in range(4):
            out[io, r, c] = a[ia, r, 0] * b[ib, 0, c] + a[ia, r, 1] * b[ib, 1, c] + a[ia, r, 2] * b[ib, 2, c]
        out[io, r, 3] += a[ia, r, 3]
    out[io, 3, 0] = 0.0
    out[io, 3, 1] = 0.0
    out[io, 3, 2] = 0.0
    out[io, 3, 3] = 1.0


@njit(cache=True, nogil=True, inline="always")
def rigid_product(a, b, out):
    """out = a @ b for rigid (4, 4) transforms (contiguous; the last row stays 0 0 0 1)."""
    rigid_product_at(a.reshape((1, 4, 4)), 0, b.reshape((1, 4, 4)), 0, out.reshape((1, 4, 4)), 0)


@njit(cache=True, nogil=True)
def tree_poses(parent, joint_type, origin, axis, dof, multiplier, offset, q, link_poses, joint_frame, motion):
    """``link_poses`` (links, 4, 4): the world pose of every link at the configuration ``q``
    (dof,); the root sits at the identity. ``joint_frame``, ``motion``: (4, 4) scratch."""
    for r in range(4):
        for c in range(4):
            link_poses[0, r, c] = 1.0 if r == c else 0.0
    frame = joint_frame.reshape((1, 4, 4))
    moved = motion.reshape((1, 4, 4))
    for k in range(1, parent.shape[0]):
        value = 0.0
        if dof[k] >= 0:
            value = multiplier[k] * q[dof[k]] + offset[k]
        rigid_product_at(link_poses, parent[k], origin, k, frame, 0)
        joint_motion(joint_type[k], axis[k, 0], axis[k, 1], axis[k, 2], value, motion)
        rigid_product_at(frame, 0, moved, 0, link_poses, k)
