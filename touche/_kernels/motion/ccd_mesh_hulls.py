"""The hull prefix of conservative advancement on triangle meshes (ccd_mesh.py, module doc: "The
hull prefix"): ``hull_advance`` advances the two convex hulls until they are within HANDOVER of
their radii or proves a MISS, and the bounds of a motion row the tolerances are scaled by
(``row_bounds``, ``motion_bounds``, ``tolerances``).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.convex.gjk import GJK_MAX_ITERATIONS, distance_single  # noqa: E402
from touche._kernels.motion.ccd import KIND_KEYFRAMES, SEGMENT_SIZE, advancement_scratch, ball_advance  # noqa: E402
from touche._kernels.motion.ccd import first_order_step, motion_rho, motion_state, point_rate, support_world  # noqa: E402
from touche import tolerance as _tol  # noqa: E402
from touche._kernels.motion.ccd_node_bounds import apply_pose, axis_terms, ball_rates, safe_step  # noqa: E402


# the hulls' first-order step (first_order_step) once their gap is below NEAR_HULLS x the sum of the
# balls' radii (farther, the balls' bound is as good and its step costs no support walks)
NEAR_HULLS = 0.05


# ----------------------------------------------------------------------------------------------
# query set-up
@njit(cache=True, nogil=True)
def row_bounds(mp, ball):
    """(bound on the speed of any point of a shape within ``ball`` (local (cx, cy, cz, r)),
    largest |coordinate| of the motion's origins / reference points) of one packed motion row:
    they scale the coarse tolerance and the touching tolerance (not used for safety)."""
    reach_local = np.sqrt(ball[0] * ball[0] + ball[1] * ball[1] + ball[2] * ball[2]) + ball[3]
    speed = 0.0
    extent = 0.0
    if int(mp[0]) == KIND_KEYFRAMES:
        for k in range(int(mp[1])):
            base = 2 + k * SEGMENT_SIZE
            v = np.sqrt(mp[base + 17] ** 2 + mp[base + 18] ** 2 + mp[base + 19] ** 2)
            w = np.sqrt(mp[base + 14] ** 2 + mp[base + 15] ** 2 + mp[base + 16] ** 2)
            speed = max(speed, v + w * reach_local)
            for r in range(3):
                extent = max(extent, abs(mp[base + 11 + r]),
                             abs(mp[base + 11 + r] + (mp[base + 1] - mp[base]) * mp[base + 17 + r]))
    else:
        v = np.sqrt(mp[17] ** 2 + mp[18] ** 2 + mp[19] ** 2)
        w = np.sqrt(mp[20] ** 2 + mp[21] ** 2 + mp[22] ** 2)
        arm = np.sqrt((mp[4] - mp[23]) ** 2 + (mp[8] - mp[24]) ** 2 + (mp[12] - mp[25]) ** 2)
        speed = v + w * (arm + reach_local)
        for r in range(3):
            extent = max(extent, abs(mp[4 + 4 * r]))
    return speed, extent


@njit(cache=True, nogil=True)
def motion_bounds(rows, ball):
    """row_bounds maximised over packed motion rows (n, P)."""
    speed = 0.0
    extent = 0.0
    for i in range(rows.shape[0]):
        s, e = row_bounds(rows[i], ball)
        speed = max(speed, s)
        extent = max(extent, e)
    return speed, extent


@njit(cache=True, nogil=True)
def tolerances(mpa, ball_a, mpb, ball_b, scale, t_max, time_tolerance):
    """(eps, eps_coarse) of one query: eps the touching tolerance (touche.tolerance) of the
    shapes' size plus their origins' reach; eps_coarse the distance covered at the speed bound
    in time_tolerance x t_max (the contact accepted after the step budget, see the module doc)."""
    speed_a, extent_a = row_bounds(mpa, ball_a)
    speed_b, extent_b = row_bounds(mpb, ball_b)
    eps = _tol.ABSOLUTE + _tol.RELATIVE * (scale + max(extent_a, extent_b))
    horizon = t_max if t_max < np.inf else 1.0
    return eps, max(16.0 * eps, time_tolerance * horizon * (speed_a + speed_b))


# ----------------------------------------------------------------------------------------------
# the hull prefix: conservative advancement of the two convex hulls (or A's hull and convex B)
@njit(cache=True, nogil=True)
def hull_advance(ka, pa, pta, ball_a, mpa, kb, pb, ptb, ball_b, mpb, t_max, margin, handover, max_steps, witness):
    """Advance the convex hulls of A and B (any convex kinds, local frames, inside the local
    balls ball_a / ball_b) from t = 0 while their distance stays above ``margin``: a mesh lies
    in its hull, so the meshes stay more than ``margin`` apart on [0, t) for the returned t. Stops
    once the hulls' projection gap is <= ``handover`` (the BVH takes over there), after
    ``max_steps`` steps, or past t_max. Returns (t, steps, missed): missed when the hulls stay
    more than ``margin`` apart on all of [0, t_max] (so do the meshes: a MISS).

    Each step: GJK gives the hulls' closest points' direction n; the gap used is the exact
    projection gap along n (support of B along -n minus support of A along n: a lower bound of
    the distance for any n, free of GJK's termination error), and the step is the Taylor /
    segment-wide bound of the module doc for the two bounding balls along n (every hull point is
    in its ball), so the hulls cannot close more than that gap within the step.

    Also returns ``closed``: it stopped because the hulls came within ``handover`` (not at the
    step cap or t_max); then ``witness`` (9,) holds the last GJK direction (A -> B) and closest
    points on A's and B's hulls, world frame. Returns (t, steps, missed, closed)."""
    pose_a, pose_b, state_a, state_b, warm, hints_a, hints_b = advancement_scratch()
    # the bounding balls first: their gap bounds the hulls' (the balls hold them), a step costs
    # no support walk, and far apart they step as far as the hulls would
    t, first, missed = ball_advance(mpa, ball_a, motion_rho(mpa, ball_a), mpb, ball_b, motion_rho(mpb, ball_b), t_max,
                                    margin, max_steps, pose_a, state_a, pose_b, state_b)
    if missed:
        return t_max, first, True, False
    for step in range(first, max_steps):
        motion_state(mpa, t, pose_a, state_a)
        motion_state(mpb, t, pose_b, state_b)
        signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = distance_single(
            ka, pa, pta, pose_a, kb, pb, ptb, pose_b, margin, warm, GJK_MAX_ITERATIONS)
        # GJK's last support vertices (A's, B's: near the closest points) start the walks below
        hints_a[0] = int(warm[25])
        hints_b[0] = int(warm[26])
        witness[0], witness[1], witness[2] = nx, ny, nz
        witness[3], witness[4], witness[5] = ax, ay, az
        witness[6], witness[7], witness[8] = bx, by, bz
        if not (signed > handover) or nx != nx:
            return t, step + 1, False, True
        hx, hy, hz = support_world(ka, pa, pta, pose_a, nx, ny, nz, hints_a)
        lx, ly, lz = support_world(kb, pb, ptb, pose_b, -nx, -ny, -nz, hints_b)
        gap = (nx * lx + ny * ly + nz * lz) - (nx * hx + ny * hy + nz * hz)
        if not (gap > handover):
            return t, step + 1, False, True
        cx, cy, cz = apply_pose(pose_a, ball_a[0], ball_a[1], ball_a[2])
        nv, ux, uy, uz, ul_a, wl = axis_terms(state_a, nx, ny, nz)
        hi_a, lo_a, acc_a, sup_a, inf_a = ball_rates(state_a, nv, ux, uy, uz, ul_a, wl, cx, cy, cz, ball_a[3])
        cx, cy, cz = apply_pose(pose_b, ball_b[0], ball_b[1], ball_b[2])
        nv, ux, uy, uz, ul_b, wl = axis_terms(state_b, nx, ny, nz)
        hi_b, lo_b, acc_b, sup_b, inf_b = ball_rates(state_b, nv, ux, uy, uz, ul_b, wl, cx, cy, cz, ball_b[3])
        h = safe_step(gap, margin, hi_a - lo_b, acc_a + acc_b, sup_a - inf_b)
        if (ul_a > 0.0 or ul_b > 0.0) and h > 0.0 and gap < NEAR_HULLS * (ball_a[3] + ball_b[3]):
            # rotation: the balls' first-order bound is loose (every point's speed), the shapes'
            # own is exact to first order: a longer step, still safe (first_order_step)
            closing = point_rate(state_a, nx, ny, nz, hx, hy, hz) - point_rate(state_b, nx, ny, nz, lx, ly, lz)
            h = first_order_step(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny,
                                 nz, gap, margin, acc_a + acc_b, h, closing,
                                 min(min(state_a[9], state_b[9]), t_max) - t)
        following = min(t + h, min(state_a[9], state_b[9]))
        if following > t_max:
            return t_max, step + 1, True, False
        if not following > t:
            following = np.nextafter(t, np.inf)
        t = following
    return t, max_steps, False, False
