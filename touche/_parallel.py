"""Batches over the machine's cores: Python threads running serial, nogil kernels on chunks.

Every batch kernel is a plain serial ``@njit(cache=True, nogil=True)`` loop over ``range(lo, hi)``
(its last two arguments); ``run(kernel, count, *args)`` cuts ``[0, count)`` into chunks and lets
a small thread pool and the calling thread take chunks until none is left. Why not numba's
``parallel=True`` / ``prange``:
- compile time: a parfor compiles the loop body as a separate gufunc and links the whole callee
  engine into it again; a serial loop is one ordinary compilation (the cold-start issue measured
  20-30 s per parallel driver);
- a busy machine: numba's threading layers split the loop statically and wait at a barrier for
  every worker, so one descheduled thread stalls the whole call; here an idle thread takes the
  remaining chunks (dynamic scheduling), and small batches never leave the calling thread;
- processes and threads: no OpenMP / TBB / workqueue runtime to fork or to enter from several
  Python threads (the workqueue layer aborts on concurrent entry); the pool is recreated in a
  forked child.
The kernels release the GIL (``nogil=True``), so the threads run truly in parallel.

Threads: ``TOUCHE_NUM_THREADS`` or :func:`set_num_threads`, default the cores this process may
use. A batch call made from inside a pool thread runs serially (no nested waiting on the pool).
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time

_lock = threading.Lock()
_pool = None
_pool_size = 0
_threads = None
_local = threading.local()

# The pool takes the rest of a batch only when that rest is estimated (from the time per item
# of the part done so far) to take at least this long in the calling thread. Handing chunks to
# the pool costs 30-60 us on a quiet machine (benchmarks/bench_batch_vs_loop.py) and 50-130 us on
# a shared one, where the helper thread may not run at all for a while: measured on this 2-core
# VM (a compiled loop of known cost, serial against the pool at once, medians of 30), 110 us of
# work took 1.25-1.56x as long through the pool, 220 us 0.75-1.28x, 450 us 0.68-1.17x. Two
# threads can save at most half the rest, so a rest under ~2x the hand-off is not worth the risk:
# a far mesh-mesh batch of 24 (~90 us) went to the pool at 100 us and lost to a loop of single
# calls. 0 turns the serial start off (everything to the pool at once).
PARALLEL_SECONDS = 200e-6
# ... and only once the serial start has run this long: a first chunk's time per item includes
# the kernel call's own cost (2-3 us to unbox a mesh kernel's arguments), which makes cheap items
# (far mesh pairs, ~0.7 us) look several times dearer than they are, and sent a batch of 24 of
# them to the pool (1.3x slower than 24 single calls: bench_batch_vs_loop.py)
PROBE_SECONDS = 20e-6


def _default_threads():
    value = os.environ.get("TOUCHE_NUM_THREADS")
    if value:
        try:
            threads = int(value)
        except ValueError:
            raise ValueError(f"TOUCHE_NUM_THREADS must be a positive integer, got {value!r}") from None
        if threads < 1:
            raise ValueError(f"TOUCHE_NUM_THREADS must be a positive integer, got {value!r}")
        return threads
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def get_num_threads():
    """Threads a batch call uses (the calling thread included)."""
    global _threads
    if _threads is None:
        _threads = _default_threads()
    return _threads


def set_num_threads(threads):
    """Use ``threads`` threads (>= 1) for batch calls from now on."""
    global _threads
    threads = int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    _threads = threads


@contextlib.contextmanager
def serial():
    """Inside this block, batch calls made from this thread run in this thread only (no pool
    hand-off): for callers that already run one batch per core themselves, such as a Dask
    worker thread (touche.distributed), where the pool would only oversubscribe the cores.
    The results are the same either way (every item is computed alone)."""
    previous = getattr(_local, "inside", False)
    _local.inside = True
    try:
        yield
    finally:
        _local.inside = previous


def _get_pool(workers):
    global _pool, _pool_size
    from concurrent.futures import ThreadPoolExecutor  # not at import: ``import touche`` stays light

    with _lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="touche")
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _forget_pool_after_fork():
    # the child has none of the parent's threads: a new pool is made on first use
    global _pool, _pool_size, _lock
    _pool = None
    _pool_size = 0
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _drain(kernel, args, bounds, tickets):
    _local.inside = True
    try:
        for ticket in tickets:  # itertools.count: next() is atomic under the GIL
            if ticket >= len(bounds) - 1:
                return
            kernel(*args, bounds[ticket], bounds[ticket + 1])
    finally:
        _local.inside = False


def run(kernel, count, *args, grain=256):
    """``kernel(*args, lo, hi)`` for chunks covering ``[0, count)``, in parallel.

    ``grain``: the smallest chunk worth a thread hand-off (items per chunk); cheap kernels pass a
    large grain, expensive ones (meshes, time of impact) a small one. Batches of at most ``grain``
    items run in the calling thread, and so does the start of every longer batch: a first chunk of
    a quarter grain, then chunks at least twice as large each time until PROBE_SECONDS have passed,
    two chunks have run (or one that alone took PARALLEL_SECONDS) and the rest is estimated to take
    PARALLEL_SECONDS or more; the rest is shared with the pool (the cost of an item is measured,
    not guessed: the same kernel costs microseconds on far meshes and milliseconds in contact).
    Exceptions from the kernel propagate."""
    count = int(count)
    if count <= 0:
        return
    if count == 1:  # one item never goes to the pool: skip its bookkeeping (single-query callers)
        kernel(*args, 0, 1)
        return
    threads = get_num_threads()
    grain = max(1, int(grain))
    if threads == 1 or count <= grain or getattr(_local, "inside", False):
        kernel(*args, 0, count)
        return
    done = 0
    chunk = max(1, grain // 4)
    chunks = 0
    started = time.perf_counter()
    while PARALLEL_SECONDS > 0.0 and done < count:
        end = min(count, done + chunk)
        chunk_started = time.perf_counter()
        kernel(*args, done, end)
        now = time.perf_counter()
        # the time per item: the lower of the whole serial start's and the last chunk's. One dear
        # item at the front (a pose in contact among far ones: 27 us against 2-4 us) made the
        # whole batch look dear and sent it to the pool, where it lost to a loop of single calls
        per_item = min((now - started) / end, (now - chunk_started) / (end - done))
        done = end
        chunks += 1
        elapsed = now - started
        # decide after two chunks, or after one that alone took PARALLEL_SECONDS (clearly dear)
        if (elapsed >= PROBE_SECONDS and (chunks >= 2 or elapsed >= PARALLEL_SECONDS)
                and (count - done) * per_item >= PARALLEL_SECONDS):
            break
        # the next chunk: twice the last, or as many items as fit in PROBE_SECONDS at the time
        # per item so far when that is more. Cheap items (far mesh pairs, ~0.1 us against the
        # 2-3 us of a kernel call) then take 2-3 calls instead of one per doubling; the time
        # per item includes the calls' own cost, so the chunk stays within PROBE_SECONDS of work
        chunk = max(2 * chunk, int(PROBE_SECONDS / max(per_item, 1e-12)))
    left = count - done
    if left <= grain:
        if left:
            kernel(*args, done, count)
        return
    # several chunks per thread, so that a thread that runs late (a busy core) delays little
    n_chunks = min(-(-left // grain), 4 * threads)
    bounds = [done + left * k // n_chunks for k in range(n_chunks + 1)]
    tickets = itertools.count()
    helpers = min(threads, n_chunks) - 1
    pool = _get_pool(helpers)
    futures = [pool.submit(_drain, kernel, args, bounds, tickets) for _ in range(helpers)]
    error = None
    try:
        _drain(kernel, args, bounds, tickets)
    except BaseException as caught:  # wait for the helpers before raising
        error = caught
    for future in futures:
        if future.cancel():  # its thread never started (a busy core): nothing of it to wait for
            continue
        try:
            future.result()
        except BaseException as caught:
            error = error or caught
    if error is not None:
        raise error
