"""Support mappings of every convex kind (Ericson 3.10-3.11; hill climbing with a cached start
vertex, 9.5.4-9.5.5), in a shape's own frame, and the frame helpers GJK, EPA and the casts share.

``support_local(kind, params, points, dx, dy, dz, hints, slot)`` is the one support mapping of the
kernels: the CORE's support point (spheres, capsules and Rounded shapes add their radius as a
margin, ``margin_of``; ``unwrap_rounded`` gives a Rounded shape's core). A new convex kind known
by its support mapping needs its branch in ``_support_round`` and nothing else here
(docs/KERNELS.md, "Adding a convex shape"). ``support_pair`` writes one support point of the
Minkowski difference A - B (A moved into B's frame by ``m``) into a simplex row.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.base import kinds  # noqa: E402
# polyhedra with more vertices than this use hill climbing (9.5.4); below, a linear scan is faster.
# Measured (benchmarks/bench_gjk.py --support, hulls on a sphere, cold start at vertex 0): scan
# 34 / 70 / 229 / 768 ns, climb 105 / 137 / 195 / 340 ns at 50 / 100 / 300 / 1000 vertices (a
# scan streams; each climbing step is a chain of dependent loads and unpredictable branches), so
# the two cross near 250 vertices.
HILL_CLIMB_MIN_VERTICES = 256

# cylinder / cone: the radial part of a direction is treated as zero below this fraction of it
RADIAL_RELATIVE = 1e-12


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
def store_support_row(simplex, row, ax, ay, az, bx, by, bz):
    """simplex[row] = (a - b, a, b): the layout of a support point of A - B (support_pair)."""
    simplex[row, 0] = ax - bx
    simplex[row, 1] = ay - by
    simplex[row, 2] = az - bz
    simplex[row, 3] = ax
    simplex[row, 4] = ay
    simplex[row, 5] = az
    simplex[row, 6] = bx
    simplex[row, 7] = by
    simplex[row, 8] = bz


@njit(cache=True, nogil=True, inline="always")
def support_pair(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex):
    """Support of A - B (A placed by m in B's frame) for direction d, written to simplex[row]:
    columns 0:3 = w = a - b, 3:6 = a (B's frame), 6:9 = b."""
    ax, ay, az = _support_moved(ka, pa, pta, m, dx, dy, dz, hints, 0)
    bx, by, bz = support_local(kb, pb, ptb, -dx, -dy, -dz, hints, 1)
    store_support_row(simplex, row, ax, ay, az, bx, by, bz)



# EPA's setup (blowing a GJK simplex up to a tetrahedron) runs a handful of supports once per
# query: through this call rather than inlined, so that the support code is not copied four
# more times into epa (whose compile time grows with its size); its main loop inlines
@njit(cache=True, nogil=True)
def support_pair_called(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex):
    support_pair(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, row, simplex)

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
def to_world_point(t, x, y, z):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z + t[i, 3]
    return out


@njit(cache=True, nogil=True)
def to_world_vector(t, x, y, z):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z
    return out


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
