"""Exceptions raised at the public boundary."""


class ToucheError(Exception):
    """Base class of every touche exception."""


class GeometryError(ToucheError, ValueError):
    """Invalid geometry or argument: NaN/inf, negative or zero sizes, degenerate input, bad shapes."""


class UnsupportedQuery(ToucheError, NotImplementedError):
    """No kernel answers this query for this pair of shapes (yet)."""

    def __init__(self, verb, a, b=None):
        names = type(a).__name__ if b is None else f"{type(a).__name__} and {type(b).__name__}"
        super().__init__(f"touche.{verb} is not supported for {names}")
        self.verb = verb

    def __reduce__(self):
        # pickled with its message (it crosses process boundaries: dask workers, warmup workers);
        # the shapes it was made from are not kept
        return (_unsupported_query, (self.verb, str(self)))


def _unsupported_query(verb, message):
    error = UnsupportedQuery.__new__(UnsupportedQuery)
    Exception.__init__(error, message)
    error.verb = verb
    return error


class MeshFormatError(ToucheError, ValueError):
    """A mesh file that cannot be read: truncated, inconsistent counts, NaN/inf coordinates,
    unknown format. The message names the file and the problem."""


class RobotModelError(ToucheError, ValueError):
    """A robot description (URDF / SRDF) that cannot be used: unreadable XML, a missing mesh, an
    unknown or unsupported joint type, a cycle, NaN limits... The message names the file and the
    element (link, joint, mesh file) at fault."""
