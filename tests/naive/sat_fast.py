"""Slow, obviously correct references for touche/_kernels/primitives/sat_fast.py (vectorised numpy / scipy).

- ``sat_gap``: a generic separating-axis gap on vertex sets. Candidate axes are built from a set
  of directions D (the edge directions of both objects, plus the centre offset): D itself, all
  D_i x D_j and (optionally) all (D_i x D_j) x D_k, normalised (null ones dropped). For convex
  polytopes whose edges are in D this contains every facet normal, including the flat and linear
  degenerate cases. gap = max over axes of the gap between the two projection intervals: > 0
  proves separation; for a complete axis set gap <= 0 means overlap and -gap is the smallest
  interval overlap (so |gap| small = "near touching").
- ``lp_overlap``: scipy linprog feasibility of sum(l_i a_i) = sum(m_j b_j), l, m >= 0, sums 1
  (the two convex hulls share a point). Slow: used on a subset.
- ``first_contact_vectorised``: the algorithm of tests/naive/toi.py ``first_contact_by_sampling``
  (dense samples, then bisection of the static test) run for many cases at once.
- point-to-box and point-to-triangle distances, polygon clipping for areas.
"""
import numpy as np
from scipy.optimize import linprog

_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)


def box_vertices(center, axes, half):
    """(n, 8, 3) corners; axes rows are the unit axes."""
    center = np.asarray(center, float).reshape(-1, 3)
    axes = np.asarray(axes, float).reshape(-1, 3, 3)
    half = np.asarray(half, float).reshape(-1, 3)
    return center[:, None, :] + np.einsum("vk,nk,nkj->nvj", _SIGNS, half, axes)


def triangle_edges(tri):
    tri = np.asarray(tri, float).reshape(-1, 3, 3)
    return np.roll(tri, -1, axis=1) - tri


def _axes(directions, triple):
    """Unit axes from the directions (n, m, 3) (normalised first): D, D_i x D_j, optionally
    (D_i x D_j) x D_k. An axis shorter than 1e-10 (sine of the angle) is null (all zeros)."""
    n, m, _ = directions.shape
    length = np.linalg.norm(directions, axis=2, keepdims=True)
    directions = np.where(length > 0, directions / np.where(length > 0, length, 1.0), 0.0)
    i, j = np.triu_indices(m, 1)
    pairs = np.cross(directions[:, i], directions[:, j])
    parts = [directions, pairs]
    if triple:
        parts.append(np.cross(pairs[:, :, None, :], directions[:, None, :, :]).reshape(n, -1, 3))
    axes = np.concatenate(parts, axis=1)
    norm = np.linalg.norm(axes, axis=2, keepdims=True)
    return np.where(norm > 1e-10, axes / np.where(norm > 0, norm, 1.0), 0.0)


def sat_gap(va, vb, directions, triple=True, chunk=2000):
    """Largest separation of the vertex sets va (n, p, 3) and vb (n, q, 3) over the axes built
    from directions (n, m, 3). Null axes contribute -inf."""
    out = np.empty(va.shape[0])
    for s in range(0, va.shape[0], chunk):
        d = directions[s:s + chunk]
        axes = _axes(d, triple)
        pa = np.einsum("nvk,nak->nav", va[s:s + chunk], axes)
        pb = np.einsum("nvk,nak->nav", vb[s:s + chunk], axes)
        gap = np.maximum(pb.min(2) - pa.max(2), pa.min(2) - pb.max(2))
        null = ~np.any(axes != 0.0, axis=2)
        gap[null] = -np.inf
        out[s:s + chunk] = gap.max(1)
    return out


def _directions(edges_a, edges_b, va, vb, offset=True):
    """Edge directions of both objects, plus the centroid offset (needed only when both are
    lower-dimensional, e.g. two points: the other cases are complete without it)."""
    if not offset:
        return np.concatenate([edges_a, edges_b], axis=1)
    centre = vb.mean(axis=1) - va.mean(axis=1)
    return np.concatenate([edges_a, edges_b, centre[:, None, :]], axis=1)


def obb_obb_gap(ca, ua, ha, cb, ub, hb, triple=False):
    va = box_vertices(ca, ua, ha)
    vb = box_vertices(cb, ub, hb)
    ua = np.asarray(ua, float).reshape(-1, 3, 3)
    ub = np.asarray(ub, float).reshape(-1, 3, 3)
    return sat_gap(va, vb, _directions(ua, ub, va, vb, offset=False), triple)


def triangle_obb_gap(tri, c, u, h):
    """Box faces, triangle edges and their crosses: complete for any triangle (even zero-area)
    against a (full-dimensional) box."""
    va = np.asarray(tri, float).reshape(-1, 3, 3)
    vb = box_vertices(c, u, h)
    return sat_gap(va, vb, _directions(triangle_edges(va), np.asarray(u, float).reshape(-1, 3, 3), va, vb, False),
                   False)


def _is_flat(tri):
    e = triangle_edges(tri)
    n = np.cross(e[:, 0], -e[:, 2])
    longest = np.max(np.einsum("nij,nij->ni", e, e), axis=1)
    return np.einsum("ni,ni->n", n, n) <= 1e-16 * longest ** 2


def triangle_triangle_gap(ta, tb):
    """Proper triangles: directions = edges, both normals and the offset, pairs only (this holds
    n_A, n_B, e_i x f_j and the in-plane n x e). Zero-area triangles: the triple crosses too."""
    va = np.asarray(ta, float).reshape(-1, 3, 3)
    vb = np.asarray(tb, float).reshape(-1, 3, 3)
    ea, eb = triangle_edges(va), triangle_edges(vb)
    normals = np.stack([np.cross(ea[:, 0], -ea[:, 2]), np.cross(eb[:, 0], -eb[:, 2])], axis=1)
    out = sat_gap(va, vb, np.concatenate([_directions(ea, eb, va, vb, False), normals], axis=1), False)
    flat = _is_flat(va) | _is_flat(vb)
    if flat.any():
        out[flat] = sat_gap(va[flat], vb[flat], _directions(ea[flat], eb[flat], va[flat], vb[flat]), True)
    return out


def lp_overlap(va, vb):
    """Whether the convex hulls of the point sets va (p, 3) and vb (q, 3) share a point (LP)."""
    p, q = len(va), len(vb)
    scale = max(1.0, np.abs(va).max(), np.abs(vb).max())
    a_eq = np.zeros((5, p + q))
    a_eq[:3, :p] = va.T / scale
    a_eq[:3, p:] = -vb.T / scale
    a_eq[3, :p] = 1.0
    a_eq[4, p:] = 1.0
    b_eq = np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    res = linprog(np.zeros(p + q), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    return res.status == 0


def first_contact_vectorised(separated_at, t_max, samples=48, tolerance=1e-13):
    """tests/naive_toi.first_contact_by_sampling for n cases at once.

    ``separated_at(t, idx)`` returns, for the cases ``idx``, whether they are separated at the
    times ``t`` (both (m,)). Returns (n,) first contact times, NaN where no sample found contact
    (a MISS, or a graze between samples).
    """
    t_max = np.asarray(t_max, float)
    n = t_max.shape[0]
    result = np.full(n, np.nan)
    everything = np.arange(n)
    at0 = ~separated_at(np.zeros(n), everything)
    result[at0] = 0.0
    open_ = everything[~at0]
    low = np.zeros(n)
    high = np.full(n, np.nan)
    for k in range(1, samples + 1):
        t = t_max[open_] * (k / samples)
        hit = ~separated_at(t, open_)
        low[open_[hit]] = t_max[open_[hit]] * ((k - 1) / samples)
        high[open_[hit]] = t[hit]
        open_ = open_[~hit]
    todo = everything[~np.isnan(high)]
    while todo.size:
        mid = 0.5 * (low[todo] + high[todo])
        sep = separated_at(mid, todo)
        low[todo[sep]] = mid[sep]
        high[todo[~sep]] = mid[~sep]
        todo = todo[(high[todo] - low[todo]) > tolerance * np.maximum(1.0, t_max[todo])]
    done = ~np.isnan(high)
    result[done] = high[done]
    return result


def point_box_distance(p, c, u, h):
    """Distance from points p (n, 3) to solid boxes (clamp in the box frame)."""
    local = np.einsum("nij,nj->ni", np.asarray(u, float), p - c)
    clamped = np.clip(local, -h, h)
    return np.linalg.norm(local - clamped, axis=1)


def point_triangle_distance(p, tri):
    """Distance from points p (n, 3) to closed triangles (n, 3, 3): inside-prism projection or
    the nearest edge (each edge by a clamped parameter). Zero-area triangles: edges only."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    best = np.full(len(p), np.inf)
    for s, e in ((a, b), (b, c), (c, a)):
        d = e - s
        dd = np.einsum("ni,ni->n", d, d)
        t = np.clip(np.einsum("ni,ni->n", p - s, d) / np.where(dd > 0, dd, 1.0), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(p - (s + t[:, None] * d), axis=1))
    n = np.cross(b - a, c - a)
    nn = np.einsum("ni,ni->n", n, n)
    ok = nn > 1e-24 * np.einsum("ni,ni->n", b - a, b - a) ** 2
    dist = np.einsum("ni,ni->n", p - a, n) / np.sqrt(np.where(ok, nn, 1.0))
    q = p - dist[:, None] * n / np.sqrt(np.where(ok, nn, 1.0))[:, None]
    inside = ok.copy()
    for s, e in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ni,ni->n", np.cross(e - s, q - s), n) >= 0
    return np.where(inside, np.minimum(best, np.abs(dist)), best)


def clip_polygon_2d(subject, clip):
    """Sutherland-Hodgman of a 2D polygon by a convex CCW polygon (lists of (x, y))."""
    out = list(subject)
    for i in range(len(clip)):
        a, b = np.asarray(clip[i]), np.asarray(clip[(i + 1) % len(clip)])
        inp, out = out, []
        for j in range(len(inp)):
            p, q = np.asarray(inp[j]), np.asarray(inp[(j + 1) % len(inp)])
            sp = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
            sq = (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0])
            if sp >= 0:
                out.append(p)
            if (sp > 0 > sq) or (sp < 0 < sq):
                out.append(p + sp / (sp - sq) * (q - p))
        if not out:
            return []
    return out


def polygon_area_2d(points):
    if len(points) < 3:
        return 0.0
    pts = np.asarray(points)
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
