"""What touche.mesh's modules share: the compiled kernels (imported on first use) and two small
geometric helpers. io, prepare and triangulate take them from here, so their own imports run
one way (io -> prepare -> triangulate)."""
from __future__ import annotations

import numpy as np

from .._kernels import kernel_loader


_kernels = kernel_loader("meshprep")


def newell_normal(polygon):
    """Newell's normal of a polygon (k, 3) (Ericson 12.4.2): the sum over edges (i, j) of
    ((y_i - y_j)(z_i + z_j), (z_i - z_j)(x_i + x_j), (x_i - x_j)(y_i + y_j)); its length is
    twice the (projected) area. Robust for non-planar and concave polygons, unlike summed vertex
    cross products. Also accepts (n, k, 3) batches."""
    p = np.asarray(polygon, dtype=np.float64)
    q = np.roll(p, -1, axis=-2)
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    x2, y2, z2 = q[..., 0], q[..., 1], q[..., 2]
    return np.stack([((y - y2) * (z + z2)).sum(-1), ((z - z2) * (x + x2)).sum(-1),
                     ((x - x2) * (y + y2)).sum(-1)], axis=-1)


def face_normals(vertices, faces):
    """Unit normals (m, 3) by the right-hand rule; zero for zero-area faces."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    normal = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    length = np.linalg.norm(normal, axis=1)
    return np.divide(normal, length[:, None], out=np.zeros_like(normal), where=length[:, None] > 0)
