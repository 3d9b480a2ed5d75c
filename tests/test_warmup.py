"""warmup() is complete: after it, the whole public surface runs without compiling a kernel.

The walk (tests/surface_walk.py) is written independently of warmup's steps: every verb on every
pair of shape kinds in both orders, every pose form, every motion class, every module and the
command line, with the input variants users pass (lists, int / float32 / read-only / Fortran /
sliced arrays). warmup() compiles from a handful of representative calls; numba's compile events
(a load from the on-disk cache is not one) count what the walk still had to compile. A kernel or
a specialization that warmup misses fails this test, naming it. In a suite run the walk runs in
its own process on a copy of the cache taken right after the session's warmup (conftest.py):
the shared cache soon holds what other tests compiled, which used to hide warmup's gaps (a
bvh.distance batch of one, the 2D hull of flat points: found by running this test alone).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import touche
from touche import _parallel, _warmup

import surface_walk

# set by conftest.py after the session's warmup: a copy of the kernel cache as warmup left it
WARMUP_SNAPSHOT_VARIABLE = "TOUCHE_TEST_WARMUP_SNAPSHOT"


_WALK_AFTER_SNAPSHOT = """
import json, sys
sys.path[:0] = sys.argv[1:]
from touche import _warmup
import surface_walk
with _warmup.CompileLog() as log:
    surface_walk.walk()
print(json.dumps([log.count, sorted({f"{name}{args}" for name, _, args in log.entries})]))
"""


@pytest.mark.slow
def test_warmup_is_complete_nothing_compiles_after_it():
    snapshot = os.environ.get(WARMUP_SNAPSHOT_VARIABLE)
    if snapshot is None:  # no session warmup (TOUCHE_TEST_WARMUP=0): warm up here, walk here
        touche.warmup(progress=False)
        with _warmup.CompileLog() as log:
            surface_walk.walk()
        count, compiled = log.count, sorted({f"{name}{args}" for name, _, args in log.entries})
    else:
        # the walk in a process whose cache is the session warmup's output alone (conftest): the
        # shared cache also holds what the other workers' tests compiled meanwhile
        tests = os.path.dirname(os.path.abspath(__file__))
        paths = [tests, os.path.join(os.path.dirname(tests), "benchmarks"), os.path.join(tests, "kernels")]
        variable, _, folder = snapshot.partition("=")
        env = dict(os.environ, **{variable: folder})
        done = subprocess.run([sys.executable, "-c", _WALK_AFTER_SNAPSHOT, *paths], env=env, capture_output=True,
                              text=True, timeout=1800)
        assert done.returncode == 0, done.stderr[-4000:]
        count, compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert count == 0, f"{count} compilations after warmup(), e.g.:\n" + "\n".join(compiled[:40])


def test_compile_log_sees_a_new_compilation():
    """The check above can fail: a kernel never compiled before is counted with its time."""
    from numba import njit

    @njit(cache=False)
    def fresh(x):
        return x + 1.0

    with _warmup.CompileLog() as log:
        fresh(1.0)
        fresh(2.0)  # the same specialization: not compiled again
    assert log.count == 1
    name, seconds, args = log.entries[0]
    assert name.endswith("fresh") and seconds > 0.0 and "float64" in args


@pytest.mark.slow
def test_warmup_in_worker_processes_reports_every_step(capsys):
    seconds = _warmup.run(jobs=2, progress=True, steps=[len(_warmup.STEPS) - 1, len(_warmup.STEPS) - 2])
    assert set(seconds) == {_warmup.STEPS[-1][0], _warmup.STEPS[-2][0]}
    err = capsys.readouterr().err
    assert "kernels ready" in err  # not a terminal: a start line and an end line


@pytest.mark.slow
def test_a_worker_past_its_memory_limit_hands_over_to_a_fresh_one(monkeypatch):
    """With a 1 MB limit every worker retires after each step: each step still runs once, in a
    worker started for it (jobs at first, then one more per retirement while steps remain)."""
    started = []
    popen = subprocess.Popen

    def counting_popen(*args, **kwargs):
        started.append(args[0])
        return popen(*args, **kwargs)

    monkeypatch.setenv("TOUCHE_WARMUP_RETIRE_MB", "1")
    monkeypatch.setattr(_warmup.subprocess, "Popen", counting_popen)
    chosen = list(range(len(_warmup.STEPS) - 4, len(_warmup.STEPS)))
    seconds = _warmup.run(jobs=2, progress=False, steps=chosen)
    assert set(seconds) == {_warmup.STEPS[index][0] for index in chosen}
    # 2 at first, then a fresh one per retirement while steps were left: at least one for each of
    # the 2 steps the first workers did not take, at most one per retirement
    assert len(chosen) <= len(started) <= 2 + len(chosen)
    assert 0 < _warmup.resident_megabytes() < 1e6


def test_steps_wait_for_the_engines_and_never_share_kernels_with_a_running_step():
    index = {name: i for i, (name, _) in enumerate(_warmup.STEPS)}
    everything = set(range(len(_warmup.STEPS)))
    engines = set(range(_warmup.ENGINE_STEPS))
    single = index["distance / intersects: the pair engine, single pairs"]
    assert not _warmup._ready(single, set(), everything)  # the engines are not compiled yet
    assert _warmup._ready(single, engines, everything)
    assert _warmup._ready(index["touche.bvh and mesh queries"], set(), everything)  # needs no engine
    for group in _warmup.SHARED_KERNELS:
        first, *others = sorted(index[name] for name in group)  # every name is a step
        for other in others:
            assert not _warmup._ready(other, engines, everything, running={first})
            assert _warmup._ready(other, engines | {first}, everything, running=set())


def test_warmup_rejects_bad_jobs():
    with pytest.raises(ValueError):
        touche.warmup(jobs=0, progress=False)


@pytest.mark.slow
def test_warmup_command_line():
    done = subprocess.run([sys.executable, "-m", "touche.cli", "warmup", "--jobs", "1"], capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    assert "compiled / loaded" in done.stdout
    assert "kernels ready" in done.stderr


def test_parallel_run_covers_every_item_once_and_propagates_errors():
    seen = np.zeros(10_000, dtype=np.int64)

    def mark(out, lo, hi):
        out[lo:hi] += 1

    for threads in (1, 2, 3):
        _parallel.set_num_threads(threads)
        try:
            seen[:] = 0
            _parallel.run(mark, len(seen), seen, grain=7)
            assert (seen == 1).all()
        finally:
            _parallel.set_num_threads(_parallel._default_threads())

    def fail(lo, hi):
        if lo > 0:
            raise RuntimeError("chunk failed")

    _parallel.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError, match="chunk failed"):
            _parallel.run(fail, 1000, grain=10)
    finally:
        _parallel.set_num_threads(_parallel._default_threads())
    with pytest.raises(ValueError):
        _parallel.set_num_threads(0)
