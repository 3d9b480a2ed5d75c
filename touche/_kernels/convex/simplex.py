"""The simplex sub-algorithm of GJK: the signed-volume method (Montanari, Petrinic & Barbieri
2017, a robust form of Johnson's algorithm, Ericson 9.5.2). Each sub-simplex is projected on the
axis / plane of largest extent and barycentric signs decide the Voronoi region, so degenerate
(flat, collinear, repeated) simplices fall through to their faces instead of dividing by ~0.
``reduce_simplex(s, count)`` keeps the smallest sub-simplex holding the point of the simplex
nearest the origin and returns it (count, v).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

# a EPA face / GJK simplex is degenerate below this relative squared size (rounding of a cross
# product of vectors of size s is ~1e-16 s^2)
DEGENERATE_SQ = 1e-28


# ----------------------------------------------------------------------------------------------
# signed-volume simplex sub-algorithm (Ericson 9.5.2; Montanari et al. 2017)
@njit(cache=True, nogil=True, inline="always")
def _same_sign(a, b):
    return (a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)


@njit(cache=True, nogil=True)
def _s1d(s, i, j):
    """Point of segment s[i] s[j] closest to the origin: (li, lj, vx, vy, vz, |v|^2).

    Interior: v = a - e (a.e) / (e.e) evaluated as e x (a x e) / (e.e), perpendicular to e up to
    eps |v| (the barycentric sum a + u e is off by eps |a| along e, and GJK's next support
    direction is v: a tilt e along a long simplex edge costs e * (edge length) in the lower
    bound, which stalled GJK near contacts with long shapes)."""
    ax, ay, az = s[i, 0], s[i, 1], s[i, 2]
    ex = s[j, 0] - ax
    ey = s[j, 1] - ay
    ez = s[j, 2] - az
    ee = ex * ex + ey * ey + ez * ez
    u = -(ax * ex + ay * ey + az * ez)
    if ee == 0.0 or u <= 0.0:
        return 1.0, 0.0, ax, ay, az, ax * ax + ay * ay + az * az
    if u >= ee:
        bx, by, bz = s[j, 0], s[j, 1], s[j, 2]
        return 0.0, 1.0, bx, by, bz, bx * bx + by * by + bz * bz
    u /= ee
    cx = ay * ez - az * ey
    cy = az * ex - ax * ez
    cz = ax * ey - ay * ex
    vx = (ey * cz - ez * cy) / ee
    vy = (ez * cx - ex * cz) / ee
    vz = (ex * cy - ey * cx) / ee
    return 1.0 - u, u, vx, vy, vz, vx * vx + vy * vy + vz * vz


@njit(cache=True, nogil=True)
def shortest_cross(ijx, ijy, ijz, lij, jkx, jky, jkz, ljk, kix, kiy, kiz, lki):
    """(s_j - s_i) x (s_k - s_i) of a triangle given its edge vectors ij, jk, ki and their squared
    lengths, evaluated from its two SHORTEST edges (the three pairings are equal in exact
    arithmetic). The rounding of a cross product is ~eps |e1| |e2|: on the long thin triangles
    GJK builds near a curved contact (two support points a hair apart and one far away, e.g. at
    the other end of a long segment) the two long edges would leave the normal with a relative
    error of eps * long / short, enough to stall GJK at ~1e-7 (seen: an ellipsoid against a
    tetrahedron, a cone against a 100-long segment)."""
    if lij >= ljk and lij >= lki:  # longest i-j: (s_i - s_k) x (s_j - s_k)
        ux, uy, uz = kix, kiy, kiz
        wx, wy, wz = -jkx, -jky, -jkz
    elif ljk >= lki:  # longest j-k: (s_j - s_i) x (s_k - s_i)
        ux, uy, uz = ijx, ijy, ijz
        wx, wy, wz = -kix, -kiy, -kiz
    else:  # longest k-i: (s_k - s_j) x (s_i - s_j)
        ux, uy, uz = jkx, jky, jkz
        wx, wy, wz = -ijx, -ijy, -ijz
    return uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx


@njit(cache=True, nogil=True)
def plane_normal(s, i, j, k):
    """(s_j - s_i) x (s_k - s_i) from the triangle's two shortest edges (shortest_cross), and
    the triangle's longest squared edge length: (nx, ny, nz, longest)."""
    ijx = s[j, 0] - s[i, 0]
    ijy = s[j, 1] - s[i, 1]
    ijz = s[j, 2] - s[i, 2]
    jkx = s[k, 0] - s[j, 0]
    jky = s[k, 1] - s[j, 1]
    jkz = s[k, 2] - s[j, 2]
    kix = s[i, 0] - s[k, 0]
    kiy = s[i, 1] - s[k, 1]
    kiz = s[i, 2] - s[k, 2]
    lij = ijx * ijx + ijy * ijy + ijz * ijz
    ljk = jkx * jkx + jky * jky + jkz * jkz
    lki = kix * kix + kiy * kiy + kiz * kiz
    nx, ny, nz = shortest_cross(ijx, ijy, ijz, lij, jkx, jky, jkz, ljk, kix, kiy, kiz, lki)
    return nx, ny, nz, max(lij, ljk, lki)


@njit(cache=True, nogil=True)
def _s2d_normal(s, i, j, k, nx, ny, nz):
    """Point of triangle s[i] s[j] s[k] closest to the origin, given the triangle's normal
    n = (s_j - s_i) x (s_k - s_i) (from plane_normal): (li, lj, lk, vx, vy, vz, |v|^2).
    Interior: v = the origin projected on the plane, exactly along the (accurate) normal."""
    nn = nx * nx + ny * ny + nz * nz
    test_i = True
    test_j = True
    test_k = True
    if nn > 0.0:
        # origin projected on the plane, then 2-D signed areas on the two axes where the
        # triangle is widest (drop the largest normal component), with the vertices taken
        # relative to the projected origin: each area is then the cross product of the two
        # vectors from the projection, not a difference of products of large coordinates
        f = (s[i, 0] * nx + s[i, 1] * ny + s[i, 2] * nz) / nn
        px = f * nx
        py = f * ny
        pz = f * nz
        ax_ = abs(nx)
        ay_ = abs(ny)
        az_ = abs(nz)
        if ax_ >= ay_ and ax_ >= az_:
            c0, c1 = 1, 2
            qx, qy = py, pz
        elif ay_ >= az_:
            c0, c1 = 0, 2
            qx, qy = px, pz
        else:
            c0, c1 = 0, 1
            qx, qy = px, py
        ix, iy = s[i, c0] - qx, s[i, c1] - qy
        jx, jy = s[j, c0] - qx, s[j, c1] - qy
        kx, ky = s[k, c0] - qx, s[k, c1] - qy
        ci = jx * ky - jy * kx
        cj = kx * iy - ky * ix
        ck = ix * jy - iy * jx
        total = ci + cj + ck
        test_i = not _same_sign(total, ci)
        test_j = not _same_sign(total, cj)
        test_k = not _same_sign(total, ck)
        if not (test_i or test_j or test_k):
            return ci / total, cj / total, ck / total, px, py, pz, px * px + py * py + pz * pz
    # outside (or degenerate): the best edge opposite a vertex whose sign disagrees
    best = np.inf
    bi = 0.0
    bj = 0.0
    bk = 0.0
    vx = 0.0
    vy = 0.0
    vz = 0.0
    if test_i:  # edge j-k
        lj, lk, ux, uy, uz, uu = _s1d(s, j, k)
        if uu < best:
            best = uu
            bi, bj, bk, vx, vy, vz = 0.0, lj, lk, ux, uy, uz
    if test_j:  # edge i-k
        li, lk, ux, uy, uz, uu = _s1d(s, i, k)
        if uu < best:
            best = uu
            bi, bj, bk, vx, vy, vz = li, 0.0, lk, ux, uy, uz
    if test_k:  # edge i-j
        li, lj, ux, uy, uz, uu = _s1d(s, i, j)
        if uu < best:
            best = uu
            bi, bj, bk, vx, vy, vz = li, lj, 0.0, ux, uy, uz
    return bi, bj, bk, vx, vy, vz, best


@njit(cache=True, nogil=True, inline="always")
def s2d(s, i, j, k):
    """Point of triangle s[i] s[j] s[k] closest to the origin: (li, lj, lk, vx, vy, vz, |v|^2)."""
    nx, ny, nz, _ = plane_normal(s, i, j, k)
    return _s2d_normal(s, i, j, k, nx, ny, nz)


@njit(cache=True, nogil=True, inline="always")
def det3(ax, ay, az, bx, by, bz, cx, cy, cz):
    return ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)


@njit(cache=True, nogil=True)
def _s3d(s):
    """Point of tetrahedron s[0..3] closest to the origin: (l0, l1, l2, l3, vx, vy, vz)."""
    # cofactors: signed volumes with the origin in place of each vertex (they sum to the
    # volume), each written as (face normal) . (a face vertex) with the normal from the face's
    # shortest edges. The textbook form det[p, q, r] of three support points rounds at
    # ~eps |p| |q| |r|, which swamps the volume of the flat tetrahedra of a GJK step near a
    # curved contact (the new point lies a hair off the old triangle): GJK then dropped the new
    # point and stalled. Here the rounding is ~eps |n| |p|, relative eps |p| / distance.
    # The six edges (e_ab = s_b - s_a) and their squared lengths, shared by the faces:
    e01x = s[1, 0] - s[0, 0]
    e01y = s[1, 1] - s[0, 1]
    e01z = s[1, 2] - s[0, 2]
    e02x = s[2, 0] - s[0, 0]
    e02y = s[2, 1] - s[0, 1]
    e02z = s[2, 2] - s[0, 2]
    e03x = s[3, 0] - s[0, 0]
    e03y = s[3, 1] - s[0, 1]
    e03z = s[3, 2] - s[0, 2]
    e12x = s[2, 0] - s[1, 0]
    e12y = s[2, 1] - s[1, 1]
    e12z = s[2, 2] - s[1, 2]
    e13x = s[3, 0] - s[1, 0]
    e13y = s[3, 1] - s[1, 1]
    e13z = s[3, 2] - s[1, 2]
    e23x = s[3, 0] - s[2, 0]
    e23y = s[3, 1] - s[2, 1]
    e23z = s[3, 2] - s[2, 2]
    l01 = e01x * e01x + e01y * e01y + e01z * e01z
    l02 = e02x * e02x + e02y * e02y + e02z * e02z
    l03 = e03x * e03x + e03y * e03y + e03z * e03z
    l12 = e12x * e12x + e12y * e12y + e12z * e12z
    l13 = e13x * e13x + e13y * e13y + e13z * e13z
    l23 = e23x * e23x + e23y * e23y + e23z * e23z
    # face (1, 2, 3): edges 12, 23, 31
    n0x, n0y, n0z = shortest_cross(e12x, e12y, e12z, l12, e23x, e23y, e23z, l23, -e13x, -e13y, -e13z, l13)
    c0 = s[1, 0] * n0x + s[1, 1] * n0y + s[1, 2] * n0z  # vol(o, 1, 2, 3)
    # face (0, 2, 3): edges 02, 23, 30
    n1x, n1y, n1z = shortest_cross(e02x, e02y, e02z, l02, e23x, e23y, e23z, l23, -e03x, -e03y, -e03z, l03)
    c1 = -(s[0, 0] * n1x + s[0, 1] * n1y + s[0, 2] * n1z)  # vol(0, o, 2, 3)
    # face (0, 1, 3): edges 01, 13, 30
    n2x, n2y, n2z = shortest_cross(e01x, e01y, e01z, l01, e13x, e13y, e13z, l13, -e03x, -e03y, -e03z, l03)
    c2 = s[0, 0] * n2x + s[0, 1] * n2y + s[0, 2] * n2z  # vol(0, 1, o, 3)
    # face (0, 1, 2): edges 01, 12, 20
    n3x, n3y, n3z = shortest_cross(e01x, e01y, e01z, l01, e12x, e12y, e12z, l12, -e02x, -e02y, -e02z, l02)
    c3 = -(s[0, 0] * n3x + s[0, 1] * n3y + s[0, 2] * n3z)  # vol(0, 1, 2, o)
    # the volume itself: height of vertex 3 over face 0 1 2 (not the cofactor sum, which
    # cancels large terms)
    total = n3x * e03x + n3y * e03y + n3z * e03z
    t0 = not _same_sign(total, c0)
    t1 = not _same_sign(total, c1)
    t2 = not _same_sign(total, c2)
    t3 = not _same_sign(total, c3)
    if not (t0 or t1 or t2 or t3):
        return c0 / total, c1 / total, c2 / total, c3 / total, 0.0, 0.0, 0.0
    best = np.inf
    b0 = 0.0
    b1 = 0.0
    b2 = 0.0
    b3 = 0.0
    vx = 0.0
    vy = 0.0
    vz = 0.0
    if t0:
        l1, l2, l3, ux, uy, uz, uu = _s2d_normal(s, 1, 2, 3, n0x, n0y, n0z)
        if uu < best:
            best = uu
            b0, b1, b2, b3, vx, vy, vz = 0.0, l1, l2, l3, ux, uy, uz
    if t1:
        l0, l2, l3, ux, uy, uz, uu = _s2d_normal(s, 0, 2, 3, n1x, n1y, n1z)
        if uu < best:
            best = uu
            b0, b1, b2, b3, vx, vy, vz = l0, 0.0, l2, l3, ux, uy, uz
    if t2:
        l0, l1, l3, ux, uy, uz, uu = _s2d_normal(s, 0, 1, 3, n2x, n2y, n2z)
        if uu < best:
            best = uu
            b0, b1, b2, b3, vx, vy, vz = l0, l1, 0.0, l3, ux, uy, uz
    if t3:
        l0, l1, l2, ux, uy, uz, uu = _s2d_normal(s, 0, 1, 2, n3x, n3y, n3z)
        if uu < best:
            best = uu
            b0, b1, b2, b3, vx, vy, vz = l0, l1, l2, 0.0, ux, uy, uz
    return b0, b1, b2, b3, vx, vy, vz


@njit(cache=True, nogil=True)
def reduce_simplex(s, count):
    """Closest point v of conv(simplex rows 0..count-1) to the origin: keeps only the rows with a
    positive barycentric (compacted to the front, lambda in column 9); returns
    (new count, vx, vy, vz). v comes from the sub-algorithm's own projection (see _s1d /
    _s2d_normal), not from the barycentric sum."""
    if count == 1:
        s[0, 9] = 1.0
        return 1, s[0, 0], s[0, 1], s[0, 2]
    if count == 2:
        l0, l1, vx, vy, vz, _ = _s1d(s, 0, 1)
        s[0, 9] = l0
        s[1, 9] = l1
    elif count == 3:
        l0, l1, l2, vx, vy, vz, _ = s2d(s, 0, 1, 2)
        s[0, 9] = l0
        s[1, 9] = l1
        s[2, 9] = l2
    else:
        l0, l1, l2, l3, vx, vy, vz = _s3d(s)
        s[0, 9] = l0
        s[1, 9] = l1
        s[2, 9] = l2
        s[3, 9] = l3
    kept = 0
    for r in range(count):
        if s[r, 9] > 0.0:
            if kept != r:
                for c in range(10):
                    s[kept, c] = s[r, c]
            kept += 1
    if kept == 0:  # cannot happen (barycentrics sum to 1); keep the first point
        s[0, 9] = 1.0
        kept = 1
        vx, vy, vz = s[0, 0], s[0, 1], s[0, 2]
    return kept, vx, vy, vz
