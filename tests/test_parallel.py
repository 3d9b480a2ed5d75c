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


def test_a_long_batch_of_items_within_the_serial_time_stays_in_the_calling_thread(two_threads, monkeypatch):
    # many grains, but the whole batch is estimated under PARALLEL_SECONDS (cheap items)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 60.0)
    assert _run_recording(400, grain=2) == {threading.get_ident()}


def test_a_batch_of_dear_items_is_shared_after_its_first_chunk(two_threads, monkeypatch):
    # a first chunk of 5 ms: past PROBE_SECONDS, and the rest estimated past PARALLEL_SECONDS
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 1e-3)
    used = _run_recording(12, grain=3)
    assert threading.get_ident() in used and len(used) == 2


def test_a_first_chunk_shorter_than_the_probe_time_does_not_decide(two_threads, monkeypatch):
    # a first chunk whose cost is mostly the call itself: its time per item says nothing yet
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 60.0)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 1e-9)
    assert _run_recording(12, grain=3) == {threading.get_ident()}


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


class _FakeClock:
    """perf_counter for _parallel.run: advanced by the recorded kernel, so chunk sizes do not
    depend on this machine's speed."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def _chunks_with_costs(monkeypatch, count, grain, call_cost, item_cost):
    clock = _FakeClock()
    monkeypatch.setattr(_parallel, "time", clock)
    chunks = []
    seen = np.zeros(count, dtype=np.int64)

    def work(lo, hi):
        chunks.append(hi - lo)
        seen[lo:hi] += 1
        clock.now += call_cost + item_cost * (hi - lo)

    _parallel.run(work, count, grain=grain)
    assert (seen == 1).all()
    return chunks


def test_cheap_items_take_few_serial_calls(two_threads, monkeypatch):
    # far mesh pairs: ~0.1 us of work per item against ~2 us per kernel call. The second chunk is
    # sized from the first one's time per item to fill PROBE_SECONDS (20 us): 1, 9, then the rest,
    # where plain doubling took 1, 2, 4, 8, 9 (five calls, ~10 us of call overhead)
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 20e-6)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 100e-6)
    chunks = _chunks_with_costs(monkeypatch, 24, 4, 2e-6, 0.1e-6)
    assert chunks == [1, 9, 14]


def test_dear_items_still_leave_for_the_pool_after_the_first_chunk(two_threads, monkeypatch):
    # contact pairs (~50 us each): the first item is past PROBE_SECONDS and the rest is estimated
    # past PARALLEL_SECONDS, so the pool takes it (the calling thread takes chunks too)
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 20e-6)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 100e-6)
    chunks = _chunks_with_costs(monkeypatch, 24, 4, 2e-6, 50e-6)
    assert chunks[0] == 1 and len(chunks) > 2 and max(chunks[1:]) <= 6  # 23 items in grains of 4-6


def test_serial_chunks_never_shrink(two_threads, monkeypatch):
    # items whose cost grows along the batch: every chunk still at least doubles
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 1.0)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 1e9)
    chunks = _chunks_with_costs(monkeypatch, 200, 8, 1e-6, 1e-3)
    assert all(later >= 2 * earlier for earlier, later in zip(chunks[:-2], chunks[1:-1]))


def test_one_dear_item_in_front_does_not_send_a_cheap_batch_to_the_pool(two_threads, monkeypatch):
    # a pose in contact first (30 us), then far poses (2 us each): the rest is ~50 us of work,
    # under PARALLEL_SECONDS; judged on the first item alone it looked like 23 x 30 us
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 20e-6)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 200e-6)
    clock = _FakeClock()
    monkeypatch.setattr(_parallel, "time", clock)
    threads = set()
    seen = np.zeros(24, dtype=np.int64)

    def work(lo, hi):
        threads.add(threading.get_ident())
        seen[lo:hi] += 1
        clock.now += 2e-6 + sum(30e-6 if k == 0 else 2e-6 for k in range(lo, hi))

    _parallel.run(work, 24, grain=4)
    assert (seen == 1).all() and threads == {threading.get_ident()}


def test_a_first_item_past_the_parallel_time_decides_at_once(two_threads, monkeypatch):
    # mesh distances in contact (~300 us each): no second serial chunk before the pool
    monkeypatch.setattr(_parallel, "PROBE_SECONDS", 20e-6)
    monkeypatch.setattr(_parallel, "PARALLEL_SECONDS", 200e-6)
    chunks = _chunks_with_costs(monkeypatch, 24, 1, 2e-6, 300e-6)
    assert chunks[0] == 1 and sum(chunks) == 24 and len(chunks) == 1 + 8  # then 4 chunks per thread
