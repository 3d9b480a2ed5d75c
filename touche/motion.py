"""Motion models for time-of-impact queries (``touche.time_of_impact``).

Every model carries the start pose and says where the object is at time t:

- ``pose`` — the start pose as float64 (4, 4) or (n, 4, 4);
- ``pose_at(t)`` — the pose(s) at time t, (4, 4) or (n, 4, 4) (for ``QuadraticMatrix`` an
  affine, not rigid, matrix);
- ``batch_size`` — 1 for a single motion, n for a batch (arrays broadcast);
- ``packed()`` — the kernel form: a float64 (n, P) array, one row per motion, ``row[0]`` a kind
  code (below), so a numba kernel evaluates pose(t) and a rigorous bound on point speeds
  (touche/_kernels/motion/ccd.py ``motion_pose`` / ``motion_rates``). ``CallableMotion`` has none.

Models (x_world(t) for a point with local coordinates x; R0, p0 = start rotation / translation):

``Static(pose)``                 x(t) = R0 x + p0.
``Linear(velocity, pose)``       x(t) = R0 x + p0 + t v (translation only).
``Screw(velocity, angular_velocity, pose, center)``
    rigid motion with constant world linear velocity v of the point ``center`` (c, world, default
    the start origin p0) and constant world angular velocity w about it (Eberly S1 §5 closed form,
    with the X - K(t) correction of SEED-NOTES S1 L62/L2130):
    x(t) = c + t v + Rot(t w) (R0 x + p0 - c). Point speeds: |v + w x (x - c(t))| <= |v| + |w| r
    for points within r of c(t) = c + t v.
``Keyframes(times, poses)``      piecewise screw motion: between consecutive keyframes the
    rotation is slerped (constant world angular velocity) and the origin moves linearly; before
    the first / after the last time the pose is held.
``Integrated(velocity, pose, t_end, steps, center)``
    the rigid ODE of Eberly S1 §5, dX/dt = V(t) + W(t) x (X - K(t)), integrated with RK4 over
    [0, t_end] (``steps`` equal steps) on the origin p and the frame R (dR/dt = [W]x R),
    re-orthonormalised (Gram-Schmidt) after every step. The integrated nodes are then a
    ``Keyframes`` motion: between nodes the pose is slerped, so the motion the queries see is
    exactly that piecewise screw path (it differs from the exact ODE solution by the RK4 error
    plus O(h^2) interpolation). Kernels evaluate it with exact per-segment speed bounds.
``QuadraticMatrix(m0, m1, m2)``  M(t) = m0 + t m1 + t^2 m2, each (4, 4) affine (last rows
    [0,0,0,1], [0,0,0,0], [0,0,0,0]): a box becomes a moving parallelepiped (SEED-NOTES S4:
    a quadratic matrix cannot stay a rotation, so it is treated as the affine map it is).
``CallableMotion(function, linear_speed, angular_speed)``  any Python ``t -> (4, 4)`` rigid
    pose with user-given bounds on the speed of the local origin and on the angular speed; a
    point within r of the origin moves no faster than ``linear_speed + angular_speed * r``.
    Cannot run inside kernels: its conservative advancement is a Python loop that calls the
    distance kernel once per step (~10-50 us per step instead of ~1 us).
"""
from __future__ import annotations

import numpy as np

from .dispatch import CALLABLE, QUADRATIC
from .errors import GeometryError
from .pose import Pose, as_matrices, real_array
from .pose import check_magnitude as check_coordinates

# kind codes of the packed (kernel) form; keep in sync with touche/_kernels/motion/ccd.py
KIND_SCREW = 2  # Static and Linear pack as screws with w = 0
KIND_KEYFRAMES = 3
SCREW_SIZE = 26  # [kind, pose (16, row-major), v (3), w (3), center (3)]
SEGMENT_SIZE = 20  # [t0, t1, R0 (9), p0 (3), w (3), v (3)]


def _vectors(value, name):
    """(3,) or (n, 3) finite vectors; (0, 3) is an empty batch (a filtered batch can be empty)."""
    array = real_array(value, name, copy=True)
    if array.shape[-1:] != (3,) or array.ndim not in (1, 2):
        raise GeometryError(f"{name} must have shape (3,) or (n, 3), got {array.shape}")
    if not np.isfinite(array).all():
        raise GeometryError(f"{name} contains NaN or inf")
    check_coordinates(array, name)  # touche's range: |x| <= 1e75 (touche.tolerance.MAX_COORDINATE)
    return array


def _start_poses(pose, name="pose"):
    """The start pose(s) of a motion: as :func:`as_matrices`, which refuses an empty batch; a
    motion takes one (0, 4, 4), and is then a batch of no motions (batch_size 0)."""
    if isinstance(pose, np.ndarray) and pose.shape == (0, 4, 4):
        return np.zeros((0, 4, 4))
    return as_matrices(pose, name)


def _batch(*arrays, names):
    """Common batch length of arrays whose leading axis is a batch (None = single)."""
    sizes = {len(a) for a in arrays if a is not None}
    sizes.discard(1)
    if len(sizes) > 1:
        raise GeometryError(f"batch lengths of {', '.join(names)} differ: {sorted(sizes)}")
    return sizes.pop() if sizes else 1


def _rotation_of(rotvec):
    """Rodrigues: rotation matrices (..., 3, 3) of rotation vectors (..., 3)."""
    rotvec = np.asarray(rotvec, dtype=np.float64)
    angle = np.linalg.norm(rotvec, axis=-1)
    safe = np.where(angle > 0.0, angle, 1.0)
    axis = rotvec / safe[..., None]
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    out = np.empty(rotvec.shape[:-1] + (3, 3))
    out[..., 0, 0] = c + x * x * C
    out[..., 0, 1] = x * y * C - z * s
    out[..., 0, 2] = x * z * C + y * s
    out[..., 1, 0] = y * x * C + z * s
    out[..., 1, 1] = c + y * y * C
    out[..., 1, 2] = y * z * C - x * s
    out[..., 2, 0] = z * x * C - y * s
    out[..., 2, 1] = z * y * C + x * s
    out[..., 2, 2] = c + z * z * C
    return out


def _rotvec_of(rotation):
    """Rotation vectors (..., 3) of rotation matrices (scipy, exact near angle pi)."""
    from scipy.spatial.transform import Rotation

    flat = np.asarray(rotation).reshape(-1, 3, 3)
    return Rotation.from_matrix(flat).as_rotvec().reshape(np.shape(rotation)[:-2] + (3,))


def _frozen(array):
    """A read-only view: motions are immutable (their kernel rows are packed once and cached)."""
    if array is None:
        return None
    view = array.view()
    view.setflags(write=False)
    return view


class Motion:
    """Base class of the motion models (immutable: arrays are read-only views)."""

    __slots__ = ("pose",)
    translational = False  # True: orientation fixed, constant velocity (exact SAT / GJK cast)
    kernel_form = True  # packed() exists
    impact_family = None  # a time_of_impact family this model decides alone (dispatch.motion_family)

    @property
    def batch_size(self):
        return self.pose.shape[0] if self.pose.ndim == 3 else 1

    def pose_at(self, t):  # pragma: no cover - every model overrides it
        raise NotImplementedError

    def packed(self):  # pragma: no cover - every kernel model overrides it
        raise NotImplementedError

    @property
    def is_batch(self):
        return False


class Screw(Motion):
    """Constant linear velocity ``velocity`` of the world point ``center`` (default: the start
    origin) and constant world angular velocity ``angular_velocity`` (rad per time unit) about
    it: ``x(t) = c + t v + Rot(t w) (R0 x + p0 - c)``. Arrays (3,) or (n, 3); ``pose`` one or a
    batch (n, 4, 4); batches of 1 broadcast."""

    __slots__ = ("velocity", "angular_velocity", "center", "_rows")

    def __init__(self, velocity, angular_velocity=(0.0, 0.0, 0.0), pose=None, center=None):
        self.pose = _frozen(np.array(_start_poses(pose), dtype=np.float64, order="C", copy=True))
        self.velocity = _frozen(_vectors(velocity, "velocity"))
        self.angular_velocity = _frozen(_vectors(angular_velocity, "angular_velocity"))
        self.center = None if center is None else _frozen(_vectors(center, "center"))
        self._rows = None
        self._size()

    def _size(self):
        return _batch(
            self.pose if self.pose.ndim == 3 else None,
            self.velocity if self.velocity.ndim == 2 else None,
            self.angular_velocity if self.angular_velocity.ndim == 2 else None,
            self.center if self.center is not None and self.center.ndim == 2 else None,
            names=("pose", "velocity", "angular_velocity", "center"),
        )

    @property
    def batch_size(self):
        return self._size()

    @property
    def is_batch(self):
        arrays = [self.pose.ndim == 3, self.velocity.ndim == 2, self.angular_velocity.ndim == 2]
        if self.center is not None:
            arrays.append(self.center.ndim == 2)
        return any(arrays)

    def _columns(self):
        n = self.batch_size
        pose = np.broadcast_to(self.pose.reshape(-1, 4, 4), (n, 4, 4))
        v = np.broadcast_to(self.velocity.reshape(-1, 3), (n, 3))
        w = np.broadcast_to(self.angular_velocity.reshape(-1, 3), (n, 3))
        c = pose[:, :3, 3] if self.center is None else np.broadcast_to(self.center.reshape(-1, 3), (n, 3))
        return pose, v, w, c

    def packed(self):
        """The kernel rows (n, SCREW_SIZE), packed once (a private writable array: do not modify)."""
        if self._rows is not None:
            return self._rows
        if not self.is_batch:  # one motion: no broadcasting views (a single query's overhead)
            out = np.empty((1, SCREW_SIZE))
            row = out[0]
            row[0] = KIND_SCREW
            row[1:17] = self.pose.ravel()
            row[17:20] = self.velocity
            row[20:23] = self.angular_velocity
            row[23:26] = self.pose[:3, 3] if self.center is None else self.center
            self._rows = out
            return out
        pose, v, w, c = self._columns()
        out = np.empty((len(pose), SCREW_SIZE))
        out[:, 0] = KIND_SCREW
        out[:, 1:17] = pose.reshape(-1, 16)
        out[:, 17:20] = v
        out[:, 20:23] = w
        out[:, 23:26] = c
        self._rows = out
        return out

    def pose_at(self, t):
        t = float(t)
        pose, v, w, c = self._columns()
        turn = _rotation_of(w * t)
        moved = np.empty_like(pose)
        moved[:] = pose
        moved[:, :3, :3] = turn @ pose[:, :3, :3]
        moved[:, :3, 3] = c + t * v + np.einsum("nij,nj->ni", turn, pose[:, :3, 3] - c)
        return moved if self.is_batch else moved[0]

    def __repr__(self):
        return f"{type(self).__name__}(batch of {self.batch_size})"


class Linear(Screw):
    """Constant world-frame velocity, fixed orientation: ``x(t) = R x_local + p + t * velocity``.

    ``velocity`` is (3,) or (n, 3); ``pose`` is the start pose (None = identity), one or a batch.
    """

    __slots__ = ()
    translational = True

    def __init__(self, velocity, pose=None):
        velocity = _vectors(velocity, "velocity")
        self.pose = _frozen(np.array(_start_poses(pose), dtype=np.float64, order="C", copy=True))
        self.velocity = _frozen(velocity)
        self.angular_velocity = _frozen(np.zeros(3))
        self.center = None
        self._rows = None
        if velocity.ndim == 2 and self.pose.ndim == 3 and len(velocity) != len(self.pose):
            raise GeometryError(
                f"velocity batch ({len(velocity)}) and pose batch ({len(self.pose)}) differ in length"
            )

    @property
    def batch_size(self):
        poses = self.pose.shape[0] if self.pose.ndim == 3 else 1
        velocities = self.velocity.shape[0] if self.velocity.ndim == 2 else 1
        return 0 if 0 in (poses, velocities) else max(poses, velocities)  # an empty batch stays empty

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


def _keyframe_poses(poses):
    """Keyframe poses as an array: a Pose (batch), a list of single Poses, or (k, 4, 4) /
    (n, k, 4, 4) numbers."""
    if isinstance(poses, Pose):
        return np.asarray(poses.matrix)
    if isinstance(poses, (list, tuple)) and any(isinstance(p, (Pose, type)) for p in poses):
        if not all(isinstance(p, Pose) and not p.is_batch for p in poses):
            kinds = sorted({p.__name__ + " (a class)" if isinstance(p, type) else type(p).__name__ for p in poses})
            raise GeometryError(f"poses must be (k, 4, 4) / (n, k, 4, 4) numbers, a Pose or a list of single Pose "
                                f"objects, got a list of {', '.join(kinds)}")
        return np.stack([p.matrix for p in poses])
    return real_array(poses, "poses")


class _Stacked(Motion):
    """A model given by one stack of 4x4 blocks, (m, 4, 4), or a batch of them, (n, m, 4, 4):
    the member named by ``_blocks``."""

    __slots__ = ()
    _blocks = None

    @property
    def is_batch(self):
        return getattr(self, self._blocks).ndim == 4

    @property
    def batch_size(self):
        blocks = getattr(self, self._blocks)
        return blocks.shape[0] if blocks.ndim == 4 else 1


class Keyframes(_Stacked):
    """Piecewise motion through ``poses`` (k, 4, 4) at increasing ``times`` (k,), k >= 2, or a
    batch ``poses`` (n, k, 4, 4) sharing the times. Between keyframes the rotation is slerped
    (constant world angular velocity, the shortest rotation) and the origin moves linearly;
    outside [times[0], times[-1]] the first / last pose is held."""

    __slots__ = ("times", "poses", "_packed")
    _blocks = "poses"

    def __init__(self, times, poses):
        times = real_array(times, "times", copy=True).reshape(-1)
        if len(times) < 2 or not np.isfinite(times).all() or not (np.diff(times) > 0).all():
            raise GeometryError("times must be >= 2 finite, strictly increasing values")
        poses = _keyframe_poses(poses)
        if poses.ndim not in (3, 4) or poses.shape[-2:] != (4, 4) or poses.shape[-3] != len(times):
            raise GeometryError(f"poses must have shape (k, 4, 4) or (n, k, 4, 4) with k = {len(times)}, got {poses.shape}")
        flat = as_matrices(np.ascontiguousarray(poses.reshape(-1, 4, 4)), "poses")
        self.times = _frozen(times)
        self.poses = _frozen(np.array(flat.reshape(poses.shape), order="C"))
        self.pose = _frozen(self.poses[..., 0, :, :].copy())
        self._packed = self._pack()

    def _pack(self):
        poses = self.poses.reshape(-1, len(self.times), 4, 4)
        n, k = poses.shape[:2]
        dt = np.diff(self.times)
        r0 = poses[:, :-1, :3, :3]
        r1 = poses[:, 1:, :3, :3]
        rotvec = _rotvec_of(r1 @ np.swapaxes(r0, -1, -2))  # world-frame rotation of each segment
        out = np.empty((n, 2 + (k - 1) * SEGMENT_SIZE))
        out[:, 0] = KIND_KEYFRAMES
        out[:, 1] = k - 1
        seg = out[:, 2:].reshape(n, k - 1, SEGMENT_SIZE)
        seg[:, :, 0] = self.times[:-1]
        seg[:, :, 1] = self.times[1:]
        seg[:, :, 2:11] = r0.reshape(n, k - 1, 9)
        seg[:, :, 11:14] = poses[:, :-1, :3, 3]
        seg[:, :, 14:17] = rotvec / dt[None, :, None]
        seg[:, :, 17:20] = (poses[:, 1:, :3, 3] - poses[:, :-1, :3, 3]) / dt[None, :, None]
        return np.ascontiguousarray(out)

    def packed(self):
        return self._packed

    def pose_at(self, t):
        t = float(t)
        seg = self._packed[:, 2:].reshape(len(self._packed), -1, SEGMENT_SIZE)
        i = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 2))
        s = min(max(t, self.times[0]), self.times[-1]) - self.times[i]
        row = seg[:, i]
        out = np.zeros((len(row), 4, 4))
        out[:, 3, 3] = 1.0
        out[:, :3, :3] = _rotation_of(row[:, 14:17] * s) @ row[:, 2:11].reshape(-1, 3, 3)
        out[:, :3, 3] = row[:, 11:14] + s * row[:, 17:20]
        return out if self.is_batch else out[0]

    def __repr__(self):
        return f"Keyframes({len(self.times)} keyframes on [{self.times[0]}, {self.times[-1]}])"


def _gram_schmidt(r):
    """Re-orthonormalise frames (..., 3, 3) column by column (x, then y against x, z = x × y)."""
    x = r[..., :, 0] / np.linalg.norm(r[..., :, 0], axis=-1, keepdims=True)
    y = r[..., :, 1] - (x * r[..., :, 1]).sum(-1, keepdims=True) * x
    y /= np.linalg.norm(y, axis=-1, keepdims=True)
    return np.stack([x, y, np.cross(x, y)], axis=-1)


def _skew(w):
    """Cross-product matrices (..., 3, 3) of vectors (..., 3)."""
    out = np.zeros(w.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    return out - np.swapaxes(out, -1, -2)


class Integrated(Keyframes):
    """Rigid motion defined by an ODE (Eberly S1 §5): ``velocity(t) -> (V, W)`` gives the world
    linear velocity V of the centre K(t) and the angular velocity W; every point moves by
    dX/dt = V + W x (X - K(t)). ``center(t)`` is K(t); None means the object's origin (then V is
    the origin's velocity). Integrated by RK4 on [0, t_end] in ``steps`` steps, the frame
    re-orthonormalised (Gram-Schmidt) after each step; the result is the Keyframes motion
    through the RK4 nodes (see the module doc).

    One motion: ``pose`` (4, 4), V, W, K (3,). A batch of n: ``pose`` (n, 4, 4) and the callables
    return (n, 3) arrays (one vectorised call per RK4 stage for the whole batch)."""

    __slots__ = ()

    def __init__(self, velocity, pose=None, t_end=1.0, steps=256, center=None):
        if not callable(velocity) or (center is not None and not callable(center)):
            raise GeometryError("velocity (and center, if given) must be callables of t")
        t_end = float(t_end)
        steps = int(steps)
        if not np.isfinite(t_end) or t_end <= 0.0 or steps < 1:
            raise GeometryError("t_end must be finite and > 0, steps >= 1")
        start = np.asarray(as_matrices(pose, "pose"), dtype=np.float64)
        batch = start.ndim == 3
        start = start.reshape(-1, 4, 4)
        n = len(start)

        def vectors(value, what, t):
            array = real_array(value, f"{what} at t = {t}")
            if array.shape not in ((3,), (n, 3)) or (array.shape == (3,) and batch and n > 1):
                raise GeometryError(f"{what} must return {'(n, 3) arrays' if batch else '(3,) vectors'}, "
                                    f"got shape {array.shape} at t = {t}")
            return np.broadcast_to(array, (n, 3))

        def field(t, p, r):
            result = velocity(t)
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise GeometryError(f"velocity(t) must return (V, W), got {result!r}")
            v = vectors(result[0], "velocity(t)[0]", t)
            w = vectors(result[1], "velocity(t)[1]", t)
            k = p if center is None else vectors(center(t), "center(t)", t)
            if not (np.isfinite(v).all() and np.isfinite(w).all() and np.isfinite(k).all()):
                raise GeometryError(f"velocity / center returned NaN or inf at t = {t}")
            return v + np.cross(w, p - k), _skew(w) @ r

        times = np.linspace(0.0, t_end, steps + 1)
        h = t_end / steps
        poses = np.tile(np.eye(4), (n, steps + 1, 1, 1))
        poses[:, 0] = start
        p, r = start[:, :3, 3].copy(), start[:, :3, :3].copy()
        for i in range(steps):
            t = times[i]
            dp1, dr1 = field(t, p, r)
            dp2, dr2 = field(t + h / 2, p + h / 2 * dp1, r + h / 2 * dr1)
            dp3, dr3 = field(t + h / 2, p + h / 2 * dp2, r + h / 2 * dr2)
            dp4, dr4 = field(t + h, p + h * dp3, r + h * dr3)
            p = p + h / 6 * (dp1 + 2 * dp2 + 2 * dp3 + dp4)
            r = _gram_schmidt(r + h / 6 * (dr1 + 2 * dr2 + 2 * dr3 + dr4))
            poses[:, i + 1, :3, :3] = r
            poses[:, i + 1, :3, 3] = p
        super().__init__(times, poses if batch else poses[0])

    def __repr__(self):
        batch = f"batch of {self.batch_size}, " if self.is_batch else ""
        return f"Integrated({batch}{len(self.times) - 1} RK4 steps on [0, {self.times[-1]}])"


class QuadraticMatrix(_Stacked):
    """Affine motion ``M(t) = m0 + t m1 + t^2 m2`` (S4): each coefficient (4, 4) with last row
    [0, 0, 0, 1] for m0 and zeros for m1, m2; or one array ``coefficients`` (3, 4, 4) / a batch
    (n, 3, 4, 4) as the first argument. M(t) need not be rigid: a box under it is a moving
    parallelepiped. Answered exactly for box-box pairs (touche/_kernels/motion/ccd.py)."""

    __slots__ = ("coefficients",)
    _blocks = "coefficients"
    kernel_form = False
    impact_family = QUADRATIC

    def __init__(self, m0, m1=None, m2=None):
        try:
            if m1 is None and m2 is None and np.ndim(m0) != 2:
                coefficients = real_array(m0, "QuadraticMatrix coefficients", copy=True)
            else:
                zero = np.zeros((4, 4))
                coefficients = np.stack([real_array(m, "QuadraticMatrix coefficients") if m is not None else zero
                                         for m in (m0, m1, m2)])
        except GeometryError:
            raise
        except (TypeError, ValueError) as exc:
            raise GeometryError("QuadraticMatrix coefficients must be numeric (4, 4) arrays") from exc
        if coefficients.shape[-3:] != (3, 4, 4) or coefficients.ndim not in (3, 4) or coefficients.size == 0:
            raise GeometryError(f"QuadraticMatrix coefficients must be (3, 4, 4) or (n, 3, 4, 4), got {coefficients.shape}")
        if not np.isfinite(coefficients).all():
            raise GeometryError("QuadraticMatrix coefficients contain NaN or inf")
        check_coordinates(coefficients, "QuadraticMatrix coefficients")  # translations and their rates
        bottom = coefficients[..., 3, :]
        expected = np.zeros((3, 4))
        expected[0, 3] = 1.0
        if not np.array_equal(bottom, np.broadcast_to(expected, bottom.shape)):
            raise GeometryError("QuadraticMatrix: last rows must be [0,0,0,1] for m0 and zero for m1, m2 (affine)")
        self.coefficients = _frozen(np.ascontiguousarray(coefficients))
        self.pose = _frozen(self.coefficients[..., 0, :, :].copy())

    @classmethod
    def from_motion(cls, motion):
        """A translational motion (Static / Linear) as the quadratic matrix it is."""
        pose = np.asarray(motion.pose, dtype=np.float64).reshape(-1, 4, 4)
        v = np.asarray(motion.velocity, dtype=np.float64).reshape(-1, 3)
        n = max(len(pose), len(v))
        out = np.zeros((n, 3, 4, 4))
        out[:, 0] = pose
        out[:, 1, :3, 3] = v
        return cls(out if motion.batch_size > 1 or np.ndim(motion.pose) == 3 or np.ndim(motion.velocity) == 2 else out[0])

    def pose_at(self, t):
        t = float(t)
        c = self.coefficients
        return c[..., 0, :, :] + t * c[..., 1, :, :] + t * t * c[..., 2, :, :]

    def __repr__(self):
        return f"QuadraticMatrix(batch of {self.batch_size})" if self.is_batch else "QuadraticMatrix()"


class CallableMotion(Motion):
    """Any rigid motion given as a Python callable, with user bounds ``linear_speed`` >= |velocity
    of the local origin| and ``angular_speed`` >= |angular velocity| over the whole query
    interval. The bounds are trusted: if they are too small, conservative advancement can step
    past a contact. Runs a Python loop (one kernel call per advancement step).

    One motion: ``function(t: float) -> (4, 4)``. A batch of n motions (``batch=n``):
    ``function(times: (n,) array) -> (n, 4, 4)``, each case at its own time (the advancement
    then calls it once per step for the whole batch); the speeds are numbers or (n,) arrays.
    Batches answer convex pairs (not meshes)."""

    __slots__ = ("function", "linear_speed", "angular_speed", "batch")
    impact_family = CALLABLE
    kernel_form = False

    def __init__(self, function, linear_speed, angular_speed=0.0, batch=None):
        if not callable(function):
            raise GeometryError("CallableMotion needs a callable t -> (4, 4) pose")
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1):
            raise GeometryError(f"batch must be None or a positive integer, got {batch!r}")
        try:
            linear = real_array(linear_speed, "linear_speed", copy=True)
            angular = real_array(angular_speed, "angular_speed", copy=True)
        except (TypeError, ValueError) as exc:
            raise GeometryError("linear_speed and angular_speed must be numbers") from exc
        shapes = {(), (batch,)} if batch is not None else {()}
        if linear.shape not in shapes or angular.shape not in shapes:
            raise GeometryError(f"speeds must be numbers{' or (n,) arrays' if batch else ''}, got shapes "
                                f"{linear.shape}, {angular.shape}")
        if not (np.isfinite(linear).all() and np.isfinite(angular).all()) or (linear < 0).any() or (angular < 0).any():
            raise GeometryError("linear_speed and angular_speed must be finite and >= 0")
        self.function = function
        self.batch = None if batch is None else int(batch)
        if batch is None:
            self.linear_speed = float(linear)
            self.angular_speed = float(angular)
        else:
            self.linear_speed = _frozen(np.broadcast_to(linear, (batch,)).copy())
            self.angular_speed = _frozen(np.broadcast_to(angular, (batch,)).copy())
        self.pose = _frozen(self.pose_at(0.0))

    @property
    def is_batch(self):
        return self.batch is not None

    @property
    def batch_size(self):
        return self.batch or 1

    def pose_at(self, t):
        """(4, 4) at time t; a batch: (n, 4, 4) at t (a number or (n,) times)."""
        if self.batch is None:
            raw = self.function(float(t))
        else:
            raw = self.function(np.ascontiguousarray(np.broadcast_to(np.asarray(t, dtype=np.float64), (self.batch,))))
        try:
            array = real_array(raw, "CallableMotion's function result", copy=True)
        except GeometryError as exc:
            raise GeometryError(f"CallableMotion's function returned {type(raw).__name__}, not poses ({exc})") from exc
        expected = (4, 4) if self.batch is None else (self.batch, 4, 4)
        if not np.isfinite(array).all():
            raise GeometryError(f"CallableMotion's function returned NaN or inf at t = {t!r}")
        if array.shape != expected:
            raise GeometryError(f"CallableMotion's function must return {expected} poses, got {array.shape}")
        pose = as_matrices(array, "CallableMotion(t)")
        return np.array(pose, dtype=np.float64, order="C")

    def __repr__(self):
        batch = f", batch={self.batch}" if self.batch else ""
        return (f"CallableMotion({self.function!r}, linear_speed={self.linear_speed}, "
                f"angular_speed={self.angular_speed}{batch})")


def as_motion(value, name="motion"):
    """Motions pass through; None is ``Static()``; a pose (Pose / (4, 4) / (n, 4, 4)) is Static."""
    if isinstance(value, Motion):
        return value
    if value is None:
        return _STATIC
    if callable(value):
        raise GeometryError(f"{name}: wrap a callable in touche.CallableMotion(function, linear_speed, angular_speed)")
    try:
        return Static(value)
    except GeometryError as exc:
        raise GeometryError(f"{name} must be a touche motion (Linear, Static, Screw, ...) or a pose: {exc}") from exc


_STATIC = Static()  # the motion of a None argument (immutable, shared)
