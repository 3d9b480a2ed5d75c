"""3-vector helpers shared by the kernels (scalars in, scalars or new (3,) arrays out)."""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


@njit(cache=True, nogil=True)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, nogil=True)
def cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(cache=True, nogil=True)
def norm(a):
    return np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
