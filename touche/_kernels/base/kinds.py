"""Shape kind codes shared by the Python layer and the kernels (compile-time integer constants).

Codes are grouped by the "core" the pair engine reduces a shape to:
point core (POINT, SPHERE), linear core (SEGMENT, CAPSULE, RAY, LINE), polytope (TRIANGLE ..
POLYHEDRON), smooth convex solids (CYLINDER, CONE, ELLIPSOID: support mapping only), planes
(PLANE, HALFSPACE) and meshes.
"""
POINT = 0
SPHERE = 1
SEGMENT = 2
CAPSULE = 3
RAY = 4
LINE = 5
TRIANGLE = 6
TETRAHEDRON = 7
BOX = 8
POLYGON = 9
POLYHEDRON = 10
CYLINDER = 11
CONE = 12
ELLIPSOID = 13
ROUNDED = 14
TAPERED_CAPSULE = 15
PLANE = 16
HALFSPACE = 17
MESH = 18

NUM_KINDS = 19

# A ROUNDED shape (touche.Rounded) is a core shape swept by a ball: params = [radius, core kind,
# the core's own params...]; points, triangles and edges are the core's. Kernels unwrap it
# (support.unwrap_rounded), answer for the core and add the radius, as they do for the point core of
# a sphere and the segment core of a capsule.
ROUNDED_HEADER = 2

# Result status codes (mirrored by touche.Status).
SEPARATED = 0
TOUCHING = 1
PENETRATING = 2
UNSUPPORTED = -2

# time_of_impact status codes (mirrored by touche.ImpactStatus).
MISS = 0
HIT = 1
ALREADY_TOUCHING = 2  # touching or overlapping at t = 0
TOI_MAX_ITERATIONS = 3  # an iterative cast did not converge (its time is a lower bound)

# Kinds of a contact / intersection set (mirrored by touche.SetKind): the number of distinct
# points decides it (a convex polygon has >= 3 vertices in one plane; a polyhedron is solid).
SET_EMPTY = 0
SET_POINT = 1
SET_SEGMENT = 2
SET_POLYGON = 3
SET_POLYHEDRON = 4

# GJK status codes (mirrored by touche.GJKStatus).
GJK_SEPARATED = 0
GJK_TOUCHING = 1
GJK_PENETRATING = 2
GJK_MAX_ITERATIONS = 3
GJK_DEGENERATE = 4
