"""The verbs' query arguments checked and shaped for the kernels: points, rays and empty
batches. touche.query and touche.meshquery both take them from here (the mesh functions of
meshquery do not import the verbs)."""
from __future__ import annotations

import math

import numpy as np

from .errors import GeometryError
from .pose import Pose, as_matrices, check_magnitude
from .tolerance import MAX_COORDINATE as _MAX_COORDINATE


def query_points(points, name, coordinates=True):
    """(n, 3) writable float64 query points and whether one (3,) point was given. Points are
    coordinates (|x| <= 1e75, touche's range) unless ``coordinates=False`` (ray directions: any
    finite magnitude, normalised by the caller)."""
    try:
        array = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric (n, 3)") from exc
    single = array.ndim == 1
    array = array.reshape(-1, 3) if array.shape[-1:] == (3,) else array
    array = np.require(array, np.float64, ["C", "W"])  # one kernel type: writable, C order
    if array.ndim != 2 or array.shape[1] != 3:
        raise GeometryError(f"{name} must have shape (3,) or (n, 3), got {np.shape(points)}")
    if array.shape[0] == 0:
        raise GeometryError(f"{name} is empty")
    if not np.isfinite(array).all():
        raise GeometryError(f"{name} contains NaN or inf")
    if coordinates:
        check_magnitude(array, name)
    return array, single


def single_point(points):
    """One query point given as three plain numbers (a list, tuple or (3,) array) checked like
    query_points does, as a (1, 3) array; None for anything else or anything query_points would
    refuse (the caller then takes query_points, which raises with its message). A single query
    spent most of its time in query_points' array passes."""
    point = three_floats(points)
    if point is None or not all(math.isfinite(v) and abs(v) <= _MAX_COORDINATE for v in point):
        return None
    return np.array([point])


def is_empty_batch(pose):
    """Whether ``pose`` is a batch of no poses, shape (0, 4, 4) (a filtered batch can be empty)."""
    # on every call: arrays (and None / Pose) answer without np.shape's conversion attempt
    if pose is None or type(pose) is Pose:
        return False
    if type(pose) is np.ndarray:
        return pose.shape == (0, 4, 4)
    return not isinstance(pose, Pose) and shape_of(pose) == (0, 4, 4)


def shape_of(value):
    try:
        return np.shape(value)
    except ValueError:  # ragged: the normal validation names the problem
        return None


# Directions whose largest component lies in here have squared lengths (at most 3 * 2^1000,
# at least 2^-1000) inside float64's normal range: they are passed on as given.
_DIRECTION_SAFE = (2.0 ** -500, 2.0 ** 500)


def scaled_directions(directions):
    """Ray directions (n, 3) divided, row by row, by a power of two near their largest
    component: squared lengths computed from them (the kernels normalise ``d / |d|``) neither
    overflow (a direction of 1e200: inf, every ray missed) nor flush to zero (1e-200: a division
    by zero). Scaling by a power of two is exact, so ordinary directions reach the kernels with
    the same unit vector, bit for bit, and ``t`` (a distance along the unit direction) is
    unchanged. A zero row is a GeometryError."""
    largest = np.abs(directions).max(axis=1)
    if (largest == 0.0).any():
        raise GeometryError("directions contains a zero-length direction")
    if largest.min() >= _DIRECTION_SAFE[0] and largest.max() <= _DIRECTION_SAFE[1]:
        return directions  # the usual case: nothing to scale (one pass fewer over a big batch)
    return np.ldexp(directions, -np.frexp(largest)[1][:, None])


def three_floats(value):
    """The three Python floats of a list, tuple or (3,) array of numbers, or None for anything
    else (the general path then converts and checks it)."""
    kind = type(value)
    if kind is np.ndarray:
        if value.shape != (3,) or value.dtype.kind not in "fiu":
            return None
        value = value.tolist()
    elif (kind is not list and kind is not tuple) or len(value) != 3:
        return None
    try:
        return float(value[0]), float(value[1]), float(value[2])
    except (TypeError, ValueError):
        return None


def _single_ray(pose, origins, directions, max_t):
    """ray_arrays for one ray under one pose given as plain numbers: the same checks on six
    floats without the array passes (a single ray cast spent most of its time there), or None
    when the general path must decide (batches, odd types, a direction needing scaling, any
    value it would refuse: it then raises with its usual message)."""
    origin = single_point(origins)
    direction = three_floats(directions)
    if origin is None or direction is None or type(max_t) not in (float, int):
        return None
    limit = float(max_t)
    if not (limit >= 0.0):
        return None
    largest = max(abs(direction[0]), abs(direction[1]), abs(direction[2]))
    if not (_DIRECTION_SAFE[0] <= largest <= _DIRECTION_SAFE[1]):  # also NaN and inf
        return None
    if not (pose is None or type(pose) is Pose or (type(pose) is np.ndarray and pose.shape == (4, 4))):
        return None
    matrices = as_matrices(pose, "pose")
    return matrices.reshape(1, 4, 4), origin, np.array([direction]), np.array([limit]), True


def ray_arrays(pose, origins, directions, max_t):
    """``(poses (1|n, 4, 4), origins (n, 3), directions (n, 3), max_t (1|n,), single)`` for a ray
    cast (origins and directions broadcast against each other; directions scaled by
    scaled_directions), or None when a batch is empty (check_empty_rays then says whether the
    other arguments fit). ``single``: one (3,) origin and one (3,) direction were given."""
    single_ray = _single_ray(pose, origins, directions, max_t)
    if single_ray is not None:
        return single_ray
    try:
        matrices = as_matrices(pose, "pose")
        origin_array, single_o = query_points(origins, "origins")
        direction_array, single_d = query_points(directions, "directions", coordinates=False)
    except GeometryError:  # empty batches are refused there: looked for only then (per-call cost)
        if is_empty_batch(pose) or shape_of(origins) == (0, 3) or shape_of(directions) == (0, 3):
            return None
        raise
    direction_array = scaled_directions(direction_array)
    count = max(len(origin_array), len(direction_array))
    if len(origin_array) not in (1, count) or len(direction_array) not in (1, count):
        raise GeometryError(f"origins ({len(origin_array)}) and directions ({len(direction_array)}) differ in length")
    # repeat a single origin / direction (np.broadcast_to would hand the kernels a read-only view,
    # a second compiled kernel type next to the writable one query_points guarantees)
    if len(origin_array) != count:
        origin_array = np.repeat(origin_array, count, axis=0)
    if len(direction_array) != count:
        direction_array = np.repeat(direction_array, count, axis=0)
    limits = np.atleast_1d(np.asarray(max_t, dtype=np.float64))
    if limits.ndim != 1 or len(limits) not in (1, count):
        raise GeometryError(f"max_t must be a scalar or ({count},), got shape {np.shape(max_t)}")
    if np.isnan(limits).any() or (limits < 0).any():
        raise GeometryError("max_t must be >= 0 (inf allowed)")
    poses = matrices.reshape(-1, 4, 4)
    if poses.shape[0] not in (1, count):
        raise GeometryError(f"pose batch ({poses.shape[0]}) and rays ({count}) differ in length")
    return poses, origin_array, direction_array, np.ascontiguousarray(limits), single_o and single_d


def check_empty_rays(pose, origins, directions):
    """No rays (or no poses): every other argument must be a single one or empty too."""
    sizes = {}
    if not is_empty_batch(pose):
        matrices = as_matrices(pose, "pose")
        sizes["pose batch"] = len(matrices) if matrices.ndim == 3 else 1
    for value, name, coordinates in ((origins, "origins", True), (directions, "directions", False)):
        if shape_of(value) != (0, 3):
            sizes[name] = len(query_points(value, name, coordinates)[0])
    for name, size in sizes.items():
        if size != 1:
            raise GeometryError(f"{name} ({size}) and an empty batch differ in length")


def contact_options(max_points, margin):
    """``(max_points, margin)`` of a contacts query, checked: an integer >= 1 and a finite
    margin >= 0 (touche.contacts, on convex pairs and on solid meshes)."""
    import numbers

    from .pose import nonnegative_number
    from .shapes import check_size

    if isinstance(max_points, bool) or not isinstance(max_points, numbers.Integral):
        raise GeometryError(f"max_points must be an integer >= 1, got {max_points!r}")
    if max_points < 1:
        raise GeometryError(f"max_points must be >= 1, got {max_points}")
    margin = nonnegative_number(margin, "margin")
    check_size(margin, "margin", zero_ok=True)
    return int(max_points), margin
