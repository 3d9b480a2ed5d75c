"""Linear programming and friends for convex polytopes (Ericson ch. 9.4, 9.6).

    from touche import lp
    lp.linprog(c, A, b)                       # maximize c.x s.t. A x <= b, x in R^2 or R^3
    lp.feasible_point(A, b)                   # Chebyshev centre: a point as deep inside as possible
    lp.polytopes_intersect(a, pose_a, b, pose_b, method="lp" | "chung-wang")
    lp.separating_vector(a, pose_a, b, pose_b)  # Chung-Wang
    lp.fourier_motzkin(A, b)                  # bounds of the last variable (exponential; teaching)

``linprog`` is Seidel's randomized incremental algorithm (expected O(m) for d <= 3), its random
order drawn from ``seed`` (reproducible). Results carry explicit statuses (:class:`LPStatus`,
:class:`Feasibility`, :class:`SeparationStatus`).

Polytopes are Triangle, ConvexPolygon, Tetrahedron, Box / AABB and ConvexPolyhedron. By LP they
intersect iff the union of their (posed) face halfspaces is feasible; flat shapes carry a front
and a back plane with opposite offsets (an equality), so they work too. Closed sets: touching
counts, within ``touche.tolerance`` (ABSOLUTE + RELATIVE * the largest plane offset).

Chung-Wang works on the vertices. It only *decides separation*: it reports SEPARATED with a
vector s such that max over A of p.s < min over B of q.s (less a tolerance). It reports
INTERSECTING when its sub-algorithm proves the origin lies in B - A (the stored directions
(q_i - p_i)/|q_i - p_i| admit no m with m.r_i > 0, checked every few iterations by a 4D Seidel
LP) or when a support pair coincides; otherwise it stops at ``max_iterations`` with
MAX_ITERATIONS. ``polytopes_intersect(method="chung-wang")`` is a combined test: up to
``max_iterations`` (default 8) reflections without the sub-algorithm, then the plane LP decides.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import _parallel, dispatch
from ._enums import NamedIntEnum
from ._kernels import kernel_loader
from ._record import Record
from .errors import GeometryError, UnsupportedQuery
from .pose import pose_pair
from .shapes import Shape, as_shape

# Batches run through touche._parallel.run: items per chunk (the smallest chunk worth handing to a
# thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread), from the cost per pair of each driver.
_GRAIN_INTERSECT = 8  # LP / Chung-Wang plus LP on two polytopes: several us
_GRAIN_SEPARATING = 32  # Chung-Wang iterations


_kernels = kernel_loader("lp")


class LPStatus(NamedIntEnum):
    """Outcome of :func:`linprog`."""

    OPTIMAL = 0
    INFEASIBLE = 1
    UNBOUNDED = 2


class Feasibility(NamedIntEnum):
    """Outcome of :func:`feasible_point` and :func:`fourier_motzkin`."""

    FEASIBLE = 0
    INFEASIBLE = 1


class SeparationStatus(NamedIntEnum):
    """Outcome of :func:`separating_vector` (Chung-Wang)."""

    SEPARATED = 0
    INTERSECTING = 1
    MAX_ITERATIONS = 2


class LPResult(Record):
    """``status`` (:class:`LPStatus`), ``x`` (d,) float64 and ``value`` (float).

    OPTIMAL: ``x`` is an optimal point (within the tolerance of every constraint), ``value`` =
    c.x. INFEASIBLE: ``x`` NaN, ``value`` -inf. UNBOUNDED: ``x`` a feasible point, ``value`` +inf.
    """

    __slots__ = ("status", "x", "value")

    def _describe(self):
        return f"status={self.status.name}, x={self.x.tolist()}, value={self.value!r}"


class FeasibleResult(Record):
    """``status`` (:class:`Feasibility`), ``x`` (d,) and ``radius``: the largest ball about
    ``x`` inside the set (the Chebyshev centre, capped at 1 + max |b_j| / |a_j| for unbounded
    sets). ``radius > 0``: ``x`` is strictly interior; ``radius`` ~ 0 (within the tolerance):
    the set is flat (no interior) and ``x`` lies on it. INFEASIBLE: ``x`` NaN."""

    __slots__ = ("status", "x", "radius")

    def _describe(self):
        return f"status={self.status.name}, x={self.x.tolist()}, radius={self.radius!r}"


class SeparationResult(Record):
    """``status`` (:class:`SeparationStatus`), ``vector`` (unit, world frame: A lies below B
    along it when SEPARATED; otherwise the last candidate, usable as a warm start) and
    ``iterations`` (reflections made). A batch of n gives (n,) int8 status, (n, 3) vectors and
    (n,) int64 iterations."""

    __slots__ = ("status", "vector", "iterations")

    _batch_field = "iterations"

    def _describe(self):
        return f"status={self.status.name}, vector={self.vector.tolist()}, iterations={self.iterations}"


class FMResult(Record):
    """:func:`fourier_motzkin`: ``status`` (:class:`Feasibility`), ``lower`` and ``upper``
    bounds of the last variable over the feasible set (-inf / inf when unbounded; floats, or
    Fractions with ``exact=True``)."""

    __slots__ = ("status", "lower", "upper")

    def _describe(self):
        return f"status={self.status.name}, lower={self.lower}, upper={self.upper}"


# --------------------------------------------------------------------------------------------
# validation
def _matrix(value, name):
    try:
        array = np.array(value, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric") from exc
    return array


def _system(A, b, dims=(2, 3)):
    A = _matrix(A, "A")
    b = _matrix(b, "b")
    if A.ndim != 2:
        raise GeometryError(f"A must have shape (m, d), got {A.shape}")
    if A.shape[1] not in dims:
        raise GeometryError(f"A must have d in {dims} columns (the dimension), got {A.shape[1]}")
    if b.shape != (A.shape[0],):
        raise GeometryError(f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    if not np.isfinite(A).all():
        raise GeometryError("A contains NaN or inf")
    if not np.isfinite(b).all():
        raise GeometryError("b contains NaN or inf")
    return A, b


def _order(m, seed):
    return np.random.default_rng(seed).permutation(m).astype(np.int64)


# --------------------------------------------------------------------------------------------
def linprog(c, A, b, *, seed=0):
    """maximize c.x subject to A x <= b (A (m, d), d = 2 or 3) by Seidel's algorithm.

    ``seed`` picks the random order of the constraints (the answer does not depend on it beyond
    rounding). Returns an :class:`LPResult`."""
    A, b = _system(A, b)
    c = _matrix(c, "c")
    if c.shape != (A.shape[1],):
        raise GeometryError(f"c must have shape ({A.shape[1]},), got {c.shape}")
    if not np.isfinite(c).all():
        raise GeometryError("c contains NaN or inf")
    x = np.empty(A.shape[1])
    status, value = _kernels().seidel_lp(c, A, b, _order(A.shape[0], seed), x)
    return LPResult(LPStatus(status), x, float(value))


def feasible_point(A, b, *, seed=0):
    """A point of {x : A x <= b} (d = 2 or 3), as deep inside as possible: the centre of the
    largest inscribed ball (an LP in d + 1 variables). Returns a :class:`FeasibleResult`."""
    A, b = _system(A, b)
    x = np.empty(A.shape[1])
    status, radius = _kernels().chebyshev_point(A, b, _order(A.shape[0], seed), x)
    if status != 0:
        return FeasibleResult(Feasibility.INFEASIBLE, x, float(radius))
    return FeasibleResult(Feasibility.FEASIBLE, x, float(radius))


# --------------------------------------------------------------------------------------------


def _flat_planes(vertices):
    """Planes of a zero-area triangle: the segment (or point) it is, as a thin slab set whose
    opposite planes share offsets (equalities)."""
    center = vertices.mean(0)
    spread = vertices - center
    direction = spread[np.argmax(np.einsum("ij,ij->i", spread, spread))]
    length = np.linalg.norm(direction)
    normals = []
    if length > 0.0:
        axis = direction / length
        helper = np.eye(3)[np.argmin(np.abs(axis))]
        e1 = np.cross(axis, helper)
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(axis, e1)
        normals = [axis, e1, e2]
    else:
        normals = list(np.eye(3))
    rows, offsets = [], []
    for n in normals:
        projections = vertices @ n
        rows += [n, -n]
        offsets += [projections.max(), -projections.min()]
    return np.ascontiguousarray(rows, dtype=np.float64), np.ascontiguousarray(offsets, dtype=np.float64)


def _polytope(value, name):
    shape = value if isinstance(value, Shape) else as_shape(value, name)
    if shape.kind not in dispatch.POLYTOPES:
        raise UnsupportedQuery("lp.polytopes_intersect", shape)
    _, params, points, _, _ = shape._packed
    nv, nf = int(params[0]), int(params[1])
    vertices = points[:nv]
    if nf == 0:  # a zero-area triangle has no face planes
        normals, offsets = _flat_planes(np.array(vertices))
    else:
        normals, offsets = points[nv : nv + nf], params[4 : 4 + nf]
    return shape, vertices, normals, offsets


def _poses(pose_a, pose_b):
    ta, tb, count, single = pose_pair(pose_a, pose_b)
    return np.ascontiguousarray(ta.reshape(-1, 4, 4)), np.ascontiguousarray(tb.reshape(-1, 4, 4)), count, single


_METHODS = {"lp": 0, "chung-wang": 1}


# Chung-Wang inside polytopes_intersect: separated pairs are found in a few reflections (Ericson
# 9.6 quotes 3 for 95 % of cases); past this many the plane LP decides (cheaper than the 4D LPs
# of Chung-Wang's own intersection sub-algorithm, which polytopes_intersect therefore skips).
CW_INTERSECT_ITERATIONS = 8


def polytopes_intersect(a, pose_a, b, pose_b, method="lp", *, max_iterations=CW_INTERSECT_ITERATIONS, seed=0,
                        return_witness=False):
    """Whether two convex polytopes overlap (closed sets: touching counts).

    ``method="lp"``: Seidel's LP on the union of the face halfspaces (Ericson 9.4.1).
    ``method="chung-wang"``: the separating-vector algorithm (Ericson 9.6) on the vertices; pairs
    it cannot decide within ``max_iterations`` go to the LP. Poses: single (4, 4) / Pose / None,
    or (n, 4, 4) batches (compiled, on all cores). Returns a bool, or an (n,) bool array;
    with ``return_witness=True`` also a common point ((3,) or (n, 3); NaN when separated or when
    Chung-Wang decided without the LP)."""
    if method not in _METHODS:
        raise GeometryError(f"method must be 'lp' or 'chung-wang', got {method!r}")
    if int(max_iterations) < 0:
        raise GeometryError("max_iterations must be >= 0")
    _, va, na_, oa = _polytope(a, "a")
    _, vb, nb_, ob = _polytope(b, "b")
    ta, tb, count, single = _poses(pose_a, pose_b)
    kernel = _kernels()
    if single:  # serial entry: no thread-pool start for one pair
        witness = np.empty(3)
        hit = bool(kernel.intersect_pair(na_, oa, va, ta[0], nb_, ob, vb, tb[0], _METHODS[method],
                                         int(max_iterations), int(seed), witness))
        return (hit, witness) if return_witness else hit
    out = np.empty(count, dtype=np.int64)
    witness = np.empty((count, 3))
    _parallel.run(
        kernel.polytopes_intersect_many, count,
        na_, oa, va, ta, nb_, ob, vb, tb, _METHODS[method], int(max_iterations), int(seed), out, witness,
        grain=_GRAIN_INTERSECT,
    )
    hits = out.astype(np.bool_)
    return (hits, witness) if return_witness else hits


def separating_vector(a, pose_a, b, pose_b, *, initial=None, max_iterations=64):
    """Chung-Wang separating vector (Ericson 9.6) of two posed convex polytopes.

    ``initial``: start vector (3,) or (n, 3) (e.g. the previous frame's vector: temporal
    coherence); default the direction between the vertex centroids. Returns a
    :class:`SeparationResult`; SEPARATED guarantees max_A p.s < min_B q.s."""
    if int(max_iterations) < 0:
        raise GeometryError("max_iterations must be >= 0")
    _, va, _, _ = _polytope(a, "a")
    _, vb, _, _ = _polytope(b, "b")
    ta, tb, count, single = _poses(pose_a, pose_b)
    if initial is None:
        start = np.zeros((1, 3))
        use_initial = False
    else:
        start = _matrix(initial, "initial").reshape(-1, 3) if np.size(initial) % 3 == 0 else None
        if start is None or start.shape[0] not in (1, count) or np.ndim(initial) not in (1, 2):
            raise GeometryError(f"initial must have shape (3,) or ({count}, 3), got {np.shape(initial)}")
        if not np.isfinite(start).all():
            raise GeometryError("initial contains NaN or inf")
        if (np.einsum("ij,ij->i", start, start) == 0.0).any():
            raise GeometryError("initial contains a zero vector")
        start = np.ascontiguousarray(start)
        use_initial = True
    kernel = _kernels()
    if single:
        vector = np.empty(3)
        status, iterations = kernel.separating_vector_one(
            va, ta[0], vb, tb[0], start[0], use_initial, int(max_iterations), kernel.CW_CHECK_EVERY, vector
        )
        return SeparationResult(SeparationStatus(int(status)), vector, int(iterations))
    vectors = np.empty((count, 3))
    status = np.empty(count, dtype=np.int8)
    iterations = np.empty(count, dtype=np.int64)
    _parallel.run(kernel.separating_vector_many, count, va, ta, vb, tb, start, use_initial, int(max_iterations),
                  vectors, status, iterations, grain=_GRAIN_SEPARATING)
    return SeparationResult(status, vectors, iterations)


# --------------------------------------------------------------------------------------------
def fourier_motzkin(A, b, *, exact=False, max_rows=200_000):
    """Fourier-Motzkin elimination (Ericson 9.4.1.1) of x_1 .. x_{d-1} from A x <= b; returns the
    bounds of the last variable as an :class:`FMResult`. Pure Python, exponential in the worst
    case (a teaching / verification tool; ``max_rows`` guards the growth). ``exact=True``
    computes with Fractions (exact for the binary floats given)."""
    A, b = _system(A, b, dims=tuple(range(1, 9)))
    number = Fraction if exact else float
    rows = [([number(v) for v in row], number(rhs)) for row, rhs in zip(A.tolist(), b.tolist())]
    d = A.shape[1]
    zero = number(0)
    for k in range(d - 1):
        lower, upper, kept = [], [], []
        for coefficients, rhs in rows:
            a = coefficients[k]
            if a > 0:  # x_k <= (rhs - rest) / a
                upper.append(([v / a for v in coefficients], rhs / a))
            elif a < 0:  # x_k >= (rhs - rest) / a  (dividing by a < 0 flips the inequality)
                lower.append(([v / -a for v in coefficients], rhs / -a))
            else:
                kept.append((coefficients, rhs))
        if len(kept) + len(lower) * len(upper) > max_rows:
            raise GeometryError(f"Fourier-Motzkin would create more than {max_rows} rows")
        # every lower bound <= every upper bound: (row_l + row_u) has x_k coefficient 0
        for cl, rl in lower:
            for cu, ru in upper:
                combined = [u + l for u, l in zip(cu, cl)]
                combined[k] = zero
                kept.append((combined, ru + rl))
        rows = kept
    lower_bound, upper_bound = -np.inf, np.inf
    feasible = True
    for coefficients, rhs in rows:
        a = coefficients[d - 1]
        if a > 0:
            bound = rhs / a
            upper_bound = bound if upper_bound == np.inf else min(upper_bound, bound)
        elif a < 0:
            bound = rhs / a
            lower_bound = bound if lower_bound == -np.inf else max(lower_bound, bound)
        elif rhs < 0:  # 0 <= rhs fails
            feasible = False
    if lower_bound != -np.inf and upper_bound != np.inf and lower_bound > upper_bound:
        feasible = False
    status = Feasibility.FEASIBLE if feasible else Feasibility.INFEASIBLE
    return FMResult(status, lower_bound, upper_bound)
