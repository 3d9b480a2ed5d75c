"""Broad phase: every touche structure vs coal's and python-fcl's DynamicAABBTree managers.

    .venv/bin/python benchmarks/bench_broadphase.py            # N = 1e3, 1e4, 1e5 (~4 min)
    .venv/bin/python benchmarks/bench_broadphase.py --quick    # N = 1e3, 1e4

Scene (``bench_boxes``): N random boxes in the unit cube, sized so that each overlaps ~2 others.
Every library gets the same boxes (coal / python-fcl as Box shapes at the box centres), and every
timing is taken in the same process in INTERLEAVED rounds (each round times every contender
once, in a rotating order), so load from other jobs on this shared machine hits all of them
alike; the figures that matter are the RATIOS (median over rounds of the per-round ratio).

Rows per N:
- all pairs: ``structure.pairs()`` on a built structure ((k, 2) id pairs, sorted) vs coal
  ``manager.collide(CollisionCallBackCollect)`` (C++ collector; coal's managers refuse Python
  callback subclasses) and python-fcl ``manager.collide`` two ways: with the cheapest useful
  Python callback (it only appends the pair: "fcl/us"), and with the recipe of python-fcl's
  README (``fcl.defaultCollisionCallback`` + contacts, which also runs the narrow phase on each
  candidate: "fclR/us"; for axis-aligned boxes its answer is the same pair set);
- build: ``rebuild(boxes)`` + ``prepare()`` (lazy structures build there) vs coal
  ``registerObject`` x N + ``setup()`` (objects pre-made);
- step (10 % of the objects move by their own constant velocity, ~1/4 of a box size per step,
  then all pairs again): touche ``update_many(ids, boxes)`` + ``pairs()``; coal: per moved object
  ``setTranslation`` + ``computeAABB`` (Python calls, reported separately as "coal py"), then
  ``manager.update()`` + collide. (Without ``computeAABB`` coal's update sees no change.)
- memory per object: touche = bytes allocated while building the structure (tracemalloc: the
  numpy arrays and the id dictionary) / N; coal = growth of the process RSS while registering the
  pre-made objects and calling setup() / N (its tree only).
Every round checks that each structure finds exactly coal's number of pairs.
A scaling plot goes to benchmarks/broadphase_scaling.png.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from touche.broadphase import STRUCTURES  # noqa: E402


def bench_boxes(n, rng):
    """n boxes in the unit cube, half extents h * U(0.5, 1) per axis, h chosen so that the
    expected number of overlapping pairs is ~n, i.e. each box overlaps ~2 others
    (P(overlap) ~ (3 h)^3 per pair, n^2 / 2 pairs)."""
    h = (2.0 / (27.0 * n)) ** (1.0 / 3.0)
    centers = rng.uniform(0.0, 1.0, (n, 3))
    half = h * rng.uniform(0.5, 1.0, (n, 3))
    return np.hstack([centers - half, centers + half])


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def coal_objects(boxes):
    import coal

    geometries = [coal.Box(*(b[3:] - b[:3])) for b in boxes]
    objects = [coal.CollisionObject(g, coal.Transform3s(np.eye(3), 0.5 * (b[:3] + b[3:])))
               for g, b in zip(geometries, boxes)]
    return objects, geometries


def coal_manager(objects):
    import coal

    manager = coal.DynamicAABBTreeCollisionManager()
    for obj in objects:
        manager.registerObject(obj)
    manager.setup()
    return manager


def coal_pairs(manager, n):
    import coal

    callback = coal.CollisionCallBackCollect(max(16, 8 * n))
    manager.collide(callback)
    return callback.numCollisionPairs()


def fcl_manager(boxes):
    import fcl

    objects = [fcl.CollisionObject(fcl.Box(*(b[3:] - b[:3])), fcl.Transform(0.5 * (b[:3] + b[3:]))) for b in boxes]
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objects)
    manager.setup()
    return manager, objects


def fcl_pairs(manager):
    found = []

    def callback(o1, o2, data):  # the cheapest Python callback: collect the candidate pair
        found.append((o1, o2))
        return False

    manager.collide(None, callback)
    return len(found)


def fcl_pairs_readme(manager):
    """python-fcl's README recipe for all colliding pairs: its default callback runs the narrow
    phase on every candidate and records contacts."""
    import fcl

    request = fcl.CollisionRequest(num_max_contacts=10**8, enable_contact=True)
    data = fcl.CollisionData(request=request)
    manager.collide(data, fcl.defaultCollisionCallback)
    return len({(id(c.o1), id(c.o2)) for c in data.result.contacts})


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def run_size(n, rounds, step_rounds, fcl_max, names, rng):
    boxes = bench_boxes(n, rng)
    objects, geometries = coal_objects(boxes)
    rss0 = _rss_bytes()
    manager = coal_manager(objects)
    coal_memory = (_rss_bytes() - rss0) / n
    expected = coal_pairs(manager, n)
    fcl = fcl_manager(boxes) if n <= fcl_max else None
    structures = {}
    memory = {}
    for name in names:  # warm up: load every kernel before anything is measured
        warm = STRUCTURES[name]()
        warm.rebuild(boxes[:64])
        warm.pairs()
        warm.update_many(np.arange(8), boxes[:8])
        warm.pairs()
    for name in names:
        tracemalloc.start()
        structure = STRUCTURES[name]()
        structure.rebuild(boxes)
        structure.pairs()
        memory[name] = tracemalloc.get_traced_memory()[0] / n
        tracemalloc.stop()
        structures[name] = structure
        got = structure.pairs().shape[0]
        assert got == expected, (name, got, expected)
    fcl_count = fcl_pairs(fcl[0]) if fcl else None
    fcl_readme_count = fcl_pairs_readme(fcl[0]) if fcl else None

    # --- all pairs, interleaved rounds
    contenders = ["coal"] + (["fcl", "fcl readme"] if fcl else []) + names
    times = {c: [] for c in contenders}
    fcl_rounds = rounds if n <= 10_000 else max(3, rounds // 2)
    for r in range(rounds):
        order = contenders[r % len(contenders):] + contenders[: r % len(contenders)]
        for c in order:
            if c == "coal":
                t, k = _timed(lambda: coal_pairs(manager, n))
            elif c == "fcl":
                if r >= fcl_rounds:
                    continue
                t, k = _timed(lambda: fcl_pairs(fcl[0]))
            elif c == "fcl readme":
                if r >= fcl_rounds:
                    continue
                t, k = _timed(lambda: fcl_pairs_readme(fcl[0]))
            else:
                t, k = _timed(structures[c].pairs)
                k = k.shape[0]
                assert k == expected, (c, k, expected)
            times[c].append(t)

    # --- build, interleaved (coal: register the pre-made objects + setup)
    build = {c: [] for c in ["coal"] + names}
    for r in range(max(3, rounds // 4)):
        build["coal"].append(_timed(lambda: coal_manager(objects))[0])
        for name in names:
            build[name].append(_timed(lambda: (structures[name].rebuild(boxes), structures[name].prepare()))[0])

    # --- step: 10 % move with constant velocities, interleaved
    moved = np.sort(rng.choice(n, n // 10, replace=False))
    size = float(np.mean(boxes[:, 3:] - boxes[:, :3]))
    velocity = rng.normal(0.0, 0.25 * size, (moved.size, 3))
    current = boxes.copy()
    centres = 0.5 * (boxes[:, :3] + boxes[:, 3:])
    step_times = {c: [] for c in ["coal", "coal py"] + names}
    for r in range(step_rounds):
        current[moved] += np.hstack([velocity, velocity])
        centres[moved] += velocity
        start = time.perf_counter()
        for i in moved.tolist():
            objects[i].setTranslation(centres[i])
            objects[i].computeAABB()
        python_part = time.perf_counter() - start
        t, k = _timed(lambda: (manager.update(), coal_pairs(manager, n))[1])
        step_times["coal py"].append(python_part)
        step_times["coal"].append(t)
        for name in names[r % len(names):] + names[: r % len(names)]:
            t, got = _timed(lambda: (structures[name].update_many(moved, current[moved]), structures[name].pairs())[1])
            assert got.shape[0] == k, (name, got.shape[0], k)
            step_times[name].append(t)
    return dict(n=n, expected=expected, fcl_count=fcl_count, fcl_readme_count=fcl_readme_count, times=times,
                build=build, step=step_times, memory=memory, coal_memory=coal_memory)


def _ratio(mine, theirs):
    m = min(len(mine), len(theirs))
    return float(np.median(np.array(mine[:m]) / np.array(theirs[:m])))


def report(result, names):
    n = result["n"]
    times, build, step = result["times"], result["build"], result["step"]
    med = {c: float(np.median(v)) for c, v in times.items() if v}
    fcl_text = ""
    if "fcl" in med:
        fcl_text = (f", python-fcl {med['fcl'] * 1e3:.1f} ms with a collecting Python callback ({result['fcl_count']} "
                    f"pairs), {med['fcl readme'] * 1e3:.1f} ms with its README recipe (default callback + narrow "
                    f"phase, {result['fcl_readme_count']} pairs)")
    print(f"N={n}: {result['expected']} pairs; coal all-pairs {med['coal'] * 1e3:.2f} ms{fcl_text}; "
          f"coal build {np.median(build['coal']) * 1e3:.1f} ms; coal step {np.median(step['coal']) * 1e3:.2f} ms "
          f"+ {np.median(step['coal py']) * 1e3:.2f} ms of per-object Python calls; coal tree "
          f"{result['coal_memory']:.0f} B/object (RSS)")
    print(f"  {'structure':18s} {'pairs ms':>9s} {'/coal':>6s} {'fcl/us':>7s} {'fclR/us':>7s} {'build ms':>9s} "
          f"{'/coal':>6s} {'step ms':>8s} {'/coal':>6s} {'/coal+py':>8s} {'B/obj':>6s}")
    rows = []
    for name in names:
        pairs_ratio = _ratio(times[name], times["coal"])
        fcl_ratio = 1.0 / _ratio(times[name], times["fcl"]) if "fcl" in med else np.nan
        fcl_readme_ratio = 1.0 / _ratio(times[name], times["fcl readme"]) if "fcl" in med else np.nan
        build_ratio = _ratio(build[name], build["coal"])
        step_ratio = _ratio(step[name], step["coal"])
        step_total = [a + b for a, b in zip(step["coal"], step["coal py"])]
        step_ratio_py = _ratio(step[name], step_total)
        row = dict(n=n, name=name, pairs=med[name], pairs_ratio=pairs_ratio, fcl_ratio=fcl_ratio,
                   fcl_readme_ratio=fcl_readme_ratio, fcl_readme=med.get("fcl readme", np.nan),
                   build=float(np.median(build[name])), build_ratio=build_ratio, step=float(np.median(step[name])),
                   step_ratio=step_ratio, step_ratio_py=step_ratio_py, memory=result["memory"][name],
                   coal=med["coal"], fcl=med.get("fcl", np.nan), coal_step=float(np.median(step["coal"])))
        rows.append(row)
        print(f"  {name:18s} {row['pairs'] * 1e3:9.2f} {pairs_ratio:6.2f} {fcl_ratio:7.1f} {fcl_readme_ratio:7.1f} "
              f"{row['build'] * 1e3:9.2f} "
              f"{build_ratio:6.2f} {row['step'] * 1e3:8.2f} {step_ratio:6.2f} {step_ratio_py:8.2f} "
              f"{row['memory']:6.0f}", flush=True)
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    names = list(dict.fromkeys(r["name"] for r in rows))
    for name in names:
        sel = [r for r in rows if r["name"] == name]
        note = " (pairs() reads its persistent set)" if name == "incremental_sap" else ""
        ax.loglog([r["n"] for r in sel], [r["pairs"] * 1e3 for r in sel], "o-", label=f"touche {name}{note}")
        ax2.loglog([r["n"] for r in sel], [r["step"] * 1e3 for r in sel], "o-", label=f"touche {name}")
    by_n = {r["n"]: r for r in rows}
    ns = sorted(by_n)
    ax.loglog(ns, [by_n[n]["coal"] * 1e3 for n in ns], "k--s", lw=2, label="coal DynamicAABBTree (C++ collector)")
    fcl_ns = [n for n in ns if np.isfinite(by_n[n]["fcl"])]
    ax.loglog(fcl_ns, [by_n[n]["fcl"] * 1e3 for n in fcl_ns], "k:^", lw=2,
              label="python-fcl (collecting Python callback)")
    ax.loglog(fcl_ns, [by_n[n]["fcl_readme"] * 1e3 for n in fcl_ns], "k-.v", lw=2,
              label="python-fcl (README recipe: default callback + narrow phase)")
    ax2.loglog(ns, [by_n[n]["coal_step"] * 1e3 for n in ns], "k--s", lw=2, label="coal update() + collide")
    ax.set_title("all overlapping pairs (~2 per box)")
    ax2.set_title("step: 10 % of the boxes move, then all pairs")
    for a in (ax, ax2):
        a.set_xlabel("boxes N")
        a.set_ylabel("ms (median of interleaved rounds)")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("touche broad phase vs coal / python-fcl (same process, same boxes; 2-core shared machine)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 1e3 and 1e4 only")
    parser.add_argument("--sizes", type=str, default=None, help="comma-separated N (overrides --quick)")
    parser.add_argument("--structures", type=str, default=None, help="comma-separated names (default: all)")
    parser.add_argument("--fcl-max", type=int, default=100_000, help="largest N given to python-fcl")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    names = list(STRUCTURES) if not args.structures else args.structures.split(",")
    print(f"start: {_load()}; 2 cores shared with other jobs; ratios = median over rounds of touche / peer")
    rng = np.random.default_rng(7)
    rows = []
    for n in sizes:
        rounds = 31 if n <= 1_000 else (15 if n <= 10_000 else 7)
        result = run_size(n, rounds, rounds, args.fcl_max, names, rng)
        rows += report(result, names)
        print(f"  ({_load()})", flush=True)
    if not args.no_plot and len(sizes) > 1:
        plot(rows, Path(__file__).resolve().parent / "broadphase_scaling.png")
    return rows


if __name__ == "__main__":
    main()
