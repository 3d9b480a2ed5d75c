"""Generic separating-axis test for convex polytopes with penetration depth.

Seed: Ericson 5.2.1 (separating-axis test) and 5.2.1.1 (robustness of the SAT).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

# |ea x eb|^2 <= _PARALLEL * |ea|^2 |eb|^2  (sin^2 of the angle <= 1e-12) => skip the axis.
_PARALLEL = 1e-12


@njit(cache=True, nogil=True)
def project_extent(verts, count, lx, ly, lz):
    """[min, max] of l . v over the first ``count`` rows v of ``verts``."""
    lo = np.inf
    hi = -np.inf
    for i in range(count):
        p = verts[i, 0] * lx + verts[i, 1] * ly + verts[i, 2] * lz
        if p < lo:
            lo = p
        if p > hi:
            hi = p
    return lo, hi


@njit(cache=True, nogil=True)
def sat_axes_flat(verts_poly, normal):
    """Face normal plus in-plane side normals n x e_i of a flat convex polygon (k,3).

    Row 0 is `normal` (normalised); rows 1..k are unit n x (v_{i+1} - v_i) (zero rows for
    zero-length edges; sat_convex skips zero axes). Orientation is irrelevant to sat_convex.
    Returns an array (k+1, 3).
    """
    k = verts_poly.shape[0]
    out = np.zeros((k + 1, 3))
    nl = np.sqrt(normal[0] ** 2 + normal[1] ** 2 + normal[2] ** 2)
    if nl > 0.0:
        out[0, 0] = normal[0] / nl
        out[0, 1] = normal[1] / nl
        out[0, 2] = normal[2] / nl
    n0 = out[0, 0]
    n1 = out[0, 1]
    n2 = out[0, 2]
    for i in range(k):
        j = (i + 1) % k
        ex = verts_poly[j, 0] - verts_poly[i, 0]
        ey = verts_poly[j, 1] - verts_poly[i, 1]
        ez = verts_poly[j, 2] - verts_poly[i, 2]
        cx = n1 * ez - n2 * ey
        cy = n2 * ex - n0 * ez
        cz = n0 * ey - n1 * ex
        cl = np.sqrt(cx * cx + cy * cy + cz * cz)
        if cl > 0.0:
            out[i + 1, 0] = cx / cl
            out[i + 1, 1] = cy / cl
            out[i + 1, 2] = cz / cl
    return out


@njit(cache=True, nogil=True)
def _test_axis(lx, ly, lz, verts_a, verts_b, best, bx, by, bz):
    """Normalise the axis, project both sets, update the running best (max gap)."""
    ll = np.sqrt(lx * lx + ly * ly + lz * lz)
    if not ll > 0.0:
        return best, bx, by, bz
    lx /= ll
    ly /= ll
    lz /= ll
    mina, maxa = project_extent(verts_a, verts_a.shape[0], lx, ly, lz)
    minb, maxb = project_extent(verts_b, verts_b.shape[0], lx, ly, lz)
    g1 = minb - maxa  # B on the + side
    g2 = mina - maxb  # B on the - side
    if g1 >= g2:
        g = g1
        sx, sy, sz = lx, ly, lz
    else:
        g = g2
        sx, sy, sz = -lx, -ly, -lz
    if g > best:
        return g, sx, sy, sz
    return best, bx, by, bz


@njit(cache=True, nogil=True)
def sat_convex(verts_a, edges_a, normals_a, verts_b, edges_b, normals_b):
    """Separating-axis test with signed separation (Ericson 5.2.1, 5.2.1.1).

    Inputs: verts (n,3), edges (m,3) edge DIRECTION vectors (any length; may be empty),
    normals (k,3) face normals (any orientation, zero rows ignored; may be empty), float64.

    Candidate axes: every normal of A, every normal of B, every ea x eb that is not near-zero.
    For each unit axis L: gap(L) = max(minB - maxA, minA - maxB).

    Returns (separation, axis):
      separation = max over candidates of gap(L): > 0 separated (along `axis`), = 0 touching,
        < 0 overlapping; then -separation is the penetration depth (minimum translation
        distance) provided the candidate set is complete (see below).
      axis = unit axis attaining it, oriented from A towards B: the midpoint of B's projected
        interval is >= A's (when overlapping, translating B by -separation * axis separates).
      If no candidate axis exists: (-inf, zeros) -- nothing can separate.

    Skipping near-parallel edge pairs: for exactly parallel edges ea x eb is null, and the
    pair contributes no facet to the Minkowski difference B - A (two parallel edges sum to an
    edge), so every facet normal of B - A is still a face normal of A or B or a non-null edge
    cross product: the set stays complete when the face-normal lists are complete. For
    near-parallel pairs (sin angle <= 1e-6) the facet they span is a sliver whose normal is
    numerically meaningless (Ericson 4.4.2 / 5.2.1.1); skipping it can only under-estimate
    the separation (never claim a false separation).

    What callers must pass so that the candidate set is complete (facet normals of B - A):
      - solid polytope: all its face normals and all its edge directions (box: 3 + 3).
      - flat convex polygon / triangle: normals = sat_axes_flat(verts, normal) (face normal
        plus in-plane side normals n x e_i, needed when the other shape is coplanar or flat),
        edges = its edge directions.
      - segment: edges = [b - a]; normals = none against a solid polytope; against a flat
        shape with normal n, normals = [n x (b - a)] (if nonzero) so that the coplanar case
        has the in-plane normal of the segment.
      - for two flat shapes (triangle vs triangle, polygon vs segment) pass the above for
        both; with parallel planes the Minkowski difference is flat and its boundary normals
        are the in-plane normals n x e of both shapes, which the lists then contain.
    """
    best = -np.inf
    bx = 0.0
    by = 0.0
    bz = 0.0
    for i in range(normals_a.shape[0]):
        best, bx, by, bz = _test_axis(normals_a[i, 0], normals_a[i, 1], normals_a[i, 2],
                                      verts_a, verts_b, best, bx, by, bz)
    for i in range(normals_b.shape[0]):
        best, bx, by, bz = _test_axis(normals_b[i, 0], normals_b[i, 1], normals_b[i, 2],
                                      verts_a, verts_b, best, bx, by, bz)
    for i in range(edges_a.shape[0]):
        ax = edges_a[i, 0]
        ay = edges_a[i, 1]
        az = edges_a[i, 2]
        la = ax * ax + ay * ay + az * az
        for j in range(edges_b.shape[0]):
            ex = edges_b[j, 0]
            ey = edges_b[j, 1]
            ez = edges_b[j, 2]
            lb = ex * ex + ey * ey + ez * ez
            cx = ay * ez - az * ey
            cy = az * ex - ax * ez
            cz = ax * ey - ay * ex
            cc = cx * cx + cy * cy + cz * cz
            if cc <= _PARALLEL * la * lb:
                continue  # parallel edges: see docstring
            best, bx, by, bz = _test_axis(cx, cy, cz, verts_a, verts_b, best, bx, by, bz)
    axis = np.empty(3)
    axis[0] = bx
    axis[1] = by
    axis[2] = bz
    return best, axis
