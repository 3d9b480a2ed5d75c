"""3-vector helpers shared by the kernels (scalars in, scalars or new (3,) arrays out)."""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from numba.core import types  # noqa: E402
from numba.extending import overload  # noqa: E402

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


def copy_into(dst, src):
    """``dst[...] = src`` for arrays of the same shape (1 to 3 dimensions), element by element.

    In a kernel, numba's assignment of an array into an array view checks the shapes through an
    error path (``raise_with_shape_context``) of ~2,000 lines of IR that is linked into every
    kernel using it and optimized there again, and the first one in a process compiles it (~1.5 s
    of a first query): 102 such assignments were 151,727 of the 0.87 M lines numba linked into
    the kernels of a warmup. Here the shapes are compared and a mismatch raises a plain
    ValueError. ``dst`` is usually a view (``out[i]``, ``grown[:count]``); the source is read
    in order, so it must not overlap ``dst`` (copy it first)."""
    if dst.shape != src.shape:
        raise ValueError("copy_into: the source and destination shapes differ")
    dst[...] = src


def _copy_1d(dst, src):
    n = dst.shape[0]
    if src.shape[0] != n:
        raise ValueError("copy_into: the source and destination shapes differ")
    for i in range(n):
        dst[i] = src[i]


def _copy_2d(dst, src):
    n, m = dst.shape
    if src.shape[0] != n or src.shape[1] != m:
        raise ValueError("copy_into: the source and destination shapes differ")
    for i in range(n):
        for j in range(m):
            dst[i, j] = src[i, j]


def _copy_3d(dst, src):
    n, m, p = dst.shape
    if src.shape[0] != n or src.shape[1] != m or src.shape[2] != p:
        raise ValueError("copy_into: the source and destination shapes differ")
    for i in range(n):
        for j in range(m):
            for k in range(p):
                dst[i, j, k] = src[i, j, k]


@overload(copy_into, inline="always")
def _copy_into_compiled(dst, src):
    if isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.ndim == src.ndim:
        return {1: _copy_1d, 2: _copy_2d, 3: _copy_3d}.get(dst.ndim)
    return None
