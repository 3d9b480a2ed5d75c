"""Rigid poses: rotation + translation, one or a batch.

A :class:`Pose` maps local coordinates to world coordinates, ``x_world = R @ x_local + t``.
It wraps a ``(4, 4)`` homogeneous matrix or a ``(n, 4, 4)`` batch of them. Every public verb
accepts a ``Pose``, a raw ``(4, 4)`` / ``(n, 4, 4)`` array, or ``None`` (identity).

Quaternion order is always explicit: ``Pose.from_quaternion(q, order="wxyz")`` (scalar first,
as in coal / Eigen constructors) or ``order="xyzw"`` (scalar last, as in scipy and pybullet).
"""
from __future__ import annotations

import math

import numpy as np

from . import tolerance
from .errors import GeometryError

_RIGID_TOL = tolerance.RIGID
_MAX_TRANSLATION = tolerance.MAX_COORDINATE


def real_array(value, name, copy=False):
    """``value`` as a float64 array (C order, a private copy with ``copy``). GeometryError for
    anything not numeric and for complex numbers: numpy would drop their imaginary parts with
    only a warning, silently changing the geometry."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if array.dtype.kind == "c":
        raise GeometryError(f"{name} has complex values; geometry must be real numbers")
    try:
        if copy:
            return np.array(array, dtype=np.float64, order="C", copy=True)
        return np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric, got {type(value).__name__}") from exc


def nonnegative_number(value, name, finite=True):
    """``value`` as a float >= 0, finite (or, with ``finite=False``, possibly inf); GeometryError
    for anything else (NaN, negative, not a number)."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be a number, got {value!r}") from exc
    if finite and not math.isfinite(number):  # math, not numpy: a scalar check on every call
        raise GeometryError(f"{name} must be finite and >= 0, got {number!r}")
    if not number >= 0.0:  # NaN too
        raise GeometryError(f"{name} must be >= 0" + ("" if finite else " (inf allowed)") + f", got {number!r}")
    return number


def _as_float_array(value, name):
    return real_array(value, name)


def _check_finite(array, name):
    if not np.isfinite(array).all():
        raise GeometryError(f"{name} contains NaN or inf")


def check_magnitude(array, name, what="coordinates and sizes", symbol="x"):
    """GeometryError unless every entry of ``array`` (finite floats) has magnitude <= 1e75
    (touche.tolerance.MAX_COORDINATE says why). One vectorised pass: batches of millions of
    poses pay a few milliseconds."""
    if array.size:
        largest = float(np.abs(array).max())
        if largest > _MAX_TRANSLATION:
            noun = "a translation component" if symbol == "t" else "a value"
            raise GeometryError(
                f"{name} has {noun} of magnitude {largest!r}, outside touche's range: {what} "
                f"must satisfy |{symbol}| <= {_MAX_TRANSLATION:g}"
            )


def _check_translations(translation, name):
    check_magnitude(translation, name, "translations", "t")


def _check_rotations(rotation, name):
    """Rotation matrices (..., 3, 3) must be orthonormal and right-handed."""
    gram = np.einsum("...ji,...jk->...ik", rotation, rotation)
    if not np.allclose(gram, np.eye(3), atol=_RIGID_TOL, rtol=0.0):
        raise GeometryError(f"{name} is not a rotation (R^T R != I within {_RIGID_TOL})")
    if (np.linalg.det(rotation) <= 0).any():
        raise GeometryError(f"{name} is a reflection (det R <= 0), not a rotation")


def validate_matrices(matrix, name="pose"):
    """Return ``matrix`` as a float64 C-contiguous (4, 4) or (n, 4, 4) rigid transform array."""
    matrix = _as_float_array(matrix, name)
    if matrix.shape[-2:] != (4, 4) or matrix.ndim not in (2, 3):
        raise GeometryError(f"{name} must have shape (4, 4) or (n, 4, 4), got {matrix.shape}")
    if matrix.ndim == 3 and matrix.shape[0] == 0:
        raise GeometryError(f"{name} is an empty batch")
    _check_finite(matrix, name)
    _check_translations(matrix[..., :3, 3], name)
    bottom = matrix[..., 3, :]
    if not np.array_equal(bottom, np.broadcast_to([0.0, 0.0, 0.0, 1.0], bottom.shape)):
        raise GeometryError(f"{name} must have last row [0, 0, 0, 1] (a rigid transform)")
    _check_rotations(matrix[..., :3, :3], name)
    return np.ascontiguousarray(matrix)


def _compose(rotation, translation):
    rotation = np.asarray(rotation, dtype=np.float64)
    translation = np.asarray(translation, dtype=np.float64)
    batch = np.broadcast_shapes(rotation.shape[:-2], translation.shape[:-1])
    matrix = np.zeros(batch + (4, 4))
    matrix[..., :3, :3] = rotation
    matrix[..., :3, 3] = translation
    matrix[..., 3, 3] = 1.0
    return matrix


def _quaternion_wxyz_to_matrix(q):
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _rotvec_to_matrix(rotvec):
    """Rodrigues' formula with a series for small angles (no division by a tiny angle)."""
    theta2 = np.einsum("...i,...i->...", rotvec, rotvec)
    theta = np.sqrt(theta2)
    small = theta2 < 1e-12
    safe = np.where(small, 1.0, theta)
    sin_over = np.where(small, 1.0 - theta2 / 6.0, np.sin(safe) / safe)
    cos_term = np.where(small, 0.5 - theta2 / 24.0, (1.0 - np.cos(safe)) / (safe * safe))
    x, y, z = np.moveaxis(rotvec, -1, 0)
    zero = np.zeros_like(x)
    skew = np.stack(
        [np.stack([zero, -z, y], -1), np.stack([z, zero, -x], -1), np.stack([-y, x, zero], -1)], -2
    )
    eye = np.broadcast_to(np.eye(3), skew.shape)
    return eye + sin_over[..., None, None] * skew + cos_term[..., None, None] * (skew @ skew)


class Pose:
    """A rigid transform (or a batch of them) mapping local to world coordinates.

    Attributes
    ----------
    matrix : (4, 4) or (n, 4, 4) float64, read-only.
    """

    __slots__ = ("matrix", "_kernel_matrix")

    def __init__(self, matrix=None):
        if matrix is None:
            matrix = np.eye(4)
        matrix = np.array(validate_matrices(matrix, "pose"), dtype=np.float64, order="C", copy=True)
        # Kernels receive the private writable array: numba compiles read-only and writable
        # arrays as different types, and mixing them would multiply compiled specialisations.
        self._kernel_matrix = matrix
        self.matrix = matrix.view()
        self.matrix.setflags(write=False)

    # ----- constructors -------------------------------------------------------------------
    @classmethod
    def identity(cls, n=None):
        """The identity pose, or a batch of ``n`` identities."""
        return cls(np.eye(4) if n is None else np.tile(np.eye(4), (n, 1, 1)))

    @classmethod
    def from_matrix(cls, matrix):
        """From a (4, 4) or (n, 4, 4) homogeneous rigid transform."""
        return cls(matrix)

    @classmethod
    def from_rt(cls, rotation=None, translation=None):
        """From rotation matrices (..., 3, 3) and translations (..., 3)."""
        rotation = np.eye(3) if rotation is None else _as_float_array(rotation, "rotation")
        translation = np.zeros(3) if translation is None else _as_float_array(translation, "translation")
        if rotation.shape[-2:] != (3, 3):
            raise GeometryError(f"rotation must have shape (..., 3, 3), got {rotation.shape}")
        if translation.shape[-1:] != (3,):
            raise GeometryError(f"translation must have shape (..., 3), got {translation.shape}")
        _check_finite(rotation, "rotation")
        _check_finite(translation, "translation")
        _check_translations(translation, "translation")
        return cls(_compose(rotation, translation))

    @classmethod
    def from_translation(cls, translation):
        """A pure translation (..., 3)."""
        return cls.from_rt(None, translation)

    @classmethod
    def from_quaternion(cls, quaternion, translation=None, *, order):
        """From unit quaternions (..., 4). ``order`` is required: "wxyz" or "xyzw".

        Quaternions are normalised; a zero quaternion is a GeometryError.
        """
        q = _as_float_array(quaternion, "quaternion")
        if q.shape[-1:] != (4,):
            raise GeometryError(f"quaternion must have shape (..., 4), got {q.shape}")
        _check_finite(q, "quaternion")
        if order == "xyzw":
            q = q[..., [3, 0, 1, 2]]
        elif order != "wxyz":
            raise GeometryError(f"quaternion order must be 'wxyz' or 'xyzw', got {order!r}")
        norm = np.linalg.norm(q, axis=-1, keepdims=True)
        if (norm < 1e-12).any():
            raise GeometryError("quaternion has zero length")
        rotation = _quaternion_wxyz_to_matrix(q / norm)
        translation = np.zeros(3) if translation is None else translation
        return cls.from_rt(rotation, translation)

    @classmethod
    def from_rotvec(cls, rotvec, translation=None):
        """From rotation vectors (axis * angle in radians), (..., 3)."""
        rv = _as_float_array(rotvec, "rotvec")
        if rv.shape[-1:] != (3,):
            raise GeometryError(f"rotvec must have shape (..., 3), got {rv.shape}")
        _check_finite(rv, "rotvec")
        translation = np.zeros(3) if translation is None else translation
        return cls.from_rt(_rotvec_to_matrix(rv), translation)

    @classmethod
    def from_scipy(cls, rotation, translation=None):
        """From a ``scipy.spatial.transform.Rotation`` (single or stacked)."""
        translation = np.zeros(3) if translation is None else translation
        return cls.from_rt(rotation.as_matrix(), translation)

    @classmethod
    def random(cls, n=None, *, scale=1.0, seed=None):
        """Uniformly random rotations with translations in [-scale, scale]^3."""
        rng = np.random.default_rng(seed)
        shape = () if n is None else (n,)
        q = rng.normal(size=shape + (4,))
        translation = rng.uniform(-scale, scale, size=shape + (3,))
        return cls.from_quaternion(q, translation, order="wxyz")

    # ----- accessors ----------------------------------------------------------------------
    @property
    def rotation(self):
        """(3, 3) or (n, 3, 3) rotation matrices (columns: local axes in world)."""
        return self.matrix[..., :3, :3]

    @property
    def translation(self):
        """(3,) or (n, 3) translations."""
        return self.matrix[..., :3, 3]

    @property
    def is_batch(self):
        return self.matrix.ndim == 3

    def __len__(self):
        if not self.is_batch:
            raise TypeError("a single Pose has no len(); use is_batch")
        return self.matrix.shape[0]

    def __getitem__(self, index):
        if not self.is_batch:
            raise TypeError("a single Pose cannot be indexed")
        return Pose(self.matrix[index])

    def as_quaternion(self, order):
        """Quaternions (..., 4) in the requested ``order`` ("wxyz" or "xyzw")."""
        from scipy.spatial.transform import Rotation

        q = Rotation.from_matrix(self.rotation).as_quat()  # scipy: xyzw
        if order == "wxyz":
            return q[..., [3, 0, 1, 2]]
        if order == "xyzw":
            return q
        raise GeometryError(f"quaternion order must be 'wxyz' or 'xyzw', got {order!r}")

    def as_rotvec(self):
        from scipy.spatial.transform import Rotation

        return Rotation.from_matrix(self.rotation).as_rotvec()

    # ----- algebra ------------------------------------------------------------------------
    def __matmul__(self, other):
        """Composition: ``(a @ b)`` applies ``b`` first, then ``a``. Batches broadcast."""
        if isinstance(other, Pose):
            return Pose(self.matrix @ other.matrix)
        return NotImplemented

    def compose(self, other):
        return self @ other

    def inverse(self):
        rotation_t = np.swapaxes(self.rotation, -1, -2)
        translation = -np.einsum("...ij,...j->...i", rotation_t, self.translation)
        return Pose(_compose(rotation_t, translation))

    def apply(self, points):
        """Map local points (..., 3) to world. A batch pose maps point i with pose i
        when ``points`` is (n, 3), or every point with every pose when shapes broadcast."""
        points = _as_float_array(points, "points")
        if points.shape[-1:] != (3,):
            raise GeometryError(f"points must have shape (..., 3), got {points.shape}")
        return np.einsum("...ij,...j->...i", self.rotation, points) + self.translation

    def apply_vectors(self, vectors):
        """Rotate direction vectors (..., 3) (no translation)."""
        vectors = _as_float_array(vectors, "vectors")
        return np.einsum("...ij,...j->...i", self.rotation, vectors)

    def __repr__(self):
        if self.is_batch:
            return f"Pose(batch of {len(self)})"
        return f"Pose(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"


_IDENTITY = np.eye(4)  # private and writable on purpose (one kernel type for every pose)


_FLOAT64 = np.dtype(np.float64)
_SINGLE_STRIDES = (32, 8)  # a C-contiguous (4, 4) float64 array


def as_matrices(pose, name="pose", check=True):
    """Public-boundary conversion: Pose / array / None -> float64 (4, 4) or (n, 4, 4).

    Fast path: a ``Pose`` was validated at construction; ``None`` is the identity; a float64
    C-contiguous writable array is checked by one compiled pass (finite, rigid, translations within
    touche's range), or not at all
    with ``check=False`` when the kernel that receives it checks it. Anything else goes through
    the full numpy validation, which names the problem. (The single-pose test is ordered for
    speed: this runs twice on every single-pair query.)"""
    if pose is None:
        return _IDENTITY
    kind = type(pose)
    if kind is Pose:
        return pose._kernel_matrix
    if kind is np.ndarray and pose.dtype is _FLOAT64:
        if pose.strides == _SINGLE_STRIDES and pose.shape == (4, 4):
            if not pose.flags.writeable:  # e.g. a row of Pose.matrix: a 16-number copy, then the fast path
                pose = pose.copy()
            if not check:  # the caller's kernel validates (and re-calls with check=True to raise)
                return pose
        elif not (pose.ndim == 3 and pose.shape[1:] == (4, 4) and pose.flags.c_contiguous and len(pose)):
            return np.array(validate_matrices(pose, name), dtype=np.float64, order="C", copy=True)
        elif not pose.flags.writeable:  # e.g. Pose.matrix: kernels take one (writable) array type
            pose = pose.copy()
        from ._kernels import posecheck  # this form imports under touche._kernels.load's lock

        if posecheck.first_invalid_transform(pose.reshape(-1, 4, 4)) < 0:
            return pose
    return np.array(validate_matrices(pose, name), dtype=np.float64, order="C", copy=True)


def pose_pair(pose_a, pose_b):
    """``(ta, tb, count, single)``: the matrices of two pose arguments (each (4, 4) or (n, 4, 4);
    a batch of one broadcasts), the batch size and whether both are single poses."""
    ta = as_matrices(pose_a, "pose_a")
    tb = as_matrices(pose_b, "pose_b")
    na = ta.shape[0] if ta.ndim == 3 else 1
    nb = tb.shape[0] if tb.ndim == 3 else 1
    if na != nb and na != 1 and nb != 1:
        raise GeometryError(f"pose batches differ in length: pose_a has {na}, pose_b has {nb}")
    return ta, tb, max(na, nb), ta.ndim == 2 and tb.ndim == 2
