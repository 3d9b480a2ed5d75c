"""GJK / EPA: touche (touche.convex) vs coal on two 100-vertex hulls at 2,000 random poses.

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_gjk.py

Rows (median of 5 repeats, microseconds per pair; ratio = touche / coal):
- batch distance: touche's one (n, 4, 4) call vs coal.distance called per pose;
- single distance: one touche.convex.gjk call per pose (Python loop) vs coal per pose;
- EPA depth (overlapping poses only): touche batch vs coal.distance per pose;
- boolean: touche batch convex.intersects vs coal.collide per pose.
coal runs with its default request (its GJK tolerance 1e-6) and with tight tolerances (1e-12,
the accuracy touche delivers); both are printed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import coal  # noqa: E402

import touche  # noqa: E402
from touche import convex  # noqa: E402
from naive_gjk import random_poses  # noqa: E402


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


def median_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(2026)
    # 100 hull vertices each: points on a slightly perturbed sphere are all extreme
    def hull100():
        p = rng.normal(size=(100, 3))
        p /= np.linalg.norm(p, axis=1)[:, None]
        return touche.ConvexPolyhedron(p)  # on a sphere: every point is a hull vertex

    a, b = hull100(), hull100()
    print(f"hull vertices: {len(a.vertices)}, {len(b.vertices)}")
    n = 2000
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
        request = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
        out = np.empty(len(indices), dtype=bool)
        for j, i in enumerate(indices):
            result = coal.CollisionResult()
            out[j] = coal.collide(ga, ca[i], gb, cb[i], request, result) > 0
        return out

    everything = np.arange(n)
    convex.gjk(a, ta, b, tb)  # compile / load
    convex.gjk(a, ta[0], b, tb[0])
    convex.intersects(a, ta, b, tb)
    result = convex.gjk(a, ta, b, tb)
    overlap = np.nonzero(result.signed_distance < 0)[0]
    print(f"poses: {n}, overlapping: {len(overlap)}; statuses: {np.bincount(result.status, minlength=5).tolist()}")

    theirs_default = coal_distance(everything, False)
    theirs_tight = coal_distance(everything, True)
    exact = touche.distance(a, ta, b, tb).signed_distance  # SAT engine: exact depth, exact distance
    for label, theirs in (("coal default", theirs_default), ("coal tight", theirs_tight)):
        print(f"max |coal - exact| ({label}): {np.abs(theirs - exact).max():.2e}")
    print(f"max |touche gjk - exact|: {np.abs(result.signed_distance - exact).max():.2e}")

    rows = []
    t_touche = median_time(lambda: convex.gjk(a, ta, b, tb)) / n
    t_coal = median_time(lambda: coal_distance(everything, False)) / n
    t_coal_tight = median_time(lambda: coal_distance(everything, True)) / n
    rows.append(("batch distance (per pair)", t_touche, t_coal, t_coal_tight))

    def single_loop():
        for i in range(n):
            convex.gjk(a, ta[i], b, tb[i])

    t_single = median_time(single_loop) / n
    rows.append(("single distance call", t_single, t_coal, t_coal_tight))

    ta_o, tb_o = ta[overlap], tb[overlap]
    t_epa = median_time(lambda: convex.penetration(a, ta_o, b, tb_o)) / len(overlap)
    t_coal_epa = median_time(lambda: coal_distance(overlap, False)) / len(overlap)
    t_coal_epa_tight = median_time(lambda: coal_distance(overlap, True)) / len(overlap)
    rows.append(("EPA depth (overlapping, per pair)", t_epa, t_coal_epa, t_coal_epa_tight))

    t_bool = median_time(lambda: convex.intersects(a, ta, b, tb)) / n
    t_coal_bool = median_time(lambda: coal_collide(everything)) / n
    rows.append(("boolean (per pair)", t_bool, t_coal_bool, t_coal_bool))

    print(f"\n{'workload':36s} {'touche us':>10s} {'coal us':>10s} {'ratio':>7s} {'coal tight':>11s} {'ratio':>7s}")
    for name, ours, theirs, tight in rows:
        print(f"{name:36s} {ours * 1e6:10.2f} {theirs * 1e6:10.2f} {ours / theirs:7.2f} {tight * 1e6:11.2f} {ours / tight:7.2f}")


if __name__ == "__main__":
    main()
