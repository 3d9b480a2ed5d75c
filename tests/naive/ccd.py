"""Slow, obviously-correct references for continuous collision detection (tests/kernels/test_ccd.py).

- Motions evaluated independently of touche.motion: screw poses from scipy's rotation vectors,
  keyframes by the quaternion slerp formula, quadratic matrices by direct evaluation.
- Static tests vectorised over n cases: the 15-axis separating-axis value of two
  parallelepipeds (rigid boxes are a special case), sphere vs parallelepiped by clamping in the
  box frame, sphere vs sphere, convex vs half-space by the lowest corner.
- ``first_contact(separation, t_max, samples)``: dense sampling of a static test plus bisection
  between the last separated and the first touching sample. Blind spot: a contact shorter than
  the sampling step (a graze) can fall between samples; the tests check such kernel HITs
  directly (the static test at the kernel's time).
"""
import numpy as np
from scipy.spatial.transform import Rotation

TOL = 1e-9  # the time tolerance of time_of_impact, a fraction of t_max
GAP = 1e-10  # a kernel contact the reference's samples missed must be a contact to this distance
HIT, MISS, TOUCH, MAX_ITERATIONS = 1, 0, 2, 3  # touche.impact.ImpactStatus codes


# ----------------------------------------------------------------------------------------------
# motions (n cases)
def rodrigues(rotvec):
    """Rotation matrices (n, 3, 3) of rotation vectors (n, 3): exp of the cross-product matrix."""
    angle = np.linalg.norm(rotvec, axis=1)
    k = rotvec / np.where(angle > 0, angle, 1.0)[:, None]
    cross = np.zeros((len(rotvec), 3, 3))
    cross[:, 0, 1], cross[:, 0, 2], cross[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    cross = cross - np.swapaxes(cross, 1, 2)
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * cross + (1 - c) * (cross @ cross)



def random_rotations(rng, n):
    """n uniformly random rotation matrices (n, 3, 3) from the generator rng."""
    from scipy.spatial.transform import Rotation

    return Rotation.random(n, random_state=rng).as_matrix()


def rigid_poses(rotations, translations):
    """(n, 4, 4) poses from rotations (n, 3, 3) and translations (n, 3)."""
    out = np.tile(np.eye(4), (len(translations), 1, 1))
    out[:, :3, :3] = rotations
    out[:, :3, 3] = translations
    return out

def _times(t, n):
    return np.broadcast_to(np.asarray(t, dtype=np.float64), (n,))


def screw_poses(pose0, v, w, c, t):
    """(n, 4, 4) poses of screw motions at time t (scalar or (n,)): x(t) = c + t v + Rot(t w)(x0 - c)."""
    n = len(pose0)
    t = _times(t, n)[:, None]
    turn = rodrigues(np.broadcast_to(w, (n, 3)) * t)
    out = np.array(pose0, dtype=np.float64, copy=True)
    out[:, :3, :3] = turn @ pose0[:, :3, :3]
    out[:, :3, 3] = c + t * v + np.einsum("nij,nj->ni", turn, pose0[:, :3, 3] - c)
    return out


def quaternion_matrices(q):
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) in (x, y, z, w) order."""
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    out = np.empty((len(q), 3, 3))
    out[:, 0, 0] = 1 - 2 * (y * y + z * z)
    out[:, 0, 1] = 2 * (x * y - z * w)
    out[:, 0, 2] = 2 * (x * z + y * w)
    out[:, 1, 0] = 2 * (x * y + z * w)
    out[:, 1, 1] = 1 - 2 * (x * x + z * z)
    out[:, 1, 2] = 2 * (y * z - x * w)
    out[:, 2, 0] = 2 * (x * z - y * w)
    out[:, 2, 1] = 2 * (y * z + x * w)
    out[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return out


class KeyframePath:
    """Keyframed motions (poses (n, k, 4, 4), shared times) evaluated by the textbook quaternion
    slerp on the shorter arc and linear translation; ``at(t, rows)`` -> (len(rows), 4, 4)."""

    def __init__(self, times, poses):
        self.times = np.asarray(times, dtype=np.float64)
        self.poses = poses
        n, k = poses.shape[:2]
        self.quats = Rotation.from_matrix(poses[..., :3, :3].reshape(-1, 3, 3)).as_quat().reshape(n, k, 4)

    def at(self, t, rows):
        times, k = self.times, len(self.times)
        t = np.clip(_times(t, len(rows)), times[0], times[-1])
        i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 2)
        s = (t - times[i]) / (times[i + 1] - times[i])
        q0 = self.quats[rows, i]
        q1 = self.quats[rows, i + 1].copy()
        q1[(q0 * q1).sum(1) < 0] *= -1
        omega = np.arccos(np.clip((q0 * q1).sum(1), -1.0, 1.0))
        small = omega < 1e-9
        sin = np.where(small, 1.0, np.sin(omega))
        w0 = np.where(small, 1 - s, np.sin((1 - s) * omega) / sin)
        w1 = np.where(small, s, np.sin(s * omega) / sin)
        q = w0[:, None] * q0 + w1[:, None] * q1
        out = np.zeros((len(rows), 4, 4))
        out[:, 3, 3] = 1.0
        out[:, :3, :3] = quaternion_matrices(q / np.linalg.norm(q, axis=1)[:, None])
        out[:, :3, 3] = (1 - s)[:, None] * self.poses[rows, i, :3, 3] + s[:, None] * self.poses[rows, i + 1, :3, 3]
        return out


def quadratic_matrices(coefficients, t):
    """M(t) = m0 + t m1 + t^2 m2 for coefficients (n, 3, 4, 4), t scalar or (n,)."""
    t = _times(t, len(coefficients))[:, None, None]
    return coefficients[:, 0] + t * coefficients[:, 1] + t * t * coefficients[:, 2]


# ----------------------------------------------------------------------------------------------
# static tests (n cases); "separation" > 0 means apart, <= 0 touching or overlapping
def parallelepiped(matrices, center, half):
    """World centre (n, 3) and half-edge vectors (n, 3 edges, 3) of a box under affine maps."""
    centre = np.einsum("nij,j->ni", matrices[:, :3, :3], center) + matrices[:, :3, 3]
    edges = np.swapaxes(matrices[:, :3, :3], 1, 2) * half[None, :, None]
    return centre, edges


def box_box_separation(ca, ea, cb, eb):
    """Largest normalised separating-axis value over the 15 axes (face normals = cross products of
    edge vectors; edge-edge crosses), skipping vanishing axes."""
    d = cb - ca
    faces_a = np.cross(ea[:, [1, 2, 0]], ea[:, [2, 0, 1]])
    faces_b = np.cross(eb[:, [1, 2, 0]], eb[:, [2, 0, 1]])
    edges = np.cross(ea[:, :, None, :], eb[:, None, :, :]).reshape(-1, 9, 3)
    axes = np.concatenate([faces_a, faces_b, edges], axis=1)  # (n, 15, 3)
    size = np.linalg.norm(ea, axis=2).max(1) * np.maximum(np.linalg.norm(eb, axis=2).max(1), np.linalg.norm(ea, axis=2).max(1))
    length = np.linalg.norm(axes, axis=2)
    usable = length > 1e-9 * size[:, None]
    value = np.abs(np.einsum("nai,ni->na", axes, d))
    value -= np.abs(np.einsum("nai,nki->nak", axes, ea)).sum(2) + np.abs(np.einsum("nai,nki->nak", axes, eb)).sum(2)
    value = np.where(usable, value / np.where(usable, length, 1.0), -np.inf)
    return value.max(1)


def sphere_box_separation(centre, radius, box_centre, box_rotation, half):
    """Rigid box (rotation (n, 3, 3)) vs sphere: clamp the centre in the box frame."""
    local = np.einsum("nji,nj->ni", box_rotation, centre - box_centre)
    nearest = np.clip(local, -half, half)
    outside = np.linalg.norm(local - nearest, axis=1)
    return outside - radius


def sphere_sphere_separation(ca, ra, cb, rb):
    return np.linalg.norm(cb - ca, axis=1) - ra - rb


def box_halfspace_separation(centre, edges, normal, offset):
    """Half-space n.x <= offset vs a parallelepiped: its lowest point above the plane."""
    reach = np.abs(np.einsum("nij,j->ni", edges, normal)).sum(1)
    return centre @ normal - reach - offset


# ----------------------------------------------------------------------------------------------
def first_contact(separation, count, t_max, samples=4000, iterations=60, cull=None):
    """Earliest t in [0, t_max] with ``separation(t, rows)`` <= 0 for ``count`` cases (inf if none).

    ``separation(t, rows)`` -> values for the cases ``rows`` (int array) at times ``t`` (scalar
    or one per row). Dense sampling (``samples`` steps) finds the first touching sample;
    bisection between it and the previous separated sample (60 halvings: far below any
    tolerance) returns the crossing time. ``cull(t, rows)`` (optional) -> a lower bound of the
    separation that is cheap (e.g. bounding spheres): rows where it is > 0 skip the exact test."""
    everyone = np.arange(count)
    first = separation(0.0, everyone)
    found = np.where(first <= 0.0, 0.0, np.inf)
    low = np.zeros(len(everyone))
    high = np.full(len(everyone), np.nan)
    open_ = first > 0.0
    times = np.linspace(0.0, t_max, samples + 1)
    for k in range(1, samples + 1):
        rows = np.flatnonzero(open_)
        if len(rows) == 0:
            break
        if cull is not None:
            rows = rows[cull(times[k], rows) <= 0.0]
            if len(rows) == 0:
                continue
        value = separation(times[k], rows)
        closing = rows[value <= 0.0]
        low[closing] = times[k - 1]
        high[closing] = times[k]
        open_[closing] = False
    rows = np.flatnonzero(np.isfinite(high))
    lo, hi = low[rows], high[rows]
    for _ in range(iterations):
        if len(rows) == 0:
            break
        middle = 0.5 * (lo + hi)
        touching = separation(middle, rows) <= 0.0
        hi = np.where(touching, middle, hi)
        lo = np.where(touching, lo, middle)
    found[rows] = hi
    return found


# ----------------------------------------------------------------------------------------------
def check_times(result, reference, separation_at, t_max, *, late_slack=TOL, band=(0.2, 0.8), label="", gap=GAP):
    """Compare a batch time_of_impact result with reference first-contact times (inf = no
    contact seen), see tests/kernels/test_ccd.py's module doc: never MISS a reference contact, never
    late by more than ``late_slack`` t_max, early by more than TOL t_max only where the static
    separation at the kernel's time is <= ``gap`` (a real contact the samples stepped over or a
    near-tangential approach), and kernel-only contacts real to ``gap`` (< 2 % of the cases).
    Returns (common hits, loose-but-real early hits, extra hits)."""
    status = np.asarray(result.status)
    time = np.asarray(result.time)
    ref_hit = np.isfinite(reference)
    assert band[0] <= ref_hit.mean() <= band[1], f"{label}: reference hit rate {ref_hit.mean():.3f}"
    kernel_hit = (status == HIT) | (status == TOUCH)
    # never MISS a contact
    missed = ref_hit & ~kernel_hit
    assert not missed.any(), f"{label}: {missed.sum()} contacts missed, e.g. case {np.flatnonzero(missed)[:5]}"
    assert not (status == MAX_ITERATIONS).any()
    both = ref_hit & kernel_hit
    # never late
    late = time[both] - reference[both]
    assert (late <= late_slack * t_max).all(), f"{label}: late by {late.max():.3e}"
    # accurate: early by more than the tolerance only where the contact is within the touching
    # tolerance at the kernel's time (near-tangential approach)
    early = reference[both] - time[both]
    loose = early > TOL * t_max
    if loose.any():
        index = np.flatnonzero(both)[loose]
        gaps = separation_at(time[index], index)
        assert (gaps <= gap).all(), f"{label}: early by {early.max():.3e} with gap {gaps.max():.3e}"
    # kernel HIT where the reference saw none: a contact between samples; verify it directly
    extra = kernel_hit & ~ref_hit
    if extra.any():
        index = np.flatnonzero(extra)
        gaps = separation_at(time[index], index)
        assert (gaps <= gap).all(), f"{label}: {extra.sum()} false hits, gap up to {gaps.max():.3e}"
        assert extra.mean() < 0.02
    return both.sum(), loose.sum(), extra.sum()
