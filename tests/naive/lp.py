"""Slow, obviously correct references for touche.lp: scipy's HiGHS on the same LPs, and polytope
intersection as LPs written straight from the definitions (numpy + scipy.optimize.linprog)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog as scipy_linprog

_TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}

OPTIMAL, INFEASIBLE, UNBOUNDED = 0, 1, 2


def reference_lp(c, A, b):
    """maximize c.x s.t. A x <= b, x free, with HiGHS -> (status, value)."""
    d = A.shape[1]
    # the same system with unit rows (HiGHS reports "numerical difficulties" on rows ~1e6 long)
    norms = np.linalg.norm(A, axis=1)
    keep = norms > 0
    if (b[~keep] < 0).any():
        return INFEASIBLE, -np.inf
    A, b = A[keep] / norms[keep, None], b[keep] / norms[keep]
    res = scipy_linprog(-np.asarray(c), A_ub=A, b_ub=b, bounds=[(None, None)] * d, method="highs", options=_TIGHT)
    if res.status == 0:
        return OPTIMAL, -res.fun
    if res.status == 2:
        return INFEASIBLE, -np.inf
    if res.status == 3:
        return UNBOUNDED, np.inf
    raise AssertionError(f"HiGHS could not decide: {res.message}")


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def random_poses(rng, n, half_width):
    poses = np.zeros((n, 4, 4))
    for i in range(n):
        poses[i, :3, :3] = random_rotation(rng)
    poses[:, :3, 3] = rng.uniform(-half_width, half_width, (n, 3))
    poses[:, 3, 3] = 1.0
    return poses


def world_vertices(shape, pose):
    vertices = np.asarray(shape.points[: int(shape.params[0])])
    return vertices @ pose[:3, :3].T + pose[:3, 3]


def world_planes(shape, pose):
    """(normals (k, 3), offsets (k,)) of the shape's face planes moved by the pose."""
    nv, nf = int(shape.params[0]), int(shape.params[1])
    normals = np.asarray(shape.points[nv : nv + nf]) @ pose[:3, :3].T
    offsets = np.asarray(shape.params[4 : 4 + nf]) + normals @ pose[:3, 3]
    return normals, offsets


def chebyshev_slack(normals, offsets, cap=1.0):
    """max t s.t. n_j.x + t <= d_j for all (unit) rows, t <= cap: t >= 0 iff the halfspaces have a
    common point; |t| is a lower bound of how far the set is from changing (a separated pair of
    polytopes has distance >= 2|t|; an overlapping one holds a ball of radius t)."""
    k = normals.shape[0]
    A = np.hstack([normals, np.ones((k, 1))])
    res = scipy_linprog(np.r_[np.zeros(normals.shape[1]), -1.0], A_ub=A, b_ub=offsets, bounds=[(None, None)] * normals.shape[1] + [(None, cap)],
                        method="highs", options=_TIGHT)
    assert res.status == 0, res.message
    return -res.fun


def pair_slack(shape_a, pose_a, shape_b, pose_b):
    na, oa = world_planes(shape_a, pose_a)
    nb, ob = world_planes(shape_b, pose_b)
    return chebyshev_slack(np.vstack([na, nb]), np.concatenate([oa, ob]))


def vertices_intersect(va, vb):
    """Do conv(va) and conv(vb) share a point? Feasibility of sum(l_i a_i) = sum(m_j b_j),
    l, m >= 0, sum l = sum m = 1 (the V-representation: no planes involved)."""
    na, nb = len(va), len(vb)
    A_eq = np.zeros((5, na + nb))
    A_eq[:3, :na] = va.T
    A_eq[:3, na:] = -vb.T
    A_eq[3, :na] = 1.0
    A_eq[4, na:] = 1.0
    b_eq = np.array([0, 0, 0, 1.0, 1.0])
    res = scipy_linprog(np.zeros(na + nb), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * (na + nb), method="highs")
    return res.status == 0


def separation_margin(va, vb, s):
    """min over B of q.s - max over A of p.s (> 0: s separates)."""
    return float((vb @ s).min() - (va @ s).max())
