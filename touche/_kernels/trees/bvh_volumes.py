"""The bounding volumes of a bounding-volume hierarchy's nodes over a triangle mesh (Ericson 4.2-4.6,
6.6; Eberly S1 section 6): the layout of a built tree, every node's AABB, OBB, RSS and sphere
(``fit_node``), the OBB frame (``node_frame``, ``fast_eigenframe_into``) and the nodes' k-DOPs.
The builds (bvh_build.py) call them for every node.

Layout (Ericson 6.6, preorder with child offsets). A tree over ``m`` triangles has ``n`` nodes:

``node_index (n, 3) int64``  rows ``[first, count, right]``: the node covers the triangles
    ``first .. first + count - 1`` of the tree order; its left child is the next node (``i + 1``,
    preorder) and its right child is node ``right``; ``right == -1`` marks a leaf.
``node_bounds (n, NODE_FLOATS) float64``, one row per node holding every bounding volume the
    traversals may use (so one tree serves each ``bv`` choice):
    ``[0:3]`` AABB min, ``[3:6]`` AABB max,
    ``[6:9]`` OBB center, ``[9:18]`` OBB axes (three unit ROWS, right-handed), ``[18:21]`` OBB
    half extents,
    ``[21:24]`` RSS rectangle corner (origin), ``[24:26]`` RSS rectangle side lengths along OBB
    axes 0 and 1, ``[26]`` RSS radius (the rectangle lies in the plane through the origin spanned
    by OBB axes 0 and 1; every covered point is within the radius of it),
    ``[27:30]`` sphere center, ``[30]`` sphere radius.
``tri_vertices (m, 3, 3) float64``  the triangles' corners in tree order (leaf ranges are
    contiguous: no indirection in the traversal), ``tri_ids (m,) int64`` their original indices.

The OBB frame of a node comes from the continuous (area-weighted) covariance of its triangles,
Ericson 4.4.3 (Gottschalk's formula; the S1 formula at L2276-2335 is wrong, see SEED-NOTES), with
the vertex covariance as fallback when the node's triangles have no area.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


NODE_FLOATS = 31
AABB_MIN = 0
AABB_MAX = 3
OBB_CENTER = 6
OBB_AXES = 9
OBB_HALF = 18
RSS_ORIGIN = 21
RSS_LENGTHS = 24
RSS_RADIUS = 26
SPHERE_CENTER = 27
SPHERE_RADIUS = 30
_SQRT_HALF = np.sqrt(0.5)


# ---------------------------------------------------------------------------------------------
# per-triangle data
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def moved_point_gap2(nb_a, ia, nb_b, ib, rot, trans, column):
    """Squared distance of A's node point ``nb_a[ia, column:column + 3]`` and B's node point
    ``nb_b[ib, column:column + 3]`` moved into A's frame (``x_A = rot @ x_B + trans``)."""
    d2 = 0.0
    for i in range(3):
        c = (rot[i, 0] * nb_b[ib, column] + rot[i, 1] * nb_b[ib, column + 1]
             + rot[i, 2] * nb_b[ib, column + 2] + trans[i])
        d = c - nb_a[ia, column + i]
        d2 += d * d
    return d2


@njit(cache=True, nogil=True)
def range_stack(m):
    """A top-down build stack (rows: first, count, parent or -1, level) holding the root range
    [0, m) at level 1."""
    stack = np.empty((2 * m + 64, 4), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = m
    stack[0, 2] = -1
    stack[0, 3] = 1
    return stack


@njit(cache=True, nogil=True, inline="always")
def pop_range(stack, top):
    """Pop a row (first, count, parent or -1, level) of a top-down build stack: (top, first,
    count, parent, level)."""
    top -= 1
    return top, stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]


@njit(cache=True, nogil=True, inline="always")
def push_halves(stack, top, first, left, count, node, level):
    """Push the halves [first + left, first + count) then [first, first + left) of node's range on
    a top-down build stack: the right half, popped after the whole left subtree, carries the
    parent to link; returns the new top."""
    stack[top, 0] = first + left
    stack[top, 1] = count - left
    stack[top, 2] = node
    stack[top, 3] = level + 1
    stack[top + 1, 0] = first
    stack[top + 1, 1] = left
    stack[top + 1, 2] = -1
    stack[top + 1, 3] = level + 1
    return top + 2


@njit(cache=True, nogil=True)
def points_box(points, count, box):
    """box (6,) = (min, max) over the first ``count`` rows of ``points``."""
    for k in range(3):
        box[k] = np.inf
        box[3 + k] = -np.inf
    for i in range(count):
        for k in range(3):
            box[k] = min(box[k], points[i, k])
            box[3 + k] = max(box[3 + k], points[i, k])


@njit(cache=True, nogil=True)
def triangle_moments(vertices, triangles, origin):
    """Per-triangle terms of the continuous covariance, coordinates taken relative to ``origin``
    (the mesh's mean vertex) so the node sums do not cancel catastrophically far from 0.

    Returns ``centroids (m, 3)`` (absolute), ``moments (m, 10)``: area, area * centroid (3), and
    the six upper entries of area / 12 * (9 c c^T + p p^T + q q^T + r r^T) (Ericson 4.4.3)."""
    m = triangles.shape[0]
    centroids = np.empty((m, 3))
    moments = np.empty((m, 10))
    # the same arithmetic, in the same order, as with (3,) arrays per triangle, on scalar
    # temporaries: six small allocations a triangle were most of a big mesh's build preparation
    p = np.empty(3)
    q = np.empty(3)
    r = np.empty(3)
    c = np.empty(3)
    for k in range(m):
        for d in range(3):
            p[d] = vertices[triangles[k, 0], d] - origin[d]
            q[d] = vertices[triangles[k, 1], d] - origin[d]
            r[d] = vertices[triangles[k, 2], d] - origin[d]
        e10, e11, e12 = q[0] - p[0], q[1] - p[1], q[2] - p[2]
        e20, e21, e22 = r[0] - p[0], r[1] - p[1], r[2] - p[2]
        nx = e11 * e22 - e12 * e21
        ny = e12 * e20 - e10 * e22
        nz = e10 * e21 - e11 * e20
        area = 0.5 * np.sqrt(nx * nx + ny * ny + nz * nz)
        for d in range(3):
            c[d] = (p[d] + q[d] + r[d]) / 3.0
            centroids[k, d] = c[d] + origin[d]
        moments[k, 0] = area
        moments[k, 1] = area * c[0]
        moments[k, 2] = area * c[1]
        moments[k, 3] = area * c[2]
        w = area / 12.0
        idx = 4
        for i in range(3):
            for j in range(i, 3):
                moments[k, idx] = w * (9.0 * c[i] * c[j] + p[i] * p[j] + q[i] * q[j] + r[i] * r[j])
                idx += 1
    return centroids, moments


# ---------------------------------------------------------------------------------------------
# 3x3 symmetric eigenvectors (closed form)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _cross(ax, ay, az, bx, by, bz):
    """(ax, ay, az) x (bx, by, bz)."""
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, nogil=True)
def _symmetric_times(m00, m01, m02, m11, m12, m22, x, y, z):
    """The symmetric matrix (upper entries m00 .. m22) times (x, y, z)."""
    return m00 * x + m01 * y + m02 * z, m01 * x + m11 * y + m12 * z, m02 * x + m12 * y + m22 * z


@njit(cache=True, nogil=True)
def _symmetric_det(m00, m01, m02, m11, m12, m22):
    """Determinant of the symmetric matrix with upper entries m00 .. m22 (first-row expansion)."""
    return m00 * (m11 * m22 - m12 * m12) - m01 * (m01 * m22 - m12 * m02) + m02 * (m01 * m12 - m11 * m02)


@njit(cache=True, nogil=True)
def _unit_perpendicular(x, y, z):
    """A unit vector perpendicular to the unit (x, y, z)."""
    if abs(x) > abs(y):
        inv = 1.0 / np.sqrt(x * x + z * z)
        return -z * inv, 0.0, x * inv
    inv = 1.0 / np.sqrt(y * y + z * z)
    return 0.0, z * inv, -y * inv


@njit(cache=True, nogil=True)
def _eigenvector(m00, m01, m02, m11, m12, m22, lam):
    """A unit eigenvector of the symmetric matrix for the (simple) eigenvalue ``lam``: the
    longest cross product of two rows of M - lam I (they span the orthogonal complement of the
    eigenvector). Returns (x, y, z, squared length before normalising)."""
    a00 = m00 - lam
    a11 = m11 - lam
    a22 = m22 - lam
    # rows r0 = (a00, m01, m02), r1 = (m01, a11, m12), r2 = (m02, m12, a22)
    x0, y0, z0 = _cross(a00, m01, m02, m01, a11, m12)  # r0 x r1
    x1, y1, z1 = _cross(a00, m01, m02, m02, m12, a22)  # r0 x r2
    x2, y2, z2 = _cross(m01, a11, m12, m02, m12, a22)  # r1 x r2
    d0 = x0 * x0 + y0 * y0 + z0 * z0
    d1 = x1 * x1 + y1 * y1 + z1 * z1
    d2 = x2 * x2 + y2 * y2 + z2 * z2
    if d0 >= d1 and d0 >= d2:
        x, y, z, d = x0, y0, z0, d0
    elif d1 >= d2:
        x, y, z, d = x1, y1, z1, d1
    else:
        x, y, z, d = x2, y2, z2, d2
    if not d > 0.0:
        return 1.0, 0.0, 0.0, 0.0
    inv = 1.0 / np.sqrt(d)
    return x * inv, y * inv, z * inv, d


@njit(cache=True, nogil=True)
def fast_eigenframe_into(m, axes):
    """Eigenvectors of the symmetric 3x3 ``m`` as the ROWS of the right-handed rotation ``axes``,
    by decreasing eigenvalue, in closed form (for the per-node frames of the tree builds: ~5x
    faster than the cyclic Jacobi of bounding.jacobi_eigen, which stays the reference).

    Eigenvalues from the characteristic cubic in trigonometric form (Smith 1961); the eigenvector
    of the eigenvalue farther from the middle one (a simple eigenvalue whenever the three are not
    all equal) from the longest cross product of two rows of M - lam I; the other two from the
    exact 2x2 problem in the plane perpendicular to it (closed form), so
    nearly repeated eigenvalues give an orthonormal frame of the right subspaces rather than
    noise. A multiple of the identity (or a zero matrix) gives the identity frame. Never NaN for
    finite input; the frame is orthonormal up to rounding."""
    scale = max(max(abs(m[0, 0]), abs(m[1, 1])), max(abs(m[2, 2]), max(abs(m[0, 1]), max(abs(m[0, 2]),
                                                                                        abs(m[1, 2])))))
    if not scale > 0.0:
        for i in range(3):
            for j in range(3):
                axes[i, j] = 1.0 if i == j else 0.0
        return
    inv = 1.0 / scale
    m00 = m[0, 0] * inv
    m01 = m[0, 1] * inv
    m02 = m[0, 2] * inv
    m11 = m[1, 1] * inv
    m12 = m[1, 2] * inv
    m22 = m[2, 2] * inv
    q = (m00 + m11 + m22) / 3.0
    b00 = m00 - q
    b11 = m11 - q
    b22 = m22 - q
    p1 = m01 * m01 + m02 * m02 + m12 * m12
    p2 = b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * p1
    if not p2 > 1e-28:  # a multiple of the identity: every frame is an eigenframe
        for i in range(3):
            for j in range(3):
                axes[i, j] = 1.0 if i == j else 0.0
        return
    p = np.sqrt(p2 / 6.0)
    ip = 1.0 / p
    r = 0.5 * _symmetric_det(b00 * ip, m01 * ip, m02 * ip, b11 * ip, m12 * ip, b22 * ip)  # det((M - q I) / p) / 2
    r = min(max(r, -1.0), 1.0)
    phi = np.arccos(r) / 3.0
    lam1 = q + 2.0 * p * np.cos(phi)  # largest
    lam3 = q + 2.0 * p * np.cos(phi + 2.0 * np.pi / 3.0)  # smallest
    lam2 = 3.0 * q - lam1 - lam3
    first_is_largest = lam1 - lam2 >= lam2 - lam3
    lam = lam1 if first_is_largest else lam3
    vx, vy, vz, _ = _eigenvector(m00, m01, m02, m11, m12, m22, lam)
    # the plane perpendicular to v: orthonormal u, w; the 2x2 matrix there
    ux, uy, uz = _unit_perpendicular(vx, vy, vz)
    wx, wy, wz = _cross(vx, vy, vz, ux, uy, uz)
    mux, muy, muz = _symmetric_times(m00, m01, m02, m11, m12, m22, ux, uy, uz)
    mwx, mwy, mwz = _symmetric_times(m00, m01, m02, m11, m12, m22, wx, wy, wz)
    s_uu = ux * mux + uy * muy + uz * muz
    s_ww = wx * mwx + wy * mwy + wz * mwz
    s_uw = ux * mwx + uy * mwy + uz * mwz
    # the larger eigenvalue mu of [[s_uu, s_uw], [s_uw, s_ww]] and its eigenvector (c, sn): the
    # longer of (s_uw, mu - s_uu) and (mu - s_ww, s_uw); a multiple of the identity keeps (u, w)
    half = 0.5 * (s_uu - s_ww)
    mu = 0.5 * (s_uu + s_ww) + np.sqrt(half * half + s_uw * s_uw)
    c1 = s_uw
    s1 = mu - s_uu
    c2 = mu - s_ww
    s2 = s_uw
    n1 = c1 * c1 + s1 * s1
    n2 = c2 * c2 + s2 * s2
    if n1 > n2:
        c = c1 / np.sqrt(n1)
        sn = s1 / np.sqrt(n1)
    elif n2 > 0.0:
        c = c2 / np.sqrt(n2)
        sn = s2 / np.sqrt(n2)
    else:
        c = 1.0
        sn = 0.0
    ex = c * ux + sn * wx  # the larger eigenvalue's vector in the plane
    ey = c * uy + sn * wy
    ez = c * uz + sn * wz
    fx = -sn * ux + c * wx
    fy = -sn * uy + c * wy
    fz = -sn * uz + c * wz
    if first_is_largest:  # v, then e (larger of the rest), then f
        _set_frame(axes, vx, vy, vz, ex, ey, ez)
    else:  # e, f, then v (the smallest)
        _set_frame(axes, ex, ey, ez, fx, fy, fz)


@njit(cache=True, nogil=True)
def _set_frame(axes, x0, y0, z0, x1, y1, z1):
    """The right-handed frame with rows (x0, y0, z0), (x1, y1, z1) and their cross product."""
    axes[0, 0] = x0
    axes[0, 1] = y0
    axes[0, 2] = z0
    axes[1, 0] = x1
    axes[1, 1] = y1
    axes[1, 2] = z1
    axes[2, 0], axes[2, 1], axes[2, 2] = _cross(x0, y0, z0, x1, y1, z1)


@njit(cache=True, nogil=True)
def _triangle_frame(tri_vertices, k, axes):
    """A single triangle's own frame: its longest edge, the in-plane perpendicular and the
    normal. Tighter than the covariance frame for one triangle (its box is flat) and cheaper.
    Returns False for a (near) zero-area triangle, which then takes the covariance route."""
    best = -1.0
    bi = 0
    for i in range(3):
        j = (i + 1) % 3
        d2 = 0.0
        for c in range(3):
            d = tri_vertices[k, j, c] - tri_vertices[k, i, c]
            d2 += d * d
        if d2 > best:
            best = d2
            bi = i
    if not best > 0.0:
        return False
    bj = (bi + 1) % 3
    bk = (bi + 2) % 3
    ex = tri_vertices[k, bj, 0] - tri_vertices[k, bi, 0]
    ey = tri_vertices[k, bj, 1] - tri_vertices[k, bi, 1]
    ez = tri_vertices[k, bj, 2] - tri_vertices[k, bi, 2]
    fx = tri_vertices[k, bk, 0] - tri_vertices[k, bi, 0]
    fy = tri_vertices[k, bk, 1] - tri_vertices[k, bi, 1]
    fz = tri_vertices[k, bk, 2] - tri_vertices[k, bi, 2]
    nx, ny, nz = _cross(ex, ey, ez, fx, fy, fz)
    nn = nx * nx + ny * ny + nz * nz
    if not nn > 1e-24 * best * best:
        return False
    el = np.sqrt(best)
    nl = np.sqrt(nn)
    axes[0, 0] = ex / el
    axes[0, 1] = ey / el
    axes[0, 2] = ez / el
    axes[2, 0] = nx / nl
    axes[2, 1] = ny / nl
    axes[2, 2] = nz / nl
    axes[1, 0] = axes[2, 1] * axes[0, 2] - axes[2, 2] * axes[0, 1]
    axes[1, 1] = axes[2, 2] * axes[0, 0] - axes[2, 0] * axes[0, 2]
    axes[1, 2] = axes[2, 0] * axes[0, 1] - axes[2, 1] * axes[0, 0]
    return True


@njit(cache=True, nogil=True)
def node_frame(tri_vertices, moments, first, count, origin, cov, scratch, axes):
    """OBB axes (written to ``axes``) of the triangles first..first+count-1 (tree order): the
    triangle's own frame for a single proper triangle, else the continuous covariance, or the
    vertex covariance when their total area is 0 (all degenerate), or the identity when that is
    also degenerate (a single point). Never NaN. ``cov``, ``scratch``: (3, 3) work arrays."""
    if count == 1 and _triangle_frame(tri_vertices, first, axes):
        return
    area = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    xx = 0.0
    xy = 0.0
    xz = 0.0
    yy = 0.0
    yz = 0.0
    zz = 0.0
    for k in range(first, first + count):
        area += moments[k, 0]
        s1 += moments[k, 1]
        s2 += moments[k, 2]
        s3 += moments[k, 3]
        xx += moments[k, 4]
        xy += moments[k, 5]
        xz += moments[k, 6]
        yy += moments[k, 7]
        yz += moments[k, 8]
        zz += moments[k, 9]
    if area > 0.0:
        mx = s1 / area
        my = s2 / area
        mz = s3 / area
        cov[0, 0] = xx / area - mx * mx
        cov[0, 1] = xy / area - mx * my
        cov[0, 2] = xz / area - mx * mz
        cov[1, 1] = yy / area - my * my
        cov[1, 2] = yz / area - my * mz
        cov[2, 2] = zz / area - mz * mz
    else:
        mx = 0.0
        my = 0.0
        mz = 0.0
        for k in range(first, first + count):
            for c in range(3):
                mx += tri_vertices[k, c, 0] - origin[0]
                my += tri_vertices[k, c, 1] - origin[1]
                mz += tri_vertices[k, c, 2] - origin[2]
        n = 3.0 * count
        mx /= n
        my /= n
        mz /= n
        for i in range(3):
            for j in range(3):
                cov[i, j] = 0.0
        for k in range(first, first + count):
            for c in range(3):
                dx = tri_vertices[k, c, 0] - origin[0] - mx
                dy = tri_vertices[k, c, 1] - origin[1] - my
                dz = tri_vertices[k, c, 2] - origin[2] - mz
                cov[0, 0] += dx * dx
                cov[0, 1] += dx * dy
                cov[0, 2] += dx * dz
                cov[1, 1] += dy * dy
                cov[1, 2] += dy * dz
                cov[2, 2] += dz * dz
    cov[1, 0] = cov[0, 1]
    cov[2, 0] = cov[0, 2]
    cov[2, 1] = cov[1, 2]
    finite = True
    for i in range(3):
        for j in range(3):
            if not np.isfinite(cov[i, j]):
                finite = False
    if not finite:
        for i in range(3):
            for j in range(3):
                axes[i, j] = 1.0 if i == j else 0.0
        return
    fast_eigenframe_into(cov, axes)


@njit(cache=True, nogil=True)
def fit_node(tri_vertices, first, count, axes, out):
    """Fill one ``node_bounds`` row for triangles first..first+count-1 given the OBB ``axes``.
    Scalar code, no allocation (it runs once per node)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    p0l = p1l = p2l = np.inf
    p0h = p1h = p2h = -np.inf
    a00 = axes[0, 0]
    a01 = axes[0, 1]
    a02 = axes[0, 2]
    a10 = axes[1, 0]
    a11 = axes[1, 1]
    a12 = axes[1, 2]
    a20 = axes[2, 0]
    a21 = axes[2, 1]
    a22 = axes[2, 2]
    for k in range(first, first + count):
        for c in range(3):
            x = tri_vertices[k, c, 0]
            y = tri_vertices[k, c, 1]
            z = tri_vertices[k, c, 2]
            lo0 = min(lo0, x)
            lo1 = min(lo1, y)
            lo2 = min(lo2, z)
            hi0 = max(hi0, x)
            hi1 = max(hi1, y)
            hi2 = max(hi2, z)
            p = a00 * x + a01 * y + a02 * z
            p0l = min(p0l, p)
            p0h = max(p0h, p)
            p = a10 * x + a11 * y + a12 * z
            p1l = min(p1l, p)
            p1h = max(p1h, p)
            p = a20 * x + a21 * y + a22 * z
            p2l = min(p2l, p)
            p2h = max(p2h, p)
    out[AABB_MIN] = lo0
    out[AABB_MIN + 1] = lo1
    out[AABB_MIN + 2] = lo2
    out[AABB_MAX] = hi0
    out[AABB_MAX + 1] = hi1
    out[AABB_MAX + 2] = hi2
    for i in range(3):
        for j in range(3):
            out[OBB_AXES + 3 * i + j] = axes[i, j]
    m0 = 0.5 * (p0l + p0h)
    m1 = 0.5 * (p1l + p1h)
    m2 = 0.5 * (p2l + p2h)
    cx = m0 * a00 + m1 * a10 + m2 * a20
    cy = m0 * a01 + m1 * a11 + m2 * a21
    cz = m0 * a02 + m1 * a12 + m2 * a22
    # rounding of the projections and of the center: pad by a few ulps of the coordinates' size
    size = max(max(abs(lo0), abs(lo1)), max(abs(lo2), max(max(abs(hi0), abs(hi1)), abs(hi2))))
    pad = 16.0 * np.finfo(np.float64).eps * size
    out[OBB_CENTER] = cx
    out[OBB_CENTER + 1] = cy
    out[OBB_CENTER + 2] = cz
    out[OBB_HALF] = 0.5 * (p0h - p0l) + pad
    out[OBB_HALF + 1] = 0.5 * (p1h - p1l) + pad
    out[OBB_HALF + 2] = 0.5 * (p2h - p2l) + pad
    # RSS: rectangle in the plane z = m2 of the frame, radius = half the z spread. A point with
    # offset dz from that plane may lie up to s = sqrt(r^2 - dz^2) from the rectangle; giving
    # s / sqrt(2) to each in-plane direction keeps it inside (dx^2 + dy^2 <= s^2), so each side
    # shrinks to the tightest interval that still honours every point (any value between the
    # two bounds works when they cross). The same pass finds the sphere radius about the center.
    radius = 0.5 * (p2h - p2l)
    lx = np.inf
    hx = -np.inf
    ly = np.inf
    hy = -np.inf
    r2 = 0.0
    for k in range(first, first + count):
        for c in range(3):
            x = tri_vertices[k, c, 0]
            y = tri_vertices[k, c, 1]
            z = tri_vertices[k, c, 2]
            px = a00 * x + a01 * y + a02 * z
            py = a10 * x + a11 * y + a12 * z
            dz = a20 * x + a21 * y + a22 * z - m2
            s2 = radius * radius - dz * dz
            s = np.sqrt(s2) * _SQRT_HALF if s2 > 0.0 else 0.0
            lx = min(lx, px + s)
            hx = max(hx, px - s)
            ly = min(ly, py + s)
            hy = max(hy, py - s)
            d2 = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2
            r2 = max(r2, d2)
    if lx > hx:
        lx = hx = 0.5 * (lx + hx)
    if ly > hy:
        ly = hy = 0.5 * (ly + hy)
    out[RSS_ORIGIN] = lx * a00 + ly * a10 + m2 * a20
    out[RSS_ORIGIN + 1] = lx * a01 + ly * a11 + m2 * a21
    out[RSS_ORIGIN + 2] = lx * a02 + ly * a12 + m2 * a22
    out[RSS_LENGTHS] = hx - lx
    out[RSS_LENGTHS + 1] = hy - ly
    out[RSS_RADIUS] = radius + pad
    out[SPHERE_CENTER] = cx
    out[SPHERE_CENTER + 1] = cy
    out[SPHERE_CENTER + 2] = cz
    out[SPHERE_RADIUS] = np.sqrt(r2) + pad


@njit(cache=True, nogil=True)
def node_kdops(node_index, tri_vertices, directions):
    """k-DOP of every node (Ericson 4.6): ``(n, 2h)`` = the minimum of each node's vertex
    projections on the h ``directions`` (any lengths), then the maxima. Leaves from their
    triangles, inner nodes merged from their children (exact for k-DOPs, Ericson 6.5) in reverse
    preorder (children follow their parent)."""
    n = node_index.shape[0]
    h = directions.shape[0]
    dops = np.empty((n, 2 * h))
    for node in range(n - 1, -1, -1):
        right = node_index[node, 2]
        if right >= 0:
            left = node + 1
            for j in range(h):
                dops[node, j] = min(dops[left, j], dops[right, j])
                dops[node, h + j] = max(dops[left, h + j], dops[right, h + j])
            continue
        for j in range(h):
            lo = np.inf
            hi = -np.inf
            for k in range(node_index[node, 0], node_index[node, 0] + node_index[node, 1]):
                for c in range(3):
                    p = (directions[j, 0] * tri_vertices[k, c, 0] + directions[j, 1] * tri_vertices[k, c, 1]
                         + directions[j, 2] * tri_vertices[k, c, 2])
                    lo = min(lo, p)
                    hi = max(hi, p)
            dops[node, j] = lo
            dops[node, h + j] = hi
    return dops
