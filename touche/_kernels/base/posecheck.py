"""Validation of raw pose arrays inside compiled code (cheaper than numpy checks per call)."""
import numpy as np

from touche import tolerance
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

RIGID_TOLERANCE = tolerance.RIGID
MAX_TRANSLATION = tolerance.MAX_COORDINATE  # the range of touche.pose (issue 23, finding 11)

# the codes a checked entry returns instead of an answer when a raw pose is not rigid
INVALID_POSE_A = -3
INVALID_POSE_B = -4


@njit(cache=True, nogil=True)
def is_rigid_transform(matrix):
    """True when a (4, 4) matrix is finite, has last row (0, 0, 0, 1), translations within
    touche's range (|t| <= MAX_TRANSLATION: raw pose arrays reach the kernels without
    touche.pose's numpy checks) and an orthonormal right-handed rotation block (within
    RIGID_TOLERANCE). Any other shape is not a pose: single-pair entries get the caller's 2-D
    array unchecked (jit.strict_entry), so a (3, 3) array must not be read as a (4, 4) one."""
    if matrix.shape[0] != 4 or matrix.shape[1] != 4:
        return False
    for i in range(4):
        for j in range(4):
            if not np.isfinite(matrix[i, j]):
                return False
    for i in range(3):
        if abs(matrix[i, 3]) > MAX_TRANSLATION:
            return False
    if matrix[3, 0] != 0.0 or matrix[3, 1] != 0.0 or matrix[3, 2] != 0.0 or matrix[3, 3] != 1.0:
        return False
    for i in range(3):
        for k in range(3):
            dot = matrix[0, i] * matrix[0, k] + matrix[1, i] * matrix[1, k] + matrix[2, i] * matrix[2, k]
            expected = 1.0 if i == k else 0.0
            if abs(dot - expected) > RIGID_TOLERANCE:
                return False
    det = (
        matrix[0, 0] * (matrix[1, 1] * matrix[2, 2] - matrix[1, 2] * matrix[2, 1])
        - matrix[0, 1] * (matrix[1, 0] * matrix[2, 2] - matrix[1, 2] * matrix[2, 0])
        + matrix[0, 2] * (matrix[1, 0] * matrix[2, 1] - matrix[1, 1] * matrix[2, 0])
    )
    return det > 0.0


@njit(cache=True, nogil=True)
def invalid_pose(ta, tb):
    """INVALID_POSE_A or INVALID_POSE_B for the first of two raw poses that is not a rigid
    transform, 0 when both are."""
    if not is_rigid_transform(ta):
        return INVALID_POSE_A
    if not is_rigid_transform(tb):
        return INVALID_POSE_B
    return 0


@njit(cache=True, nogil=True)
def first_invalid_transform(matrices):
    """Index of the first matrix in a (n, 4, 4) batch that is not a rigid transform, or -1."""
    for index in range(matrices.shape[0]):
        if not is_rigid_transform(matrices[index]):
            return index
    return -1
