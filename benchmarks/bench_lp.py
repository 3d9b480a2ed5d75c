"""touche.lp polytope tests (Seidel LP, Chung-Wang) vs the SAT engine (touche.intersects) and coal.

    python benchmarks/bench_lp.py            # n = 2000 poses per workload
    python benchmarks/bench_lp.py --n 500    # quicker

Workloads: box-box and 30-vertex-hull pairs, B at n random poses (about half overlapping), A
fixed. touche: one batch call per method (parallel over pairs, per-pair time = wall / n).
coal: `coal.collide` boolean request in a Python loop (Transform3s prebuilt), per call. Medians of
5 repeats after a warm-up (numba compilation excluded). Also the single-call times and the
agreement of the answers.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import touche  # noqa: E402
from touche import lp  # noqa: E402
from naive.lp import random_poses  # noqa: E402


def median_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def coal_geometry(coal, shape):
    if isinstance(shape, touche.Box):
        return coal.Box(*shape.extents)
    vertices = coal.StdVec_Vec3s()
    for p in shape.vertices:
        vertices.append(np.array(p, dtype=np.float64))
    triangles = coal.StdVec_Triangle()
    for f in shape.faces:
        triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(vertices, triangles)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    try:
        import coal
    except ImportError:
        coal = None
    rng = np.random.default_rng(1)
    hull_points = rng.normal(size=(30, 3))
    hull_points /= np.linalg.norm(hull_points, axis=1, keepdims=True)  # 30 points on a sphere: 30 vertices
    workloads = [
        ("box-box", touche.Box([1.0, 0.6, 0.4]), touche.Box([0.5, 0.8, 0.3]), 0.75),
        ("hull30-hull30", touche.ConvexPolyhedron(hull_points * 0.5), touche.ConvexPolyhedron(hull_points * [0.4, 0.5, 0.3]), 1.05),
    ]
    n = args.n
    print(f"n = {n} poses per workload; per-pair times in microseconds (touche batch: wall / n, "
          f"{os.cpu_count()} cores; coal: per call in a Python loop)")
    header = f"{'workload':15s} {'hits':>5s} {'SAT':>7s} {'LP':>7s} {'CW':>7s} {'coal':>7s} {'LP/SAT':>7s} {'CW/SAT':>7s} {'LP/coal':>8s} {'CW/coal':>8s}"
    print(header)
    rows = []
    for name, a, b, spread in workloads:
        pa = np.eye(4)
        pb = random_poses(rng, n, spread)
        sat = touche.intersects(a, pa, b, pb)  # warm-up (compilation)
        by_lp = lp.polytopes_intersect(a, pa, b, pb)
        by_cw = lp.polytopes_intersect(a, pa, b, pb, method="chung-wang")
        t_sat = median_time(lambda: touche.intersects(a, pa, b, pb)) / n
        t_lp = median_time(lambda: lp.polytopes_intersect(a, pa, b, pb)) / n
        t_cw = median_time(lambda: lp.polytopes_intersect(a, pa, b, pb, method="chung-wang")) / n
        t_coal = np.nan
        coal_hits = None
        if coal is not None:
            ga, gb = coal_geometry(coal, a), coal_geometry(coal, b)
            ta = coal.Transform3s(np.eye(3), np.zeros(3))
            tbs = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in pb]
            request = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
            result_type = coal.CollisionResult
            collide = coal.collide

            def run_coal():
                return [collide(ga, ta, gb, tb, request, result_type()) > 0 for tb in tbs]

            coal_hits = np.array(run_coal())
            t_coal = median_time(run_coal) / n
        separation = lp.separating_vector(a, pa, b, pb)
        counts = np.bincount(separation.status, minlength=3)
        print(f"{name:15s} {sat.mean():5.2f} {t_sat * 1e6:7.3f} {t_lp * 1e6:7.3f} {t_cw * 1e6:7.3f} {t_coal * 1e6:7.3f} "
              f"{t_lp / t_sat:7.2f} {t_cw / t_sat:7.2f} {t_lp / t_coal:8.2f} {t_cw / t_coal:8.2f}")
        agree = f"LP vs SAT {np.mean(by_lp == sat):.4f}, CW vs SAT {np.mean(by_cw == sat):.4f}"
        if coal_hits is not None:
            agree += f", SAT vs coal {np.mean(coal_hits == sat):.4f}"
        rows.append((name, agree, counts, separation.iterations))
        # single calls from Python (one pose)
        single = pb[0].copy()
        t1_lp = median_time(lambda: [lp.polytopes_intersect(a, pa, b, single) for _ in range(200)]) / 200
        t1_sat = median_time(lambda: [touche.intersects(a, pa, b, single) for _ in range(200)]) / 200
        rows[-1] += (t1_lp, t1_sat)
    print()
    for name, agree, counts, iterations, t1_lp, t1_sat in rows:
        print(f"{name}: agreement {agree}")
        print(f"  Chung-Wang statuses SEPARATED / INTERSECTING / MAX_ITERATIONS = {counts.tolist()}, "
              f"mean iterations {iterations.mean():.2f} (max {iterations.max()})")
        print(f"  single call: lp.polytopes_intersect {t1_lp * 1e6:.2f} us, touche.intersects {t1_sat * 1e6:.2f} us")


if __name__ == "__main__":
    main()
