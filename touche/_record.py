"""The base of touche's result objects: named fields and nothing else to write.

A result class lists its fields in ``__slots__`` (the order the constructor takes them in) and
the trailing ones that may be left out in ``_optional`` (they default to None); it adds its own
docstring, derived properties and ``_describe`` (what its repr shows of one result; a batch,
recognised by ``_batch_field`` holding an array, shows as ``Name(batch of n)``). Slots keep
results small and make pickle and copy work without further code.
"""
import numpy as np


class Record:
    """Fields from ``__slots__``, given positionally in that order or by name."""

    __slots__ = ()
    _optional = ()
    _batch_field = None  # a field that holds an array exactly when the result is a batch

    def __init__(self, *values, **named):
        fields = self.__slots__
        if named or len(values) != len(fields):
            self._fill(values, named)
            return
        for name, value in zip(fields, values):
            setattr(self, name, value)

    def _fill(self, values, named):
        fields = self.__slots__
        if len(values) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, got {len(values)}")
        for name, value in zip(fields, values):
            setattr(self, name, value)
        for name in fields[len(values):]:
            if name in named:
                setattr(self, name, named.pop(name))
            elif name in self._optional:
                setattr(self, name, None)
            else:
                raise TypeError(f"{type(self).__name__} is missing the field {name!r}")
        if named:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(named))}")

    def _describe(self):
        return ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)

    def __repr__(self):
        # the public result class a private subclass stands in for (not a mixin such as DistanceBuffer)
        name = next(cls.__name__ for cls in type(self).__mro__
                    if issubclass(cls, Record) and not cls.__name__.startswith("_"))
        if self._batch_field is not None:
            batch = getattr(self, self._batch_field)
            if np.ndim(batch) > 0:
                return f"{name}(batch of {len(batch)})"
        return f"{name}({self._describe()})"


class DistanceBuffer:
    """Distance fields read from the (10,) or longer buffer a single-pair kernel filled
    (signed distance, point_a, point_b, normal): a result class mixes it in before its public
    base, whose slots these properties stand in for, and sets ``_buffer``. The points are views
    made on access, cheaper than building four objects on every call."""

    __slots__ = ()

    @property
    def signed_distance(self):
        return float(self._buffer[0])

    @property
    def point_a(self):
        return self._buffer[1:4]

    @property
    def point_b(self):
        return self._buffer[4:7]

    @property
    def normal(self):
        return self._buffer[7:10]
