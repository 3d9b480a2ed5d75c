"""Contact manifolds of convex pairs: ``touche.contacts(a, pose_a, b, pose_b)``.

A manifold is up to ``max_points`` contact points sharing one normal (from A towards B), each
with its own depth. It is built by clipping the incident feature against the reference face
(Sutherland-Hodgman); see ``touche/_kernels/narrow/manifold.py`` for the method, its tolerances and
the polygon approximation of cylinder caps / cone bases.

Conventions
- ``depth > 0`` is penetration; a contact with ``-margin <= depth <= 0`` is speculative (the
  shapes are within ``margin``). No contact when the shapes are farther apart than ``margin``.
- Each point lies midway between the two surfaces: A's surface point is
  ``point + depth / 2 * normal`` and B's is ``point - depth / 2 * normal``.
- When a face (or a plane) is the reference, ``normal`` is that face's normal (within 1 degree
  of the engine's minimum-translation normal) and depths are measured along it, so in a deep
  penetration a depth can exceed the engine's minimum translation distance by up to
  size * sin(1 deg); otherwise ``normal`` is the engine's normal.
- A point feature (sphere, vertex, rim point) gives one contact at the engine's witness; two
  crossing edges one contact at their closest points; two edges parallel within 1 degree give
  up to two points whose reference-side surface point lies on the plane through the reference
  edge, i.e. off that edge by at most its length * sin(angle between the edges).
- Capsule surfaces below a core point are found along the normal exactly (ray exit through the
  cylinder part or the end cap), so a capsule tilted within the 1 degree tolerance still reports
  points on its true surface.
"""
from __future__ import annotations

import numpy as np

from . import _parallel, dispatch
from ._kernels import kernel_loader, kinds
from ._queryargs import contact_options
from ._record import Record
from .errors import UnsupportedQuery
from .pose import as_matrices
from .query import Status, _batch_size, _pair_engine, _pair_matrices, _raise_invalid_pose, _shape

# the pairs with a manifold (touche/dispatch.py; the kernel's manifold.contact_supported agrees,
# tests/test_dispatch.py), checked before any kernel is loaded
_CONTACT_ROUTES = dispatch.routes(dispatch.CONTACTS)


class ContactManifold(Record):
    """Result of :func:`contacts`.

    One pair: ``points`` (k, 3), ``depths`` (k,), ``normal`` (3,), ``count`` (int k),
    ``status`` (:class:`touche.Status` of the underlying distance query).
    A batch of n: ``points`` (n, max_points, 3) and ``depths`` (n, max_points), NaN past each
    pair's count, ``normal`` (n, 3), ``count`` (n,) int64, ``status`` (n,) int8.
    ``normal`` is the engine's normal (A to B) even when ``count`` is 0 (pair beyond margin).
    """

    __slots__ = ("points", "depths", "normal", "count", "status")

    _batch_field = "count"

    def _describe(self):
        return (f"count={self.count}, depths={np.round(self.depths, 6).tolist()}, "
                f"normal={np.round(self.normal, 6).tolist()}, status={self.status.name}")


# Batches run through touche._parallel.run: pose pairs per chunk (the smallest chunk worth handing
# to a thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread).
_GRAIN_MANIFOLD = 16  # a contact manifold: a few microseconds


_kernel = kernel_loader("manifold")


def contacts(a, pose_a, b, pose_b, *, max_points=4, margin=0.0):
    """Contact manifold of two convex shapes; see :class:`ContactManifold` and the module doc.

    ``pose_a`` / ``pose_b``: Pose, (4, 4), (n, 4, 4) or None; a batch on either side runs in one
    compiled call (a batch of n broadcasts against a single pose). ``max_points`` >= 1 caps the
    points per pair (the deepest is always kept, then the largest area); ``margin`` >= 0 adds
    speculative contacts for shapes up to that far apart. An empty batch (0, 4, 4) gives a
    manifold of n = 0 pairs.

    Returns a ``ContactManifold``: ``points`` (world coordinates, each midway between the two
    surfaces), ``depths`` (penetration along ``normal`` at each point; between ``-margin`` and 0
    for a speculative contact), ``normal`` (unit, A to B), ``count`` and ``status``.
    One pair gives ``(k, 3)`` / ``(k,)`` arrays with k = ``count`` <= ``max_points``; a batch
    of n gives ``(n, max_points, 3)`` / ``(n, max_points)`` arrays padded with NaN past each
    pair's ``count``, ``(n, 3)`` normals and ``(n,)`` counts and statuses.

    Two triangle meshes declared solid (``TriangleMesh(..., solid=True)``) give instead a
    :class:`touche.SolidContacts`: at most ``max_points`` points per connected interpenetration
    region (docs/solids.md; a batch gives a list of them, and ``margin`` adds one speculative
    contact to a pair apart within it); a surface mesh with a solid one is a ``GeometryError``
    (declare both solid).

    Errors: ``GeometryError`` for a bad pose (NaN, not rigid, out of range), batches of different
    lengths, ``max_points`` < 1 or a negative / NaN ``margin``; ``UnsupportedQuery`` for pairs
    without a finite convex side to clip (rays, lines, surface meshes, two planes).
    """
    a = _shape(a, "a")
    b = _shape(b, "b")
    if a.kind == kinds.MESH and b.kind == kinds.MESH and (a.solid or b.solid):
        # solid meshes: a manifold per interpenetration region (docs/solids.md)
        from .solid_queries import solid_contacts

        return solid_contacts(a, pose_a, b, pose_b, max_points=max_points, margin=margin)
    if (a.kind, b.kind) not in _CONTACT_ROUTES:
        raise UnsupportedQuery("contacts", a, b)
    max_points, margin = contact_options(max_points, margin)
    matrices = _pair_matrices(pose_a, pose_b)
    if matrices is None:  # an empty batch
        return ContactManifold(np.zeros((0, max_points, 3)), np.zeros((0, max_points)), np.zeros((0, 3)),
                               np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8))
    ta, tb = matrices
    kernel = _kernel()
    if ta.ndim == 2 and tb.ndim == 2:
        points = np.empty((max_points, 3))
        depths = np.empty(max_points)
        normal = np.empty(3)
        count, status = kernel.checked_contact_manifold_into(
            _pair_engine(kernel, a, b, False), *a._packed, ta, *b._packed, tb, margin, max_points, points, depths, normal
        )
        if status < 0 and status != kinds.UNSUPPORTED:
            _raise_invalid_pose(status, pose_a, pose_b)
        if status == kinds.UNSUPPORTED:  # pragma: no cover - the registry refuses these pairs first
            raise UnsupportedQuery("contacts", a, b)
        return ContactManifold(points[:count], depths[:count], normal, int(count), Status(status))
    ta = as_matrices(ta, "pose_a") if ta.ndim == 2 else ta
    tb = as_matrices(tb, "pose_b") if tb.ndim == 2 else tb
    n = _batch_size(ta, tb)
    points = np.empty((n, max_points, 3))
    depths = np.empty((n, max_points))
    normals = np.empty((n, 3))
    counts = np.empty(n, dtype=np.int64)
    status = np.empty(n, dtype=np.int8)
    _parallel.run(
        kernel.contact_manifold_many, n, _pair_engine(kernel, a, b, False),
        *a._packed, ta.reshape(-1, 4, 4), *b._packed, tb.reshape(-1, 4, 4), margin, max_points,
        points, depths, normals, counts, status, grain=_GRAIN_MANIFOLD,
    )
    if (status == kinds.UNSUPPORTED).any():  # pragma: no cover - the registry refuses these pairs first
        raise UnsupportedQuery("contacts", a, b)
    return ContactManifold(points, depths, normals, counts, status)
