"""touche._parallel.run: every item once, the calling thread alone for short batches, the pool
for long ones (the timing threshold is set by the tests, so none of them depends on the
machine's speed)."""
import threading

import numpy as np
import pytest

from touche import _parallel


@pytest.fixture
def two_threads():
    _parallel.set_num_threads(2)
    yield
    _parallel.set_num_threads(_parallel._default_threads())


def _run_recording(count, grain):
    threads = []
    seen = np.zeros(count, dtype=np.int64)

    def work(lo, hi):
        threads.append(threading.get_ident())
        seen[lo:hi] += 1
        threading.Event().wait(0.005)  # a sleep: lets the other thread take chunks

    _parallel.run(work, count, grain=grain)
    assert (seen == 1).all()
    return set(threads)


def test_a_batch_within_the_serial_time_stays_in_the_calling_thread(two_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 60.0)
    assert _run_recording(11, grain=3) == {threading.get_ident()}  # fewer than 4 grains


def test_a_batch_of_four_grains_or_more_goes_to_the_pool_at_once(two_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 60.0)
    used = _run_recording(12, grain=3)
    assert threading.get_ident() in used and len(used) == 2


def test_a_batch_past_the_serial_time_is_shared_with_the_pool(two_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 0.0)
    used = _run_recording(400, grain=2)
    assert threading.get_ident() in used and len(used) == 2


def test_growing_serial_chunks_then_the_pool_cover_every_item(two_threads, monkeypatch):
    for serial in (0.0, 0.0005, 0.002, 60.0):
        monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", serial)
        for count, grain in ((1, 1), (5, 1), (97, 3), (1000, 7)):
            seen = np.zeros(count, dtype=np.int64)

            def mark(lo, hi):
                seen[lo:hi] += 1

            _parallel.run(mark, count, grain=grain)
            assert (seen == 1).all(), (serial, count, grain)


def test_both_runs_the_two_calls_on_two_threads_and_batches_inside_stay_serial(two_threads):
    seen = {}

    def call(name):
        def work():
            seen[name] = threading.get_ident()
            inner = set()
            _parallel.run(lambda lo, hi: inner.add(threading.get_ident()), 10_000, grain=1)
            assert inner == {seen[name]}  # a batch inside either call stays in its thread
            return name
        return work

    assert _parallel.both(call("first"), call("second")) == ("first", "second")
    assert seen["first"] == threading.get_ident() and seen["second"] != seen["first"]


def test_both_is_serial_with_one_thread_and_propagates_errors(two_threads):
    _parallel.set_num_threads(1)
    order = []
    assert _parallel.both(lambda: order.append(1) or 1, lambda: order.append(2) or 2) == (1, 2)
    assert order == [1, 2]
    _parallel.set_num_threads(2)
    finished = []

    def fails():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        _parallel.both(fails, lambda: finished.append(True))
    assert finished == [True]  # the other call finished before the error was raised
    with pytest.raises(ZeroDivisionError):
        _parallel.both(lambda: 1, lambda: 1 / 0)
