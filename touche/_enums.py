"""The base of touche's status and kind enums: integer codes that print as their names.

Batches return statuses as int8 arrays (one byte per pair, compared and counted with numpy), so
the enums stay ``IntEnum``: ``status == 0``, ``status == Status.SEPARATED`` and
``codes == Status.TOUCHING`` all keep working. Since Python 3.11 an ``IntEnum`` member prints
and formats as its number (``print(Status.TOUCHING)`` -> ``1``); a user reading results wants
the name, so ``str()`` and ``format()`` give the name here, except for numeric format specs
(``f"{status:d}"`` / ``f"{status:03}"`` still give the number).
"""
from __future__ import annotations

import enum

import numpy as np

# format spec types that ask for a number: such specs format the integer value
_NUMERIC_TYPES = frozenset("bcdoxXneEfFgG%")


class NamedIntEnum(enum.IntEnum):
    """An ``IntEnum`` whose members print as their names (``HIT``, not ``1``)."""

    def __str__(self):
        return self.name

    def __format__(self, spec):
        if spec and (spec[-1] in _NUMERIC_TYPES or spec.lstrip("<>=^+- #").startswith("0")):
            return int.__format__(int(self), spec)
        return format(self.name, spec)

    @classmethod
    def names(cls, codes):
        """The member names of ``codes``: one code (an int or a member) gives a ``str``; an array
        of codes (a batch's int8 ``status`` / ``kind``) gives a ``str`` array of the same shape.
        A code that is not a member raises ``ValueError`` naming it."""
        if np.ndim(codes) == 0:
            return cls(int(codes)).name
        array = np.asarray(codes)
        if array.dtype.kind not in "iub":
            raise TypeError(f"{cls.__name__}.names expects integer codes, got dtype {array.dtype}")
        members = sorted(cls, key=int)
        table_names = [member.name for member in members]
        values = np.array([int(member) for member in members])
        position = np.searchsorted(values, array)
        known = (position < len(values)) & (values[np.minimum(position, len(values) - 1)] == array)
        if not known.all():
            bad = array[~known].reshape(-1)[0]
            raise ValueError(f"{int(bad)} is not a {cls.__name__} code "
                             f"(codes: {', '.join(f'{int(m)} {m.name}' for m in members)})")
        width = max(len(name) for name in table_names)
        return np.array(table_names, dtype=f"<U{width}")[position]
