"""Threads: what the locks cost, how queries scale with threads, and fresh-process first-use runs.

    python benchmarks/bench_threads.py [--runs 11]

Prints, for issue 23's concurrency contract (README "Threads and processes"):
1. the read-write lock on a broad-phase query and on a world query: one call through the public
   (locked) method vs the same work without the lock, median of many calls, in microseconds;
2. queries per second from 1, 2, 4 and 8 threads on one shared world (``world.query``) and one
   shared DynamicAABBTree (``query_aabb``), with the answers checked against a serial run;
3. the soak of finding 7: ``--runs`` fresh interpreters whose first queries come from 8 threads
   at once (imports, kernel loads and tree builds racing): runs with an error.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import touche as tc  # noqa: E402
from touche.broadphase import DynamicAABBTree  # noqa: E402


def median_us(call, repeat=2000):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return 1e6 * float(np.median(times))


def world_and_probes(n=2000, probes=64, seed=0):
    rng = np.random.default_rng(seed)
    world = tc.CollisionWorld()
    shapes = [tc.Sphere(0.3), tc.Box([0.5, 0.4, 0.3]), tc.Capsule(0.2, 0.6)]
    for i in range(n):
        world.add(shapes[i % 3], tc.Pose.from_rotvec(rng.normal(size=3), rng.uniform(0, 20, 3)))
    poses = np.tile(np.eye(4), (probes, 1, 1))
    poses[:, :3, 3] = rng.uniform(0, 20, (probes, 3))
    return world, poses


def lock_overhead():
    rng = np.random.default_rng(1)
    centers = rng.uniform(0, 20, (2000, 3))
    tree = DynamicAABBTree()
    tree.rebuild(np.hstack([centers - 0.3, centers + 0.3]))
    box = np.array([5.0, 5.0, 5.0, 6.0, 6.0, 6.0])
    tree.query_aabb(box)

    from touche.broadphase.base import _kcommon, as_box

    def unlocked():  # query_aabb's own steps, without the lock
        q = as_box(box)
        slots, count = tree._query_box_slots(q)
        return _kcommon().finalize_ids(slots, count, tree._ids)

    locked = median_us(lambda: tree.query_aabb(box))
    bare = median_us(unlocked)
    print(f"DynamicAABBTree.query_aabb (2000 boxes): {locked:.2f} us locked, {bare:.2f} us without the lock "
          f"(+{locked - bare:.2f} us)")
    world, poses = world_and_probes()
    probe = tc.Sphere(0.8)
    world.query(probe, poses[0])
    locked = median_us(lambda: world.query(probe, poses[0]), 500)
    bare = median_us(lambda: world._query_locked(probe, poses[0], (1 << 63) - 1), 500)
    print(f"CollisionWorld.query (2000 objects): {locked:.2f} us locked, {bare:.2f} us without the lock "
          f"(+{locked - bare:.2f} us)")


def scaling(seconds=2.0):
    world, poses = world_and_probes()
    probe = tc.Sphere(0.8)
    expected = [world.query(probe, p).tolist() for p in poses]
    tree = world._broad
    boxes = np.hstack([poses[:, :3, 3] - 1.0, poses[:, :3, 3] + 1.0])
    expected_boxes = [tree.query_aabb(b).tolist() for b in boxes]
    for name, call, answers in (("world.query", lambda k: world.query(probe, poses[k]).tolist(), expected),
                                ("DynamicAABBTree.query_aabb", lambda k: tree.query_aabb(boxes[k]).tolist(),
                                 expected_boxes)):
        line = []
        for threads in (1, 2, 4, 8):
            counts, wrong, stop = [0] * threads, [0], time.perf_counter() + seconds

            def work(t):
                k = t
                while time.perf_counter() < stop:
                    if call(k % len(poses)) != answers[k % len(poses)]:
                        wrong[0] += 1
                    counts[t] += 1
                    k += threads

            pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
            for thread in pool:
                thread.start()
            for thread in pool:
                thread.join()
            line.append(f"{threads} thr {sum(counts) / seconds:,.0f}/s ({wrong[0]} wrong)")
        print(f"{name}: " + "; ".join(line))


FIRST_USE = textwrap.dedent('''
    import threading
    import numpy as np
    import touche as tc
    rng = np.random.default_rng(0)
    box, sphere = tc.Box([1.0, 1.0, 1.0]), tc.Sphere(0.5)
    mesh = tc.TriangleMesh(rng.normal(size=(200, 3)), rng.integers(0, 200, size=(300, 3)))
    poses = tc.Pose.random(64, scale=2.0, seed=1)
    tasks = [lambda: tc.distance(box, poses, sphere, None), lambda: tc.intersects(box, poses, sphere, None),
             lambda: tc.contacts(box, poses[0], box, None), lambda: tc.closest_point(box, None, np.zeros((4, 3))),
             lambda: tc.raycast(box, None, np.array([[0.0, 0.0, 3.0]]), [0.0, 0.0, -1.0]),
             lambda: tc.distance(mesh, None, sphere, poses), lambda: tc.bvh.intersects(mesh, None, mesh, poses),
             lambda: tc.time_of_impact(box, tc.Linear([-1, 0, 0], tc.Pose.from_translation([3, 0, 0])), box,
                                       tc.Static(), t_max=5.0)]
    barrier, errors = threading.Barrier(8), []
    def run(k):
        barrier.wait()
        try:
            tasks[k]()
        except BaseException as e:
            errors.append(type(e).__name__)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(len(errors))
''')


def first_use(runs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    failed, seconds = 0, []
    for _ in range(runs):
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", FIRST_USE], env=env, capture_output=True, text=True, timeout=600)
        seconds.append(time.perf_counter() - t)
        if done.returncode != 0 or done.stdout.strip() != "0":
            failed += 1
    print(f"fresh process, first queries from 8 threads: {failed} of {runs} runs with an error "
          f"(median {np.median(seconds):.2f} s per run, kernels from the cache)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}, touche threads per batch: {tc.get_num_threads()}")
    lock_overhead()
    scaling()
    first_use(args.runs)


if __name__ == "__main__":
    main()
