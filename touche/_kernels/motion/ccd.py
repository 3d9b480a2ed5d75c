"""Continuous collision detection for rigid motions: conservative advancement on GJK distances.

Seeds: Ericson 9.5.7 (conservative advancement / GJK-based time of impact), Mirtich's bound on
the approach speed of a rotating body, Eberly S1 §5 (screw motion X(t) = K0 + tV + R(t,W)(X0-K0),
with the X - K(t) correction of SEED-NOTES S1 L62/L2130).

Motions arrive packed (touche/motion.py ``packed()``), one float64 row per motion:
  SCREW (Static, Linear, Screw): [2, pose0 (16, row-major), v (3), w (3), c (3)]
      x(t) = c + t v + Rot(t w) (R0 x_local + p0 - c); velocity field v + w x (x - c - t v).
  KEYFRAMES (Keyframes, Integrated): [3, m, m segments of (t0, t1, R0 (9), p0 (3), w (3), v (3))]
      on [t0, t1): R = Rot((t - t0) w) R0, origin p0 + (t - t0) v; velocity field
      v + w x (x - origin(t)); the pose is held outside [first t0, last t1].
Shapes arrive packed as in shapes.py, plus a local bounding sphere ``ball`` = (cx, cy, cz, r)
that contains the whole shape (radius included).

Advancement (why it never passes a contact): at time t_k the shapes are separated by d_k with
unit normal n from A to B (GJK). For convex shapes the distance is at least the gap between
their projections on the FIXED axis n; that gap equals d_k at t_k and shrinks no faster than
    mu = max_{x in A} n.vel_A(x) - min_{y in B} n.vel_B(y)
       <= (n.v_A + |n x w_A| rho_A) - (n.v_B - |n x w_B| rho_B)
since n.(w x r) = r.(n x w) <= |n x w| |r| and every point of a shape is within rho of its
motion's reference point (rho from the bounding sphere; it is constant under rigid motion).
The velocities are constant on a screw and on a keyframe segment, so the bound holds until the
segment ends: d(t) >= d_k - mu (t - t_k) > 0 for t < t_k + d_k / mu. We step by
(d_k - eps/2) / mu (or to the segment end when mu <= 0: the gap cannot shrink there), so the
distance stays > eps/2 on every stepped-over interval. Contact is declared when d <= eps (the
touching tolerance): the reported time t satisfies d(t) <= eps and d > eps/2 on [0, t), i.e. it
is never after the true first contact and the contact it reports is real to eps.

Rotation: mu takes the fastest point of either ball (a spinning body's far side at |n x w| rho)
while near a contact only the supporting points approach; ``first_order_step`` (below) then
checks a longer step against a concave lower bound of the gap along n that is exact to first
order (the shapes' supports along n + h (n x w)), so the steps near a contact are Newton-like
(box-box spinning up to 3 turns, benchmarks/bench_ccd.py: 37 -> 16 GJK calls a query).

Cost: a transversal contact converges geometrically at rate 1 - (true approach speed) / mu,
~30 mu / speed GJK calls; a near miss whose gap stays just above eps costs more (the steps shrink
with the gap), so the loop is capped: at the cap the rest of [t, t_max] is searched by interval
halving (Ericson 5.5.1, ``interval_halving``) with the global speed bound, earliest first, down to
intervals of width eps_coarse / speed: it reports the start of the first interval it cannot
exclude (never after the first contact; the shapes are within ~eps_coarse there) or MISS;
MAX_ITERATIONS with the last safe time (a lower bound) if that too runs out of budget.

Planes / half-spaces: the plane must be shape B with a translational motion (w = 0, rho = 0);
its gap to a convex A is computed from A's support along the plane normal.

Entry points: ``ca_pair(...) -> (status, iterations)`` writes out (7,) = (t, point (3), normal (3));
``ca_many(..., lo, hi)`` batch over pairs [lo, hi) (run on chunks by touche._parallel.run;
motion rows broadcast when a batch has one row);
``motion_pose(mp, t, out (4, 4))``, ``motion_pose_many(mp (n, P), t, out (n, 4, 4), lo, hi)``.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base import kinds
from touche._kernels.convex.gjk import GJK_MAX_ITERATIONS, WARM_SIZE, distance_single
from touche._kernels.convex.support import margin_of, support_local

KIND_SCREW = 2
KIND_KEYFRAMES = 3
SEGMENT_SIZE = 20


# ----------------------------------------------------------------------------------------------
# motion evaluation
@njit(cache=True, nogil=True)
def _segment_of(mp, t):
    """Keyframe segment index holding t (t0 <= t < t1), -1 before the first, m after the last."""
    m = int(mp[1])
    if t < mp[2]:
        return -1
    for i in range(m):
        if t < mp[2 + i * SEGMENT_SIZE + 1]:
            return i
    return m


@njit(cache=True, nogil=True)
def motion_pose(mp, t, out):
    """Pose (4, 4) of a packed motion at time t, written to ``out`` (motion_state's pose: the
    advancement and its interval-halving fallback see the same poses)."""
    state = np.empty(10)
    motion_state(mp, t, out, state)


@njit(cache=True, nogil=True)
def motion_rho(mp, ball):
    """Radius about the motion's reference point containing the shape (constant in time)."""
    if int(mp[0]) == KIND_KEYFRAMES:  # reference point: the local origin
        return np.sqrt(ball[0] * ball[0] + ball[1] * ball[1] + ball[2] * ball[2]) + ball[3]
    if mp[20] == 0.0 and mp[21] == 0.0 and mp[22] == 0.0:
        return 0.0  # no rotation: rho is never used (keeps planes, rho = inf, out of 0 * inf)
    dx = mp[1] * ball[0] + mp[2] * ball[1] + mp[3] * ball[2] + mp[4] - mp[23]
    dy = mp[5] * ball[0] + mp[6] * ball[1] + mp[7] * ball[2] + mp[8] - mp[24]
    dz = mp[9] * ball[0] + mp[10] * ball[1] + mp[11] * ball[2] + mp[12] - mp[25]
    return np.sqrt(dx * dx + dy * dy + dz * dz) + ball[3]


@njit(cache=True, nogil=True)
def motion_rates(mp, t, nx, ny, nz):
    """(n.v, |n x w|, end): along unit n every point of a shape within rho of the reference point
    moves with normal speed in [n.v - |n x w| rho, n.v + |n x w| rho] on [t, end)."""
    if int(mp[0]) == KIND_KEYFRAMES:
        m = int(mp[1])
        i = _segment_of(mp, t)
        if i < 0:
            return 0.0, 0.0, mp[2]
        if i >= m:
            return 0.0, 0.0, np.inf
        base = 2 + i * SEGMENT_SIZE
        wx, wy, wz = mp[base + 14], mp[base + 15], mp[base + 16]
        vx, vy, vz = mp[base + 17], mp[base + 18], mp[base + 19]
        end = mp[base + 1]
    else:
        wx, wy, wz = mp[20], mp[21], mp[22]
        vx, vy, vz = mp[17], mp[18], mp[19]
        end = np.inf
    cx = ny * wz - nz * wy
    cy = nz * wx - nx * wz
    cz = nx * wy - ny * wx
    return nx * vx + ny * vy + nz * vz, np.sqrt(cx * cx + cy * cy + cz * cz), end


@njit(cache=True, nogil=True)
def motion_pose_many(mp, t, out, lo, hi):
    """Poses (n, 4, 4) of n packed motions (mp (n, P)) at time t (rows [lo, hi))."""
    for i in range(lo, hi):
        motion_pose(mp[i], t, out[i])


# ----------------------------------------------------------------------------------------------
# gap of a pair at one time
@njit(cache=True, nogil=True)
def support_world(kind, params, points, t, dx, dy, dz, hints):
    """Support point of a shape (radius included) placed by rigid t, world direction unit d."""
    lx = t[0, 0] * dx + t[1, 0] * dy + t[2, 0] * dz
    ly = t[0, 1] * dx + t[1, 1] * dy + t[2, 1] * dz
    lz = t[0, 2] * dx + t[1, 2] * dy + t[2, 2] * dz
    x, y, z = support_local(kind, params, points, lx, ly, lz, hints, 0)
    r = margin_of(kind, params)
    return (
        t[0, 0] * x + t[0, 1] * y + t[0, 2] * z + t[0, 3] + r * dx,
        t[1, 0] * x + t[1, 1] * y + t[1, 2] * z + t[1, 3] + r * dy,
        t[2, 0] * x + t[2, 1] * y + t[2, 2] * z + t[2, 3] + r * dz,
    )


@njit(cache=True, nogil=True)
def _plane_gap(ka, pa, pta, ta, kb, ptb, tb, hints, point, normal):
    """Signed gap of convex A to plane / half-space B (world); point = A's nearest point,
    normal from A to B. A plane is two-sided (gap to the nearer side, < 0 when A crosses it)."""
    # world plane: n = R_b n_local, offset = n . (T_b q_local)
    lnx, lny, lnz = ptb[1, 0], ptb[1, 1], ptb[1, 2]
    nx = tb[0, 0] * lnx + tb[0, 1] * lny + tb[0, 2] * lnz
    ny = tb[1, 0] * lnx + tb[1, 1] * lny + tb[1, 2] * lnz
    nz = tb[2, 0] * lnx + tb[2, 1] * lny + tb[2, 2] * lnz
    qx = tb[0, 0] * ptb[0, 0] + tb[0, 1] * ptb[0, 1] + tb[0, 2] * ptb[0, 2] + tb[0, 3]
    qy = tb[1, 0] * ptb[0, 0] + tb[1, 1] * ptb[0, 1] + tb[1, 2] * ptb[0, 2] + tb[1, 3]
    qz = tb[2, 0] * ptb[0, 0] + tb[2, 1] * ptb[0, 1] + tb[2, 2] * ptb[0, 2] + tb[2, 3]
    offset = nx * qx + ny * qy + nz * qz
    lox, loy, loz = support_world(ka, pa, pta, ta, -nx, -ny, -nz, hints)
    below = nx * lox + ny * loy + nz * loz - offset  # lowest point of A above the plane
    if kb == kinds.HALFSPACE or below >= 0.0:
        point[0], point[1], point[2] = lox, loy, loz
        normal[0], normal[1], normal[2] = -nx, -ny, -nz
        return below
    hix, hiy, hiz = support_world(ka, pa, pta, ta, nx, ny, nz, hints)
    above = offset - (nx * hix + ny * hiy + nz * hiz)  # highest point of A below the plane
    point[0], point[1], point[2] = hix, hiy, hiz
    normal[0], normal[1], normal[2] = nx, ny, nz
    if above >= 0.0:
        return above
    return max(below, above)  # crossing: < 0


@njit(cache=True, nogil=True)
def _gap(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, hints, point, normal):
    if kb == kinds.PLANE or kb == kinds.HALFSPACE:
        return _plane_gap(ka, pa, pta, ta, kb, ptb, tb, hints, point, normal)
    signed, ax, ay, az, bx, by, bz, nx, ny, nz, status, iterations = distance_single(
        ka, pa, pta, ta, kb, pb, ptb, tb, tolerance, warm, GJK_MAX_ITERATIONS)
    point[0], point[1], point[2] = ax, ay, az
    normal[0], normal[1], normal[2] = nx, ny, nz
    return signed


# ----------------------------------------------------------------------------------------------
# motion state at time t: pose, v, w, reference point c(t), end of the constant-velocity piece
@njit(cache=True, nogil=True, inline="always")
def _turn(wx, wy, wz, s):
    """Rot(s w) as 9 scalars (row-major), one sin / cos (Rodrigues)."""
    norm = np.sqrt(wx * wx + wy * wy + wz * wz)
    angle = norm * s
    if norm == 0.0 or angle == 0.0:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    x = wx / norm
    y = wy / norm
    z = wz / norm
    c = np.cos(angle)
    sn = np.sin(angle)
    k = 1.0 - c
    return (c + x * x * k, x * y * k - z * sn, x * z * k + y * sn,
            y * x * k + z * sn, c + y * y * k, y * z * k - x * sn,
            z * x * k - y * sn, z * y * k + x * sn, c + z * z * k)


@njit(cache=True, nogil=True)
def motion_state(mp, t, pose, state):
    """Pose (4, 4) of a packed motion (touche/_kernels/motion/ccd.py layout) at t into ``pose`` (the
    same pose as ccd.motion_pose, one rotation matrix per call); state (10,) = (v (3), w (3),
    c(t) (3), end): the velocity field on [t, end) is v + w x (x - c(s)), c(s) = c(t) + (s - t) v."""
    pose[3, 0] = 0.0
    pose[3, 1] = 0.0
    pose[3, 2] = 0.0
    pose[3, 3] = 1.0
    if int(mp[0]) == KIND_KEYFRAMES:
        m = int(mp[1])
        i = _segment_of(mp, t)
        moving = 0 <= i < m
        if i < 0:
            i = 0
            s = 0.0
            end = mp[2]
        elif i >= m:
            i = m - 1
            s = mp[2 + i * SEGMENT_SIZE + 1] - mp[2 + i * SEGMENT_SIZE]
            end = np.inf
        else:
            s = t - mp[2 + i * SEGMENT_SIZE]
            end = mp[2 + i * SEGMENT_SIZE + 1]
        base = 2 + i * SEGMENT_SIZE
        wx, wy, wz = mp[base + 14], mp[base + 15], mp[base + 16]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = _turn(wx, wy, wz, s)
        for j in range(3):
            a = mp[base + 2 + j]
            b = mp[base + 5 + j]
            c = mp[base + 8 + j]
            pose[0, j] = r00 * a + r01 * b + r02 * c
            pose[1, j] = r10 * a + r11 * b + r12 * c
            pose[2, j] = r20 * a + r21 * b + r22 * c
        for r in range(3):
            pose[r, 3] = mp[base + 11 + r] + s * mp[base + 17 + r]
            state[6 + r] = pose[r, 3]
            state[r] = mp[base + 17 + r] if moving else 0.0
            state[3 + r] = mp[base + 14 + r] if moving else 0.0
        state[9] = end
        return
    wx, wy, wz = mp[20], mp[21], mp[22]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = _turn(wx, wy, wz, t)
    for j in range(3):
        a = mp[1 + j]
        b = mp[5 + j]
        c = mp[9 + j]
        pose[0, j] = r00 * a + r01 * b + r02 * c
        pose[1, j] = r10 * a + r11 * b + r12 * c
        pose[2, j] = r20 * a + r21 * b + r22 * c
    a = mp[4] - mp[23]
    b = mp[8] - mp[24]
    c = mp[12] - mp[25]
    pose[0, 3] = mp[23] + t * mp[17] + r00 * a + r01 * b + r02 * c
    pose[1, 3] = mp[24] + t * mp[18] + r10 * a + r11 * b + r12 * c
    pose[2, 3] = mp[25] + t * mp[19] + r20 * a + r21 * b + r22 * c
    for k in range(3):
        state[k] = mp[17 + k]
        state[3 + k] = mp[20 + k]
        state[6 + k] = mp[23 + k] + t * mp[17 + k]
    state[9] = np.inf


# ----------------------------------------------------------------------------------------------
# the convex step under rotation. Along a fixed n over [t, t + h] (module doc), a point x of A
# reaches q_x(t + h) <= q_x(t) + h q'_x(t) + b h^2 / 2, and q_x + h q'_x = (n + h u).x + h (n.v -
# c.u) is affine in x: its maximum over A is at A's support point along n + h u. So
#     max_A n.x(t + h) <= phi_A(h) + b_A h^2 / 2,   phi_A(h) = max_A (q_x + h q'_x),
# and min_B n.y(t + h) >= psi_B(h) - b_B h^2 / 2 (B's support along -(n + h u_B)). The gap bound
# L(h) = psi_B(h) - phi_A(h) - (b_A + b_B) h^2 / 2 is concave (phi a maximum of functions affine
# in h, psi a minimum), so L(0) > margin and L(h1) >= margin give L >= margin on all of [0, h1]:
# any h1 checked that way is a safe step. L is exact to first order (its slope at 0 is the
# support points' approach speed), where the balls' bound (safe_step) takes the fastest point
# of either ball (a spinning ball: r |u| even when its contact side barely moves), so near a
# contact L's steps are Newton-like where the balls' shrink by a constant factor.
FAR_BALLS = 0.05  # ca_pair / the mesh hull prefix: bounding balls (no GJK) while this far apart
FIRST_ORDER_CHORDS = 2  # first_order_step: regula falsi iterations, each checked (3: same steps, more support walks)


@njit(cache=True, nogil=True, inline="always")
def point_rate(state, nx, ny, nz, x, y, z):
    """q' = n.v + (x - c).(n x w) of the point x (world) of a body moving by ``state``."""
    wx, wy, wz = state[3], state[4], state[5]
    return (nx * state[0] + ny * state[1] + nz * state[2] + (x - state[6]) * (ny * wz - nz * wy)
            + (y - state[7]) * (nz * wx - nx * wz) + (z - state[8]) * (nx * wy - ny * wx))


@njit(cache=True, nogil=True)
def _first_order_extreme(k, p, pt, pose, state, hints, nx, ny, nz, h, sign):
    """max (sign 1) / min (sign -1) over a convex shape of q_x + h q'_x along n (world)."""
    wx, wy, wz = state[3], state[4], state[5]
    dx = nx + h * (ny * wz - nz * wy)
    dy = ny + h * (nz * wx - nx * wz)
    dz = nz + h * (nx * wy - ny * wx)
    length = sign * np.sqrt(dx * dx + dy * dy + dz * dz)
    x, y, z = support_world(k, p, pt, pose, dx / length, dy / length, dz / length, hints)
    return nx * x + ny * y + nz * z + h * point_rate(state, nx, ny, nz, x, y, z)


@njit(cache=True, nogil=True)
def _gap_bound(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, acc, h):
    """L(h) of the comment above."""
    return (_first_order_extreme(kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, h, -1.0)
            - _first_order_extreme(ka, pa, pta, pose_a, state_a, hints_a, nx, ny, nz, h, 1.0) - 0.5 * acc * h * h)


@njit(cache=True, nogil=True)
def first_order_step(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, gap,
                     margin, acc, h_safe, closing, limit):
    """A safe step >= h_safe (already safe by the balls' bound) from the concave bound L above
    (``gap`` = L(0) > margin, ``acc`` = b_A + b_B, ``closing`` = -L'(0)): the tangent at 0 lies
    above L, so its root (gap - margin) / closing is at or past L's first root; chords between a
    checked point and it (regula falsi) approach that root from below, each candidate checked.
    ``limit``: the end of the motions' segment / t_max (no step beyond it is needed)."""
    if not h_safe < limit:
        return h_safe
    x0 = 0.0
    f0 = gap - margin
    if closing > 0.0 and h_safe >= f0 / closing:
        return h_safe  # the balls' step already reaches the tangent's root (no rotation that matters)
    hi = f0 / closing if closing > 0.0 else 4.0 * h_safe
    hi = min(max(hi, h_safe), limit)
    fh = _gap_bound(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, acc,
                    hi) - margin
    grown = 0
    while fh >= 0.0:  # all of [0, hi] is safe: take it, or look further
        x0 = hi
        f0 = fh
        if hi >= limit or grown == 4:
            return max(h_safe, x0)
        hi = min(4.0 * hi, limit)
        fh = _gap_bound(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, acc,
                        hi) - margin
        grown += 1
    for attempt in range(FIRST_ORDER_CHORDS):
        m = x0 + (hi - x0) * f0 / (f0 - fh)
        if not m > x0:
            break
        fm = _gap_bound(ka, pa, pta, pose_a, state_a, hints_a, kb, pb, ptb, pose_b, state_b, hints_b, nx, ny, nz, acc,
                        m) - margin
        if not fm >= 0.0:  # rounding at the root: keep the last checked point
            break
        x0 = m
        f0 = fm
    return max(h_safe, x0)


# ----------------------------------------------------------------------------------------------
# the bounding balls' advancement: O(1) a step, as long as the balls are far apart
@njit(cache=True, nogil=True)
def ball_advance(mpa, ball_a, rho_a, mpb, ball_b, rho_b, t_max, margin, max_steps, pose_a, state_a, pose_b, state_b):
    """Advance two shapes by their local bounding balls (ball (4,), rho: motion_rho) from t = 0
    while the balls are more than FAR_BALLS x the sum of their radii apart: the balls' gap bounds
    the shapes' from below, the step is the module doc's (d - margin) / mu with d the balls' gap,
    so the shapes stay more than ``margin`` apart on [0, t). Returns (t, steps, missed): missed
    when that holds on all of [0, t_max] (or the gap can never shrink again). pose / state:
    scratch (4, 4) / (10,)."""
    t = 0.0
    steps = 0
    while steps < max_steps:
        motion_state(mpa, t, pose_a, state_a)
        motion_state(mpb, t, pose_b, state_b)
        nx = pose_b[0, 0] * ball_b[0] + pose_b[0, 1] * ball_b[1] + pose_b[0, 2] * ball_b[2] + pose_b[0, 3]
        ny = pose_b[1, 0] * ball_b[0] + pose_b[1, 1] * ball_b[1] + pose_b[1, 2] * ball_b[2] + pose_b[1, 3]
        nz = pose_b[2, 0] * ball_b[0] + pose_b[2, 1] * ball_b[1] + pose_b[2, 2] * ball_b[2] + pose_b[2, 3]
        nx -= pose_a[0, 0] * ball_a[0] + pose_a[0, 1] * ball_a[1] + pose_a[0, 2] * ball_a[2] + pose_a[0, 3]
        ny -= pose_a[1, 0] * ball_a[0] + pose_a[1, 1] * ball_a[1] + pose_a[1, 2] * ball_a[2] + pose_a[1, 3]
        nz -= pose_a[2, 0] * ball_a[0] + pose_a[2, 1] * ball_a[1] + pose_a[2, 2] * ball_a[2] + pose_a[2, 3]
        between = np.sqrt(nx * nx + ny * ny + nz * nz)
        gap = between - ball_a[3] - ball_b[3]
        if not gap > FAR_BALLS * (ball_a[3] + ball_b[3]):
            break
        nva, pera, end_a = motion_rates(mpa, t, nx / between, ny / between, nz / between)
        nvb, perb, end_b = motion_rates(mpb, t, nx / between, ny / between, nz / between)
        rate = (nva + pera * rho_a) - (nvb - perb * rho_b)
        following = t + (gap - margin) / rate if rate > 0.0 else np.inf
        following = min(following, min(end_a, end_b))
        steps += 1
        if following > t_max or following == np.inf:  # (inf: the balls part for good)
            return t_max, steps, True
        if not following > t:
            following = np.nextafter(t, np.inf)
        t = following
    return t, steps, False


# ----------------------------------------------------------------------------------------------
# conservative advancement
@njit(cache=True, nogil=True)
def advancement_scratch():
    """Scratch of one pair's advancement: both poses (4, 4), both motion states (10,), the GJK
    warm start and the support hints of A and B."""
    return (np.empty((4, 4)), np.empty((4, 4)), np.empty(10), np.empty(10), np.zeros(WARM_SIZE),
            np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64))


@njit(cache=True, nogil=True)
def ca_pair(ka, pa, pta, mpa, balla, kb, pb, ptb, mpb, ballb, t_max, eps, eps_coarse, max_iterations, out):
    """Conservative advancement of one pair (see the module doc). out (7,) = (t, point (3) on A
    at time t, normal (3) from A to B). Returns (status kinds.HIT / ALREADY_TOUCHING / MISS /
    TOI_MAX_ITERATIONS, GJK calls)."""
    ta, tb, state_a, state_b, warm, hints_a, hints_b = advancement_scratch()
    hints = np.zeros(2, dtype=np.int64)
    point = np.empty(3)
    normal = np.empty(3)
    rho_a = motion_rho(mpa, balla)
    rho_b = motion_rho(mpb, ballb)
    plane = kb == kinds.PLANE or kb == kinds.HALFSPACE
    t = 0.0
    for i in range(7):
        out[i] = np.nan
    first = 0
    if not plane:
        # the bounding balls first (no GJK far away)
        t, first, missed = ball_advance(mpa, balla, rho_a, mpb, ballb, rho_b, t_max, 0.5 * eps, max_iterations, ta,
                                        state_a, tb, state_b)
        if missed:
            out[0] = np.inf
            return kinds.MISS, first
    for iteration in range(first, max_iterations):
        motion_state(mpa, t, ta, state_a)
        motion_state(mpb, t, tb, state_b)
        signed = _gap(ka, pa, pta, ta, kb, pb, ptb, tb, eps, warm, hints, point, normal)
        if signed != signed or normal[0] != normal[0]:
            if signed == signed and signed <= eps:  # touching cores: no normal, still a contact
                out[0] = t
                for j in range(3):
                    out[1 + j] = point[j]
                return (kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING), iteration + 1
            out[0] = t
            return kinds.TOI_MAX_ITERATIONS, iteration + 1
        if signed <= eps:
            out[0] = t
            for j in range(3):
                out[1 + j] = point[j]
                out[4 + j] = normal[j]
            return (kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING), iteration + 1
        nva, pera, end_a = motion_rates(mpa, t, normal[0], normal[1], normal[2])
        nvb, perb, end_b = motion_rates(mpb, t, normal[0], normal[1], normal[2])
        rate = (nva + pera * rho_a) - (nvb - perb * rho_b)
        end = min(end_a, end_b)
        if rate > 0.0:
            following = t + (signed - 0.5 * eps) / rate
        else:
            following = np.inf  # the gap along n cannot shrink before the velocities change
        if following > end:
            following = end
        if not plane and (pera > 0.0 or perb > 0.0) and following < min(end, t_max):
            # rotation: the bound above takes the fastest point of either ball; the concave
            # first-order bound (first_order_step) takes the support points' speed near the contact
            nx, ny, nz = normal[0], normal[1], normal[2]
            hx, hy, hz = support_world(ka, pa, pta, ta, nx, ny, nz, hints_a)
            lx, ly, lz = support_world(kb, pb, ptb, tb, -nx, -ny, -nz, hints_b)
            gap = (nx * lx + ny * ly + nz * lz) - (nx * hx + ny * hy + nz * hz)
            if gap > 0.5 * eps:
                closing = point_rate(state_a, nx, ny, nz, hx, hy, hz) - point_rate(state_b, nx, ny, nz, lx, ly, lz)
                wla = np.sqrt(state_a[3] * state_a[3] + state_a[4] * state_a[4] + state_a[5] * state_a[5])
                wlb = np.sqrt(state_b[3] * state_b[3] + state_b[4] * state_b[4] + state_b[5] * state_b[5])
                acc = pera * wla * rho_a + perb * wlb * rho_b  # |u| |w| reach: |q''| on each side
                h = first_order_step(ka, pa, pta, ta, state_a, hints_a, kb, pb, ptb, tb, state_b, hints_b, nx, ny, nz,
                                     gap, 0.5 * eps, acc, max(following - t, 0.0), closing, min(end, t_max) - t)
                following = max(following, min(t + h, end))
        if following > t_max or following == np.inf:  # (inf: the gap along n never shrinks again)
            for j in range(7):
                out[j] = np.nan
            out[0] = np.inf
            return kinds.MISS, iteration + 1
        if not following > t:  # step below the resolution of t: no progress possible
            following = np.nextafter(t, np.inf)
        t = following
    # step budget spent (a near miss whose gap hovers just above eps makes tiny steps): search
    # the rest of [t, t_max] by interval halving (Ericson 5.5.1) with the global speed bound,
    # earliest interval first, down to width eps_coarse / speed
    speed = speed_bound(mpa, rho_a) + speed_bound(mpb, rho_b)
    if t_max < np.inf and speed > 0.0:
        code, found, evaluations = interval_halving(ka, pa, pta, mpa, kb, pb, ptb, mpb, t, t_max, speed,
                                                    eps_coarse / speed, HALVING_BUDGET, eps, warm, hints, ta, tb,
                                                    point, normal)
        if code != kinds.TOI_MAX_ITERATIONS:
            for j in range(7):
                out[j] = np.nan
            if code == kinds.MISS:
                out[0] = np.inf
            else:
                out[0] = found
                for j in range(3):
                    out[1 + j] = point[j]
                    out[4 + j] = normal[j]
            return code, max_iterations + evaluations
    for j in range(7):
        out[j] = np.nan
    out[0] = t
    return kinds.TOI_MAX_ITERATIONS, max_iterations


HALVING_BUDGET = 200_000  # distance evaluations of the interval-halving fallback


@njit(cache=True, nogil=True)
def speed_bound(mp, rho):
    """A bound on the speed of every point within rho of the motion's reference point over the
    whole motion (the largest |v| + |w| rho of its constant-velocity pieces)."""
    if int(mp[0]) == KIND_KEYFRAMES:
        best = 0.0
        for i in range(int(mp[1])):
            base = 2 + i * SEGMENT_SIZE
            v = np.sqrt(mp[base + 17] ** 2 + mp[base + 18] ** 2 + mp[base + 19] ** 2)
            w = np.sqrt(mp[base + 14] ** 2 + mp[base + 15] ** 2 + mp[base + 16] ** 2)
            best = max(best, v + w * rho)
        return best
    v = np.sqrt(mp[17] ** 2 + mp[18] ** 2 + mp[19] ** 2)
    w = np.sqrt(mp[20] ** 2 + mp[21] ** 2 + mp[22] ** 2)
    return v + (w * rho if w > 0.0 else 0.0)


@njit(cache=True, nogil=True)
def interval_halving(ka, pa, pta, mpa, kb, pb, ptb, mpb, start, stop, speed, width, budget, eps, warm, hints, ta, tb,
                     point, normal):
    """Ericson 5.5.1 (IntervalCollision) on [start, stop], earliest half first: an interval
    [a, b] holds no contact when the two distance cones from its ends do not meet below zero,
    gap(a) + gap(b) > speed (b - a) (ccd_analytic.halving_excludes; the points of both shapes
    move no faster than ``speed`` together); one that cannot be excluded is halved until its
    width is <= ``width``, and its start is then reported: never after the first contact, and
    the shapes are within speed x width of touching there (HIT / ALREADY_TOUCHING), or MISS when
    everything is excluded. Returns (status, time, evaluations); point / normal (3,) at that time
    are written. TOI_MAX_ITERATIONS after ``budget`` distance evaluations."""
    stack = np.empty((256, 2))
    stack[0, 0] = start
    stack[0, 1] = stop
    top = 1
    evaluations = 0
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        motion_pose(mpa, b, ta)
        motion_pose(mpb, b, tb)
        gap_b = _gap(ka, pa, pta, ta, kb, pb, ptb, tb, eps, warm, hints, point, normal)
        motion_pose(mpa, a, ta)
        motion_pose(mpb, a, tb)
        gap_a = _gap(ka, pa, pta, ta, kb, pb, ptb, tb, eps, warm, hints, point, normal)
        evaluations += 2
        if gap_a > 0.0 and gap_b > 0.0 and gap_a + gap_b > speed * (b - a):
            continue
        if b - a <= width or top + 2 > stack.shape[0]:
            # gap_a's point / normal are in point / normal
            return (kinds.HIT if a > 0.0 else kinds.ALREADY_TOUCHING), a, evaluations
        if evaluations >= budget:
            return kinds.TOI_MAX_ITERATIONS, a, evaluations
        middle = 0.5 * (a + b)
        stack[top, 0] = middle
        stack[top, 1] = b
        stack[top + 1, 0] = a
        stack[top + 1, 1] = middle
        top += 2
    return kinds.MISS, np.inf, evaluations


@njit(cache=True, nogil=True)
def ca_many(ka, pa, pta, mpa, balla, kb, pb, ptb, mpb, ballb, t_max, eps, eps_coarse, max_iterations,
            out_status, out_t, out_point, out_normal, out_iterations, lo, hi):
    """Batch of ca_pair: mpa (n|1, P), mpb (n|1, Q) packed motions (a batch of 1 broadcasts).
    Outputs: status (n,) int8, t (n,), point (n, 3), normal (n, 3), iterations (n,) int64."""
    step_a = 1 if mpa.shape[0] > 1 else 0
    step_b = 1 if mpb.shape[0] > 1 else 0
    for i in range(lo, hi):
        out = np.empty(7)
        status, iterations = ca_pair(ka, pa, pta, mpa[i * step_a], balla, kb, pb, ptb, mpb[i * step_b], ballb,
                                     t_max, eps, eps_coarse, max_iterations, out)
        out_status[i] = status
        out_t[i] = out[0]
        for j in range(3):
            out_point[i, j] = out[1 + j]
            out_normal[i, j] = out[4 + j]
        out_iterations[i] = iterations


@njit(cache=True, nogil=True)
def gap_at(ka, pa, pta, ta, kb, pb, ptb, tb, eps, out):
    """One gap evaluation at given poses (the Python loop of CallableMotion): out (7,) =
    (signed gap, point on A (3), normal A->B (3))."""
    warm = np.zeros(WARM_SIZE)
    hints = np.zeros(2, dtype=np.int64)
    point = np.empty(3)
    normal = np.empty(3)
    signed = _gap(ka, pa, pta, ta, kb, pb, ptb, tb, eps, warm, hints, point, normal)
    out[0] = signed
    for j in range(3):
        out[1 + j] = point[j]
        out[4 + j] = normal[j]


@njit(cache=True, nogil=True)
def gap_many(ka, pa, pta, ta, kb, pb, ptb, tb, rows, eps, out, lo, hi):
    """gap_at for the pairs ``rows`` (k,) int64 of pose batches ta, tb (n, 4, 4): out (n, 7)
    rows written (the vectorised loop of batch CallableMotions); entries [lo, hi) of ``rows``."""
    for r in range(lo, hi):
        i = rows[r]
        warm = np.zeros(WARM_SIZE)
        hints = np.zeros(2, dtype=np.int64)
        point = np.empty(3)
        normal = np.empty(3)
        out[i, 0] = _gap(ka, pa, pta, ta[i], kb, pb, ptb, tb[i], eps, warm, hints, point, normal)
        for j in range(3):
            out[i, 1 + j] = point[j]
            out[i, 4 + j] = normal[j]


@njit(cache=True, nogil=True)
def motion_pose_times(mp, times, out, lo, hi):
    """Poses (n, 4, 4) of packed motions mp (n|1, P) each at its own time times (n,) (rows [lo, hi))."""
    step = 1 if mp.shape[0] > 1 else 0
    for i in range(lo, hi):
        motion_pose(mp[i * step], times[i], out[i])
