"""Casting with GJK (Ericson 9.5.7): the first time of contact of two translating convex shapes
by conservative advancement on the Minkowski difference (``gjk_shape_cast``, batch and single
entries), and the ray cast against any shape known by its support mapping (``gjk_raycast``, the
ray as a point cast against the shape).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402

from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.convex.support import local_box, margin_of, relative_transform, to_world_point, to_world_vector  # noqa: E402
from touche._kernels.convex.gjk import GJK_CONTAINS, GJK_MAX_ITERATIONS, run_gjk, simplex_witness  # noqa: E402

# Newton steps of the advancement
CAST_MAX_ITERATIONS_COUNT = 128  # Newton steps; a grazing (double-root) contact halves the gap per step
# shape-cast status when the advancement did not converge
CAST_MAX_ITERATIONS = kinds.TOI_MAX_ITERATIONS


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
        outcome, count, vx, vy, vz, iterations, size2 = run_gjk(
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
    ax, ay, az, bx, by, bz = simplex_witness(s, count)
    normal = to_world_vector(tb, nx, ny, nz)
    point = to_world_point(tb, ax, ay, az)
    for i in range(3):
        point[i] += vb[i] * t
        if normal[i] == normal[i]:
            point[i] += ra * normal[i]
    return status, t, point, normal


# ray cast against a support mapping: a point cast against the shape (Ericson 9.5.7); the
# advancement stops this close (relative to the shape's extent and the origin's distance)
RAY_RELATIVE = 1e-13


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
        copy_into(out_point[i], point)
        copy_into(out_normal[i], normal)


@njit(cache=True, nogil=True)
def gjk_shape_cast_into(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance, out):
    """gjk_shape_cast writing ``out`` (7,) = (t, point, normal); returns the status."""
    status, t, point, normal = gjk_shape_cast(ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, tolerance)
    out[0] = t
    for i in range(3):
        out[1 + i] = point[i]
        out[4 + i] = normal[i]
    return status
