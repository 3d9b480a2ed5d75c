"""The pair engine: distance / penetration / overlap between any two packed shapes.

Each shape reduces to a *core* (see kinds.py): a point or a linear element swept by a radius
(sphere, capsule), a convex polytope (triangle .. polyhedron), a round solid (cylinder, cone), a
plane / half-space, or a triangle mesh (a surface). A pair is handled once, for
``kind_a <= kind_b``; the reversed pair swaps its inputs and flips the result (points swapped,
normal negated).

Numerics: the lower-kind shape is moved into the local frame of the other (``inv(T_b) @ T_a``),
so the heavier shape (polytope, mesh) is never transformed and round-off stays near its origin;
results are mapped back to the world at the end.

Result convention (``pair_distance``): ``(signed_distance, point_a, point_b, normal, status)``
- separated: the exact distance, the closest points, and ``normal = (point_b - point_a) / dist``;
- overlapping: ``-depth`` where ``depth`` is the minimum translation distance along ``normal``
  (the direction B moves to separate), ``point_a`` the deepest point of A along ``normal`` and
  ``point_b`` the deepest point of B against it, so ``depth == (point_a - point_b) . normal``;
  when a depth is unbounded (lines, planes) or not computed (rays/lines through polytopes), the
  signed distance is NaN / -inf and the points and normal are NaN.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from numba.core import types as _types

from touche._kernels.base.jit import KernelInterface, njit

from touche._kernels.base import kinds
from touche._kernels.convex.gjk import gjk_distance_bounds, gjk_pair_distance, gjk_pair_separation
from touche._kernels.convex.support import relative_transform
from touche._kernels.base.vec import dot as _dot
from touche._kernels.narrow.pair_closed import apply_point, apply_vector, core_radius, finish_core_distance, linear_pair
from touche._kernels.narrow.pair_closed import linear_vs_polytope, nan3, plane_vs_plane, point_vs_polytope
from touche._kernels.narrow.pair_closed import point_vs_round, shape_vs_plane, status_of, transform_shape
from touche._kernels.narrow.pair_polytopes import box_box_closed_distance
from touche._kernels.narrow.pair_polytopes import polytope_vs_polytope
from touche._kernels.narrow.pair_mesh import convex_vs_mesh, degenerate_triangle_as_segment, linear_vs_mesh
from touche._kernels.narrow.pair_mesh import mesh_vs_plane, point_vs_mesh
from touche._kernels.narrow.pair_gjk import SAT_COST_LIMIT, bounded_for_gjk, gjk_distance, gjk_handles, gjk_intersects
from touche._kernels.narrow.pair_gjk import is_polytope, sat_cost


# ----------------------------------------------------------------------------------------------
# dispatch
@njit(cache=True, nogil=True)
def is_supported(kind_a, kind_b):
    """Whether pair_distance / pair_intersects answer this pair (either order)."""
    return not (kind_a == kinds.MESH and kind_b == kinds.MESH)


# inline: a thin layer over a core; compiled on its own it would link, optimize and emit the
# core once more (numba compiles every callee into each caller's machine code). ``core`` is one
# of the _core_* functions below: each engine family passes the one that holds only its pairs.
@njit(cache=True, nogil=True, inline="always")
def _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, boolean):
    """Core of both verbs for ka <= kb, in B's frame. Returns the B-frame result."""
    t_rel = relative_transform(ta, tb)
    pa, pta = transform_shape(ka, pa, pta, t_rel)
    ka, pa, pta = degenerate_triangle_as_segment(ka, pa, pta)
    kb, pb, ptb = degenerate_triangle_as_segment(kb, pb, ptb)
    if ka > kb:  # a degenerate triangle became a segment: keep the cores' order
        swapped = core(kb, pb, ptb, trb, edb, ka, pa, pta, tra, eda, boolean)
        return swapped[0], swapped[2], swapped[1], -swapped[3]
    return core(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


# ---- the cores: ka <= kb, both shapes already expressed in one frame (B's)
@njit(cache=True, nogil=True)
def _core_closed(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Every convex pair but polytope against polytope (_core_polytopes) and pairs that need
    GJK (see gjk_handles): point and linear cores against anything convex, point against a
    cylinder / cone, anything against a plane."""
    # ---- B is a point core
    if kb <= kinds.SPHERE:
        return finish_core_distance(pta[0], core_radius(ka, pa), ptb[0], core_radius(kb, pb), np.array([0.0, 0.0, 1.0]), 0.0)
    # ---- B is a linear core
    if kb <= kinds.LINE:
        return linear_pair(ka, pa, pta, kb, pb, ptb)
    # ---- B is a polytope
    if kb <= kinds.POLYHEDRON:
        if ka <= kinds.SPHERE:
            return point_vs_polytope(pta[0], core_radius(ka, pa), kb, pb, ptb, trb)
        if ka <= kinds.LINE:
            return linear_vs_polytope(ka, pa, pta, kb, pb, ptb, trb, edb, boolean)
        return np.nan, nan3(), nan3(), nan3()  # polytope pairs: _core_polytopes
    # ---- B is a cylinder or cone (pairs needing GJK never get here: see gjk_handles)
    if kb < kinds.PLANE:
        if ka <= kinds.SPHERE and (kb == kinds.CYLINDER or kb == kinds.CONE):
            return point_vs_round(pta[0], core_radius(ka, pa), kb, pb, ptb)
        return np.nan, nan3(), nan3(), nan3()
    # ---- B is a plane or half-space
    if kb <= kinds.HALFSPACE:
        normal = ptb[1]
        offset = _dot(normal, ptb[0])
        if ka >= kinds.PLANE:
            return plane_vs_plane(ka, pta, kb, ptb)
        return shape_vs_plane(ka, pa, pta, normal, offset, kb == kinds.HALFSPACE)
    return np.nan, nan3(), nan3(), nan3()  # meshes: _core_mesh


@njit(cache=True, nogil=True)
def _core_polytopes(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Polytope against polytope: SAT depth and feature enumeration. A zero-area triangle has
    become a segment by now (_ordered_core), so a linear core may stand on either side."""
    if kb <= kinds.LINE:
        return linear_pair(ka, pa, pta, kb, pb, ptb)
    if ka <= kinds.LINE:
        return linear_vs_polytope(ka, pa, pta, kb, pb, ptb, trb, edb, boolean)
    return polytope_vs_polytope(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


@njit(cache=True, nogil=True)
def _core_mesh(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """A shape against a mesh (kb == MESH) by brute force over its triangles: the reference the
    BVH route (bvh_shape.py) is checked against."""
    ra = core_radius(ka, pa)
    if ka <= kinds.SPHERE:
        return point_vs_mesh(pta[0], ra, ptb, trb, boolean)
    if ka <= kinds.LINE:
        return linear_vs_mesh(ka, pa, pta, ptb, trb, boolean)
    if ka < kinds.PLANE:
        return convex_vs_mesh(ka, pa, pta, tra, eda, ptb, trb, boolean)
    if ka == kinds.PLANE or ka == kinds.HALFSPACE:
        # plane is A: compute mesh-vs-plane and flip
        normal = pta[1]
        offset = _dot(normal, pta[0])
        signed, point_m, point_p, normal_mp = mesh_vs_plane(ptb, trb, normal, offset, ka == kinds.HALFSPACE)
        return signed, point_p, point_m, -normal_mp
    return np.nan, nan3(), nan3(), nan3()


@njit(cache=True, nogil=True)
def _core(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Every pair the cores answer (ka <= kb, one frame)."""
    if kb == kinds.MESH:
        return _core_mesh(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)
    if is_polytope(ka) and is_polytope(kb):
        return polytope_vs_polytope(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)
    return _core_closed(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


@njit(cache=True, nogil=True)
def _point_core_pair(pta, ra, ta, ptb, rb, tb):
    """Fast path for point/sphere pairs: straight in world coordinates, no frame change."""
    ca = apply_point(ta, pta[0])
    cb = apply_point(tb, ptb[0])
    return finish_core_distance(ca, ra, cb, rb, np.array([0.0, 0.0, 1.0]), 0.0)


# ---- the verbs over a core (inline: see _ordered_core)
@njit(cache=True, nogil=True, inline="always")
def _cores_distance(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """pair_distance without GJK, through ``core``: closed forms, SAT depth and feature
    enumeration."""
    if ka <= kinds.SPHERE and kb <= kinds.SPHERE:
        signed, point_a, point_b, normal = _point_core_pair(pta, core_radius(ka, pa), ta, ptb, core_radius(kb, pb), tb)
        return signed, point_a, point_b, normal, status_of(signed, tolerance)
    if ka <= kb:
        signed, point_a, point_b, normal = _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, False)
        frame = tb
    else:
        signed, point_b, point_a, normal = _ordered_core(core, kb, pb, ptb, trb, edb, tb, ka, pa, pta, tra, eda, ta, False)
        normal = -normal
        frame = ta
    return signed, apply_point(frame, point_a), apply_point(frame, point_b), apply_vector(frame, normal), status_of(signed, tolerance)


@njit(cache=True, nogil=True, inline="always")
def _cores_intersect(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    """pair_intersects without GJK, through ``core``."""
    if ka <= kinds.SPHERE and kb <= kinds.SPHERE:
        reach = core_radius(ka, pa) + core_radius(kb, pb)
        squared = 0.0
        for i in range(3):
            delta = (
                ta[i, 0] * pta[0, 0] + ta[i, 1] * pta[0, 1] + ta[i, 2] * pta[0, 2] + ta[i, 3]
                - tb[i, 0] * ptb[0, 0] - tb[i, 1] * ptb[0, 1] - tb[i, 2] * ptb[0, 2] - tb[i, 3]
            )
            squared += delta * delta
        return squared <= reach * reach
    if ka <= kb:
        signed = _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, True)[0]
    else:
        signed = _ordered_core(core, kb, pb, ptb, trb, edb, tb, ka, pa, pta, tra, eda, ta, True)[0]
    return not (signed > 0.0)


@njit(cache=True, nogil=True, inline="always")
def _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """Two polytopes whose SAT edge-pair axes would cost too much (big hulls): GJK for the
    distance, EPA for the depth."""
    signed, point_a, point_b, normal, gjk_status, _ = gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if gjk_status == kinds.GJK_SEPARATED:
        return signed, point_a, point_b, normal, kinds.SEPARATED
    if gjk_status == kinds.GJK_MAX_ITERATIONS or gjk_status == kinds.GJK_DEGENERATE:
        return signed, point_a, point_b, normal, gjk_status
    return signed, point_a, point_b, normal, status_of(signed, tolerance)


@njit(cache=True, nogil=True, inline="always")
def _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Two polytopes: GJK settles the separated case fast; overlap takes the exact SAT depth
    (EPA is not run: its depth would be discarded). Two boxes take their SAT first, straight
    from the poses (box_box_separation: scalars only, no moved copies; a face axis that
    separates them stops it): an overlap costs no GJK run to its failure and no general SAT;
    a pair a face axis separates, whose nearest corner lies over that face, has its distance
    there (box_box_face_distance); a pair whose best SAT axis is an edge pair's, when the two
    supporting edges' closest points check out as the boxes' supports, the distance of those
    (box_box_edge_distance); otherwise a corner of one box and its nearest point on the other,
    checked the same way (box_box_corner_distance); GJK answers the rest."""
    if ka == kinds.BOX and kb == kinds.BOX:
        found, signed, point_a, point_b, normal = box_box_closed_distance(pa, ta, pb, tb)
        if found:
            return signed, point_a, point_b, normal, status_of(signed, tolerance)
    separated, signed, point_a, point_b, normal = gjk_pair_separation(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if separated:
        return signed, point_a, point_b, normal, kinds.SEPARATED
    return _cores_distance(_core_polytopes, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


# ---- every pair in one function (tests, oracles); the public verbs go through the families
@njit(cache=True, nogil=True, inline="always")
def pair_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Signed distance, world points, normal (A to B) and status of one pair."""
    if not is_supported(ka, kb):
        return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED
    if gjk_handles(ka, kb):
        return gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if is_polytope(ka) and is_polytope(kb):
        if sat_cost(pa) * sat_cost(pb) > SAT_COST_LIMIT:
            return _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)
    return _cores_distance(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True, inline="always")
def engine_pair_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """pair_distance without GJK: closed forms, SAT depth and feature enumeration (the oracle
    that GJK is cross-checked against in the tests)."""
    return _cores_distance(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True, inline="always")
def pair_intersects(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    """Closed-set overlap of one pair (touching counts)."""
    if gjk_handles(ka, kb) or (
        (ka == kinds.POLYHEDRON and is_polytope(kb)) or (kb == kinds.POLYHEDRON and is_polytope(ka))
    ):
        return gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)
    return _cores_intersect(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb)


# ----------------------------------------------------------------------------------------------
# the engine families: one signature (PAIR_ENGINE), several kernels behind boundaries
#
# Every driver (batch.py, manifold.py) calls the pair engine through an address that Python
# passes in (jit.KernelBoundary). The engine is split by the pairs it answers, and Python
# passes the address of the smallest family that answers the call (engine_address), so a first
# query compiles only its family: closed forms for points / lines against anything, SAT for
# polytopes, GJK (and EPA) for curved solids and big hulls, a GJK boolean for overlap tests,
# and the brute force over a mesh's triangles (the reference for the mesh trees). Results are
# the same as pair_distance / pair_intersects for every pair a family is given: each family is
# those functions with the branches of other families left out.
#
# A family takes both verbs (but GJK's: distances only; gjk_boolean_engine its booleans):
# ``intersects_only`` gives pair_intersects as (0.0 when they overlap, else inf; NaN points and
# normal; TOUCHING / SEPARATED), otherwise pair_distance.
@njit(cache=True, nogil=True, inline="always")
def _boolean_answer(overlapping):
    # one NaN array for the three unused fields: an allocation per array is a measurable part of
    # a GJK pair's intersects (the callers read only the first field)
    unused = nan3()
    if overlapping:
        return 0.0, unused, unused, unused, kinds.TOUCHING
    return np.inf, unused, unused, unused, kinds.SEPARATED


# Margins and lower bounds (issue 19) travel through the boolean call too: with
# ``intersects_only`` the engine's float argument (the touching tolerance of a distance, unused
# by a boolean) is the query's THRESHOLD: 0.0 is today's overlap test; a margin > 0 asks whether
# the distance is <= margin (answered like the overlap test: 0.0 within, inf beyond);
# LOWER_BOUND_QUERY asks for a certified lower bound L of the distance (first field, 0 <= L <=
# distance up to rounding; NaN points and normal; SEPARATED when L > 0, else TOUCHING: they
# touch or overlap). Only the GJK-backed families (polytope_engine, gjk_boolean_engine) take a
# non-zero threshold: the closed forms are exact and cheap, so the verbs answer their pairs from
# the distance (touche/query.py), and a shape swept by a radius is inflated there instead.
# Carrying the threshold in an existing argument keeps the engine's one signature (a new
# argument would recompile every driver of every family).
LOWER_BOUND_QUERY = -1.0


# a lower-bound query stops when its bound is within this fraction of GJK's upper bound: a few
# iterations for polytopes, far fewer than the 1e-12 relative convergence of a distance
LOWER_BOUND_RELATIVE = 0.1


@njit(cache=True, nogil=True)
def _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, threshold):
    """The margin test (threshold > 0) or the lower bound (LOWER_BOUND_QUERY) of a pair GJK
    answers, through gjk.gjk_distance_bounds (rays and lines clipped as for the distance)."""
    ka, pa, pta, _ = bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, _ = bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    unused = nan3()
    if threshold < 0.0:
        lower, _, _ = gjk_distance_bounds(ka, pa, pta, ta, kb, pb, ptb, tb, 0.0, LOWER_BOUND_RELATIVE)
        return lower, unused, unused, unused, kinds.SEPARATED if lower > 0.0 else kinds.TOUCHING
    lower, upper, rounding = gjk_distance_bounds(ka, pa, pta, ta, kb, pb, ptb, tb, threshold, np.inf)
    if upper <= threshold:
        within = True
    elif lower > threshold:
        within = False
    else:  # stopped by rounding between the bounds: decide as the overlap test does
        within = upper <= threshold + rounding
    return _boolean_answer(within)


@njit(cache=True, nogil=True)
def closed_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Pairs of _core_closed: no polytope pair, nothing that needs GJK, no mesh."""
    if intersects_only:
        return _boolean_answer(_cores_intersect(_core_closed, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _cores_distance(_core_closed, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True)
def polytope_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Two polytopes: overlap by SAT (no polyhedron: that is the GJK boolean's), distance by GJK
    and the SAT depth (not for big hulls: that is the GJK engine's)."""
    if intersects_only:
        if tolerance != 0.0:  # a margin or a lower bound (see LOWER_BOUND_QUERY)
            return _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _boolean_answer(_cores_intersect(_core_polytopes, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True)
def gjk_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Distance of the pairs GJK handles (gjk_handles) and of big polytopes, GJK + EPA. Booleans
    are gjk_boolean_engine's (engine_address never gives this family one); asked for one, it
    answers UNSUPPORTED, so that a first distance query does not compile GJK's boolean too."""
    if intersects_only:
        return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED
    if gjk_handles(ka, kb):
        return gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    return _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)


@njit(cache=True, nogil=True)
def gjk_boolean_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Overlap of the pairs pair_intersects gives to GJK (no EPA: a boolean needs no depth).
    Distances are the GJK engine's; asked for one, it answers UNSUPPORTED."""
    if intersects_only:
        if tolerance != 0.0:  # a margin or a lower bound (see LOWER_BOUND_QUERY)
            return _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _boolean_answer(gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb))
    return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED


@njit(cache=True, nogil=True)
def mesh_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """A convex shape against a mesh by brute force over its triangles (the public verbs use the
    mesh's BVH, bvh_shape.py; this is their reference); two meshes are UNSUPPORTED."""
    if not is_supported(ka, kb):
        return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED
    if intersects_only:
        return _boolean_answer(_cores_intersect(_core_mesh, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _cores_distance(_core_mesh, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


_SHAPE_TYPES = (_types.int64, _types.float64[::1], _types.float64[:, ::1], _types.int64[:, ::1],
                _types.int64[:, ::1], _types.float64[:, ::1])


_VECTOR = _types.float64[::1]


# the drivers' one way into the engine (see jit.KernelInterface): call_pair_engine(address, (...))
PAIR_ENGINE = KernelInterface(
    "pair engine",
    (_types.boolean,) + _SHAPE_TYPES + _SHAPE_TYPES + (_types.float64,),
    _types.Tuple((_types.float64, _VECTOR, _VECTOR, _VECTOR, _types.int64)),
)


call_pair_engine = PAIR_ENGINE.call  # kernels call the intrinsic by a global name


CLOSED_ENGINE = PAIR_ENGINE.implement(closed_engine)


POLYTOPE_ENGINE = PAIR_ENGINE.implement(polytope_engine)


GJK_ENGINE = PAIR_ENGINE.implement(gjk_engine)


GJK_BOOLEAN_ENGINE = PAIR_ENGINE.implement(gjk_boolean_engine)


MESH_BRUTE_ENGINE = PAIR_ENGINE.implement(mesh_engine)


ENGINE_FAMILIES = (CLOSED_ENGINE, POLYTOPE_ENGINE, GJK_ENGINE, GJK_BOOLEAN_ENGINE, MESH_BRUTE_ENGINE)


# ---- which family answers a call (plain Python: the verbs call it before every query)
def _python_gjk_handles(kind_a, kind_b):
    lo, hi = min(kind_a, kind_b), max(kind_a, kind_b)
    if hi < kinds.CYLINDER or hi >= kinds.PLANE:
        return False
    return not (lo <= kinds.SPHERE and hi in (kinds.CYLINDER, kinds.CONE))


def _python_is_polytope(kind):
    return kinds.TRIANGLE <= kind <= kinds.POLYHEDRON


# polytopes whose SAT cost is small whatever their size (a fixed vertex and direction count)
_FIXED_POLYTOPES = (kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX)


_BY_COST = None  # polytope distance: the family depends on the two hulls' SAT cost


def _family(kind_a, kind_b, intersects_only):
    """The family of pair_distance / pair_intersects for these kinds (the same branches)."""
    if kinds.MESH in (kind_a, kind_b):
        return MESH_BRUTE_ENGINE
    both_polytopes = _python_is_polytope(kind_a) and _python_is_polytope(kind_b)
    if intersects_only:
        if _python_gjk_handles(kind_a, kind_b) or (both_polytopes and kinds.POLYHEDRON in (kind_a, kind_b)):
            return GJK_BOOLEAN_ENGINE
        return POLYTOPE_ENGINE if both_polytopes else CLOSED_ENGINE
    if _python_gjk_handles(kind_a, kind_b):
        return GJK_ENGINE
    if both_polytopes:
        return POLYTOPE_ENGINE if kind_a in _FIXED_POLYTOPES and kind_b in _FIXED_POLYTOPES else _BY_COST
    return CLOSED_ENGINE


_FAMILIES = {(kind_a, kind_b, flag): _family(kind_a, kind_b, flag)
             for kind_a in range(kinds.NUM_KINDS) for kind_b in range(kinds.NUM_KINDS) for flag in (False, True)}


def gjk_distance_family(kind_a, kind_b):
    """Whether the GJK engine answers this pair's distance: no closed form ever does
    (batch.checked_engine_distance_into skips them)."""
    return _FAMILIES[kind_a, kind_b, False] is GJK_ENGINE


def engine_by_kinds(kind_a, kind_b, intersects_only=False):
    """Whether the two kinds alone choose the family (engine_address then gives every pair of
    shapes of these kinds the same address): all but the distance of two general polytopes,
    chosen by their size."""
    return _FAMILIES[kind_a, kind_b, intersects_only] is not _BY_COST


def engine_address(kind_a, params_a, kind_b, params_b, intersects_only=False):
    """The address of the pair engine family that answers this pair (compiled on first use)."""
    family = _FAMILIES[kind_a, kind_b, intersects_only]
    if family is _BY_COST:
        big = float(params_a[2] * params_a[0]) * float(params_b[2] * params_b[0]) > SAT_COST_LIMIT
        family = GJK_ENGINE if big else POLYTOPE_ENGINE
    return family.address()
