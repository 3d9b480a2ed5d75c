"""Locks for objects that many threads query and some threads change (worlds, broad phases).

``ReadWriteLock``: any number of readers at once, or one writer. Queries read, so they run in
parallel (the kernels release the GIL); mutations and lazy rebuilds write, so they see no reader
and no other writer. Rules:
- a writer may write again and may read (re-entrant in its thread: a world's step callback may
  query or change the world);
- a reader may read again, but may not start writing (it would wait for itself): that raises
  ``RuntimeError`` instead of hanging. Code that finds stale lazy state while reading releases
  its read, writes, and reads again (``read_fresh``);
- waiting writers block new readers (no writer starves under a stream of queries).

Fork: a lock copied into a child process mid-read by a thread of the parent is released in the
child (that thread does not exist there; reads changed nothing); one held mid-write by another
thread is *poisoned*, because its object may be half-changed: every later use raises
:class:`ForkedWhileWriting` telling the user to fork at a quiet moment or use ``spawn``. A lock
pickles / copies as a new, free lock.
"""
from __future__ import annotations

import os
import threading
import weakref
from _thread import get_ident

from .errors import ToucheError


class ForkedWhileWriting(ToucheError, RuntimeError):
    """The object was being changed by another thread when this process was forked."""


_ALL = weakref.WeakSet()


class ReadWriteLock:
    __slots__ = ("_mutex", "_cond", "_readers", "_writer", "_write_depth", "_writers_waiting", "_poisoned",
                 "__weakref__")

    def __init__(self):
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)  # waits release _mutex
        self._readers = {}  # thread ident -> read depth
        self._writer = None  # ident of the writing thread
        self._write_depth = 0
        self._writers_waiting = 0
        self._poisoned = False
        _ALL.add(self)

    def __reduce__(self):
        return (type(self), ())

    def _refuse(self):
        raise ForkedWhileWriting(
            "this object was being changed by another thread when the process forked; its copy in "
            "this process is unusable: fork when no thread changes it, or use the 'spawn' start method")

    # The read path is the hot one (every query): the plain mutex, no Condition call unless a
    # writer is involved.
    def acquire_read(self):
        me = get_ident()
        with self._mutex:
            if self._poisoned:
                self._refuse()
            depth = self._readers.get(me, 0)
            if depth or self._writer == me:  # nested: never wait (waiting writers would wait for us)
                self._readers[me] = depth + 1
                return
            while self._writer is not None or self._writers_waiting:
                self._cond.wait()
                if self._poisoned:
                    self._refuse()
            self._readers[me] = 1

    def release_read(self):
        me = get_ident()
        with self._mutex:
            depth = self._readers[me] - 1
            if depth:
                self._readers[me] = depth
                return
            del self._readers[me]
            if self._writers_waiting:
                self._cond.notify_all()

    def acquire_write(self):
        me = get_ident()
        with self._mutex:
            if self._poisoned:
                self._refuse()
            if self._writer == me:
                self._write_depth += 1
                return
            if me in self._readers:
                raise RuntimeError("a thread reading this object cannot start changing it (it would wait for itself)")
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
                    if self._poisoned:
                        self._refuse()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._write_depth = 1

    def release_write(self):
        with self._mutex:
            self._write_depth -= 1
            if not self._write_depth:
                self._writer = None
                self._cond.notify_all()

    def read(self):
        """Context: hold the read lock."""
        return _Held(self, None, None)

    def write(self):
        """Context: hold the write lock."""
        return _Writing(self)

    def read_fresh(self, is_fresh, refresh):
        """Context: the read lock, after making lazy state current: while ``is_fresh()`` is False
        (checked under the read lock), ``refresh()`` runs under the write lock (one thread does
        it; the others find it done)."""
        return _Held(self, is_fresh, refresh)

    def _after_fork_in_child(self):
        me = get_ident()  # the forking thread keeps its ident in the child
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = {me: self._readers[me]} if me in self._readers else {}
        self._writers_waiting = 0
        if self._writer is not None and self._writer != me:
            self._poisoned = True
            self._writer, self._write_depth = None, 0


class _Held:
    __slots__ = ("lock", "is_fresh", "refresh")

    def __init__(self, lock, is_fresh, refresh):
        self.lock, self.is_fresh, self.refresh = lock, is_fresh, refresh

    def __enter__(self):
        lock = self.lock
        lock.acquire_read()
        if self.is_fresh is None:
            return
        try:
            while not self.is_fresh():
                lock.release_read()
                try:
                    lock.acquire_write()
                    try:
                        if not self.is_fresh():
                            self.refresh()
                    finally:
                        lock.release_write()
                finally:
                    lock.acquire_read()
        except BaseException:
            lock.release_read()
            raise

    def __exit__(self, *exc):
        self.lock.release_read()
        return False


class _Writing:
    __slots__ = ("lock",)

    def __init__(self, lock):
        self.lock = lock

    def __enter__(self):
        self.lock.acquire_write()

    def __exit__(self, *exc):
        self.lock.release_write()
        return False


def _reset_after_fork():
    for lock in list(_ALL):
        lock._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


class Lock(ReadWriteLock):
    """A re-entrant mutex (the write side of a ReadWriteLock: same fork and pickling rules), for
    stateful helper objects such as ``touche.bvh.CoherentPair``."""

    __slots__ = ()

    def __enter__(self):
        self.acquire_write()
        return self

    def __exit__(self, *exc):
        self.release_write()
        return False
