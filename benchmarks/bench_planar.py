"""Benchmark of touche.planar (2D separating axes): batch static test, time of impact and
intersection polygon, per pair. Compared with shapely 2's vectorised ``intersects`` when shapely
is installed; otherwise absolute times only (no peer in the project venv).

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_planar.py [n] [k]
"""
import sys
import time

import numpy as np

sys.path.insert(0, ".")
import touche.planar as tp  # noqa: E402
from touche import _parallel  # noqa: E402
from touche._kernels import sat2d  # noqa: E402


def convex_polygons(rng, n, k):
    gaps = rng.uniform(0.6, 1.6, size=(n, k))
    angles = np.cumsum(gaps / gaps.sum(axis=1, keepdims=True) * 2 * np.pi, axis=1)
    radius = rng.uniform(0.5, 1.5, size=(n, 1, 1))
    return np.ascontiguousarray(np.stack([np.cos(angles), np.sin(angles)], axis=-1) * radius)


def best_of(fn, repeats=5):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(n=200_000, k=6):
    rng = np.random.default_rng(0)
    a = convex_polygons(rng, n, k)
    b = convex_polygons(rng, n, k) + rng.uniform(-3, 3, (n, 1, 2))
    va = np.zeros((n, 2))
    vb = rng.normal(0, 1, (n, 2))
    t_max = np.array([2.0])
    out_bool = np.empty(n, dtype=np.bool_)
    out_toi = np.empty((n, sat2d.TOI_WIDTH))
    points = np.empty((n, 2 * k, 2))
    kind = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    tp.intersects(a[:10], b[:10])  # compile / load
    tp.time_of_impact(a[:10], va[:10], b[:10], vb[:10], 2.0)
    tp.intersection(a[:10], b[:10])
    rows = [
        ("intersects kernel", best_of(lambda: _parallel.run(sat2d.intersects_many, n, a, b, out_bool,
                                                            grain=tp._GRAIN_INTERSECTS))),
        ("intersects public", best_of(lambda: tp.intersects(a, b))),
        ("time_of_impact kernel", best_of(lambda: _parallel.run(sat2d.toi_many, n, a, b, va, vb, t_max, out_toi,
                                                                grain=tp._GRAIN_IMPACT))),
        ("time_of_impact public", best_of(lambda: tp.time_of_impact(a, va, b, vb, 2.0))),
        ("intersection kernel", best_of(lambda: _parallel.run(sat2d.intersection_many, n, a, b, points, kind, count,
                                                              grain=tp._GRAIN_INTERSECTION))),
        ("intersection public", best_of(lambda: tp.intersection(a, b))),
    ]
    hit = tp.intersects(a, b).mean()
    print(f"touche.planar, n = {n} pairs of convex {k}-gons, hit rate {hit:.2f}, best of 5")
    try:
        import shapely
    except ImportError:
        shapely = None
    peer = None
    if shapely is not None:
        ga = shapely.polygons(a)
        gb = shapely.polygons(b)
        peer = best_of(lambda: shapely.intersects(ga, gb))
        agree = (shapely.intersects(ga, gb) == tp.intersects(a, b)).mean()
    print(f"{'query':<24}{'total s':>10}{'ns/pair':>10}{'M pairs/s':>11}{'vs shapely':>12}")
    for name, seconds in rows:
        ratio = f"{seconds / peer:.3f}" if (peer and name.startswith("intersects")) else "-"
        print(f"{name:<24}{seconds:>10.4f}{seconds / n * 1e9:>10.1f}{n / seconds / 1e6:>11.2f}{ratio:>12}")
    if peer is None:
        print("no peer: shapely is not installed in this environment (not added as a dependency)")
    else:
        print(f"shapely.intersects {peer:.4f} s ({peer / n * 1e9:.1f} ns/pair), agreement {agree:.4f}")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:3]]
    main(*args)
