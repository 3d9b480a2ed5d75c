"""Which engine answers which query: one registry, ``(verb, kind_a, kind_b) -> Route``.

Every public verb looks its pair up here before it touches a kernel: an unregistered pair raises
:class:`touche.UnsupportedQuery` naming the verb and both shapes, a registered one names the
engine (the code path that answers it) and whether that engine takes the two shapes the other
way round (``flip``). ``SUPPORTED_PAIRS``, the verbs' routing (touche.query, touche.contacts, touche.impact),
the checks of touche.world and the ``touche`` command, warmup's closed-form step and the tests'
enumerations all read this table; nothing else lists pairs.

Keys. The pair verbs key on the two shapes' kinds (``touche._kernels.base.kinds``). The one-shape
verbs key on the query they answer: ``closest_point`` is (POINT, kind) -- a point against the
shape -- and ``raycast`` is (RAY, kind). ``time_of_impact`` is routed by the motions too, so it
is four verbs here, one per motion family (:func:`motion_family`): both translating
(``time_of_impact[translation]``), some other rigid motion (``[rigid]``), a CallableMotion
(``[callable]``) and a QuadraticMatrix (``[quadratic]``).

Registration. Each pair is registered once, in the order its engine takes it, and the mirrored
entry (kind_b, kind_a) is filled from it. When the engine has a canonical order (the
shape-vs-mesh tree, the time-of-impact closed forms, advancement against a plane or of a mesh:
``ordered=True``) the mirror gets ``flip=True`` and the verb swaps the two shapes before the call
(and the answer back after it). Engines that take either order themselves (the pair engine, the
closed forms of fastpaths.py, the manifold builder, the moving SAT, GJK casting) get the same
route both ways, ``flip=False``. A new pair is one ``_register`` line below plus its engine; a
new kind also joins the categories.

Some refusals depend on the arguments, not the kinds, and stay with the engines: raycast
``mode="all"`` (meshes only), a CallableMotion or a rotating motion given to a plane, a batch of
CallableMotion against a mesh, a QuadraticMatrix beside a rotating motion.

This module is plain Python over integer codes (no numba), imported with ``import touche``.
"""
from __future__ import annotations

from typing import NamedTuple

from ._kernels import kinds
from .errors import UnsupportedQuery

# ----------------------------------------------------------------------------------------------
# kind categories (every other module takes its sets of kinds from here)
ALL_KINDS = frozenset(range(kinds.NUM_KINDS))
# The pair engine (touche/_kernels/narrow/pairs.py) reduces a shape to a "core" and compares kind codes
# by range to find it, so these categories are also contiguous ranges of codes, in this order
# (ENGINE_ORDER; tests/test_dispatch.py checks it).
POINT_CORE = frozenset((kinds.POINT, kinds.SPHERE))  # a point, plus a radius for the sphere
LINEAR_CORE = frozenset((kinds.SEGMENT, kinds.CAPSULE, kinds.RAY, kinds.LINE))  # p + t d, t in an interval
POLYTOPES = frozenset((kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX, kinds.POLYGON, kinds.POLYHEDRON))
# curved solids known by their support mapping only (a Rounded shape: its core's, plus a ball):
# every code from CYLINDER up to the planes, so a new support-mapped kind numbered there needs
# no entry here
SMOOTH = frozenset(range(kinds.CYLINDER, kinds.PLANE))
PLANES = frozenset((kinds.PLANE, kinds.HALFSPACE))  # half-space-like: one unbounded plane
MESHES = frozenset((kinds.MESH,))
ENGINE_ORDER = (POINT_CORE, LINEAR_CORE, POLYTOPES, SMOOTH, PLANES, MESHES)

# Rounded shapes: a core swept by a ball (the radius is params[0] and adds to every distance):
# spheres (a point core), capsules (a segment core) and touche.Rounded (any finite convex core).
ROUNDED = frozenset((kinds.SPHERE, kinds.CAPSULE, kinds.ROUNDED))
# Kinds whose params[0] is a radius about their packed points (rounded shapes, and the discs of
# cylinders and cones): it enters their size and bounding balls.
RADIUS_PARAM = ROUNDED | frozenset((kinds.CYLINDER, kinds.CONE))
UNBOUNDED_LINEAR = frozenset((kinds.RAY, kinds.LINE))
UNBOUNDED = UNBOUNDED_LINEAR | PLANES
FINITE_LINEAR = LINEAR_CORE - UNBOUNDED_LINEAR  # segments and capsules
FINITE_CONVEX = POINT_CORE | FINITE_LINEAR | POLYTOPES | SMOOTH
CONVEX = ALL_KINDS - MESHES
# Points and lines have no area: a ray meets them only on a set of measure zero, so raycast does
# not take them.
NO_AREA = frozenset((kinds.POINT, kinds.SEGMENT, kinds.RAY, kinds.LINE))

# ----------------------------------------------------------------------------------------------
# verbs
INTERSECTS = "intersects"
DISTANCE = "distance"
SIGNED_DISTANCE = "signed_distance"
CLOSEST_POINT = "closest_point"  # keyed (POINT, kind)
RAYCAST = "raycast"  # keyed (RAY, kind)
CONTACTS = "contacts"
INTERSECTION = "intersection"

# motion families of time_of_impact (touche.motion classes)
TRANSLATION = "translation"  # Static / Linear on both sides
RIGID = "rigid"  # Screw, Keyframes, Integrated (with Static / Linear)
CALLABLE = "callable"  # a CallableMotion on either side
QUADRATIC = "quadratic"  # a QuadraticMatrix on either side
MOTION_FAMILIES = (TRANSLATION, RIGID, CALLABLE, QUADRATIC)
TIME_OF_IMPACT = {family: f"time_of_impact[{family}]" for family in MOTION_FAMILIES}

VERBS = (INTERSECTS, DISTANCE, SIGNED_DISTANCE, CLOSEST_POINT, RAYCAST, CONTACTS, INTERSECTION,
         *TIME_OF_IMPACT.values())

# ----------------------------------------------------------------------------------------------
# engines: the code path behind a route (the module that answers, and how)
CLOSED_FORM = "closed_form"  # _kernels/narrow/fastpaths.py through batch's short entries (the engine if declined)
PAIR_ENGINE = "pair_engine"  # _kernels/narrow/pairs.py pair_query: closed forms, SAT, GJK / EPA
MESH_SHAPE = "mesh_shape"  # _kernels/narrow/bvh_shape.py: a shape against a mesh's BVH (order: shape, mesh)
MESH_MESH = "mesh_mesh"  # touche.bvh: two meshes' BVHs
MESH_TREE = "mesh_tree"  # touche.meshquery: closest points / rays on a mesh's BVH
RAY_KERNEL = "ray_kernel"  # _kernels/narrow/batch.py raycast_many (_kernels/primitives/ray.py per kind)
MANIFOLD = "manifold"  # _kernels/narrow/manifold.py contact manifolds
SAT = "sat"  # _kernels/motion/sat_moving.py: exact moving SAT, contact and intersection sets
GJK_CAST = "gjk"  # _kernels/convex/gjk.py shape casting
# closed forms of time of impact under translation (_kernels/motion/ccd_analytic.py, Ericson 5.5), in
# the order (first, second) that the kernel takes
SPHERE_SPHERE_CAST = "closed_form_sphere_sphere"
CONVEX_PLANE_CAST = "closed_form_convex_plane"
SPHERE_TRIANGLE_CAST = "closed_form_sphere_triangle"
SPHERE_POLYGON_CAST = "closed_form_sphere_polygon"
SPHERE_BOX_CAST = "closed_form_sphere_box"
ALIGNED_BOXES_OR_SAT = "aligned_boxes_or_sat"  # the AABB closed form when neither box turns, else SAT
ADVANCEMENT = "advancement"  # _kernels/motion/ccd.py conservative advancement (finite convex, plane second)
PYTHON_ADVANCEMENT = "python_advancement"  # touche.impact: advancement stepped from Python
MESH_ADVANCEMENT = "mesh_advancement"  # _kernels/motion/ccd_mesh.py: best-first advancement on BVHs (mesh first)
MESH_PYTHON_ADVANCEMENT = "mesh_python_advancement"  # touche.impact: Python steps on mesh distances
QUADRATIC_SAT = "quadratic_sat"  # _kernels/motion/ccd_quadratic.py: piecewise-polynomial SAT, box-box


class Route(NamedTuple):
    """What answers one (verb, kind_a, kind_b): ``engine`` (one of the names above) and
    ``flip``: the engine takes the pair as (kind_b, kind_a), so the verb swaps the shapes."""

    engine: str
    flip: bool


# ----------------------------------------------------------------------------------------------
# the table
_TABLE = {verb: {} for verb in VERBS}


def _register(verb, kinds_a, kinds_b, engine, *, ordered=False, rest=False):
    """Route every pair of ``kinds_a`` x ``kinds_b`` to ``engine``, and its mirror (with a flip
    when the engine is ``ordered``: it takes kinds_a first). A pair registered twice is an
    error, unless ``rest``: then only the pairs not registered yet are routed ("every other
    pair of these kinds")."""
    table = _TABLE[verb]
    forward = _route_of(engine, False)
    mirrored = _route_of(engine, ordered)
    mirrored_here = set()
    for kind_a in sorted(kinds_a):
        for kind_b in sorted(kinds_b):
            pair = (kind_a, kind_b)
            if pair in table:
                if rest or pair in mirrored_here:
                    continue
                raise ValueError(f"{verb} {pair} is registered twice")
            table[pair] = forward
            if kind_a == kind_b:
                continue
            mirror = (kind_b, kind_a)
            if mirror in table:
                if rest:
                    continue
                raise ValueError(f"{verb} {mirror} is registered twice")
            table[mirror] = mirrored
            mirrored_here.add(mirror)


_ROUTES = {}


def _route_of(engine, flip):
    """One Route object per (engine, flip), shared by all its entries."""
    return _ROUTES.setdefault((engine, flip), Route(engine, flip))


def _register_single(verb, query_kind, shape_kinds, engine):
    """A one-shape verb: (query_kind, kind) for each shape kind; no mirror (the public call has
    one shape)."""
    table = _TABLE[verb]
    for kind in sorted(shape_kinds):
        if (query_kind, kind) in table:
            raise ValueError(f"{verb} {(query_kind, kind)} is registered twice")
        table[(query_kind, kind)] = _route_of(engine, False)


def _mesh_pairs(verb, partners, engine_with_shape, engine_mesh_mesh):
    _register(verb, MESHES, MESHES, engine_mesh_mesh)
    _register(verb, partners - MESHES, MESHES, engine_with_shape, ordered=True)


# intersects / distance / signed_distance: every pair. The closed forms of fastpaths.py answer
# points, spheres, segments and capsules against each other and boxes (box-box overlap too; the
# box-box distance needs the SAT depth of the engine); meshes go through their trees.
for _verb in (INTERSECTS, DISTANCE, SIGNED_DISTANCE):
    _register(_verb, POINT_CORE, POINT_CORE | FINITE_LINEAR | {kinds.BOX}, CLOSED_FORM)
    _register(_verb, FINITE_LINEAR, FINITE_LINEAR | {kinds.BOX}, CLOSED_FORM)
    if _verb == INTERSECTS:
        _register(_verb, {kinds.BOX}, {kinds.BOX}, CLOSED_FORM)
    _mesh_pairs(_verb, ALL_KINDS, MESH_SHAPE, MESH_MESH)
    _register(_verb, CONVEX, CONVEX, PAIR_ENGINE, rest=True)

# one shape against a point / a ray
_register_single(CLOSEST_POINT, kinds.POINT, CONVEX, PAIR_ENGINE)
_register_single(CLOSEST_POINT, kinds.POINT, MESHES, MESH_TREE)
_register_single(RAYCAST, kinds.RAY, CONVEX - NO_AREA, RAY_KERNEL)
_register_single(RAYCAST, kinds.RAY, MESHES, MESH_TREE)

# contact manifolds: finite convex shapes, and planes against them (a manifold needs a finite
# side to clip; rays, lines and meshes have none)
_register(CONTACTS, FINITE_CONVEX, FINITE_CONVEX, MANIFOLD)
_register(CONTACTS, FINITE_CONVEX, PLANES, MANIFOLD)

# intersection sets: polytopes (the moving SAT's clipping at t = 0)
_register(INTERSECTION, POLYTOPES, POLYTOPES, SAT)

# time of impact. Meshes, under every kernel motion: a mesh against a mesh, a finite convex
# shape or a plane (mesh first).
for _family, _engine in ((TRANSLATION, MESH_ADVANCEMENT), (RIGID, MESH_ADVANCEMENT),
                         (CALLABLE, MESH_PYTHON_ADVANCEMENT)):
    _register(TIME_OF_IMPACT[_family], MESHES, MESHES | FINITE_CONVEX | PLANES, _engine, ordered=True)
# both translating: the closed forms first, then the moving SAT for polytopes, GJK casting for
# the other finite convex pairs
_TRANSLATION = TIME_OF_IMPACT[TRANSLATION]
_register(_TRANSLATION, {kinds.SPHERE}, {kinds.SPHERE}, SPHERE_SPHERE_CAST)
_register(_TRANSLATION, FINITE_CONVEX, PLANES, CONVEX_PLANE_CAST, ordered=True)
_register(_TRANSLATION, {kinds.SPHERE}, {kinds.TRIANGLE}, SPHERE_TRIANGLE_CAST, ordered=True)
_register(_TRANSLATION, {kinds.SPHERE}, {kinds.POLYGON}, SPHERE_POLYGON_CAST, ordered=True)
_register(_TRANSLATION, {kinds.SPHERE}, {kinds.BOX}, SPHERE_BOX_CAST, ordered=True)
_register(_TRANSLATION, {kinds.BOX}, {kinds.BOX}, ALIGNED_BOXES_OR_SAT)
_register(_TRANSLATION, POLYTOPES, POLYTOPES, SAT, rest=True)
_register(_TRANSLATION, FINITE_CONVEX, FINITE_CONVEX, GJK_CAST, rest=True)
# rotating and user-defined motions: conservative advancement (a plane second, translating)
for _family, _engine in ((RIGID, ADVANCEMENT), (CALLABLE, PYTHON_ADVANCEMENT)):
    _register(TIME_OF_IMPACT[_family], FINITE_CONVEX, FINITE_CONVEX, _engine)
    _register(TIME_OF_IMPACT[_family], FINITE_CONVEX, PLANES, _engine, ordered=True)
# quadratic (affine) motions: box-box only
_register(TIME_OF_IMPACT[QUADRATIC], {kinds.BOX}, {kinds.BOX}, QUADRATIC_SAT)

# Which pairs intersects / distance answer (public: touche.SUPPORTED_PAIRS; every pair today).
SUPPORTED_PAIRS = frozenset(_TABLE[INTERSECTS])


# ----------------------------------------------------------------------------------------------
# lookups
def routes(verb):
    """{(kind_a, kind_b): Route} of one verb. The dict is the registry's own (the verbs read it
    on every call): do not modify it."""
    return _TABLE[verb]


def route(verb, kind_a, kind_b):
    """The Route of (verb, kind_a, kind_b), or None when no engine answers it."""
    return _TABLE[verb].get((kind_a, kind_b))


def supported(verb, kind_a, kind_b):
    return (kind_a, kind_b) in _TABLE[verb]


def require(verb, a, b):
    """The Route for shapes ``a`` and ``b``, or UnsupportedQuery naming the verb and both."""
    found = _TABLE[verb].get((a.kind, b.kind))
    if found is None:
        raise UnsupportedQuery(public_name(verb, a.kind, b.kind), a, b)
    return found


def public_name(verb, kind_a=None, kind_b=None):
    """How an error names a verb: the verb itself, or for a time-of-impact family that refuses a
    pair another family answers, ``time_of_impact (<the motions>)`` (the motions are the
    problem, not the shapes)."""
    for family, name in TIME_OF_IMPACT.items():
        if verb == name:
            answered_otherwise = any((kind_a, kind_b) in _TABLE[other] for other in TIME_OF_IMPACT.values())
            return f"time_of_impact ({_FAMILY_WORDS[family]})" if answered_otherwise else "time_of_impact"
    return verb


_FAMILY_WORDS = {
    TRANSLATION: "Static / Linear motions",
    RIGID: "Screw, Keyframes or Integrated motions",
    CALLABLE: "a CallableMotion",
    QUADRATIC: "a QuadraticMatrix motion",
}


def entries():
    """Every registered (verb, kind_a, kind_b, route), verbs in VERBS order, pairs sorted."""
    for verb in VERBS:
        for (kind_a, kind_b), found in sorted(_TABLE[verb].items()):
            yield verb, kind_a, kind_b, found


def representatives(verb):
    """{engine: (kind_a, kind_b)}: the first pair (in kind order, not a flipped mirror) of each
    engine of ``verb`` -- one call per engine reaches every code path of the verb."""
    found = {}
    for (kind_a, kind_b), entry in sorted(_TABLE[verb].items()):
        if not entry.flip:
            found.setdefault(entry.engine, (kind_a, kind_b))
    return found


def motion_family(motion_a, motion_b):
    """The time_of_impact family of two touche motions (see the module doc): a QuadraticMatrix
    on either side decides, then a CallableMotion (each declares it: ``impact_family``), then
    whether both translate."""
    families = (motion_a.impact_family, motion_b.impact_family)
    if QUADRATIC in families:
        return QUADRATIC
    if CALLABLE in families:
        return CALLABLE
    if motion_a.translational and motion_b.translational:
        return TRANSLATION
    return RIGID
