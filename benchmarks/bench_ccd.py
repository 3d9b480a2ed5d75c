"""Continuous collision under translation + rotation: touche vs python-fcl continuousCollide.

    NUMBA_CACHE_DIR=/tmp/numba-x .venv/bin/python benchmarks/bench_ccd.py [--n 2000] [--quick]

Motion: each pair moves A from a start pose T0 to an end pose T1 over [0, 1] with the rotation
slerped (constant angular velocity) and the origin moving linearly: touche ``Keyframes([0, 1],
[T0, T1])``, fcl ``CCDM_LINEAR`` (InterpMotion about the local origin, the same path). B stays.
Workloads: box-box (one of them a 1e-3 thick plate) and two 30-vertex hulls (fcl.Convex), A
spinning up to ~3 turns over the interval.

Accuracy: both are compared with a dense reference (tests/naive_ccd.py: 4,000 samples of a static
test plus bisection; boxes by the numpy 15-axis test, hulls by touche.intersects). Columns:
missed = reference contacts reported as none; false = reported contacts the reference does not
see and that are not contacts at the reported time; |dt| = time error on common hits (median /
max). touche runs as one batch call (per pair time) and as single calls; fcl as its Python
per-pair API (one call per pair). ratio = touche single-call time / fcl time per pair.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import naive_ccd as R  # noqa: E402

import touche as tc  # noqa: E402
from touche.impact import ImpactStatus, time_of_impact  # noqa: E402
from touche.motion import Keyframes  # noqa: E402

SOLVERS = [
    ("CCDC_NAIVE", "GST_LIBCCD", 200),
    ("CCDC_NAIVE", "GST_INDEP", 200),
    ("CCDC_CONSERVATIVE_ADVANCEMENT", "GST_LIBCCD", 10),
    ("CCDC_CONSERVATIVE_ADVANCEMENT", "GST_INDEP", 10),
]


def cases(rng, n):
    """Start / end poses of A passing by B (at the origin) while spinning."""
    start = rng.normal(size=(n, 3))
    start *= (rng.uniform(1.5, 3.0, n) / np.linalg.norm(start, axis=1))[:, None]
    end = -start * rng.uniform(0.2, 1.5, (n, 1)) + rng.normal(size=(n, 3)) * 0.6
    r0 = Rotation.random(n, random_state=rng)
    spin = rng.normal(size=(n, 3))
    spin *= (rng.uniform(0.0, 3.0, n) * np.pi / np.linalg.norm(spin, axis=1))[:, None]  # < pi: slerp keeps it
    r1 = Rotation.from_rotvec(spin) * r0
    t0 = np.tile(np.eye(4), (n, 1, 1))
    t1 = np.tile(np.eye(4), (n, 1, 1))
    t0[:, :3, :3], t0[:, :3, 3] = r0.as_matrix(), start
    t1[:, :3, :3], t1[:, :3, 3] = r1.as_matrix(), end
    return t0, t1


def fcl_geometry(fcl, shape):
    if isinstance(shape, tc.Box):
        return fcl.Box(*shape.extents)
    vertices = np.asarray(shape.vertices, dtype=np.float64)
    faces = ConvexHull(vertices).simplices
    flat = np.column_stack([np.full(len(faces), 3), faces]).ravel()
    return fcl.Convex(vertices, len(faces), flat)


def run_fcl(fcl, a, b, t0, t1, solver, gjk, iterations):
    ga, gb = fcl_geometry(fcl, a), fcl_geometry(fcl, b)
    request = fcl.ContinuousCollisionRequest(
        num_max_iterations=iterations,
        ccd_motion_type=fcl.CCDMotionType.CCDM_LINEAR,
        gjk_solver_type=getattr(fcl.GJKSolverType, gjk),
        ccd_solver_type=getattr(fcl.CCDSolverType, solver),
    )
    identity = fcl.Transform()
    times = np.empty(len(t0))
    start = time.perf_counter()
    for i in range(len(t0)):
        ta = fcl.Transform(t0[i, :3, :3], t0[i, :3, 3])
        ta_end = fcl.Transform(t1[i, :3, :3], t1[i, :3, 3])
        oa = fcl.CollisionObject(ga, ta)
        ob = fcl.CollisionObject(gb, identity)
        result = fcl.ContinuousCollisionResult()
        fcl.continuousCollide(oa, ta_end, ob, identity, request, result)
        times[i] = result.time_of_contact if result.is_collide else np.inf
    return times, (time.perf_counter() - start) / len(t0)


def reference(a, b, t0, t1, samples):
    n = len(t0)
    path = R.KeyframePath(np.array([0.0, 1.0]), np.stack([t0, t1], axis=1))
    if isinstance(a, tc.Box) and isinstance(b, tc.Box):
        half_a, half_b = a.half_extents, b.half_extents
        eye = np.eye(4)[None]

        def separation(t, rows):
            pa = path.at(t, rows)
            cb, eb = R.parallelepiped(np.repeat(eye, len(rows), 0), np.zeros(3), half_b)
            return R.box_box_separation(pa[:, :3, 3], np.swapaxes(pa[:, :3, :3], 1, 2) * half_a[:, None], cb, eb)
    else:
        def separation(t, rows):
            touching = tc.intersects(a, np.ascontiguousarray(path.at(t, rows)), b, None)
            return np.where(touching, -1.0, 1.0)

    radius = np.linalg.norm(a.points, axis=1).max() + np.linalg.norm(b.points, axis=1).max()

    def cull(t, rows):
        return np.linalg.norm(path.at(t, rows)[:, :3, 3], axis=1) - radius

    return R.first_contact(separation, n, 1.0, samples=samples, cull=cull), separation


def accuracy(times, ref, separation):
    """(missed, false hits, median |dt|, max |dt|) against the reference; a reported contact
    the reference does not see counts as false unless the static test confirms it."""
    hit, ref_hit = np.isfinite(times), np.isfinite(ref)
    missed = int((ref_hit & ~hit).sum())
    extra = np.flatnonzero(hit & ~ref_hit)
    false = 0
    if len(extra):
        false = int((separation(np.clip(times[extra], 0, 1), extra) > 1e-9).sum())
    both = hit & ref_hit
    dt = np.abs(times[both] - ref[both])
    return missed, false, (np.median(dt) if len(dt) else np.nan), dt.max(initial=0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--fcl-n", type=int, default=500, help="pairs given to each fcl solver")
    parser.add_argument("--samples", type=int, default=4000, help="reference samples over [0, 1]")
    parser.add_argument("--quick", action="store_true", help="n = 300, fcl-n = 150, samples = 1000")
    args = parser.parse_args()
    if args.quick:
        args.n, args.fcl_n, args.samples = 300, 150, 1000
    import fcl

    rng = np.random.default_rng(0)
    workloads = [
        ("box-plate", tc.Box([1.6, 1e-3, 0.6]), tc.Box([0.8, 0.6, 1.0])),
        ("box-box", tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])),
        ("hull-hull (30 pts)", tc.ConvexPolyhedron(rng.normal(size=(30, 3)) * 0.5),
         tc.ConvexPolyhedron(rng.normal(size=(30, 3)) * 0.5)),
    ]
    print(f"n = {args.n} pairs (fcl: first {args.fcl_n}), [0, 1], rotation + translation, "
          f"reference {args.samples} samples + bisection")
    header = (f"{'workload':20s} {'engine':44s} {'us/pair':>9s} {'ratio':>7s} {'missed':>7s} {'false':>6s} "
              f"{'med |dt|':>9s} {'max |dt|':>9s}")
    for name, a, b in workloads:
        t0, t1 = cases(rng, args.n)
        motion = Keyframes([0.0, 1.0], np.stack([t0, t1], axis=1))
        time_of_impact(a, motion, b, None, 1.0)  # compile / load
        start = time.perf_counter()
        result = time_of_impact(a, motion, b, None, 1.0)
        batch_us = (time.perf_counter() - start) / args.n * 1e6
        singles = min(300, args.n)
        one = [Keyframes([0.0, 1.0], [t0[i], t1[i]]) for i in range(singles)]
        time_of_impact(a, one[0], b, None, 1.0)
        start = time.perf_counter()
        for i in range(singles):
            time_of_impact(a, one[i], b, None, 1.0)
        single_us = (time.perf_counter() - start) / singles * 1e6
        ours = np.where(result.status == ImpactStatus.MISS, np.inf, result.time)
        ref, separation = reference(a, b, t0, t1, args.samples)
        print(header)
        m, f_, med, mx = accuracy(ours, ref, separation)
        print(f"{name:20s} {'touche batch (1 call)':44s} {batch_us:9.2f} {'':7s} {m:7d} {f_:6d} {med:9.1e} {mx:9.1e}")
        print(f"{'':20s} {'touche single call':44s} {single_us:9.2f}")
        k = min(args.fcl_n, args.n)
        for solver, gjk, iterations in SOLVERS:
            times, per_call = run_fcl(fcl, a, b, t0[:k], t1[:k], solver, gjk, iterations)
            m, f_, med, mx = accuracy(times, ref[:k], lambda t, rows: separation(t, rows))
            label = f"fcl {solver.replace('CCDC_', '')} {gjk} it={iterations}"
            print(f"{'':20s} {label:44s} {per_call * 1e6:9.2f} {single_us / (per_call * 1e6):7.3f} "
                  f"{m:7d} {f_:6d} {med:9.1e} {mx:9.1e}")
        print(f"  (reference hit rate {np.isfinite(ref).mean():.2f}; touche on the first {k}: "
              f"{accuracy(ours[:k], ref[:k], separation)[:2]} missed/false)\n")


if __name__ == "__main__":
    main()
