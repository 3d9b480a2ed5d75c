"""Closed-form times of impact under translation (Ericson 5.5.3-5.5.8) and interval halving
(Ericson 5.5.1), as errata-corrected in SEED-NOTES §3.

Both objects translate with constant world velocities va, vb over [0, t_max]; everything is done
in B's rest frame (A moves with v = va - vb) and the contact point is moved back by t vb.
A moving sphere is a ray (its centre) against the Minkowski sum of B and the sphere; the ray
kernels of touche/_kernels/primitives/ray.py (unit direction, distances) give the entry distance s, and the
time is s / |v| (erratum L10495: TestMovingSphereSphere returned the distance, not t).

- 5.5.3 moving sphere vs plane / half-space: signed distance of the centre, displaced plane.
  5.5.4 moving box vs plane: the same with the box's (constant) projection radius; the same
  holds for every convex shape (its extent along a fixed normal does not change under
  translation), which ``convex_plane`` uses for any finite convex A (support mapping).
- 5.5.5 moving sphere vs sphere: a ray against the sphere of radius r_a + r_b.
- 5.5.6 moving sphere vs triangle / convex polygon, the robust method (Schroeder / Akenine-
  Moller, not Nettle's shortcut, erratum L10520: it misses real hits): the sum T + S is the
  union of the polygon offset by +-r along its normal (two flat faces) and the capsules of its
  edges (edge cylinders with the vertex spheres as caps); the first entry into the union is
  the smallest entry into its pieces (the origin is outside all of them once the static test
  says the sphere does not touch at t = 0).
- 5.5.7 moving sphere vs AABB / OBB: B + S = the union of the three boxes grown by r along one
  axis each (the face regions of E) and the twelve edge capsules (the bevelled edges and
  vertex spheres), the same decomposition as Ericson's Voronoi-region case analysis.
- 5.5.8 moving AABB vs AABB: per axis first / last contact times, with the early out of erratum
  L10765 (a zero velocity component with the boxes separated on that axis never meets).
- 5.5.1 interval halving for any pair with a distance function and a bound on the relative
  speed: ``interval_halving`` (used by touche/_kernels/motion/ccd.py once conservative advancement
  has spent its step budget: it searches [t, t_max] earliest-first for the first interval that
  cannot be excluded).

Results: ``(status, t, t_last, px, py, pz, nx, ny, nz)``: status kinds.HIT / ALREADY_TOUCHING /
MISS, point the contact point at t (world), normal unit from A to B (NaN when touching at
t = 0 with overlapping interiors); t_last the end of contact where known (AABB-AABB), else NaN.
Pair codes (``PAIR_*``) select the routine; ``analytic_many`` is the batch driver
(pairs [lo, hi), run on chunks by touche._parallel.run).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base import kinds
from touche._kernels.convex.support import to_world_point
from touche._kernels.motion.ccd import support_world
from touche._kernels.primitives.closest import closest_point_convex_polygon, closest_point_obb, closest_point_triangle
from touche._kernels.primitives.ray import ray_obb, ray_sphere
from touche._kernels.primitives.ray_polytopes import ray_convex_polygon, ray_triangle
from touche._kernels.primitives.ray_round import ray_capsule

PAIR_SPHERE_SPHERE = 0
PAIR_CONVEX_PLANE = 1  # any finite convex A vs plane / half-space B (5.5.3 / 5.5.4)
PAIR_SPHERE_TRIANGLE = 2
PAIR_SPHERE_POLYGON = 3
PAIR_SPHERE_BOX = 4
PAIR_AABB_AABB = 5

_NAN = np.nan
_INF = np.inf


@njit(cache=True, nogil=True)
def _result_miss():
    return kinds.MISS, _INF, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN


@njit(cache=True, nogil=True)
def _ray_of(v, t_max):
    """(unit direction, distance limit, speed) of the relative motion."""
    speed = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    d = np.zeros(3)
    if speed > 0.0:
        for i in range(3):
            d[i] = v[i] / speed
    return d, speed * t_max if speed > 0.0 else 0.0, speed


@njit(cache=True, nogil=True)
def _world_point(x, y, z, t, vb):
    return x + t * vb[0], y + t * vb[1], z + t * vb[2]


# ----------------------------------------------------------------------------------------------
# 5.5.5 sphere - sphere
@njit(cache=True, nogil=True)
def sphere_sphere(ca, ra, cb, rb, v, vb, t_max):
    """Moving sphere A (centre ca, radius ra, relative velocity v) vs sphere B; see the module doc."""
    reach = ra + rb
    dx = ca[0] - cb[0]
    dy = ca[1] - cb[1]
    dz = ca[2] - cb[2]
    if dx * dx + dy * dy + dz * dz <= reach * reach:
        dist = np.sqrt(dx * dx + dy * dy + dz * dz)
        if dist == 0.0:
            return kinds.ALREADY_TOUCHING, 0.0, _NAN, ca[0], ca[1], ca[2], _NAN, _NAN, _NAN
        px, py, pz = ca[0] - dx / dist * ra, ca[1] - dy / dist * ra, ca[2] - dz / dist * ra
        return kinds.ALREADY_TOUCHING, 0.0, _NAN, px, py, pz, -dx / dist, -dy / dist, -dz / dist
    d, limit, speed = _ray_of(v, t_max)
    if speed == 0.0:
        return _result_miss()
    hit, s, normal = ray_sphere(ca, d, limit, cb, reach, True)
    if not hit:
        return _result_miss()
    t = s / speed  # erratum L10495: the ray distance divided by the speed
    # the centre of A at t; the contact lies on the segment of centres, ra from A's centre
    qx, qy, qz = ca[0] + s * d[0], ca[1] + s * d[1], ca[2] + s * d[2]
    px, py, pz = _world_point(qx - ra * normal[0], qy - ra * normal[1], qz - ra * normal[2], t, vb)
    return kinds.HIT, t, _NAN, px, py, pz, -normal[0], -normal[1], -normal[2]


# ----------------------------------------------------------------------------------------------
# 5.5.3 / 5.5.4 convex (sphere, box, any support mapping) - plane / half-space
@njit(cache=True, nogil=True)
def convex_plane(low, high, low_point, high_point, n, v, vb, t_max, two_sided):
    """A convex shape whose extent along the unit plane normal n is [low, high] (signed
    distances from the plane n.x = offset, attained at low_point / high_point) moving with v
    against the plane (two-sided) or the half-space n.x <= offset. Under translation the extent
    only shifts by t (n.v): the first contact is a linear root."""
    rate = n[0] * v[0] + n[1] * v[1] + n[2] * v[2]
    if not two_sided:
        if low <= 0.0:
            return (kinds.ALREADY_TOUCHING, 0.0, _NAN, low_point[0], low_point[1], low_point[2],
                    -n[0], -n[1], -n[2])
        if rate >= 0.0:
            return _result_miss()
        t = low / -rate
        if t > t_max:
            return _result_miss()
        px, py, pz = _world_point(low_point[0] + t * v[0], low_point[1] + t * v[1], low_point[2] + t * v[2], t, vb)
        return kinds.HIT, t, _NAN, px, py, pz, -n[0], -n[1], -n[2]
    if low <= 0.0 <= high:  # straddling or touching the plane
        if low == 0.0:
            return (kinds.ALREADY_TOUCHING, 0.0, _NAN, low_point[0], low_point[1], low_point[2],
                    -n[0], -n[1], -n[2])
        if high == 0.0:
            return (kinds.ALREADY_TOUCHING, 0.0, _NAN, high_point[0], high_point[1], high_point[2],
                    n[0], n[1], n[2])
        return kinds.ALREADY_TOUCHING, 0.0, _NAN, low_point[0], low_point[1], low_point[2], _NAN, _NAN, _NAN
    if low > 0.0:  # above: moving towards the plane needs rate < 0 (Ericson's sign test)
        if rate >= 0.0:
            return _result_miss()
        t = low / -rate
        q = low_point
        sign = -1.0
    else:  # below
        if rate <= 0.0:
            return _result_miss()
        t = -high / rate
        q = high_point
        sign = 1.0
    if t > t_max:
        return _result_miss()
    px, py, pz = _world_point(q[0] + t * v[0], q[1] + t * v[1], q[2] + t * v[2], t, vb)
    return kinds.HIT, t, _NAN, px, py, pz, sign * n[0], sign * n[1], sign * n[2]


@njit(cache=True, nogil=True)
def _sphere_reaches(c, r, q):
    """Does the sphere (c, r) reach the point q (B's closest point to c) at t = 0?"""
    dx = c[0] - q[0]
    dy = c[1] - q[1]
    dz = c[2] - q[2]
    return dx * dx + dy * dy + dz * dz <= r * r


@njit(cache=True, nogil=True)
def _sphere_touching(c, q):
    """ALREADY_TOUCHING at q, the normal from the sphere's centre c toward q (NaN when c lies on
    B, interiors overlapping: no defined direction)."""
    dx = c[0] - q[0]
    dy = c[1] - q[1]
    dz = c[2] - q[2]
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    if dist == 0.0:
        return kinds.ALREADY_TOUCHING, 0.0, _NAN, q[0], q[1], q[2], _NAN, _NAN, _NAN
    return kinds.ALREADY_TOUCHING, 0.0, _NAN, q[0], q[1], q[2], -dx / dist, -dy / dist, -dz / dist


@njit(cache=True, nogil=True)
def _along(c, s, d):
    """c + s d (a new array): the sphere's centre at ray parameter s."""
    out = np.empty(3)
    for i in range(3):
        out[i] = c[i] + s * d[i]
    return out


@njit(cache=True, nogil=True)
def _sphere_hit(centre, q, t, vb):
    """HIT at time t of a moving sphere whose centre is at ``centre`` (B's rest frame) and whose
    closest point on B is q: the contact point q (moved back to the world by t vb), the normal
    from the centre toward q (A to B)."""
    nx = q[0] - centre[0]
    ny = q[1] - centre[1]
    nz = q[2] - centre[2]
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    if length > 0.0:
        nx /= length
        ny /= length
        nz /= length
    px, py, pz = _world_point(q[0], q[1], q[2], t, vb)
    return kinds.HIT, t, _NAN, px, py, pz, nx, ny, nz


# ----------------------------------------------------------------------------------------------
# 5.5.6 sphere - triangle / convex polygon (robust: offset faces + edge capsules)
@njit(cache=True, nogil=True)
def sphere_polygon(c, r, verts, normal, v, vb, t_max):
    """Moving sphere (c, r, relative velocity v) vs a convex polygon (verts (k, 3) in order,
    unit ``normal``; k = 3 for a triangle)."""
    k = verts.shape[0]
    if k == 3:
        q = closest_point_triangle(c, verts[0], verts[1], verts[2])
    else:
        q = closest_point_convex_polygon(c, verts, normal)
    if _sphere_reaches(c, r, q):
        return _sphere_touching(c, q)
    d, limit, speed = _ray_of(v, t_max)
    if speed == 0.0:
        return _result_miss()
    best = _INF
    moved = np.empty((k, 3))
    for side in (1.0, -1.0):  # the two offset faces
        for j in range(k):
            for i in range(3):
                moved[j, i] = verts[j, i] + side * r * normal[i]
        if k == 3:
            hit, s, face = ray_triangle(c, d, limit, moved[0], moved[1], moved[2], True)
        else:
            hit, s, face = ray_convex_polygon(c, d, limit, moved, normal, True)
        if hit and s < best:
            best = s
    for j in range(k):  # the edge capsules (their caps are the vertex spheres)
        hit, s, face = ray_capsule(c, d, limit, verts[j], verts[(j + 1) % k], r, True)
        if hit and s < best:
            best = s
    if best == _INF:
        return _result_miss()
    centre = _along(c, best, d)
    if k == 3:
        q = closest_point_triangle(centre, verts[0], verts[1], verts[2])
    else:
        q = closest_point_convex_polygon(centre, verts, normal)
    return _sphere_hit(centre, q, best / speed, vb)


# ----------------------------------------------------------------------------------------------
# 5.5.7 sphere - AABB / OBB
@njit(cache=True, nogil=True)
def sphere_box(c, r, bc, axes, half, v, vb, t_max):
    """Moving sphere (c, r, relative velocity v) vs a box (centre bc, ``axes`` columns = unit
    axes, half extents)."""
    q = closest_point_obb(c, bc, axes, half)
    if _sphere_reaches(c, r, q):
        return _sphere_touching(c, q)
    d, limit, speed = _ray_of(v, t_max)
    if speed == 0.0:
        return _result_miss()
    grown = np.empty(3)
    best = _INF
    for axis in range(3):  # the face regions: the box grown by r along one axis
        for i in range(3):
            grown[i] = half[i] + (r if i == axis else 0.0)
        hit, s, face = ray_obb(c, d, limit, bc, axes, grown, True)
        if hit and s < best:
            best = s
    a = np.empty(3)
    b = np.empty(3)
    for axis in range(3):  # the 12 edges: along ``axis``, at the 4 sign combinations of the others
        j = (axis + 1) % 3
        k = (axis + 2) % 3
        for corner in range(4):
            sj = half[j] if corner & 1 else -half[j]
            sk = half[k] if corner & 2 else -half[k]
            for i in range(3):
                base = bc[i] + sj * axes[i, j] + sk * axes[i, k]
                a[i] = base - half[axis] * axes[i, axis]
                b[i] = base + half[axis] * axes[i, axis]
            hit, s, face = ray_capsule(c, d, limit, a, b, r, True)
            if hit and s < best:
                best = s
    if best == _INF:
        return _result_miss()
    centre = _along(c, best, d)
    return _sphere_hit(centre, closest_point_obb(centre, bc, axes, half), best / speed, vb)


# ----------------------------------------------------------------------------------------------
# 5.5.8 AABB - AABB
@njit(cache=True, nogil=True)
def aabb_aabb(amin, amax, bmin, bmax, v, vb, t_max):
    """Moving AABB A (relative velocity v) vs AABB B: first and last contact over [0, t_max]
    (t_last may exceed t_max when they are still in contact there: inf if they never part).
    Erratum L10765: an axis with v_i = 0 on which the boxes are separated is a miss (the
    printed code lets it through). The normal is the axis of the latest first contact."""
    t_first = 0.0
    t_last = _INF
    axis = -1
    touching = True
    for i in range(3):
        if amax[i] < bmin[i] or bmax[i] < amin[i]:
            touching = False
    if touching:
        t_first = 0.0
    for i in range(3):
        if v[i] == 0.0:
            if amax[i] < bmin[i] or bmax[i] < amin[i]:
                return _result_miss()  # erratum L10765
            continue
        # A's interval [amin + t v, amax + t v] meets [bmin, bmax] for t in [enter, leave]
        enter = (bmin[i] - amax[i]) / v[i]
        leave = (bmax[i] - amin[i]) / v[i]
        if enter > leave:
            enter, leave = leave, enter
        if enter > t_first:
            t_first = enter
            axis = i
        if leave < t_last:
            t_last = leave
        if t_first > t_last or t_last < 0.0:
            return _result_miss()
    if t_first > t_max:
        return _result_miss()
    # the contact region at t_first: the overlap of the two boxes (its centre)
    px = 0.0
    py = 0.0
    pz = 0.0
    for i in range(3):
        lo = max(amin[i] + t_first * v[i], bmin[i])
        hi = min(amax[i] + t_first * v[i], bmax[i])
        value = 0.5 * (lo + hi)
        if i == 0:
            px = value
        elif i == 1:
            py = value
        else:
            pz = value
    px, py, pz = _world_point(px, py, pz, t_first, vb)
    if touching or axis < 0:
        return kinds.ALREADY_TOUCHING, 0.0, t_last, px, py, pz, _NAN, _NAN, _NAN
    normal = np.zeros(3)
    normal[axis] = 1.0 if v[axis] > 0.0 else -1.0  # A moves towards B along the axis
    return kinds.HIT, t_first, t_last, px, py, pz, normal[0], normal[1], normal[2]


# ----------------------------------------------------------------------------------------------
# packed shapes -> the routines
@njit(cache=True, nogil=True)
def _support_extent(ka, pa, pta, ta, n, offset):
    """(low, high, low point, high point) of a finite convex shape placed by ta along unit n,
    as signed distances from the plane n.x = offset (sphere / capsule radius included)."""
    hints = np.zeros(2, dtype=np.int64)
    lx, ly, lz = support_world(ka, pa, pta, ta, -n[0], -n[1], -n[2], hints)
    hx, hy, hz = support_world(ka, pa, pta, ta, n[0], n[1], n[2], hints)
    low = n[0] * lx + n[1] * ly + n[2] * lz - offset
    high = n[0] * hx + n[1] * hy + n[2] * hz - offset
    lp = np.empty(3)
    hp = np.empty(3)
    lp[0], lp[1], lp[2] = lx, ly, lz
    hp[0], hp[1], hp[2] = hx, hy, hz
    return low, high, lp, hp


@njit(cache=True, nogil=True)
def analytic_pair(code, ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max):
    """One pair by its PAIR_* code (A the sphere / box / convex, B the other), both placed by
    rigid poses ta, tb and translating with va, vb. Returns the result tuple (module doc)."""
    v = np.empty(3)
    for i in range(3):
        v[i] = va[i] - vb[i]
    if code == PAIR_SPHERE_SPHERE:
        return sphere_sphere(to_world_point(ta, pta[0, 0], pta[0, 1], pta[0, 2]), pa[0],
                             to_world_point(tb, ptb[0, 0], ptb[0, 1], ptb[0, 2]), pb[0], v, vb, t_max)
    if code == PAIR_CONVEX_PLANE:
        n = np.empty(3)
        for r in range(3):
            n[r] = tb[r, 0] * ptb[1, 0] + tb[r, 1] * ptb[1, 1] + tb[r, 2] * ptb[1, 2]
        q = to_world_point(tb, ptb[0, 0], ptb[0, 1], ptb[0, 2])
        offset = n[0] * q[0] + n[1] * q[1] + n[2] * q[2]
        low, high, lp, hp = _support_extent(ka, pa, pta, ta, n, offset)
        return convex_plane(low, high, lp, hp, n, v, vb, t_max, kb == kinds.PLANE)
    centre = to_world_point(ta, pta[0, 0], pta[0, 1], pta[0, 2])
    if code == PAIR_SPHERE_TRIANGLE or code == PAIR_SPHERE_POLYGON:
        k = int(pb[0])
        verts = np.empty((k, 3))
        for j in range(k):
            p = to_world_point(tb, ptb[j, 0], ptb[j, 1], ptb[j, 2])
            for i in range(3):
                verts[j, i] = p[i]
        normal = np.empty(3)
        if code == PAIR_SPHERE_TRIANGLE:
            ex = verts[1] - verts[0]
            ey = verts[2] - verts[0]
            normal[0] = ex[1] * ey[2] - ex[2] * ey[1]
            normal[1] = ex[2] * ey[0] - ex[0] * ey[2]
            normal[2] = ex[0] * ey[1] - ex[1] * ey[0]
            length = np.sqrt(normal[0] ** 2 + normal[1] ** 2 + normal[2] ** 2)
            if length == 0.0:  # a zero-area triangle: the capsules of its edges cover it
                normal[0] = 0.0
                normal[1] = 0.0
                normal[2] = 1.0
            else:
                for i in range(3):
                    normal[i] /= length
        else:
            m = pb.shape[0]
            for r in range(3):
                normal[r] = tb[r, 0] * pb[m - 3] + tb[r, 1] * pb[m - 2] + tb[r, 2] * pb[m - 1]
        return sphere_polygon(centre, pa[0], verts, normal, v, vb, t_max)
    if code == PAIR_SPHERE_BOX:
        m = pb.shape[0]
        bc = to_world_point(tb, pb[m - 6], pb[m - 5], pb[m - 4])
        half = pb[m - 3:].copy()
        axes = tb[:3, :3].copy()  # a box's local axes are the coordinate axes: columns of R
        return sphere_box(centre, pa[0], bc, axes, half, v, vb, t_max)
    # PAIR_AABB_AABB: both poses without rotation (checked by the caller)
    m = pa.shape[0]
    n = pb.shape[0]
    amin = np.empty(3)
    amax = np.empty(3)
    bmin = np.empty(3)
    bmax = np.empty(3)
    for i in range(3):
        amin[i] = pa[m - 6 + i] + ta[i, 3] - pa[m - 3 + i]
        amax[i] = pa[m - 6 + i] + ta[i, 3] + pa[m - 3 + i]
        bmin[i] = pb[n - 6 + i] + tb[i, 3] - pb[n - 3 + i]
        bmax[i] = pb[n - 6 + i] + tb[i, 3] + pb[n - 3 + i]
    return aabb_aabb(amin, amax, bmin, bmax, v, vb, t_max)


@njit(cache=True, nogil=True)
def analytic_many(code, ka, pa, pta, ta, va, kb, pb, ptb, tb, vb, t_max, out_status, out_t, out_last, out_point,
                  out_normal, lo, hi):
    """Batch of analytic_pair; poses (n|1, 4, 4) and velocities (n|1, 3) broadcast."""
    sta = 1 if ta.shape[0] > 1 else 0
    stb = 1 if tb.shape[0] > 1 else 0
    sva = 1 if va.shape[0] > 1 else 0
    svb = 1 if vb.shape[0] > 1 else 0
    for k in range(lo, hi):
        res = analytic_pair(code, ka, pa, pta, ta[k * sta], va[k * sva], kb, pb, ptb, tb[k * stb], vb[k * svb], t_max)
        out_status[k] = res[0]
        out_t[k] = res[1]
        out_last[k] = res[2]
        out_point[k] = res[3], res[4], res[5]
        out_normal[k] = res[6], res[7], res[8]


# ----------------------------------------------------------------------------------------------
# 5.5.1 interval halving
@njit(cache=True, nogil=True)
def halving_excludes(gap_start, gap_end, speed, length):
    """True when [t, t + length] holds no contact: the distance, above gap_start - speed (s - t)
    and above gap_end - speed (t + length - s), stays > 0 in between iff their crossing,
    (gap_start + gap_end - speed length) / 2, is > 0. (Ericson 5.5.1 tests each end against the
    whole movement; the crossing of the two cones excludes more and is just as rigorous.)"""
    return gap_start > 0.0 and gap_end > 0.0 and gap_start + gap_end > speed * length
