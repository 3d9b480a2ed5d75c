"""Numba kernels. Only @njit(cache=True, nogil=True) code lives here: arrays and scalars in,
arrays / tuples out, no Python objects. Public wrappers live one level up.

Layout: one sub-package per floor, imports pointing down only (docs/KERNELS.md draws it):
``base`` (jit, kinds, vectors, predicates) <- ``primitives`` (closest points, overlap, rays, SAT,
bounding volumes) <- ``convex`` (support mappings, GJK, EPA) <- ``trees`` (BVH, BSP, clearance) <-
``narrow`` (pair engines, batches, manifolds), with ``motion`` (times of impact, robot kinematics)
and ``broad`` (broad phases) beside ``narrow``. Every kernel module's file name is unique across
the floors: ``load("gjk")`` / ``from touche._kernels import gjk`` find it wherever it lives, and
the cache guard and the persistent cache key modules by that name.

This package's __init__ must not import numba (``import touche`` stays light): every kernel
module calls ``ensure_fresh_cache()`` before defining its kernels.

Cache guard: numba's on-disk cache is keyed by each source file's own timestamp, but a cached
kernel also holds machine code compiled from kernels of *other* files it calls. After one of those
changes (an upgrade, a developer edit) the stale caller keeps the old callee's code, or calls the
new callee with an old ABI and crashes. So on first import we hash each kernel module together
with every kernel module it imports, directly or not, and drop the cache files of exactly those
modules whose hash differs from the one stored next to the cache. Editing one kernel module thus
recompiles it and its importers, not the whole package.

The persistent cache (jit.py) keys its folders by the same digests, so nothing there can be stale;
the guard serves numba's own locations (NUMBA_CACHE_DIR, ``__pycache__`` beside the sources).

Imports from several threads: kernel modules (and numba behind them) are imported on first use,
and Python's per-module import locks do not make that safe when several threads start at once:
numba's own modules import each other in cycles, so two threads entering them at different
modules deadlock (``_DeadlockError``) or see a partially initialised module (``ImportError``).
Every first import of a kernel module therefore goes through ``load`` under one process-wide
lock, taken before any module lock: ``from touche._kernels import batch`` reaches ``load``
through the package's ``__getattr__`` while ``batch`` is not yet an attribute of the package.
(A direct ``from touche._kernels.narrow.batch import x`` would bypass it: touche does not use that
form outside the kernel modules themselves.)
"""
import functools
import hashlib
import importlib
import json
import os
import re
import threading
from pathlib import Path


class NonCanonicalArguments(TypeError):
    """A strict entry kernel (``touche._kernels.base.jit.strict_entry``) was called from Python
    with argument types it has no specialization for: nothing is compiled for them; the caller
    goes back to its checked path, which converts the arguments (touche.query's single pairs)."""


_HERE = Path(__file__).resolve().parent

# Re-entrant: a kernel module being imported under it imports other kernel modules.
IMPORT_LOCK = threading.RLock()


def _new_lock_after_fork():  # a thread importing at fork time does not exist in the child
    global IMPORT_LOCK
    IMPORT_LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


_FLOORS = ("base", "primitives", "convex", "trees", "narrow", "motion", "broad")


def _module_paths():
    """{kernel module name: its file} over every floor."""
    paths = {}
    for floor in _FLOORS:
        for path in sorted((_HERE / floor).glob("*.py")):
            if path.stem != "__init__":
                paths[path.stem] = path
    return paths


_PATHS = _module_paths()


def load(name):
    """The kernel module named ``name`` (its file name on any floor, e.g. ``"gjk"``), imported
    (once) under IMPORT_LOCK."""
    module = globals().get(name)
    if module is not None:
        return module
    path = _PATHS[name]
    with IMPORT_LOCK:
        module = importlib.import_module(f"{__name__}.{path.parent.name}.{name}")
    globals()[name] = module  # later look-ups skip the lock and __getattr__
    return module


def kernel_loader(name):
    """A function returning the kernel module ``touche._kernels.<name>``, imported on its first
    call: public modules hold one per kernel module they use, so ``import touche`` stays light."""
    return functools.partial(load, name)


def __getattr__(name):
    # only reached for names that are not (yet) attributes: kernel modules not imported so far
    if name in _PATHS:
        return load(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
_STAMP_NAME = "touche-kernels.json"
# "from touche._kernels.convex.gjk import ...", "from touche._kernels.base import kinds, vec",
# "from .vec import dot", "from . import kinds"
_IMPORT = re.compile(r"^\s*from\s+(?:\.|touche\._kernels\.?)([\w.]*)\s+import\s+([\w \t,(]+)", re.MULTILINE)


def _module_sources():
    return {name: path.read_bytes() for name, path in _PATHS.items()}


def _direct_imports(source, modules):
    found = set()
    for target, names in _IMPORT.findall(source.decode("utf-8", "replace")):
        last = target.rsplit(".", 1)[-1]
        if last in modules:
            found.add(last)
        else:  # a floor or the package: "from touche._kernels.base import kinds, vec"
            found.update(name for name in re.split(r"[\s,()]+", names) if name)
    return found & modules


def _module_digests():
    """{module: sha1 of its source and of every kernel module it reaches through imports}."""
    sources = _module_sources()
    modules = set(sources)
    imports = {name: _direct_imports(source, modules) for name, source in sources.items()}
    # constants of touche/tolerance.py are compiled into kernels as literals
    shared = (_HERE.parent / "tolerance.py").read_bytes()
    digests = {}
    for name in sources:
        reached, stack = {name}, [name]
        while stack:
            for other in imports[stack.pop()]:
                if other not in reached:
                    reached.add(other)
                    stack.append(other)
        digest = hashlib.sha1(shared)
        for other in sorted(reached):
            digest.update(other.encode())
            digest.update(sources[other])
        digests[name] = digest.hexdigest()
    return digests


_digests = None


def module_digest(name):
    """The digest of kernel module ``name`` (its source and every kernel module it reaches), or
    None for a file that is not a kernel module; computed once per process."""
    global _digests
    if _digests is None:
        _digests = _module_digests()
    return _digests.get(name)


def _cache_dirs():
    """Every folder where numba may keep cache files of the kernel modules: numba keys them by
    each source file's folder, so one set per floor."""
    dirs = []
    for floor in _FLOORS:
        source = next(path for path in _PATHS.values() if path.parent.name == floor)
        dirs.append(source.parent / "__pycache__")
        try:
            from numba.core import config
            from numba.core.caching import UserProvidedCacheLocator, UserWideCacheLocator

            subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
            if config.CACHE_DIR:
                dirs.append(Path(config.CACHE_DIR) / subpath)
            probe = UserWideCacheLocator.__new__(UserWideCacheLocator)
            UserWideCacheLocator.__init__(probe, _module_sources, str(source))
            dirs.append(Path(probe.get_cache_path()))
        except Exception:  # pragma: no cover - only the in-tree cache then
            pass
    return dirs


def _drop_stale_cache():
    digests = _module_digests()
    for cache_dir in _cache_dirs():
        stamp = cache_dir / _STAMP_NAME
        try:
            stored = json.loads(stamp.read_text())
            if not isinstance(stored, dict):
                stored = {}
        except (OSError, ValueError):
            stored = {}
        stale = {name for name, digest in digests.items() if stored.get(name) != digest}
        if not stale:
            continue
        try:
            # create the folder (with the stamp) now: a folder that did not exist yet left no
            # stamp behind, and the next process then dropped everything the first one compiled
            cache_dir.mkdir(parents=True, exist_ok=True)
            for entry in cache_dir.iterdir():
                if entry.suffix in (".nbi", ".nbc") and entry.name.split(".")[0] in stale:
                    entry.unlink(missing_ok=True)
            stamp.write_text(json.dumps(digests, sort_keys=True))
        except OSError:  # read-only install: numba falls back to another cache dir
            pass


_checked = False


def ensure_fresh_cache():
    """Run the cache guard once per process (set TOUCHE_KEEP_NUMBA_CACHE=1 to skip it)."""
    global _checked
    # kernel modules call this while they are imported, i.e. under load()'s lock (taking the lock
    # here instead would invert the order against a module lock and could hang)
    if not _checked:
        _checked = True
        if os.environ.get("TOUCHE_KEEP_NUMBA_CACHE") != "1":
            _drop_stale_cache()
