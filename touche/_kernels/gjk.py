"""GJK distance / boolean, EPA penetration and GJK shape casting for any two convex shapes.

Seeds: Ericson 9.5 (GJK), 9.5.2-9.5.3 (simplex sub-algorithm), 9.5.4-9.5.5 (hill climbing with a
cached start vertex), 9.5.7 (GJK ray cast / conservative advancement on the Minkowski difference),
3.10-3.11 (Minkowski sums and support mappings).

Entry points (stable conventions; shapes are packed ``(kind, params, points)`` as in shapes.py,
poses are rigid float64 (4, 4) transforms ``x_world = T @ x_local``; every result is in WORLD
coordinates):

``gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)``
    -> ``(signed_distance, point_a (3,), point_b (3,), normal (3,), gjk_status, iterations)``.
    Same convention as pairs.pair_distance: separated -> exact distance, closest points,
    ``normal = (point_b - point_a) / dist``; overlapping -> ``-depth`` (EPA), ``normal`` = the
    direction B moves to separate, ``point_a`` A's deepest point along it, ``point_b`` B's deepest
    point against it, ``depth == (point_a - point_b) . normal``. ``gjk_status`` is a kinds.GJK_*
    code: SEPARATED / TOUCHING (|signed| <= tolerance) / PENETRATING, or MAX_ITERATIONS /
    DEGENERATE when GJK or EPA did not converge (the numbers are then the best found so far).
    ``iterations`` = GJK iterations + EPA iterations.
``gjk_pair_distance_warm(..., tolerance, warm)``: the same with a warm-start token ``warm``
    (WARM_SIZE,) float64, read and overwritten: ``warm[0]`` = simplex size (0 = cold start),
    ``warm[1:13]`` / ``warm[13:25]`` = the simplex's support points in A's / B's LOCAL frames,
    ``warm[25:27]`` = cached start vertices of the hill climbing (9.5.5) for A and B.
``gjk_pair_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)`` -> bool (closed sets: touching counts;
    early-out boolean GJK, "touching" within INTERSECT_RELATIVE of the pair's size).
``gjk_shape_cast(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance)``
    -> ``(status, t, point (3,), normal (3,))``: A and B translate with constant world velocities
    va, vb over [0, t_max]. status kinds.MISS (t = inf, NaN point/normal), kinds.HIT (first
    contact at t, ``point`` on A's surface at time t, ``normal`` from A to B),
    kinds.ALREADY_TOUCHING (touching or overlapping at t = 0; point = A's witness point, normal
    from A to B when defined, else NaN) or CAST_MAX_ITERATIONS (did not converge; t = the last
    conservative time, a lower bound of the contact time).
Batch drivers (serial loops over pairs ``[lo, hi)``, the last two arguments, run on chunks by
touche._parallel.run; a pose batch of 1 broadcasts):
``gjk_distance_many(ka, pa, pta, ta (n|1,4,4), kb, pb, ptb, tb (n|1,4,4), tolerance,
    out_signed (n,), out_point_a (n,3), out_point_b (n,3), out_normal (n,3), out_status (n,) int8,
    out_iterations (n,) int64)``;
``gjk_intersects_many(ka, pa, pta, ta, kb, pb, ptb, tb, out (n,) bool)``;
``gjk_shape_cast_many(ka, pa, pta, ta, va (n|1,3), kb, pb, ptb, tb, vb (n|1,3), t_max, tolerance,
    out_status (n,) int8, out_t (n,), out_point (n,3), out_normal (n,3))``.

Single-pair entries for the public layer: ``gjk_distance_into(..., tolerance, warm, out (11,))``
and ``gjk_distance_checked_into(ka, pa, pta, scale_a, ta, kb, pb, ptb, scale_b, tb, warm, out)``
(checks the raw poses and computes convex's touching tolerance itself; returns the status or
INVALID_POSE_A / _B).

Cost model: nothing allocates per pair in the batch drivers. A batch is split into chunks
(touche._parallel.run) that each make their work buffers once (GJK simplex, relative transform, EPA
polytope: ``epa_buffers()``) and run their pairs through ``_distance_core``; the single-pair
entries (``_distance_single``) allocate the EPA buffers only when the cores overlap. The hot
helpers that are a few lines long (support of a moved shape, simplex determinants) are
``inline="always"``; the larger ones (the support mapping of every kind, the simplex
sub-algorithm, EPA's face construction) are ordinary calls, which LLVM inlines where it pays:
inlining them in numba's IR copied them into every call site and made this file cost minutes
to compile. Polyhedra up to HILL_CLIMB_MIN_VERTICES vertices are scanned linearly
(faster than climbing below ~300 vertices, measured).

Numerics: everything runs in B's local frame (A moved by inv(T_b) @ T_a, as in pairs.py); the
support of A maps the direction into A's frame and only the chosen point out (no vertex is
transformed). Sphere and capsule radii are margins: GJK/EPA run on the core point / segment and
the radii are added at the end. The simplex sub-algorithm is the signed-volume method (Montanari,
Petrinic & Barbieri 2017, a robust form of Johnson's algorithm, Ericson 9.5.2): each sub-simplex is
projected on the axis/plane of largest extent and barycentric signs decide the Voronoi region,
so degenerate (flat, collinear, repeated) simplices fall through to their faces instead of
dividing by ~0.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from .jit import njit

from touche import tolerance as _tol

from . import kinds
from .posecheck import is_rigid_transform

# GJK stops when upper - lower bound of the distance <= GJK_RELATIVE * distance (van den Bergen's
# criterion), or when rounding stops its progress (then the gap must be within GJK_ACCEPT_RELATIVE
# * distance + tolerance). The criterion is relative on purpose: the gap also bounds the error
# of v's DIRECTION (the normal), by sqrt(2 gap / |v|) radians; an absolute tolerance term let a
# near-touching pair (distance 5e-10, tolerance 4e-12) stop with a normal 4 degrees off, which
# the contact manifold then used.
GJK_RELATIVE = _tol.RELATIVE
# EPA stops when the support gap along the closest face <= EPA_RELATIVE * depth + tolerance:
# 1e-12 is well inside the 1e-6 relative depth target and still reached in a few iterations.
EPA_RELATIVE = 1e-12
# Curved shapes (cylinders, cones, ellipsoids) converge slowly near 1e-12: at the iteration /
# vertex limit, or when rounding stops the progress (GJK: a repeated support point, a step that
# does not shorten v; EPA: a closest face that moves inwards), a result whose bound gap is within
# these relative tolerances is accepted as converged; a larger gap is reported (MAX_ITERATIONS /
# DEGENERATE). Both gaps are proven error bounds: GJK's |v| minus its best lower bound, EPA's
# support value along the face normal minus the face distance (the depth lies between them).
# Distances: 1e-10 relative. Depths: 1e-7 relative, ten times inside the 1e-6 target:
# EPA's polytope approximates a curved boundary by facets whose sagitta falls only with the
# square of the vertex spacing, so a ring of equally deep directions (the origin on a cylinder's
# axis) needs ~pi / sqrt(2 * 1e-9) ~ 7e4 vertices to prove 1e-9 but a few hundred for 1e-7.
GJK_ACCEPT_RELATIVE = 1e-10
EPA_ACCEPT_RELATIVE = 1e-7
# EPA's support-plane gap is measured to about EPA_ROUNDING * |support points| (a few roundings of
# a dot product); smaller gaps are noise
EPA_ROUNDING = 1e-14
GJK_MAX_ITERATIONS = 1000  # polytopes converge in < 30; curved shapes near contact need hundreds
EPA_MAX_VERTICES = 512  # curved shapes (two cylinders, cones) need several hundred
CAST_MAX_ITERATIONS_COUNT = 128  # Newton steps; a grazing (double-root) contact halves the gap per step
# shape-cast status when the advancement did not converge
CAST_MAX_ITERATIONS = kinds.TOI_MAX_ITERATIONS
# polyhedra with more vertices than this use hill climbing (9.5.4); below, a linear scan is faster.
# Measured (benchmarks/bench_gjk.py --support, hulls on a sphere, cold start at vertex 0): scan
# 34 / 70 / 229 / 768 ns, climb 105 / 137 / 195 / 340 ns at 50 / 100 / 300 / 1000 vertices (a
# scan streams; each climbing step is a chain of dependent loads and unpredictable branches), so
# the two cross near 250 vertices.
HILL_CLIMB_MIN_VERTICES = 256
# boolean GJK: the origin counts as touching the Minkowski difference when its lower distance
# bound is <= this times the largest support point seen (rounding of the support values)
INTERSECT_RELATIVE = 1e-12
# a EPA face / GJK simplex is degenerate below this relative squared size (rounding of a cross
# product of vectors of size s is ~1e-16 s^2)
DEGENERATE_SQ = 1e-28

# cylinder / cone: the radial part of a direction is treated as zero below this fraction of it
RADIAL_RELATIVE = 1e-12

WARM_SIZE = 27


# ----------------------------------------------------------------------------------------------
# support mappings (Ericson 3.10-3.11, 9.5.4), local frame, core only (no radius)
@njit(cache=True, nogil=True, inline="always")
def margin_of(kind, params):
    """The radius of the ball a shape's core is swept by (spheres, capsules, Rounded shapes)."""
    if kind == kinds.SPHERE or kind == kinds.CAPSULE or kind == kinds.ROUNDED:
        return params[0]
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def unwrap_rounded(kind, params):
    """(core kind, core params, radius) of a Rounded shape (kinds.ROUNDED_HEADER); any other
    shape is its own core with radius 0. The core's points are the shape's points."""
    if kind == kinds.ROUNDED:
        return int(params[1]), params[kinds.ROUNDED_HEADER:], params[0]
    return kind, params, 0.0


@njit(cache=True, nogil=True)
def is_convex_kind(kind):
    return (kind <= kinds.CAPSULE and kind != kinds.RAY) or (kinds.TRIANGLE <= kind < kinds.PLANE)


@njit(cache=True, nogil=True, inline="always")
def _brute_vertex(points, count, dx, dy, dz):
    best = 0
    best_value = points[0, 0] * dx + points[0, 1] * dy + points[0, 2] * dz
    for i in range(1, count):
        value = points[i, 0] * dx + points[i, 1] * dy + points[i, 2] * dz
        if value > best_value:
            best_value = value
            best = i
    return best


@njit(cache=True, nogil=True)
def _hill_climb(params, points, dx, dy, dz, start):
    """Ericson 9.5.4: walk the vertex adjacency to a vertex no neighbour improves (on a convex
    polytope a local maximum of a linear function is global). Steepest ascent."""
    nv = int(params[0])
    nf = int(params[1])
    offsets = 4 + nf
    neighbours = 5 + nf + nv
    v = start
    if v < 0 or v >= nv:
        v = 0
    best = points[v, 0] * dx + points[v, 1] * dy + points[v, 2] * dz
    for _ in range(nv):
        lo = int(params[offsets + v])
        hi = int(params[offsets + v + 1])
        if lo == hi:  # isolated vertex (inside a merged facet): no graph to climb
            return _brute_vertex(points, nv, dx, dy, dz)
        nxt = v
        for k in range(lo, hi):
            u = int(params[neighbours + k])
            value = points[u, 0] * dx + points[u, 1] * dy + points[u, 2] * dz
            if value > best:
                best = value
                nxt = u
        if nxt == v:
            return v
        v = nxt
    return v


# inline: the point, segment and polytope supports are a few lines and run twice per GJK / EPA
# iteration (box-box distance is 10-25 % slower through a call); the curved kinds' longer code
# stays a call (_support_round), so inlining this does not copy it into every call site
@njit(cache=True, nogil=True, inline="always")
def support_local(kind, params, points, dx, dy, dz, hints, slot):
    """Core support point (x, y, z) of a shape in its own frame for direction (dx, dy, dz).
    ``hints[slot]`` is the cached start vertex of a polyhedron (read and updated). A Rounded
    shape's core support is its core's (its radius is a margin, margin_of)."""
    kind, params, _ = unwrap_rounded(kind, params)
    if kind <= kinds.SPHERE:
        return points[0, 0], points[0, 1], points[0, 2]
    if kind == kinds.SEGMENT or kind == kinds.CAPSULE:
        ex = points[1, 0] - points[0, 0]
        ey = points[1, 1] - points[0, 1]
        ez = points[1, 2] - points[0, 2]
        if ex * dx + ey * dy + ez * dz > 0.0:
            return points[1, 0], points[1, 1], points[1, 2]
        return points[0, 0], points[0, 1], points[0, 2]
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        nv = int(params[0])
        if kind == kinds.POLYHEDRON and nv > HILL_CLIMB_MIN_VERTICES:
            i = _hill_climb(params, points, dx, dy, dz, hints[slot])
            hints[slot] = i
        else:
            i = _brute_vertex(points, nv, dx, dy, dz)
        return points[i, 0], points[i, 1], points[i, 2]
    return _support_round(kind, params, points, dx, dy, dz)


@njit(cache=True, nogil=True)
def _support_round(kind, params, points, dx, dy, dz):
    """support_local of a cylinder, cone, tapered capsule or ellipsoid."""
    if kind == kinds.CYLINDER or kind == kinds.CONE:
        ax = points[1, 0] - points[0, 0]
        ay = points[1, 1] - points[0, 1]
        az = points[1, 2] - points[0, 2]
        aa = ax * ax + ay * ay + az * az
        along = (dx * ax + dy * ay + dz * az) / aa
        rx = dx - along * ax
        ry = dy - along * ay
        rz = dz - along * az
        # second Gram-Schmidt pass: for d nearly along the axis the first pass leaves a radial
        # part dominated by round-off that is not perpendicular to the axis, and scaling it to
        # the radius would put the rim point off the cap plane
        again = (rx * ax + ry * ay + rz * az) / aa
        rx -= again * ax
        ry -= again * ay
        rz -= again * az
        rl = np.sqrt(rx * rx + ry * ry + rz * rz)
        dl = np.sqrt(dx * dx + dy * dy + dz * dz)
        sx = 0.0
        sy = 0.0
        sz = 0.0
        # below RADIAL_RELATIVE the cap centre is a support point to within radius * 1e-12
        if rl > RADIAL_RELATIVE * dl:
            scale = params[0] / rl
            sx = rx * scale
            sy = ry * scale
            sz = rz * scale
        if kind == kinds.CYLINDER:
            if along > 0.0:
                return points[1, 0] + sx, points[1, 1] + sy, points[1, 2] + sz
            return points[0, 0] + sx, points[0, 1] + sy, points[0, 2] + sz
        # cone: apex points[0], base centre points[1]; the best of apex and base rim point
        bx = points[1, 0] + sx
        by = points[1, 1] + sy
        bz = points[1, 2] + sz
        if points[0, 0] * dx + points[0, 1] * dy + points[0, 2] * dz >= bx * dx + by * dy + bz * dz:
            return points[0, 0], points[0, 1], points[0, 2]
        return bx, by, bz
    if kind == kinds.TAPERED_CAPSULE:
        # the hull of the balls (points[0], params[0]) and (points[1], params[1]): the better
        # ball's support point, c + r d / |d|
        length = np.sqrt(dx * dx + dy * dy + dz * dz)
        if length == 0.0:
            return points[0, 0], points[0, 1], points[0, 2]
        reach_a = points[0, 0] * dx + points[0, 1] * dy + points[0, 2] * dz + params[0] * length
        reach_b = points[1, 0] * dx + points[1, 1] * dy + points[1, 2] * dz + params[1] * length
        i = 1 if reach_b > reach_a else 0
        scale = params[i] / length
        return points[i, 0] + scale * dx, points[i, 1] + scale * dy, points[i, 2] + scale * dz
    # ellipsoid: points = [centre; semi-axis vectors a_i]; x = c + sum a_i (a_i.d) / sqrt(sum (a_i.d)^2)
    s0 = points[1, 0] * dx + points[1, 1] * dy + points[1, 2] * dz
    s1 = points[2, 0] * dx + points[2, 1] * dy + points[2, 2] * dz
    s2 = points[3, 0] * dx + points[3, 1] * dy + points[3, 2] * dz
    sq = s0 * s0 + s1 * s1 + s2 * s2
    x = points[0, 0]
    y = points[0, 1]
    z = points[0, 2]
    if sq > 0.0:
        inv = 1.0 / np.sqrt(sq)
        s0 *= inv
        s1 *= inv
        s2 *= inv
        x += s0 * points[1, 0] + s1 * points[2, 0] + s2 * points[3, 0]
        y += s0 * points[1, 1] + s1 * points[2, 1] + s2 * points[3, 1]
        z += s0 * points[1, 2] + s1 * points[2, 2] + s2 * points[3, 2]
    return x, y, z


@njit(cache=True, nogil=True, inline="always")
def _support_moved(kind, params, points, m, dx, dy, dz, hints, slot):
    """Support of a shape placed by rigid m: rotate the direction in, map the point out."""
    lx = m[0, 0] * dx + m[1, 0] * dy + m[2, 0] * dz
    ly = m[0, 1] * dx + m[1, 1] * dy + m[2, 1] * dz
    lz = m[0, 2] * dx + m[1, 2] * dy + m[2, 2] * dz
    x, y, z = support_local(kind, params, points, lx, ly, lz, hints, slot)
    return (
        m[0, 0] * x + m[0, 1] * y + m[0, 2] * z + m[0, 3],
        m[1, 0] * x + m[1, 1] * y + m[1, 2] * z + m[1, 3],
        m[2, 0] * x + m[2, 1] * y + m[2, 2] * z + m[2, 3],
    )


@njit(cache=True, nogil=True, inline="always")
def _support_pair(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex):
    """Support of A - B (A placed by m in B's frame) for direction d, written to simplex[row]:
    columns 0:3 = w = a - b, 3:6 = a (B's frame), 6:9 = b."""
    ax, ay, az = _support_moved(ka, pa, pta, m, dx, dy, dz, hints, 0)
    bx, by, bz = support_local(kb, pb, ptb, -dx, -dy, -dz, hints, 1)
    simplex[row, 0] = ax - bx
    simplex[row, 1] = ay - by
    simplex[row, 2] = az - bz
    simplex[row, 3] = ax
    simplex[row, 4] = ay
    simplex[row, 5] = az
    simplex[row, 6] = bx
    simplex[row, 7] = by
    simplex[row, 8] = bz



# EPA's setup (blowing a GJK simplex up to a tetrahedron) runs a handful of supports once per
# query: through this call rather than inlined, so that the support code is not copied four
# more times into _epa (whose compile time grows with its size); its main loop inlines
@njit(cache=True, nogil=True)
def _support_pair_called(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex):
    _support_pair(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex)

# ----------------------------------------------------------------------------------------------
# transforms
@njit(cache=True, nogil=True, inline="always")
def relative_into(ta, tb, m):
    """m[:3] = (inv(tb) @ ta)[:3] for rigid transforms (row 3 of m is not touched)."""
    for i in range(3):
        for j in range(3):
            m[i, j] = tb[0, i] * ta[0, j] + tb[1, i] * ta[1, j] + tb[2, i] * ta[2, j]
        m[i, 3] = (
            tb[0, i] * (ta[0, 3] - tb[0, 3]) + tb[1, i] * (ta[1, 3] - tb[1, 3]) + tb[2, i] * (ta[2, 3] - tb[2, 3])
        )


@njit(cache=True, nogil=True)
def relative_transform(ta, tb):
    """inv(tb) @ ta for rigid transforms."""
    out = np.zeros((4, 4))
    relative_into(ta, tb, out)
    out[3, 3] = 1.0
    return out


@njit(cache=True, nogil=True)
def _to_world_point(t, x, y, z):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z + t[i, 3]
    return out


@njit(cache=True, nogil=True)
def _to_world_vector(t, x, y, z):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z
    return out


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
def _shortest_cross(ijx, ijy, ijz, lij, jkx, jky, jkz, ljk, kix, kiy, kiz, lki):
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
def _plane_normal(s, i, j, k):
    """(s_j - s_i) x (s_k - s_i) from the triangle's two shortest edges (_shortest_cross)."""
    ijx = s[j, 0] - s[i, 0]
    ijy = s[j, 1] - s[i, 1]
    ijz = s[j, 2] - s[i, 2]
    jkx = s[k, 0] - s[j, 0]
    jky = s[k, 1] - s[j, 1]
    jkz = s[k, 2] - s[j, 2]
    kix = s[i, 0] - s[k, 0]
    kiy = s[i, 1] - s[k, 1]
    kiz = s[i, 2] - s[k, 2]
    return _shortest_cross(
        ijx, ijy, ijz, ijx * ijx + ijy * ijy + ijz * ijz,
        jkx, jky, jkz, jkx * jkx + jky * jky + jkz * jkz,
        kix, kiy, kiz, kix * kix + kiy * kiy + kiz * kiz,
    )


@njit(cache=True, nogil=True)
def _s2d_normal(s, i, j, k, nx, ny, nz):
    """Point of triangle s[i] s[j] s[k] closest to the origin, given the triangle's normal
    n = (s_j - s_i) x (s_k - s_i) (from _plane_normal): (li, lj, lk, vx, vy, vz, |v|^2).
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
def _s2d(s, i, j, k):
    """Point of triangle s[i] s[j] s[k] closest to the origin: (li, lj, lk, vx, vy, vz, |v|^2)."""
    nx, ny, nz = _plane_normal(s, i, j, k)
    return _s2d_normal(s, i, j, k, nx, ny, nz)


@njit(cache=True, nogil=True, inline="always")
def _det3(ax, ay, az, bx, by, bz, cx, cy, cz):
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
    n0x, n0y, n0z = _shortest_cross(e12x, e12y, e12z, l12, e23x, e23y, e23z, l23, -e13x, -e13y, -e13z, l13)
    c0 = s[1, 0] * n0x + s[1, 1] * n0y + s[1, 2] * n0z  # vol(o, 1, 2, 3)
    # face (0, 2, 3): edges 02, 23, 30
    n1x, n1y, n1z = _shortest_cross(e02x, e02y, e02z, l02, e23x, e23y, e23z, l23, -e03x, -e03y, -e03z, l03)
    c1 = -(s[0, 0] * n1x + s[0, 1] * n1y + s[0, 2] * n1z)  # vol(0, o, 2, 3)
    # face (0, 1, 3): edges 01, 13, 30
    n2x, n2y, n2z = _shortest_cross(e01x, e01y, e01z, l01, e13x, e13y, e13z, l13, -e03x, -e03y, -e03z, l03)
    c2 = s[0, 0] * n2x + s[0, 1] * n2y + s[0, 2] * n2z  # vol(0, 1, o, 3)
    # face (0, 1, 2): edges 01, 12, 20
    n3x, n3y, n3z = _shortest_cross(e01x, e01y, e01z, l01, e12x, e12y, e12z, l12, -e02x, -e02y, -e02z, l02)
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
def _reduce(s, count):
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
        l0, l1, l2, vx, vy, vz, _ = _s2d(s, 0, 1, 2)
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


# ----------------------------------------------------------------------------------------------
# GJK (Ericson 9.5)
GJK_CONVERGED = 0  # separated: |v| is the distance within the termination tolerance
GJK_CONTAINS = 1  # the origin is in the simplex (|v| <= tolerance): overlap or touch
GJK_LIMIT = 2  # iteration limit
GJK_STALLED = 3  # no progress while the bounds were still far apart


@njit(cache=True, nogil=True)
def _gjk(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tol, boolean, reach, max_iterations):
    """GJK on the Minkowski difference A - B (A placed by m in B's frame; cores only).

    ``s`` (4, 10) holds a start simplex of ``count`` rows (0 = cold start). Returns
    (outcome, count, vx, vy, vz, iterations, size2) with size2 the largest squared support point
    seen; on return ``s`` holds the final simplex with its barycentrics. With ``boolean`` it stops
    as soon as a plane separates the origin from A - B by more than ``reach`` (the margins)."""
    if count == 0:
        dx = m[0, 3] + 1e-3  # any start direction; the centre offset is usually a good one
        dy = m[1, 3]
        dz = m[2, 3]
        _support_pair(ka, pa, pta, m, kb, pb, ptb, -dx, -dy, -dz, hints, 0, s)
        count = 1
    count, vx, vy, vz = _reduce(s, count)
    vv = vx * vx + vy * vy + vz * vz
    size2 = 0.0
    for r in range(count):
        size2 = max(size2, s[r, 0] * s[r, 0] + s[r, 1] * s[r, 1] + s[r, 2] * s[r, 2])
    iterations = 0
    # best lower bound of the distance seen so far: every support point w in direction -v gives
    # dist >= v.w / |v|, whatever v is (van den Bergen's mu), so the bound gap |v| - lower only
    # shrinks even when one step's v is a little off (curved shapes near contact)
    lower = -np.inf
    while True:
        if count == 4 or vv <= tol * tol:
            return GJK_CONTAINS, count, vx, vy, vz, iterations, size2
        vlen = np.sqrt(vv)
        if iterations >= max_iterations:
            if vlen - lower <= GJK_ACCEPT_RELATIVE * vlen + tol:
                return GJK_CONVERGED, count, vx, vy, vz, iterations, size2
            return GJK_LIMIT, count, vx, vy, vz, iterations, size2
        iterations += 1
        row = count
        _support_pair(ka, pa, pta, m, kb, pb, ptb, -vx, -vy, -vz, hints, row, s)
        wx, wy, wz = s[row, 0], s[row, 1], s[row, 2]
        ww = wx * wx + wy * wy + wz * wz
        if ww > size2:
            size2 = ww
        vdotw = vx * wx + vy * wy + vz * wz
        if boolean and vdotw > (reach + INTERSECT_RELATIVE * np.sqrt(size2)) * vlen:
            return GJK_CONVERGED, count, vx, vy, vz, iterations, size2  # separating plane: disjoint
        lower = max(lower, vdotw / vlen)
        # upper bound |v| minus lower bound of the distance (van den Bergen)
        if vlen - lower <= GJK_RELATIVE * vlen:
            return GJK_CONVERGED, count, vx, vy, vz, iterations, size2
        duplicate = False
        for r in range(count):
            if s[r, 0] == wx and s[r, 1] == wy and s[r, 2] == wz:
                duplicate = True
        if duplicate:  # no new support point: as converged as rounding allows
            if vlen - lower <= GJK_ACCEPT_RELATIVE * vlen + tol:
                return GJK_CONVERGED, count, vx, vy, vz, iterations, size2
            return GJK_STALLED, count, vx, vy, vz, iterations, size2
        new_count, nx, ny, nz = _reduce(s, count + 1)
        nvv = nx * nx + ny * ny + nz * nz
        if nvv >= vv and new_count < 4:
            # no progress (rounding): the previous v stands; the simplex now holds the new one
            if vlen - lower <= GJK_ACCEPT_RELATIVE * vlen + tol:
                return GJK_CONVERGED, new_count, vx, vy, vz, iterations, size2
            return GJK_STALLED, new_count, vx, vy, vz, iterations, size2
        count = new_count
        vx, vy, vz, vv = nx, ny, nz, nvv


@njit(cache=True, nogil=True)
def _witness(s, count):
    """Witness points (A's and B's, B's frame) from the simplex barycentrics."""
    ax = 0.0
    ay = 0.0
    az = 0.0
    bx = 0.0
    by = 0.0
    bz = 0.0
    for r in range(count):
        lam = s[r, 9]
        ax += lam * s[r, 3]
        ay += lam * s[r, 4]
        az += lam * s[r, 5]
        bx += lam * s[r, 6]
        by += lam * s[r, 7]
        bz += lam * s[r, 8]
    return ax, ay, az, bx, by, bz


# ----------------------------------------------------------------------------------------------
# EPA (van den Bergen 2001; the polytope-expansion companion of Ericson 9.5)
#
# The expanding polytope is a closed triangle mesh with face adjacency, held in work buffers made
# by epa_buffers() (a batch makes them once per thread, not once per pair; nothing inside EPA
# allocates):
#   verts (EPA_MAX_VERTICES + 1, 9): support points, columns as the GJK simplex (w, a, b);
#   fnorm (EPA_MAX_FACES, 4): unit outward normal and plane offset (the origin's distance);
#   fint (EPA_MAX_FACES, 7): vertex indices (counter-clockwise seen from outside; edge e runs
#       from vertex e to vertex e + 1), the neighbour across each edge as 3 * face + its edge,
#       and a state: 0 alive, -1 free, > 0 the iteration that found the face visible;
#   free (EPA_MAX_FACES,): free face slots (dead faces are recycled, so the slot count stays
#       within the 2V - 4 faces of a convex polytope with V vertices);
#   stack (2 * EPA_MAX_FACES + 3, 2): the silhouette walk; horizon (EPA_MAX_FACES, 2): the
#       horizon edges in loop order; vslot (EPA_MAX_VERTICES + 1,): the new face starting at
#       each horizon vertex (stitching the new faces to each other).
# The visible region is found by the silhouette walk (a depth-first walk over face adjacency from
# the closest face, the recursive form of Bullet's / van den Bergen's horizon search written with
# an explicit stack), so one iteration costs O(visible faces) plus one scan for the closest face.
EPA_MAX_FACES = 2 * EPA_MAX_VERTICES + 64


@njit(cache=True, nogil=True)
def epa_buffers():
    """Fresh EPA work buffers (see above): (verts, fnorm, fint, free, stack, horizon, vslot)."""
    return (
        np.empty((EPA_MAX_VERTICES + 1, 9)),
        np.empty((EPA_MAX_FACES, 4)),
        np.empty((EPA_MAX_FACES, 7), dtype=np.int64),
        np.empty(EPA_MAX_FACES, dtype=np.int64),
        np.empty((2 * EPA_MAX_FACES + 3, 2), dtype=np.int64),
        np.empty((EPA_MAX_FACES, 2), dtype=np.int64),
        np.empty(EPA_MAX_VERTICES + 1, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _epa_face(verts, fnorm, fint, f, i, j, k):
    fint[f, 0] = i
    fint[f, 1] = j
    fint[f, 2] = k
    fint[f, 6] = 0
    ijx = verts[j, 0] - verts[i, 0]
    ijy = verts[j, 1] - verts[i, 1]
    ijz = verts[j, 2] - verts[i, 2]
    jkx = verts[k, 0] - verts[j, 0]
    jky = verts[k, 1] - verts[j, 1]
    jkz = verts[k, 2] - verts[j, 2]
    kix = verts[i, 0] - verts[k, 0]
    kiy = verts[i, 1] - verts[k, 1]
    kiz = verts[i, 2] - verts[k, 2]
    lij = ijx * ijx + ijy * ijy + ijz * ijz
    ljk = jkx * jkx + jky * jky + jkz * jkz
    lki = kix * kix + kiy * kiy + kiz * kiz
    # the normal from the face's two shortest edges (see _shortest_cross): near a curved contact
    # EPA's faces become small and thin, and the textbook e1 x e2 left their planes off by
    # ~1e-11 of the size, which broke the polytope's convexity before the gap criterion was met
    nx, ny, nz = _shortest_cross(ijx, ijy, ijz, lij, jkx, jky, jkz, ljk, kix, kiy, kiz, lki)
    nn = nx * nx + ny * ny + nz * nz
    scale = max(lij, ljk, lki)
    if nn <= DEGENERATE_SQ * scale * scale or nn == 0.0:
        # a sliver: never the closest face, never visible; only keeps the surface closed
        fnorm[f, 0] = 0.0
        fnorm[f, 1] = 0.0
        fnorm[f, 2] = 0.0
        fnorm[f, 3] = np.inf
        return
    inv = 1.0 / np.sqrt(nn)
    nx *= inv
    ny *= inv
    nz *= inv
    fnorm[f, 0] = nx
    fnorm[f, 1] = ny
    fnorm[f, 2] = nz
    fnorm[f, 3] = nx * verts[i, 0] + ny * verts[i, 1] + nz * verts[i, 2]


@njit(cache=True, nogil=True)
def _perpendicular(x, y, z):
    if abs(x) < 0.57:
        px, py, pz = 0.0, z, -y  # x-axis cross
    else:
        px, py, pz = -z, 0.0, x  # y-axis cross
    length = np.sqrt(px * px + py * py + pz * pz)
    if length == 0.0:
        return 0.0, 0.0, 1.0
    return px / length, py / length, pz / length


@njit(cache=True, nogil=True, inline="always")
def _dist2(verts, i, j):
    dx = verts[i, 0] - verts[j, 0]
    dy = verts[i, 1] - verts[j, 1]
    dz = verts[i, 2] - verts[j, 2]
    return dx * dx + dy * dy + dz * dz


@njit(cache=True, nogil=True, inline="always")
def _copy_row(verts, src, dst):
    for c in range(9):
        verts[dst, c] = verts[src, c]


@njit(cache=True, nogil=True)
def _epa_witness(verts, i, j, k, nx, ny, nz, depth):
    """A's and B's witness points: the origin's projection on face (i, j, k), barycentric."""
    px, py, pz = depth * nx, depth * ny, depth * nz
    ci = nx * ((verts[j, 1] - py) * (verts[k, 2] - pz) - (verts[j, 2] - pz) * (verts[k, 1] - py)) + ny * (
        (verts[j, 2] - pz) * (verts[k, 0] - px) - (verts[j, 0] - px) * (verts[k, 2] - pz)
    ) + nz * ((verts[j, 0] - px) * (verts[k, 1] - py) - (verts[j, 1] - py) * (verts[k, 0] - px))
    cj = nx * ((verts[k, 1] - py) * (verts[i, 2] - pz) - (verts[k, 2] - pz) * (verts[i, 1] - py)) + ny * (
        (verts[k, 2] - pz) * (verts[i, 0] - px) - (verts[k, 0] - px) * (verts[i, 2] - pz)
    ) + nz * ((verts[k, 0] - px) * (verts[i, 1] - py) - (verts[k, 1] - py) * (verts[i, 0] - px))
    ck = nx * ((verts[i, 1] - py) * (verts[j, 2] - pz) - (verts[i, 2] - pz) * (verts[j, 1] - py)) + ny * (
        (verts[i, 2] - pz) * (verts[j, 0] - px) - (verts[i, 0] - px) * (verts[j, 2] - pz)
    ) + nz * ((verts[i, 0] - px) * (verts[j, 1] - py) - (verts[i, 1] - py) * (verts[j, 0] - px))
    total = ci + cj + ck
    if total != 0.0:
        ci /= total
        cj /= total
        ck /= total
    else:
        ci, cj, ck = 1.0, 0.0, 0.0
    ax = ci * verts[i, 3] + cj * verts[j, 3] + ck * verts[k, 3]
    ay = ci * verts[i, 4] + cj * verts[j, 4] + ck * verts[k, 4]
    az = ci * verts[i, 5] + cj * verts[j, 5] + ck * verts[k, 5]
    bx = ci * verts[i, 6] + cj * verts[j, 6] + ck * verts[k, 6]
    by = ci * verts[i, 7] + cj * verts[j, 7] + ck * verts[k, 7]
    bz = ci * verts[i, 8] + cj * verts[j, 8] + ck * verts[k, 8]
    return ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def _epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tol, verts, fnorm, fint, free, stack, horizon, vslot):
    """Penetration depth of the cores by polytope expansion, from a GJK simplex that holds the
    origin (a point, segment or triangle is blown up to a tetrahedron first).

    Returns (ok, depth, nx, ny, nz, ax, ay, az, bx, by, bz, iterations) in B's frame: ``n`` the
    outward normal of A - B at its boundary point closest to the origin (= the direction B
    moves to separate), a / b the witness points. ok = 0 converged, 1 iteration/memory limit,
    2 degenerate (flat Minkowski difference: depth 0 along n)."""
    for r in range(count):
        for c in range(9):
            verts[r, c] = s[r, c]
    nverts = count
    # -- blow up to a tetrahedron -----------------------------------------------------------
    if nverts == 1:
        best = -1.0
        for axis in range(6):
            sign = 1.0 if axis < 3 else -1.0
            _support_pair_called(
                ka, pa, pta, m, kb, pb, ptb,
                sign if axis % 3 == 0 else 0.0, sign if axis % 3 == 1 else 0.0, sign if axis % 3 == 2 else 0.0,
                hints, 1, verts,
            )
            dd = _dist2(verts, 0, 1)
            if dd > best:
                best = dd
                _copy_row(verts, 1, 2)
        _copy_row(verts, 2, 1)
        nverts = 2
        if best <= 0.0:
            return 2, 0.0, 0.0, 0.0, 1.0, verts[0, 3], verts[0, 4], verts[0, 5], verts[0, 6], verts[0, 7], verts[0, 8], 0
    if nverts == 2:
        ex = verts[1, 0] - verts[0, 0]
        ey = verts[1, 1] - verts[0, 1]
        ez = verts[1, 2] - verts[0, 2]
        ux, uy, uz = _perpendicular(ex, ey, ez)
        vx_ = ey * uz - ez * uy
        vy_ = ez * ux - ex * uz
        vz_ = ex * uy - ey * ux
        best = -1.0
        for k in range(4):
            if k == 0:
                dx, dy, dz = ux, uy, uz
            elif k == 1:
                dx, dy, dz = -ux, -uy, -uz
            elif k == 2:
                dx, dy, dz = vx_, vy_, vz_
            else:
                dx, dy, dz = -vx_, -vy_, -vz_
            _support_pair_called(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, 2, verts)
            px = verts[2, 0] - verts[0, 0]
            py = verts[2, 1] - verts[0, 1]
            pz = verts[2, 2] - verts[0, 2]
            cx = ey * pz - ez * py
            cy = ez * px - ex * pz
            cz = ex * py - ey * px
            area = cx * cx + cy * cy + cz * cz
            if area > best:
                best = area
                _copy_row(verts, 2, 3)
        _copy_row(verts, 3, 2)
        nverts = 3
    if nverts == 3:
        e1x = verts[1, 0] - verts[0, 0]
        e1y = verts[1, 1] - verts[0, 1]
        e1z = verts[1, 2] - verts[0, 2]
        e2x = verts[2, 0] - verts[0, 0]
        e2y = verts[2, 1] - verts[0, 1]
        e2z = verts[2, 2] - verts[0, 2]
        nx = e1y * e2z - e1z * e2y
        ny = e1z * e2x - e1x * e2z
        nz = e1x * e2y - e1y * e2x
        nn = np.sqrt(nx * nx + ny * ny + nz * nz)
        if nn == 0.0:  # collinear after the blow-up: the difference is a segment (or a point)
            nx, ny, nz = _perpendicular(e1x, e1y, e1z)
            return 2, 0.0, nx, ny, nz, verts[0, 3], verts[0, 4], verts[0, 5], verts[0, 6], verts[0, 7], verts[0, 8], 0
        nx /= nn
        ny /= nn
        nz /= nn
        base = nx * verts[0, 0] + ny * verts[0, 1] + nz * verts[0, 2]
        _support_pair_called(ka, pa, pta, m, kb, pb, ptb, nx, ny, nz, hints, 3, verts)
        up = nx * verts[3, 0] + ny * verts[3, 1] + nz * verts[3, 2] - base
        _support_pair_called(ka, pa, pta, m, kb, pb, ptb, -nx, -ny, -nz, hints, 4, verts)
        down = base - (nx * verts[4, 0] + ny * verts[4, 1] + nz * verts[4, 2])
        size = np.sqrt(max(e1x * e1x + e1y * e1y + e1z * e1z, e2x * e2x + e2y * e2y + e2z * e2z))
        if max(up, down) <= tol + 1e-15 * size:
            # flat Minkowski difference (coplanar flat shapes): no depth along its normal
            lam0, lam1, lam2, _, _, _, _ = _s2d(verts, 0, 1, 2)
            ax = lam0 * verts[0, 3] + lam1 * verts[1, 3] + lam2 * verts[2, 3]
            ay = lam0 * verts[0, 4] + lam1 * verts[1, 4] + lam2 * verts[2, 4]
            az = lam0 * verts[0, 5] + lam1 * verts[1, 5] + lam2 * verts[2, 5]
            bx = lam0 * verts[0, 6] + lam1 * verts[1, 6] + lam2 * verts[2, 6]
            by = lam0 * verts[0, 7] + lam1 * verts[1, 7] + lam2 * verts[2, 7]
            bz = lam0 * verts[0, 8] + lam1 * verts[1, 8] + lam2 * verts[2, 8]
            return 2, 0.0, nx, ny, nz, ax, ay, az, bx, by, bz, 0
        if down > up:
            _copy_row(verts, 4, 3)
        nverts = 4
    # -- initial tetrahedron, faces outward ---------------------------------------------------
    volume = _det3(
        verts[1, 0] - verts[0, 0], verts[1, 1] - verts[0, 1], verts[1, 2] - verts[0, 2],
        verts[2, 0] - verts[0, 0], verts[2, 1] - verts[0, 1], verts[2, 2] - verts[0, 2],
        verts[3, 0] - verts[0, 0], verts[3, 1] - verts[0, 1], verts[3, 2] - verts[0, 2],
    )
    if volume > 0.0:  # make (0,1,2), (0,3,1), (1,3,2), (2,3,0) outward
        for c in range(9):
            tmp = verts[1, c]
            verts[1, c] = verts[2, c]
            verts[2, c] = tmp
    _epa_face(verts, fnorm, fint, 0, 0, 1, 2)
    _epa_face(verts, fnorm, fint, 1, 0, 3, 1)
    _epa_face(verts, fnorm, fint, 2, 1, 3, 2)
    _epa_face(verts, fnorm, fint, 3, 2, 3, 0)
    for f in range(4):  # every two faces of a tetrahedron share an edge (opposite directions)
        for e in range(3):
            u = fint[f, e]
            v = fint[f, (e + 1) % 3]
            for g in range(4):
                for k in range(3):
                    if fint[g, k] == v and fint[g, (k + 1) % 3] == u:
                        fint[f, 3 + e] = 3 * g + k
    nfaces = 4  # face slots in use (alive, dead or free)
    nfree = 0
    iterations = 0
    outcome = 1
    # rounding floor of the support-plane tests: ~eps * |w| per dot product (EPA_ROUNDING
    # allows a few of them); without it a caller's tolerance of 0 asked EPA for a gap below its
    # own rounding, and the sign tests of the silhouette walk then corrupted the polytope
    size2 = 0.0
    for r in range(4):
        size2 = max(size2, verts[r, 0] * verts[r, 0] + verts[r, 1] * verts[r, 1] + verts[r, 2] * verts[r, 2])
    # the face with the largest distance seen and its measured support gap: the closest-face
    # distance (the inscribed radius of the growing polytope) never decreases in exact
    # arithmetic, so a drop means rounding broke the polytope; EPA then stops and reports the
    # kept face, judged by its own gap
    bi, bj, bk = 0, 1, 2
    bnx, bny, bnz = fnorm[0, 0], fnorm[0, 1], fnorm[0, 2]
    best_d = -np.inf
    best_gap = np.inf
    while True:
        best = -1
        closest = np.inf
        for f in range(nfaces):
            if fint[f, 6] == 0 and fnorm[f, 3] < closest:
                closest = fnorm[f, 3]
                best = f
        if best < 0:  # every face degenerate: give up on depth
            outcome = 2
            break
        floor = EPA_ROUNDING * np.sqrt(size2)
        if best_d > floor and closest < best_d - floor:
            # the origin is inside and the inscribed radius shrank: rounding broke convexity,
            # keep the best face so far (while the origin is on or outside the polytope, which
            # a touching start allows, the closest signed face distance is not monotone)
            break
        if iterations >= 4 * EPA_MAX_VERTICES or nverts >= EPA_MAX_VERTICES:
            break
        iterations += 1
        new = nverts
        cnx, cny, cnz = fnorm[best, 0], fnorm[best, 1], fnorm[best, 2]
        _support_pair(ka, pa, pta, m, kb, pb, ptb, cnx, cny, cnz, hints, new, verts)
        wx, wy, wz = verts[new, 0], verts[new, 1], verts[new, 2]
        size2 = max(size2, wx * wx + wy * wy + wz * wz)
        gap = cnx * wx + cny * wy + cnz * wz - closest
        if closest >= best_d:
            best_d = closest
            best_gap = gap
            bi, bj, bk = fint[best, 0], fint[best, 1], fint[best, 2]
            bnx, bny, bnz = cnx, cny, cnz
        if gap <= EPA_RELATIVE * abs(closest) + tol + floor:
            outcome = 0
            break
        nverts += 1
        # silhouette walk: visible faces get state = iterations, the horizon edges are listed in
        # loop order (each as the surviving face and its edge towards the visible region)
        fint[best, 6] = iterations
        top = 0
        for e in range(2, -1, -1):
            code = fint[best, 3 + e]
            stack[top, 0] = code // 3
            stack[top, 1] = code % 3
            top += 1
        nh = 0
        broken = False
        while top > 0:
            top -= 1
            g = stack[top, 0]
            k = stack[top, 1]
            if fint[g, 6] != 0:
                continue  # already visible: an interior edge of the visible region
            if fnorm[g, 0] * wx + fnorm[g, 1] * wy + fnorm[g, 2] * wz - fnorm[g, 3] > 0.0:
                fint[g, 6] = iterations
                code = fint[g, 3 + (k + 2) % 3]
                stack[top, 0] = code // 3
                stack[top, 1] = code % 3
                top += 1
                code = fint[g, 3 + (k + 1) % 3]
                stack[top, 0] = code // 3
                stack[top, 1] = code % 3
                top += 1
            else:
                if nh >= horizon.shape[0]:
                    broken = True
                    break
                horizon[nh, 0] = g
                horizon[nh, 1] = k
                nh += 1
        # recycle the visible faces' slots
        for f in range(nfaces):
            if fint[f, 6] == iterations:
                fint[f, 6] = -1
                free[nfree] = f
                nfree += 1
        if broken or nh < 3 or nh > nfree + EPA_MAX_FACES - nfaces:
            break
        # one new face (a, b, new) per horizon edge b -> a of the surviving face; edge 0 of the
        # new face is glued to that face, edges 1 (b -> new) and 2 (new -> a) to the neighbours
        for h in range(nh):
            g = horizon[h, 0]
            k = horizon[h, 1]
            a = fint[g, (k + 1) % 3]
            b = fint[g, k]
            # (vslot is only trusted where it names a live face made in this iteration)
            previous = vslot[a]
            if 0 <= previous < nfaces and fint[previous, 2] == new and fint[previous, 0] == a and fint[previous, 6] == 0:
                broken = True  # a vertex twice on the horizon: not a simple loop
            if nfree > 0:
                nfree -= 1
                f = free[nfree]
            else:
                f = nfaces
                nfaces += 1
            _epa_face(verts, fnorm, fint, f, a, b, new)
            fint[f, 3] = 3 * g + k
            fint[g, 3 + k] = 3 * f
            vslot[a] = f
            horizon[h, 0] = f
        if not broken:
            for h in range(nh):
                f = horizon[h, 0]
                b = fint[f, 1]
                g = vslot[b]
                if not (0 <= g < nfaces and fint[g, 2] == new and fint[g, 0] == b and fint[g, 6] == 0):
                    broken = True
                    break
                fint[f, 4] = 3 * g + 2
                fint[g, 5] = 3 * f + 1
        if broken:  # rounding broke the polytope's topology: stop with the best face so far
            break
    if outcome == 1 and best_gap <= EPA_ACCEPT_RELATIVE * abs(best_d) + tol + EPA_ROUNDING * np.sqrt(size2):
        outcome = 0  # stopped at a limit or by rounding, but the kept face is within the accepted gap
    depth = best_d
    if not np.isfinite(depth):
        depth = 0.0
    ax, ay, az, bx, by, bz = _epa_witness(verts, bi, bj, bk, bnx, bny, bnz, depth)
    return outcome, max(depth, 0.0), bnx, bny, bnz, ax, ay, az, bx, by, bz, iterations


# ----------------------------------------------------------------------------------------------
# pair entry points
@njit(cache=True, nogil=True, inline="always")
def _status_of(signed, tol):
    if signed > tol:
        return kinds.GJK_SEPARATED
    if signed >= -tol:
        return kinds.GJK_TOUCHING
    return kinds.GJK_PENETRATING


@njit(cache=True, nogil=True)
def _load_warm(warm, m, s, hints):
    """Rebuild a warm-start simplex: the stored local support points of A and B, placed anew."""
    count = int(warm[0])
    if count < 0 or count > 4:
        count = 0
    for r in range(count):
        lx, ly, lz = warm[1 + 3 * r], warm[2 + 3 * r], warm[3 + 3 * r]
        ax = m[0, 0] * lx + m[0, 1] * ly + m[0, 2] * lz + m[0, 3]
        ay = m[1, 0] * lx + m[1, 1] * ly + m[1, 2] * lz + m[1, 3]
        az = m[2, 0] * lx + m[2, 1] * ly + m[2, 2] * lz + m[2, 3]
        bx, by, bz = warm[13 + 3 * r], warm[14 + 3 * r], warm[15 + 3 * r]
        s[r, 0] = ax - bx
        s[r, 1] = ay - by
        s[r, 2] = az - bz
        s[r, 3] = ax
        s[r, 4] = ay
        s[r, 5] = az
        s[r, 6] = bx
        s[r, 7] = by
        s[r, 8] = bz
    hints[0] = int(warm[25])
    hints[1] = int(warm[26])
    return count


@njit(cache=True, nogil=True)
def _store_warm(warm, m, s, count, hints):
    warm[0] = count
    for r in range(count):
        # back to A's local frame: R^T (a - t)
        dx = s[r, 3] - m[0, 3]
        dy = s[r, 4] - m[1, 3]
        dz = s[r, 5] - m[2, 3]
        warm[1 + 3 * r] = m[0, 0] * dx + m[1, 0] * dy + m[2, 0] * dz
        warm[2 + 3 * r] = m[0, 1] * dx + m[1, 1] * dy + m[2, 1] * dz
        warm[3 + 3 * r] = m[0, 2] * dx + m[1, 2] * dy + m[2, 2] * dz
        warm[13 + 3 * r] = s[r, 6]
        warm[14 + 3 * r] = s[r, 7]
        warm[15 + 3 * r] = s[r, 8]
    warm[25] = hints[0]
    warm[26] = hints[1]


@njit(cache=True, nogil=True, inline="always")
def _gjk_phase(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations, m, s, hints):
    """The GJK half of a distance query: relative placement, warm start in, GJK, warm start out.
    Returns (outcome, count, vx, vy, vz, iterations)."""
    relative_into(ta, tb, m)
    count = _load_warm(warm, m, s, hints)
    outcome, count, vx, vy, vz, iterations, _ = _gjk(
        ka, pa, pta, m, kb, pb, ptb, s, count, hints, tolerance, False, 0.0, max_iterations
    )
    _store_warm(warm, m, s, count, hints)
    return outcome, count, vx, vy, vz, iterations


@njit(cache=True, nogil=True)
def _world_result(ka, pa, kb, pb, tb, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations):
    """Core witness points (B's frame) pushed out by the margins, everything to the world:
    (signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations)."""
    ra = margin_of(ka, pa)
    rb = margin_of(kb, pb)
    ax += ra * nx
    ay += ra * ny
    az += ra * nz
    bx -= rb * nx
    by -= rb * ny
    bz -= rb * nz
    return (
        signed,
        tb[0, 0] * ax + tb[0, 1] * ay + tb[0, 2] * az + tb[0, 3],
        tb[1, 0] * ax + tb[1, 1] * ay + tb[1, 2] * az + tb[1, 3],
        tb[2, 0] * ax + tb[2, 1] * ay + tb[2, 2] * az + tb[2, 3],
        tb[0, 0] * bx + tb[0, 1] * by + tb[0, 2] * bz + tb[0, 3],
        tb[1, 0] * bx + tb[1, 1] * by + tb[1, 2] * bz + tb[1, 3],
        tb[2, 0] * bx + tb[2, 1] * by + tb[2, 2] * bz + tb[2, 3],
        tb[0, 0] * nx + tb[0, 1] * ny + tb[0, 2] * nz,
        tb[1, 0] * nx + tb[1, 1] * ny + tb[1, 2] * nz,
        tb[2, 0] * nx + tb[2, 1] * ny + tb[2, 2] * nz,
        status,
        iterations,
    )


@njit(cache=True, nogil=True)
def _separated_result(ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s):
    ax, ay, az, bx, by, bz = _witness(s, count)
    dist = np.sqrt(vx * vx + vy * vy + vz * vz)
    nx = -vx / dist
    ny = -vy / dist
    nz = -vz / dist
    signed = dist - margin_of(ka, pa) - margin_of(kb, pb)
    status = _status_of(signed, tolerance)
    if outcome == GJK_LIMIT:
        status = kinds.GJK_MAX_ITERATIONS
    elif outcome == GJK_STALLED:
        status = kinds.GJK_DEGENERATE
    return _world_result(ka, pa, kb, pb, tb, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations)


@njit(cache=True, nogil=True, inline="always")
def _overlap_result(ka, pa, kb, pb, tb, tolerance, iterations, epa_result):
    ok, depth, nx, ny, nz, ax, ay, az, bx, by, bz, epa_iterations = epa_result
    signed = -(depth + margin_of(ka, pa) + margin_of(kb, pb))
    status = _status_of(signed, tolerance)
    if ok == 1:
        status = kinds.GJK_MAX_ITERATIONS
    return _world_result(ka, pa, kb, pb, tb, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status,
                         iterations + epa_iterations)


@njit(cache=True, nogil=True)
def _distance_core(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations, m, s, hints,
                   verts, fnorm, fint, free, stack, horizon, vslot):
    """The whole distance query of one pair in caller-provided work buffers: ``m`` (4, 4),
    ``s`` (4, 10), ``hints`` (2,) int64 and the EPA buffers (epa_buffers()). ``warm`` is read
    and overwritten.

    Returns scalars (signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations): world
    points and normal, conventions of gjk_pair_distance."""
    outcome, count, vx, vy, vz, iterations = _gjk_phase(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations, m, s, hints
    )
    if outcome == GJK_CONTAINS:
        epa_result = _epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tolerance, verts, fnorm, fint, free, stack,
                          horizon, vslot)
        return _overlap_result(ka, pa, kb, pb, tb, tolerance, iterations, epa_result)
    return _separated_result(ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s)


@njit(cache=True, nogil=True)
def _distance_single(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations):
    """_distance_core for one pair: makes its own GJK buffers and the EPA buffers only when the
    cores overlap (a separated single query allocates 3 small arrays, not 10)."""
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    outcome, count, vx, vy, vz, iterations = _gjk_phase(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations, m, s, hints
    )
    if outcome == GJK_CONTAINS:
        verts, fnorm, fint, free, stack, horizon, vslot = epa_buffers()
        epa_result = _epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tolerance, verts, fnorm, fint, free, stack,
                          horizon, vslot)
        return _overlap_result(ka, pa, kb, pb, tb, tolerance, iterations, epa_result)
    return _separated_result(ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s)


@njit(cache=True, nogil=True)
def _vector3(x, y, z):
    out = np.empty(3)
    out[0] = x
    out[1] = y
    out[2] = z
    return out


@njit(cache=True, nogil=True)
def gjk_pair_distance_warm(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm):
    """Signed distance of a convex pair by GJK (+ EPA when the cores overlap), warm-started from
    and writing back ``warm`` (see the module doc for both conventions)."""
    return gjk_pair_distance_limited(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, GJK_MAX_ITERATIONS)


@njit(cache=True, nogil=True)
def gjk_pair_distance_limited(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations):
    """gjk_pair_distance_warm with an explicit GJK iteration limit (tests of status honesty)."""
    signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = _distance_single(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations
    )
    return signed, _vector3(ax, ay, az), _vector3(bx, by, bz), _vector3(nx, ny, nz), status, iterations


@njit(cache=True, nogil=True)
def gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """Signed distance of a convex pair (cold start); see the module doc."""
    warm = np.zeros(WARM_SIZE)
    return gjk_pair_distance_warm(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm)


@njit(cache=True, nogil=True)
def gjk_pair_separation(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """The GJK half of gjk_pair_distance: ``(True, signed, point_a, point_b, normal)``, exactly
    what gjk_pair_distance returns, when its status would be SEPARATED; otherwise ``(False, NaN,
    NaN points)`` without running EPA -- for callers that find an overlap's depth another way
    (the SAT depth of small polytopes) and would discard EPA's."""
    warm = np.zeros(WARM_SIZE)
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    outcome, count, vx, vy, vz, iterations = _gjk_phase(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, GJK_MAX_ITERATIONS, m, s, hints
    )
    if outcome != GJK_CONTAINS:
        signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, _ = _separated_result(
            ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s
        )
        if status == kinds.SEPARATED:
            return True, signed, _vector3(ax, ay, az), _vector3(bx, by, bz), _vector3(nx, ny, nz)
    unknown = _vector3(np.nan, np.nan, np.nan)
    return False, np.nan, unknown, unknown, unknown


@njit(cache=True, nogil=True)
def _intersects_core(ka, pa, pta, ta, kb, pb, ptb, tb, m, s, hints):
    relative_into(ta, tb, m)
    hints[0] = 0
    hints[1] = 0
    reach = margin_of(ka, pa) + margin_of(kb, pb)
    outcome, count, vx, vy, vz, iterations, size2 = _gjk(ka, pa, pta, m, kb, pb, ptb, s, 0, hints, 0.0, True, reach, GJK_MAX_ITERATIONS)
    if outcome == GJK_CONTAINS:
        return True
    # rounding scale: the support points of A and B themselves, not only their differences (two
    # shapes touching at a vertex give w ~ 1e-16 after one step, while a and b are ~1)
    for r in range(count):
        size2 = max(size2, s[r, 3] * s[r, 3] + s[r, 4] * s[r, 4] + s[r, 5] * s[r, 5],
                    s[r, 6] * s[r, 6] + s[r, 7] * s[r, 7] + s[r, 8] * s[r, 8])
    vlen = np.sqrt(vx * vx + vy * vy + vz * vz)
    return vlen <= reach + INTERSECT_RELATIVE * np.sqrt(size2)


@njit(cache=True, nogil=True)
def gjk_pair_intersects(ka, pa, pta, ta, kb, pb, ptb, tb):
    """Closed-set overlap of a convex pair by boolean GJK (early out on a separating plane)."""
    return _intersects_core(ka, pa, pta, ta, kb, pb, ptb, tb, np.empty((4, 4)), np.empty((4, 10)), np.zeros(2, dtype=np.int64))


# ----------------------------------------------------------------------------------------------
# distance bounds: safety margins and certified lower bounds (issue 19)
#
# GJK keeps an upper bound |v| and a lower bound max(v.w / |v|) of the core distance at every
# step (van den Bergen's mu, as in _gjk); a margin test or a lower-bound query needs no more than
# those two numbers, so it stops long before the distance converges:
#   1. margin test (stop_below = margin, relative_gap = inf): stop as soon as the upper bound
#      is <= margin (within) or the lower bound > margin (beyond);
#   2. lower bound (stop_below = 0, relative_gap = g): stop when the cores are proven to meet
#      (the bound is 0) or the lower bound is positive and within g of the upper bound.
# The radii of spheres and capsules are margins here as everywhere in this file: the loop runs
# on the cores and subtracts the radii from both bounds.
@njit(cache=True, nogil=True)
def gjk_distance_bounds(ka, pa, pta, ta, kb, pb, ptb, tb, stop_below, relative_gap):
    """``(lower, upper, rounding)``: bounds of the distance of a convex pair (finite shapes),
    lower >= 0, found by GJK and stopped by the rule above; ``rounding`` is the scale of the
    rounding of both bounds (INTERSECT_RELATIVE x the largest support point seen), for a caller
    that must decide when neither stop was reached (iteration limit, rounding stall)."""
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    relative_into(ta, tb, m)
    reach = margin_of(ka, pa) + margin_of(kb, pb)
    _support_pair_called(ka, pa, pta, m, kb, pb, ptb, -(m[0, 3] + 1e-3), -m[1, 3], -m[2, 3], hints, 0, s)
    count, vx, vy, vz = _reduce(s, 1)
    vv = vx * vx + vy * vy + vz * vz
    size2 = s[0, 0] * s[0, 0] + s[0, 1] * s[0, 1] + s[0, 2] * s[0, 2]
    lower = 0.0
    for _ in range(GJK_MAX_ITERATIONS):
        if count == 4 or vv == 0.0:  # the origin is in A - B: the cores meet
            return 0.0, 0.0, INTERSECT_RELATIVE * np.sqrt(size2)
        vlen = np.sqrt(vv)
        upper = vlen - reach
        if upper <= stop_below:
            return max(lower - reach, 0.0), max(upper, 0.0), INTERSECT_RELATIVE * np.sqrt(size2)
        _support_pair_called(ka, pa, pta, m, kb, pb, ptb, -vx, -vy, -vz, hints, count, s)
        wx, wy, wz = s[count, 0], s[count, 1], s[count, 2]
        size2 = max(size2, wx * wx + wy * wy + wz * wz)
        lower = max(lower, (vx * wx + vy * wy + vz * wz) / vlen)
        bound = lower - reach
        if bound > stop_below and upper - bound <= relative_gap * upper:
            return bound, upper, INTERSECT_RELATIVE * np.sqrt(size2)
        duplicate = False
        for r in range(count):
            if s[r, 0] == wx and s[r, 1] == wy and s[r, 2] == wz:
                duplicate = True
        if duplicate:  # no new support point: the bounds are as close as rounding allows
            break
        new_count, nx, ny, nz = _reduce(s, count + 1)
        nvv = nx * nx + ny * ny + nz * nz
        if nvv >= vv and new_count < 4:  # no progress (rounding)
            break
        count = new_count
        vx, vy, vz, vv = nx, ny, nz, nvv
    return max(lower - reach, 0.0), max(np.sqrt(vv) - reach, 0.0), INTERSECT_RELATIVE * np.sqrt(size2)


# ----------------------------------------------------------------------------------------------
# shape cast: conservative advancement on the Minkowski difference (Ericson 9.5.7)
@njit(cache=True, nogil=True)
def gjk_shape_cast(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance):
    """First time of contact of two convex shapes translating with world velocities va, vb.

    In B's frame A translates by -r t (r = vb - va), so the signed distance is
    d(t) = dist(0, D - r t) - margins with D = A - B: a convex function of t (the distance to a
    convex set along a line). Conservative advancement steps t += d / (-d'), d' = n . r from
    the GJK normal n; on a convex function this Newton step never passes the first root, is exact
    in one step for a face contact and converges quadratically on smooth ones. d' >= 0 means d
    never decreases again: a miss. Each step's GJK is warm-started with the previous simplex."""
    m = relative_transform(ta, tb)
    rwx = vb[0] - va[0]
    rwy = vb[1] - va[1]
    rwz = vb[2] - va[2]
    rx = tb[0, 0] * rwx + tb[1, 0] * rwy + tb[2, 0] * rwz
    ry = tb[0, 1] * rwx + tb[1, 1] * rwy + tb[2, 1] * rwz
    rz = tb[0, 2] * rwx + tb[1, 2] * rwy + tb[2, 2] * rwz
    ra = margin_of(ka, pa)
    reach = ra + margin_of(kb, pb)
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    mt = m.copy()
    t = 0.0
    count = 0
    nx = np.nan
    ny = np.nan
    nz = np.nan
    status = CAST_MAX_ITERATIONS
    for _ in range(CAST_MAX_ITERATIONS_COUNT):
        outcome, count, vx, vy, vz, iterations, size2 = _gjk(
            ka, pa, pta, mt, kb, pb, ptb, s, count, hints, tolerance, False, 0.0, GJK_MAX_ITERATIONS
        )
        if outcome == GJK_CONTAINS:
            status = kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING
            break
        core = np.sqrt(vx * vx + vy * vy + vz * vz)
        nx = -vx / core
        ny = -vy / core
        nz = -vz / core
        gap = core - reach
        if gap <= tolerance:
            status = kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING
            break
        # GJK_LIMIT / GJK_STALLED (curved shapes near contact): |v| is an upper bound within
        # ~1e-6 relative of the distance; stepping with it may pass the contact by that much of
        # the current gap, which the next step then reports as a HIT (time late by at most
        # 1e-6 * gap / speed). Non-convergence of the whole advancement is still reported.
        rate = nx * rx + ny * ry + nz * rz
        if rate >= 0.0:
            status = kinds.MISS
            break
        step = gap / -rate
        t += step
        if t > t_max:
            status = kinds.MISS
            break
        # move A by -r * step in B's frame; the simplex's A points move with it
        mt[0, 3] = m[0, 3] - rx * t
        mt[1, 3] = m[1, 3] - ry * t
        mt[2, 3] = m[2, 3] - rz * t
        for r in range(count):
            s[r, 3] -= rx * step
            s[r, 4] -= ry * step
            s[r, 5] -= rz * step
            s[r, 0] = s[r, 3] - s[r, 6]
            s[r, 1] = s[r, 4] - s[r, 7]
            s[r, 2] = s[r, 5] - s[r, 8]
    if status == kinds.MISS:
        nan = np.full(3, np.nan)
        return kinds.MISS, np.inf, nan, nan.copy()
    # A's core witness (B's frame at time t) pushed out by A's margin, then to the world at t
    ax, ay, az, bx, by, bz = _witness(s, count)
    normal = _to_world_vector(tb, nx, ny, nz)
    point = _to_world_point(tb, ax, ay, az)
    for i in range(3):
        point[i] += vb[i] * t
        if normal[i] == normal[i]:
            point[i] += ra * normal[i]
    return status, t, point, normal


# ray cast against a support mapping: a point cast against the shape (Ericson 9.5.7); the
# advancement stops this close (relative to the shape's extent and the origin's distance)
RAY_RELATIVE = 1e-13


@njit(cache=True, nogil=True)
def local_box(kind, params, points):
    """[min (3), max (3)] of a finite convex shape in its frame, from six support points (exact
    for any support mapping; the margin included)."""
    box = np.empty(6)
    hints = np.zeros(1, dtype=np.int64)
    margin = margin_of(kind, params)
    for axis in range(3):
        for side in range(2):
            sign = 1.0 if side == 1 else -1.0
            x, y, z = support_local(kind, params, points, sign if axis == 0 else 0.0, sign if axis == 1 else 0.0,
                                    sign if axis == 2 else 0.0, hints, 0)
            value = x if axis == 0 else (y if axis == 1 else z)
            box[3 * side + axis] = value + sign * margin
    return box


@njit(cache=True, nogil=True)
def gjk_raycast(kind, params, points, o, d, t_max, solid):
    """The ray o + t d (unit d, the shape's frame, t <= t_max) against a finite convex shape known
    by its support mapping: ``(hit, t, outward normal)`` like the closed forms of ray.py. The
    entry is the first contact of the point o moving along d (gjk_shape_cast). An origin inside
    (or on) the shape hits at t = 0 with a zero normal when ``solid``; otherwise the exit is the
    entry of the reversed ray started beyond the shape."""
    box = local_box(kind, params, points)
    half = 0.0
    reach = 0.0
    for i in range(3):
        half += (0.5 * (box[3 + i] - box[i])) ** 2
        reach += (0.5 * (box[3 + i] + box[i]) - o[i]) ** 2
    half = np.sqrt(half)
    reach = np.sqrt(reach)  # origin to the box centre
    tolerance = RAY_RELATIVE * (half + reach + abs(o[0]) + abs(o[1]) + abs(o[2]))
    identity = np.eye(4)
    start = np.empty((1, 3))
    no_params = np.zeros(0)
    still = np.zeros(3)
    for i in range(3):
        start[0, i] = o[i]
    status, t, _, normal = gjk_shape_cast(kinds.POINT, no_params, start, identity, d, kind, params, points,
                                          identity, still, t_max, tolerance)
    if status == kinds.MISS:
        return False, np.inf, np.zeros(3)
    if status != kinds.ALREADY_TOUCHING:
        return True, t, -normal
    if solid:
        return True, 0.0, np.zeros(3)
    far = reach + 2.0 * half + tolerance
    back = np.empty(3)
    for i in range(3):
        start[0, i] = o[i] + far * d[i]
        back[i] = -d[i]
    status, t_back, _, normal = gjk_shape_cast(kinds.POINT, no_params, start, identity, back, kind, params, points,
                                               identity, still, far, tolerance)
    exit_t = far - t_back
    if status == kinds.MISS or status == kinds.ALREADY_TOUCHING or not exit_t <= t_max:
        return False, np.inf, np.zeros(3)
    return True, max(exit_t, 0.0), -normal


# ----------------------------------------------------------------------------------------------
# batch drivers: serial loops over pairs [lo, hi) (touche._parallel.run hands each thread chunks);
# a chunk makes its work buffers (GJK simplex, relative transform, EPA polytope) once and runs its
# pairs through them
@njit(cache=True, nogil=True)
def gjk_distance_many(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance,
                      out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations, lo, hi):
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    warm = np.zeros(WARM_SIZE)
    verts, fnorm, fint, free, stack, horizon, vslot = epa_buffers()
    for i in range(lo, hi):
        warm[0] = 0.0  # cold start: no simplex, hill climbing from vertex 0
        warm[25] = 0.0
        warm[26] = 0.0
        r = _distance_core(
            ka, pa, pta, ta[i * step_a], kb, pb, ptb, tb[i * step_b], tolerance, warm, GJK_MAX_ITERATIONS,
            m, s, hints, verts, fnorm, fint, free, stack, horizon, vslot,
        )
        _store_row(r, i, out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations)


@njit(cache=True, nogil=True)
def _store_row(r, i, out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations):
    out_signed[i] = r[0]
    out_point_a[i, 0] = r[1]
    out_point_a[i, 1] = r[2]
    out_point_a[i, 2] = r[3]
    out_point_b[i, 0] = r[4]
    out_point_b[i, 1] = r[5]
    out_point_b[i, 2] = r[6]
    out_normal[i, 0] = r[7]
    out_normal[i, 1] = r[8]
    out_normal[i, 2] = r[9]
    out_status[i] = r[10]
    out_iterations[i] = r[11]


@njit(cache=True, nogil=True)
def gjk_distance_warm_many(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm,
                           out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations, lo, hi):
    """As gjk_distance_many with one warm-start token per pair: warm (n, WARM_SIZE), in/out."""
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    verts, fnorm, fint, free, stack, horizon, vslot = epa_buffers()
    for i in range(lo, hi):
        r = _distance_core(
            ka, pa, pta, ta[i * step_a], kb, pb, ptb, tb[i * step_b], tolerance, warm[i], GJK_MAX_ITERATIONS,
            m, s, hints, verts, fnorm, fint, free, stack, horizon, vslot,
        )
        _store_row(r, i, out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations)


@njit(cache=True, nogil=True)
def gjk_intersects_many(ka, pa, pta, ta, kb, pb, ptb, tb, out, lo, hi):
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    m = np.empty((4, 4))
    s = np.empty((4, 10))
    hints = np.zeros(2, dtype=np.int64)
    for i in range(lo, hi):
        out[i] = _intersects_core(ka, pa, pta, ta[i * step_a], kb, pb, ptb, tb[i * step_b], m, s, hints)


@njit(cache=True, nogil=True)
def gjk_shape_cast_many(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance,
                        out_status, out_t, out_point, out_normal, lo, hi):
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    step_va = 1 if va.shape[0] > 1 else 0
    step_vb = 1 if vb.shape[0] > 1 else 0
    for i in range(lo, hi):
        status, t, point, normal = gjk_shape_cast(
            ka, pa, pta, ta[i * step_a], va[i * step_va],
            kb, pb, ptb, tb[i * step_b], vb[i * step_vb], t_max, tolerance,
        )
        out_status[i] = status
        out_t[i] = t
        out_point[i] = point
        out_normal[i] = normal


# ----------------------------------------------------------------------------------------------
# single-pair entries for the public layer: fill a buffer (no boxing of result arrays)
INVALID_POSE_A = -3  # = batch.INVALID_POSE_A (a raw pose array is not a rigid transform)
INVALID_POSE_B = -4


@njit(cache=True, nogil=True)
def gjk_distance_into(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, out):
    """gjk_pair_distance_warm writing ``out`` (11,) = (signed, point_a, point_b, normal,
    iterations); returns the GJK status."""
    r = _distance_single(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, GJK_MAX_ITERATIONS)
    signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = r
    out[0] = signed
    out[1] = ax
    out[2] = ay
    out[3] = az
    out[4] = bx
    out[5] = by
    out[6] = bz
    out[7] = nx
    out[8] = ny
    out[9] = nz
    out[10] = iterations
    return status


@njit(cache=True, nogil=True)
def gjk_distance_checked_into(ka, pa, pta, scale_a, ta, kb, pb, ptb, scale_b, tb, warm, out):
    """The single-pair fast path of convex.gjk: checks the raw poses here (INVALID_POSE_A / _B
    when one is not a rigid transform; Python then names the problem), computes the touching
    tolerance of convex._tolerance_of, then runs gjk_distance_into."""
    if not is_rigid_transform(ta):
        return INVALID_POSE_A
    if not is_rigid_transform(tb):
        return INVALID_POSE_B
    reach = 0.0
    for i in range(3):
        reach = max(reach, abs(ta[i, 3]), abs(tb[i, 3]))
    tolerance = _tol.ABSOLUTE + _tol.RELATIVE * (max(scale_a, scale_b) + reach)
    return gjk_distance_into(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, out)


@njit(cache=True, nogil=True)
def gjk_shape_cast_into(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance, out):
    """gjk_shape_cast writing ``out`` (7,) = (t, point, normal); returns the status."""
    status, t, point, normal = gjk_shape_cast(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance)
    out[0] = t
    for i in range(3):
        out[1 + i] = point[i]
        out[4 + i] = normal[i]
    return status
