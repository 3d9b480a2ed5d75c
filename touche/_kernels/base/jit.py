"""``njit`` for touche's kernels: numba's, with calls between kernels typed without literals.

numba types a constant argument of a call made inside a kernel (``f(x, True)``, ``g(t, 0)``) as a
literal type (``Literal[bool](True)``, ``Literal[int](0)``), and a jitted callee is compiled once
per literal value: ``f(x, True)`` and ``f(x, False)`` are two full compilations of ``f`` and of
everything it calls, and each is stored in the cache separately. No touche kernel needs a literal
argument (none uses ``numba.literally``), so kernels made by this ``njit`` turn literal argument
types into their plain types before numba picks or compiles a specialization: one compilation per
real signature. (Branches on such a flag stay in the code as ordinary, well-predicted tests.)

A second canonical form at the boundary: numba types a read-only array (a numpy view of a
frozen attribute, ``np.broadcast_to``, an array with ``setflags(write=False)``) as another type
than the same array writable, and would compile every kernel it reaches once more for it. A
kernel called from Python with a read-only array therefore runs on a writable copy of it (a
read-only array is never an output, so nothing written is lost); the copy costs one Python-level
detour per such call, far less than a compilation.

Third, where the compiled code is kept: a per-user folder keyed by content (``_PersistentLocator``)
instead of numba's default, which keys by each file's modification time beside the sources, so a
fresh clone or a reinstall of the same sources recompiled everything. Here a kernel module's code
lives under ``<cache>/kernels-numba<version>/<module>-<digest>``, the digest covering the module's
source, every kernel module it imports (directly or not) and touche/tolerance.py (see
``touche._kernels.module_digest``): identical sources find their code wherever they are
installed, and an edit lands in a new folder (never stale). numba's index adds the function's
bytecode, the signature and the CPU to every entry. ``<cache>`` is TOUCHE_CACHE_DIR, else
$XDG_CACHE_HOME/touche, else ~/.cache/touche. NUMBA_CACHE_DIR, when set, wins (numba's own
locator; the cold-start benchmark and tests rely on it); TOUCHE_PERSISTENT_CACHE=0 turns the
per-user folder off (numba's defaults then). Folders of older sources are not removed: delete
``<cache>`` to reclaim the space.
"""
import os
from pathlib import Path

import numba
import numpy as np
from numba import njit as _numba_njit
from numba.core import config, types
from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator
from numba.core.registry import CPUDispatcher

from touche._kernels import NonCanonicalArguments, module_digest


def _defer_numba_blas_import():
    """Keep numba from importing scipy.linalg when it first loads or compiles a kernel.

    ``numba.np.arraymath`` (imported by numba's CPU target on the first cache load or compilation)
    runs ``ensure_blas()`` at import to learn whether ``np.dot`` may call BLAS, and that imports
    ``scipy.linalg.cython_blas``, hence all of ``scipy.linalg``: ~0.17 s of a first query on a warm
    cache here. scipy is one of touche's dependencies, so the answer is known without the import;
    the BLAS functions themselves are still looked up in scipy when a kernel first calls one
    (numba's C helper imports the module then), and every later ``ensure_blas()`` (typing a new
    ``np.dot``) is numba's own. If scipy were missing, numba's probe runs as before.
    """
    import importlib.util
    import sys

    if "numba.np.arraymath" in sys.modules or importlib.util.find_spec("scipy") is None:
        return
    try:
        import numba.np.linalg as numba_linalg

        probe = numba_linalg.ensure_blas
    except (ImportError, AttributeError):  # another numba layout: its own probe runs, nothing else changes
        return
    numba_linalg.ensure_blas = lambda: None
    try:
        import numba.np.arraymath as arraymath
    finally:
        numba_linalg.ensure_blas = probe
    if getattr(arraymath, "ensure_blas", None) is not None:
        arraymath.ensure_blas = probe  # later calls (typing a new np.dot) probe for real


_defer_numba_blas_import()


def _lighten_numba_bookkeeping():
    """Two pieces of numba's per-compile bookkeeping, made cheaper without changing what they answer.

    - ``TargetConfig.values()`` (compiler flags as a dict) builds the dict through one property
      call per option, and numba's overload templates hash and compare flags in every cache lookup
      of a typed call: ~5 % of a first query's compile. Here the same dict is the option defaults
      updated with the options set (the properties read ``_values.get(name, default)``), and the
      hash -- numba's hashes the sorted option *names*, so it is the same for every instance of a
      class -- is that of the names, computed once per class.
    - numba registers a callback on llvmlite's lock that emits a "numba:llvm_lock" event around
      every call into LLVM (~200,000 in a first box-box contacts query: ~4 % of its compile), only
      to time LLVM for the compile results' metadata ("llvm_lock" timers); touche reads no timers.
    - while typing a call, numba formats a TypingError for every overload template that does not
      match, and marks each message up through colorama, which wraps and unwraps stdout and
      stderr for every string (19,603 markups, 2.4 s of the 70 s the warmup's bounding-volume
      step compiled, cProfile). With numba's default scheme ("no_color": bold only) the messages
      are kept as they are, without the bold escapes; a scheme the user chose stays.
    None is done when numba's internals do not look as expected (another numba version).
    """
    try:
        from numba.core import compiler, targetconfig

        config_class = targetconfig.TargetConfig
        numba_values, numba_hash = config_class.values, config_class.__hash__
    except Exception:  # another layout: numba's own methods stay
        config_class = None
    if config_class is not None:
        defaults_by_class, hash_by_class = {}, {}

        def values(self):
            cls = type(self)
            defaults = defaults_by_class.get(cls)
            if defaults is None:
                defaults = defaults_by_class[cls] = {name: opt.default for name, opt in cls.options.items()}
            merged = dict(defaults)
            merged.update(self._values)
            return merged

        def config_hash(self):
            cls = type(self)
            value = hash_by_class.get(cls)
            if value is None:
                value = hash_by_class[cls] = hash(tuple(sorted(cls.options)))
            return value

        try:  # the same answers as numba's on a flags object with options set, or numba's stay
            flags = compiler.Flags()
            flags.nrt = True
            flags.no_cpython_wrapper = True
            same = values(flags) == numba_values(flags) and config_hash(flags) == numba_hash(flags)
        except Exception:
            same = False
        if same:
            config_class.values = values
            config_class.__hash__ = config_hash
    try:
        from llvmlite.binding import ffi
        from numba.core import base

        callbacks = ffi.lib._lock._cblist
        numba_callbacks = [pair for pair in callbacks
                           if getattr(pair[0], "__module__", None) == base.__name__
                           and getattr(pair[0], "__name__", None) == "enter_fn"]
    except Exception:
        numba_callbacks = []
    for acquire, release in numba_callbacks:
        ffi.unregister_lock_callback(acquire, release)
    try:
        from numba.core import config as numba_config
        from numba.core import errors as numba_errors

        class _PlainMessages(numba_errors._DummyColorScheme):
            def code(self, msg):
                return msg

            errmsg = filename = indicate = highlight = reset = code

        current = numba_errors._termcolor_inst  # numba makes it on first use (None until then)
        highlighting = getattr(numba_errors, "HighlightColorScheme", None)
        if numba_config.COLOR_SCHEME == "no_color" and (
                current is None or (highlighting is not None and type(current) is highlighting)):
            numba_errors._termcolor_inst = _PlainMessages()
    except Exception:  # another layout: numba's markup stays
        pass


_lighten_numba_bookkeeping()


def persistent_cache_root():
    """The per-user folder of compiled kernels, or None when it is not used."""
    if config.CACHE_DIR or os.environ.get("TOUCHE_PERSISTENT_CACHE") == "0":
        return None
    base = os.environ.get("TOUCHE_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = os.path.join(xdg, "touche") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "touche")
    return Path(base) / f"kernels-numba{numba.__version__}"


class _PersistentLocator(_CacheLocator):
    def __init__(self, cache_path, digest):
        self._cache_path = str(cache_path)
        self._digest = digest

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return self._digest

    def get_disambiguator(self):
        return self._digest[:8]

    @classmethod
    def from_function(cls, py_func, py_file):
        root = persistent_cache_root()
        module = Path(py_file).stem
        digest = module_digest(module)
        # only touche's own kernel files (a floor of touche/_kernels): module_digest knows them by
        # file name, so a foreign file of the same name must not borrow their folder
        kernels_dir = Path(__file__).resolve().parents[1]
        if root is None or digest is None or Path(py_file).resolve().parent.parent != kernels_dir:
            return None
        locator = cls(root / f"{module}-{digest[:20]}", digest)
        try:
            locator.ensure_cache_path()
        except OSError:  # no writable home: numba's own locations
            return None
        return locator


class _KernelCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_PersistentLocator] + list(CompileResultCacheImpl._locator_classes)


class _KernelFunctionCache(FunctionCache):
    _impl_class = _KernelCacheImpl
    without_python_entry = False  # set by the dispatcher around each load and save

    def _index_key(self, sig, codegen):
        # a specialization compiled for callers in jitted code only has no Python entry point:
        # it is kept under its own key, never handed to a call from Python
        key = super()._index_key(sig, codegen)
        return key + ("kernel-callers-only",) if self.without_python_entry else key


class _CacheOnFirstUse:
    """A dispatcher's cache, made when the dispatcher first loads or compiles a specialization.

    Making a ``FunctionCache`` finds its folder and test-writes a file in it (~0.13 ms); importing
    the kernel modules makes ~300 dispatchers, of which a first query loads a handful, so making
    them all at decoration was ~40 ms of every process's first query. Everything numba asks of
    the cache is passed on to the real one."""

    __slots__ = ("_py_func", "_cache", "for_kernel_callers")

    def __init__(self, py_func):
        self._py_func = py_func
        self._cache = None
        self.for_kernel_callers = False  # the specialization being loaded is for jitted callers only

    def _real(self):
        if self._cache is None:
            self._cache = _KernelFunctionCache(self._py_func)
        return self._cache

    def load_overload(self, sig, target_context):
        without_python_entry = self.for_kernel_callers
        real = self._real()
        try:
            real.without_python_entry = without_python_entry
            result = real.load_overload(sig, target_context)
            if result is None and without_python_entry:  # a kernel caller can use the full one too
                real.without_python_entry = False
                result = real.load_overload(sig, target_context)
        except _StaleSeparateKernel:  # a callee it calls by name is gone or changed: compile it anew
            return None
        finally:
            real.without_python_entry = False
        if result is not None and result.reload_init:
            # numba keeps the reload steps in the compile result only; a caller compiled later
            # that links this library takes the library's, which must then include them
            result.library._reload_init.update(result.reload_init)
        return result

    def save_overload(self, sig, data):
        # every kernel this code calls by name, however the call got into its module (its own
        # call sites, or those of kernels linked into it), is loaded before it (see _SeparateKernel)
        steps = list(data.reload_init or ())
        for function in data.library._final_module.functions:
            if function.is_declaration and function.name in _SEPARATE_LOADERS:
                loader = _SEPARATE_LOADERS[function.name]
                if loader not in steps:
                    steps.append(loader)
        real = self._real()
        real.without_python_entry = not _has_python_entry(data)
        try:
            return real.save_overload(sig, data._replace(reload_init=steps))
        finally:
            real.without_python_entry = False

    def flush(self):
        return self._real().flush()

    def __getattr__(self, name):
        if name in _CacheOnFirstUse.__slots__:  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self._real(), name)


class KernelDispatcher(CPUDispatcher):
    """A CPUDispatcher whose callers inside jitted code see it without literal argument types,
    that copies read-only arrays from Python, and that caches in the per-user folder."""

    def enable_caching(self):
        self._cache = _CacheOnFirstUse(self.py_func)

    def get_call_template(self, args, kws):
        # reached when a caller in jitted code is typed: what it compiles needs no Python entry
        args = tuple(types.unliteral(arg) for arg in args)
        kws = {name: types.unliteral(value) for name, value in kws.items()}
        with _compiling_for(self, kernel_callers_only=True):
            return super().get_call_template(args, kws)

    def compile(self, sig):
        from numba.core import sigutils
        from numba.core.compiler_lock import global_compiler_lock

        # under numba's (reentrant) compiler lock: another thread typing a caller of this kernel
        # sets its target options for that compile (_compiling_for), and a call from Python here
        # must never read them
        with global_compiler_lock:
            for_kernels = self.targetoptions.get("no_cpython_wrapper", False)
            if not for_kernels:
                # a call from Python (or an explicit compile): a specialization compiled for jitted
                # callers only has no entry point to call, so it is compiled (or loaded) again, whole
                args = tuple(sigutils.normalize_signature(sig)[0])
                existing = self.overloads.get(args)
                if existing is not None and not _has_python_entry(existing):
                    del self.overloads[args]
                    self.__dict__.get("_kernel_calls", set()).discard(args)
            if isinstance(self._cache, _CacheOnFirstUse):
                self._cache.for_kernel_callers = for_kernels
            try:
                entry_point = super().compile(sig)
            finally:
                if isinstance(self._cache, _CacheOnFirstUse):
                    self._cache.for_kernel_callers = False
            if SEPARATE_MIN_LINES is not None:
                _install_kernel_call(self, sig)
            return entry_point

    def add_overload(self, cres):
        if _has_python_entry(cres):
            super().add_overload(cres)
        else:  # callable from jitted code only: kept out of the table numba calls from Python
            self.overloads[tuple(cres.signature.args)] = cres

    def _compile_for_args(self, *args, **kws):
        # Reached from Python when no compiled specialization matches the arguments; numba then
        # calls whatever this returns with the same arguments.
        if any(isinstance(arg, np.ndarray) and not arg.flags.writeable for arg in args):
            return self._call_with_writable_copies
        if self.__dict__.get("_strict_entry") and any(_has_python_entry(cres) for cres in self.overloads.values()):
            raise NonCanonicalArguments(f"{self.py_func.__name__}: no specialization for these argument types")
        return super()._compile_for_args(*args, **kws)

    def _call_with_writable_copies(self, *args):
        return self(*(np.array(arg) if isinstance(arg, np.ndarray) and not arg.flags.writeable else arg
                      for arg in args))


def strict_entry(dispatcher):
    """Mark a kernel that Python may call with unchecked arguments (touche.query's single pairs
    pass the caller's pose arrays as they are): once it has its one specialization compiled from
    canonical arguments (float64, C order, writable; the checked path calls it so first), a call
    whose argument types match no specialization raises NonCanonicalArguments (a TypeError)
    instead of compiling another one. numba's type dispatch, in C, is then the type check of
    the fast path: a float32, Fortran-order, strided or (n, 4, 4) pose is refused for the
    price of a failed lookup, and its caller takes the checked path. Read-only arrays are still
    copied (KernelDispatcher._compile_for_args). Values and shapes (finite, rigid, 4 x 4) are
    checked by the kernel itself."""
    dispatcher._strict_entry = True
    return dispatcher


def njit(*args, **options):
    """``numba.njit`` (same arguments) returning a :class:`KernelDispatcher`."""
    if args and callable(args[0]) and not options:  # bare @njit
        return _adopt(_numba_njit(args[0]), cache=False)

    # numba's own cache=True would make numba's FunctionCache at once (a folder lookup and a test
    # write), only for enable_caching below to replace it: the cache is made here, on first use
    cache = options.pop("cache", False)
    # numba's C-callable wrapper (for cfunc-style first-class function values) is compiled with
    # every specialization by default; touche calls kernels from Python, from kernels, or by
    # their native address (KernelBoundary), never through it
    options.setdefault("no_cfunc_wrapper", True)
    decorate = _numba_njit(*args, **options)

    def wrapper(function):
        return _adopt(decorate(function), cache)

    return wrapper


# A specialization compiled because a kernel calls it (typed from its caller) is compiled without
# numba's CPython wrapper, the function that unboxes Python arguments and boxes the result: in a
# warmup most kernels are only ever called from other kernels, and the wrapper is ~10 % of their
# lowering and code generation. A call from Python then finds no entry and compiles the
# specialization again, whole (kept under its own cache key; KernelDispatcher.compile).
# TOUCHE_ALL_ENTRY_POINTS=1 compiles every specialization with its wrapper (numba's way).
KERNEL_CALLERS_ONLY = os.environ.get("TOUCHE_ALL_ENTRY_POINTS", "0") != "1"


def _has_python_entry(cres):
    """Whether the compile result has numba's CPython wrapper (a function Python can call)."""
    return cres.objectmode or cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) != 0


class _compiling_for:
    """Within the block, ``dispatcher`` compiles what it has to without a Python entry point
    (``kernel_callers_only``), or with one (the default). The compiler reads the dispatcher's own
    target options, so the compile of one kernel does not decide for the kernels it calls: each
    of those is asked again by its own get_call_template."""

    def __init__(self, dispatcher, kernel_callers_only=False):
        self.dispatcher = dispatcher
        self.value = bool(kernel_callers_only and KERNEL_CALLERS_ONLY and isinstance(dispatcher, KernelDispatcher))

    def __enter__(self):
        from numba.core.compiler_lock import global_compiler_lock

        self.lock = global_compiler_lock  # held for the block: the options are per dispatcher, not per thread
        self.lock.acquire()
        options = self.dispatcher.targetoptions
        self.previous = options.get("no_cpython_wrapper", False)
        options["no_cpython_wrapper"] = self.value
        return self

    def __exit__(self, *exc):
        self.dispatcher.targetoptions["no_cpython_wrapper"] = self.previous
        self.lock.release()


def _adopt(dispatcher, cache):
    if not isinstance(dispatcher, CPUDispatcher):  # NUMBA_DISABLE_JIT=1: a plain function
        return dispatcher
    # CPUDispatcher adds no instance layout over its C base, and neither does the subclass, so
    # the instance can take the subclass as its class
    dispatcher.__class__ = KernelDispatcher
    if cache:
        dispatcher.enable_caching()
    return dispatcher


# ------------------------------------------------------------------------------------------------
# separate compilation: big kernels are called by name, not linked into every caller
#
# numba links a jitted callee's whole LLVM module (the callee and everything it calls) into each
# caller's module, and the caller's finalize optimizes and code-generates all of it again: in a
# warmup, 3.56 M lines of linked IR against 0.84 M lines of the kernels' own, and finalize ~40 %
# of the compile CPU. A kernel specialization whose module for linking has SEPARATE_MIN_LINES
# lines or more is instead registered in the JIT's symbol table under a stable name (numba's
# mangled names carry a per-process counter), and callers typed after that declare the name and
# call it: they link nothing of it. Callees this big are far above LLVM's inlining threshold, so
# a call stays the direct call it was (bench_revisions --extended: 36 paths at 0.97-1.01x).
#
# A cached caller's object code then refers to the callee by that name: numba runs a compile
# result's ``reload_init`` callables before it loads the object code, and the call site adds a
# ``_SeparateKernel`` there, which loads (or compiles) the callee and registers its name first.
# The name covers the module, the qualified name, the argument and return types and the ABI tags;
# if the callee is gone or now answers another name, the caller's cache entry is treated as a miss
# and the caller is compiled again (never a call to an unresolved or mismatched symbol).
# Kernels made in a function (qualified names with <locals>) and forced-inline ones keep linking:
# two closures may share a qualified name.
# TOUCHE_SEPARATE_KERNELS=0 turns it off (numba's linking everywhere); =N sets the threshold.


def _separate_min_lines(default=1000):
    setting = os.environ.get("TOUCHE_SEPARATE_KERNELS", "").strip()
    if not setting:
        return default
    if not setting.isdigit():
        raise ValueError(f"TOUCHE_SEPARATE_KERNELS must be a number of IR lines (0 = off), got {setting!r}")
    return int(setting) or None


SEPARATE_MIN_LINES = _separate_min_lines()


_SEPARATE_LOADERS = {}  # registered name -> its _SeparateKernel
_SYMBOL_PREFIX = "touche_kernel_"


class _StaleSeparateKernel(Exception):
    pass


def _separate_symbol(dispatcher, cres):
    import hashlib

    fndesc = cres.fndesc
    # the kernel's compile options, not numba's ABI tags: those also encode whether the Python
    # entry point was compiled (KERNEL_CALLERS_ONLY), which changes nothing a caller calls
    options = sorted((name, repr(sorted(value) if isinstance(value, (set, frozenset)) else value))
                     for name, value in dispatcher.targetoptions.items() if name != "no_cpython_wrapper")
    key = "|".join((dispatcher.py_func.__module__, dispatcher.py_func.__qualname__, str(tuple(fndesc.argtypes)),
                    str(fndesc.restype), str(options)))
    return _SYMBOL_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:32]


def _registered_symbol(dispatcher, args, force=False):
    """The stable name under which this specialization is called (registering it now), or None
    when it is linked into its callers. Decided once per process, when a first caller's call is
    lowered (nothing is measured when kernels are only loaded from the cache); ``force`` (a cached
    caller needs the name) registers it whatever its size."""
    decided = dispatcher.__dict__.setdefault("_separate_symbols", {})
    if args in decided and (decided[args] is not None or not force):
        return decided[args]
    cres = dispatcher.overloads.get(args)
    if cres is None or not _may_be_separate(dispatcher, cres):
        decided[args] = None
        return None
    if not force and str(cres.library._get_module_for_linking()).count("\n") < SEPARATE_MIN_LINES:
        decided[args] = None
        return None
    from llvmlite import binding

    symbol = _separate_symbol(dispatcher, cres)
    binding.add_symbol(symbol, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
    _SEPARATE_LOADERS[symbol] = _SeparateKernel(dispatcher.py_func.__module__, dispatcher.py_func.__qualname__,
                                                args, symbol)
    decided[args] = symbol
    return symbol


def _may_be_separate(dispatcher, cres):
    return not (cres.objectmode or cres.fndesc.inline or "<locals>" in dispatcher.py_func.__qualname__)


def _refuse_unregistered_names():
    """Make a library compiled in this process that declares a kernel name not registered here
    fail with _StaleSeparateKernel as it is finalized, before LLVM resolves its symbols (an
    unresolved symbol aborts the process there): the check keeps a bug from ever becoming a
    crash. A library loaded from the cache is not scanned (its module would be walked on every
    load): its names are covered by construction, since save_overload stores a loader for every
    kernel name its module declares, and the loaders run before it is loaded."""
    from numba.core.codegen import CPUCodeLibrary

    verify = CPUCodeLibrary._verify_declare_only_symbols

    def verify_declare_only_symbols(library):
        verify(library)
        for function in library._final_module.functions:  # empty for a library loaded from the cache
            if (function.is_declaration and function.name.startswith(_SYMBOL_PREFIX)
                    and function.name not in _SEPARATE_LOADERS):
                raise _StaleSeparateKernel(f"{library.name} calls {function.name}, which is not loaded")

    CPUCodeLibrary._verify_declare_only_symbols = verify_declare_only_symbols


_refuse_unregistered_names()  # once, before any kernel is loaded or linked


def _install_kernel_call(dispatcher, sig):
    """Have callers call this specialization through _kernel_call (numba's own call, or by name)."""
    from numba.core import sigutils
    from numba.core.base import OverloadSelector
    from numba.core.compiler_lock import global_compiler_lock

    args, _ = sigutils.normalize_signature(sig)
    args = tuple(args)
    installed = dispatcher.__dict__.setdefault("_kernel_calls", set())
    if args in installed:
        return
    with global_compiler_lock:  # the context's call table is shared with compiling threads
        cres = dispatcher.overloads.get(args)
        if cres is None or args in installed:
            return
        installed.add(args)
        if _may_be_separate(dispatcher, cres):
            selector = OverloadSelector()
            selector.append(_kernel_call(dispatcher, args, cres), tuple(cres.fndesc.argtypes))
            dispatcher.targetctx._defns[cres.entry_point] = selector


class _SeparateKernel:
    """Run before a cached caller is loaded (numba's reload_init): load or compile the callee and
    register its name; _StaleSeparateKernel when it no longer answers that name."""

    __slots__ = ("module", "qualname", "args", "symbol")

    def __init__(self, module, qualname, args, symbol):
        self.module, self.qualname, self.args, self.symbol = module, qualname, tuple(args), symbol

    def __reduce__(self):
        return (_SeparateKernel, (self.module, self.qualname, self.args, self.symbol))

    def __eq__(self, other):
        return isinstance(other, _SeparateKernel) and self.symbol == other.symbol

    def __hash__(self):
        return hash(self.symbol)

    def __call__(self):
        import importlib

        try:
            dispatcher = importlib.import_module(self.module)
            for part in self.qualname.split("."):
                dispatcher = getattr(dispatcher, part)
            if not isinstance(dispatcher, KernelDispatcher):
                raise TypeError(f"{self.qualname} is no longer a kernel")
            with _compiling_for(dispatcher, kernel_callers_only=True):  # called by name only
                dispatcher.compile(self.args)
            symbol = _registered_symbol(dispatcher, self.args, force=True)
        except Exception as error:  # gone, renamed, or no longer compiles for these types
            raise _StaleSeparateKernel(f"{self.module}.{self.qualname}{self.args}: {error}") from error
        if symbol != self.symbol:
            raise _StaleSeparateKernel(f"{self.module}.{self.qualname}{self.args} changed its signature")


def _kernel_call(dispatcher, args, cres):
    """numba's user_function (the code of a call to a compiled kernel), except that a big callee is
    called by its registered name and linked into nothing."""
    from numba.core import cgutils
    from numba.core.imputils import fix_returning_optional, impl_ret_new_ref

    fndesc = cres.fndesc

    def call(context, builder, sig, values):
        symbol = _registered_symbol(dispatcher, args)
        if symbol is None:  # numba's own call: declare the mangled name, link the library
            function = context.declare_function(builder.module, fndesc)
            context.add_linking_libs([cres.library])
        else:
            function_type = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
            function = cgutils.get_or_insert_function(builder.module, function_type, symbol)
            context.apply_target_attributes(function, fndesc.argtypes, fndesc.restype)
            context.call_conv.decorate_function(function, fndesc.args, fndesc.argtypes, noalias=fndesc.noalias)
            context.active_code_library._reload_init.add(_SEPARATE_LOADERS[symbol])  # loaded before a cached caller
        status, result = context.call_conv.call_function(builder, function, fndesc.restype, fndesc.argtypes, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        result = fix_returning_optional(context, builder, sig, status, result)
        return impl_ret_new_ref(context, builder, fndesc.restype, result)

    call.signature = tuple(fndesc.argtypes)
    call.libs = ()
    return call


# ------------------------------------------------------------------------------------------------
# calls through an address
class KernelBoundary:
    """A big kernel that other kernels call through its machine-code address instead of linking it.

    numba compiles a jitted callee into every caller: the callee's LLVM module is linked into the
    caller's, and the whole is optimized and turned into machine code again. For the pair engine
    (closed forms, SAT, GJK, EPA: megabytes of IR) that costs 5-10 s in each of the ~20 entry
    points that reach it. Behind a boundary the callee is compiled once, for one fixed signature
    (``argtypes``), and callers make an indirect call: ``boundary.call(address, (arg, ...))`` in
    kernel code, with ``address`` an int64 argument that Python passes in, obtained from
    :meth:`address` (compiles or loads the callee on first use). The caller's machine code holds
    no reference to the callee, so both are cached independently and a caller's cache stays valid
    because its module digest covers the callee's module. The indirect call costs a few
    nanoseconds and prevents inlining across the boundary: put it around work that takes
    microseconds, not around a dot product.

    Arguments must have exactly the declared types (literals are accepted for scalars); any other
    type is a compile-time TypeError naming the argument, never a call with a wrong layout. With
    NUMBA_DISABLE_JIT=1, ``call`` is a plain Python function calling the callee.

    Several kernels can implement one :class:`KernelInterface` (same argument and return types):
    a caller compiled against the interface calls whichever implementation's address it is given,
    so Python picks the smallest one that answers the call and only that one is compiled."""

    def __init__(self, dispatcher, argtypes, interface=None):
        import threading

        self.dispatcher = dispatcher
        self.argtypes = tuple(argtypes)
        self.interface = interface
        self._address = 0
        self._lock = threading.Lock()
        if interface is not None:
            self.call = interface.call
            self._python_index = interface._register_python(dispatcher)
        elif isinstance(dispatcher, CPUDispatcher):
            self.call = _address_call(dispatcher.py_func.__name__, self.argtypes,
                                      lambda: self.compile().signature.return_type)
        else:
            self.call = lambda address, arguments: dispatcher(*arguments)

    def compile(self):
        """The compile result for ``argtypes`` (compiled now, or loaded from the cache)."""
        with _compiling_for(self.dispatcher, kernel_callers_only=True):  # called by address only
            self.dispatcher.compile(self.argtypes)
        result = self.dispatcher.overloads[self.argtypes]
        if self.interface is not None and result.signature.return_type != self.interface.restype:
            raise TypeError(f"{self.dispatcher.py_func.__name__} returns {result.signature.return_type}; "
                            f"the {self.interface.name} interface declares {self.interface.restype}")
        return result

    def address(self):
        """The callee's native entry address in this process (with NUMBA_DISABLE_JIT=1: the
        implementation's number in its interface, or 0)."""
        if self._address:
            return self._address
        if not isinstance(self.dispatcher, CPUDispatcher):
            return self._python_index if self.interface is not None else 0
        with self._lock:
            if not self._address:
                result = self.compile()
                self._address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
        return self._address


class KernelInterface:
    """One kernel signature -- argument types and the return type, declared -- implemented by
    several kernels behind boundaries (``interface.implement(dispatcher)``). Callers are
    compiled against the declaration alone, so typing a caller compiles no implementation."""

    def __init__(self, name, argtypes, restype):
        self.name = name
        self.argtypes = tuple(argtypes)
        self.restype = restype
        self._python_functions = []
        if config.DISABLE_JIT:
            self.call = lambda address, arguments: self._python_functions[address - 1](*arguments)
        else:
            self.call = _address_call(name, self.argtypes, lambda: self.restype)

    def _register_python(self, function):
        self._python_functions.append(function)
        return len(self._python_functions)

    def implement(self, dispatcher):
        return KernelBoundary(dispatcher, self.argtypes, interface=self)


def _address_call(name, expected, restype_of):
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def call(typingctx, address, arguments):
        if not isinstance(address, types.Integer):
            raise TypeError(f"{name} through its address: the address must be an integer, got {address}")
        given = tuple(arguments.types) if isinstance(arguments, types.BaseTuple) else None
        if given is None or len(given) != len(expected):
            raise TypeError(f"{name} through its address takes a tuple of {len(expected)} arguments, got {arguments}")
        for index, (have, want) in enumerate(zip(given, expected)):
            plain = types.unliteral(have)
            widened = (isinstance(want, types.Integer) and isinstance(plain, (types.Integer, types.Boolean))
                       or isinstance(want, types.Float) and isinstance(plain, (types.Integer, types.Float)))
            if plain != want and not widened:
                raise TypeError(f"{name} through its address: argument {index} is {have}, the boundary takes {want}")
        restype = restype_of()

        def codegen(context, builder, signature, llargs):
            function_type = context.call_conv.get_function_type(restype, expected)
            pointer = builder.inttoptr(llargs[0], function_type.as_pointer())
            values = [context.cast(builder, value, have, want)
                      for value, have, want in zip(cgutils.unpack_tuple(builder, llargs[1], len(expected)),
                                                   given, expected)]
            status, result = context.call_conv.call_function(builder, pointer, restype, expected, values)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return result

        return restype(address, arguments), codegen

    return call
