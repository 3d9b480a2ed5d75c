"""The numba cache guard drops this package's cached kernels when any kernel source changed."""
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
    assert (cache / kernels._STAMP_NAME).read_text() == kernels._source_digest()
    # same sources again: nothing is dropped
    fresh = cache / "pairs.pair_distance-1.py311.nbc"
    fresh.write_text("fresh")
    kernels._drop_stale_cache()
    assert fresh.exists()


def test_import_touche_does_not_import_numba():
    import subprocess
    import sys

    code = "import sys, touche; print('numba' in sys.modules, 'scipy' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False", "False"]
