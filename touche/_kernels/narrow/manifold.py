"""Convex contact manifolds: up to ``max_points`` contact points, one normal, a depth per point.

Method (reference-face / incident-feature clipping, the scheme of Box2D and Bullet's polyhedral
clipping; the clipping itself is Sutherland-Hodgman, Ericson 8.3.4, with the crossing point always
computed from the inside end towards the outside end so both sides of a shared edge agree,
Ericson 8.3.5):

1. The pair engine (``pairs.pair_distance``) gives the signed distance and the normal n (A to B).
   Nothing else of the engine is needed, so any pair the engine answers (the GJK/EPA engine for
   round solids included) gets a manifold from the same code. No contact when signed > margin.
2. Features: for A the feature most extreme along +n, for B along -n: a FACE (polygon, with its
   outward normal), an EDGE (2 points), a POINT, or an infinite PLANE. A face is chosen when its
   normal is within FEATURE_ANGLE of the direction (that tolerance is what makes a resting box
   stable: a tilt of 1e-6 rad still selects the face), else an edge nearly perpendicular to the
   direction through the extreme vertex, else that vertex. Cylinder caps and the cone base are
   discs, represented by an inscribed regular DISC_SEGMENTS-gon (see below); cylinder sides and
   cone generators are edges. Spheres / capsules are their core (centre, segment) plus a radius.
3. A POINT feature on either side -> one contact, at the engine's witness point. Two crossing
   edges -> one contact at their closest points. Otherwise a face (or a parallel edge) is the
   *reference*: a PLANE always; of two faces the one better aligned with n, biased towards A
   (B only when its misalignment sine is < REFERENCE_BIAS * A's - REFERENCE_TIE_SIN, so nearly
   equal faces never flip-flop). The incident feature (polygon, segment) is clipped against the
   side planes of the reference face, and clipped points are kept when their separation from
   the reference plane is <= margin (+ the touching tolerance). The reported normal is then the
   reference face normal (oriented A to B): every depth is measured along it.
4. Per point: ``depth = -(separation along the normal between the two surfaces)`` (radii
   included), and the point reported is MIDWAY between the two surfaces: A's surface point is
   ``p + depth/2 * normal`` and B's is ``p - depth/2 * normal``.
5. If more than ``max_points`` remain: keep the deepest, then the farthest from it, then the one
   spanning the largest triangle, then greedily the one adding the most area to the hull.
   Points closer than DUPLICATE_RELATIVE * size are merged first.

Discs: a cap of radius r is the inscribed regular 32-gon. As the incident feature its vertices
lie exactly on the rim (points are on the true surface); as the reference its clip region is
smaller than the disc by at most r (1 - cos(pi/32)) ~= 0.0048 r (points never lie outside).

If clipping keeps nothing (a face chosen within the angular tolerance while the true contact is
just off its edge), the manifold falls back to the engine's single witness point, so a pair with
signed <= margin always has at least one contact.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402


from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.primitives.closest import linear_linear_parameters  # noqa: E402
from touche._kernels.convex.support import unwrap_rounded  # noqa: E402
from touche._kernels.narrow.pairs import engine_address, call_pair_engine, is_supported  # noqa: E402,F401  (engine_address: for Python)
from touche._kernels.narrow.pair_closed import support  # noqa: E402
from touche._kernels.base.posecheck import invalid_pose  # noqa: E402
from touche._kernels.base.touching import offset as _offset  # noqa: E402
from touche._kernels.base.touching import touching_tolerance  # noqa: E402

# A face (edge) is the contact feature when its normal is within this angle of the direction
# (the edge within this angle of perpendicular). 1 degree: far above any round-off or the
# 1e-6 rad jitter of a resting body, small enough that a visibly tilted face is not taken as flat.
FEATURE_ANGLE = np.pi / 180.0
FACE_COS = np.cos(FEATURE_ANGLE)
EDGE_SIN = np.sin(FEATURE_ANGLE)
# Reference face choice (Box2D's 0.98 relative bias, applied to the misalignment sines), plus an
# absolute tie band: sines below 1e-5 rad of each other are treated as equal (A wins).
REFERENCE_BIAS = 0.98
REFERENCE_TIE_SIN = 1e-5
# Vertices within this (relative to the shape's size) of a facet plane belong to the facet;
# ConvexPolyhedron merges coplanar triangles at 1e-10 relative, so facets are exact to that.
FACET_ON_PLANE = 1e-9
# Cylinder caps / cone bases are inscribed regular polygons with this many sides.
DISC_SEGMENTS = 32
# Clipped points closer than this (relative to the pair's size) are one point.
DUPLICATE_RELATIVE = 1e-12

POINT_FEATURE = 0
EDGE_FEATURE = 1
FACE_FEATURE = 2
PLANE_FEATURE = 3


# ----------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def contact_supported(ka, kb):
    """Pairs with a manifold: finite convex shapes, planes / half-spaces against them, and only
    those the pair engine answers (rays, lines, meshes, plane-plane have no contact manifold)."""
    if not is_supported(ka, kb):
        return False
    for k in (ka, kb):
        if k == kinds.RAY or k == kinds.LINE or k == kinds.MESH:
            return False
    if ka >= kinds.PLANE and kb >= kinds.PLANE:
        return False
    return True


@njit(cache=True, nogil=True)
def _shape_size(kind, params, points, t):
    """Farthest coordinate of the shape's defining points in the world (plus its radius): the
    scale for relative tolerances."""
    kind, params, rounding = unwrap_rounded(kind, params)
    rows = points.shape[0]
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        rows = int(params[0])
    elif kind == kinds.PLANE or kind == kinds.HALFSPACE or kind == kinds.ELLIPSOID:
        rows = 1
    size = 0.0
    for i in range(rows):
        for j in range(3):
            size = max(size, abs(points[i, j]))
    if kind == kinds.SPHERE or kind == kinds.CAPSULE or kind == kinds.CYLINDER or kind == kinds.CONE:
        size += params[0]
    elif kind == kinds.ELLIPSOID:
        size += np.sqrt(3.0) * max(
            np.sqrt(points[1, 0] ** 2 + points[1, 1] ** 2 + points[1, 2] ** 2),
            np.sqrt(points[2, 0] ** 2 + points[2, 1] ** 2 + points[2, 2] ** 2),
            np.sqrt(points[3, 0] ** 2 + points[3, 1] ** 2 + points[3, 2] ** 2),
        )
    return size + rounding + max(abs(t[0, 3]), abs(t[1, 3]), abs(t[2, 3]))


@njit(cache=True, nogil=True)
def _perpendicular(x, y, z):
    """A unit vector perpendicular to the unit vector (x, y, z)."""
    if abs(x) < 0.6:  # cross with +x
        px, py, pz = 0.0, z, -y
    else:  # cross with +y
        px, py, pz = -z, 0.0, x
    length = np.sqrt(px * px + py * py + pz * pz)
    return px / length, py / length, pz / length


@njit(cache=True, nogil=True)
def _put_world(t, x, y, z, out, row):
    for i in range(3):
        out[row, i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z + t[i, 3]


@njit(cache=True, nogil=True)
def _world_vector(t, x, y, z, out):
    for i in range(3):
        out[i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z


# ----------------------------------------------------------------------------------------------
# features
@njit(cache=True, nogil=True)
def _polytope_feature(params, points, edges, t, dx, dy, dz, out, normal_out, order):
    """Feature of a polytope along the LOCAL unit direction (dx, dy, dz); vertices written to
    ``out`` in world coordinates (a face counter-clockwise about its outward normal)."""
    nv = int(params[0])
    n_planes = int(params[1])
    best = -np.inf
    best_k = -1
    for k in range(n_planes):
        row = points[nv + k]
        value = row[0] * dx + row[1] * dy + row[2] * dz
        if value > best:
            best = value
            best_k = k
    if best_k >= 0 and best >= FACE_COS:
        fx = points[nv + best_k, 0]
        fy = points[nv + best_k, 1]
        fz = points[nv + best_k, 2]
        offset = params[4 + best_k]
        size = 0.0
        for i in range(nv):
            for j in range(3):
                size = max(size, abs(points[i, j]))
        slack = FACET_ON_PLANE * size
        count = 0
        for i in range(nv):
            if points[i, 0] * fx + points[i, 1] * fy + points[i, 2] * fz >= offset - slack:
                order[count] = i
                count += 1
        if count >= 3:
            # order the facet's vertices by angle about its centroid (counter-clockwise about f)
            ux, uy, uz = _perpendicular(fx, fy, fz)
            wx = fy * uz - fz * uy
            wy = fz * ux - fx * uz
            wz = fx * uy - fy * ux
            cx = 0.0
            cy = 0.0
            cz = 0.0
            for m in range(count):
                cx += points[order[m], 0]
                cy += points[order[m], 1]
                cz += points[order[m], 2]
            cx /= count
            cy /= count
            cz /= count
            angles = np.empty(count)
            for m in range(count):
                v = points[order[m]]
                rx = v[0] - cx
                ry = v[1] - cy
                rz = v[2] - cz
                angles[m] = np.arctan2(rx * wx + ry * wy + rz * wz, rx * ux + ry * uy + rz * uz)
            for m in range(1, count):  # insertion sort: facets are small
                key = angles[m]
                index = order[m]
                j = m - 1
                while j >= 0 and angles[j] > key:
                    angles[j + 1] = angles[j]
                    order[j + 1] = order[j]
                    j -= 1
                angles[j + 1] = key
                order[j + 1] = index
            for m in range(count):
                v = points[order[m]]
                _put_world(t, v[0], v[1], v[2], out, m)
            _world_vector(t, fx, fy, fz, normal_out)
            return FACE_FEATURE, count
        if count == 2:
            for m in range(2):
                v = points[order[m]]
                _put_world(t, v[0], v[1], v[2], out, m)
            return EDGE_FEATURE, 2
    # the extreme vertex, and the edge through it most nearly perpendicular to the direction
    top = 0
    top_value = -np.inf
    for i in range(nv):
        value = points[i, 0] * dx + points[i, 1] * dy + points[i, 2] * dz
        if value > top_value:
            top_value = value
            top = i
    best_sine = np.inf
    other = -1
    best_length = 0.0
    for e in range(edges.shape[0]):
        if edges[e, 0] == top:
            j = edges[e, 1]
        elif edges[e, 1] == top:
            j = edges[e, 0]
        else:
            continue
        ex = points[j, 0] - points[top, 0]
        ey = points[j, 1] - points[top, 1]
        ez = points[j, 2] - points[top, 2]
        length = np.sqrt(ex * ex + ey * ey + ez * ez)
        if length == 0.0:
            continue
        sine = abs(ex * dx + ey * dy + ez * dz) / length
        # ties (collinear edges of a zero-area triangle): the longer edge
        if sine < best_sine or (sine == best_sine and length > best_length):
            best_sine = sine
            other = j
            best_length = length
    v = points[top]
    _put_world(t, v[0], v[1], v[2], out, 0)
    if other >= 0 and best_sine <= EDGE_SIN:
        w = points[other]
        _put_world(t, w[0], w[1], w[2], out, 1)
        return EDGE_FEATURE, 2
    return POINT_FEATURE, 1


@njit(cache=True, nogil=True)
def _disc(t, cx, cy, cz, ax, ay, az, radius, flip, out, normal_out):
    """Inscribed regular DISC_SEGMENTS-gon of the disc (centre c, unit normal a (local), radius),
    counter-clockwise about a (about -a when ``flip``), in world coordinates."""
    ux, uy, uz = _perpendicular(ax, ay, az)
    wx = ay * uz - az * uy
    wy = az * ux - ax * uz
    wz = ax * uy - ay * ux
    sign = -1.0 if flip else 1.0
    for m in range(DISC_SEGMENTS):
        angle = sign * 2.0 * np.pi * m / DISC_SEGMENTS
        c = radius * np.cos(angle)
        s = radius * np.sin(angle)
        _put_world(t, cx + c * ux + s * wx, cy + c * uy + s * wy, cz + c * uz + s * wz, out, m)
    _world_vector(t, sign * ax, sign * ay, sign * az, normal_out)
    return FACE_FEATURE, DISC_SEGMENTS


@njit(cache=True, nogil=True)
def _round_feature(kind, params, points, t, dx, dy, dz, out, normal_out):
    """Cylinder (points = bottom, top centres) / cone (points = apex, base centre) feature."""
    p0 = points[0]
    p1 = points[1]
    ax = p1[0] - p0[0]
    ay = p1[1] - p0[1]
    az = p1[2] - p0[2]
    height = np.sqrt(ax * ax + ay * ay + az * az)
    ax /= height
    ay /= height
    az /= height
    radius = params[0]
    along = dx * ax + dy * ay + dz * az
    rx = dx - along * ax
    ry = dy - along * ay
    rz = dz - along * az
    radial = np.sqrt(rx * rx + ry * ry + rz * rz)
    if radial > 0.0:
        rx /= radial
        ry /= radial
        rz /= radial
    if kind == kinds.CYLINDER:
        if along >= FACE_COS:
            return _disc(t, p1[0], p1[1], p1[2], ax, ay, az, radius, False, out, normal_out)
        if along <= -FACE_COS:
            return _disc(t, p0[0], p0[1], p0[2], ax, ay, az, radius, True, out, normal_out)
        if abs(along) <= EDGE_SIN:  # side generator line
            _put_world(t, p0[0] + radius * rx, p0[1] + radius * ry, p0[2] + radius * rz, out, 0)
            _put_world(t, p1[0] + radius * rx, p1[1] + radius * ry, p1[2] + radius * rz, out, 1)
            return EDGE_FEATURE, 2
        end = p1 if along > 0.0 else p0
        _put_world(t, end[0] + radius * rx, end[1] + radius * ry, end[2] + radius * rz, out, 0)
        return POINT_FEATURE, 1
    # cone: apex p0, base centre p1, the base's outward normal is +a
    if along >= FACE_COS:
        return _disc(t, p1[0], p1[1], p1[2], ax, ay, az, radius, False, out, normal_out)
    slant = np.sqrt(radius * radius + height * height)
    side = (height * (dx * rx + dy * ry + dz * rz) - radius * along) / slant  # d . side normal
    rim_x = p1[0] + radius * rx
    rim_y = p1[1] + radius * ry
    rim_z = p1[2] + radius * rz
    if radial > 0.0 and side >= FACE_COS:  # the generator line in d's meridian plane
        _put_world(t, p0[0], p0[1], p0[2], out, 0)
        _put_world(t, rim_x, rim_y, rim_z, out, 1)
        return EDGE_FEATURE, 2
    if p0[0] * dx + p0[1] * dy + p0[2] * dz >= rim_x * dx + rim_y * dy + rim_z * dz:
        _put_world(t, p0[0], p0[1], p0[2], out, 0)
    else:
        _put_world(t, rim_x, rim_y, rim_z, out, 0)
    return POINT_FEATURE, 1


@njit(cache=True, nogil=True)
def feature(kind, params, points, edges, t, direction, out, normal_out, order):
    """The contact feature of a posed shape along the WORLD unit ``direction`` (pointing out of the
    shape towards the other one). Writes world points into ``out`` (capacity: vertex count,
    DISC_SEGMENTS, 2) and, for faces / planes, the outward unit normal into ``normal_out``;
    ``order`` is int64 scratch of the vertex count. Returns (feature type, point count, radius):
    the points lie on the shape's core, the surface is ``radius`` further out (a Rounded shape:
    its core's feature, the rounding added to the radius)."""
    kind, params, rounding = unwrap_rounded(kind, params)
    ftype, count, radius = _unrounded_feature(kind, params, points, edges, t, direction, out, normal_out, order)
    return ftype, count, radius + rounding


@njit(cache=True, nogil=True)
def _unrounded_feature(kind, params, points, edges, t, direction, out, normal_out, order):
    # direction into the shape's frame: R^T d
    dx = t[0, 0] * direction[0] + t[1, 0] * direction[1] + t[2, 0] * direction[2]
    dy = t[0, 1] * direction[0] + t[1, 1] * direction[1] + t[2, 1] * direction[2]
    dz = t[0, 2] * direction[0] + t[1, 2] * direction[1] + t[2, 2] * direction[2]
    if kind == kinds.POINT or kind == kinds.SPHERE:
        _put_world(t, points[0, 0], points[0, 1], points[0, 2], out, 0)
        return POINT_FEATURE, 1, (params[0] if kind == kinds.SPHERE else 0.0)
    if kind == kinds.SEGMENT or kind == kinds.CAPSULE:
        radius = params[0] if kind == kinds.CAPSULE else 0.0
        ex = points[1, 0] - points[0, 0]
        ey = points[1, 1] - points[0, 1]
        ez = points[1, 2] - points[0, 2]
        length = np.sqrt(ex * ex + ey * ey + ez * ez)
        slope = ex * dx + ey * dy + ez * dz
        if length > 0.0 and abs(slope) <= EDGE_SIN * length:
            _put_world(t, points[0, 0], points[0, 1], points[0, 2], out, 0)
            _put_world(t, points[1, 0], points[1, 1], points[1, 2], out, 1)
            return EDGE_FEATURE, 2, radius
        end = 1 if slope > 0.0 else 0
        _put_world(t, points[end, 0], points[end, 1], points[end, 2], out, 0)
        return POINT_FEATURE, 1, radius
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        ftype, count = _polytope_feature(params, points, edges, t, dx, dy, dz, out, normal_out, order)
        return ftype, count, 0.0
    if kind == kinds.CYLINDER or kind == kinds.CONE:
        ftype, count = _round_feature(kind, params, points, t, dx, dy, dz, out, normal_out)
        return ftype, count, 0.0
    if kind == kinds.PLANE or kind == kinds.HALFSPACE:
        n = points[1]
        _world_vector(t, n[0], n[1], n[2], normal_out)
        if kind == kinds.PLANE and (
            normal_out[0] * direction[0] + normal_out[1] * direction[1] + normal_out[2] * direction[2] < 0.0
        ):
            normal_out[0] = -normal_out[0]
            normal_out[1] = -normal_out[1]
            normal_out[2] = -normal_out[2]
        _put_world(t, points[0, 0], points[0, 1], points[0, 2], out, 0)
        return PLANE_FEATURE, 1, 0.0
    # ellipsoid (and any other smooth solid): its support point
    local = np.empty(3)
    local[0] = dx
    local[1] = dy
    local[2] = dz
    p = support(kind, params, points, local)
    _put_world(t, p[0], p[1], p[2], out, 0)
    return POINT_FEATURE, 1, 0.0


@njit(cache=True, nogil=True)
def _feature_capacity(kind, params):
    kind, params, _ = unwrap_rounded(kind, params)
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        return max(int(params[0]), 2)
    if kind == kinds.CYLINDER or kind == kinds.CONE:
        return DISC_SEGMENTS
    return 2


# ----------------------------------------------------------------------------------------------
# clipping (Ericson 8.3.4 Sutherland-Hodgman; crossing computed inside -> outside, 8.3.5)
@njit(cache=True, nogil=True)
def _clip(src, count, dst, nx, ny, nz, offset):
    """Keep the part of the polygon src[:count] (or segment / point for count 2 / 1) with
    n . x <= offset; returns the new count (at most count + 1)."""
    if count == 0:
        return 0
    if count <= 2:
        kept = 0
        d0 = src[0, 0] * nx + src[0, 1] * ny + src[0, 2] * nz - offset
        if count == 1:
            if d0 <= 0.0:
                copy_into(dst[0], src[0])
                return 1
            return 0
        d1 = src[1, 0] * nx + src[1, 1] * ny + src[1, 2] * nz - offset
        if d0 <= 0.0:
            copy_into(dst[kept], src[0])
            kept += 1
        if (d0 <= 0.0) != (d1 <= 0.0):
            inside = 0 if d0 <= 0.0 else 1
            d_in = d0 if inside == 0 else d1
            d_out = d1 if inside == 0 else d0
            s = d_in / (d_in - d_out)
            for j in range(3):
                dst[kept, j] = src[inside, j] + s * (src[1 - inside, j] - src[inside, j])
            kept += 1
        if d1 <= 0.0:
            copy_into(dst[kept], src[1])
            kept += 1
        return kept
    kept = 0
    prev = count - 1
    d_prev = src[prev, 0] * nx + src[prev, 1] * ny + src[prev, 2] * nz - offset
    for i in range(count):
        d_cur = src[i, 0] * nx + src[i, 1] * ny + src[i, 2] * nz - offset
        if (d_cur <= 0.0) != (d_prev <= 0.0):
            if d_cur <= 0.0:
                inside = i
                outside = prev
                d_in = d_cur
                d_out = d_prev
            else:
                inside = prev
                outside = i
                d_in = d_prev
                d_out = d_cur
            s = d_in / (d_in - d_out)
            for j in range(3):
                dst[kept, j] = src[inside, j] + s * (src[outside, j] - src[inside, j])
            kept += 1
        if d_cur <= 0.0:
            copy_into(dst[kept], src[i])
            kept += 1
        prev = i
        d_prev = d_cur
    return kept


# ----------------------------------------------------------------------------------------------
# reduction to max_points
@njit(cache=True, nogil=True)
def _orient2(xs, ys, a, b, c):
    return (xs[b] - xs[a]) * (ys[c] - ys[a]) - (ys[b] - ys[a]) * (xs[c] - xs[a])


@njit(cache=True, nogil=True)
def _farthest(xs, ys, first, count):
    """The point farthest from point ``first`` (the first of equals; -1 when all coincide)."""
    far = -1
    far_d2 = 0.0
    for i in range(count):
        d2 = (xs[i] - xs[first]) ** 2 + (ys[i] - ys[first]) ** 2
        if d2 > far_d2:
            far_d2 = d2
            far = i
    return far


@njit(cache=True, nogil=True)
def _widest(xs, ys, first, far, count):
    """The point making the largest triangle with ``first`` and ``far`` (-1 when all are
    collinear with them)."""
    third = -1
    best = 0.0
    for i in range(count):
        area = abs(_orient2(xs, ys, first, far, i))
        if area > best:
            best = area
            third = i
    return third


@njit(cache=True, nogil=True)
def _reduce(pts, depths, count, nx, ny, nz, max_points, chosen):
    """Indices (into pts[:count]) of at most max_points points: the deepest, then the farthest
    from it, then the largest triangle, then greedily the largest hull area. Writes ``chosen``
    and returns how many. ``n`` is the plane the points are compared in."""
    ux, uy, uz = _perpendicular(nx, ny, nz)
    wx = ny * uz - nz * uy
    wy = nz * ux - nx * uz
    wz = nx * uy - ny * ux
    xs = np.empty(count)
    ys = np.empty(count)
    for i in range(count):
        xs[i] = pts[i, 0] * ux + pts[i, 1] * uy + pts[i, 2] * uz
        ys[i] = pts[i, 0] * wx + pts[i, 1] * wy + pts[i, 2] * wz
    first = 0
    for i in range(1, count):
        if depths[i] > depths[first]:
            first = i
    chosen[0] = first
    if max_points == 1:
        return 1
    far = _farthest(xs, ys, first, count)
    if far < 0:
        return 1
    chosen[1] = far
    if max_points == 2:
        return 2
    third = _widest(xs, ys, first, far, count)
    if third < 0:
        return 2
    # hull kept counter-clockwise in ``hull``
    hull = np.empty(max_points, dtype=np.int64)
    hull[0] = first
    if _orient2(xs, ys, first, far, third) > 0.0:
        hull[1] = far
        hull[2] = third
    else:
        hull[1] = third
        hull[2] = far
    size = 3
    used = np.zeros(count, dtype=np.bool_)
    used[first] = True
    used[far] = True
    used[third] = True
    visible = np.empty(max_points, dtype=np.bool_)
    while size < max_points:
        pick = -1
        gain_best = 0.0
        for i in range(count):
            if used[i]:
                continue
            gain = 0.0
            for e in range(size):
                o = _orient2(xs, ys, hull[e], hull[(e + 1) % size], i)
                if o < 0.0:
                    gain -= o
            if gain > gain_best:
                gain_best = gain
                pick = i
        if pick < 0:
            break
        used[pick] = True
        for e in range(size):
            visible[e] = _orient2(xs, ys, hull[e], hull[(e + 1) % size], pick) < 0.0
        # visible edges form one chain start..end; vertices strictly inside it leave the hull
        start = 0
        for e in range(size):
            if visible[e] and not visible[(e + size - 1) % size]:
                start = e
                break
        end = start
        while visible[(end + 1) % size]:
            end = (end + 1) % size
        rebuilt = np.empty(max_points, dtype=np.int64)
        n_new = 0
        rebuilt[n_new] = pick
        n_new += 1
        e = (end + 1) % size
        while True:
            rebuilt[n_new] = hull[e]
            n_new += 1
            if e == start:
                break
            e = (e + 1) % size
        for e in range(n_new):
            hull[e] = rebuilt[e]
        size = n_new
    for e in range(size):
        chosen[e] = hull[e]
    return size


# ----------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _exit_distance(qx, qy, qz, ends, radius, ux, uy, uz):
    """How far the ray q + t u (unit u) from a point q of a capsule's core segment runs inside
    the capsule. ``radius`` when the core is a point or u is perpendicular to the segment; up to
    radius / cos(FEATURE_ANGLE) for a segment within the feature tolerance (the surface point of
    a slightly tilted capsule below q is not at distance radius along u)."""
    if radius == 0.0:
        return 0.0
    ex = ends[1, 0] - ends[0, 0]
    ey = ends[1, 1] - ends[0, 1]
    ez = ends[1, 2] - ends[0, 2]
    length = np.sqrt(ex * ex + ey * ey + ez * ez)
    if length == 0.0:
        return radius
    ex /= length
    ey /= length
    ez /= length
    along = ux * ex + uy * ey + uz * ez
    sine = np.sqrt(max(1.0 - along * along, 0.0))
    start = (qx - ends[0, 0]) * ex + (qy - ends[0, 1]) * ey + (qz - ends[0, 2]) * ez
    if sine > 0.0:
        t = radius / sine
        foot = start + t * along
        if 0.0 <= foot <= length:
            return t  # leaves through the cylindrical part
        end = 0 if foot < 0.0 else 1
    else:
        end = 1 if along > 0.0 else 0
    # leaves through the spherical cap at that end: |q + t u - E| = radius, the larger root
    wx = qx - ends[end, 0]
    wy = qy - ends[end, 1]
    wz = qz - ends[end, 2]
    b = wx * ux + wy * uy + wz * uz
    c = wx * wx + wy * wy + wz * wz - radius * radius
    return -b + np.sqrt(max(b * b - c, 0.0))


@njit(cache=True, nogil=True)
def _single(surface_a, surface_b, normal, out_points, out_depths):
    """One contact from a point on A's and a point on B's surface: depth along the normal,
    reported midway."""
    depth = 0.0
    for j in range(3):
        depth += (surface_a[j] - surface_b[j]) * normal[j]
    for j in range(3):
        out_points[0, j] = 0.5 * (surface_a[j] + surface_b[j])
    out_depths[0] = depth
    return 1


@njit(cache=True, nogil=True)
def contact_manifold(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, margin, max_points,
                     out_points, out_depths):
    """Contact manifold of one pair (poses assumed valid). Writes ``count`` rows of
    ``out_points`` (>= max_points, 3) and ``out_depths`` (>= max_points,) and returns
    ``(count, normal (3,), status)``: world coordinates, normal from A to B, depth > 0 for
    penetration (< 0: a speculative contact within ``margin``), each point midway between the
    surfaces. ``status`` is the engine's (SEPARATED / TOUCHING / PENETRATING) or UNSUPPORTED;
    count 0 when signed distance > margin."""
    normal = np.full(3, np.nan)
    if not contact_supported(ka, kb):
        return 0, normal, kinds.UNSUPPORTED
    size = max(_shape_size(ka, pa, pta, ta), _shape_size(kb, pb, ptb, tb))
    # the band of touche.tolerance: the shapes' sizes plus the rounding of their translations
    touch = touching_tolerance(size - _offset(ta), ta, size - _offset(tb), tb)
    signed, witness_a, witness_b, engine_normal, status = call_pair_engine(engine, (
        False, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, touch))
    if not (signed <= margin) or not np.isfinite(signed) or not np.isfinite(engine_normal[0]):
        return 0, engine_normal, status
    normal = engine_normal
    # ---- features
    cap_a = _feature_capacity(ka, pa)
    cap_b = _feature_capacity(kb, pb)
    feat_a = np.empty((cap_a, 3))
    feat_b = np.empty((cap_b, 3))
    face_a = np.zeros(3)
    face_b = np.zeros(3)
    order = np.empty(max(cap_a, cap_b), dtype=np.int64)
    type_a, count_a, radius_a = feature(ka, pa, pta, eda, ta, normal, feat_a, face_a, order)
    back = -normal
    type_b, count_b, radius_b = feature(kb, pb, ptb, edb, tb, back, feat_b, face_b, order)
    # ---- a point feature: one contact at the engine's witness (exact depth from the engine)
    if type_a == POINT_FEATURE or type_b == POINT_FEATURE:
        depth = -signed
        if type_a == POINT_FEATURE:
            for j in range(3):
                out_points[0, j] = witness_a[j] - 0.5 * depth * normal[j]
        else:
            for j in range(3):
                out_points[0, j] = witness_b[j] + 0.5 * depth * normal[j]
        out_depths[0] = depth
        return 1, normal, status
    # ---- edge-edge
    if type_a == EDGE_FEATURE and type_b == EDGE_FEATURE:
        ea = feat_a[1] - feat_a[0]
        eb = feat_b[1] - feat_b[0]
        la = np.sqrt(ea[0] ** 2 + ea[1] ** 2 + ea[2] ** 2)
        lb = np.sqrt(eb[0] ** 2 + eb[1] ** 2 + eb[2] ** 2)
        cx = ea[1] * eb[2] - ea[2] * eb[1]
        cy = ea[2] * eb[0] - ea[0] * eb[2]
        cz = ea[0] * eb[1] - ea[1] * eb[0]
        if np.sqrt(cx * cx + cy * cy + cz * cz) > EDGE_SIN * la * lb:
            s, u = linear_linear_parameters(feat_a[0], ea, 0.0, 1.0, feat_b[0], eb, 0.0, 1.0)
            core_a = feat_a[0] + s * ea
            core_b = feat_b[0] + u * eb
            reach_a = _exit_distance(core_a[0], core_a[1], core_a[2], feat_a, radius_a, normal[0], normal[1], normal[2])
            reach_b = _exit_distance(core_b[0], core_b[1], core_b[2], feat_b, radius_b, -normal[0], -normal[1], -normal[2])
            surface_a = core_a + reach_a * normal
            surface_b = core_b - reach_b * normal
            return _single(surface_a, surface_b, normal, out_points, out_depths), normal, status
    # ---- clipping: choose the reference
    ref_is_a = True
    if type_b == PLANE_FEATURE:
        ref_is_a = False
    elif type_a == PLANE_FEATURE:
        ref_is_a = True
    elif type_a == FACE_FEATURE and type_b == FACE_FEATURE:
        sine_a = np.sqrt(
            (face_a[1] * normal[2] - face_a[2] * normal[1]) ** 2
            + (face_a[2] * normal[0] - face_a[0] * normal[2]) ** 2
            + (face_a[0] * normal[1] - face_a[1] * normal[0]) ** 2
        )
        sine_b = np.sqrt(
            (face_b[1] * normal[2] - face_b[2] * normal[1]) ** 2
            + (face_b[2] * normal[0] - face_b[0] * normal[2]) ** 2
            + (face_b[0] * normal[1] - face_b[1] * normal[0]) ** 2
        )
        ref_is_a = not (sine_b < REFERENCE_BIAS * sine_a - REFERENCE_TIE_SIN)
    elif type_b == FACE_FEATURE:
        ref_is_a = False
    if ref_is_a:
        ref = feat_a
        ref_type = type_a
        ref_count = count_a
        ref_radius = radius_a
        inc = feat_b
        inc_count = count_b
        inc_radius = radius_b
        ref_normal = face_a
    else:
        ref = feat_b
        ref_type = type_b
        ref_count = count_b
        ref_radius = radius_b
        inc = feat_a
        inc_count = count_a
        inc_radius = radius_a
        ref_normal = face_b
    capacity = inc_count + ref_count + 2
    buffer_1 = np.empty((capacity, 3))
    buffer_2 = np.empty((capacity, 3))
    for i in range(inc_count):
        copy_into(buffer_1[i], inc[i])
    count = inc_count
    plane_normal = np.empty(3)
    if ref_type == EDGE_FEATURE:
        # two parallel edges: the reference "face" is the plane through edge A (or B) normal to
        # the contact normal, its sides the planes through the edge's end points
        e = ref[1] - ref[0]
        length = np.sqrt(e[0] ** 2 + e[1] ** 2 + e[2] ** 2)
        e /= length
        outward = normal if ref_is_a else -normal
        along = outward[0] * e[0] + outward[1] * e[1] + outward[2] * e[2]
        copy_into(plane_normal, outward - along * e)
        plane_length = np.sqrt(plane_normal[0] ** 2 + plane_normal[1] ** 2 + plane_normal[2] ** 2)
        plane_normal /= plane_length
        count = _clip(buffer_1, count, buffer_2, e[0], e[1], e[2], e[0] * ref[1, 0] + e[1] * ref[1, 1] + e[2] * ref[1, 2])
        count = _clip(buffer_2, count, buffer_1, -e[0], -e[1], -e[2], -(e[0] * ref[0, 0] + e[1] * ref[0, 1] + e[2] * ref[0, 2]))
    else:
        copy_into(plane_normal, ref_normal)
        if ref_type == FACE_FEATURE:
            flips = 0
            for i in range(ref_count):
                j = i + 1 if i + 1 < ref_count else 0
                ex = ref[j, 0] - ref[i, 0]
                ey = ref[j, 1] - ref[i, 1]
                ez = ref[j, 2] - ref[i, 2]
                sx = ey * ref_normal[2] - ez * ref_normal[1]
                sy = ez * ref_normal[0] - ex * ref_normal[2]
                sz = ex * ref_normal[1] - ey * ref_normal[0]
                side = np.sqrt(sx * sx + sy * sy + sz * sz)
                if side == 0.0:
                    continue
                sx /= side
                sy /= side
                sz /= side
                side_offset = sx * ref[i, 0] + sy * ref[i, 1] + sz * ref[i, 2]
                if flips % 2 == 0:
                    count = _clip(buffer_1, count, buffer_2, sx, sy, sz, side_offset)
                else:
                    count = _clip(buffer_2, count, buffer_1, sx, sy, sz, side_offset)
                flips += 1
            if flips % 2 == 1:
                for i in range(count):
                    copy_into(buffer_1[i], buffer_2[i])
    offset = plane_normal[0] * ref[0, 0] + plane_normal[1] * ref[0, 1] + plane_normal[2] * ref[0, 2] + ref_radius
    # ---- keep the points within margin of the reference plane; midway points; merge duplicates
    duplicate = DUPLICATE_RELATIVE * size
    kept = 0
    candidates = buffer_2
    depths = np.empty(max(count, 1))
    for i in range(count):
        # the incident surface below this core point, along -plane_normal
        reach = inc_radius
        if inc_radius > 0.0 and inc_count == 2:
            reach = _exit_distance(
                buffer_1[i, 0], buffer_1[i, 1], buffer_1[i, 2], inc, inc_radius,
                -plane_normal[0], -plane_normal[1], -plane_normal[2],
            )
        separation = (
            plane_normal[0] * buffer_1[i, 0] + plane_normal[1] * buffer_1[i, 1] + plane_normal[2] * buffer_1[i, 2]
            - offset - reach
        )
        if not (separation <= margin + touch):
            continue
        px = buffer_1[i, 0] - (reach + 0.5 * separation) * plane_normal[0]
        py = buffer_1[i, 1] - (reach + 0.5 * separation) * plane_normal[1]
        pz = buffer_1[i, 2] - (reach + 0.5 * separation) * plane_normal[2]
        merged = False
        for k in range(kept):
            if (
                abs(candidates[k, 0] - px) <= duplicate
                and abs(candidates[k, 1] - py) <= duplicate
                and abs(candidates[k, 2] - pz) <= duplicate
            ):
                merged = True
                depths[k] = max(depths[k], -separation)
                break
        if merged:
            continue
        candidates[kept, 0] = px
        candidates[kept, 1] = py
        candidates[kept, 2] = pz
        depths[kept] = -separation
        kept += 1
    if kept == 0:
        # nothing inside the reference face's sides: the engine's single witness contact
        return _single(witness_a, witness_b, engine_normal, out_points, out_depths), engine_normal, status
    manifold_normal = plane_normal.copy() if ref_is_a else -plane_normal
    if kept <= max_points:
        for i in range(kept):
            copy_into(out_points[i], candidates[i])
            out_depths[i] = depths[i]
        return kept, manifold_normal, status
    chosen = np.empty(max_points, dtype=np.int64)
    n_chosen = _reduce(candidates, depths, kept, plane_normal[0], plane_normal[1], plane_normal[2], max_points, chosen)
    for i in range(n_chosen):
        copy_into(out_points[i], candidates[chosen[i]])
        out_depths[i] = depths[chosen[i]]
    return n_chosen, manifold_normal, status


# ----------------------------------------------------------------------------------------------
# drivers
@njit(cache=True, nogil=True)
def checked_contact_manifold_into(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, margin, max_points,
                                  out_points, out_depths, out_normal):
    """One pair from Python: validates the raw poses (INVALID_POSE_A / _B), fills the buffers
    (points / depths NaN past the count) and returns ``(count, status)``."""
    bad = invalid_pose(ta, tb)
    if bad:
        return 0, bad
    count, normal, status = contact_manifold(
        engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, margin, max_points, out_points, out_depths
    )
    copy_into(out_normal, normal)
    return count, status


@njit(cache=True, nogil=True)
def contact_manifold_many(engine, ka, pa, pta, tra, eda, tas, kb, pb, ptb, trb, edb, tbs, margin, max_points,
                          out_points, out_depths, out_normals, out_counts, out_status, lo, hi):
    """Batch driver: poses (na, 4, 4) and (nb, 4, 4), na == nb or either 1 (broadcast), already
    validated. Writes out_points (n, max_points, 3) and out_depths (n, max_points), NaN past each
    pair's count, out_normals (n, 3), out_counts (n,) int64 and out_status (n,) int8."""
    step_a = 1 if tas.shape[0] > 1 else 0
    step_b = 1 if tbs.shape[0] > 1 else 0
    for i in range(lo, hi):
        count, normal, status = contact_manifold(
            engine, ka, pa, pta, tra, eda, tas[i * step_a], kb, pb, ptb, trb, edb, tbs[i * step_b], margin, max_points,
            out_points[i], out_depths[i],
        )
        for k in range(count, max_points):
            out_depths[i, k] = np.nan
            out_points[i, k, 0] = np.nan
            out_points[i, k, 1] = np.nan
            out_points[i, k, 2] = np.nan
        copy_into(out_normals[i], normal)
        out_counts[i] = count
        out_status[i] = status
