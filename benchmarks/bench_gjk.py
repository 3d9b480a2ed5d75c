"""GJK / EPA: touche (touche.convex) vs coal on two 100-vertex hulls at 2,000 random poses.

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_gjk.py [--quick] [--repeats 7]

Rows (microseconds per pair; ratio = touche / coal per call):
- batch distance: touche's one (n, 4, 4) call (parallel over pairs) vs coal.distance called per
  pose from Python; run with numba's thread count set to 1 and to 2 (this machine's cores);
- single distance: one ``convex.gjk`` call per pose (Python loop), and one ``touche.distance``
  call per pose, vs coal per pose;
- EPA depth (overlapping poses only): touche batch vs coal.distance per pose;
- boolean: touche batch ``convex.intersects`` vs ``coal.collide`` per pose.
Poses are independent random draws (no coherence between consecutive pairs; every touche pair
starts cold). coal runs with its default request and with tight tolerances (1e-12, the accuracy
touche delivers); both are printed. The machine is shared: each workload's touche and coal runs
are interleaved repeat by repeat, and both the wall-clock and the process-CPU medians are shown
(CPU time is not inflated by other processes taking the cores; for two threads it is the sum over
both threads, so only the wall figure shows the parallel speed-up, and numba's OpenMP workers
keep spinning for a while after a parallel call, which is charged to whatever runs next: the
coal CPU figures of the two-thread rows are inflated by it, use their wall column).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import coal  # noqa: E402

import touche  # noqa: E402
from touche import convex  # noqa: E402
from naive.gjk import random_poses  # noqa: E402


def coal_convex(shape):
    vertices = coal.StdVec_Vec3s()
    for p in shape.vertices:
        vertices.append(np.array(p, dtype=np.float64))
    triangles = coal.StdVec_Triangle()
    for f in shape.triangles:
        triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(vertices, triangles)


def transforms(poses):
    return [coal.Transform3s(np.ascontiguousarray(t[:3, :3]), np.ascontiguousarray(t[:3, 3])) for t in poses]


def interleaved(fns, repeats):
    """Run each function once per round, ``repeats`` rounds; medians of (wall, cpu) seconds."""
    wall = [[] for _ in fns]
    cpu = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            cpu[k].append(time.process_time() - c0)
            wall[k].append(time.perf_counter() - w0)
    return [(float(np.median(w)), float(np.median(c))) for w, c in zip(wall, cpu)]


def support_costs():
    """ns per support point of a hull on a sphere: linear scan vs hill climbing from a cold start
    (the basis of support.HILL_CLIMB_MIN_VERTICES)."""
    from numba import njit

    from touche._kernels import support as gjk  # the support mappings (hill climbing vs scan)

    @njit(cache=False)
    def scan(params, points, dirs):
        total = 0.0
        count = int(params[0])
        for i in range(dirs.shape[0]):
            total += points[gjk._brute_vertex(points, count, dirs[i, 0], dirs[i, 1], dirs[i, 2]), 0]
        return total

    @njit(cache=False)
    def climb(params, points, dirs):
        total = 0.0
        for i in range(dirs.shape[0]):
            total += points[gjk._hill_climb(params, points, dirs[i, 0], dirs[i, 1], dirs[i, 2], 0), 0]
        return total

    rng = np.random.default_rng(1)
    dirs = rng.normal(size=(100_000, 3))
    print(f"{'hull vertices':>14s} {'scan ns':>9s} {'climb ns':>9s}")
    for count in (50, 100, 300, 1000):
        p = rng.normal(size=(count, 3))
        p /= np.linalg.norm(p, axis=1)[:, None]
        hull = touche.ConvexPolyhedron(p)
        params, points = hull._packed[1], hull._packed[2]
        costs = []
        for fn in (scan, climb):
            fn(params, points, dirs)
            costs.append(min(interleaved([lambda: fn(params, points, dirs)], 5)[0]) / len(dirs) * 1e9)
        print(f"{count:14d} {costs[0]:9.1f} {costs[1]:9.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="500 poses, 3 repeats")
    parser.add_argument("--support", action="store_true", help="only the support-mapping costs (scan vs climb)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--poses", type=int, default=2000)
    args = parser.parse_args()
    if args.support:
        support_costs()
        return
    n = 500 if args.quick else args.poses
    repeats = 3 if args.quick else args.repeats
    rng = np.random.default_rng(2026)

    # 100 hull vertices each: points on a sphere are all extreme
    def hull100():
        p = rng.normal(size=(100, 3))
        p /= np.linalg.norm(p, axis=1)[:, None]
        return touche.ConvexPolyhedron(p)

    a, b = hull100(), hull100()
    print(f"hull vertices: {len(a.vertices)}, {len(b.vertices)}; numba threads available: {numba.get_num_threads()}")
    ta = random_poses(rng, n, 1.6)
    tb = random_poses(rng, n, 1.6)
    ga, gb = coal_convex(a), coal_convex(b)
    ca, cb = transforms(ta), transforms(tb)

    def coal_distance(indices, tight):
        request = coal.DistanceRequest()
        if tight:
            request.gjk_tolerance = 1e-12
            request.epa_tolerance = 1e-12
        out = np.empty(len(indices))
        for j, i in enumerate(indices):
            result = coal.DistanceResult()
            out[j] = coal.distance(ga, ca[i], gb, cb[i], request, result)
        return out

    def coal_collide(indices):
        request = coal.CollisionRequest()
        out = np.empty(len(indices), dtype=bool)
        for j, i in enumerate(indices):
            result = coal.CollisionResult()
            out[j] = coal.collide(ga, ca[i], gb, cb[i], request, result) > 0
        return out

    everything = np.arange(n)
    convex.gjk(a, ta, b, tb)  # compile / load
    convex.gjk(a, ta[0], b, tb[0])
    convex.intersects(a, ta, b, tb)
    touche.distance(a, ta[0], b, tb[0])
    result = convex.gjk(a, ta, b, tb)
    overlap = np.nonzero(result.signed_distance < 0)[0]
    print(f"poses: {n}, overlapping: {len(overlap)}; statuses: {np.bincount(result.status, minlength=5).tolist()}")

    theirs_default = coal_distance(everything, False)
    theirs_tight = coal_distance(everything, True)
    for label, theirs in (("coal default", theirs_default), ("coal tight", theirs_tight)):
        print(f"max |touche gjk - {label}|: {np.abs(theirs - result.signed_distance).max():.2e}")
    agree = coal_collide(everything) == (result.signed_distance <= 0)
    print(f"boolean agreement with coal.collide: {agree.mean():.4f}")

    ta_o, tb_o = ta[overlap], tb[overlap]

    def single_gjk():
        for i in range(n):
            convex.gjk(a, ta[i], b, tb[i])

    def single_distance():
        for i in range(n):
            touche.distance(a, ta[i], b, tb[i])

    rows = []
    # touche's batches run on its own threads (touche.set_num_threads); older versions used numba's
    get_threads = getattr(touche, "get_num_threads", numba.get_num_threads)
    set_threads = getattr(touche, "set_num_threads", numba.set_num_threads)
    all_threads = get_threads()
    for threads in sorted({1, all_threads}):
        set_threads(threads)
        timed = interleaved([
            lambda: convex.gjk(a, ta, b, tb),
            lambda: coal_distance(everything, False),
            lambda: coal_distance(everything, True),
        ], repeats)
        rows.append((f"batch distance, {threads} thread(s)", n, *timed))
        timed = interleaved([
            lambda: convex.penetration(a, ta_o, b, tb_o),
            lambda: coal_distance(overlap, False),
            lambda: coal_distance(overlap, True),
        ], repeats)
        rows.append((f"EPA depth (overlapping), {threads} thr", len(overlap), *timed))
        timed = interleaved([
            lambda: convex.intersects(a, ta, b, tb),
            lambda: coal_collide(everything),
        ], repeats)
        rows.append((f"boolean, {threads} thread(s)", n, timed[0], timed[1], timed[1]))
    set_threads(all_threads)
    timed = interleaved([single_gjk, lambda: coal_distance(everything, False), lambda: coal_distance(everything, True)], repeats)
    rows.append(("single call convex.gjk", n, *timed))
    timed = interleaved([single_distance, lambda: coal_distance(everything, False), lambda: coal_distance(everything, True)], repeats)
    rows.append(("single call touche.distance", n, *timed))

    print(f"\n{'workload (us per pair)':38s} {'touche':>7s} {'coal':>7s} {'ratio':>6s} {'tight':>7s} {'ratio':>6s}"
          f" | {'cpu: touche':>11s} {'coal':>7s} {'ratio':>6s}")
    for name, count, ours, theirs, tight in rows:
        print(f"{name:38s} {ours[0] / count * 1e6:7.2f} {theirs[0] / count * 1e6:7.2f} {ours[0] / theirs[0]:6.2f}"
              f" {tight[0] / count * 1e6:7.2f} {ours[0] / tight[0]:6.2f}"
              f" | {ours[1] / count * 1e6:11.2f} {theirs[1] / count * 1e6:7.2f} {ours[1] / theirs[1]:6.2f}")


if __name__ == "__main__":
    main()
