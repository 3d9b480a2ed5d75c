"""Mesh queries on the BVH (touche.meshquery) vs embreex, pybullet and trimesh (rays) and
trimesh.proximity (points).

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_mesh_queries.py [--quick]

Mesh: pybullet_data differential/diff_ring.stl (57,640 triangles, closed; --mesh for another).

Rays: 1e6 (--quick: 1e5) rays, three sets on the same mesh: "half" (origins on a sphere of radius
|extents| around the mesh, toward random points in 1.3x its box: about half hit), "mostly hit"
(toward random points sampled on the surface) and "mostly miss" (toward random points in 4x the
box). Every contender gets the same rays. touche: touche.raycast (first hit, float64 in and out,
prange over sorted ray windows on every core numba sees; also timed with one thread); embreex:
EmbreeScene.run(origins32, directions32, output=1) (first hit, float32; the float32 copies are made
once outside the timing, i.e. embreex is not charged for the conversion). embreex is also timed on
two Python threads, half the rays each: its run releases the GIL (on an idle 2-core machine it
scales ~1.8x), so the "embreex 2 thr" rows are the like-for-like two-core comparison.
Timed in interleaved rounds (touche, touche 1 thread, embreex, ...) so all see the same
background load; medians of the rounds. Ratio = touche rays/s / embreex rays/s (>= 1: touche
faster). Agreement: hit flags and t (relative 1e-4) compared on the same rays.
pybullet rayTestBatch (numThreads=2, at most 16,383 rays per call as its API requires) and
trimesh's ray_triangle (pure numpy) run on subsets (1e5 / 2e3 rays) and report rays/s.
The machine is shared: the load average before / after is printed; absolute times are noise, the
ratios measured in the same rounds are the result.

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

import numba  # noqa: E402
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


def interleaved(functions, repeats):
    """Median wall time of each function, timed round-robin (same background load for all)."""
    times = [[] for _ in functions]
    for _ in range(repeats):
        for fn, out in zip(functions, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


def ray_batch(mesh, n, rng, spread=1.3):
    """Origins on a sphere of radius |extents| around the mesh toward random points in
    ``spread`` x its box."""
    center = mesh.bounds.mean(axis=0)
    radius = np.linalg.norm(mesh.extents)
    origins = rng.normal(size=(n, 3))
    origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
    targets = center + (rng.random((n, 3)) - 0.5) * mesh.extents * spread
    directions = targets - origins
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    return origins, directions


def ray_batch_to_surface(mesh, n, rng):
    """Origins on the same sphere toward random points on the surface (area-weighted)."""
    center = mesh.bounds.mean(axis=0)
    radius = np.linalg.norm(mesh.extents)
    origins = rng.normal(size=(n, 3))
    origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
    targets, _ = trimesh.sample.sample_surface(mesh, n, seed=int(rng.integers(2**31)))
    directions = targets - origins
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    return origins, directions


def embree_two_threads(scene, origins32, directions32):
    """embreex on two Python threads, half the rays each (run releases the GIL: both cores)."""
    import threading

    half = len(origins32) // 2
    parts = (slice(0, half), slice(half, None))
    threads = [threading.Thread(target=scene.run, args=(origins32[p], directions32[p]), kwargs={"output": 1})
               for p in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def pybullet_rays_per_second(tm, origins, directions, length):
    """pybullet rayTestBatch on a concave triangle mesh body (numThreads=2, 16,383 rays per call)."""
    import pybullet

    client = pybullet.connect(pybullet.DIRECT)
    try:
        shape = pybullet.createCollisionShape(
            pybullet.GEOM_MESH, vertices=tm.vertices.tolist(), indices=tm.faces.reshape(-1).tolist(),
            flags=pybullet.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=client,
        )
        pybullet.createMultiBody(0, shape, physicsClientId=client)
        ends = origins + directions * length
        hits = np.zeros(len(origins), dtype=bool)
        start = time.perf_counter()
        for lo in range(0, len(origins), 16383):
            result = pybullet.rayTestBatch(origins[lo : lo + 16383], ends[lo : lo + 16383], numThreads=2,
                                           physicsClientId=client)
            hits[lo : lo + 16383] = [r[0] >= 0 for r in result]
        elapsed = time.perf_counter() - start
    finally:
        pybullet.disconnect(client)
    return len(origins) / elapsed, hits


def ray_section(tm, mesh, n_rays, repeats, rng):
    """Rays: touche vs embreex on three ray sets (module doc); returns printed rows."""
    try:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh as EmbreeMesh
    except ImportError:
        print("embreex not installed: ray comparison skipped")
        return []
    scene = rtcore_scene.EmbreeScene()
    EmbreeMesh(scene, tm.vertices.astype(np.float32)[tm.faces])
    threads = numba.get_num_threads()
    sets = {
        "half": ray_batch(tm, n_rays, rng),
        "mostly hit": ray_batch_to_surface(tm, n_rays, rng),
        "mostly miss": ray_batch(tm, n_rays, rng, spread=4.0),
    }
    rows = []
    for name, (origins, directions) in sets.items():
        origins32 = origins.astype(np.float32)
        directions32 = directions.astype(np.float32)
        touche.raycast(mesh, None, origins[:1000], directions[:1000])  # warm-up (compile / ray tree)
        scene.run(origins32[:1000], directions32[:1000], output=1)  # warm-up (embree BVH)
        result = touche.raycast(mesh, None, origins, directions)
        answer = scene.run(origins32, directions32, output=1)
        embree_hit = answer["primID"] >= 0
        both = embree_hit & result.hit
        t_rel = np.abs(answer["tfar"][both] - result.t[both]) / np.maximum(result.t[both], 1e-12)

        def touche_one_thread():
            numba.set_num_threads(1)
            try:
                touche.raycast(mesh, None, origins, directions)
            finally:
                numba.set_num_threads(threads)

        load_before = os.getloadavg()[0]
        t_touche, t_touche1, t_embree, t_embree2, t_embree_conv = interleaved([
            lambda: touche.raycast(mesh, None, origins, directions),
            touche_one_thread,
            lambda: scene.run(origins32, directions32, output=1),
            lambda: embree_two_threads(scene, origins32, directions32),
            lambda: scene.run(origins.astype(np.float32), directions.astype(np.float32), output=1),
        ], repeats)
        load_after = os.getloadavg()[0]
        print(f"rays '{name}': {n_rays}, hit fraction touche {result.hit.mean():.3f} embreex {embree_hit.mean():.3f}; "
              f"hit flags disagree on {int((embree_hit != result.hit).sum())} rays; t rel. diff > 1e-4 on "
              f"{int((t_rel > 1e-4).sum())} of {int(both.sum())} common hits; load {load_before:.2f} -> {load_after:.2f}")
        print(f"  touche {threads} threads {n_rays / t_touche / 1e6:.2f} M rays/s, 1 thread {n_rays / t_touche1 / 1e6:.2f};"
              f" embreex {n_rays / t_embree / 1e6:.2f}, on 2 Python threads {n_rays / t_embree2 / 1e6:.2f}, incl. float32 "
              f"conversion {n_rays / t_embree_conv / 1e6:.2f}  ->  ratio touche/embreex {t_embree / t_touche:.2f} "
              f"({threads} threads), {t_embree / t_touche1:.2f} (1 thread)")
        rows.append((f"raycast first {name}", n_rays, t_touche, t_embree, "embreex", n_rays / t_touche, n_rays / t_embree))
        rows.append(("  vs embreex 2 thr", n_rays, t_touche, t_embree2, "embreex 2 threads", n_rays / t_touche,
                     n_rays / t_embree2))
        if name == "half":
            t_any = median_time(lambda: touche.raycast(mesh, None, origins, directions, mode="any"), repeats)
            rows.append(("raycast any half", n_rays, t_any, float("nan"), "-", n_rays / t_any, float("nan")))
            sub = slice(0, min(n_rays, 100_000))
            length = 4.0 * float(np.linalg.norm(tm.extents))
            rate, bullet_hit = pybullet_rays_per_second(tm, origins[sub], directions[sub], length)
            print(f"  pybullet rayTestBatch (numThreads=2, {sub.stop} rays): {rate / 1e6:.3f} M rays/s, hit flags "
                  f"disagree with touche on {int((bullet_hit != result.hit[sub]).sum())}")
            rows.append(("raycast pybullet", sub.stop, float("nan"), sub.stop / rate, "pybullet", float("nan"), rate))
            few = slice(0, 2000)
            intersector = trimesh.ray.ray_triangle.RayMeshIntersector(tm)
            start = time.perf_counter()
            intersector.intersects_first(origins[few], directions[few])
            elapsed = time.perf_counter() - start
            print(f"  trimesh ray_triangle (numpy, 2000 rays): {2000 / elapsed:.0f} rays/s")
            rows.append(("raycast trimesh-np", 2000, float("nan"), elapsed, "trimesh ray_triangle", float("nan"),
                         2000 / elapsed))
    return rows


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
    print(f"mesh {args.mesh}: {len(tm.faces)} triangles, watertight {tm.is_watertight}; numba threads "
          f"{numba.get_num_threads()}; load average {os.getloadavg()}")

    # ---- rays
    start = time.perf_counter()
    meshquery.mesh_tree(mesh).ray_tree()
    print(f"touche trees (incl. compile / cache load): {time.perf_counter() - start:.2f} s")
    rows = ray_section(tm, mesh, n_rays, repeats, rng)

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

    print(f"load average at the end {os.getloadavg()}")
    print()
    print(f"{'query':22s} {'n':>8s} {'touche s':>10s} {'peer s':>10s} {'peer':>18s} {'touche/s':>12s} "
          f"{'peer/s':>12s} {'time ratio t/p':>15s} {'throughput t/p':>15s}")
    for name, n, tt, tp, peer, rate_t, rate_p in rows:
        print(f"{name:22s} {n:8d} {tt:10.4f} {tp:10.4f} {peer:>18s} {rate_t:12.4g} {rate_p:12.4g} "
              f"{tt / tp:15.3f} {rate_t / rate_p:15.3f}")


if __name__ == "__main__":
    main()
