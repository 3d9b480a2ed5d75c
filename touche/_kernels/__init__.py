"""Numba kernels. Only @njit(cache=True, nogil=True) code lives here: arrays and scalars in,
arrays / tuples out, no Python objects. Public wrappers live one level up.

This package's __init__ must not import numba (``import touche`` stays light): every kernel
module calls ``ensure_fresh_cache()`` before defining its kernels.

Cache guard: numba's on-disk cache is keyed by each source file's own timestamp, but a cached
kernel also holds machine code linked against kernels of *other* files. After one of those
changes (an upgrade, a developer edit) the stale caller can call the new callee with an old
ABI and crash. So on first import we hash every kernel source and, when the hash differs from
the one stored next to the cache, drop this package's cache files before numba reads them.
"""
import hashlib
import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_STAMP_NAME = "touche-kernels.sha1"


def _source_digest():
    digest = hashlib.sha1()
    for path in sorted(_HERE.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _cache_dirs():
    dirs = [_HERE / "__pycache__"]
    try:
        from numba.core import config
        from numba.core.caching import UserProvidedCacheLocator, UserWideCacheLocator

        subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(str(_HERE / "kinds.py"))
        if config.CACHE_DIR:
            dirs.append(Path(config.CACHE_DIR) / subpath)
        probe = UserWideCacheLocator.__new__(UserWideCacheLocator)
        UserWideCacheLocator.__init__(probe, _source_digest, str(_HERE / "kinds.py"))
        dirs.append(Path(probe.get_cache_path()))
    except Exception:  # pragma: no cover - only the in-tree cache then
        pass
    return dirs


def _drop_stale_cache():
    digest = _source_digest()
    modules = {path.stem for path in _HERE.glob("*.py")}
    for cache_dir in _cache_dirs():
        stamp = cache_dir / _STAMP_NAME
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        try:
            if cache_dir == _HERE / "__pycache__":
                cache_dir.mkdir(parents=True, exist_ok=True)
            elif not cache_dir.is_dir():
                continue
            for entry in cache_dir.iterdir():
                if entry.suffix in (".nbi", ".nbc") and entry.name.split(".")[0] in modules:
                    entry.unlink(missing_ok=True)
            stamp.write_text(digest)
        except OSError:  # read-only install: numba falls back to another cache dir
            pass


_checked = False


def ensure_fresh_cache():
    """Run the cache guard once per process (set TOUCHE_KEEP_NUMBA_CACHE=1 to skip it)."""
    global _checked
    if not _checked:
        _checked = True
        if os.environ.get("TOUCHE_KEEP_NUMBA_CACHE") != "1":
            _drop_stale_cache()
