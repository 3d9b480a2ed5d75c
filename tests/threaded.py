"""Running one piece of work in several threads at once, for the concurrency tests."""
from __future__ import annotations

import threading


def run_threads(work, count, timeout=120.0):
    """work(k) for k in range(count), in `count` threads released together (a barrier); returns
    the results in order. An error in any thread is re-raised; a thread that does not finish
    within `timeout` seconds fails the test instead of hanging it."""
    barrier = threading.Barrier(count)
    results, errors = [None] * count, []

    def run(k):
        try:
            barrier.wait()
            results[k] = work(k)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a thread did not finish (hang)"
    if errors:
        raise errors[0]
    return results
