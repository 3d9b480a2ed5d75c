"""time_of_impact (translation) for convex polytopes: touche vs python-fcl continuousCollide.

    NUMBA_CACHE_DIR=/tmp/numba-x .venv/bin/python benchmarks/bench_sat_moving.py [--n 2000]

python-fcl is the only peer with translational continuous collision (CCDM_TRANS); coal has none.
Its time runs over [0, 1] from the current pose to an end pose, so a touche motion over
[0, t_max] maps to end = start + t_max * v and fcl's time_of_contact * t_max. All four fcl solver
types are timed on the same inputs and their answers compared with touche's (hit / miss agreement
and time error on the pairs both call a hit). Workloads: box-box, and two 30-vertex hulls
(fcl.Convex). touche: one batch call (per pair time), and single calls from Python.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

import touche as tc
from touche.impact import ImpactStatus, time_of_impact
from touche.motion import Linear, Static

T_MAX = 2.0
SOLVERS = ["CCDC_NAIVE", "CCDC_CONSERVATIVE_ADVANCEMENT", "CCDC_RAY_SHOOTING", "CCDC_POLYNOMIAL_SOLVER"]


def cases(rng, n):
    pos_a = rng.normal(scale=0.2, size=(n, 3))
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    pos_b = pos_a + d * rng.uniform(1.5, 4.0, size=(n, 1))
    vel_b = (pos_a - pos_b) / rng.uniform(0.8, 3.0, size=(n, 1)) + rng.normal(scale=0.6, size=(n, 3))
    poses_a = np.tile(np.eye(4), (n, 1, 1))
    poses_b = np.tile(np.eye(4), (n, 1, 1))
    poses_a[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    poses_b[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    poses_a[:, :3, 3] = pos_a
    poses_b[:, :3, 3] = pos_b
    return poses_a, poses_b, vel_b


def fcl_geometry(fcl, shape):
    if isinstance(shape, tc.Box):
        return fcl.Box(*shape.extents)
    vertices = np.asarray(shape.vertices, dtype=np.float64)
    faces = ConvexHull(vertices).simplices
    flat = np.column_stack([np.full(len(faces), 3), faces]).ravel()
    return fcl.Convex(vertices, len(faces), flat)


def run_fcl(fcl, a, b, poses_a, poses_b, vel_b, solver):
    ga, gb = fcl_geometry(fcl, a), fcl_geometry(fcl, b)
    request = fcl.ContinuousCollisionRequest(
        ccd_motion_type=fcl.CCDMotionType.CCDM_TRANS, ccd_solver_type=getattr(fcl.CCDSolverType, solver)
    )
    times = np.empty(len(poses_a))
    start = time.perf_counter()
    for i in range(len(poses_a)):
        ta = fcl.Transform(poses_a[i, :3, :3], poses_a[i, :3, 3])
        tb = fcl.Transform(poses_b[i, :3, :3], poses_b[i, :3, 3])
        tb_end = fcl.Transform(poses_b[i, :3, :3], poses_b[i, :3, 3] + T_MAX * vel_b[i])
        oa = fcl.CollisionObject(ga, ta)
        ob = fcl.CollisionObject(gb, tb)
        result = fcl.ContinuousCollisionResult()
        fcl.continuousCollide(oa, ta, ob, tb_end, request, result)
        times[i] = result.time_of_contact * T_MAX if result.is_collide else np.inf
    return times, (time.perf_counter() - start) / len(poses_a)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--fcl-n", type=int, default=300, help="pairs given to each fcl solver")
    args = parser.parse_args()
    import fcl

    rng = np.random.default_rng(0)
    hull = lambda: tc.ConvexPolyhedron(rng.normal(size=(30, 3)) * 0.5)  # noqa: E731
    workloads = [("box-box", tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2]))]
    a_hull = hull()
    b_hull = hull()
    workloads.append((f"hull-hull ({len(a_hull.vertices)}/{len(b_hull.vertices)} vertices)", a_hull, b_hull))
    print(f"n = {args.n} random pairs, t_max = {T_MAX}, fcl CCDM_TRANS")
    header = f"{'workload':34s} {'engine':34s} {'us/pair':>9s} {'ratio':>8s} {'hit agree':>10s} {'max |dt|':>10s}"
    for name, a, b in workloads:
        poses_a, poses_b, vel_b = cases(rng, args.n)
        motion_a = Static(poses_a)
        motion_b = Linear(vel_b, poses_b)
        time_of_impact(a, motion_a, b, motion_b, T_MAX)  # compile / load
        start = time.perf_counter()
        result = time_of_impact(a, motion_a, b, motion_b, T_MAX)
        batch_us = (time.perf_counter() - start) / args.n * 1e6
        singles = min(300, args.n)
        time_of_impact(a, Static(poses_a[0]), b, Linear(vel_b[0], poses_b[0]), T_MAX)
        start = time.perf_counter()
        for i in range(singles):
            time_of_impact(a, Static(poses_a[i]), b, Linear(vel_b[i], poses_b[i]), T_MAX)
        single_us = (time.perf_counter() - start) / singles * 1e6
        ours = np.where(result.status == ImpactStatus.MISS, np.inf, result.time)
        print(header)
        print(f"{name:34s} {'touche batch (1 call)':34s} {batch_us:9.2f}")
        print(f"{'':34s} {'touche single call':34s} {single_us:9.2f}")
        hits = np.isfinite(ours).mean()
        m = min(args.fcl_n, args.n)
        for solver in SOLVERS:
            times, per_call = run_fcl(fcl, a, b, poses_a[:m], poses_b[:m], vel_b[:m], solver)
            agree = (np.isfinite(times) == np.isfinite(ours[:m])).mean()
            both = np.isfinite(times) & np.isfinite(ours[:m])
            dt = np.abs(times[both] - ours[:m][both]).max(initial=0.0)
            print(f"{'':34s} {'fcl ' + solver:34s} {per_call * 1e6:9.2f} "
                  f"{single_us / (per_call * 1e6):8.3f} {agree:10.3f} {dt:10.2e}")
        print(f"  (touche hit rate {hits:.2f}; ratio = touche single-call time / fcl time)\n")


if __name__ == "__main__":
    main()
