"""Motion models for time-of-impact queries.

A motion carries the start pose and says where the object is at time t. This module holds the
translational models (``Static`` and ``Linear``); the continuous-collision issue adds rotating
and general ones behind the same interface:

- ``pose`` — the start pose as float64 (4, 4) or (n, 4, 4);
- ``velocity`` — world-frame linear velocity (3,) or (n, 3) for translational models;
- ``pose_at(t)`` — the pose(s) at time t, (4, 4) or (n, 4, 4);
- ``batch_size`` — 1 for a single motion, n for a batch (poses and velocities broadcast).
"""
from __future__ import annotations

import numpy as np

from .errors import GeometryError
from .pose import as_matrices


class Motion:
    """Base class of the motion models."""

    __slots__ = ("pose",)
    translational = False

    @property
    def batch_size(self):
        return self.pose.shape[0] if self.pose.ndim == 3 else 1

    def pose_at(self, t):  # pragma: no cover - every model overrides it
        raise NotImplementedError


class Linear(Motion):
    """Constant world-frame velocity, fixed orientation: ``x(t) = R x_local + p + t * velocity``.

    ``velocity`` is (3,) or (n, 3); ``pose`` is the start pose (None = identity), one or a batch.
    """

    __slots__ = ("velocity",)
    translational = True

    def __init__(self, velocity, pose=None):
        try:
            velocity = np.array(velocity, dtype=np.float64, order="C", copy=True)
        except (TypeError, ValueError) as exc:
            raise GeometryError(f"velocity must be numeric (3,) or (n, 3), got {velocity!r}") from exc
        if velocity.shape[-1:] != (3,) or velocity.ndim not in (1, 2) or velocity.size == 0:
            raise GeometryError(f"velocity must have shape (3,) or (n, 3), got {velocity.shape}")
        if not np.isfinite(velocity).all():
            raise GeometryError("velocity contains NaN or inf")
        self.pose = np.array(as_matrices(pose, "pose"), dtype=np.float64, order="C", copy=True)
        self.velocity = velocity
        if velocity.ndim == 2 and self.pose.ndim == 3 and len(velocity) != len(self.pose):
            raise GeometryError(
                f"velocity batch ({len(velocity)}) and pose batch ({len(self.pose)}) differ in length"
            )

    @property
    def batch_size(self):
        return max(super().batch_size, self.velocity.shape[0] if self.velocity.ndim == 2 else 1)

    def pose_at(self, t):
        t = float(t)
        count = self.batch_size
        if count == 1 and self.pose.ndim == 2 and self.velocity.ndim == 1:
            moved = self.pose.copy()
            moved[:3, 3] += t * self.velocity
            return moved
        moved = np.array(np.broadcast_to(self.pose.reshape(-1, 4, 4), (count, 4, 4)))
        moved[:, :3, 3] += t * np.broadcast_to(self.velocity.reshape(-1, 3), (count, 3))
        return moved

    def __repr__(self):
        return f"Linear(velocity={self.velocity.tolist() if self.velocity.ndim == 1 else self.velocity.shape})"


class Static(Linear):
    """No motion: the object stays at ``pose`` (a Linear motion with zero velocity)."""

    __slots__ = ()

    def __init__(self, pose=None):
        super().__init__(np.zeros(3), pose)

    def __repr__(self):
        return "Static()"


def as_motion(value, name="motion"):
    """Motions pass through; None is ``Static()``; a pose (Pose / (4, 4) / (n, 4, 4)) is Static."""
    if isinstance(value, Motion):
        return value
    if value is None:
        return Static()
    try:
        return Static(value)
    except GeometryError as exc:
        raise GeometryError(f"{name} must be a touche motion (Linear, Static) or a pose: {exc}") from exc
