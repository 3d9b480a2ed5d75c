"""A batch call against the same queries as single calls, and the batch with and without the
serial start of touche._parallel.run (PARALLEL_SECONDS; 0 = everything to the pool at once, the
behaviour before the rule), in one process, alternating, best of rounds.

    python benchmarks/bench_batch_vs_loop.py [--rounds 7] [--busy 2]

``--busy N`` starts N CPU-bound processes beside the measurement (a busy robot computer or CI
box); 0 measures an idle machine. Microseconds per query; "batch / loop" below 1 means the batch
wins.
"""
import argparse
import multiprocessing
import time

import numpy as np

import touche as tc
from touche import _parallel
from touche.cli import _uv_sphere


def _spin(stop):
    x = 0
    while not stop.is_set():
        x += 1


def _best(fn, rounds, repeat):
    best = np.inf
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - started) / repeat)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--busy", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    box = tc.Box([1.0, 1.0, 1.0])
    vertices, faces = _uv_sphere(5000)
    mesh = tc.TriangleMesh(vertices, faces)
    cases = []
    for n in (8, 24, 200, 2000):
        poses = tc.Pose.random(n, scale=2.0, seed=int(rng.integers(1 << 30))).matrix
        cases.append((f"box-box distance, {n}", tc.distance, box, box, poses))
        far = poses.copy()
        far[:, 0, 3] += 3.0
        cases.append((f"mesh-mesh intersects (far), {n}", tc.intersects, mesh, mesh, far))
        if n <= 200:  # expensive items: surfaces 0-2 % of the size apart (a tree descent to the leaves)
            near = poses.copy()
            direction = rng.normal(size=(n, 3))
            near[:, :3, 3] = direction / np.linalg.norm(direction, axis=1, keepdims=True) * rng.uniform(2.0, 2.04, (n, 1))
            cases.append((f"mesh-mesh distance (near), {n}", tc.distance, mesh, mesh, near))
    for _, verb, a, b, poses in cases:  # compile / load, build trees
        verb(a, None, b, poses)
        verb(a, None, b, poses[0])
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for process in spinners:
        process.start()
    try:
        print(f"{args.busy} busy processes beside; threads {_parallel.get_num_threads()}; us per query, best of {args.rounds}")
        print("| batch | loop of single calls | batch, serial start | batch, pool at once | batch / loop | serial start / pool at once |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, verb, a, b, poses in cases:
            n = len(poses)
            repeat = max(1, 2000 // n)
            loop = _best(lambda: [verb(a, None, b, pose) for pose in poses], args.rounds, max(1, repeat // 4)) / n
            timings = {}
            for _ in range(args.rounds):  # alternate the two settings
                for setting in (_parallel.PARALLEL_SECONDS, 0.0):
                    saved = _parallel.PARALLEL_SECONDS
                    _parallel.PARALLEL_SECONDS = setting
                    try:
                        value = _best(lambda: verb(a, None, b, poses), 1, repeat) / n
                    finally:
                        _parallel.PARALLEL_SECONDS = saved
                    timings[setting] = min(timings.get(setting, np.inf), value)
            serial, pooled = timings[_parallel.PARALLEL_SECONDS], timings[0.0]
            print(f"| {name} | {loop * 1e6:.2f} | {serial * 1e6:.2f} | {pooled * 1e6:.2f} | {serial / loop:.2f} | {serial / pooled:.2f} |")
    finally:
        stop.set()
        for process in spinners:
            process.join()


if __name__ == "__main__":
    main()
