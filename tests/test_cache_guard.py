"""The numba cache guard drops the cached kernels of every module whose source, or the source of a
kernel module it imports, changed -- and only those."""
import json

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
    assert b"from .vec import" in sources["closest"]
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
