"""The base of touche's result objects: named fields and nothing else to write.

A result class lists its fields in ``__slots__`` (the order the constructor takes them in) and
the trailing ones that may be left out in ``_optional`` (they default to None); it adds its own
docstring, derived properties and ``_describe`` (what its repr shows of one result; a batch,
recognised by ``_batch_field`` holding an array, shows as ``Name(batch of n)``). Slots keep
results small and make pickle and copy work without further code.
"""
import numpy as np


def _fields_init(cls, fields, optional):
    """An ``__init__`` taking ``fields`` positionally or by name, the trailing ``optional`` ones
    defaulting to None, written out as plain assignments (as dataclasses does): a generic
    ``setattr`` loop costs ~0.5 us more per result, which single-pair verbs pay on every call."""
    required = len(fields)
    while required and fields[required - 1] in optional:
        required -= 1
    parameters = [name if k < required else f"{name}=None" for k, name in enumerate(fields)]
    body = "".join(f"\n    self.{name} = {name}" for name in fields) or "\n    pass"
    namespace = {}
    exec(f"def __init__(self, {', '.join(parameters)}):{body}", {}, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


class Record:
    """Fields from ``__slots__``, given positionally in that order or by name."""

    __slots__ = ()
    _optional = ()
    _batch_field = None  # a field that holds an array exactly when the result is a batch

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fields = cls.__dict__.get("__slots__")
        if isinstance(fields, str):
            fields = (fields,)
        if fields and "__init__" not in cls.__dict__:
            cls.__init__ = _fields_init(cls, tuple(fields), cls._optional)

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
