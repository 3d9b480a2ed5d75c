"""The public verbs: intersects, distance, signed_distance, closest_point, raycast.

Every verb takes shapes and poses. A pose is a :class:`touche.Pose`, a (4, 4) array, a
(n, 4, 4) batch, or None (identity). When either pose is a batch the verb runs the whole batch
through a compiled kernel (GIL released) on chunks of pairs in a thread pool (touche._parallel)
and returns arrays; a batch of n on one side broadcasts against a single pose on the other.
"""
from __future__ import annotations

import math

import numpy as np

from . import _parallel, bvh, dispatch, tolerance
from ._queryargs import check_empty_rays, is_empty_batch, query_points, ray_arrays, shape_of, single_point, three_floats
from ._kernels import NonCanonicalArguments, kinds
from ._record import DistanceBuffer, Record
from .errors import GeometryError, UnsupportedQuery
from .pose import Pose, as_matrices
from .results import DistanceResult, Status
from .shapes import Shape, as_shape


_STATUS = {s.value: s for s in Status}

# Which pairs intersects / distance answer, and through which engine: touche/dispatch.py. The
# verbs read their routes on every call, so they keep the registry's dicts at hand.
SUPPORTED_PAIRS = dispatch.SUPPORTED_PAIRS
_INTERSECTS_ROUTES = dispatch.routes(dispatch.INTERSECTS)
_DISTANCE_ROUTES = dispatch.routes(dispatch.DISTANCE)
_SIGNED_DISTANCE_ROUTES = dispatch.routes(dispatch.SIGNED_DISTANCE)
_CLOSEST_POINT_ROUTES = dispatch.routes(dispatch.CLOSEST_POINT)
_RAYCAST_ROUTES = dispatch.routes(dispatch.RAYCAST)
_ENGINE_CLOSED_FORM = dispatch.CLOSED_FORM
_ENGINE_MESH_SHAPE = dispatch.MESH_SHAPE
_ENGINE_MESH_MESH = dispatch.MESH_MESH
_ENGINE_MESH_TREE = dispatch.MESH_TREE


def _shape(value, name):
    if isinstance(value, Shape):
        return value
    return as_shape(value, name)


def _batch_size(ta, tb):
    na = ta.shape[0] if ta.ndim == 3 else 1
    nb = tb.shape[0] if tb.ndim == 3 else 1
    if na != nb and na != 1 and nb != 1:
        raise GeometryError(f"pose batches differ in length: pose_a has {na}, pose_b has {nb}")
    return max(na, nb)


def _empty_pair_batch(pose_a, pose_b):
    """An empty pose batch against the other pose: the other must be a single pose (or empty
    too); a batch of several poses beside an empty one is a length mismatch, as for any batch."""
    for pose, name in ((pose_a, "pose_a"), (pose_b, "pose_b")):
        if not is_empty_batch(pose):
            matrices = as_matrices(pose, name)
            if matrices.ndim == 3 and len(matrices) != 1:
                raise GeometryError(f"pose batches differ in length: {name} has {len(matrices)}, the other 0")


def _pair_matrices(pose_a, pose_b, check=False):
    """``(ta, tb)`` from :func:`as_matrices`, or None when either side is an empty batch (the
    other side then checked by :func:`_empty_pair_batch`). as_matrices refuses empty batches, so
    they are looked for only on its refusal: nothing is added to the per-call path."""
    try:
        return as_matrices(pose_a, "pose_a", check=check), as_matrices(pose_b, "pose_b", check=check)
    except GeometryError:
        if not (is_empty_batch(pose_a) or is_empty_batch(pose_b)):
            raise
    _empty_pair_batch(pose_a, pose_b)
    return None


def _empty_distance():
    return DistanceResult(np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)),
                          np.zeros(0, dtype=np.int8))


def _raise_invalid_pose(code, pose_a, pose_b):
    """A kernel found a raw pose array that is not a rigid transform: let the full validation
    name the problem (it always raises for such an array)."""
    from ._kernels.narrow.batch import INVALID_POSE_B

    if code != INVALID_POSE_B:  # INVALID_POSE_A, or None: not known which
        as_matrices(pose_a, "pose_a")
    as_matrices(pose_b, "pose_b")
    raise GeometryError("pose_a or pose_b is not a rigid transform")  # pragma: no cover


_BATCH = None


# Batches run through touche._parallel.run: items per chunk, the smallest chunk worth handing to a
# thread (~25 us of work or more; a batch of at most one grain stays in the calling thread), from
# the cost per item of each driver on one core:
_GRAIN_INTERSECTS_FAST = 2048  # closed forms (dispatch.CLOSED_FORM, fastpaths.py): ~0.05 - 1.5 us per pair
_GRAIN_INTERSECTS = 256  # the engine (SAT, GJK): ~0.5 - 2 us per pair
_GRAIN_DISTANCE_FAST = 256  # closed forms (dispatch.CLOSED_FORM): ~0.1 - 2 us per pair
_GRAIN_DISTANCE = 32  # the engine (SAT depth, GJK / EPA; e.g. box-box): ~3 - 15 us per pair
_GRAIN_CLOSEST = 256  # a point against a primitive: ~0.3 - 11 us
_GRAIN_RAYCAST = 256  # a ray against a primitive: ~0.3 - 1.2 us
_GRAIN_MESH = 16  # a shape against a mesh's BVH: ~2 - 300 us


def _kernels():
    """The compiled drivers, imported on first use so that ``import touche`` stays light."""
    global _BATCH
    if _BATCH is None:
        from ._kernels import batch

        _BATCH = batch
    return _BATCH


def _pair_engine(drivers, a, b, intersects_only):
    """The address of the pair engine family that answers ``a`` against ``b`` (the drivers'
    ``engine`` argument; see _kernels/narrow/pairs.py engine_address): a first query compiles only it."""
    return drivers.engine_address(a.kind, a._packed[1], b.kind, b._packed[1], intersects_only)


# ---------------------------------------------------------------------------------------------
# single pairs: one plan per kind pair
#
# A single-pair query spent most of its time in Python around one kernel call (two pose checks
# of ~0.4 us each, the route, the choice of entry, radius look-ups: ~2.5 us of a 3.8 us
# sphere-sphere distance). The choice depends on the two kinds only, so it is made once: a plan
# is a function ``plan(a, ta, b, tb)`` that calls the pair's entry kernel on raw pose arrays and
# returns the answer (a bool for intersects, a result for distance), or None when it cannot
# (a pose that is not a rigid 4 x 4 transform, a solid mesh). The checked paths below store a
# pair's plan after their first answer (the entries then have their one canonical
# specialization: _kernels/base/jit.py strict_entry). Later calls go straight to the plan with
# the caller's pose arrays unchecked in Python: numba's type dispatch refuses any array but a
# writable C-order float64 matrix (NonCanonicalArguments, a TypeError; a read-only one is
# copied), the kernel refuses any value or shape that is not a rigid 4 x 4 transform, and
# either refusal sends the call down the checked path, which raises the usual GeometryError or
# converts the argument. A batch (ndim 3) never enters.
_INTERSECTS_PLANS = {}
_DISTANCE_PLANS = {}
_NDARRAY = np.ndarray


def _plain_matrix(pose):
    """The raw matrix of a pose argument that is not an ndarray (the verbs pass an ndarray as
    it is, and take it when it has ndim 2), or None when the checked path must look at it (a
    list, a subclass of ndarray, ...)."""
    if pose is None or pose.__class__ is Pose:
        return as_matrices(pose)
    return None


def _planned(plan, a, pose_a, b, pose_b):
    """A plan's answer for the caller's poses, or None when the checked path must answer."""
    ta = pose_a if pose_a.__class__ is _NDARRAY else _plain_matrix(pose_a)
    tb = pose_b if pose_b.__class__ is _NDARRAY else _plain_matrix(pose_b)
    if ta is None or tb is None or ta.ndim != 2 or tb.ndim != 2:
        return None
    try:
        return plan(a, ta, b, tb)
    except NonCanonicalArguments:
        return None


def _first_planned(plans, plan, a, ta, b, tb, pose_a, pose_b):
    """The checked path's single pair: the plan's answer on the checked matrices (raising the
    usual GeometryError for a pose that is not rigid), then the plan stored for the next calls
    of these kinds (its entries now have their canonical specializations)."""
    answer = plan(a, ta, b, tb)
    if answer is None:
        _raise_invalid_pose(None, pose_a, pose_b)
    plans[a.kind, b.kind] = plan
    return answer


def _engine_of(batch, kind_a, kind_b, intersects_only):
    """``engine(a, b)``: the pair engine address for two shapes of these kinds, looked up once
    per plan when the kinds alone decide it (on first need: a plan whose closed form answers
    never compiles the engine)."""
    if not batch.engine_by_kinds(kind_a, kind_b, intersects_only):
        return lambda a, b: _pair_engine(batch, a, b, intersects_only)
    found = []

    def fixed(a, b):
        if not found:
            found.append(_pair_engine(batch, a, b, intersects_only))
        return found[0]

    return fixed


def _intersects_plan(batch, kind_a, kind_b, engine):
    """The single-pair intersects of two primitive or convex kinds: True / False, or None for a
    pose that is not rigid."""
    engine_of = _engine_of(batch, kind_a, kind_b, True)
    if engine != _ENGINE_CLOSED_FORM:
        one = batch.checked_intersects_one

        def engine_plan(a, ta, b, tb):
            code = one(engine_of(a, b), *a._packed, ta, *b._packed, tb)
            return code == 1 if code >= 0 else None

        return engine_plan
    not_handled = batch.NOT_HANDLED
    if kind_a in dispatch.POINT_CORE and kind_b in dispatch.POINT_CORE:  # their own small kernels
        kernel = batch.checked_point_core_intersects

        def point_cores(a, ta, b, tb):
            pa, pb = a._packed, b._packed
            code = kernel(pa[1], pa[2], ta, pb[1], pb[2], tb)
            return code == 1 if code >= 0 else None

        return point_cores
    if kind_a == kinds.BOX and kind_b == kinds.BOX:
        boxes = batch.checked_box_box_intersects

        def box_box(a, ta, b, tb):
            code = boxes(a._packed[1], ta, b._packed[1], tb)
            return code == 1 if code >= 0 else None

        return box_box
    fast = batch.checked_fast_intersects

    def closed_form(a, ta, b, tb):
        pa, pb = a._packed, b._packed
        code = fast(pa[0], pa[1], pa[2], ta, pb[0], pb[1], pb[2], tb)
        if code == not_handled:  # never expected: the registry lists what the closed forms handle
            code = batch.checked_intersects_one(engine_of(a, b), *pa, ta, *pb, tb)
        return code == 1 if code >= 0 else None

    return closed_form


def _single_result(out, status):
    """A single pair's DistanceResult from the buffer its entry filled, or None (status < 0: a
    pose is not rigid)."""
    return _SingleDistanceResult(out, _STATUS[status]) if status >= 0 else None


def _distance_plan(batch, kind_a, kind_b, engine):
    """The single-pair distance of two primitive or convex kinds: a DistanceResult, or None for
    a pose that is not rigid."""
    not_handled = batch.NOT_HANDLED
    engine_of = _engine_of(batch, kind_a, kind_b, False)
    if engine == _ENGINE_CLOSED_FORM:  # short entries: fewer arguments to unbox
        if kind_a in dispatch.POINT_CORE and kind_b in dispatch.POINT_CORE:  # its own small kernel
            point_core_entry = batch.checked_point_core_distance_into

            def point_cores(a, ta, b, tb):
                pa, pb = a._packed, b._packed
                out = np.empty(10)
                status = point_core_entry(pa[1], pa[2], a.scale, ta, pb[1], pb[2], b.scale, tb, out)
                if status == not_handled:  # coincident centres: the engine
                    status = batch.checked_distance_into(engine_of(a, b), *pa, a.scale, ta, *pb, b.scale, tb, out)
                return _single_result(out, status)

            return point_cores
        fast = batch.checked_fast_distance_into

        def closed_form(a, ta, b, tb):
            pa, pb = a._packed, b._packed
            out = np.empty(10)
            status = fast(pa[0], pa[1], pa[2], a.scale, ta, pb[0], pb[1], pb[2], b.scale, tb, out)
            if status == not_handled:
                status = batch.checked_distance_into(engine_of(a, b), *pa, a.scale, ta, *pb, b.scale, tb, out)
            return _single_result(out, status)

        return closed_form
    if kind_a == kinds.BOX and kind_b == kinds.BOX:  # a short entry; the few pairs only GJK settles: the engine
        box_box_entry = batch.checked_box_box_distance_into
        full_entry = batch.checked_distance_into

        def box_box(a, ta, b, tb):
            out = np.empty(10)
            status = box_box_entry(a._packed[1], a.scale, ta, b._packed[1], b.scale, tb, out)
            if status == not_handled:
                status = full_entry(engine_of(a, b), *a._packed, a.scale, ta, *b._packed, b.scale, tb, out)
            return _single_result(out, status)

        return box_box
    if batch.gjk_distance_family(kind_a, kind_b):  # no closed form to try: not compiled in
        engine_entry = batch.checked_engine_distance_into

        def engine_only(a, ta, b, tb):
            out = np.empty(10)
            status = engine_entry(engine_of(a, b), *a._packed, a.scale, ta, *b._packed, b.scale, tb, out)
            if status == not_handled:
                status = batch.checked_distance_into(engine_of(a, b), *a._packed, a.scale, ta, *b._packed, b.scale, tb, out)
            return _single_result(out, status)

        return engine_only

    full = batch.checked_distance_into

    def closed_forms_then_engine(a, ta, b, tb):
        out = np.empty(10)
        return _single_result(out, full(engine_of(a, b), *a._packed, a.scale, ta, *b._packed, b.scale, tb, out))

    return closed_forms_then_engine


def _mesh_mesh_intersects_plan(a, ta, b, tb):
    """Two surface meshes (a solid one: None, the checked path answers)."""
    if a.solid or b.solid:
        return None
    tree_a, tree_b = a.bvh, b.bvh
    code = bvh._overlap().tree_intersects_pair(tree_a.node_index, tree_a.node_bounds, tree_a.tri_vertices, ta,
                                               tree_b.node_index, tree_b.node_bounds, tree_b.tri_vertices, tb,
                                               tree_a.depth + tree_b.depth + 2)
    return code == 1 if code >= 0 else None


def _mesh_mesh_distance_plan(a, ta, b, tb):
    """Two surface meshes (a solid one: None, the checked path answers)."""
    if a.solid or b.solid:
        return None
    pair = bvh.distance_pair_raw(a.bvh, ta, b.bvh, tb, a.scale, b.scale)
    return None if pair is None else _surface_pair_result(a, b, pair)


_MESH_SHAPE_PLANS = {}


def _mesh_shape_plans(flip):
    """The single-pair intersects and distance plans of a shape against a surface mesh (the
    mesh second, or first when ``flip``); None from either for a solid mesh."""
    plans = _MESH_SHAPE_PLANS.get(flip)
    if plans is None:
        plans = _MESH_SHAPE_PLANS[flip] = _new_mesh_shape_plans(flip)
    return plans


def _new_mesh_shape_plans(flip):
    kernels = _mesh_shape_kernels()
    intersects_one, distance_into = kernels.checked_mesh_intersects_one, kernels.checked_mesh_distance_into
    boolean_address, distance_address = _boolean_engine_address, kernels.distance_engine_address

    def operands(a, ta, b, tb):
        """(shape, its pose, the mesh's kernel arguments with its pose), None for a solid mesh."""
        shape, ts, mesh, tm = (b, tb, a, ta) if flip else (a, ta, b, tb)
        if mesh.solid:
            return None
        tree, mp = mesh.bvh, mesh._packed
        return shape, ts, (mp[2], mp[3], mesh.scale, tm, tree.node_index, tree.node_bounds, tree.tri_vertices,
                           tree.tri_ids, tree.depth, not flip)

    def intersects_plan(a, ta, b, tb):
        found = operands(a, ta, b, tb)
        if found is None:
            return None
        code = intersects_one(boolean_address(found[0].kind), *found[0]._packed, found[1], *found[2])
        return code == 1 if code >= 0 else None

    def distance_plan(a, ta, b, tb):
        found = operands(a, ta, b, tb)
        if found is None:
            return None
        out = np.empty(10)
        shape = found[0]
        return _single_result(out, distance_into(distance_address(shape.kind, shape._packed[1]), *shape._packed, shape.scale,
                                                 found[1], *found[2], out))

    return intersects_plan, distance_plan


def intersects(a, pose_a, b, pose_b, *, margin=0.0):
    """Whether two shapes overlap (closed sets: touching counts), or with ``margin`` > 0 whether
    they are within ``margin`` of each other (``distance <= margin``).

    Arguments:

    - ``a``, ``b``: shapes (any touche shape, a ``TriangleMesh`` or a ``trimesh.Trimesh``).
    - ``pose_a``, ``pose_b``: where each shape is: a ``Pose``, a ``(4, 4)`` rigid matrix, None
      (identity) or a batch ``(n, 4, 4)``; a batch against a single pose broadcasts, two
      batches must have the same length, an empty batch ``(0, 4, 4)`` gives empty results.

    - ``margin``: a safety margin, one finite float >= 0 for the whole batch (a distance in
      the shapes' units). ``margin=0`` is the overlap test itself, through the same code.

    Returns a Python ``bool`` for one pair, or a ``(n,)`` bool array when a pose is a batch
    (``(0,)`` for an empty batch). Meshes are surfaces: a mesh wholly inside another shape
    does not intersect it (a solid mesh holding the other mesh or a convex shape does, at any margin;
    docs/solids.md).

    How a margin is answered (docs/margins.md): a sphere, capsule, point, segment or half-space
    on either side is grown by the margin (a point becomes a sphere, a segment a capsule, a
    plane moves out) and the overlap test runs on it -- exact; polytope and curved pairs run GJK
    until its upper distance bound is within the margin or its lower bound beyond it; two meshes
    descend both trees pruning node pairs farther apart than the margin. The other pairs (a
    plane, ray or line against a polytope or curved solid, a polytope or curved solid against a
    mesh) compare the exact distance with the margin.

    Errors: ``GeometryError`` for a pose that is not a finite rigid transform (NaN, a scaled or
    sheared rotation, coordinates beyond ``touche.tolerance.MAX_COORDINATE``), batches of
    different lengths, or a margin that is not one finite number >= 0; ``UnsupportedQuery``
    for a pair no engine answers (see ``touche.SUPPORTED_PAIRS``).
    """
    try:  # the single-pair fast path (see _SINGLE_PLANS); a non-shape has no kind
        plan = _INTERSECTS_PLANS.get((a.kind, b.kind))
    except AttributeError:
        plan = None
    if plan is not None and margin.__class__ is float and margin == 0.0:
        answer = _planned(plan, a, pose_a, b, pose_b)
        if answer is not None:
            return answer
    a = _shape(a, "a")
    b = _shape(b, "b")
    route = _INTERSECTS_ROUTES.get((a.kind, b.kind))
    if route is None:
        raise UnsupportedQuery("intersects", a, b)
    if margin.__class__ is not float or margin != 0.0:  # one test on the margin-free path
        margin = _checked_margin(margin)
        if margin != 0.0:
            return _intersects_within(a, pose_a, b, pose_b, route, margin)
    engine = route[0]
    if engine == _ENGINE_MESH_SHAPE or engine == _ENGINE_MESH_MESH:
        if is_empty_batch(pose_a) or is_empty_batch(pose_b):
            _empty_pair_batch(pose_a, pose_b)
            return np.zeros(0, dtype=np.bool_)
        return _mesh_intersects(a, pose_a, b, pose_b, route)
    matrices = _pair_matrices(pose_a, pose_b)
    if matrices is None:
        return np.zeros(0, dtype=np.bool_)
    ta, tb = matrices
    batch = _kernels()
    if ta.ndim == 2 and tb.ndim == 2:
        return _first_planned(_INTERSECTS_PLANS, _intersects_plan(batch, a.kind, b.kind, engine), a, ta, b, tb, pose_a,
                              pose_b)
    # a batch was validated above; a single pose beside it went unchecked (its kernel checks)
    ta = as_matrices(ta, "pose_a") if ta.ndim == 2 else ta
    tb = as_matrices(tb, "pose_b") if tb.ndim == 2 else tb
    count = _batch_size(ta, tb)
    out = np.empty(count, dtype=np.bool_)
    _parallel.run(batch.intersects_many, count, _pair_engine(batch, a, b, True), *a._packed, ta.reshape(-1, 4, 4), *b._packed, tb.reshape(-1, 4, 4),
                  out, grain=_GRAIN_INTERSECTS_FAST if engine == _ENGINE_CLOSED_FORM else _GRAIN_INTERSECTS)
    return out


def distance(a, pose_a, b, pose_b, *, lower_bound_only=False):
    """Distance, closest points, normal and status of two shapes.

    Arguments:

    - ``a``, ``b``: shapes (any touche shape, a ``TriangleMesh`` or a ``trimesh.Trimesh``).
    - ``pose_a``, ``pose_b``: where each shape is: a ``Pose``, a ``(4, 4)`` rigid matrix, None
      (identity) or a batch ``(n, 4, 4)``; a batch against a single pose broadcasts, two
      batches must have the same length, an empty batch ``(0, 4, 4)`` gives empty results.

    Returns a ``DistanceResult``: ``distance`` (>= 0; 0 when the shapes touch or overlap), ``signed_distance`` (minus the
    penetration depth when they overlap), ``point_a`` / ``point_b`` (the closest points in world
    coordinates; when overlapping, the deepest points along ``normal``), ``normal`` (unit, from A
    to B: moving B along it separates them) and ``status`` (``Status``: ``SEPARATED``,
    ``TOUCHING``, ``PENETRATING``, or ``MAX_ITERATIONS`` / ``DEGENERATE`` when GJK / EPA did not
    converge -- never a silent guess). One pair gives floats, ``(3,)`` arrays and a ``Status``;
    a batch of n gives ``(n,)`` / ``(n, 3)`` arrays and ``(n,)`` int8 status codes. Where a
    depth is unbounded (a line or plane through a solid) ``signed_distance`` is NaN or -inf and
    the points are NaN.

    ``lower_bound_only=True`` asks only for a certified lower bound, cheaper than the distance
    where a cheaper route exists: ``distance`` (= ``signed_distance``) is a value L with
    0 <= L <= the distance (up to floating-point rounding, ~1e-12 relative), and L = 0 only
    when the shapes touch or overlap (status ``TOUCHING``; ``SEPARATED`` when L > 0). Polytope
    and curved pairs stop GJK once its lower bound is within 10 % of its upper bound (points
    and normal NaN); two meshes take the smallest node-pair bound a few levels below the roots
    (points and normal NaN). The pairs with closed forms, planes, rays and lines against
    polytopes, and a shape against a mesh return their exact distance and points (it is its
    own lower bound). See docs/margins.md.

    Errors: ``GeometryError`` for a pose that is not a finite rigid transform (NaN, a scaled or
    sheared rotation, coordinates beyond ``touche.tolerance.MAX_COORDINATE``) or batches of
    different lengths; ``UnsupportedQuery`` for a pair no engine answers (see
    ``touche.SUPPORTED_PAIRS``).
    """
    try:  # the single-pair fast path (see _SINGLE_PLANS); a non-shape has no kind
        plan = _DISTANCE_PLANS.get((a.kind, b.kind))
    except AttributeError:
        plan = None
    if plan is not None and not lower_bound_only:
        result = _planned(plan, a, pose_a, b, pose_b)
        if result is not None:
            return result
    a = _shape(a, "a")
    b = _shape(b, "b")
    route = _DISTANCE_ROUTES.get((a.kind, b.kind))
    if route is None:
        raise UnsupportedQuery("distance", a, b)
    if lower_bound_only:
        return _lower_bound(a, pose_a, b, pose_b, route)
    engine = route[0]
    if engine == _ENGINE_MESH_SHAPE or engine == _ENGINE_MESH_MESH:
        if is_empty_batch(pose_a) or is_empty_batch(pose_b):
            _empty_pair_batch(pose_a, pose_b)
            return _empty_distance()
        return _mesh_distance(a, pose_a, b, pose_b, route)
    matrices = _pair_matrices(pose_a, pose_b)
    if matrices is None:
        return _empty_distance()
    ta, tb = matrices
    batch = _kernels()
    if ta.ndim == 2 and tb.ndim == 2:
        return _first_planned(_DISTANCE_PLANS, _distance_plan(batch, a.kind, b.kind, engine), a, ta, b, tb, pose_a,
                              pose_b)
    # a batch was validated above; a single pose beside it went unchecked (its kernel checks)
    ta = as_matrices(ta, "pose_a") if ta.ndim == 2 else ta
    tb = as_matrices(tb, "pose_b") if tb.ndim == 2 else tb
    count = _batch_size(ta, tb)
    signed = np.empty(count)
    point_a = np.empty((count, 3))
    point_b = np.empty((count, 3))
    normal = np.empty((count, 3))
    status = np.empty(count, dtype=np.int8)
    _parallel.run(
        batch.distance_many, count, _pair_engine(batch, a, b, False),
        *a._packed, a.scale, ta.reshape(-1, 4, 4), *b._packed, b.scale, tb.reshape(-1, 4, 4),
        signed, point_a, point_b, normal, status,
        grain=_GRAIN_DISTANCE_FAST if engine == _ENGINE_CLOSED_FORM else _GRAIN_DISTANCE,
    )
    return DistanceResult(signed, point_a, point_b, normal, status)


def signed_distance(a, pose_a, b, pose_b):
    """Signed distance between two shapes: the distance when separated, minus the penetration
    depth when they overlap (0 when touching).

    Arguments as for ``distance``. Returns a float for one pair, a ``(n,)`` float array for a
    batch (``(0,)`` when empty); ``distance`` gives the points, normal and status too.

    Errors: as for ``distance`` (``GeometryError`` for a pose that is not a finite rigid
    transform or batches of different lengths, ``UnsupportedQuery`` for a pair no engine answers).
    """
    try:  # the single-pair fast path (see _SINGLE_PLANS); a non-shape has no kind
        plan = _DISTANCE_PLANS.get((a.kind, b.kind))
    except AttributeError:
        plan = None
    if plan is not None:
        result = _planned(plan, a, pose_a, b, pose_b)
        if result is not None:
            return result.signed_distance
    a = _shape(a, "a")
    b = _shape(b, "b")
    if (a.kind, b.kind) not in _SIGNED_DISTANCE_ROUTES:
        raise UnsupportedQuery("signed_distance", a, b)
    return distance(a, pose_a, b, pose_b).signed_distance


# ---------------------------------------------------------------------------------------------
# safety margins and certified lower bounds (docs/margins.md)


def _checked_margin(margin):
    """``margin`` as a float: one finite number >= 0, else GeometryError."""
    if margin.__class__ is float and 0.0 <= margin < math.inf:  # the usual case, without numpy
        return margin
    if isinstance(margin, (bool, np.bool_, str, bytes)):  # numpy would read True as 1, "1" as 1.0
        raise GeometryError(f"margin must be a finite number >= 0, got {margin!r}")
    try:
        value = np.asarray(margin, dtype=np.float64)
    except (TypeError, ValueError):
        raise GeometryError(f"margin must be a finite number >= 0, got {margin!r}") from None
    if value.ndim != 0:
        raise GeometryError(f"margin must be one number for the whole query, got an array of shape {value.shape}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0.0):
        raise GeometryError(f"margin must be a finite number >= 0, got {margin!r}")
    return value


# kinds that stay in their family when grown by a ball (a Minkowski sum): the margin test of a
# pair with one of them is the overlap test of the grown shape, exact
_GROWN_KIND = {kinds.POINT: kinds.SPHERE, kinds.SPHERE: kinds.SPHERE, kinds.SEGMENT: kinds.CAPSULE,
               kinds.CAPSULE: kinds.CAPSULE, kinds.HALFSPACE: kinds.HALFSPACE}


class _Grown(Shape):
    """A shape grown by a margin, packed as the kind it becomes (for the verbs' kernels only)."""

    __slots__ = ()


def _grown(shape, margin):
    kind, params, points, triangles, edges = shape._packed
    grown = object.__new__(_Grown)
    if kind == kinds.HALFSPACE:  # points = (a point of the plane, the outward normal)
        params = params.copy()
        points = points.copy()
        points[0] += margin * points[1]
    else:  # a point or a segment gets a radius; a sphere or a capsule a larger one
        params = np.array([params[0] + margin if len(params) else margin])
    new_kind = _GROWN_KIND[kind]
    object.__setattr__(grown, "_packed", (new_kind, params, points, triangles, edges))
    object.__setattr__(grown, "kind", new_kind)
    object.__setattr__(grown, "scale", shape.scale + margin)
    return grown


def _gjk_family(a, b):
    """Whether the pair engine answers a margin / lower bound of (a, b) by GJK bounds (its
    polytope and GJK-boolean families; see pairs.LOWER_BOUND_QUERY)."""
    from ._kernels import pairs

    family = pairs._FAMILIES[a.kind, b.kind, True]
    return family is pairs.POLYTOPE_ENGINE or family is pairs.GJK_BOOLEAN_ENGINE


def _within_from_distance(result, margin):
    """``distance <= margin`` from a DistanceResult (an unknown depth, NaN, overlaps)."""
    signed = result.signed_distance
    if isinstance(signed, np.ndarray):
        return ~(signed > margin)
    return not (signed > margin)


def _threshold_values(a, pose_a, b, pose_b, threshold):
    """The pair engine's threshold answer (pairs.LOWER_BOUND_QUERY): a float for one pair, a
    (n,) array for a batch, None for an empty batch."""
    matrices = _pair_matrices(pose_a, pose_b)
    if matrices is None:
        return None
    ta, tb = matrices
    batch = _kernels()
    engine = _pair_engine(batch, a, b, True)
    if ta.ndim == 2 and tb.ndim == 2:
        value = batch.checked_threshold_one(engine, *a._packed, ta, *b._packed, tb, threshold)
        if value < 0.0:
            _raise_invalid_pose(int(value), pose_a, pose_b)
        return value
    ta = as_matrices(ta, "pose_a") if ta.ndim == 2 else ta
    tb = as_matrices(tb, "pose_b") if tb.ndim == 2 else tb
    count = _batch_size(ta, tb)
    out = np.empty(count)
    _parallel.run(batch.threshold_many, count, engine, *a._packed, ta.reshape(-1, 4, 4), *b._packed,
                  tb.reshape(-1, 4, 4), threshold, out, grain=_GRAIN_INTERSECTS)
    return out


def _mesh_mesh_threshold(a, pose_a, b, pose_b, threshold):
    """bvh_threshold.tree_threshold_many for two meshes: (values (n,), single)."""
    ta = bvh._tree(a, "a")
    tb = bvh._tree(b, "b")
    pa, pb, n, single = bvh._poses(pose_a, pose_b)
    out = np.empty(n)
    args = (ta.node_index, ta.node_bounds, ta.tri_vertices, pa, tb.node_index, tb.node_bounds, tb.tri_vertices, pb,
            ta._stack_rows(tb), threshold, out)
    if n == 1:
        bvh._threshold().tree_threshold_many(*args, 0, 1)
    else:
        _parallel.run(bvh._threshold().tree_threshold_many, n, *args, grain=bvh.DISTANCE_GRAIN)
    return out, single


def _intersects_within(a, pose_a, b, pose_b, route, margin):
    """intersects with a margin > 0 (see intersects: the cheapest exact route per pair)."""
    if a.kind in _GROWN_KIND:
        return intersects(_grown(a, margin), pose_a, b, pose_b)
    if b.kind in _GROWN_KIND:
        return intersects(a, pose_a, _grown(b, margin), pose_b)
    engine = route.engine
    if engine == _ENGINE_MESH_MESH:
        if is_empty_batch(pose_a) or is_empty_batch(pose_b):
            _empty_pair_batch(pose_a, pose_b)
            return np.zeros(0, dtype=np.bool_)
        values, single = _mesh_mesh_threshold(a, pose_a, b, pose_b, margin)
        surface = bool(values[0] == 0.0) if single else values == 0.0
        if a.solid or b.solid:  # a solid holding the other mesh: within any margin
            from .solids import contained_pairs

            return contained_pairs(a, pose_a, b, pose_b, surface)
        return surface
    if engine == _ENGINE_MESH_SHAPE:
        # no grown form of a polytope / curved solid: the overlap descent (cheap, and settles
        # most overlapping poses), then the exact distance for the rest
        overlap = intersects(a, pose_a, b, pose_b)
        if isinstance(overlap, np.ndarray):
            result = overlap.copy()
            rest = np.flatnonzero(~overlap)
            if len(rest):
                result[rest] = _within_from_distance(distance(a, _pose_list(pose_a, rest), b, _pose_list(pose_b, rest)),
                                                     margin)
            return result
        return overlap or _within_from_distance(distance(a, pose_a, b, pose_b), margin)
    if _gjk_family(a, b):
        values = _threshold_values(a, pose_a, b, pose_b, margin)
        if values is None:
            return np.zeros(0, dtype=np.bool_)
        return values == 0.0 if isinstance(values, np.ndarray) else bool(values == 0.0)
    # planes, rays and lines against polytopes and curved solids: the closed forms' distance
    return _within_from_distance(distance(a, pose_a, b, pose_b), margin)


def _pose_list(pose, rows):
    """The rows ``rows`` of a pose batch; a single pose (or a batch of one) as it is."""
    matrices = as_matrices(pose, "pose")
    if matrices.ndim == 3 and len(matrices) > 1:
        return matrices[rows]
    return matrices


def _bound_result(values, single):
    """A DistanceResult holding lower bounds only (NaN points and normal)."""
    status = np.where(values > 0.0, Status.SEPARATED, Status.TOUCHING).astype(np.int8)
    if single:
        value = float(values[0])
        unknown = np.full(3, np.nan)
        return DistanceResult(value, unknown, unknown.copy(), unknown.copy(), _STATUS[int(status[0])])
    count = len(values)
    unknown = np.full((count, 3), np.nan)
    return DistanceResult(values, unknown, unknown.copy(), unknown.copy(), status)


def _lower_bound(a, pose_a, b, pose_b, route):
    """distance(..., lower_bound_only=True) (see distance)."""
    engine = route.engine
    if engine == _ENGINE_MESH_MESH:
        if is_empty_batch(pose_a) or is_empty_batch(pose_b):
            _empty_pair_batch(pose_a, pose_b)
            return _empty_distance()
        values, single = _mesh_mesh_threshold(a, pose_a, b, pose_b, _LOWER_BOUND_QUERY)
        if a.solid or b.solid:  # a solid holding the other mesh: they overlap, the bound is 0
            from .solids import contained_pairs

            held = contained_pairs(a, pose_a, b, pose_b, bool(values[0] == 0.0) if single else values == 0.0)
            values = np.where(np.atleast_1d(held), 0.0, values)
        return _bound_result(values, single)
    if engine != _ENGINE_MESH_SHAPE and _gjk_family(a, b):
        values = _threshold_values(a, pose_a, b, pose_b, _LOWER_BOUND_QUERY)
        if values is None:
            return _empty_distance()
        if isinstance(values, np.ndarray):
            return _bound_result(values, False)
        buffer = np.full(10, np.nan)  # one allocation: the single result's fields are views of it
        buffer[0] = values
        return _SingleDistanceResult(buffer, Status.SEPARATED if values > 0.0 else Status.TOUCHING)
    # closed forms and a shape against a mesh: the exact distance is the bound
    return distance(a, pose_a, b, pose_b)


_LOWER_BOUND_QUERY = -1.0  # = touche._kernels.narrow.pairs.LOWER_BOUND_QUERY (this module loads no kernel)


class _SingleDistanceResult(DistanceBuffer, DistanceResult):
    """One pair's result, backed by the (10,) buffer the kernel filled; fields are views made on
    first access (cheaper than building four objects on every call)."""

    __slots__ = ("_buffer",)

    def __init__(self, buffer, status):
        self._buffer = buffer
        self.status = status

    def __reduce__(self):
        # the parent's slots are properties here: pickle and copy go through the buffer
        return (_SingleDistanceResult, (self._buffer.copy(), self.status))


# ---------------------------------------------------------------------------------------------
# meshes: through the BVH
#
# A mesh is a surface (its triangles, closed sets). Against a primitive or convex shape the
# answer is the brute force's (pairs.py: the nearest triangle, or overlapping the deepest, each
# triangle taken as a flat solid), found by descending the mesh's tree (bvh_shape.py; identical
# results). Mesh against mesh: two surfaces have no penetration depth; where they touch or cross
# the distance is 0, ``signed_distance`` is 0 and the status TOUCHING (never PENETRATING); the
# normal is then the unit face normal of A's triangle at the contact (B's reversed if A's has no
# area). Separated: the closest points and normal = unit(point_b - point_a), as for any pair.
# Solid meshes (touche/solids.py, docs/solids.md): two meshes with a solid one report
# their vertex penetration depth when they interpenetrate; a convex shape inside a solid mesh
# overlaps it, with the depth of its deepest point.

_MESH_SHAPE = None
_MESH_BOOLEAN = None
_SOLIDS = None
_PAIR_MEETING = 3  # bvh_distance.PAIR_MEETING (the kernel module is not imported with touche.query)


def _solids():
    """touche.solids, imported on first use (a function-level import statement costs ~1 us, a
    fifth of a far single-pair intersects)."""
    global _SOLIDS
    if _SOLIDS is None:
        from . import solids

        _SOLIDS = solids
    return _SOLIDS


def _mesh_shape_kernels():
    global _MESH_SHAPE
    if _MESH_SHAPE is None:
        from ._kernels import bvh_shape

        _MESH_SHAPE = bvh_shape
    return _MESH_SHAPE


def _boolean_engine_address(kind):
    """The mesh engine a shape of ``kind`` takes in intersects (bvh_shape_boolean)."""
    global _MESH_BOOLEAN
    if _MESH_BOOLEAN is None:
        from ._kernels import bvh_shape_boolean

        _MESH_BOOLEAN = bvh_shape_boolean
    return _MESH_BOOLEAN.boolean_engine_address(kind)


def _mesh_and_shape(a, pose_a, b, pose_b, route):
    """(shape, pose matrices, pose name, mesh, pose matrices, pose name, shape_is_a) for a pair
    with exactly one mesh (poses not checked yet): the registry routes (shape, mesh) to the tree,
    and its mirror with a flip."""
    if not route.flip:
        shape, pose_s, name_s, mesh, pose_m, name_m, shape_is_a = a, pose_a, "pose_a", b, pose_b, "pose_b", True
    else:
        shape, pose_s, name_s, mesh, pose_m, name_m, shape_is_a = b, pose_b, "pose_b", a, pose_a, "pose_a", False
    ts = as_matrices(pose_s, name_s, check=False)
    tm = as_matrices(pose_m, name_m, check=False)
    return shape, ts, name_s, mesh, tm, name_m, shape_is_a


def _mesh_shape_arrays(shape, mesh):
    """The kernels' module and the arrays its shape-against-mesh kernels take: (kernels, shape's
    packing, mesh's packing, the mesh's tree arrays)."""
    return _mesh_shape_kernels(), shape._packed, mesh._packed, _tree_arrays(mesh)


def _tree_arrays(mesh):
    tree = mesh.bvh
    return tree.node_index, tree.node_bounds, tree.tri_vertices, tree.tri_ids, tree.depth


def _mesh_intersects(a, pose_a, b, pose_b, route):
    if route.engine == _ENGINE_MESH_MESH:
        if a.solid or b.solid:  # or a solid holding the other mesh wholly inside
            return _solids().solid_mesh_intersects(a, pose_a, b, pose_b)
        answer = bvh.intersects(a, pose_a, b, pose_b)
        if answer.__class__ is bool:  # one pose pair: its entry is compiled, later ones take the plan
            _INTERSECTS_PLANS[a.kind, b.kind] = _mesh_mesh_intersects_plan
        return answer
    shape, ts, name_s, mesh, tm, name_m, shape_is_a = _mesh_and_shape(a, pose_a, b, pose_b, route)
    kernels, ps, mp, tree = _mesh_shape_arrays(shape, mesh)
    if ts.ndim == 2 and tm.ndim == 2:
        answer = kernels.checked_mesh_intersects_one(_boolean_engine_address(shape.kind), *ps, ts, mp[2], mp[3], mesh.scale, tm, *tree, shape_is_a)
        if answer < 0:
            _raise_invalid_pose(answer, pose_a, pose_b)
        _INTERSECTS_PLANS[a.kind, b.kind] = _mesh_shape_plans(route.flip)[0]
        if answer == 1 or not mesh.solid:
            return answer == 1
        from .solids import shape_inside  # a shape wholly inside a solid mesh

        return shape_inside(shape, ts, mesh, tm, False)
    ts = as_matrices(ts, name_s) if ts.ndim == 2 else ts
    tm = as_matrices(tm, name_m) if tm.ndim == 2 else tm
    count = _batch_size(ts, tm) if shape_is_a else _batch_size(tm, ts)  # lengths named as the caller's
    out = np.empty(count, dtype=np.bool_)
    _parallel.run(kernels.mesh_intersects_many, count, _boolean_engine_address(shape.kind), *ps, ts.reshape(-1, 4, 4), mp[2], mp[3], mesh.scale,
                  tm.reshape(-1, 4, 4), *tree, out, grain=_GRAIN_MESH)
    if mesh.solid:
        from .solids import shape_inside

        return shape_inside(shape, ts, mesh, tm, out)
    return out


def _mesh_distance(a, pose_a, b, pose_b, route):
    if route.engine == _ENGINE_MESH_MESH:
        return _mesh_mesh_distance(a, pose_a, b, pose_b)
    shape, ts, name_s, mesh, tm, name_m, shape_is_a = _mesh_and_shape(a, pose_a, b, pose_b, route)
    kernels, ps, mp, tree = _mesh_shape_arrays(shape, mesh)
    if ts.ndim == 2 and tm.ndim == 2:
        buffer = np.empty(10)
        status = kernels.checked_mesh_distance_into(kernels.distance_engine_address(shape.kind, ps[1]), *ps, shape.scale, ts, mp[2], mp[3],
                                                    mesh.scale, tm, *tree, shape_is_a, buffer)
        if status < 0:
            _raise_invalid_pose(status, pose_a, pose_b)
        _DISTANCE_PLANS[a.kind, b.kind] = _mesh_shape_plans(route.flip)[1]
        if mesh.solid and status == Status.SEPARATED:  # a shape wholly inside a solid mesh
            from .solids import shape_in_solid_distance

            return shape_in_solid_distance(shape, ts, mesh, tm, shape_is_a, _SingleDistanceResult(buffer, _STATUS[status]),
                                           distance)
        return _SingleDistanceResult(buffer, _STATUS[status])
    ts = as_matrices(ts, name_s) if ts.ndim == 2 else ts
    tm = as_matrices(tm, name_m) if tm.ndim == 2 else tm
    count = _batch_size(ts, tm) if shape_is_a else _batch_size(tm, ts)  # lengths named as the caller's
    signed = np.empty(count)
    point_a = np.empty((count, 3))
    point_b = np.empty((count, 3))
    normal = np.empty((count, 3))
    status = np.empty(count, dtype=np.int8)
    _parallel.run(kernels.mesh_distance_many, count, kernels.distance_engine_address(shape.kind, ps[1]), *ps, shape.scale, ts.reshape(-1, 4, 4), mp[2], mp[3], mesh.scale,
                  tm.reshape(-1, 4, 4), *tree, shape_is_a, signed, point_a, point_b, normal, status,
                  grain=_GRAIN_MESH)
    if mesh.solid:
        from .solids import shape_in_solid_distance

        return shape_in_solid_distance(shape, ts, mesh, tm, shape_is_a,
                                       DistanceResult(signed, point_a, point_b, normal, status), distance)
    return DistanceResult(signed, point_a, point_b, normal, status)


def _mesh_mesh_distance(a, pose_a, b, pose_b):
    if a.solid or b.solid:  # interpenetrating solids get their penetration depth (touche/solids.py)
        from .solids import solid_distance

        return solid_distance(a, pose_a, b, pose_b, _surface_mesh_mesh_distance, distance)
    return _surface_mesh_mesh_distance(a, pose_a, b, pose_b)


def _surface_mesh_mesh_distance(a, pose_a, b, pose_b):
    """Two meshes as surfaces (see the section's comment above)."""
    pair = bvh._distance_pair(a, pose_a, b, pose_b, a.scale, b.scale)
    if pair is not None:  # one pose pair: one compiled call (later ones take the plan)
        _DISTANCE_PLANS[kinds.MESH, kinds.MESH] = _mesh_mesh_distance_plan
        return _surface_pair_result(a, b, pair)
    dist, point_a, point_b, ids, pa, pb, single = bvh._distance_arrays(a, pose_a, b, pose_b)
    if single:  # scalar arithmetic: numpy's per-call overhead would be most of a query's time
        return _one_mesh_mesh_distance(a, b, float(dist[0]), point_a[0], point_b[0], ids[0], pa[0], pb[0])
    n = len(dist)
    delta = point_b - point_a
    normal = np.empty((n, 3))
    apart = dist > 0.0
    normal[apart] = delta[apart] / dist[apart, None]
    meet = np.flatnonzero(~apart)
    if len(meet):
        world_a, length_a = _triangle_normals(a.bvh, ids[meet, 0], pa, meet, 1.0)
        world_b, length_b = _triangle_normals(b.bvh, ids[meet, 1], pb, meet, -1.0)
        chosen = np.where((length_a > 0.0)[:, None], world_a, world_b)
        length = np.where(length_a > 0.0, length_a, length_b)
        fallback = length == 0.0
        chosen[fallback] = (0.0, 0.0, 1.0)
        length[fallback] = 1.0
        normal[meet] = chosen / length[:, None]
    offset = np.maximum(np.abs(pa[:, :3, 3]).max(axis=1), np.abs(pb[:, :3, 3]).max(axis=1))
    touching = tolerance.touching_tolerance(max(a.scale, b.scale), offset)
    status = np.where(dist > touching, Status.SEPARATED, Status.TOUCHING).astype(np.int8)
    return DistanceResult(dist, point_a, point_b, normal, status)


def _surface_pair_result(a, b, pair):
    """The DistanceResult of two surface meshes from bvh._distance_pair's tuple."""
    code, id_a, id_b, buffer, ma, mb = pair
    if code == _PAIR_MEETING:  # the normal is a face normal: _one_mesh_mesh_distance's
        return _one_mesh_mesh_distance(a, b, float(buffer[0]), buffer[1:4], buffer[4:7], (id_a, id_b), ma, mb)
    return _SingleDistanceResult(buffer, _STATUS[code])


def _triangle_normals(tree, faces, poses, rows, sign):
    """World normals (k, 3) (``sign`` x the right-hand-rule cross product, not normalised) of a
    mesh's triangles ``faces`` placed by poses[rows] (or poses[0]), and their lengths (k,).
    Written out term by term in the order _one_mesh_mesh_distance uses, so that a batch and a
    single query give the same bits."""
    tri = tree.tri_vertices[bvh._positions(tree)[faces]]
    u = tri[:, 1] - tri[:, 0]
    v = tri[:, 2] - tri[:, 0]
    local = (sign * (u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1]), sign * (u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2]),
             sign * (u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]))
    rotation = poses[rows if len(poses) > 1 else np.zeros(len(rows), dtype=np.int64), :3, :3]
    world = np.stack([rotation[:, i, 0] * local[0] + rotation[:, i, 1] * local[1] + rotation[:, i, 2] * local[2]
                      for i in range(3)], axis=1)
    length = np.sqrt(world[:, 0] * world[:, 0] + world[:, 1] * world[:, 1] + world[:, 2] * world[:, 2])
    return world, length


def _one_mesh_mesh_distance(a, b, dist, point_a, point_b, ids, pose_a, pose_b):
    """_mesh_mesh_distance for one pose pair, the same numbers: apart, the normal is the unit
    vector between the closest points; meeting, the world normal of A's closest triangle (of
    B's, reversed, when A's has no area; +z when neither has)."""
    if dist > 0.0:
        normal = (point_b - point_a) / dist
    else:
        normal = None
        for tree, index, pose, sign in ((a.bvh, ids[0], pose_a, 1.0), (b.bvh, ids[1], pose_b, -1.0)):
            (x0, y0, z0), (x1, y1, z1), (x2, y2, z2) = tree.tri_vertices[bvh._positions(tree)[index]].tolist()
            ux, uy, uz, vx, vy, vz = x1 - x0, y1 - y0, z1 - z0, x2 - x0, y2 - y0, z2 - z0
            local = (sign * (uy * vz - uz * vy), sign * (uz * vx - ux * vz), sign * (ux * vy - uy * vx))
            rotation = pose[:3, :3].tolist()
            world = [r[0] * local[0] + r[1] * local[1] + r[2] * local[2] for r in rotation]
            length = math.sqrt(world[0] * world[0] + world[1] * world[1] + world[2] * world[2])
            if length > 0.0:
                normal = np.array(world) / length
                break
        if normal is None:
            normal = np.array([0.0, 0.0, 1.0])
    offset = max(abs(v) for v in (*pose_a[:3, 3].tolist(), *pose_b[:3, 3].tolist()))
    touching = tolerance.touching_tolerance(max(a.scale, b.scale), offset)
    return DistanceResult(dist, point_a, point_b, normal, Status.SEPARATED if dist > touching else Status.TOUCHING)


class ClosestPointResult(Record):
    """Result of :func:`closest_point`: ``point`` (n, 3) on the shape (a point inside a solid is
    its own closest point), ``distance`` (n,), ``status`` (n,) int8 (codes of :class:`Status`:
    0 SEPARATED outside, 1 TOUCHING on the surface, 2 PENETRATING inside; ``status_names``
    gives names). A single (3,) query gives (3,), float and a Status.

    It unpacks as ``point, distance = tc.closest_point(shape, pose, points)`` (the status stays
    an attribute)."""

    __slots__ = ("point", "distance", "status")

    # unpacking: a user writes `point, distance = ...` as for a function returning a pair
    def __iter__(self):
        return iter((self.point, self.distance))

    def __len__(self):
        return 2

    @property
    def status_names(self):
        """``status`` as names: a str for one point, a (n,) str array for a batch."""
        return Status.names(self.status)

    def __repr__(self):
        return f"ClosestPointResult(point={self.point!r}, distance={self.distance!r})"


def _empty_points_batch(pose, points):
    """No points or no poses: the other side must be a single one (or empty too)."""
    if not is_empty_batch(pose):
        matrices = as_matrices(pose, "pose")
        if matrices.ndim == 3 and len(matrices) != 1:
            raise GeometryError(f"pose batch ({len(matrices)}) and points (0) differ in length")
    if shape_of(points) != (0, 3):
        queries, _ = query_points(points, "points")
        if len(queries) != 1:
            raise GeometryError(f"pose batch (0) and points ({len(queries)}) differ in length")


def _empty_rays(pose, origins, directions, mode):
    """No rays (or no poses): every other argument must be a single one or empty too; the
    answer has the batch shapes with length 0."""
    check_empty_rays(pose, origins, directions)
    if mode == "all":
        from .meshquery import RayHits

        return RayHits.empty()
    return RayResult(np.zeros(0, dtype=np.bool_), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)),
                     np.zeros(0, dtype=np.int64))



# one point against a convex shape at one pose: as the pair plans above (the entry checks the
# pose and the point; a refusal or an argument type it was not compiled for goes to the checked
# path, which raises or converts)
_CLOSEST_POINT_PLANS = {}


def _closest_point_plan(batch, kind):
    """``plan(shape, pose, x, y, z, out)`` -> status, or INVALID_* (< 0)."""
    entry = batch.checked_closest_point_into
    address = batch.engine_address(kinds.POINT, None, kind, None)

    def plan(shape, pose, x, y, z, out):
        return entry(address, *shape._packed, shape.scale, pose, x, y, z, out)

    return plan


def _planned_closest_point(plan, shape, pose, points):
    """The ClosestPointResult of one point (three numbers) at one raw pose, or None when the
    checked path must answer."""
    t = pose if pose.__class__ is _NDARRAY else _plain_matrix(pose)
    if t is None or t.ndim != 2:
        return None
    point = three_floats(points)
    if point is None:
        return None
    out = np.empty(4)
    try:
        status = plan(shape, t, point[0], point[1], point[2], out)
    except NonCanonicalArguments:
        return None
    if status < 0:
        return None
    return ClosestPointResult(out[:3], float(out[3]), _STATUS[status])


def closest_point(shape, pose, points):
    """Closest points on ``shape`` (placed by ``pose``) to world ``points`` (3,) or (n, 3).

    ``pose``: a single pose (or None) or a batch (n, 4, 4) matching n points; one point against
    a batch of n poses is that point for every pose (it broadcasts, as in numpy). Returns a
    :class:`ClosestPointResult` (``point, distance = tc.closest_point(...)`` unpacks it):
    ``point`` ``(3,)`` or ``(n, 3)`` (a point inside a solid is its own closest point; meshes
    are surfaces unless declared solid, ``TriangleMesh(..., solid=True)``, docs/solids.md),
    ``distance`` (0 inside) and ``status`` (``Status``; ``PENETRATING`` inside a solid). An
    empty batch (points ``(0, 3)`` or poses
    ``(0, 4, 4)``) gives arrays of length 0.

    Errors: ``GeometryError`` for NaN / infinite points, points not of shape (3,) or (n, 3), a
    bad pose, or a pose batch whose length differs from the points'; ``UnsupportedQuery`` for a
    shape without a closest-point engine."""
    try:  # one point, one pose: the plan (see _closest_point_plan); a non-shape has no kind
        plan = _CLOSEST_POINT_PLANS.get(shape.kind)
    except AttributeError:
        plan = None
    if plan is not None:
        result = _planned_closest_point(plan, shape, pose, points)
        if result is not None:
            return result
    shape = _shape(shape, "shape")
    route = _CLOSEST_POINT_ROUTES.get((kinds.POINT, shape.kind))
    if route is None:
        raise UnsupportedQuery("closest_point", shape)
    queries = single_point(points)  # one point as three numbers: fewer array passes
    if is_empty_batch(pose) or (queries is None and shape_of(points) == (0, 3)):
        _empty_points_batch(pose, points)
        return ClosestPointResult(np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=np.int8))
    t = as_matrices(pose, "pose")
    if queries is None:
        queries, single = query_points(points, "points")
    else:
        single = True
    poses = t.reshape(-1, 4, 4)
    if queries.shape[0] == 1 and poses.shape[0] > 1 and t.ndim == 3:  # one point, many poses
        queries = np.ascontiguousarray(np.broadcast_to(queries, (poses.shape[0], 3)))
        single = False
    if poses.shape[0] not in (1, queries.shape[0]):
        raise GeometryError(f"pose batch ({poses.shape[0]}) and points ({queries.shape[0]}) differ in length")
    count = queries.shape[0]
    out_point = np.empty((count, 3))
    out_distance = np.empty(count)
    out_status = np.empty(count, dtype=np.int8)
    if route.engine == _ENGINE_MESH_TREE:  # BVH branch and bound (touche.meshquery), same results as the brute force
        from . import meshquery

        meshquery.closest_arrays(shape, poses, queries, out_point, out_distance, out_status)
        if shape.solid:  # a point inside a solid mesh is its own closest point, as for convex solids
            _inside_solid_mesh(shape, poses, queries, out_point, out_distance, out_status)
    elif single and poses.shape[0] == 1:  # one point, one pose: the plan's entry (then stored)
        plan = _closest_point_plan(_kernels(), shape.kind)
        result = _planned_closest_point(plan, shape, poses[0], queries[0])
        if result is None:  # never expected: the pose and the point were checked above
            raise GeometryError("pose or point refused")  # pragma: no cover
        _CLOSEST_POINT_PLANS[shape.kind] = plan
        return result
    else:
        batch = _kernels()
        _parallel.run(batch.closest_points_many, count, batch.engine_address(kinds.POINT, None, shape.kind, None), *shape._packed, shape.scale, poses, queries,
                      out_point, out_distance, out_status, grain=_GRAIN_CLOSEST)
    if single:
        return ClosestPointResult(out_point[0], float(out_distance[0]), _STATUS[int(out_status[0])])
    return ClosestPointResult(out_point, out_distance, out_status)


def _in_solid_mesh(mesh, poses, points, rows):
    """(k,) bool: world ``points[rows]`` lie in the solid mesh placed by ``poses`` ((1, 4, 4)
    or one per point), surface included; only the points in its box get the winding number."""
    from .meshquery import _inside, mesh_tree
    from .solids import mesh_data

    inside = np.zeros(len(rows), dtype=bool)
    if len(rows) == 0:
        return inside
    placed = poses if len(poses) == 1 else poses[rows]
    local = np.einsum("nji,nj->ni", placed[:, :3, :3], points[rows] - placed[:, :3, 3])
    data = mesh_data(mesh)
    pad = 1e-9 * mesh.scale  # the box of the used vertices, a rounding wider
    near = np.flatnonzero(((local >= data.low - pad) & (local <= data.high + pad)).all(axis=1))
    if len(near):
        near_poses = poses if len(poses) == 1 else np.ascontiguousarray(placed[near])
        inside[near] = _inside(mesh_tree(mesh), near_poses, np.ascontiguousarray(points[rows[near]]), False)
    return inside


def _inside_solid_mesh(mesh, poses, queries, out_point, out_distance, out_status):
    """closest_point on a solid mesh: the queries inside it (or on its surface) are their own
    closest points, distance 0, PENETRATING inside (TOUCHING on the surface stays)."""
    candidates = np.flatnonzero(out_status != Status.TOUCHING)
    inside = candidates[_in_solid_mesh(mesh, poses, queries, candidates)]
    out_point[inside] = queries[inside]
    out_distance[inside] = 0.0
    out_status[inside] = Status.PENETRATING


def _rays_from_inside(mesh, poses, origins, out_hit, out_t, out_point, out_normal, out_face):
    """raycast(solid=True) on a solid mesh: rays whose origin lies in the solid (surface
    included) hit at t = 0, at the origin, normal zeros and face -1 (no triangle is hit)."""
    everything = np.arange(len(origins))
    inside = everything[_in_solid_mesh(mesh, poses, origins, everything)]
    out_hit[inside] = True
    out_t[inside] = 0.0
    out_point[inside] = origins[inside]
    out_normal[inside] = 0.0
    out_face[inside] = -1


class RayResult(Record):
    """Result of :func:`raycast`: ``hit`` (n,) bool, ``t`` (n,) distance along the unit direction
    (inf on a miss), ``point`` (n, 3) and ``normal`` (n, 3) outward unit normal at the hit (NaN on
    a miss; zeros for a ray starting inside a solid with ``solid=True``), ``face`` (n,) int64
    triangle index for meshes (-1 otherwise). A single ray gives scalars and (3,) arrays.

    It unpacks as ``hit, t, point, normal = tc.raycast(...)`` (``face`` stays an attribute)."""

    __slots__ = ("hit", "t", "point", "normal", "face")

    # unpacking: the four fields every shape gives (face is -1 except for meshes)
    def __iter__(self):
        return iter((self.hit, self.t, self.point, self.normal))

    def __len__(self):
        return 4

    def __repr__(self):
        return f"RayResult(hit={self.hit!r}, t={self.t!r})"


# one ray against a convex shape at one pose: as the pair plans above (the entry checks the
# pose, the origin, the direction's range and max_t; a refusal goes to the checked path)
_RAYCAST_PLANS = {}


def _raycast_plan(batch, kind):
    """``plan(shape, pose, origin (3 floats), direction (3 floats), max_t, solid, out)`` ->
    ``(code, face)``."""
    entry = batch.checked_raycast_into
    address = batch.ray_engine_address(kind)

    def plan(shape, pose, ox, oy, oz, dx, dy, dz, max_t, solid, out):
        packed = shape._packed
        return entry(address, packed[0], packed[1], packed[2], packed[3], pose, ox, oy, oz, dx, dy, dz, max_t, solid,
                     out)

    return plan


def _planned_raycast(plan, shape, pose, origins, directions, max_t, solid):
    """The RayResult of one ray at one raw pose, or None when the checked path must answer."""
    t = pose if pose.__class__ is _NDARRAY else _plain_matrix(pose)
    if t is None or t.ndim != 2 or (max_t.__class__ is not float and max_t.__class__ is not int):
        return None
    origin = three_floats(origins)
    direction = three_floats(directions)
    if origin is None or direction is None:
        return None
    out = np.empty(7)
    try:
        code, face = plan(shape, t, origin[0], origin[1], origin[2], direction[0], direction[1], direction[2],
                          float(max_t), bool(solid), out)
    except NonCanonicalArguments:
        return None
    if code < 0:
        return None
    return RayResult(code == 1, float(out[0]), out[1:4], out[4:7], face)


def raycast(shape, pose, origins, directions, max_t=np.inf, *, solid=True, mode="first"):
    """Cast rays ``origins + t * unit(directions)``, ``0 <= t <= max_t``, at ``shape``.

    ``origins`` and ``directions`` are (3,) or (n, 3) (one broadcasts against the other;
    origins within touche's range |x| <= 1e75, directions of any finite non-zero length: ``t``
    and ``max_t`` are distances along the unit direction whatever that length);
    ``max_t`` a scalar or (n,). ``solid=True``: a ray starting inside a solid hits at t = 0;
    ``solid=False``: it reports where it leaves the boundary. Meshes are surfaces (two-sided
    triangles, BVH-accelerated; equal-t ties report the lowest face index), except a mesh
    declared solid (``TriangleMesh(..., solid=True)``): with ``solid=True``, modes "first" and
    "any", a ray starting inside it or on its surface hits at t = 0 (point the origin, normal
    zeros, face -1); mode "all" lists the surface crossings whatever the origin. Returns a
    :class:`RayResult`.

    ``mode`` (meshes): ``"first"`` the nearest hit; ``"any"`` some hit within max_t (faster
    occlusion test: ``hit`` is exact, ``t`` / ``face`` are those of whichever hit was found);
    ``"all"`` every hit, returned as a flat :class:`touche.meshquery.RayHits` (ray index, t,
    face, point; sorted by ray then t). For other shapes "any" equals "first" and "all" is
    unsupported. An empty batch (origins or directions (0, 3), or poses (0, 4, 4)) gives arrays
    of length 0 (the other arguments must then be single or empty).
    """
    try:  # one ray, one pose: the plan (see _raycast_plan); a non-shape has no kind
        plan = _RAYCAST_PLANS.get(shape.kind)
    except AttributeError:
        plan = None
    if plan is not None and (mode == "first" or mode == "any"):  # the same on a convex shape
        result = _planned_raycast(plan, shape, pose, origins, directions, max_t, solid)
        if result is not None:
            return result
    shape = _shape(shape, "shape")
    route = _RAYCAST_ROUTES.get((kinds.RAY, shape.kind))
    if route is None:
        raise UnsupportedQuery("raycast", shape)
    if mode not in ("first", "any", "all"):
        raise GeometryError(f"mode must be 'first', 'any' or 'all', got {mode!r}")
    if mode == "all" and route.engine != _ENGINE_MESH_TREE:
        raise UnsupportedQuery("raycast(mode='all')", shape)
    rays = ray_arrays(pose, origins, directions, max_t)
    if rays is None:  # an empty batch
        return _empty_rays(pose, origins, directions, mode)
    poses, origin_array, direction_array, limits, single = rays
    if single and len(poses) == 1 and route.engine != _ENGINE_MESH_TREE:  # the plan's entry (then stored)
        plan = _raycast_plan(_kernels(), shape.kind)
        result = _planned_raycast(plan, shape, poses[0], origin_array[0], direction_array[0], float(limits[0]), solid)
        if result is None:  # never expected: the arguments were checked above
            raise GeometryError("pose or ray refused")  # pragma: no cover
        _RAYCAST_PLANS[shape.kind] = plan
        return result
    count = len(origin_array)
    out_hit = np.empty(count, dtype=np.bool_)
    out_t = np.empty(count)
    out_point = np.empty((count, 3))
    out_normal = np.empty((count, 3))
    out_face = np.empty(count, dtype=np.int64)
    if route.engine == _ENGINE_MESH_TREE:  # BVH traversal (touche.meshquery): same hits as the brute force
        from . import meshquery

        hits = meshquery.raycast_arrays(
            shape, poses, origin_array, direction_array, np.ascontiguousarray(limits), mode,
            out_hit, out_t, out_point, out_normal, out_face,
        )
        if mode == "all":
            return hits
        if solid and shape.solid:  # a ray starting inside a solid mesh hits at t = 0, as for convex solids
            _rays_from_inside(shape, poses, origin_array, out_hit, out_t, out_point, out_normal, out_face)
    else:
        _parallel.run(
            _kernels().raycast_many, count, _kernels().ray_engine_address(shape.kind),
            *shape._packed[:4], poses, origin_array, direction_array,
            np.ascontiguousarray(limits), bool(solid), out_hit, out_t, out_point, out_normal, out_face,
            grain=_GRAIN_RAYCAST,
        )
    if single:
        return RayResult(bool(out_hit[0]), float(out_t[0]), out_point[0], out_normal[0], int(out_face[0]))
    return RayResult(out_hit, out_t, out_point, out_normal, out_face)
