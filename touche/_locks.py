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
from contextlib import contextmanager

from .errors import ToucheError


class ForkedWhileWriting(ToucheError, RuntimeError):
    """The object was being changed by another thread when this process was forked."""


_ALL = weakref.WeakSet()


class ReadWriteLock:
    __slots__ = ("_cond", "_readers", "_writer", "_write_depth", "_writers_waiting", "_poisoned", "__weakref__")

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._readers = {}  # thread ident -> read depth
        self._writer = None  # ident of the writing thread
        self._write_depth = 0
        self._writers_waiting = 0
        self._poisoned = False
        _ALL.add(self)

    def __reduce__(self):
        return (ReadWriteLock, ())

    def _check(self):
        if self._poisoned:
            raise ForkedWhileWriting(
                "this object was being changed by another thread when the process forked; its copy in "
                "this process is unusable: fork when no thread changes it, or use the 'spawn' start method")

    def acquire_read(self):
        me = threading.get_ident()
        with self._cond:
            self._check()
            depth = self._readers.get(me, 0)
            if depth or self._writer == me:  # nested: never wait (waiting writers would wait for us)
                self._readers[me] = depth + 1
                return
            while self._writer is not None or self._writers_waiting:
                self._cond.wait()
                self._check()
            self._readers[me] = 1

    def release_read(self):
        me = threading.get_ident()
        with self._cond:
            depth = self._readers[me] - 1
            if depth:
                self._readers[me] = depth
            else:
                del self._readers[me]
                self._cond.notify_all()

    def acquire_write(self):
        me = threading.get_ident()
        with self._cond:
            self._check()
            if self._writer == me:
                self._write_depth += 1
                return
            if me in self._readers:
                raise RuntimeError("a thread reading this object cannot start changing it (it would wait for itself)")
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
                    self._check()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._write_depth = 1

    def release_write(self):
        with self._cond:
            self._write_depth -= 1
            if not self._write_depth:
                self._writer = None
                self._cond.notify_all()

    @contextmanager
    def read(self):
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self):
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()

    @contextmanager
    def read_fresh(self, is_fresh, refresh):
        """Read, after making lazy state current: while ``is_fresh()`` is False (checked under
        the read lock), ``refresh()`` runs under the write lock (one thread does it; the others
        find it done)."""
        self.acquire_read()
        try:
            while not is_fresh():
                self.release_read()
                try:
                    with self.write():
                        if not is_fresh():
                            refresh()
                finally:
                    self.acquire_read()
            yield
        finally:
            self.release_read()

    def _after_fork_in_child(self):
        me = threading.get_ident()  # the forking thread keeps its ident in the child
        self._cond = threading.Condition(threading.Lock())
        self._readers = {me: self._readers[me]} if me in self._readers else {}
        self._writers_waiting = 0
        if self._writer is not None and self._writer != me:
            self._poisoned = True
            self._writer, self._write_depth = None, 0


def _reset_after_fork():
    for lock in list(_ALL):
        lock._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


class Lock(ReadWriteLock):
    """A re-entrant mutex (the write side of a ReadWriteLock: same fork and pickling rules), for
    stateful helper objects such as ``touche.bvh.CoherentPair``."""

    __slots__ = ()

    def __reduce__(self):
        return (Lock, ())

    def __enter__(self):
        self.acquire_write()
        return self

    def __exit__(self, *exc):
        self.release_write()
        return False
