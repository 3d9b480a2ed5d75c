"""Shape kind codes shared by the Python layer and the kernels (compile-time integer constants).

Codes are grouped by the "core" the pair engine reduces a shape to:
point core (POINT, SPHERE), linear core (SEGMENT, CAPSULE, RAY, LINE), polytope (TRIANGLE ..
POLYHEDRON), round solids (CYLINDER, CONE), planes (PLANE, HALFSPACE) and meshes.
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
PLANE = 13
HALFSPACE = 14
MESH = 15

NUM_KINDS = 16

# Result status codes (mirrored by touche.Status).
SEPARATED = 0
TOUCHING = 1
PENETRATING = 2
UNSUPPORTED = -2
