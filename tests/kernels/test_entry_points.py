"""Kernels compiled for jitted callers only (touche._kernels.base.jit.KERNEL_CALLERS_ONLY): no
Python entry point is compiled for them; a later call from Python compiles one (never calls a
missing entry), and the cache keeps the two apart across processes."""
import os
import subprocess
import sys

import pytest

_MODULE = '''
from touche._kernels.base.jit import njit


@njit(cache=True)
def helper(x, scale):
    return x * scale + 1.0


@njit(cache=True)
def caller(x):
    return helper(x, 2.0) + helper(x + 1.0, 3.0)
'''

_RUN = '''
import sys
from touche._kernels.base import jit
from touche._warmup import CompileLog
from entrymod import caller, helper
order = sys.argv[1]
counts = []


def helper_entry():  # "absent": helper not loaded (a cached caller holds its code, linked in)
    compiled = list(helper.overloads.values())
    return jit._has_python_entry(compiled[0]) if compiled else "absent"


with CompileLog() as log:
    if order == "caller-first":
        value = caller(2.0)
        counts.append(len(log.entries))
        entry_before = helper_entry()
        direct = helper(2.0, 2.0)  # a Python call: compiles (or loads) the entry point
    else:
        direct = helper(2.0, 2.0)
        counts.append(len(log.entries))
        entry_before = helper_entry()
        value = caller(2.0)
    counts.append(len(log.entries))
    again = helper(5.0, 2.0), caller(3.0)
    counts.append(len(log.entries))
print(value, direct, again[0], again[1], entry_before, helper_entry(), *counts)
'''


def _run(folder, cache, order, **env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("TOUCHE_ALL_ENTRY_POINTS", "TOUCHE_SEPARATE_KERNELS")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(folder)] + sys.path), **env_extra)
    done = subprocess.run([sys.executable, "-c", _RUN, order], env=env, capture_output=True, text=True, timeout=600,
                          cwd=str(folder))
    assert done.returncode == 0, done.stderr  # a missing entry point called from Python would crash
    value, direct, again_helper, again_caller, entry_before, entry_after, *counts = done.stdout.split()
    return ((float(value), float(direct), float(again_helper), float(again_caller)),
            {"True": True, "False": False}.get(entry_before, entry_before), entry_after == "True", [int(c) for c in counts])


EXPECTED = (2.0 * 2.0 + 1.0 + 3.0 * 3.0 + 1.0, 2.0 * 2.0 + 1.0, 5.0 * 2.0 + 1.0, 3.0 * 2.0 + 1.0 + 4.0 * 3.0 + 1.0)


@pytest.mark.parametrize("separate", ["0", "1"])
def test_a_kernel_compiled_for_a_caller_gets_its_entry_point_when_python_calls_it(tmp_path, separate):
    # separate="1": helper is called by name (jit.SEPARATE_MIN_LINES = 1), so a cached caller
    # loads helper's own cache entry, the one without an entry point, before it loads
    (tmp_path / "entrymod.py").write_text(_MODULE)
    cache = tmp_path / "cache"
    values, entry_before, entry_after, counts = _run(tmp_path, cache, "caller-first", TOUCHE_SEPARATE_KERNELS=separate)
    assert values == pytest.approx(EXPECTED, rel=1e-15)
    assert not entry_before  # compiled while typing caller: no Python entry
    assert entry_after  # the call from Python compiled it again, whole
    assert counts == [2, 3, 3]  # caller + helper, then helper's entry once, then nothing

    # a fresh process on that cache: everything loads (helper's code is linked into the cached
    # caller, so helper itself is not loaded until Python calls it: then its full entry loads)
    values2, entry_before2, entry_after2, counts2 = _run(tmp_path, cache, "caller-first", TOUCHE_SEPARATE_KERNELS=separate)
    assert values2 == values and (entry_before2, entry_after2) == ("absent" if separate == "0" else False, True)
    assert counts2 == [0, 0, 0]
    # the other order on the same cache: Python's call loads the full one, the caller is loaded
    values3, entry_before3, entry_after3, counts3 = _run(tmp_path, cache, "helper-first", TOUCHE_SEPARATE_KERNELS=separate)
    assert values3 == values and entry_before3 and entry_after3 and counts3 == [0, 0, 0]


def test_a_kernel_compiled_for_python_first_serves_its_callers_without_a_second_compile(tmp_path):
    (tmp_path / "entrymod.py").write_text(_MODULE)
    values, entry_before, entry_after, counts = _run(tmp_path, tmp_path / "cache", "helper-first")
    assert values == pytest.approx(EXPECTED, rel=1e-15)
    assert entry_before and entry_after and counts == [1, 2, 2]


def test_all_entry_points_setting_compiles_numbas_way(tmp_path):
    (tmp_path / "entrymod.py").write_text(_MODULE)
    values, entry_before, entry_after, counts = _run(tmp_path, tmp_path / "cache", "caller-first",
                                                     TOUCHE_ALL_ENTRY_POINTS="1")
    assert values == pytest.approx(EXPECTED, rel=1e-15)
    assert entry_before and entry_after and counts == [2, 2, 2]


_THREADS = '''
import threading
from entrymod import caller, helper
results, errors = [], []
barrier = threading.Barrier(2)


def run(function, args):
    try:
        barrier.wait()
        results.append((function.__name__, function(*args)))
    except Exception as error:  # reported, not swallowed
        errors.append(repr(error))


threads = [threading.Thread(target=run, args=(caller, (2.0,))), threading.Thread(target=run, args=(helper, (2.0, 2.0)))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(sorted(results), errors)
'''


def test_python_and_kernel_callers_compiling_at_once_from_two_threads(tmp_path):
    # one thread types caller (helper compiled for kernel callers) while the other calls helper
    # from Python: the Python call must get an entry point, whatever the interleaving
    (tmp_path / "entrymod.py").write_text(_MODULE)
    env = {k: v for k, v in os.environ.items() if k not in ("TOUCHE_ALL_ENTRY_POINTS", "TOUCHE_SEPARATE_KERNELS")}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    for attempt in range(3):
        env["NUMBA_CACHE_DIR"] = str(tmp_path / f"cache{attempt}")
        done = subprocess.run([sys.executable, "-c", _THREADS], env=env, capture_output=True, text=True, timeout=600,
                              cwd=str(tmp_path))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[('caller', 15.0), ('helper', 5.0)] []"
