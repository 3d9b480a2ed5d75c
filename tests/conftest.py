"""Test set-up shared by the whole suite.

The HTML report test (tests/test_cli.py) opens the report in headless Chromium. Chromium is not
a Python package: on a fresh Debian machine (CI) the suite installs Debian's ``chromium`` package
itself, once, before any test module is imported (test modules decide at import time whether a
browser exists). It needs root and apt-get; elsewhere, or with TOUCHE_NO_APT=1, nothing is
installed and the browser test is skipped with a message saying how to install it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

# tests/ mirrors the package (tests/kernels, tests/mesh, tests/bvh, ...): the shared helpers
# (naive/, the oracles; coal_adapter, engines, threaded) and benchmarks/ (the mesh panel) are
# imported by name from every folder
_TESTS = os.path.dirname(os.path.abspath(__file__))
# (and the test modules of the kernels folder, which test_properties shares: pytest puts a test's
# folder on the path only once it collects a test there, so a run of one file would miss them)
for _path in (os.path.join(os.path.dirname(_TESTS), "benchmarks"), os.path.join(_TESTS, "kernels"), _TESTS):
    if _path not in sys.path:
        sys.path.insert(0, _path)

CHROMIUM = "/usr/bin/chromium"
APT_TIMEOUT_SECONDS = 1200


def _apt_get(*args):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(
        ["apt-get", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=APT_TIMEOUT_SECONDS, check=False,
    )


def _install_chromium():
    if os.path.exists(CHROMIUM) or os.environ.get("TOUCHE_NO_APT") == "1":
        return
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    print("conftest: installing Debian's chromium for the HTML report test ...", file=sys.stderr)
    done = _apt_get("install", "-y", "-q", "chromium")
    if done.returncode != 0:  # package lists may be missing on a fresh machine
        _apt_get("update", "-q")
        done = _apt_get("install", "-y", "-q", "chromium")
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        print(f"conftest: apt-get install chromium failed: {message[0]}", file=sys.stderr)


WARMUP_SNAPSHOT_VARIABLE = "TOUCHE_TEST_WARMUP_SNAPSHOT"


def _snapshot_kernel_cache():
    """A copy of the compiled kernels as they are now, for a subprocess: ``"VARIABLE=folder"``
    naming the environment variable that points the subprocess at the copy, or None when no
    cache folder was found. Two layouts: touche's per-user cache (``<root>/kernels-numba<v>/
    <module>-<digest>``, the default: the current sources' folders are copied, for
    TOUCHE_CACHE_DIR), or numba's own when NUMBA_CACHE_DIR is set (the files of each kernel
    folder, with the cache guard's stamp, else the copy would be dropped as stale on first use)."""
    import tempfile
    from pathlib import Path

    from numba.core import config
    from numba.core.caching import UserProvidedCacheLocator

    from touche import _kernels
    from touche._kernels.base.jit import persistent_cache_root

    target = Path(tempfile.mkdtemp(prefix="touche-warmup-cache-"))
    copied = 0
    root = persistent_cache_root()
    if root is not None:
        for module in _kernels._PATHS:
            folder = root / f"{module}-{_kernels.module_digest(module)[:20]}"
            if folder.is_dir():
                shutil.copytree(folder, target / root.name / folder.name)
                copied += 1
        variable = "TOUCHE_CACHE_DIR"
    elif config.CACHE_DIR:
        for floor in _kernels._FLOORS:
            source = next(path for path in _kernels._PATHS.values() if path.parent.name == floor)
            subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
            folder = Path(config.CACHE_DIR) / subpath
            if not folder.is_dir():
                continue
            destination = target / subpath
            destination.mkdir(parents=True, exist_ok=True)
            for entry in folder.iterdir():
                if entry.suffix in (".nbi", ".nbc") or entry.name == _kernels._STAMP_NAME:
                    shutil.copy2(entry, destination / entry.name)
                    copied += 1
        variable = "NUMBA_CACHE_DIR"
    if copied == 0:  # numba's defaults beside the sources (TOUCHE_PERSISTENT_CACHE=0): no copy
        shutil.rmtree(target, ignore_errors=True)
        return None
    return f"{variable}={target}"


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: the controller did both
        return
    try:
        _install_chromium()
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"conftest: could not install chromium: {error}", file=sys.stderr)
    # Compile every kernel first, in one worker process per core: the tests then load them from
    # numba's cache instead of compiling them one by one in this process (TOUCHE_TEST_WARMUP=0
    # skips it, e.g. when running one small test file).
    if os.environ.get("TOUCHE_TEST_WARMUP", "1") != "0":
        import touche

        touche.warmup()
        # what warmup() compiled, before any test adds to the cache: test_warmup's completeness
        # walk runs against this copy (in the shared cache, the other workers' tests may already
        # have compiled what warmup missed, and the walk would not see the gap)
        snapshot = _snapshot_kernel_cache()
        if snapshot is not None:
            os.environ[WARMUP_SNAPSHOT_VARIABLE] = snapshot


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return
    snapshot = os.environ.pop(WARMUP_SNAPSHOT_VARIABLE, None)
    if snapshot is not None:
        shutil.rmtree(snapshot.partition("=")[2], ignore_errors=True)
