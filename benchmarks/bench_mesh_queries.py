"""Mesh queries on the BVH (touche.meshquery) vs embreex (rays) and trimesh.proximity (points).

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_mesh_queries.py [--quick]

Mesh: pybullet_data differential/diff_ring.stl (57,640 triangles, closed).
Rays: 1e6 (--quick: 1e5) rays from random points on a sphere of radius |extents| around the
mesh toward random targets in 1.3x its box (about half hit). touche: touche.raycast (first hit,
float64, prange over rays on every core numba sees); embreex: EmbreeScene.run(origins_f32,
directions_f32, output=1) (float32, first hit). Ratio = touche rays/s / embreex rays/s (>= 1 is
touche faster). Agreement: hit flags and t (relative 1e-4) compared on the same rays.
touche and embreex are timed alternately (same background load). The machine is shared: the
ratio moves with the load (other processes take the second core touche would use).
Points: 1e4 (--quick: 2e3) points in 1.2x the mesh box: touche closest point vs
trimesh.proximity.closest_point; touche signed distance (winding number sign) vs
trimesh.proximity.signed_distance (ray-parity sign, positive inside). Ratio = time touche / time
trimesh (< 1 is touche faster). Medians of repeats after a warm-up call (compile, tree build).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pybullet_data  # noqa: E402
import trimesh  # noqa: E402

import touche  # noqa: E402
from touche import meshquery  # noqa: E402


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def interleaved(first, second, repeats):
    """Medians of ``first`` and ``second`` timed alternately (same background load for both)."""
    times = ([], [])
    for _ in range(repeats):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return float(np.median(times[0])), float(np.median(times[1]))


def ray_batch(mesh, n, rng):
    center = mesh.bounds.mean(axis=0)
    radius = np.linalg.norm(mesh.extents)
    origins = rng.normal(size=(n, 3))
    origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
    targets = center + (rng.random((n, 3)) - 0.5) * mesh.extents * 1.3
    directions = targets - origins
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    return origins, directions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1e5 rays, 2e3 points, 3 repeats")
    parser.add_argument("--mesh", default="differential/diff_ring.stl", help="path inside pybullet_data")
    args = parser.parse_args()
    n_rays = 100_000 if args.quick else 1_000_000
    n_points = 2_000 if args.quick else 10_000
    repeats = 3 if args.quick else 5

    tm = trimesh.load(os.path.join(pybullet_data.getDataPath(), args.mesh), force="mesh")
    mesh = touche.TriangleMesh.from_trimesh(tm)
    rng = np.random.default_rng(7)
    print(f"mesh {args.mesh}: {len(tm.faces)} triangles, watertight {tm.is_watertight}")
    import numba

    print(f"numba threads: {numba.config.NUMBA_NUM_THREADS}")

    # ---- rays
    start = time.perf_counter()
    meshquery.mesh_tree(mesh)
    print(f"touche tree build (incl. compile/load): {time.perf_counter() - start:.2f} s")
    origins, directions = ray_batch(tm, n_rays, rng)
    touche.raycast(mesh, None, origins[:1000], directions[:1000])  # warm-up
    touche_result = touche.raycast(mesh, None, origins, directions)
    run_touche = lambda: touche.raycast(mesh, None, origins, directions)  # noqa: E731

    rows = []
    try:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh as EmbreeMesh
    except ImportError:
        print("embreex not installed: ray comparison skipped")
    else:
        scene = rtcore_scene.EmbreeScene()
        EmbreeMesh(scene, tm.vertices.astype(np.float32)[tm.faces])
        origins32 = origins.astype(np.float32)
        directions32 = directions.astype(np.float32)
        embree_result = scene.run(origins32, directions32, output=1)  # warm-up (BVH build)
        # alternate the two so that both see the same load on this shared machine
        t_touche, t_embree = interleaved(run_touche, lambda: scene.run(origins32, directions32, output=1), repeats)
        embree_hit = embree_result["primID"] >= 0
        both = embree_hit & touche_result.hit
        t_rel = np.abs(embree_result["tfar"][both] - touche_result.t[both]) / np.maximum(touche_result.t[both], 1e-12)
        print(f"rays: {n_rays}, hit fraction touche {touche_result.hit.mean():.3f} embreex {embree_hit.mean():.3f}; "
              f"hit flags disagree on {int((embree_hit != touche_result.hit).sum())} rays; "
              f"t rel. diff > 1e-4 on {int((t_rel > 1e-4).sum())} of {int(both.sum())} common hits")
        rows.append(("raycast first hit", n_rays, t_touche, t_embree, "embreex", n_rays / t_touche, n_rays / t_embree))
    if not rows:
        t_touche = median_time(run_touche, repeats)
    t_any = median_time(lambda: touche.raycast(mesh, None, origins, directions, mode="any"), repeats)
    rows.append(("raycast any hit", n_rays, t_any, float("nan"), "-", n_rays / t_any, float("nan")))

    # ---- points
    lo, hi = tm.bounds
    pad = 0.1 * (hi - lo)
    points = rng.uniform(lo - pad, hi + pad, size=(n_points, 3))
    touche.closest_point(mesh, None, points[:10])  # warm-up
    meshquery.signed_distance_points(mesh, None, points[:10])
    t_cp = median_time(lambda: touche.closest_point(mesh, None, points), repeats)
    t_cp_tm = median_time(lambda: trimesh.proximity.closest_point(tm, points), max(1, repeats // 2))
    rows.append(("closest point", n_points, t_cp, t_cp_tm, "trimesh.proximity", n_points / t_cp, n_points / t_cp_tm))
    t_sd = median_time(lambda: meshquery.signed_distance_points(mesh, None, points), repeats)
    t_sd_tm = median_time(lambda: trimesh.proximity.signed_distance(tm, points), max(1, repeats // 2))
    rows.append(("signed distance", n_points, t_sd, t_sd_tm, "trimesh.proximity", n_points / t_sd, n_points / t_sd_tm))
    t_in = median_time(lambda: meshquery.contains(mesh, None, points), repeats)
    t_in_tm = median_time(lambda: tm.contains(points), max(1, repeats // 2))
    rows.append(("contains", n_points, t_in, t_in_tm, "trimesh contains", n_points / t_in, n_points / t_in_tm))

    sd_touche = meshquery.signed_distance_points(mesh, None, points)
    sd_trimesh = trimesh.proximity.signed_distance(tm, points)
    print(f"points: {n_points}; |touche distance - trimesh distance| max "
          f"{np.max(np.abs(np.abs(sd_touche) - np.abs(sd_trimesh))):.2e}; inside/outside disagree on "
          f"{int((np.sign(-sd_touche) != np.sign(sd_trimesh)).sum())} (trimesh: positive inside)")

    print()
    print(f"{'query':20s} {'n':>8s} {'touche s':>10s} {'peer s':>10s} {'peer':>18s} {'touche/s':>12s} "
          f"{'peer/s':>12s} {'time ratio t/p':>15s} {'throughput t/p':>15s}")
    for name, n, tt, tp, peer, rate_t, rate_p in rows:
        print(f"{name:20s} {n:8d} {tt:10.4f} {tp:10.4f} {peer:>18s} {rate_t:12.4g} {rate_p:12.4g} "
              f"{tt / tp:15.3f} {rate_t / rate_p:15.3f}")


if __name__ == "__main__":
    main()
