"""Separating-axis fast paths: touche batch throughput vs coal's per-call throughput from Python.

Same process, same inputs. A batch of N pairs (default 1e6) for the static OBB-OBB and
triangle-triangle tests through touche.pairwise (one call, all threads, and with
touche.set_num_threads(1)); coal.collide on Box / TriangleP with transforms, called once per pair
from Python on a subset (its per-call cost does not depend on the batch size), both with the
boolean-only request and with the default request. Then time of impact per pair.

    NUMBA_CACHE_DIR=/tmp/numba-$USER .venv/bin/python benchmarks/bench_sat_fast.py [N]
"""
import os
import sys
import time

import numba
import numpy as np
from scipy.spatial.transform import Rotation

import touche
from touche import _parallel
from touche import pairwise as pw
from touche._kernels import sat_fast

try:
    import coal
except ImportError:  # pragma: no cover
    coal = None


def best_of(fn, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_cpu_of(fn, repeats=3):
    """Process CPU seconds (all threads): on a shared machine the wall clock also counts the
    time other processes hold our core; CPU time is what the work itself used."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def box_inputs(rng, n):
    ua = Rotation.random(n, random_state=rng).as_matrix()
    ub = Rotation.random(n, random_state=rng).as_matrix()
    ha = rng.uniform(0.1, 1.0, (n, 3))
    hb = rng.uniform(0.1, 1.0, (n, 3))
    ca = rng.uniform(-0.5, 0.5, (n, 3))
    cb = ca + rng.uniform(-1.8, 1.8, (n, 3))
    return ca, ua, ha, cb, ub, hb


def triangle_inputs(rng, n):
    ta = rng.uniform(-1, 1, (n, 3, 3))
    tb = rng.uniform(-1, 1, (n, 3, 3)) * 0.8 + rng.uniform(-0.7, 0.7, (n, 1, 3))
    return ta, tb


def coal_request(boolean_only):
    if boolean_only:
        return coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
    return coal.CollisionRequest()


def coal_boxes(ca, ua, ha, cb, ub, hb, m, boolean_only):
    geoms = [(coal.Box(*(2 * ha[k])), coal.Transform3s(np.ascontiguousarray(ua[k].T), ca[k]),
              coal.Box(*(2 * hb[k])), coal.Transform3s(np.ascontiguousarray(ub[k].T), cb[k])) for k in range(m)]
    request = coal_request(boolean_only)

    def run():
        out = np.empty(m, dtype=bool)
        for k, (g1, t1, g2, t2) in enumerate(geoms):
            out[k] = coal.collide(g1, t1, g2, t2, request, coal.CollisionResult()) > 0
        return out

    return run


def coal_triangles(ta, tb, m, boolean_only):
    identity = coal.Transform3s()
    geoms = [(coal.TriangleP(*ta[k]), coal.TriangleP(*tb[k])) for k in range(m)]
    request = coal_request(boolean_only)

    def run():
        out = np.empty(m, dtype=bool)
        for k, (g1, g2) in enumerate(geoms):
            out[k] = coal.collide(g1, identity, g2, identity, request, coal.CollisionResult()) > 0
        return out

    return run


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    m = min(n, 50_000)  # coal subset (per-call cost)
    # touche's batches run on its own threads (touche.set_num_threads); older versions used numba's
    get_threads = getattr(touche, "get_num_threads", numba.get_num_threads)
    set_threads = getattr(touche, "set_num_threads", numba.set_num_threads)
    threads = get_threads()
    rng = np.random.default_rng(2026)
    boxes = box_inputs(rng, n)
    tris = triangle_inputs(rng, n)
    velocities = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))

    # warm up (compile / load cache) on a tiny batch
    pw.obb_obb_intersects(*(a[:2] for a in boxes))
    pw.triangle_triangle_intersects(tris[0][:2], tris[1][:2])

    rows = []

    cpu = {}

    def measure(name, fn, count):
        set_threads(threads)
        all_threads = best_of(fn)
        set_threads(1)
        one_thread = best_of(fn)
        cpu[name] = best_cpu_of(fn) / count
        set_threads(threads)
        return all_threads / count, one_thread / count

    obb_all, obb_one = measure("obb", lambda: pw.obb_obb_intersects(*boxes), n)
    tri_all, tri_one = measure("tri", lambda: pw.triangle_triangle_intersects(*tris), n)
    out = np.empty(n, dtype=np.bool_)
    # the kernels alone (no validation): the per-core figure
    kernel_obb = measure("obb kernel", lambda: _parallel.run(sat_fast.obb_obb_overlap_many, n, *boxes, out,
                                                             grain=pw._GRAIN_OVERLAP), n)
    kernel_tri = measure("tri kernel", lambda: _parallel.run(sat_fast.triangle_triangle_overlap_many, n, *tris, out,
                                                             grain=pw._GRAIN_OVERLAP), n)
    hits_obb = pw.obb_obb_intersects(*boxes).mean()
    hits_tri = pw.triangle_triangle_intersects(*tris).mean()
    if coal is not None:
        coal_obb_bool = best_of(coal_boxes(*(a[:m] for a in boxes), m, True), 2) / m
        coal_obb_def = best_of(coal_boxes(*(a[:m] for a in boxes), m, False), 2) / m
        coal_tri_bool = best_of(coal_triangles(tris[0][:m], tris[1][:m], m, True), 2) / m
        coal_tri_def = best_of(coal_triangles(tris[0][:m], tris[1][:m], m, False), 2) / m
    else:
        coal_obb_bool = coal_obb_def = coal_tri_bool = coal_tri_def = np.nan
    rows.append(("OBB-OBB static", obb_all, obb_one, coal_obb_bool, coal_obb_def, hits_obb))
    rows.append(("tri-tri static", tri_all, tri_one, coal_tri_bool, coal_tri_def, hits_tri))

    print(f"N = {n:,} pairs, threads = {threads}; coal per call from Python on {m:,} pairs;"
          f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)")
    print(f"{'workload':16s} {'touche ns/pair':>15s} {'1 thread':>10s} {'coal bool ns':>13s} {'coal dflt ns':>13s}"
          f" {'ratio touche/coal(bool)':>24s} {'1-thread ratio':>15s} {'M pairs/s/core':>15s} {'hit rate':>9s}")
    for name, t_all, t_one, c_bool, c_def, hits in rows:
        print(f"{name:16s} {t_all * 1e9:15.1f} {t_one * 1e9:10.1f} {c_bool * 1e9:13.1f} {c_def * 1e9:13.1f}"
              f" {t_all / c_bool:24.4f} {t_one / c_bool:15.4f} {1e-6 / t_one:15.1f} {hits:9.2f}")
    for name, (k_all, k_one) in (("OBB-OBB kernel", kernel_obb), ("tri-tri kernel", kernel_tri)):
        print(f"{name:16s} {k_all * 1e9:15.1f} {k_one * 1e9:10.1f} {'(no validation)':>27s}"
              f" {'':24s} {'':15s} {1e-6 / k_one:15.1f}")
    print("single-thread CPU time per pair (what one core actually spent; M pairs per CPU-second):")
    for name, key in (("OBB-OBB API", "obb"), ("tri-tri API", "tri"), ("OBB-OBB kernel", "obb kernel"),
                      ("tri-tri kernel", "tri kernel")):
        print(f"  {name:16s} {cpu[key] * 1e9:8.1f} ns  {1e-6 / cpu[key]:6.1f} M/s")
    print(f"speed-up vs coal (boolean request): OBB-OBB {coal_obb_bool / obb_all:.0f}x (1 thread"
          f" {coal_obb_bool / obb_one:.0f}x), tri-tri {coal_tri_bool / tri_all:.0f}x (1 thread {coal_tri_bool / tri_one:.0f}x)")

    # time of impact per pair (no peer: coal has no continuous collision, see PEERS.md)
    k = min(n, 200_000)
    t_max = 2.0
    pw.obb_obb_time_of_impact(*(a[:2] for a in boxes[:3]), *(a[:2] for a in boxes[3:]), velocities[0][:2],
                              velocities[1][:2], t_max)
    pw.triangle_triangle_time_of_impact(tris[0][:2], tris[1][:2], velocities[0][:2], velocities[1][:2], t_max)
    pw.triangle_obb_time_of_impact(tris[0][:2], boxes[0][:2], boxes[1][:2], boxes[2][:2], velocities[0][:2],
                                   velocities[1][:2], t_max)
    far_b = boxes[3][:k] + 3.0
    # velocities roughly closing the 3-unit gap within t_max, so that part of the pairs hit
    velocities = (velocities[0] * 0.3, velocities[1] * 0.6 - 1.0)
    toi_rows = []
    for name, fn in (
        ("OBB-OBB TOI", lambda: pw.obb_obb_time_of_impact(boxes[0][:k], boxes[1][:k], boxes[2][:k], far_b, boxes[4][:k],
                                                          boxes[5][:k], velocities[0][:k], velocities[1][:k], t_max)),
        ("tri-OBB TOI", lambda: pw.triangle_obb_time_of_impact(tris[0][:k] + 3.0, boxes[0][:k], boxes[1][:k],
                                                               boxes[2][:k], velocities[0][:k], velocities[1][:k],
                                                               t_max)),
        ("tri-tri TOI", lambda: pw.triangle_triangle_time_of_impact(tris[0][:k], tris[1][:k] + 3.0, velocities[0][:k],
                                                                    velocities[1][:k], t_max)),
    ):
        set_threads(threads)
        t_all = best_of(fn, 2) / k
        set_threads(1)
        t_one = best_of(fn, 2) / k
        set_threads(threads)
        status = fn().status
        toi_rows.append((name, t_all, t_one, (status == pw.HIT).mean(), (status == pw.ALREADY_TOUCHING).mean()))
    print(f"\n{k:,} pairs, random constant velocities, t_max = {t_max}")
    print(f"{'workload':16s} {'ns/pair':>10s} {'1 thread':>10s} {'HIT':>6s} {'touching':>9s}")
    for name, t_all, t_one, hit, touching in toi_rows:
        print(f"{name:16s} {t_all * 1e9:10.1f} {t_one * 1e9:10.1f} {hit:6.2f} {touching:9.2f}")


if __name__ == "__main__":
    main()
