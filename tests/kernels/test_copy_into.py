"""vec.copy_into: the element-by-element copy kernels use instead of numba's slice assignment."""
import numpy as np
import pytest

from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into


@njit(cache=False)
def _rows(out, point, i):
    copy_into(out[i], point)  # a row of a C-contiguous array
    copy_into(out[:, 1], np.arange(out.shape[0]) * 10.0)  # a column: a strided view


@njit(cache=False)
def _blocks(dst, src, count):
    copy_into(dst[:count], src[:count])


def _naive_rows(out, point, i):
    out[i] = point
    out[:, 1] = np.arange(out.shape[0]) * 10.0


@pytest.mark.parametrize("seed", range(4))
def test_copies_equal_numpy_assignment_on_views_of_every_rank(seed):
    rng = np.random.default_rng(seed)
    out, expected = rng.normal(size=(5, 3)), None
    expected = out.copy()
    point = rng.normal(size=3)
    _rows(out, point, 2)
    _naive_rows(expected, point, 2)
    assert np.array_equal(out, expected)
    for shape in [(7,), (7, 4), (7, 2, 3)]:
        src = rng.normal(size=shape)
        dst = np.zeros_like(src)
        _blocks(dst, src, 4)
        reference = np.zeros_like(src)
        reference[:4] = src[:4]
        assert np.array_equal(dst, reference)


def test_a_shape_mismatch_raises_a_plain_value_error_in_a_kernel_and_in_python():
    with pytest.raises(ValueError, match="shapes differ"):
        _rows(np.zeros((4, 3)), np.ones(2), 0)
    with pytest.raises(ValueError, match="shapes differ"):
        _blocks(np.zeros((3, 2)), np.zeros((5, 3)), 2)
    with pytest.raises(ValueError, match="shapes differ"):
        copy_into(np.zeros(3), np.zeros(4))  # the plain function (NUMBA_DISABLE_JIT path)
    target = np.zeros((2, 2))
    copy_into(target, np.eye(2))
    assert np.array_equal(target, np.eye(2))


def test_the_empty_copy_does_nothing():
    dst = np.full((3, 3), 7.0)
    _blocks(dst, np.zeros((3, 3)), 0)
    assert np.all(dst == 7.0)
