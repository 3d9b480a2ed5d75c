"""Processes and numba threading layers (issue 23 findings 3, 4, 7; README "Threads and
processes").

touche runs batches on its own Python thread pool (touche._parallel: serial nogil kernels on
chunks), never on numba's parallel runtime, so no OpenMP / TBB / workqueue pool exists to abort
on concurrent entry or to be lost in a forked child. Each scenario runs in a fresh interpreter
(a subprocess; their scripts are below) and prints its findings as JSON:
- every numba threading layer installed (workqueue, omp, tbb; a missing one is skipped, saying
  so): batches from 4 Python threads at once, then in a ``fork`` pool, equal the parent's
  answers, and numba's threading layer was never started;
- a ``spawn`` pool gives the parent's answers;
- 8 threads making the first queries of a fresh process (imports, first kernel loads, first
  tree builds all racing) raise nothing and give the serial answers.
Bounded: ~20-40 s on 2 busy cores once the kernels are compiled.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

COMMON = textwrap.dedent('''
    import hashlib, json, os, sys, threading
    import numpy as np
    import touche as tc

    def answers():
        rng = np.random.default_rng(0)
        poses = tc.Pose.random(3000, scale=1.5, seed=1)
        box, hull = tc.Box([1.0, 0.6, 0.4]), tc.ConvexPolyhedron(rng.normal(size=(20, 3)))
        d = tc.distance(box, poses, hull, None)
        hit = tc.intersects(box, poses, tc.Capsule(0.3, 1.0), None)
        r = tc.raycast(hull, None, rng.uniform(-3, 3, (3000, 3)), rng.normal(size=(3000, 3)), max_t=10.0)
        return [d.distance, d.point_a, hit, r.t]

    def digest(_=None):
        h = hashlib.sha1()
        for a in answers():
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def in_threads(count, job):
        out, errors = [None] * count, []
        def run(k):
            try:
                out[k] = job()
            except BaseException as e:
                errors.append(f"{type(e).__name__}: {e}")
        threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out, errors

    def numba_layer():
        import numba
        try:
            return numba.threading_layer()
        except ValueError:  # "Threading layer is not initialized."
            return None
''')

LAYER_SCRIPT = COMMON + textwrap.dedent('''
    import multiprocessing as mp

    if __name__ == "__main__":
        tc.set_num_threads(4)  # chunks on touche's pool even on a small machine
        reference = digest()
        got, errors = in_threads(4, digest)
        with mp.get_context("fork").Pool(2) as pool:
            forked = pool.map(digest, range(4), chunksize=1)
        print(json.dumps({"threads_equal": all(g == reference for g in got), "errors": errors,
                          "fork_equal": all(f == reference for f in forked), "numba_layer": numba_layer()}))
''')

SPAWN_SCRIPT = COMMON + textwrap.dedent('''
    import multiprocessing as mp

    if __name__ == "__main__":
        reference = digest()
        with mp.get_context("spawn").Pool(2) as pool:
            spawned = pool.map(digest, range(2), chunksize=1)
        print(json.dumps({"spawn_equal": all(s == reference for s in spawned)}))
''')

FIRST_USE_SCRIPT = textwrap.dedent('''
    import hashlib, json, threading
    import numpy as np
    import touche as tc   # nothing compiled or loaded yet: numba is not imported

    rng = np.random.default_rng(0)
    box, sphere = tc.Box([1.0, 1.0, 1.0]), tc.Sphere(0.5)
    verts = rng.normal(size=(200, 3))
    mesh = tc.TriangleMesh(verts, rng.integers(0, 200, size=(300, 3)))
    poses = tc.Pose.random(64, scale=2.0, seed=1)
    start = tc.Pose.from_translation([3.0, 0.0, 0.0])
    tasks = [
        lambda: tc.distance(box, poses, sphere, None).distance,
        lambda: tc.intersects(box, poses, sphere, None),
        lambda: tc.contacts(box, poses[0], box, None).points,
        lambda: tc.closest_point(box, None, np.zeros((4, 3))).point,
        lambda: tc.raycast(box, None, np.array([[0.0, 0.0, 3.0]]), [0.0, 0.0, -1.0]).t,
        lambda: tc.distance(mesh, None, sphere, poses).distance,
        lambda: np.asarray(tc.bvh.intersects(mesh, None, mesh, poses)),
        lambda: np.asarray(tc.time_of_impact(box, tc.Linear([-1, 0, 0], start), box, tc.Static(), t_max=5.0).time),
    ]
    barrier = threading.Barrier(8)
    results, errors = [None] * 8, []
    def run(k):
        barrier.wait()
        try:
            results[k] = np.asarray(tasks[k]()).tobytes()
        except BaseException as e:
            errors.append(f"{k}: {type(e).__name__}: {e}")
    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    serial = [np.asarray(task()).tobytes() for task in tasks]
    print(json.dumps({"errors": errors, "equal": [r == s for r, s in zip(results, serial)]}))
''')


def run_script(tmp_path, name, script, timeout=300, **env):
    path = tmp_path / f"{name}.py"
    path.write_text(script)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **env)
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=environment, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def layer_installed(layer):
    module = {"tbb": "numba.np.ufunc.tbbpool", "omp": "numba.np.ufunc.omppool",
              "workqueue": "numba.np.ufunc.workqueue"}[layer]
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    return done.returncode == 0, (done.stderr.strip().splitlines() or ["?"])[-1]


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["workqueue", "omp", "tbb"])
def test_threads_and_fork_under_each_threading_layer(tmp_path, layer):
    installed, why = layer_installed(layer)
    if not installed:
        pytest.skip(f"numba threading layer {layer!r} is not installed here ({why})")
    found = run_script(tmp_path, f"layer_{layer}", LAYER_SCRIPT, NUMBA_THREADING_LAYER=layer)
    assert found == {"threads_equal": True, "errors": [], "fork_equal": True, "numba_layer": None}


@pytest.mark.slow
def test_spawn_pool(tmp_path):
    assert run_script(tmp_path, "spawn", SPAWN_SCRIPT) == {"spawn_equal": True}


@pytest.mark.slow
def test_first_queries_of_a_fresh_process_from_8_threads(tmp_path):
    # issue 23 finding 7: 6 of 11 such runs raised ImportError (partially initialised module) or
    # _DeadlockError while numba and the kernel modules were imported by several threads at once
    for run in range(3):
        found = run_script(tmp_path, f"first_use_{run}", FIRST_USE_SCRIPT)
        assert found == {"errors": [], "equal": [True] * 8}


def test_documented_submodules_on_attribute_access():
    # issue 23 finding 14: `import touche as tc; tc.bvh` raised AttributeError (README documents
    # tc.bvh.build); a fresh interpreter, nothing imported but touche
    script = textwrap.dedent('''
        import json, sys
        import touche as tc
        documented = ["bvh", "broadphase", "bounding", "convex", "lp", "mesh", "meshquery", "pairwise", "planar"]
        found = {name: type(getattr(tc, name)).__name__ for name in documented + ["cli", "report"]}
        try:
            tc.no_such_module
            missing = "no error"
        except AttributeError as error:
            missing = str(error)
        print(json.dumps({"found": found, "bvh_build": callable(tc.bvh.build), "missing": missing}))
    ''')
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(found["found"].values()) == {"module"} and found["bvh_build"]
    assert "no_such_module" in found["missing"]


def test_fork_while_another_thread_changes_a_world(tmp_path):
    # a world being changed by another thread at fork time is refused in the child (it may be
    # half-changed there); a world only being queried at fork time works in the child
    script = textwrap.dedent('''
        import json, os, threading
        import numpy as np
        import touche as tc

        busy, quiet = tc.CollisionWorld(), tc.CollisionWorld()
        for world in (busy, quiet):
            world.add(tc.Sphere(1.0), callback=None)
            world.add(tc.Sphere(1.0), tc.Pose.from_translation([1.5, 0.0, 0.0]))
        inside, release = threading.Event(), threading.Event()

        def hold(event):  # runs inside busy.step(): busy's write lock is held
            inside.set()
            release.wait()

        busy.add(tc.Sphere(1.0), tc.Pose.from_translation([0.0, 1.5, 0.0]), callback=hold)
        reading = threading.Event()

        def read_quiet():  # another thread holds quiet's read lock at fork time
            with quiet._lock.read():
                reading.set()
                release.wait()

        stepper = threading.Thread(target=busy.step, args=(0.0,))
        reader = threading.Thread(target=read_quiet)
        stepper.start()
        reader.start()
        inside.wait()
        reading.wait()
        pid = os.fork()
        if pid == 0:
            found = {}
            try:
                busy.query(tc.Sphere(0.5), None)
                found["busy"] = "answered"
            except tc.ForkedWhileWriting as error:
                found["busy"] = type(error).__name__
            found["quiet"] = quiet.query(tc.Sphere(0.5), None).tolist()
            quiet.add(tc.Sphere(0.1))
            found["quiet_len"] = len(quiet)
            with open("child.json", "w") as out:
                json.dump(found, out)
            os._exit(0)
        release.set()
        stepper.join()
        reader.join()
        _, status = os.waitpid(pid, 0)
        with open("child.json") as f:
            child = json.load(f)
        print(json.dumps({"status": status, "child": child, "parent_after": busy.query(tc.Sphere(0.5), None).tolist()}))
    ''')
    found = run_script(tmp_path, "fork_busy", script, timeout=120)
    assert found == {"status": 0, "child": {"busy": "ForkedWhileWriting", "quiet": [0, 1], "quiet_len": 3},
                     "parent_after": [0, 1, 2]}


def test_fork_while_another_thread_builds_a_cached_value(tmp_path):
    # a shape-derived value (a mesh's tree, hull, ...) being built by another thread at fork time
    # is built again in the child, which neither waits forever for the vanished builder nor
    # deadlocks on the cache's lock
    script = textwrap.dedent('''
        import json, os, threading
        import numpy as np
        from touche._cache import WeakIdentityCache

        cache = WeakIdentityCache()
        key = np.zeros(3)
        building, release = threading.Event(), threading.Event()

        def slow_build():
            building.set()
            release.wait()
            return "parent's value"

        builder = threading.Thread(target=cache.get_or_build, args=(slow_build, key))
        builder.start()
        building.wait()
        pid = os.fork()
        if pid == 0:
            value = cache.get_or_build(lambda: "child's value", key)
            with open("child.json", "w") as out:
                json.dump({"child": value}, out)
            os._exit(0)
        release.set()
        builder.join()
        _, status = os.waitpid(pid, 0)
        with open("child.json") as f:
            child = json.load(f)
        print(json.dumps({"status": status, **child, "parent": cache.get(key)}))
    ''')
    found = run_script(tmp_path, "fork_build", script, timeout=60)
    assert found == {"status": 0, "child": "child's value", "parent": "parent's value"}
