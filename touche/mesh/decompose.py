"""Convex decomposition of polyhedra (Ericson 12.5.3).

``concave_edges(mesh)``: the concave-edge test of 12.5.3 (fig. 12.26): for the faces ABC and
ADB meeting at edge AB, the edge is concave when n . (D - A) > 0 with n = (B - A) x (C - A)
(here with a tolerance relative to the mesh size).

``convex_decomposition(mesh, method="cut")`` -> list of :class:`touche.ConvexPolyhedron`:

* ``"cut"`` (built in): recursive splitting by the supporting plane of a face next to the most
  concave edge (12.5.3, fig. 12.24b), keeping only the connected pieces on each side (fig. 12.25:
  a cut must not split far-away parts of the same side — here each side is separated into its
  connected components), until a piece has no concave edge or ``max_depth`` is reached; each
  piece becomes the convex hull of its vertices (the hull closes the open cut, standing in for
  the cap polygon of 12.5.3). Approximate where pieces are not themselves convex at depth limit.
* ``"coacd"`` / ``"vhacd"``: the optional ``coacd`` or ``vhacdx`` packages (approximate convex
  decomposition by concavity metrics); GeometryError if not installed.
"""
from __future__ import annotations

import numpy as np

from ..errors import GeometryError
from . import prepare


def concave_edges(vertices, faces=None, tolerance=None):
    """Concave manifold edges: ``(edges (c, 2), depth (c,))`` with ``depth`` = distance of the
    opposite vertex D in front of face ABC's plane (> ``tolerance``, default 1e-9 x extent)."""
    v, f = prepare._mesh_arrays(vertices, faces)
    tol = prepare._default_tolerance(v) if tolerance is None else float(tolerance)
    a, b, same, edge = prepare.face_pairs(v, f)
    ok = same == 0  # inconsistently wound pairs have no meaningful inside
    a, b, edge = a[ok], b[ok], edge[ok]
    table_edges = prepare._table(v, f).edges[edge]
    normal = np.cross(v[f[a, 1]] - v[f[a, 0]], v[f[a, 2]] - v[f[a, 0]])
    length = np.linalg.norm(normal, axis=1)
    # D: the vertex of face b not on the edge
    on_edge = (f[b] == table_edges[:, :1]) | (f[b] == table_edges[:, 1:])
    d = f[b][~on_edge].reshape(-1) if on_edge.sum() == 2 * len(b) else f[b, np.argmin(on_edge, axis=1)]
    depth = np.einsum("ij,ij->i", normal, v[d] - v[table_edges[:, 0]])
    depth = np.divide(depth, length, out=np.zeros_like(depth), where=length > 0)
    concave = depth > tol
    return table_edges[concave], depth[concave]


def _split_soup(triangles, normal, offset):
    """Split a triangle soup (m, 3, 3) by the plane normal . x = offset -> (front, back) soups.
    Edge intersection points are computed from the lexicographically ordered endpoints so that
    both triangles sharing a cut edge get bitwise the same point (they weld exactly)."""
    side = triangles @ normal - offset
    front_only = (side >= 0).all(axis=1)
    back_only = (side <= 0).all(axis=1)
    # a face lying in the cut plane bounds the solid on the side opposite its normal
    on_plane = front_only & back_only
    facing = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]) @ normal > 0
    front = [triangles[front_only & ~(on_plane & facing)]]
    back = [triangles[(back_only & ~front_only) | (on_plane & facing)]]
    for index in np.flatnonzero(~front_only & ~back_only):  # triangles crossing the cut
        tri, s = triangles[index], side[index]
        for keep_front, out in ((True, front), (False, back)):
            polygon = []
            for k in range(3):
                p, q, sp, sq = tri[k], tri[(k + 1) % 3], s[k], s[(k + 1) % 3]
                inside_p = sp >= 0 if keep_front else sp <= 0
                if inside_p:
                    polygon.append(p)
                if (sp > 0 and sq < 0) or (sp < 0 and sq > 0):
                    if tuple(p) > tuple(q):
                        p, q, sp, sq = q, p, sq, sp
                    polygon.append(p + (q - p) * (sp / (sp - sq)))
            for k in range(1, len(polygon) - 1):
                out.append(np.array([polygon[0], polygon[k], polygon[k + 1]])[None])
    return np.concatenate(front), np.concatenate(back)


def _pieces(soup):
    v, f = prepare.weld(soup.reshape(-1, 3), np.arange(len(soup) * 3).reshape(-1, 3))
    if len(f) == 0:
        return []
    labels = prepare.connected_components(v, f)
    return [(v, f[labels == k]) for k in range(labels.max() + 1)]


def _hull(points):
    from ..shapes import ConvexPolyhedron

    try:
        return ConvexPolyhedron(points)
    except GeometryError:
        return None  # flat or degenerate piece: no volume


def convex_decomposition(vertices, faces=None, method="cut", max_depth=8, tolerance=None, **options):
    """Convex pieces of a closed mesh (list of ConvexPolyhedron); see the module docstring.
    ``method``: "cut" (Ericson 12.5.3, built in), "coacd" or "vhacd" (optional packages;
    ``options`` are passed to them)."""
    v, f = prepare._mesh_arrays(vertices, faces)
    if method in ("coacd", "vhacd"):
        return _backend(v, f, method, options)
    if method != "cut":
        raise GeometryError(f"method must be 'cut', 'coacd' or 'vhacd', got {method!r}")
    v, f = prepare.weld(v, f)
    f, _, _ = prepare.orient(v, f)
    tol = prepare._default_tolerance(v) * 1e3 if tolerance is None else float(tolerance)
    hulls = []
    stack = [(v, f, 0)]
    while stack:  # explicit stack, one entry per piece
        pv, pf, depth = stack.pop()
        edges, amount = concave_edges(pv, pf, tol)
        if len(edges) == 0 or depth >= max_depth:
            hull = _hull(pv[np.unique(pf)])
            if hull is not None:
                hulls.append(hull)
            continue
        a, b = edges[np.argmax(amount)]
        # the face next to the concave edge that has (a, b) in its winding
        owner = np.flatnonzero(((pf == a) | (pf == b)).sum(axis=1) == 2)[0]
        tri = pv[pf[owner]]
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        normal /= np.linalg.norm(normal)
        front, back = _split_soup(pv[pf], normal, float(normal @ tri[0]))
        parts = [p for soup in (front, back) if len(soup) for p in _pieces(soup)]
        if len(parts) < 2:  # the cut did not separate anything: stop here
            hull = _hull(pv[np.unique(pf)])
            if hull is not None:
                hulls.append(hull)
            continue
        stack.extend((pv2, pf2, depth + 1) for pv2, pf2 in parts)
    return hulls


def _backend(v, f, method, options):
    """coacd / vhacdx: their pieces as ConvexPolyhedron (Qhull hulls of the returned vertices).
    ``options`` go to ``coacd.run_coacd`` (e.g. threshold=0.05) or ``vhacdx.compute_vhacd``."""
    from ..shapes import ConvexPolyhedron

    if method == "coacd":
        try:
            import coacd
        except ImportError as exc:
            raise GeometryError("method='coacd' needs the coacd package (pip install coacd)") from exc
        coacd.set_log_level("error")  # it logs every step to stdout by default
        parts = coacd.run_coacd(coacd.Mesh(np.ascontiguousarray(v, dtype=np.float64),
                                           np.ascontiguousarray(f, dtype=np.int32)), **options)
    else:
        try:
            import vhacdx
        except ImportError as exc:
            raise GeometryError("method='vhacd' needs the vhacdx package (pip install vhacdx)") from exc
        parts = vhacdx.compute_vhacd(v, f.astype(np.uint32), **options)
    hulls = []
    for part in parts:
        try:
            hulls.append(ConvexPolyhedron(np.asarray(part[0], dtype=np.float64)))
        except GeometryError:
            continue  # a flat sliver: no volume
    return hulls
