"""Node-level motion bounds of conservative advancement on triangle meshes (ccd_mesh.py; its module
doc, "Why it never tunnels", derives them): the step a projection gap allows (``safe_step``) and
the advancement of a node pair's OBBs along the best of 7 axes (``node_step``).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


# node_bounds layout of touche/_kernels/trees/bvh_volumes.py (bounding sphere of the node's triangles);
# tests/bvh/test_ccd_mesh.py checks these against bvh_volumes and that the spheres hold the triangles
OBB_CENTER = 6
OBB_AXES = 9
OBB_HALF = 18
SPHERE_CENTER = 27
SPHERE_RADIUS = 30

# B's kind of object
B_MESH = 0
B_CONVEX = 1
B_PLANE = 2  # kinds.PLANE (two-sided) or kinds.HALFSPACE, translating only


@njit(cache=True, nogil=True, inline="always")
def axis_terms(state, nx, ny, nz):
    """(n.v, u = n x w, |u|, |w|) of a motion state."""
    wx, wy, wz = state[3], state[4], state[5]
    ux = ny * wz - nz * wy
    uy = nz * wx - nx * wz
    uz = nx * wy - ny * wx
    return (nx * state[0] + ny * state[1] + nz * state[2], ux, uy, uz, np.sqrt(ux * ux + uy * uy + uz * uz),
            np.sqrt(wx * wx + wy * wy + wz * wz))


@njit(cache=True, nogil=True, inline="always")
def ball_rates(state, nv, ux, uy, uz, ul, wl, x, y, z, r):
    """(max q', min q', |q''| bound, sup q', inf q') over a ball (centre x, y, z, radius r)."""
    yx = x - state[6]
    yy = y - state[7]
    yz = z - state[8]
    reach = np.sqrt(yx * yx + yy * yy + yz * yz) + r
    speed = nv + yx * ux + yy * uy + yz * uz
    return speed + r * ul, speed - r * ul, ul * wl * reach, nv + ul * reach, nv - ul * reach


@njit(cache=True, nogil=True)
def safe_step(gap, margin, a, b, a_global):
    """Largest h such that both bounds keep gap - (a h + b h^2 / 2) >= margin and
    gap - a_global h >= margin (the larger of the two bounds' steps; inf if neither closes)."""
    room = gap - margin
    if room <= 0.0:
        return 0.0
    if b > 0.0:
        taylor = 2.0 * room / (a + np.sqrt(a * a + 2.0 * b * room))
    elif a > 0.0:
        taylor = room / a
    else:
        taylor = np.inf
    if a_global > 0.0:
        flat = room / a_global
    else:
        flat = np.inf
    return max(taylor, flat)


@njit(cache=True, nogil=True, inline="always")
def apply_pose(m, x, y, z):
    """m (4, 4) applied to the point (x, y, z)."""
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z + m[0, 3],
            m[1, 0] * x + m[1, 1] * y + m[1, 2] * z + m[1, 3],
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z + m[2, 3])


@njit(cache=True, nogil=True, inline="always")
def rotate_by(m, x, y, z):
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z,
            m[1, 0] * x + m[1, 1] * y + m[1, 2] * z,
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z)


@njit(cache=True, nogil=True, inline="always")
def _side(state, nx, ny, nz, gx, gy, gz, spread_axes, hx, hy, hz, reach_local, ball):
    """Bounds on the normal speed along n of the contents of a box (centre g, unit axes as rows
    of spread_axes (3, 3) with half extents h; contents within reach_local of g), or of a ball
    (``ball``: centre g, radius reach_local), moving by ``state``: (q' at g, spread of q' over
    the contents, |q''| bound, segment-wide spread |u| (|g - c| + reach_local))."""
    wx, wy, wz = state[3], state[4], state[5]
    ux = ny * wz - nz * wy
    uy = nz * wx - nx * wz
    uz = nx * wy - ny * wx
    ul = np.sqrt(ux * ux + uy * uy + uz * uz)
    nv = nx * state[0] + ny * state[1] + nz * state[2]
    yx = gx - state[6]
    yy = gy - state[7]
    yz = gz - state[8]
    centre = nv + yx * ux + yy * uy + yz * uz
    spread = (hx * abs(spread_axes[0, 0] * ux + spread_axes[0, 1] * uy + spread_axes[0, 2] * uz)
              + hy * abs(spread_axes[1, 0] * ux + spread_axes[1, 1] * uy + spread_axes[1, 2] * uz)
              + hz * abs(spread_axes[2, 0] * ux + spread_axes[2, 1] * uy + spread_axes[2, 2] * uz))
    reach = np.sqrt(yx * yx + yy * yy + yz * yz) + reach_local
    spread = ul * reach_local if ball else min(spread, ul * reach_local)
    wl = np.sqrt(wx * wx + wy * wy + wz * wz)
    return centre, spread, ul * wl * reach, ul * reach


# ----------------------------------------------------------------------------------------------
# node pairs: the best projection gap of the two OBBs over 7 axes (centre line, both boxes' face
# normals) and the safe step along it
@njit(cache=True, nogil=True)
def node_step(b_mode, two_sided, nb_a, ia, rel, la, nb_b, ib, lb, ball_b, ptb, axes_a, descend):
    """(gap, step, size) of A's node ia (moved into B's frame) against B's node ib / convex ball
    / plane, all in B's frame. ``size`` = the sum of the boxes' h0 + h1 + h2 (the descend
    scale); when gap <= descend * size the step is not computed (0: the pair splits). axes_a
    (3, 3) is scratch for A's rotated axes."""
    # A's box in B's frame
    gx, gy, gz = apply_pose(rel, nb_a[ia, OBB_CENTER], nb_a[ia, OBB_CENTER + 1], nb_a[ia, OBB_CENTER + 2])
    for i in range(3):
        x, y, z = rotate_by(rel, nb_a[ia, OBB_AXES + 3 * i], nb_a[ia, OBB_AXES + 3 * i + 1],
                             nb_a[ia, OBB_AXES + 3 * i + 2])
        axes_a[i, 0] = x
        axes_a[i, 1] = y
        axes_a[i, 2] = z
    ha0 = nb_a[ia, OBB_HALF]
    ha1 = nb_a[ia, OBB_HALF + 1]
    ha2 = nb_a[ia, OBB_HALF + 2]
    diag_a = ha0 + ha1 + ha2  # >= the half diagonal: every content point is within it of g
    if b_mode == B_PLANE:
        pnx, pny, pnz = ptb[1, 0], ptb[1, 1], ptb[1, 2]
        height = pnx * gx + pny * gy + pnz * gz - (pnx * ptb[0, 0] + pny * ptb[0, 1] + pnz * ptb[0, 2])
        if height >= 0.0 or not two_sided:
            nx, ny, nz = -pnx, -pny, -pnz
        else:
            nx, ny, nz = pnx, pny, pnz
            height = -height
        gap = height - (ha0 * abs(axes_a[0, 0] * nx + axes_a[0, 1] * ny + axes_a[0, 2] * nz)
                        + ha1 * abs(axes_a[1, 0] * nx + axes_a[1, 1] * ny + axes_a[1, 2] * nz)
                        + ha2 * abs(axes_a[2, 0] * nx + axes_a[2, 1] * ny + axes_a[2, 2] * nz))
        if gap <= descend * diag_a:
            return gap, 0.0, diag_a
        centre_a, spread_a, acc_a, flat_a = _side(la, nx, ny, nz, gx, gy, gz, axes_a, ha0, ha1, ha2, diag_a, False)
        nva = nx * la[0] + ny * la[1] + nz * la[2]
        nvb = nx * lb[0] + ny * lb[1] + nz * lb[2]
        return gap, safe_step(gap, 0.0, centre_a + spread_a - nvb, acc_a, nva + flat_a - nvb), diag_a
    if b_mode == B_MESH:
        hx = nb_b[ib, OBB_CENTER]
        hy = nb_b[ib, OBB_CENTER + 1]
        hz = nb_b[ib, OBB_CENTER + 2]
        hb0 = nb_b[ib, OBB_HALF]
        hb1 = nb_b[ib, OBB_HALF + 1]
        hb2 = nb_b[ib, OBB_HALF + 2]
        diag_b = hb0 + hb1 + hb2
    else:
        hx, hy, hz = ball_b[0], ball_b[1], ball_b[2]
        hb0 = 0.0
        hb1 = 0.0
        hb2 = 0.0
        diag_b = ball_b[3]
    dx = hx - gx
    dy = hy - gy
    dz = hz - gz
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    # projections: da_i = a_i . d, db_j = b_j . d, R_ij = a_i . b_j
    da0 = axes_a[0, 0] * dx + axes_a[0, 1] * dy + axes_a[0, 2] * dz
    da1 = axes_a[1, 0] * dx + axes_a[1, 1] * dy + axes_a[1, 2] * dz
    da2 = axes_a[2, 0] * dx + axes_a[2, 1] * dy + axes_a[2, 2] * dz
    best = -np.inf
    nx = 1.0
    ny = 0.0
    nz = 0.0
    if b_mode == B_MESH:
        bo = OBB_AXES
        r00 = axes_a[0, 0] * nb_b[ib, bo] + axes_a[0, 1] * nb_b[ib, bo + 1] + axes_a[0, 2] * nb_b[ib, bo + 2]
        r01 = axes_a[0, 0] * nb_b[ib, bo + 3] + axes_a[0, 1] * nb_b[ib, bo + 4] + axes_a[0, 2] * nb_b[ib, bo + 5]
        r02 = axes_a[0, 0] * nb_b[ib, bo + 6] + axes_a[0, 1] * nb_b[ib, bo + 7] + axes_a[0, 2] * nb_b[ib, bo + 8]
        r10 = axes_a[1, 0] * nb_b[ib, bo] + axes_a[1, 1] * nb_b[ib, bo + 1] + axes_a[1, 2] * nb_b[ib, bo + 2]
        r11 = axes_a[1, 0] * nb_b[ib, bo + 3] + axes_a[1, 1] * nb_b[ib, bo + 4] + axes_a[1, 2] * nb_b[ib, bo + 5]
        r12 = axes_a[1, 0] * nb_b[ib, bo + 6] + axes_a[1, 1] * nb_b[ib, bo + 7] + axes_a[1, 2] * nb_b[ib, bo + 8]
        r20 = axes_a[2, 0] * nb_b[ib, bo] + axes_a[2, 1] * nb_b[ib, bo + 1] + axes_a[2, 2] * nb_b[ib, bo + 2]
        r21 = axes_a[2, 0] * nb_b[ib, bo + 3] + axes_a[2, 1] * nb_b[ib, bo + 4] + axes_a[2, 2] * nb_b[ib, bo + 5]
        r22 = axes_a[2, 0] * nb_b[ib, bo + 6] + axes_a[2, 1] * nb_b[ib, bo + 7] + axes_a[2, 2] * nb_b[ib, bo + 8]
        db0 = nb_b[ib, bo] * dx + nb_b[ib, bo + 1] * dy + nb_b[ib, bo + 2] * dz
        db1 = nb_b[ib, bo + 3] * dx + nb_b[ib, bo + 4] * dy + nb_b[ib, bo + 5] * dz
        db2 = nb_b[ib, bo + 6] * dx + nb_b[ib, bo + 7] * dy + nb_b[ib, bo + 8] * dz
        # A's faces
        g = abs(da0) - ha0 - (hb0 * abs(r00) + hb1 * abs(r01) + hb2 * abs(r02))
        if g > best:
            best = g
            sign = 1.0 if da0 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[0, 0], sign * axes_a[0, 1], sign * axes_a[0, 2]
        g = abs(da1) - ha1 - (hb0 * abs(r10) + hb1 * abs(r11) + hb2 * abs(r12))
        if g > best:
            best = g
            sign = 1.0 if da1 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[1, 0], sign * axes_a[1, 1], sign * axes_a[1, 2]
        g = abs(da2) - ha2 - (hb0 * abs(r20) + hb1 * abs(r21) + hb2 * abs(r22))
        if g > best:
            best = g
            sign = 1.0 if da2 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[2, 0], sign * axes_a[2, 1], sign * axes_a[2, 2]
        # B's faces
        g = abs(db0) - hb0 - (ha0 * abs(r00) + ha1 * abs(r10) + ha2 * abs(r20))
        if g > best:
            best = g
            sign = 1.0 if db0 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo], sign * nb_b[ib, bo + 1], sign * nb_b[ib, bo + 2]
        g = abs(db1) - hb1 - (ha0 * abs(r01) + ha1 * abs(r11) + ha2 * abs(r21))
        if g > best:
            best = g
            sign = 1.0 if db1 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo + 3], sign * nb_b[ib, bo + 4], sign * nb_b[ib, bo + 5]
        g = abs(db2) - hb2 - (ha0 * abs(r02) + ha1 * abs(r12) + ha2 * abs(r22))
        if g > best:
            best = g
            sign = 1.0 if db2 >= 0.0 else -1.0
            nx, ny, nz = sign * nb_b[ib, bo + 6], sign * nb_b[ib, bo + 7], sign * nb_b[ib, bo + 8]
        if dist > 0.0:
            g = dist - (ha0 * abs(da0) + ha1 * abs(da1) + ha2 * abs(da2)
                        + hb0 * abs(db0) + hb1 * abs(db1) + hb2 * abs(db2)) / dist
            if g > best:
                best = g
                nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:  # a ball of B: A's faces and the centre line
        g = abs(da0) - ha0 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da0 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[0, 0], sign * axes_a[0, 1], sign * axes_a[0, 2]
        g = abs(da1) - ha1 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da1 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[1, 0], sign * axes_a[1, 1], sign * axes_a[1, 2]
        g = abs(da2) - ha2 - diag_b
        if g > best:
            best = g
            sign = 1.0 if da2 >= 0.0 else -1.0
            nx, ny, nz = sign * axes_a[2, 0], sign * axes_a[2, 1], sign * axes_a[2, 2]
        if dist > 0.0:
            g = dist - (ha0 * abs(da0) + ha1 * abs(da1) + ha2 * abs(da2)) / dist - diag_b
            if g > best:
                best = g
                nx, ny, nz = dx / dist, dy / dist, dz / dist
    size = diag_a + diag_b
    if best <= descend * size:
        return best, 0.0, size
    centre_a, spread_a, acc_a, flat_a = _side(la, nx, ny, nz, gx, gy, gz, axes_a, ha0, ha1, ha2, diag_a, False)
    if b_mode == B_MESH:
        bx = nb_b[ib, OBB_AXES:OBB_AXES + 9].reshape(3, 3)
        centre_b, spread_b, acc_b, flat_b = _side(lb, nx, ny, nz, hx, hy, hz, bx, hb0, hb1, hb2, diag_b, False)
    else:
        centre_b, spread_b, acc_b, flat_b = _side(lb, nx, ny, nz, hx, hy, hz, axes_a, 0.0, 0.0, 0.0, diag_b, True)
    nva = nx * la[0] + ny * la[1] + nz * la[2]
    nvb = nx * lb[0] + ny * lb[1] + nz * lb[2]
    # Taylor: (max q'_A) - (min q'_B); segment-wide: sup q'_A = n.v_A + |u| reach (flat_a)
    return best, safe_step(best, 0.0, (centre_a + spread_a) - (centre_b - spread_b), acc_a + acc_b,
                           (nva + flat_a) - (nvb - flat_b)), size
