"""The one place tolerances come from.

``ABSOLUTE`` is the distance below which two shapes of unit size are reported TOUCHING rather than
SEPARATED / PENETRATING. Queries scale it by the size of the shapes involved (Ericson 11.3.1,
combined absolute/relative tolerance): ``touching_tolerance(scale) = ABSOLUTE * max(1, scale)``.
Booleans never use it: ``intersects`` is exact on the computed values (closed sets, touching is
intersecting).
"""
ABSOLUTE = 1e-12
RELATIVE = 1e-12
# Added per unit of distance of a pose from the world origin: the rounding of coordinates that
# large (64 units in the last place, 2**-46 ~ 1.4e-14), not a share of them. Pairs are solved in
# the frame of one shape, so their answers are as exact at 1e12 from the origin as at the origin
# up to that rounding; RELATIVE x the translation (1.0 at 1e12) hid real gaps.
TRANSLATION = 2.0 ** -46

# Axis of an edge-edge cross product is skipped as "parallel" below this relative squared length.
PARALLEL_SQ = 1e-12

# The OBB-OBB robustness term of Ericson 4.4.2, added to |R_ij|.
OBB_EPSILON = 1e-12

# A pose matrix is rigid when R^T R = I within this (and det R > 0).
RIGID = 1e-6


def touching_tolerance(scale, offset=0.0):
    """Tolerance for deciding TOUCHING at model size ``scale``, for shapes whose poses lie up to
    ``offset`` from the world origin (largest translation component)."""
    return ABSOLUTE + RELATIVE * scale + TRANSLATION * offset
