"""Containment tests, barycentric coordinates and plane utilities (Ericson 3.4, 3.6, 3.7.1, 5.4).

2D containment predicates are exact (they only use the exact-sign orient2d).  3D ones use
ordinary floating point on the given planes / points (documented per function).
"""

import math

import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base.predicates import orient2d

# barycentric(): the triangle counts as degenerate when |v0 x v1|^2 = d00 d11 - d01^2 is below
# this multiple of d00 d11 (sin^2 of the angle at a); below it the Cramer denominator is noise.
BARY_DEGENERATE = 1e-13
# plane-plane / three-plane intersection: parallel when sin(angle) (resp. |det| of the unit
# normals) is at most this.
PARALLEL_TOL = 1e-12


@njit(cache=True, nogil=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, nogil=True)
def barycentric(p, a, b, c):
    """Barycentric coordinates of p w.r.t. triangle abc (Ericson 3.4, dot-product form).

    Returns (ok, u, v, w) with u + v + w = 1 and, when ok, u a + v b + w c = the orthogonal
    projection of p onto the plane of abc.  Steps: v0 = b-a, v1 = c-a, v2 = p-a; the 2x2 Gram
    system solved with Cramer's rule.

    Degenerate triangle (d00 d11 - d01^2 <= BARY_DEGENERATE * d00 d11, i.e. collinear or nearly):
    ok = False and the (finite) coordinates of p's projection onto the line through the longest
    edge, e.g. (1 - t, t, 0) for edge ab (unclamped t); (1, 0, 0) when a == b == c.
    """
    v0x = b[0] - a[0]; v0y = b[1] - a[1]; v0z = b[2] - a[2]
    v1x = c[0] - a[0]; v1y = c[1] - a[1]; v1z = c[2] - a[2]
    v2x = p[0] - a[0]; v2y = p[1] - a[1]; v2z = p[2] - a[2]
    d00 = v0x * v0x + v0y * v0y + v0z * v0z
    d01 = v0x * v1x + v0y * v1y + v0z * v1z
    d11 = v1x * v1x + v1y * v1y + v1z * v1z
    d20 = v2x * v0x + v2y * v0y + v2z * v0z
    d21 = v2x * v1x + v2y * v1y + v2z * v1z
    denom = d00 * d11 - d01 * d01
    if denom > BARY_DEGENERATE * (d00 * d11) and denom > 0.0:
        v = (d11 * d20 - d01 * d21) / denom
        w = (d00 * d21 - d01 * d20) / denom
        return True, 1.0 - v - w, v, w
    # degenerate: project onto the longest edge
    ex = c[0] - b[0]; ey = c[1] - b[1]; ez = c[2] - b[2]
    d22 = ex * ex + ey * ey + ez * ez
    if d00 >= d11 and d00 >= d22:
        if d00 == 0.0:
            return False, 1.0, 0.0, 0.0
        t = d20 / d00
        return False, 1.0 - t, t, 0.0
    if d11 >= d22:
        t = d21 / d11
        return False, 1.0 - t, 0.0, t
    t = ((p[0] - b[0]) * ex + (p[1] - b[1]) * ey + (p[2] - b[2]) * ez) / d22
    return False, 0.0, 1.0 - t, t


@njit(cache=True, nogil=True)
def point_in_triangle_2d(px, py, ax, ay, bx, by, cx, cy):
    """p in the CLOSED triangle abc (either orientation), exact (Ericson 5.4.2, 2D variant with
    exact orient2d).  Steps: signs of orient(a,b,p), orient(b,c,p), orient(c,a,p) must all be
    >= 0 or all <= 0.  Zero-area triangle: p must lie on the segment (or point) spanned by
    a, b, c (collinearity + bounding box, exact).
    """
    o = orient2d(ax, ay, bx, by, cx, cy)
    if o != 0.0:
        s1 = orient2d(ax, ay, bx, by, px, py)
        s2 = orient2d(bx, by, cx, cy, px, py)
        s3 = orient2d(cx, cy, ax, ay, px, py)
        if o > 0.0:
            return s1 >= 0.0 and s2 >= 0.0 and s3 >= 0.0
        return s1 <= 0.0 and s2 <= 0.0 and s3 <= 0.0
    # degenerate: a, b, c collinear -> hull is a segment or a point
    if px < min(ax, bx, cx) or px > max(ax, bx, cx):
        return False
    if py < min(ay, by, cy) or py > max(ay, by, cy):
        return False
    # pick two distinct points spanning the line
    if ax != bx or ay != by:
        return orient2d(ax, ay, bx, by, px, py) == 0.0
    if ax != cx or ay != cy:
        return orient2d(ax, ay, cx, cy, px, py) == 0.0
    return px == ax and py == ay  # all three coincide (bbox test already forces this)


@njit(cache=True, nogil=True)
def _closest_on_segment_sq(p, a, b):
    dx = b[0] - a[0]; dy = b[1] - a[1]; dz = b[2] - a[2]
    ll = dx * dx + dy * dy + dz * dz
    t = 0.0
    if ll > 0.0:
        t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy + (p[2] - a[2]) * dz) / ll
        t = min(1.0, max(0.0, t))
    qx = a[0] + t * dx - p[0]; qy = a[1] + t * dy - p[1]; qz = a[2] + t * dz - p[2]
    return qx * qx + qy * qy + qz * qz


@njit(cache=True, nogil=True)
def point_in_triangle_3d(p, a, b, c, eps):
    """p within distance eps of the plane of abc AND its orthogonal projection inside the closed
    triangle (Ericson 5.4.2 / S3 step 2 point-in-triangle, with the plane test of 3.6).

    Steps: n = (b-a) x (c-a); |n.(p-a)| <= eps |n|; project p onto the plane; drop the dominant
    axis of n and run the exact 2D test on the projected coordinates (floating projection, so
    boundary decisions are exact only up to the rounding of the projection).
    Zero-area triangle (n == 0 or |n|^2 <= 1e-26 |b-a|^2 |c-a|^2): True iff p is within eps of the
    segment / point spanned by a, b, c.
    """
    ux = b[0] - a[0]; uy = b[1] - a[1]; uz = b[2] - a[2]
    vx = c[0] - a[0]; vy = c[1] - a[1]; vz = c[2] - a[2]
    nx = uy * vz - uz * vy
    ny = uz * vx - ux * vz
    nz = ux * vy - uy * vx
    nn = nx * nx + ny * ny + nz * nz
    uu = ux * ux + uy * uy + uz * uz
    vv = vx * vx + vy * vy + vz * vz
    if not (nn > 1e-26 * uu * vv) or nn == 0.0:
        e2 = eps * eps
        if eps < 0.0:
            return False
        return (_closest_on_segment_sq(p, a, b) <= e2 or _closest_on_segment_sq(p, b, c) <= e2
                or _closest_on_segment_sq(p, c, a) <= e2)
    dist_n = nx * (p[0] - a[0]) + ny * (p[1] - a[1]) + nz * (p[2] - a[2])  # = dist * |n|
    if abs(dist_n) > eps * math.sqrt(nn):
        return False
    t = dist_n / nn
    qx = p[0] - t * nx
    qy = p[1] - t * ny
    qz = p[2] - t * nz
    anx = abs(nx); any_ = abs(ny); anz = abs(nz)
    if anx >= any_ and anx >= anz:
        return point_in_triangle_2d(qy, qz, a[1], a[2], b[1], b[2], c[1], c[2])
    if any_ >= anz:
        return point_in_triangle_2d(qz, qx, a[2], a[0], b[2], b[0], c[2], c[0])
    return point_in_triangle_2d(qx, qy, a[0], a[1], b[0], b[1], c[0], c[1])


@njit(cache=True, nogil=True)
def point_in_convex_polygon_2d(px, py, xs, ys):
    """p in the CLOSED convex polygon with counter-clockwise vertices xs, ys (n >= 3), exact.

    Ericson 5.4.1 O(log n) binary search over the fan at v0, closed variant:
    1. outside if p is strictly right of v0->v1 or strictly left of v0->v[n-1];
    2. binary search for the fan wedge (v0, v[lo], v[lo+1]) containing p;
    3. inside iff p is left of or on v[lo]->v[lo+1].
    Precondition: strictly convex at v0 (interior angle < 180 deg); collinear vertices elsewhere
    are fine.  Fewer than 3 vertices: False.
    """
    n = xs.shape[0]
    if n < 3:
        return False
    x0 = xs[0]
    y0 = ys[0]
    if orient2d(x0, y0, xs[1], ys[1], px, py) < 0.0:
        return False
    if orient2d(x0, y0, xs[n - 1], ys[n - 1], px, py) > 0.0:
        return False
    lo = 1
    hi = n - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if orient2d(x0, y0, xs[mid], ys[mid], px, py) >= 0.0:
            lo = mid
        else:
            hi = mid
    return orient2d(xs[lo], ys[lo], xs[hi], ys[hi], px, py) >= 0.0


@njit(cache=True, nogil=True)
def point_in_polygon_2d(px, py, xs, ys):
    """p in the CLOSED simple polygon xs, ys (any orientation), exact (Ericson 5.4.1 crossings
    test with exact orient2d).

    Boundary points (on an edge or a vertex) return True.  Otherwise: count crossings of the
    ray p + t (1, 0), t > 0, with the edges, treating vertices on the ray as lying infinitesimally
    above it (half-open rule y_i <= py < y_j); inside iff the count is odd.  For self-intersecting
    input this is the even-odd rule.  Fewer than 3 vertices: only boundary points are inside.
    """
    n = xs.shape[0]
    inside = False
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        xi = xs[i]; yi = ys[i]; xj = xs[j]; yj = ys[j]
        # boundary test (exact): collinear and inside the edge's bounding box
        if (min(xi, xj) <= px <= max(xi, xj)) and (min(yi, yj) <= py <= max(yi, yj)):
            if orient2d(xi, yi, xj, yj, px, py) == 0.0:
                return True
        if (yi <= py) != (yj <= py):
            o = orient2d(xi, yi, xj, yj, px, py)
            if yj > yi:  # upward edge: crossing when p strictly left of it
                if o > 0.0:
                    inside = not inside
            else:  # downward edge: crossing when p strictly right of it
                if o < 0.0:
                    inside = not inside
    return inside


@njit(cache=True, nogil=True)
def point_in_convex_polyhedron(p, planes):
    """p in the CLOSED convex polyhedron given as halfspaces planes (nf, 4) rows (nx, ny, nz, d),
    inside n.p <= d (Ericson 5.4.3 TestPointPolyhedron).  Floating point: a point counts as
    inside when every computed n.p - d <= 0.  nf == 0: everything is inside."""
    for i in range(planes.shape[0]):
        s = planes[i, 0] * p[0] + planes[i, 1] * p[1] + planes[i, 2] * p[2] - planes[i, 3]
        if s > 0.0:
            return False
    return True


@njit(cache=True, nogil=True)
def plane_from_points(a, b, c):
    """Plane through a, b, c (Ericson 3.6 ComputePlane): n = unit((b-a) x (c-a)), d = n.a.

    The normal components are the three exact-sign orient2d of the coordinate projections, so
    ok is False exactly when a, b, c are collinear (including coincident points); then
    n = (0, 0, 0), d = 0.  Normal points toward a viewer who sees a, b, c counter-clockwise.
    """
    n = np.zeros(3)
    nx = orient2d(a[1], a[2], b[1], b[2], c[1], c[2])
    ny = orient2d(a[2], a[0], b[2], b[0], c[2], c[0])
    nz = orient2d(a[0], a[1], b[0], b[1], c[0], c[1])
    m = max(abs(nx), abs(ny), abs(nz))
    if m == 0.0:
        return False, n, 0.0
    if not (m < math.inf):  # overflowed magnitude: keep signs only of the dominant parts
        nx = 0.0 if abs(nx) < math.inf else math.copysign(1.0, nx)
        ny = 0.0 if abs(ny) < math.inf else math.copysign(1.0, ny)
        nz = 0.0 if abs(nz) < math.inf else math.copysign(1.0, nz)
        m = 1.0
    nx /= m
    ny /= m
    nz /= m
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    n[0] = nx / ln
    n[1] = ny / ln
    n[2] = nz / ln
    return True, n, n[0] * a[0] + n[1] * a[1] + n[2] * a[2]


@njit(cache=True, nogil=True)
def signed_distance_plane(p, n, d):
    """n.p - d: signed distance of p from the plane n.x = d (unit n; Ericson 3.6 / 5.1.1).
    Positive in front (on the side n points to)."""
    return n[0] * p[0] + n[1] * p[1] + n[2] * p[2] - d


@njit(cache=True, nogil=True)
def intersect_plane_plane(n1, d1, n2, d2):
    """Line of intersection of planes n1.x = d1 and n2.x = d2 (Ericson 5.4.4).

    Steps: u = n1 x n2; parallel (ok False) if |u|^2 <= PARALLEL_TOL^2 |n1|^2 |n2|^2 (includes
    coincident planes); else point = ((d1 n2 - d2 n1) x u) / (u.u), the point of the line
    closest to the origin.  Returns (ok, point, direction) with direction = u / |u| (unit).
    Not ok: point and direction are zero vectors.
    """
    point = np.zeros(3)
    direction = np.zeros(3)
    ux = n1[1] * n2[2] - n1[2] * n2[1]
    uy = n1[2] * n2[0] - n1[0] * n2[2]
    uz = n1[0] * n2[1] - n1[1] * n2[0]
    denom = ux * ux + uy * uy + uz * uz
    if not (denom > PARALLEL_TOL * PARALLEL_TOL * _dot(n1, n1) * _dot(n2, n2)) or denom == 0.0:
        return False, point, direction
    wx = d1 * n2[0] - d2 * n1[0]
    wy = d1 * n2[1] - d2 * n1[1]
    wz = d1 * n2[2] - d2 * n1[2]
    point[0] = (wy * uz - wz * uy) / denom
    point[1] = (wz * ux - wx * uz) / denom
    point[2] = (wx * uy - wy * ux) / denom
    ln = math.sqrt(denom)
    direction[0] = ux / ln
    direction[1] = uy / ln
    direction[2] = uz / ln
    return True, point, direction


@njit(cache=True, nogil=True)
def intersect_three_planes(n1, d1, n2, d2, n3, d3):
    """Single point common to planes n_i.x = d_i (Ericson 5.4.5, Cramer's rule).

    Steps: m1, m2, m3 = columns x, y, z of the normal matrix; u = m2 x m3, denom = m1.u;
    no unique point (ok False, point = 0) if |denom| <= PARALLEL_TOL |n1||n2||n3|;
    else v = m1 x d, x = (d.u, m3.v, -m2.v) / denom.
    """
    point = np.zeros(3)
    m1x = n1[0]; m1y = n2[0]; m1z = n3[0]
    m2x = n1[1]; m2y = n2[1]; m2z = n3[1]
    m3x = n1[2]; m3y = n2[2]; m3z = n3[2]
    ux = m2y * m3z - m2z * m3y
    uy = m2z * m3x - m2x * m3z
    uz = m2x * m3y - m2y * m3x
    denom = m1x * ux + m1y * uy + m1z * uz
    scale = math.sqrt(_dot(n1, n1) * _dot(n2, n2) * _dot(n3, n3))
    if not (abs(denom) > PARALLEL_TOL * scale) or denom == 0.0:
        return False, point
    vx = m1y * d3 - m1z * d2
    vy = m1z * d1 - m1x * d3
    vz = m1x * d2 - m1y * d1
    point[0] = (d1 * ux + d2 * uy + d3 * uz) / denom
    point[1] = (m3x * vx + m3y * vy + m3z * vz) / denom
    point[2] = -(m2x * vx + m2y * vy + m2z * vz) / denom
    return True, point


@njit(cache=True, nogil=True)
def is_convex_polygon_2d(xs, ys):
    """True iff the vertex cycle xs, ys is a STRICTLY convex polygon, either orientation
    (Ericson 3.7.1 O(n^2) test with exact orient2d).

    Steps: for every edge (v_i, v_i+1) all other vertices must lie strictly on one side, and
    that side must be the same for every edge.  Hence collinear or coincident vertices,
    self-intersecting (e.g. pentagram) and fewer than 3 vertices give False.
    """
    n = xs.shape[0]
    if n < 3:
        return False
    side = 0.0
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        for k in range(n):
            if k == i or k == j:
                continue
            o = orient2d(xs[i], ys[i], xs[j], ys[j], xs[k], ys[k])
            if o == 0.0:
                return False
            s = 1.0 if o > 0.0 else -1.0
            if side == 0.0:
                side = s
            elif s != side:
                return False
    return True
