"""Leaf-level gaps and steps of conservative advancement on triangle meshes (ccd_mesh.py; its module
doc derives the bounds): the distance of a leaf pair (triangle against triangle, convex or
plane: ``leaf_gap``), the separating axes a leaf pair advances along (``sat_axis``,
``centre_axis``) and its step (``leaf_step``), and the contact normal (``contact_axis``).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.convex.gjk import gjk_pair_distance_warm  # noqa: E402
from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.motion.ccd import support_world  # noqa: E402
from touche._kernels.primitives.tri_distance import triangle_distance_sq  # noqa: E402
from touche._kernels.motion.ccd_node_bounds import (  # noqa: E402
    B_CONVEX, B_MESH, B_PLANE, apply_pose, axis_terms, safe_step)


# parameters of the triangle of a mesh leaf as a GJK shape (kinds.TRIANGLE reads params[0] only);
# a tuple, made into an array inside the kernel: a global array is typed read-only, and GJK / EPA
# would compile once more for it (25 s of a cold warmup)
TRIANGLE_PARAMS = (3.0, 2.0, 3.0, 0.0)


# ----------------------------------------------------------------------------------------------
# leaves (B's frame)
@njit(cache=True, nogil=True)
def triangle_moved(tv, k, rel, out):
    for c in range(3):
        x, y, z = apply_pose(rel, tv[k, c, 0], tv[k, c, 1], tv[k, c, 2])
        out[c, 0] = x
        out[c, 1] = y
        out[c, 2] = z


@njit(cache=True, nogil=True)
def _triangle_triangle_gap(ta, tb):
    """(distance, closest points' midpoint (3), unit direction A -> B (NaN if touching)) of two
    triangles (3, 3) in one frame."""
    A = (ta[0, 0], ta[0, 1], ta[0, 2], ta[1, 0], ta[1, 1], ta[1, 2], ta[2, 0], ta[2, 1], ta[2, 2])
    B = (tb[0, 0], tb[0, 1], tb[0, 2], tb[1, 0], tb[1, 1], tb[1, 2], tb[2, 0], tb[2, 1], tb[2, 2])
    d2, pa, pb = triangle_distance_sq(A, B)
    d = np.sqrt(d2)
    mx = 0.5 * (pa[0] + pb[0])
    my = 0.5 * (pa[1] + pb[1])
    mz = 0.5 * (pa[2] + pb[2])
    if d == 0.0:
        return 0.0, mx, my, mz, np.nan, np.nan, np.nan
    return d, mx, my, mz, (pb[0] - pa[0]) / d, (pb[1] - pa[1]) / d, (pb[2] - pa[2]) / d


@njit(cache=True, nogil=True)
def leaf_gap(b_mode, two_sided, tri_a, tv_a, ka, rel, tv_b, kb_index, kb, pb, ptb, identity, eps, warm):
    """Distance of A's triangle (tri_a, B's frame) to B's triangle / convex / plane: (distance
    (< 0 when a convex or plane overlaps), contact point (3), unit direction A -> B (NaN when
    undefined)), all in B's frame."""
    if b_mode == B_MESH:
        return _triangle_triangle_gap(tri_a, tv_b[kb_index])
    if b_mode == B_CONVEX:
        triangle_params = np.empty(4)
        for i in range(4):
            triangle_params[i] = TRIANGLE_PARAMS[i]
        signed, point_a, point_b, normal, gjk_status, iterations = gjk_pair_distance_warm(
            kinds.TRIANGLE, triangle_params, tv_a[ka], rel, kb, pb, ptb, identity, eps, warm)
        return (signed, 0.5 * (point_a[0] + point_b[0]), 0.5 * (point_a[1] + point_b[1]),
                0.5 * (point_a[2] + point_b[2]), normal[0], normal[1], normal[2])
    pnx, pny, pnz = ptb[1, 0], ptb[1, 1], ptb[1, 2]
    offset = pnx * ptb[0, 0] + pny * ptb[0, 1] + pnz * ptb[0, 2]
    lo = np.inf
    hi = -np.inf
    low = 0
    high = 0
    for c in range(3):
        level = pnx * tri_a[c, 0] + pny * tri_a[c, 1] + pnz * tri_a[c, 2] - offset
        if level < lo:
            lo = level
            low = c
        if level > hi:
            hi = level
            high = c
    if lo >= 0.0 or not two_sided:  # above (or a half-space): the lowest corner is nearest
        return lo, tri_a[low, 0], tri_a[low, 1], tri_a[low, 2], -pnx, -pny, -pnz
    if hi <= 0.0:  # below a two-sided plane
        return -hi, tri_a[high, 0], tri_a[high, 1], tri_a[high, 2], pnx, pny, pnz
    return max(lo, -hi), tri_a[low, 0], tri_a[low, 1], tri_a[low, 2], -pnx, -pny, -pnz  # crossing


@njit(cache=True, nogil=True)
def centre_axis(b_mode, tri_a, tri_b, ball_b):
    """Unit axis from the centroid of A's triangle to B's triangle centroid / ball centre (B's
    frame); (1, 0, 0) when they coincide."""
    ax = (tri_a[0, 0] + tri_a[1, 0] + tri_a[2, 0]) / 3.0
    ay = (tri_a[0, 1] + tri_a[1, 1] + tri_a[2, 1]) / 3.0
    az = (tri_a[0, 2] + tri_a[1, 2] + tri_a[2, 2]) / 3.0
    if b_mode == B_MESH:
        bx = (tri_b[0, 0] + tri_b[1, 0] + tri_b[2, 0]) / 3.0
        by = (tri_b[0, 1] + tri_b[1, 1] + tri_b[2, 1]) / 3.0
        bz = (tri_b[0, 2] + tri_b[1, 2] + tri_b[2, 2]) / 3.0
    else:
        bx, by, bz = ball_b[0], ball_b[1], ball_b[2]
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    length = np.sqrt(dx * dx + dy * dy + dz * dz)
    if length == 0.0:
        return 1.0, 0.0, 0.0
    return dx / length, dy / length, dz / length


@njit(cache=True, nogil=True, inline="always")
def _vertex_rates(state, nv, ux, uy, uz, ul, wl, x, y, z):
    """(q' at the point, |q''| bound, |u| |x - c|) of a point moving by ``state`` along n."""
    yx = x - state[6]
    yy = y - state[7]
    yz = z - state[8]
    reach = np.sqrt(yx * yx + yy * yy + yz * yz)
    return nv + yx * ux + yy * uy + yz * uz, ul * wl * reach, ul * reach


@njit(cache=True, nogil=True, inline="always")
def _unit_cross(ex, ey, ez, fx, fy, fz):
    """(e x f / |e x f|, |e x f|); the length 0 (and the direction meaningless) when e, f are
    parallel."""
    cx = ey * fz - ez * fy
    cy = ez * fx - ex * fz
    cz = ex * fy - ey * fx
    length = np.sqrt(cx * cx + cy * cy + cz * cz)
    if length == 0.0:
        return 0.0, 0.0, 0.0, 0.0
    return cx / length, cy / length, cz / length, length


@njit(cache=True, nogil=True, inline="always")
def _face_normal(tri):
    """Unit normal of triangle tri (3, 3) and the length of (v1 - v0) x (v2 - v0) (0: no area)."""
    return _unit_cross(tri[1, 0] - tri[0, 0], tri[1, 1] - tri[0, 1], tri[1, 2] - tri[0, 2],
                       tri[2, 0] - tri[0, 0], tri[2, 1] - tri[0, 1], tri[2, 2] - tri[0, 2])


@njit(cache=True, nogil=True)
def sat_axis(tri_a, tri_b):
    """The separating axis of two triangles (B's frame) of largest projection gap among their
    face normals and the 9 edge x edge crosses (unit, oriented from A to B): (gap, nx, ny, nz).
    Built from the coordinates, these axes keep full accuracy at tiny distances, where the
    direction between the closest points carries a rounding error ~ 1e-16 / distance."""
    best = -np.inf
    bx = 1.0
    by = 0.0
    bz = 0.0
    for k in range(11):
        if k < 2:
            lx, ly, lz, length = _face_normal(tri_a if k == 0 else tri_b)
        else:
            i = (k - 2) // 3
            j = (k - 2) % 3
            lx, ly, lz, length = _unit_cross(
                tri_a[(i + 1) % 3, 0] - tri_a[i, 0], tri_a[(i + 1) % 3, 1] - tri_a[i, 1],
                tri_a[(i + 1) % 3, 2] - tri_a[i, 2],
                tri_b[(j + 1) % 3, 0] - tri_b[j, 0], tri_b[(j + 1) % 3, 1] - tri_b[j, 1],
                tri_b[(j + 1) % 3, 2] - tri_b[j, 2])
        if length == 0.0:
            continue
        hi_a = -np.inf
        lo_a = np.inf
        hi_b = -np.inf
        lo_b = np.inf
        for c in range(3):
            pa = lx * tri_a[c, 0] + ly * tri_a[c, 1] + lz * tri_a[c, 2]
            pb = lx * tri_b[c, 0] + ly * tri_b[c, 1] + lz * tri_b[c, 2]
            hi_a = max(hi_a, pa)
            lo_a = min(lo_a, pa)
            hi_b = max(hi_b, pb)
            lo_b = min(lo_b, pb)
        if lo_b - hi_a > best:
            best, bx, by, bz = lo_b - hi_a, lx, ly, lz
        if lo_a - hi_b > best:
            best, bx, by, bz = lo_a - hi_b, -lx, -ly, -lz
    return best, bx, by, bz


@njit(cache=True, nogil=True)
def leaf_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps):
    """_axis_step along the closest points' direction n; for two triangles whose projection gap
    along n is below half their distance (n dominated by rounding at tiny distances), along the
    best SAT axis instead. Returns (gap, step, nx, ny, nz) with the axis used."""
    gap, step = _axis_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps)
    if b_mode == B_MESH and gap < 0.5 * d:
        sat, sx, sy, sz = sat_axis(tri_a, tri_b)
        if sat > gap:
            gap, step = _axis_step(b_mode, tri_a, tri_b, la, lb, sx, sy, sz, d, kb, pb, ptb, ball_b, identity, hints,
                                   eps)
            return gap, step, sx, sy, sz
    return gap, step, nx, ny, nz


@njit(cache=True, nogil=True)
def _axis_step(b_mode, tri_a, tri_b, la, lb, nx, ny, nz, d, kb, pb, ptb, ball_b, identity, hints, eps):
    """(projection gap along n (<= the distance), safe step), B's frame. The largest of n.x over
    A's triangle is at a vertex (and the smallest over B's triangle), so the gap stays above
    the margin while every (vertex of A, vertex of B) pair's gap does: the step is the smallest
    of the pairs' safe steps. Per pair the bounds are tight where it matters: in a graze the
    vertex reaching contact slows to zero while another vertex far from it may still approach
    fast (a bound over the whole triangle at once then converges only harmonically). B a convex:
    its support along n with its bounding ball's rates; a plane: every point has B's velocity."""
    nva, uxa, uya, uza, ula, wla = axis_terms(la, nx, ny, nz)
    nvb, uxb, uyb, uzb, ulb, wlb = axis_terms(lb, nx, ny, nz)
    # B's side: up to three (level, q', |q''|, |u| reach) rows
    count_b = 3 if b_mode == B_MESH else 1
    level_b = np.empty(3)
    speed_b = np.empty(3)
    acc_b = np.empty(3)
    arm_b = np.empty(3)
    if b_mode == B_MESH:
        for j in range(3):
            level_b[j] = nx * tri_b[j, 0] + ny * tri_b[j, 1] + nz * tri_b[j, 2]
            speed_b[j], acc_b[j], arm_b[j] = _vertex_rates(lb, nvb, uxb, uyb, uzb, ulb, wlb, tri_b[j, 0], tri_b[j, 1],
                                                           tri_b[j, 2])
    elif b_mode == B_CONVEX:
        sx, sy, sz = support_world(kb, pb, ptb, identity, -nx, -ny, -nz, hints)
        level_b[0] = nx * sx + ny * sy + nz * sz
        centre, acc, arm = _vertex_rates(lb, nvb, uxb, uyb, uzb, ulb, wlb, ball_b[0], ball_b[1], ball_b[2])
        speed_b[0] = centre - ball_b[3] * ulb  # the ball's slowest point
        acc_b[0] = acc + ulb * wlb * ball_b[3]
        arm_b[0] = arm + ulb * ball_b[3]
    else:
        level_b[0] = np.inf  # set below from A's highest vertex and d
        speed_b[0] = nvb
        acc_b[0] = 0.0
        arm_b[0] = 0.0
    hi_a = -np.inf
    for i in range(3):
        hi_a = max(hi_a, nx * tri_a[i, 0] + ny * tri_a[i, 1] + nz * tri_a[i, 2])
    if b_mode == B_PLANE:
        level_b[0] = hi_a + d
    lo_b = level_b[0]

    for j in range(1, count_b):
        lo_b = min(lo_b, level_b[j])
    gap = lo_b - hi_a  # <= the distance for any axis (the projection gap of convex sets)
    margin = 0.5 * eps
    if gap <= margin:
        return gap, 0.0
    step = np.inf
    for i in range(3):
        level_a = nx * tri_a[i, 0] + ny * tri_a[i, 1] + nz * tri_a[i, 2]
        speed_a, acc_a, arm_a = _vertex_rates(la, nva, uxa, uya, uza, ula, wla, tri_a[i, 0], tri_a[i, 1], tri_a[i, 2])
        for j in range(count_b):
            step = min(step, safe_step(level_b[j] - level_a, margin, speed_a - speed_b[j], acc_a + acc_b[j],
                                       (nva + arm_a) - (nvb - arm_b[j])))
    return gap, step


@njit(cache=True, nogil=True)
def axis_gap(b_mode, tri_a, tri_b, nx, ny, nz, kb, pb, ptb, identity, hints):
    """Projection gap along unit n of A's triangle and B's triangle / convex (B's frame)."""
    hi = -np.inf
    for c in range(3):
        hi = max(hi, nx * tri_a[c, 0] + ny * tri_a[c, 1] + nz * tri_a[c, 2])
    if b_mode == B_MESH:
        lo = np.inf
        for c in range(3):
            lo = min(lo, nx * tri_b[c, 0] + ny * tri_b[c, 1] + nz * tri_b[c, 2])
    else:
        sx, sy, sz = support_world(kb, pb, ptb, identity, -nx, -ny, -nz, hints)
        lo = nx * sx + ny * sy + nz * sz
    return lo - hi


@njit(cache=True, nogil=True)
def contact_axis(b_mode, tri_a, tri_b, nx, ny, nz, gap, kb, pb, ptb, identity, hints, eps):
    """The contact normal: of n (the closest points' direction, projection gap ``gap``; NaN if
    none) and the face normals of A's and B's triangles (either sign), the axis of largest
    projection gap, a face normal winning when it is within eps of the best. At a vertex-face
    or face-face contact the face normal is the physical normal, while the closest points of two
    parallel faces are not unique and their direction tilts by (lateral offset / distance)."""
    best = gap if nx == nx else -np.inf
    bx, by, bz = nx, ny, nz
    last = 2 if b_mode == B_MESH else 1
    for side in range(last):
        cx, cy, cz, length = _face_normal(tri_a if side == 0 else tri_b)
        if length == 0.0:
            continue
        for sign in (1.0, -1.0):
            g = axis_gap(b_mode, tri_a, tri_b, sign * cx, sign * cy, sign * cz, kb, pb, ptb, identity, hints)
            if g >= best - eps:
                best = max(best, g)
                bx, by, bz = sign * cx, sign * cy, sign * cz
    return bx, by, bz
