"""World-space AABBs of shapes under poses (the broad phase of touche.CollisionWorld).

Each object is described by flat arrays: ``kind`` (kinds code), ``start`` / ``count`` (its rows
in ``points``), ``radius`` (sphere / capsule / cylinder / cone / Rounded radius, else 0). ``points`` holds,
per kind: the point (POINT, SPHERE centre), the two end points (SEGMENT, CAPSULE, CYLINDER
bottom/top, CONE apex/base centre), the centre and three semi-axis vectors (ELLIPSOID), or a
set of local points whose hull contains the shape (polytope / mesh vertices, or the 8 corners of
their local box when there are many vertices: Ericson 4.2.6, the box of a rotated box), and
for a Rounded shape (ROUNDED) its core's points or the corners of its core's box, grown by
``radius`` like a sphere's centre. Unbounded kinds (RAY, LINE, PLANE, HALFSPACE) get the infinite box.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.base import kinds  # noqa: E402


@njit(cache=True, nogil=True, inline="always")
def _grown(lo0, lo1, lo2, hi0, hi1, hi2, T, q, r0, r1, r2):
    """The box (lo, hi) grown to hold the point T q padded by r0, r1, r2 along the axes."""
    x = T[0, 0] * q[0] + T[0, 1] * q[1] + T[0, 2] * q[2] + T[0, 3]
    y = T[1, 0] * q[0] + T[1, 1] * q[1] + T[1, 2] * q[2] + T[1, 3]
    z = T[2, 0] * q[0] + T[2, 1] * q[1] + T[2, 2] * q[2] + T[2, 3]
    return min(lo0, x - r0), min(lo1, y - r1), min(lo2, z - r2), max(hi0, x + r0), max(hi1, y + r1), max(hi2, z + r2)


@njit(cache=True, nogil=True)
def world_aabbs(kind, start, count, radius, points, poses, shift, pad_relative, out):
    """out[i] = AABB of object i under poses[i] translated by shift[i] (the displacement of a
    translating object; zeros otherwise), padded by ``pad_relative`` times its size so that
    shapes that touch within rounding always have touching boxes."""
    for i in range(kind.shape[0]):
        k = kind[i]
        if k == kinds.RAY or k == kinds.LINE or k == kinds.PLANE or k == kinds.HALFSPACE:
            for a in range(3):
                out[i, a] = -np.inf
                out[i, a + 3] = np.inf
            continue
        T = poses[i]
        lo0 = np.inf
        lo1 = np.inf
        lo2 = np.inf
        hi0 = -np.inf
        hi1 = -np.inf
        hi2 = -np.inf
        s = start[i]
        if k == kinds.ELLIPSOID:
            p = points[s]
            c0 = T[0, 0] * p[0] + T[0, 1] * p[1] + T[0, 2] * p[2] + T[0, 3]
            c1 = T[1, 0] * p[0] + T[1, 1] * p[1] + T[1, 2] * p[2] + T[1, 3]
            c2 = T[2, 0] * p[0] + T[2, 1] * p[1] + T[2, 2] * p[2] + T[2, 3]
            e = np.zeros(3)
            for j in range(1, 4):
                q = points[s + j]
                for a in range(3):
                    w = T[a, 0] * q[0] + T[a, 1] * q[1] + T[a, 2] * q[2]
                    e[a] += w * w
            lo0, hi0 = c0 - np.sqrt(e[0]), c0 + np.sqrt(e[0])
            lo1, hi1 = c1 - np.sqrt(e[1]), c1 + np.sqrt(e[1])
            lo2, hi2 = c2 - np.sqrt(e[2]), c2 + np.sqrt(e[2])
        else:
            n = count[i]
            if k == kinds.CONE:
                n = 1  # the apex alone; the base disc is added below
            r = radius[i] if (k == kinds.SPHERE or k == kinds.CAPSULE or k == kinds.ROUNDED) else 0.0
            for j in range(n):
                lo0, lo1, lo2, hi0, hi1, hi2 = _grown(lo0, lo1, lo2, hi0, hi1, hi2, T, points[s + j], r, r, r)
            if k == kinds.CYLINDER or k == kinds.CONE:
                # a disc of radius r with unit normal u spans r * sqrt(1 - u_a^2) along axis a
                first = 0 if k == kinds.CYLINDER else 1
                r = radius[i]
                r0 = r * np.sqrt(max(0.0, 1.0 - T[0, 2] * T[0, 2]))
                r1 = r * np.sqrt(max(0.0, 1.0 - T[1, 2] * T[1, 2]))
                r2 = r * np.sqrt(max(0.0, 1.0 - T[2, 2] * T[2, 2]))
                for j in range(first, 2):
                    lo0, lo1, lo2, hi0, hi1, hi2 = _grown(lo0, lo1, lo2, hi0, hi1, hi2, T, points[s + j], r0, r1, r2)
        size = max(hi0 - lo0, max(hi1 - lo1, hi2 - lo2))
        pad = pad_relative * (size + abs(T[0, 3]) + abs(T[1, 3]) + abs(T[2, 3])) + 1e-300
        out[i, 0] = lo0 - pad + shift[i, 0]
        out[i, 1] = lo1 - pad + shift[i, 1]
        out[i, 2] = lo2 - pad + shift[i, 2]
        out[i, 3] = hi0 + pad + shift[i, 0]
        out[i, 4] = hi1 + pad + shift[i, 1]
        out[i, 5] = hi2 + pad + shift[i, 2]
