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
