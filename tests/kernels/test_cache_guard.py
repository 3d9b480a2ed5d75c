"""The numba cache guard drops the cached kernels of every module whose source, or the source of a
kernel module it imports, changed -- and only those."""
import json

import pytest

import touche._kernels as kernels


def test_stale_cache_files_are_dropped_and_stamp_written(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / "pairs.pair_distance-1.py311.nbi"
    stale.write_text("stale")
    foreign = cache / "someone_else.f-1.py311.nbi"  # not one of our modules: left alone
    foreign.write_text("keep")
    monkeypatch.setattr(kernels, "_cache_dirs", lambda: [cache])
    kernels._drop_stale_cache()
    assert not stale.exists()
    assert foreign.exists()
    assert json.loads((cache / kernels._STAMP_NAME).read_text()) == kernels._module_digests()
    # same sources again: nothing is dropped
    fresh = cache / "pairs.pair_distance-1.py311.nbc"
    fresh.write_text("fresh")
    kernels._drop_stale_cache()
    assert fresh.exists()


def test_a_change_drops_the_module_and_its_importers_only(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(kernels, "_cache_dirs", lambda: [cache])
    kernels._drop_stale_cache()
    sources = kernels._module_sources()
    # vec is imported (directly or not) by pairs; planar 2D SAT does not reach pairs
    assert b"from touche._kernels.base.vec import" in sources["closest"]
    edited = dict(sources, vec=sources["vec"] + b"\n# edited\n")
    monkeypatch.setattr(kernels, "_module_sources", lambda: edited)
    files = {name: cache / f"{name}.f-1.py311.nbi" for name in ("vec", "closest", "pairs", "sat2d", "kinds")}
    for path in files.values():
        path.write_text("x")
    kernels._drop_stale_cache()
    assert not files["vec"].exists() and not files["closest"].exists() and not files["pairs"].exists()
    assert files["kinds"].exists()  # vec does not import kinds: kinds is unaffected
    # sat2d reaches kinds but not vec: kept
    assert files["sat2d"].exists()


# ------------------------------------------------------------------------------------------------
# the persistent per-user cache (touche/_kernels/base/jit.py): folders keyed by content
import os
import shutil
import subprocess
import sys
from pathlib import Path

from touche._kernels import jit

_QUERY = """
import sys
from touche._warmup import CompileLog
import touche as tc
with CompileLog() as log:
    hit = tc.intersects(tc.Sphere(1.0), tc.Pose.from_translation([1.5, 0, 0]), tc.Sphere(1.0), None)
print(hit, log.count, tc.__file__)
"""


def _run_query(package_parent, cache, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "TOUCHE_PERSISTENT_CACHE")}
    env.update(TOUCHE_CACHE_DIR=str(cache), PYTHONPATH=str(package_parent), **(extra_env or {}))
    done = subprocess.run([sys.executable, "-c", _QUERY], env=env, capture_output=True, text=True, timeout=600,
                          cwd=str(package_parent))
    assert done.returncode == 0, done.stderr
    hit, count, where = done.stdout.split()
    assert Path(where).resolve().is_relative_to(Path(package_parent).resolve())
    return hit == "True", int(count)


@pytest.mark.slow
def test_persistent_cache_serves_identical_sources_anywhere_and_never_stale_code(tmp_path):
    cache = tmp_path / "cache"
    source = Path(jit.__file__).resolve().parents[2]
    first, second = tmp_path / "first", tmp_path / "second"
    for clone in (first, second):
        shutil.copytree(source, clone / "touche", ignore=shutil.ignore_patterns("__pycache__"))
    hit, compiled = _run_query(first, cache)
    assert hit and compiled > 0
    assert any(cache.glob("kernels-numba*/batch-*/*.nbi"))
    # a second copy of the same sources elsewhere: everything comes from the cache
    assert _run_query(second, cache) == (True, 0)
    # an edit that changes the answer: a new folder for the module, never the old code
    batch = second / "touche" / "_kernels" / "narrow" / "batch.py"
    text = batch.read_text()
    entry = "return 1 if point_core_overlap(pta, _point_core_radius(pa), ta, ptb, _point_core_radius(pb), tb) else 0"  # the query's kernel
    assert entry in text
    batch.write_text(text.replace(entry, entry.replace("return 1 if", "return 0 if").replace("else 0", "else 1"), 1))
    hit, compiled = _run_query(second, cache)
    assert not hit and compiled > 0
    # NUMBA_CACHE_DIR wins: the per-user folder gets nothing new
    before = sorted(cache.rglob("*"))
    _run_query(first, cache, {"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    assert sorted(cache.rglob("*")) == before


def test_persistent_cache_root_follows_the_environment(monkeypatch, tmp_path):
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("TOUCHE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TOUCHE_PERSISTENT_CACHE", raising=False)
    assert jit.persistent_cache_root().parent == tmp_path
    monkeypatch.setenv("TOUCHE_PERSISTENT_CACHE", "0")
    assert jit.persistent_cache_root() is None
    monkeypatch.delenv("TOUCHE_PERSISTENT_CACHE")
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba"))
    assert jit.persistent_cache_root() is None


def test_a_first_query_leaves_scipy_linalg_unimported_and_blas_calls_still_work():
    # numba's arraymath probes for BLAS by importing scipy.linalg (~0.17 s of a first query);
    # touche's njit defers that. A kernel calling BLAS (a matmul of two 3x3 arrays) must still
    # find scipy's functions when it first runs, in a process where scipy.linalg is not loaded.
    code = (
        "import sys, numpy as np, touche as tc\n"
        "tc.distance(tc.Sphere(1.0), tc.Pose.from_translation([3, 0, 0]), tc.Sphere(1.0), None)\n"
        "assert 'scipy.linalg' not in sys.modules, 'scipy.linalg imported by a first query'\n"
        "import numba.np.arraymath as arraymath\n"
        "assert arraymath._HAVE_BLAS\n"
        "from touche._kernels.primitives import bounding_obb\n"
        "axes = np.eye(3)[[2, 0, 1]].copy(); w = np.array([0.3, -0.2, 0.1])\n"
        "got = bounding_obb._rotated(axes, w)\n"
        "assert 'scipy.linalg' in sys.modules, 'the BLAS call did not load scipy'\n"
        "from scipy.spatial.transform import Rotation\n"
        "expected = axes @ Rotation.from_rotvec(w).as_matrix().T\n"
        "assert np.allclose(got, expected, atol=1e-12), (got, expected)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_kernels_make_their_cache_on_first_use_only():
    import gc

    from touche._kernels.narrow import batch  # noqa: F401  (makes ~300 dispatchers)
    from touche._kernels.base.jit import KernelDispatcher

    # touche's own kernels (tests may make uncached kernels of their own in this process)
    dispatchers = [obj for obj in gc.get_objects()
                   if isinstance(obj, KernelDispatcher) and obj.py_func.__module__.startswith("touche.")]
    assert len(dispatchers) > 100
    assert all(isinstance(d._cache, jit._CacheOnFirstUse) for d in dispatchers)
    unused = [d for d in dispatchers if not d.signatures]
    assert unused and all(d._cache._cache is None for d in unused)
    used = [d for d in dispatchers if d.signatures]
    assert all(d._cache._cache is not None for d in used)
