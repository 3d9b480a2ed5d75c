"""touche.bounding: fit quality (volume vs the best found) and fit time, vs trimesh.

    python benchmarks/bench_bounding.py            # full
    python benchmarks/bench_bounding.py --quick    # smaller clouds, fewer repeats

Point sets: a gaussian cloud, a rotated uniform box, a flat (planar) cloud, and the vertices of
pybullet_data's duck.obj and bunny.obj (loaded with trimesh). For each set:
  * OBBs: volume / best volume found by any method (touche's PCA, hull PCA, triangle covariance
    (meshes), min-volume, brute force; trimesh.bounds.oriented_bounds), fit time, and the time
    ratio touche / trimesh for the min-volume fit;
  * spheres: radius / Welzl radius and time for Ritter, iterative Ritter, PCA sphere, Welzl and
    trimesh.nsphere.minimum_nsphere;
  * capsule, lozenge and k-DOPs: volume / min-volume OBB (for orientation only).
Times are medians of repeats after a warm-up call (numba compilation excluded).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from touche import bounding as bv  # noqa: E402


def median_time(fn, repeats):
    fn()  # warm-up (compiles)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def point_sets(n, rng):
    sets = {
        "gaussian": (rng.normal(size=(n, 3)) * [3.0, 1.0, 0.4], None),
        "uniform box (rotated)": (rng.uniform(-1, 1, (n, 3)) * [2.0, 1.0, 0.5] @ random_rotation(rng).T, None),
        "flat cloud": (np.column_stack([rng.uniform(-2, 2, (n, 2)), np.zeros(n)]) @ random_rotation(rng).T, None),
    }
    try:
        import pybullet_data
        import trimesh

        for name in ("duck.obj", "bunny.obj"):
            path = os.path.join(pybullet_data.getDataPath(), name)
            mesh = trimesh.load(path, force="mesh", process=False)
            sets[name] = (np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64))
    except Exception as exc:  # pragma: no cover - optional data
        print(f"(meshes skipped: {exc})")
    return sets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="points per random cloud")
    args = parser.parse_args()
    n = args.n or (500 if args.quick else 5000)
    repeats = 3 if args.quick else 7
    try:
        import trimesh.bounds as tm_bounds
        import trimesh.nsphere as tm_nsphere
    except ImportError:  # pragma: no cover
        tm_bounds = tm_nsphere = None
    rng = np.random.default_rng(1)
    for name, (points, faces) in point_sets(n, rng).items():
        print(f"\n=== {name}: {points.shape[0]} points" + (f", {faces.shape[0]} triangles" if faces is not None else ""))
        fits = {
            "obb_pca": lambda: bv.obb_pca(points),
            "obb_hull_pca": lambda: bv.obb_hull_pca(points),
            "obb_min_volume": lambda: bv.obb_min_volume(points),
            "obb_brute_force(12)": lambda: bv.obb_brute_force(points, steps=12),
        }
        if faces is not None:
            fits["obb_triangles"] = lambda: bv.obb_triangles(points, faces)
        volumes, times = {}, {}
        flat = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)[2] <= 1e-9 * np.ptp(points, axis=0).max()
        areas = {}
        for label, fn in fits.items():
            times[label] = median_time(fn, repeats)
            box = fn()
            assert box.contains(points).all(), label
            volumes[label] = box.volume()
            h = np.sort(box.half_extents)
            areas[label] = 4.0 * h[1] * h[2]
        if tm_bounds is not None:
            try:
                times["trimesh oriented_bounds"] = median_time(lambda: tm_bounds.oriented_bounds(points), repeats)
                _transform, extents = tm_bounds.oriented_bounds(points)
                volumes["trimesh oriented_bounds"] = float(np.prod(extents))
            except Exception as exc:
                print(f"  trimesh oriented_bounds failed: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}")
        best = min(volumes.values())
        best_area = min(areas.values())
        if flat:
            print("  (flat set: quality = largest face area / best; thickness shown as volume)")
        print(f"  {'OBB fit':28s} {'volume/best' if not flat else 'area/best':>12s} {'time ms':>10s}")
        for label in volumes:
            ratio = volumes[label] / best if not flat else areas.get(label, np.nan) / best_area
            print(f"  {label:28s} {ratio:12.4f} {1e3 * times[label]:10.3f}" + (f"  (volume {volumes[label]:.3g})" if flat else ""))
        if "trimesh oriented_bounds" in times:
            print(f"  min-volume time ratio touche/trimesh: {times['obb_min_volume'] / times['trimesh oriented_bounds']:.3f};"
                  f" volume ratio touche/trimesh: "
                  f"{volumes['obb_min_volume'] / volumes['trimesh oriented_bounds'] if not flat else float('nan'):.4f}")

        if faces is not None:
            from touche._kernels import bounding as kb

            ids_all = np.arange(faces.shape[0], dtype=np.int64)
            ids_leaf = ids_all[:32].copy()
            print(f"  {'BVH node kernels':28s} {'all tris us':>12s} {'32 tris us':>10s}")
            for label, fn in (
                ("triangle_covariance_frame", lambda ids: kb.triangle_covariance_frame(points, faces, ids)),
                ("fit_obb_in_frame", lambda ids: kb.fit_obb_in_frame(points, faces, ids, np.eye(3))),
                ("fit_rss_in_frame", lambda ids: kb.fit_rss_in_frame(points, faces, ids, np.eye(3))),
            ):
                t_all = median_time(lambda: fn(ids_all), repeats)
                t_leaf = median_time(lambda: fn(ids_leaf), max(repeats, 20))
                print(f"  {label:28s} {1e6 * t_all:12.1f} {1e6 * t_leaf:10.2f}")

        spheres = {
            "sphere_ritter": lambda: bv.sphere_ritter(points),
            "sphere_iterative(8)": lambda: bv.sphere_iterative(points),
            "sphere_pca": lambda: bv.sphere_pca(points),
            "sphere_welzl": lambda: bv.sphere_welzl(points),
        }
        radii, stimes = {}, {}
        for label, fn in spheres.items():
            stimes[label] = median_time(fn, repeats)
            ball = fn()
            assert ball.contains(points).all(), label
            radii[label] = ball.radius
        if tm_nsphere is not None:
            try:
                stimes["trimesh minimum_nsphere"] = median_time(lambda: tm_nsphere.minimum_nsphere(points), repeats)
                radii["trimesh minimum_nsphere"] = float(tm_nsphere.minimum_nsphere(points)[1])
            except Exception as exc:
                print(f"  trimesh minimum_nsphere failed: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}")
        exact = radii["sphere_welzl"]
        print(f"  {'sphere fit':28s} {'radius/welzl':>12s} {'time ms':>10s}")
        for label in radii:
            print(f"  {label:28s} {radii[label] / exact:12.4f} {1e3 * stimes[label]:10.3f}")
        if "trimesh minimum_nsphere" in stimes:
            print(f"  welzl time ratio touche/trimesh: {stimes['sphere_welzl'] / stimes['trimesh minimum_nsphere']:.3f}")

        others = {
            "capsule": lambda: bv.capsule(points),
            "lozenge": lambda: bv.lozenge(points),
            "aabb": lambda: bv.aabb(points),
        }
        for k in (8, 14, 18, 26):
            others[f"kdop({k})"] = lambda k=k: bv.kdop(points, k)
        ref = volumes["obb_min_volume"]
        print(f"  {'other':28s} {'vol/minOBB':>12s} {'time ms':>10s}")
        for label, fn in others.items():
            t = median_time(fn, repeats)
            v = fn()
            assert v.contains(points).all(), label
            ratio = v.volume() / ref if not flat else float("nan")
            print(f"  {label:28s} {ratio:12.4f} {1e3 * t:10.3f}")


if __name__ == "__main__":
    main()
