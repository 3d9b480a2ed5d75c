"""GJK distance and boolean for any two convex shapes, with EPA's penetration depth.

Seeds: Ericson 9.5 (GJK), 9.5.2-9.5.3 (simplex sub-algorithm: simplex.py), 9.5.4-9.5.5 (hill
climbing with a cached start vertex: support.py), 3.10-3.11 (Minkowski sums and support
mappings: support.py). EPA is epa.py; casting (9.5.7: shape casts and rays) is gjk_cast.py.

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
``gjk_cast.gjk_shape_cast(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance)``
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
``gjk_cast.gjk_shape_cast_many(ka, pa, pta, ta, va (n|1,3), kb, pb, ptb, tb, vb (n|1,3), t_max, tolerance,
    out_status (n,) int8, out_t (n,), out_point (n,3), out_normal (n,3))``.

Single-pair entries for the public layer: ``gjk_distance_into(..., tolerance, warm, out (11,))``
and ``gjk_distance_checked_into(ka, pa, pta, scale_a, ta, kb, pb, ptb, scale_b, tb, warm, out)``
(checks the raw poses and computes convex's touching tolerance itself; returns the status or
INVALID_POSE_A / _B).

Cost model: nothing allocates per pair in the batch drivers. A batch is split into chunks
(touche._parallel.run) that each make their work buffers once (GJK simplex, relative transform, EPA
polytope: ``epa_buffers()``) and run their pairs through ``_distance_core``; the single-pair
entries (``distance_single``) allocate the EPA buffers only when the cores overlap. The hot
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
from touche._kernels.base.jit import njit

from touche import tolerance as _tol

from touche._kernels.base import kinds
from touche._kernels.base.posecheck import is_rigid_transform
from touche._kernels.convex.support import margin_of, relative_into, store_support_row, support_pair  # noqa: E402
from touche._kernels.convex.support import support_pair_called  # noqa: E402
from touche._kernels.convex.simplex import reduce_simplex  # noqa: E402
from touche._kernels.convex.epa import epa, epa_buffers  # noqa: E402

# GJK stops when upper - lower bound of the distance <= GJK_RELATIVE * distance (van den Bergen's
# criterion), or when rounding stops its progress (then the gap must be within GJK_ACCEPT_RELATIVE
# * distance + tolerance). The criterion is relative on purpose: the gap also bounds the error
# of v's DIRECTION (the normal), by sqrt(2 gap / |v|) radians; an absolute tolerance term let a
# near-touching pair (distance 5e-10, tolerance 4e-12) stop with a normal 4 degrees off, which
# the contact manifold then used.
GJK_RELATIVE = _tol.RELATIVE
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
GJK_MAX_ITERATIONS = 1000  # polytopes converge in < 30; curved shapes near contact need hundreds
# boolean GJK: the origin counts as touching the Minkowski difference when its lower distance
# bound is <= this times the largest support point seen (rounding of the support values)
INTERSECT_RELATIVE = 1e-12

WARM_SIZE = 27


# ----------------------------------------------------------------------------------------------
# GJK (Ericson 9.5)
GJK_CONVERGED = 0  # separated: |v| is the distance within the termination tolerance
GJK_CONTAINS = 1  # the origin is in the simplex (|v| <= tolerance): overlap or touch
GJK_LIMIT = 2  # iteration limit
GJK_STALLED = 3  # no progress while the bounds were still far apart
GJK_BEYOND = 4  # ``boolean``: a support plane put the cores more than ``reach`` apart (stopped there)


@njit(cache=True, nogil=True)
def run_gjk(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tol, boolean, reach, max_iterations):
    """GJK on the Minkowski difference A - B (A placed by m in B's frame; cores only).

    ``s`` (4, 10) holds a start simplex of ``count`` rows (0 = cold start). Returns
    (outcome, count, vx, vy, vz, iterations, size2) with size2 the largest squared support point
    seen; on return ``s`` holds the final simplex with its barycentrics. With ``boolean`` it stops
    as soon as a plane separates the origin from A - B by more than ``reach`` (the margins)."""
    if count == 0:
        dx = m[0, 3] + 1e-3  # any start direction; the centre offset is usually a good one
        dy = m[1, 3]
        dz = m[2, 3]
        support_pair(ka, pa, pta, m, kb, pb, ptb, -dx, -dy, -dz, hints, 0, s)
        count = 1
    count, vx, vy, vz = reduce_simplex(s, count)
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
        support_pair(ka, pa, pta, m, kb, pb, ptb, -vx, -vy, -vz, hints, row, s)
        wx, wy, wz = s[row, 0], s[row, 1], s[row, 2]
        ww = wx * wx + wy * wy + wz * wz
        if ww > size2:
            size2 = ww
        vdotw = vx * wx + vy * wy + vz * wz
        if boolean and vdotw > (reach + INTERSECT_RELATIVE * np.sqrt(size2)) * vlen:
            return GJK_BEYOND, count, vx, vy, vz, iterations, size2  # separating plane: disjoint
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
        new_count, nx, ny, nz = reduce_simplex(s, count + 1)
        nvv = nx * nx + ny * ny + nz * nz
        if nvv >= vv and new_count < 4:
            # no progress (rounding): the previous v stands; the simplex now holds the new one
            if vlen - lower <= GJK_ACCEPT_RELATIVE * vlen + tol:
                return GJK_CONVERGED, new_count, vx, vy, vz, iterations, size2
            return GJK_STALLED, new_count, vx, vy, vz, iterations, size2
        count = new_count
        vx, vy, vz, vv = nx, ny, nz, nvv


@njit(cache=True, nogil=True)
def simplex_witness(s, count):
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
# pair entry points
@njit(cache=True, nogil=True, inline="always")
def _gjk_buffers():
    """GJK's work buffers: the relative transform m, the simplex s, the hill-climbing hints."""
    return np.empty((4, 4)), np.empty((4, 10)), np.zeros(2, dtype=np.int64)


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
        store_support_row(s, r, ax, ay, az, bx, by, bz)
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
    outcome, count, vx, vy, vz, iterations, _ = run_gjk(
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
    ax, ay, az, bx, by, bz = simplex_witness(s, count)
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
        epa_result = epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tolerance, verts, fnorm, fint, free, stack,
                          horizon, vslot)
        return _overlap_result(ka, pa, kb, pb, tb, tolerance, iterations, epa_result)
    return _separated_result(ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s)


@njit(cache=True, nogil=True)
def distance_single(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations):
    """_distance_core for one pair: makes its own GJK buffers and the EPA buffers only when the
    cores overlap (a separated single query allocates 3 small arrays, not 10)."""
    m, s, hints = _gjk_buffers()
    outcome, count, vx, vy, vz, iterations = _gjk_phase(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations, m, s, hints
    )
    if outcome == GJK_CONTAINS:
        verts, fnorm, fint, free, stack, horizon, vslot = epa_buffers()
        epa_result = epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tolerance, verts, fnorm, fint, free, stack,
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
    signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = distance_single(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, max_iterations
    )
    return signed, _vector3(ax, ay, az), _vector3(bx, by, bz), _vector3(nx, ny, nz), status, iterations


@njit(cache=True, nogil=True)
def gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """Signed distance of a convex pair (cold start); see the module doc."""
    warm = np.zeros(WARM_SIZE)
    return gjk_pair_distance_warm(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm)


# the states of gjk_distance_within
WITHIN = 0  # separated: the numbers are gjk_pair_distance's
BEYOND_CUTOFF = 1  # the signed distance is proven larger than the cutoff: no numbers (NaN)
CORES_OVERLAP = 2  # the cores meet: the depth is the caller's (EPA, SAT); no numbers (NaN)


@njit(cache=True, nogil=True)
def gjk_distance_within(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, cutoff, m, s, hints):
    """GJK's half of gjk_pair_distance for a caller that only wants the distance when it is at
    most ``cutoff`` (a search for the nearest of many candidates, such as a mesh's triangles):
    GJK stops as soon as one support plane proves the signed distance larger than ``cutoff``.
    Work buffers ``m`` (4, 4), ``s`` (4, 10), ``hints`` (2,) int64 are the caller's (nothing
    allocates). Returns (state, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status): state
    WITHIN gives exactly gjk_pair_distance's numbers and status for a pair it finds separated
    (the same iterations: the cutoff only adds a stop), BEYOND_CUTOFF and CORES_OVERLAP give NaN
    numbers. ``cutoff = inf`` never stops early."""
    relative_into(ta, tb, m)
    hints[0] = 0
    hints[1] = 0
    reach = cutoff + margin_of(ka, pa) + margin_of(kb, pb)
    outcome, count, vx, vy, vz, iterations, _ = run_gjk(
        ka, pa, pta, m, kb, pb, ptb, s, 0, hints, tolerance, True, reach, GJK_MAX_ITERATIONS
    )
    if outcome == GJK_BEYOND or outcome == GJK_CONTAINS:
        state = BEYOND_CUTOFF if outcome == GJK_BEYOND else CORES_OVERLAP
        return (state, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan,
                kinds.GJK_PENETRATING)
    signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, _ = _separated_result(
        ka, pa, kb, pb, tb, tolerance, outcome, count, vx, vy, vz, iterations, s
    )
    return WITHIN, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status


@njit(cache=True, nogil=True)
def gjk_pair_separation(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """The GJK half of gjk_pair_distance: ``(True, signed, point_a, point_b, normal)``, exactly
    what gjk_pair_distance returns, when its status would be SEPARATED; otherwise ``(False, NaN,
    NaN points)`` without running EPA -- for callers that find an overlap's depth another way
    (the SAT depth of small polytopes) and would discard EPA's."""
    m, s, hints = _gjk_buffers()
    state, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status = gjk_distance_within(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, np.inf, m, s, hints
    )
    if state == WITHIN and status == kinds.SEPARATED:
        return True, signed, _vector3(ax, ay, az), _vector3(bx, by, bz), _vector3(nx, ny, nz)
    unknown = _vector3(np.nan, np.nan, np.nan)
    return False, np.nan, unknown, unknown, unknown


@njit(cache=True, nogil=True)
def _intersects_core(ka, pa, pta, ta, kb, pb, ptb, tb, m, s, hints):
    relative_into(ta, tb, m)
    hints[0] = 0
    hints[1] = 0
    reach = margin_of(ka, pa) + margin_of(kb, pb)
    outcome, count, vx, vy, vz, iterations, size2 = run_gjk(ka, pa, pta, m, kb, pb, ptb, s, 0, hints, 0.0, True, reach, GJK_MAX_ITERATIONS)
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
# step (van den Bergen's mu, as in gjk); a margin test or a lower-bound query needs no more than
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
    m, s, hints = _gjk_buffers()
    relative_into(ta, tb, m)
    reach = margin_of(ka, pa) + margin_of(kb, pb)
    support_pair_called(ka, pa, pta, m, kb, pb, ptb, -(m[0, 3] + 1e-3), -m[1, 3], -m[2, 3], hints, 0, s)
    count, vx, vy, vz = reduce_simplex(s, 1)
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
        support_pair_called(ka, pa, pta, m, kb, pb, ptb, -vx, -vy, -vz, hints, count, s)
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
        new_count, nx, ny, nz = reduce_simplex(s, count + 1)
        nvv = nx * nx + ny * ny + nz * nz
        if nvv >= vv and new_count < 4:  # no progress (rounding)
            break
        count = new_count
        vx, vy, vz, vv = nx, ny, nz, nvv
    return max(lower - reach, 0.0), max(np.sqrt(vv) - reach, 0.0), INTERSECT_RELATIVE * np.sqrt(size2)


# ----------------------------------------------------------------------------------------------
# batch drivers: serial loops over pairs [lo, hi) (touche._parallel.run hands each thread chunks);
# a chunk makes its work buffers (GJK simplex, relative transform, EPA polytope) once and runs its
# pairs through them
@njit(cache=True, nogil=True)
def gjk_distance_many(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance,
                      out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations, lo, hi):
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    m, s, hints = _gjk_buffers()
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
    out_point_a[i] = r[1], r[2], r[3]
    out_point_b[i] = r[4], r[5], r[6]
    out_normal[i] = r[7], r[8], r[9]
    out_status[i] = r[10]
    out_iterations[i] = r[11]


@njit(cache=True, nogil=True)
def gjk_distance_warm_many(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm,
                           out_signed, out_point_a, out_point_b, out_normal, out_status, out_iterations, lo, hi):
    """As gjk_distance_many with one warm-start token per pair: warm (n, WARM_SIZE), in/out."""
    step_a = 1 if ta.shape[0] > 1 else 0
    step_b = 1 if tb.shape[0] > 1 else 0
    m, s, hints = _gjk_buffers()
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
    m, s, hints = _gjk_buffers()
    for i in range(lo, hi):
        out[i] = _intersects_core(ka, pa, pta, ta[i * step_a], kb, pb, ptb, tb[i * step_b], m, s, hints)


# ----------------------------------------------------------------------------------------------
# single-pair entries for the public layer: fill a buffer (no boxing of result arrays)
INVALID_POSE_A = -3  # = batch.INVALID_POSE_A (a raw pose array is not a rigid transform)
INVALID_POSE_B = -4


@njit(cache=True, nogil=True)
def gjk_distance_into(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, out):
    """gjk_pair_distance_warm writing ``out`` (11,) = (signed, point_a, point_b, normal,
    iterations); returns the GJK status."""
    r = distance_single(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, GJK_MAX_ITERATIONS)
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