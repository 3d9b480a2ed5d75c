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

# The magnitudes touche accepts (issue 23, finding 11), enforced where shapes, poses, motions and
# query points enter (GeometryError outside). The kernels multiply up to four lengths together
# (|a x b|^2 of face normals and cross products in the closest-point, GJK and polytope kernels;
# Ericson's barycentric numerators d3 * d6 - d5 * d4), so every coordinate, translation and size
# must keep such products inside float64's normal range [2.2e-308, 1.8e308], with room for sums
# and constant factors: (1e75)^4 = 1e300 and (1e-75)^4 = 1e-300 leave a factor 1e8 at either end.
# Measured before the bounds existed: every shape class answered at a scale of 1e75 as at 1
# (scaled); at 1e80 tetrahedra, ellipsoids and polygon ray casts went wrong, at 1e-100 tetrahedra
# and hulls gave NaN, and below ~1e-160 squared lengths flushed to zero (ZeroDivisionError in the
# kernels). Zero stays a valid size where a shape allows it (a zero-length segment or capsule).
# Small is not the same as precise: gaps below ABSOLUTE still count as touching at any scale.
MAX_COORDINATE = 1e75  # largest |x| of a coordinate, translation, size or velocity
MIN_SIZE = 1e-75  # smallest non-zero size: a radius, a side, the span of a shape's vertices


def touching_tolerance(scale, offset=0.0):
    """Tolerance for deciding TOUCHING at model size ``scale``, for shapes whose poses lie up to
    ``offset`` from the world origin (largest translation component)."""
    return ABSOLUTE + RELATIVE * scale + TRANSLATION * offset
