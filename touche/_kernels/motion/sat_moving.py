"""Method of separating axes for translating convex polytopes in 3D: first / last time of
contact, the contact set at first contact and the intersection set of overlapping shapes.

Seeds: Eberly, "The Method of Separating Axes" (S0) sections 4-6 and 9 (moving objects, TFirst /
TLast per axis, contact sets); Ericson 5.2.1 (separating-axis test) and 5.5.2 (intersecting
moving convex objects). Shapes are polytopes of the packed layout of touche/shapes.py: triangle,
tetrahedron, box, convex polygon, convex polyhedron (a zero-area triangle acts as its segment or
point). Motion is translation with constant world velocities.

Everything runs in the frame of B (A is moved into it, like pairs.py) to keep round-off near B's
origin; results are mapped back to the world at the end.

Why the per-axis intervals are exact for translation: A(t) and B meet iff w t lies in the
Minkowski difference M = B - A (w = velocity of A relative to B). M is the intersection of the
half-spaces of its facets, and every facet normal of M is among the candidate axes (below), so
the set of contact times is the intersection of the per-axis time intervals (S0 section 5).

Candidate axes (facet normals of M):
  - the SAT face normals of both shapes (for a flat shape: its normal and in-plane side normals);
  - e_a x e_b for the unique edge directions, skipped when |e_a x e_b|^2 <= PARALLEL |e_a|^2
    |e_b|^2 (S0 erratum L511: these products CAN vanish; a skipped parallel pair spans no facet of
    M, so nothing is lost, and we never divide by them);
  - for a flat shape with normal n: n x e for every edge direction e of the OTHER shape (S0 errata:
    moving parallel triangles become coplanar at contact and then M is flat with in-plane facet
    normals n x E_i, n x F_j; the printed coplanar test with WhichSide rejects touching, so the
    comparisons here are closed, with a tolerance);
  - when both shapes are at most one-dimensional (zero-area triangles: segments / points) M is a
    parallelogram, a segment or a point: its normal and in-plane normals, or the segment direction
    and two perpendiculars, or the three coordinate axes.

Contact within ``tolerance``: two shapes are in contact at t when on every axis the gap between
the projected intervals is <= tolerance (distance units; axes are normalised). An axis whose gap
at t = 0 exceeds the tolerance enters at its exact closing time (gap / speed), so first-contact
times are exact, not early by tolerance / speed; exits keep the tolerance (grazing contacts
survive round-off), and coplanar flat shapes moving in their common plane (zero speed along the
normal, round-off in the projections) stay in contact along it.

Here: the drivers (time of impact with its contact or intersection set, intersection sets of
batches). sat_moving_toi.py holds the time of impact and the frame helpers, sat_moving_contact.py
the contact set at first contact, sat_moving_intersection.py the intersection set.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.base.touching import touching_tolerance as _pair_tolerance
from touche._kernels.motion.sat_moving_toi import polytope_time_of_impact
from touche._kernels.motion.sat_moving_contact import polytope_contact_set
from touche._kernels.motion.sat_moving_intersection import intersection_at, polytope_intersection_set


SEPARATED_AXIS = -1.0


# ----------------------------------------------------------------------------------------------
# drivers
@njit(cache=True, nogil=True)
def _toi_pair(ka, pa, pta, tra, eda, sa, ta, va, kb, pb, ptb, trb, edb, sb, tb, vb, t_max, i,
              out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points):
    tol = _pair_tolerance(sa, ta, sb, tb)
    status, t_first, t_last, normal = polytope_time_of_impact(
        ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_max, tol)
    out_status[i] = status
    out_t[i] = t_first
    out_tlast[i] = t_last
    capacity = out_points.shape[1]
    if status == kinds.MISS:
        out_normal[i, :] = np.nan
        out_kind[i] = kinds.SET_EMPTY
        out_count[i] = 0
        out_points[i, :, :] = np.nan
        return
    copy_into(out_normal[i, :], normal)
    if status == kinds.HIT:
        kind, count, points = polytope_contact_set(
            ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_first, normal, tol)
    else:
        kind, count, points = intersection_at(pa, pta, eda, ta, va, pb, ptb, edb, tb, vb, 0.0, tol)
    out_kind[i] = kind
    out_count[i] = count
    for r in range(capacity):
        for c in range(3):
            out_points[i, r, c] = points[r, c] if r < count else np.nan


@njit(cache=True, nogil=True)
def time_of_impact_one(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                       out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points):
    """One pair ((1, 4, 4) poses, (1, 3) velocities, outputs of length 1), no thread pool."""
    _toi_pair(ka, pa, pta, tra, eda, sa, tas[0], vas[0], kb, pb, ptb, trb, edb, sb, tbs[0], vbs[0], t_max, 0,
              out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def time_of_impact_many(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                        out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points, lo, hi):
    """Batch: tas / tbs (n or 1, 4, 4), vas / vbs (n or 1, 3); batches of 1 broadcast. Outputs:
    status (n,) int8, t / t_last (n,), normal (n, 3), set kind (n,) int8, count (n,) int64,
    points (n, K, 3) NaN-padded (K = out_points.shape[1] >= set_capacity)."""
    # broadcast steps (computed once, not per pair)
    sta = 1 if tas.shape[0] > 1 else 0
    stb = 1 if tbs.shape[0] > 1 else 0
    sva = 1 if vas.shape[0] > 1 else 0
    svb = 1 if vbs.shape[0] > 1 else 0
    for i in range(lo, hi):
        ta = tas[i * sta]
        tb = tbs[i * stb]
        va = vas[i * sva]
        vb = vbs[i * svb]
        _toi_pair(ka, pa, pta, tra, eda, sa, ta, va, kb, pb, ptb, trb, edb, sb, tb, vb, t_max, i,
                  out_status, out_t, out_tlast, out_normal, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def toi_times_many_serial(ka, pa, pta, tra, eda, sa, tas, vas, kb, pb, ptb, trb, edb, sb, tbs, vbs, t_max,
                          out_status, out_t):
    """Times only (no contact set), serial: for benchmarks and tests of the TFirst logic."""
    for i in range(out_status.shape[0]):
        ta = tas[i if tas.shape[0] > 1 else 0]
        tb = tbs[i if tbs.shape[0] > 1 else 0]
        va = vas[i if vas.shape[0] > 1 else 0]
        vb = vbs[i if vbs.shape[0] > 1 else 0]
        tol = _pair_tolerance(sa, ta, sb, tb)
        status, t_first, t_last, normal = polytope_time_of_impact(
            ka, pa, pta, tra, eda, ta, va, kb, pb, ptb, trb, edb, tb, vb, t_max, tol)
        out_status[i] = status
        out_t[i] = t_first


@njit(cache=True, nogil=True)
def _intersection_pair(ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, i, out_kind, out_count, out_points):
    tol = _pair_tolerance(sa, ta, sb, tb)
    kind, count, points = polytope_intersection_set(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tol)
    out_kind[i] = kind
    out_count[i] = count
    for r in range(out_points.shape[1]):
        for c in range(3):
            out_points[i, r, c] = points[r, c] if r < count else np.nan


@njit(cache=True, nogil=True)
def intersection_one(ka, pa, pta, tra, eda, sa, tas, kb, pb, ptb, trb, edb, sb, tbs, out_kind, out_count, out_points):
    """One pair ((1, 4, 4) poses), no thread pool."""
    _intersection_pair(ka, pa, pta, tra, eda, sa, tas[0], kb, pb, ptb, trb, edb, sb, tbs[0], 0, out_kind, out_count, out_points)


@njit(cache=True, nogil=True)
def intersection_many(ka, pa, pta, tra, eda, sa, tas, kb, pb, ptb, trb, edb, sb, tbs, out_kind, out_count, out_points,
                      lo, hi):
    """Batch intersection sets at t = 0; poses (n or 1, 4, 4) broadcast."""
    sta = 1 if tas.shape[0] > 1 else 0
    stb = 1 if tbs.shape[0] > 1 else 0
    for i in range(lo, hi):
        ta = tas[i * sta]
        tb = tbs[i * stb]
        _intersection_pair(ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, i, out_kind, out_count, out_points)
