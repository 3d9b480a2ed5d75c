"""Broad phase: every touche structure vs coal's and python-fcl's DynamicAABBTree managers.

    NUMBA_CACHE_DIR=/tmp/numba-bench .venv/bin/python benchmarks/bench_broadphase.py [--quick]

Scene: N random boxes in the unit cube sized so that each overlaps ~2 others (N = 1e3, 1e4,
1e5). All libraries get the same boxes (coal / fcl as Box shapes with translations).
Rows (median of 31 / 7 / 3 repeats for N = 1e3 / 1e4 / 1e5, ms):
- all pairs: ``structure.pairs()`` on a built structure vs coal ``collide(CollisionCallBackCollect)``
  (C++ collector) and python-fcl ``collide(data, callback)`` with a Python callback;
- build: ``rebuild(boxes)`` vs registerObjects + setup;
- step: 10 % of the objects move a little, then all pairs again (touche: update_many + pairs;
  coal / fcl: setTranslation of the moved objects, update(), collide());
- memory per object: bytes in the structure's numpy arrays / N.
Ratios: touche / coal and fcl / touche. A scaling plot goes to benchmarks/broadphase_scaling.png.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from touche.broadphase import STRUCTURES  # noqa: E402


def bench_boxes(n, rng):
    """n boxes in the unit cube, half extents h * U(0.5, 1) per axis, h chosen so that the
    expected number of overlapping pairs is ~n, i.e. each box overlaps ~2 others
    (P(overlap) ~ (3 h)^3 per pair, n^2 / 2 pairs)."""
    h = (2.0 / (27.0 * n)) ** (1.0 / 3.0)
    centers = rng.uniform(0.0, 1.0, (n, 3))
    half = h * rng.uniform(0.5, 1.0, (n, 3))
    return np.hstack([centers - half, centers + half])


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def coal_setup(boxes):
    import coal

    objects, geometries = [], []
    manager = coal.DynamicAABBTreeCollisionManager()
    for b in boxes:
        size = b[3:] - b[:3]
        geom = coal.Box(*size)
        obj = coal.CollisionObject(geom, coal.Transform3s(np.eye(3), 0.5 * (b[:3] + b[3:])))
        geometries.append(geom)  # keep the shapes alive next to the objects
        objects.append(obj)
        manager.registerObject(obj)
    manager.setup()
    manager._keep = (objects, geometries)
    return manager, objects


def coal_pairs(manager, n):
    import coal

    callback = coal.CollisionCallBackCollect(max(16, 8 * n))
    manager.collide(callback)
    return callback.numCollisionPairs()


def fcl_setup(boxes):
    import fcl

    objects = []
    for b in boxes:
        size = b[3:] - b[:3]
        objects.append(fcl.CollisionObject(fcl.Box(*size), fcl.Transform(0.5 * (b[:3] + b[3:]))))
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objects)
    manager.setup()
    return manager, objects


def fcl_pairs(manager):
    import fcl

    found = []

    def callback(o1, o2, data):  # the Python callback python-fcl users write
        request = fcl.CollisionRequest()
        result = fcl.CollisionResult()
        if fcl.collide(o1, o2, request, result):
            found.append((o1, o2))
        return False

    manager.collide(None, callback)
    return len(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 1e3 and 1e4 only, fewer repeats")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--fcl-max", type=int, default=10_000, help="largest N given to python-fcl")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    rng = np.random.default_rng(7)
    rows = []
    for n in sizes:
        repeats = 31 if n <= 1_000 else (7 if n <= 10_000 else 3)
        boxes = bench_boxes(n, rng)
        moved = rng.choice(n, n // 10, replace=False)
        shift = np.tile(rng.normal(0.0, 0.1 * n ** (-1 / 3), (moved.size, 3)), 2)
        moved_boxes = boxes[moved] + shift

        manager, objects = coal_setup(boxes)
        expected = coal_pairs(manager, n)
        coal_t = median_time(lambda: coal_pairs(manager, n), repeats)
        coal_build = median_time(lambda: coal_setup(boxes), 1)

        def coal_step():
            for i, b in zip(moved, moved_boxes):
                objects[i].setTranslation(0.5 * (b[:3] + b[3:]))
            manager.update()
            coal_pairs(manager, n)

        coal_step_t = median_time(coal_step, 1)
        fcl_t = np.nan
        if n <= args.fcl_max:
            fmanager, _ = fcl_setup(boxes)
            fcl_count = fcl_pairs(fmanager)
            fcl_t = median_time(lambda: fcl_pairs(fmanager), max(1, repeats // 2))
            print(f"N={n}: python-fcl pairs {fcl_count}")
        print(f"N={n}: {expected} pairs (coal), coal all-pairs {coal_t * 1e3:.2f} ms, "
              f"python-fcl {fcl_t * 1e3:.1f} ms")
        for name, cls in STRUCTURES.items():
            structure = cls()
            structure.rebuild(boxes)
            got = structure.pairs()
            assert got.shape[0] == expected, (name, got.shape[0], expected)
            build_t = median_time(lambda: structure.rebuild(boxes), 1)
            structure.pairs()
            pairs_t = median_time(structure.pairs, repeats)

            ids = moved
            state = {"flip": False}

            def step():
                state["flip"] = not state["flip"]
                structure.update_many(ids, moved_boxes if state["flip"] else boxes[moved])
                structure.pairs()

            step()
            step_t = median_time(step, repeats)
            memory = structure.memory_bytes() / n
            rows.append((n, name, pairs_t, build_t, step_t, memory, coal_t, coal_build, coal_step_t, fcl_t))
            print(f"  {name:18s} pairs {pairs_t * 1e3:8.2f} ms  (x{pairs_t / coal_t:5.2f} coal, "
                  f"fcl/touche {fcl_t / pairs_t:6.1f})  build {build_t * 1e3:8.1f} ms (coal {coal_build * 1e3:7.1f})"
                  f"  step10% {step_t * 1e3:7.2f} ms (coal {coal_step_t * 1e3:6.2f})  {memory:6.0f} B/object",
                  flush=True)
    if not args.no_plot:
        plot(rows)
    return rows


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    names = sorted({r[1] for r in rows})
    for name in names:
        sel = [r for r in rows if r[1] == name]
        ax.loglog([r[0] for r in sel], [r[2] * 1e3 for r in sel], "o-", label=f"touche {name}")
    coal_rows = {r[0]: r for r in rows}
    ns = sorted(coal_rows)
    ax.loglog(ns, [coal_rows[n][6] * 1e3 for n in ns], "k--s", lw=2, label="coal DynamicAABBTree (C++ collect)")
    fcl_ns = [n for n in ns if np.isfinite(coal_rows[n][9])]
    ax.loglog(fcl_ns, [coal_rows[n][9] * 1e3 for n in fcl_ns], "k:^", lw=2, label="python-fcl (Python callback)")
    ax.set_xlabel("boxes N (~2 overlaps each)")
    ax.set_ylabel("all pairs, ms (median)")
    ax.set_title("Broad phase: all overlapping pairs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    out = Path(__file__).resolve().parent / "broadphase_scaling.png"
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
