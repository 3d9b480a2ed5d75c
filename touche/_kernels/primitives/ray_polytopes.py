"""Rays against flat and polytope shapes (Ericson 5.3.4-5.3.6, 5.3.8): triangles (two-sided,
barycentric, the first hit over a triangle list), lines against triangles and quads, planar
convex polygons, convex polyhedra given by face planes, and tetrahedra. The uniform ray
contract and the shared helpers live in ray.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.primitives.ray import INF, chord_hit, clip_chord, no_hit, safe_unit, triple_product


# --------------------------------------------------------------------------- triangles / polygons


@njit(cache=True, nogil=True)
def _ray_tri(o, d, t_max, a, b, c):
    """Ericson 5.3.6 (Moller-Trumbore style), made two-sided. Returns (hit, t, u, v, w, dn)
    with dn = d . n, n = (b-a) x (c-a).
    Steps: n = ab x ac; denom = -d.n (qp.n with qp = -d); denom == 0 -> parallel ray or
    zero-area triangle -> no hit (a ray lying in the triangle's plane is reported as no hit);
    flip signs if denom < 0 (back face); t = ap.n, e = ap x d, v = ac.e, w = -ab.e;
    accept iff t >= 0, v >= 0, w >= 0, v + w <= denom, then divide by denom."""
    ab = np.empty(3)
    ac = np.empty(3)
    ap = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
        ap[i] = o[i] - a[i]
    n = _cross(ab, ac)
    dn = _dot(d, n)
    denom = -dn
    if denom == 0.0:
        return False, INF, 0.0, 0.0, 0.0, dn
    tn = _dot(ap, n)
    e = _cross(ap, d)
    vn = _dot(ac, e)
    wn = -_dot(ab, e)
    if denom < 0.0:
        denom = -denom
        tn = -tn
        vn = -vn
        wn = -wn
    if tn < 0.0 or vn < 0.0 or wn < 0.0 or vn + wn > denom:
        return False, INF, 0.0, 0.0, 0.0, dn
    t = tn / denom
    if not (t <= t_max) or t == INF:
        return False, INF, 0.0, 0.0, 0.0, dn
    v = vn / denom
    w = wn / denom
    u = (denom - vn - wn) / denom
    return True, t + 0.0, u, v, w, dn


@njit(cache=True, nogil=True)
def ray_triangle_bary(o, d, t_max, a, b, c):
    """Two-sided ray vs triangle (Ericson 5.3.6) -> (hit, t, u, v, w), point = u a + v b + w c.
    Zero-area triangles and rays lying in the triangle's plane: no hit (never NaN).
    No hit: (False, inf, 0, 0, 0)."""
    hit, t, u, v, w, dn = _ray_tri(o, d, t_max, a, b, c)
    return hit, t, u, v, w


@njit(cache=True, nogil=True)
def ray_triangle(o, d, t_max, a, b, c, solid):
    """Two-sided ray vs triangle; normal = unit((b-a) x (c-a)) flipped to face the origin
    (opposite to d). solid is ignored (a triangle has no interior)."""
    hit, t, u, v, w, dn = _ray_tri(o, d, t_max, a, b, c)
    if not hit:
        return False, INF, np.zeros(3)
    ab = np.empty(3)
    ac = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
    nrm = safe_unit(_cross(ab, ac))
    if dn > 0.0:
        for i in range(3):
            nrm[i] = -nrm[i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def intersect_line_triangle(p, q, a, b, c):
    """Ericson 5.3.4: infinite line through p, q vs triangle abc, TWO-SIDED (the book's
    main listing is one-sided/CCW; its double-sided variant is used). -> (hit, u, v, w)
    with r = u a + v b + w c.
    Steps: u = [pq pc pb], v = [pq pa pc], w = [pq pb pa]; hit iff all >= 0 or all <= 0,
    and u + v + w != 0 (== 0 when the line lies in / is parallel to the plane, p == q, or
    the triangle has zero area: reported as no hit). No hit: (False, 0, 0, 0)."""
    pq = np.empty(3)
    pa = np.empty(3)
    pb = np.empty(3)
    pc = np.empty(3)
    for i in range(3):
        pq[i] = q[i] - p[i]
        pa[i] = a[i] - p[i]
        pb[i] = b[i] - p[i]
        pc[i] = c[i] - p[i]
    m = _cross(pq, pc)
    u = _dot(pb, m)
    v = -_dot(pa, m)
    w = triple_product(pq, pb, pa)
    s = u + v + w
    if s == 0.0:
        return False, 0.0, 0.0, 0.0
    if not ((u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)):
        return False, 0.0, 0.0, 0.0
    return True, u / s, v / s, w / s


@njit(cache=True, nogil=True)
def intersect_line_quad(p, q, a, b, c, d):
    """Ericson 5.3.5: line through p, q vs convex quad abcd (two-sided) -> (hit, point).
    Deviation from the listing: instead of the diagonal-first trick the two triangles abc
    and acd are tested with the two-sided 5.3.4 test (same result; points on the diagonal
    ca go to abc). Degenerate / parallel cases: no hit, point zeros."""
    r = np.zeros(3)
    hit, u, v, w = intersect_line_triangle(p, q, a, b, c)
    if hit:
        for i in range(3):
            r[i] = u * a[i] + v * b[i] + w * c[i]
        return True, r
    hit, u, v, w = intersect_line_triangle(p, q, a, c, d)
    if hit:
        for i in range(3):
            r[i] = u * a[i] + v * c[i] + w * d[i]
        return True, r
    return False, r


@njit(cache=True, nogil=True)
def ray_convex_polygon(o, d, t_max, verts, normal, solid):
    """Two-sided ray vs planar convex polygon (verts (k,3), CCW about unit `normal`).
    Steps: t from the plane n.x = n.verts[0]; reject if n.d == 0 (ray parallel / in the
    plane: no hit); edge test with the 5.3.4 scalar triple products s_i = [d, v_i-o, v_{i+1}-o]:
    inside iff all s_i >= 0 or all <= 0, and not all zero (zero-area polygon: no hit).
    Normal = normal if n.d < 0 else -normal. solid ignored."""
    k = verts.shape[0]
    if k < 3:
        return False, INF, np.zeros(3)
    denom = _dot(normal, d)
    if denom == 0.0:
        return False, INF, np.zeros(3)
    dist = (normal[0] * (verts[0, 0] - o[0]) + normal[1] * (verts[0, 1] - o[1])
            + normal[2] * (verts[0, 2] - o[2]))
    t = dist / denom
    if not (t >= 0.0 and t <= t_max) or t == INF:
        return False, INF, np.zeros(3)
    pos = False
    neg = False
    va = np.empty(3)
    vb = np.empty(3)
    for i in range(k):
        j = i + 1 if i + 1 < k else 0
        for l in range(3):
            va[l] = verts[i, l] - o[l]
            vb[l] = verts[j, l] - o[l]
        s = triple_product(d, va, vb)
        if s > 0.0:
            pos = True
        elif s < 0.0:
            neg = True
        if pos and neg:
            return False, INF, np.zeros(3)
    if not (pos or neg):
        return False, INF, np.zeros(3)
    nrm = np.empty(3)
    sg = 1.0 if denom < 0.0 else -1.0
    for l in range(3):
        nrm[l] = sg * normal[l]
    return True, t + 0.0, nrm


@njit(cache=True, nogil=True)
def ray_triangles_first(o, d, t_max, vertices, faces):
    """Brute-force nearest two-sided hit over a triangle mesh.
    -> (hit, t, face_index, normal). normal = the hit triangle's CCW geometric unit normal
    unit((b-a) x (c-a)) -- NOT flipped towards the ray (outward for a closed, outward-CCW
    mesh). Ties keep the lowest face index. No hit: (False, inf, -1, zeros)."""
    best = t_max
    idx = -1
    for f in range(faces.shape[0]):
        a = vertices[faces[f, 0]]
        b = vertices[faces[f, 1]]
        c = vertices[faces[f, 2]]
        hit, t, u, v, w, dn = _ray_tri(o, d, best, a, b, c)
        if hit and (idx < 0 or t < best):
            best = t
            idx = f
    if idx < 0:
        return False, INF, -1, np.zeros(3)
    a = vertices[faces[idx, 0]]
    b = vertices[faces[idx, 1]]
    c = vertices[faces[idx, 2]]
    ab = np.empty(3)
    ac = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
    return True, best, idx, safe_unit(_cross(ab, ac))


# --------------------------------------------------------------------------- convex polyhedra


@njit(cache=True, nogil=True)
def _poly_interval(o, d, planes):
    """Ericson 5.3.8 Cyrus-Beck over the whole line; planes rows (nx, ny, nz, d), inside
    n.x <= d. Returns (ok, t_in, f_in, t_out, f_out) (face -1 = unbounded side).
    Steps per plane: denom = n.d, dist = d - n.o; parallel (denom == 0): reject iff
    dist < 0 (erratum E L9406: the listing rejects on dist > 0, i.e. inverted);
    otherwise t = dist/denom, entering (denom < 0) raises t_in, exiting lowers t_out;
    empty as soon as t_in > t_out."""
    t_in = -INF
    t_out = INF
    f_in = -1
    f_out = -1
    for i in range(planes.shape[0]):
        denom = planes[i, 0] * d[0] + planes[i, 1] * d[1] + planes[i, 2] * d[2]
        dist = planes[i, 3] - (planes[i, 0] * o[0] + planes[i, 1] * o[1] + planes[i, 2] * o[2])
        if denom == 0.0:
            if dist < 0.0:  # erratum E L9406
                return False, INF, -1, -INF, -1
        else:
            t = dist / denom
            if denom < 0.0:  # entering: the plane keeps [t, inf)
                t_in, f_in, t_out, f_out = clip_chord(t_in, f_in, t_out, f_out, t, i, INF, -1)
            else:  # exiting: it keeps (-inf, t]
                t_in, f_in, t_out, f_out = clip_chord(t_in, f_in, t_out, f_out, -INF, -1, t, i)
            if t_in > t_out:
                return False, INF, -1, -INF, -1
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_convex_polyhedron(o, d, t_max, planes, solid):
    """Ray vs closed convex polyhedron given by outward unit face planes (Ericson 5.3.8).
    Normal: the normal of the entering (or, from inside with solid=False, exiting) plane.
    An unbounded polyhedron with no exit plane gives no exit hit."""
    ok, t_in, f_in, t_out, f_out = _poly_interval(o, d, planes)
    code, t, f = chord_hit(ok, t_in, f_in, t_out, f_out, t_max, solid)
    if code < 2:
        return no_hit(code)
    nrm = np.empty(3)
    for i in range(3):
        nrm[i] = planes[f, i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def tetrahedron_planes(a, b, c, dd):
    """Outward unit face planes (4,4) of tetrahedron abcd, oriented away from the opposite
    vertex. A face with zero area gives the all-zero row (no constraint), so a flat
    tetrahedron never produces NaN."""
    P = np.zeros((4, 4))
    V = np.empty((4, 3))
    for i in range(3):
        V[0, i] = a[i]
        V[1, i] = b[i]
        V[2, i] = c[i]
        V[3, i] = dd[i]
    # face k omits vertex k
    for k in range(4):
        if k == 0:
            i0, i1, i2 = 1, 2, 3
        elif k == 1:
            i0, i1, i2 = 0, 2, 3
        elif k == 2:
            i0, i1, i2 = 0, 1, 3
        else:
            i0, i1, i2 = 0, 1, 2
        e1 = np.empty(3)
        e2 = np.empty(3)
        for l in range(3):
            e1[l] = V[i1, l] - V[i0, l]
            e2[l] = V[i2, l] - V[i0, l]
        n = safe_unit(_cross(e1, e2))
        if n[0] == 0.0 and n[1] == 0.0 and n[2] == 0.0:
            continue
        off = 0.0
        opp = 0.0
        for l in range(3):
            off += n[l] * (V[i0, l] + V[i1, l] + V[i2, l]) / 3.0
            opp += n[l] * V[k, l]
        if opp > off:
            for l in range(3):
                n[l] = -n[l]
            off = -off
        for l in range(3):
            P[k, l] = n[l]
        P[k, 3] = off
    return P


@njit(cache=True, nogil=True)
def ray_tetrahedron(o, d, t_max, a, b, c, dd, solid):
    """Ray vs solid tetrahedron abcd via its four face planes (Ericson 5.3.8)."""
    return ray_convex_polyhedron(o, d, t_max, tetrahedron_planes(a, b, c, dd), solid)
