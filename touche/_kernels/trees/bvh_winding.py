"""Inside / outside of one triangle mesh on its bounding-volume hierarchy (the tree of bvh_mesh):
the generalized winding number (Jacobson et al. 2013) and signed ray crossings (fast, with a
certificate, for closed meshes).

Winding number (exact, not an approximation). For a node whose box does not contain the query
point p, the node's triangles S can be replaced by any surface C with the same boundary curve
that lies in the box: S - C is closed and lies in the (convex) box, so its winding number about
an outside p is exactly 0 and w_S(p) = w_C(p). C is the fan from the box center over the node's
boundary edges (directed edges that do not cancel inside the node). For a closed mesh the
root has no boundary and every point outside the root box gets w = 0 at once; near the surface
the sum runs over leaves plus short boundary fans. Each term is the Van Oosterom-Strackee solid
angle (atan2 form: no NaN for degenerate triangles or a point on a vertex). The result equals the
all-triangle sum up to rounding, so the inside/outside decision is as robust as the naive sum
(integer-valued off the surface), unlike the dipole far-field approximation (Barill 2018) whose
error is only heuristically bounded.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.trees.bvh_closest import point_to_local  # noqa: E402
from touche._kernels.trees.bvh_rays import ray_inverse, ray_slab  # noqa: E402


FOUR_PI = 4.0 * np.pi


# ---------------------------------------------------------------------------------------------
# winding number
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _sort_edges(edges, lo, hi):
    """Insertion sort of rows edges[lo:hi] ([a, b, weight]) by (a, b)."""
    for i in range(lo + 1, hi):
        a = edges[i, 0]
        b = edges[i, 1]
        w = edges[i, 2]
        j = i
        while j > lo and (edges[j - 1, 0] > a or (edges[j - 1, 0] == a and edges[j - 1, 1] > b)):
            edges[j, 0] = edges[j - 1, 0]
            edges[j, 1] = edges[j - 1, 1]
            edges[j, 2] = edges[j - 1, 2]
            j -= 1
        edges[j, 0] = a
        edges[j, 1] = b
        edges[j, 2] = w


@njit(cache=True, nogil=True)
def _compact(edges, lo, hi):
    """Sum the weights of equal (a, b) rows of the sorted edges[lo:hi] in place, drop zero
    weights; returns the new end."""
    out = lo
    i = lo
    while i < hi:
        a = edges[i, 0]
        b = edges[i, 1]
        w = 0
        while i < hi and edges[i, 0] == a and edges[i, 1] == b:
            w += edges[i, 2]
            i += 1
        if w != 0:
            edges[out, 0] = a
            edges[out, 1] = b
            edges[out, 2] = w
            out += 1
    return out


@njit(cache=True, nogil=True)
def node_boundaries(links, tri_vertex_ids):
    """Boundary edges of every node: directed edges of its triangles with opposite copies
    cancelled, as rows ``[a, b, weight]`` with ``a < b`` (weight +k: k times a -> b, -k: k times
    b -> a) over welded vertex ids ``tri_vertex_ids (m, 3)`` in tree order. Children come after
    their parent in preorder, so a reverse sweep sees both children's sorted lists first and
    merges them. Returns ``(edges (E, 3), start (N,), count (N,))``."""
    n = links.shape[0]
    capacity = 3 * tri_vertex_ids.shape[0] + 64
    edges = np.empty((capacity, 3), dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    used = 0
    for node in range(n - 1, -1, -1):
        left = links[node, 0]
        if left < 0:
            need = 3 * links[node, 3]
        else:
            need = count[left] + count[links[node, 1]]
        if used + need > capacity:
            capacity = max(2 * capacity, used + need + 64)
            grown = np.empty((capacity, 3), dtype=np.int64)
            copy_into(grown[:used], edges[:used])
            edges = grown
        lo = used
        hi = used
        if left < 0:
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                for c in range(3):
                    a = tri_vertex_ids[k, c]
                    b = tri_vertex_ids[k, (c + 1) % 3]
                    if a == b:
                        continue  # a collapsed edge bounds nothing
                    if a < b:
                        edges[hi, 0] = a
                        edges[hi, 1] = b
                        edges[hi, 2] = 1
                    else:
                        edges[hi, 0] = b
                        edges[hi, 1] = a
                        edges[hi, 2] = -1
                    hi += 1
            _sort_edges(edges, lo, hi)
        else:
            # merge the two sorted child lists
            right = links[node, 1]
            i = start[left]
            i_end = i + count[left]
            j = start[right]
            j_end = j + count[right]
            while i < i_end or j < j_end:
                take_left = j >= j_end or (
                    i < i_end and (edges[i, 0] < edges[j, 0] or (edges[i, 0] == edges[j, 0] and edges[i, 1] <= edges[j, 1]))
                )
                src = i if take_left else j
                edges[hi, 0] = edges[src, 0]
                edges[hi, 1] = edges[src, 1]
                edges[hi, 2] = edges[src, 2]
                hi += 1
                if take_left:
                    i += 1
                else:
                    j += 1
        hi = _compact(edges, lo, hi)
        start[node] = lo
        count[node] = hi - lo
        used = hi
    return edges[:used].copy(), start, count


@njit(cache=True, nogil=True)
def solid_angle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Signed solid angle of triangle abc seen from p (Van Oosterom and Strackee 1983):
    tan(omega / 2) = [A B C] / (|A||B||C| + (A.B)|C| + (A.C)|B| + (B.C)|A|), A = a - p, ...
    atan2 keeps it finite for every input (0 for a point on a vertex or a zero-area triangle);
    exactly 0 for p in the triangle's plane (see below)."""
    ax -= px
    ay -= py
    az -= pz
    bx -= px
    by -= py
    bz -= pz
    cx -= px
    cy -= py
    cz -= pz
    la = np.sqrt(ax * ax + ay * ay + az * az)
    lb = np.sqrt(bx * bx + by * by + bz * bz)
    lc = np.sqrt(cx * cx + cy * cy + cz * cz)
    det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)
    if det == 0.0:
        # p in the triangle's plane: 0 outside the triangle, and ON it the principal value 0 (the
        # mean of the +-2 pi limits from either side), which is what makes w = 1/2 on a face
        # instead of 0 or 1 by the sign of a rounded zero
        return 0.0
    den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb + (
        bx * cx + by * cy + bz * cz
    ) * la
    return 2.0 * np.arctan2(det, den)


PLAN_FAN = 0
PLAN_DIRECT = 1
PLAN_DESCEND = 2


@njit(cache=True, nogil=True)
def outside_plan(links, cap_count):
    """Cheapest exact treatment of each node when the query point is outside its box (then it is
    outside every descendant's box too, children's boxes lying inside their parent's), in solid
    angles evaluated: the fan (``cap_count`` terms, if >= 0), the node's triangles, or the
    children's plans. Bottom-up over reverse preorder. Returns ``plan (N,) int64``."""
    n = links.shape[0]
    cost = np.empty(n, dtype=np.int64)
    plan = np.empty(n, dtype=np.int64)
    for node in range(n - 1, -1, -1):
        best = links[node, 3]
        choice = PLAN_DIRECT
        if cap_count[node] >= 0 and cap_count[node] < best:
            best = cap_count[node]
            choice = PLAN_FAN
        left = links[node, 0]
        if left >= 0 and cost[left] + cost[links[node, 1]] < best:
            best = cost[left] + cost[links[node, 1]]
            choice = PLAN_DESCEND
        cost[node] = best
        plan[node] = choice
    return plan


@njit(cache=True, nogil=True)
def _outside(boxes, node, p):
    return (
        p[0] < boxes[node, 0] or p[1] < boxes[node, 1] or p[2] < boxes[node, 2]
        or p[0] > boxes[node, 3] or p[1] > boxes[node, 4] or p[2] > boxes[node, 5]
    )


@njit(cache=True, nogil=True)
def winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan, p,
                    stack_node):
    """Generalized winding number of the mesh about p (mesh frame): sum of signed solid angles
    / 4 pi. A node whose (padded) box does not contain p is handled by its ``plan``
    (:func:`outside_plan`): its boundary fan from the box center (exact; module doc), its
    triangles summed directly, or its children; a node containing p is descended (a leaf:
    summed directly)."""
    total = 0.0
    stack_node[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        left = links[node, 0]
        outside = _outside(boxes, node, p)
        if outside and plan[node] == PLAN_FAN:
            cx = 0.5 * (boxes[node, 0] + boxes[node, 3])
            cy = 0.5 * (boxes[node, 1] + boxes[node, 4])
            cz = 0.5 * (boxes[node, 2] + boxes[node, 5])
            for e in range(cap_start[node], cap_start[node] + cap_count[node]):
                a = cap_edges[e, 0]
                b = cap_edges[e, 1]
                total += cap_weight[e] * solid_angle(
                    p[0], p[1], p[2], cx, cy, cz, vertices[a, 0], vertices[a, 1], vertices[a, 2],
                    vertices[b, 0], vertices[b, 1], vertices[b, 2],
                )
            continue
        if left < 0 or (outside and plan[node] == PLAN_DIRECT):
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                total += solid_angle(
                    p[0], p[1], p[2], tri_vertices[k, 0, 0], tri_vertices[k, 0, 1], tri_vertices[k, 0, 2],
                    tri_vertices[k, 1, 0], tri_vertices[k, 1, 1], tri_vertices[k, 1, 2],
                    tri_vertices[k, 2, 0], tri_vertices[k, 2, 1], tri_vertices[k, 2, 2],
                )
            continue
        stack_node[top] = links[node, 1]
        stack_node[top + 1] = left
        top += 2
    return total / FOUR_PI


@njit(cache=True, nogil=True)
def winding_tree_many(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan,
                      depth, poses, queries, out, lo, hi):
    """Winding number of the mesh (one pose, or one per query) about each world query."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_node = np.empty(2 * depth + 8, dtype=np.int64)
    local = np.empty(3)
    for i in range(lo, hi):
        point_to_local(poses[i * step], queries[i], local)
        out[i] = winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight,
                                 vertices, plan, local, stack_node)


# ---------------------------------------------------------------------------------------------
# signed ray crossings (fast inside / outside for closed meshes, with a certificate)
# ---------------------------------------------------------------------------------------------

CROSSING_TOLERANCE = 1e-11  # relative margin: ~1e5 times the rounding bound of each quantity
AMBIGUOUS = 2


@njit(cache=True, nogil=True, inline="always")
def classify_crossing(tri, k, ox, oy, oz, dx, dy, dz):
    """How the ray o + t d (t > 0) crosses prepared triangle k: +1 leaving through its front
    (d . n > 0), -1 entering, 0 certainly not crossing, AMBIGUOUS when any deciding quantity
    (plane side of o, the three edge functions, parallelism) is within CROSSING_TOLERANCE of
    its own rounding scale of zero: then rounding could change the answer (grazing an edge or
    vertex, the origin on the plane, a ray in the plane), and the caller falls back to the exact
    winding number."""
    nx = tri[k, 9]
    ny = tri[k, 10]
    nz = tri[k, 11]
    dn = dx * nx + dy * ny + dz * nz
    apx = ox - tri[k, 0]
    apy = oy - tri[k, 1]
    apz = oz - tri[k, 2]
    ap1 = abs(apx) + abs(apy) + abs(apz)
    n1 = abs(nx) + abs(ny) + abs(nz)
    tn = apx * nx + apy * ny + apz * nz
    tol_t = CROSSING_TOLERANCE * ap1 * n1
    if n1 == 0.0:
        return 0  # zero area: covers nothing (a ray through its segment grazes the neighbours)
    if abs(dn) <= CROSSING_TOLERANCE * n1:
        return AMBIGUOUS  # (nearly) parallel to the plane: the crossing is ill-conditioned
    # the ray meets the plane at t = -tn / dn: behind the origin when tn and dn share a sign
    if (tn > tol_t and dn > 0.0) or (tn < -tol_t and dn < 0.0):
        return 0
    ex = apy * dz - apz * dy
    ey = apz * dx - apx * dz
    ez = apx * dy - apy * dx
    vn = tri[k, 6] * ex + tri[k, 7] * ey + tri[k, 8] * ez
    wn = -(tri[k, 3] * ex + tri[k, 4] * ey + tri[k, 5] * ez)
    un = -dn - vn - wn  # = denom - vn - wn before the sign flip
    if dn > 0.0:
        vn = -vn
        wn = -wn
        un = -un
    ab1 = abs(tri[k, 3]) + abs(tri[k, 4]) + abs(tri[k, 5])
    ac1 = abs(tri[k, 6]) + abs(tri[k, 7]) + abs(tri[k, 8])
    tol_v = CROSSING_TOLERANCE * ac1 * ap1
    tol_w = CROSSING_TOLERANCE * ab1 * ap1
    tol_u = tol_v + tol_w + CROSSING_TOLERANCE * n1
    if vn < -tol_v or wn < -tol_w or un < -tol_u:
        return 0  # certainly outside the triangle
    if vn <= tol_v or wn <= tol_w or un <= tol_u or abs(tn) <= tol_t:
        return AMBIGUOUS  # near an edge / vertex, or the origin near the plane
    return 1 if dn > 0.0 else -1


@njit(cache=True, nogil=True)
def signed_crossings(rec_f, rec_i, root, root_box, tri, ox, oy, oz, dx, dy, dz, stack_a, stack_b):
    """Sum of classify_crossing over every triangle along the whole ray; (sum, certain)."""
    ix = ray_inverse(dx)
    iy = ray_inverse(dy)
    iz = ray_inverse(dz)
    near, far = ray_slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0:
        return 0, True
    total = 0
    stack_a[0] = root[0]
    stack_b[0] = root[1]
    top = 1
    while top > 0:
        top -= 1
        index = stack_a[top]
        count = stack_b[top]
        if count > 0:
            for k in range(index, index + count):
                c = classify_crossing(tri, k, ox, oy, oz, dx, dy, dz)
                if c == AMBIGUOUS:
                    return 0, False
                total += c
            continue
        for side in range(2):
            near, far = ray_slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
            if near <= far and far >= 0.0:
                stack_a[top] = rec_i[index, 12 + 2 * side]
                stack_b[top] = rec_i[index, 13 + 2 * side]
                top += 1
    return total, True


@njit(cache=True, nogil=True)
def crossings_many(rec_f, rec_i, root, root_box, tri, depth, poses, queries, direction, out_count, out_certain,
                   lo, hi):
    """Signed crossing count of the ray from each world query along the mesh-frame unit
    ``direction`` (leaving +1, entering -1): the winding number of a closed mesh about the
    query when ``out_certain`` (every crossing decided beyond rounding), else undecided."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_a = np.empty(2 * depth + 8, dtype=np.int64)
    stack_b = np.empty(2 * depth + 8, dtype=np.int64)
    local = np.empty(3)
    for i in range(lo, hi):
        point_to_local(poses[i * step], queries[i], local)
        total, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, local[0], local[1], local[2],
                                          direction[0], direction[1], direction[2], stack_a, stack_b)
        out_count[i] = total
        out_certain[i] = certain
