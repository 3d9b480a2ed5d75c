"""Morton codes: the bits of a cell coordinate interleaved with two others, so sorting by code
walks space along a Z-order curve (locality for builds, grids and ray ordering)."""
from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


@njit(cache=True, nogil=True)
def spread_bits(v):
    """The low 21 bits of v moved to every third bit (bit i to bit 3i): one axis of a 63-bit code."""
    v &= 0x1FFFFF
    v = (v | (v << 32)) & 0x1F00000000FFFF
    v = (v | (v << 16)) & 0x1F0000FF0000FF
    v = (v | (v << 8)) & 0x100F00F00F00F00F
    v = (v | (v << 4)) & 0x10C30C30C30C30C3
    v = (v | (v << 2)) & 0x1249249249249249
    return v


@njit(cache=True, nogil=True)
def compact_bits(v):
    """Inverse of spread_bits: every third bit of v, packed."""
    v &= 0x1249249249249249
    v = (v | (v >> 2)) & 0x10C30C30C30C30C3
    v = (v | (v >> 4)) & 0x100F00F00F00F00F
    v = (v | (v >> 8)) & 0x1F0000FF0000FF
    v = (v | (v >> 16)) & 0x1F00000000FFFF
    v = (v | (v >> 32)) & 0x1FFFFF
    return v


@njit(cache=True, nogil=True)
def morton3(cx, cy, cz):
    return spread_bits(cx) | (spread_bits(cy) << 1) | (spread_bits(cz) << 2)
