"""Separate compilation (touche._kernels.base.jit): a big kernel is called by a stable name, not
linked into its callers; cached callers load it first; a changed callee never gets a stale call."""
import os
import subprocess
import sys

import pytest

_BIG = '''
from touche._kernels.base.jit import njit


@njit(cache=True)
def big(x):
    if x < 0.0:
        raise ValueError("negative input")
    total = 0.0
    for k in range(5):
        total += (x + k) ** 0.5
    return total
'''

_CALLER = '''
from touche._kernels.base.jit import njit
from sepbig import big


@njit(cache=True)
def caller(x):
    return big(x) + 1.0
'''

_RUN = '''
import sys
from touche._kernels.base import jit
jit.SEPARATE_MIN_LINES = 1  # the test kernels are small: separate every one
from touche._warmup import CompileLog
import numba
with CompileLog() as log:
    from sepcaller import caller
    from sepbig import big
    value = caller(4.0)
    try:
        caller(-1.0)
        raised = "no"
    except ValueError as error:
        raised = str(error)
signature = caller.signatures[0]
ir = caller.inspect_llvm(signature)
symbol = big.__dict__.get("_separate_symbols", {}).get(signature)
print(repr(value), log.count, symbol, symbol is not None and ('declare' in ir and symbol in ir),
      "define" in ir.split(symbol)[0].rsplit("\\n", 1)[-1] if symbol else None, repr(raised))
'''


def _run(folder, cache):
    env = {k: v for k, v in os.environ.items() if k not in ("TOUCHE_SEPARATE_KERNELS",)}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(folder)] + sys.path))
    done = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, timeout=600,
                          cwd=str(folder))
    assert done.returncode == 0, done.stderr
    value, count, symbol, declared, defined_here, raised = done.stdout.split(maxsplit=5)
    return float(value), int(count), symbol, declared == "True", defined_here, raised.strip()


def test_a_separate_kernel_is_called_by_name_and_cached_callers_load_it_first(tmp_path):
    (tmp_path / "sepbig.py").write_text(_BIG)
    (tmp_path / "sepcaller.py").write_text(_CALLER)
    cache = tmp_path / "cache"
    expected = sum((4.0 + k) ** 0.5 for k in range(5)) + 1.0

    value, compiled, symbol, declared, defined_here, raised = _run(tmp_path, cache)
    assert value == pytest.approx(expected, rel=1e-15)
    assert compiled >= 2 and symbol.startswith("touche_kernel_")
    assert declared and defined_here == "False"  # the caller declares the name, defines nothing of big
    assert raised == "'negative input'"  # an exception raised in the callee reaches Python

    # a fresh process: the caller comes from the cache, and its reload step loads big first
    value2, compiled2, symbol2, _, _, raised2 = _run(tmp_path, cache)
    assert (value2, compiled2, symbol2, raised2) == (value, 0, symbol, raised)

    # big's cache entries are gone (a cleaned cache, another machine's partial copy): the cached
    # caller's reload step compiles big again, under the same name, and the caller still loads
    removed = [path for path in cache.rglob("*") if path.is_file() and "sepbig" in path.name]
    assert removed
    for path in removed:
        path.unlink()
    value_again, compiled_again, symbol_again, _, _, _ = _run(tmp_path, cache)
    assert (value_again, compiled_again, symbol_again) == (value, 1, symbol)

    # big now returns an integer: same arguments, another return type. The caller's cache entry
    # (its file is unchanged, so numba still finds it) refers to the old name: it is a miss, and
    # the caller is compiled against the new big -- never a call with the old return type
    (tmp_path / "sepbig.py").write_text(_BIG.replace("return total", "return int(total)"))
    value3, compiled3, symbol3, _, _, _ = _run(tmp_path, cache)
    assert value3 == int(expected - 1.0) + 1.0
    assert compiled3 >= 2 and symbol3 != symbol


def test_a_changed_callee_makes_the_loader_refuse_the_old_name():
    from touche._kernels.base import jit

    loader = jit._SeparateKernel("touche._kernels.base.vec", "no_such_kernel", (), "touche_kernel_0")
    with pytest.raises(jit._StaleSeparateKernel):
        loader()
    assert loader == jit._SeparateKernel("x", "y", (), "touche_kernel_0") and hash(loader) == hash("touche_kernel_0")


def test_big_engine_kernels_are_called_by_name():
    """In a real query: the pair engine's big kernels are separate (compiled or loaded from the
    cache, the same decision), and a caller's IR declares one of them instead of defining it."""
    import gc

    import numpy as np

    import touche
    from touche._kernels.base import jit

    capsule, box = touche.Capsule(0.5, 2.0), touche.Box([1.0, 2.0, 3.0])
    touche.distance(capsule, np.eye(4), box, touche.Pose.from_translation([3.0, 0, 0]))
    separate = {symbol: dispatcher for dispatcher in gc.get_objects() if isinstance(dispatcher, jit.KernelDispatcher)
                for symbol in dispatcher.__dict__.get("_separate_symbols", {}).values() if symbol}
    assert separate
    declaring = []
    for dispatcher in gc.get_objects():
        if isinstance(dispatcher, jit.KernelDispatcher):
            for result in dispatcher.overloads.values():
                module = str(result.library._get_module_for_linking())
                if any(line.startswith("declare") and symbol in line for line in module.splitlines() for symbol in separate):
                    declaring.append(dispatcher)
    assert declaring


def test_a_library_calling_an_unloaded_name_fails_in_python_not_in_llvm():
    """LLVM aborts the process on an unresolved symbol; touche checks its kernel names first."""
    from llvmlite import ir
    from numba.core.registry import cpu_target

    from touche._kernels.base import jit

    module = ir.Module(name="calls_a_missing_kernel")
    double = ir.DoubleType()
    missing = ir.Function(module, ir.FunctionType(double, [double]), name=jit._SYMBOL_PREFIX + "not_loaded")
    caller = ir.Function(module, ir.FunctionType(double, [double]), name="calls_missing")
    builder = ir.IRBuilder(caller.append_basic_block())
    builder.ret(builder.call(missing, [caller.args[0]]))
    library = cpu_target.target_context.codegen().create_library("calls_a_missing_kernel")
    library.add_ir_module(module)
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock, pytest.raises(jit._StaleSeparateKernel, match="not_loaded"):
        library.finalize()


def test_the_threshold_setting_is_a_number_of_lines_or_off(monkeypatch):
    from touche._kernels.base import jit

    monkeypatch.delenv("TOUCHE_SEPARATE_KERNELS", raising=False)
    assert jit._separate_min_lines() == 1000
    monkeypatch.setenv("TOUCHE_SEPARATE_KERNELS", "3000")
    assert jit._separate_min_lines() == 3000
    monkeypatch.setenv("TOUCHE_SEPARATE_KERNELS", "0")
    assert jit._separate_min_lines() is None
    for bad in ("yes", "-5", "1e3"):
        monkeypatch.setenv("TOUCHE_SEPARATE_KERNELS", bad)
        with pytest.raises(ValueError, match="TOUCHE_SEPARATE_KERNELS"):
            jit._separate_min_lines()
