"""Mesh preparation kernels: vertex welding, connectivity, orientation, boundary loops,
T-junctions, coplanar grouping, ear-cutting triangulation with holes.

Seeds: Ericson, Real-Time Collision Detection, 12.1 (vertex welding on a hashed uniform grid,
7.1.3), 12.2 (adjacency, connected components), 12.3 (holes, cracks, T-junctions), 12.4 (merging
coplanar faces with an absolute plane-thickness test, 12.4.1), 12.5.1 (ear cutting, holes by
zero-width channels).

Entry points (float64 / int64 C-contiguous arrays in, arrays out):

``weld_exact(bits (n, 3) int64)`` -> ``(remap (n,), kept (k,))``: rows with equal bit patterns
    (the caller passes ``(points + 0.0).view(int64)`` so that -0.0 == 0.0) become one vertex;
    ``kept`` are the first occurrences in input order, ``remap[i]`` indexes ``kept``.
``weld_tolerance(points (n, 3), tolerance, cell)`` -> ``(remap (n,), kept (k,))``: sequential
    welding (Ericson 12.1, "weld to a previously kept vertex"): vertex i joins the EARLIEST kept
    vertex within ``tolerance`` (closed ball), else it is kept. Vertex drift <= tolerance.
``component_labels(n, a (p,), b (p,))`` -> labels (n,) in 0..k-1 numbered by first appearance.
``orient_faces(m, face_a (p,), face_b (p,), same (p,))`` -> ``(flip (m,), conflicts)``: faces
    joined by a manifold edge must traverse it in opposite directions; ``same[j] = 1`` when the
    pair traverses it in the same direction. Breadth-first propagation of flips; ``conflicts``
    counts pairs that cannot be made consistent (non-orientable, e.g. a Moebius strip).
``boundary_loops(u (b,), v (b,), n_vertices)`` -> ``(starts (L + 1,), loop_vertices)``: chains the
    boundary half-edges u -> v (as they run in their faces) into closed loops running the other
    way (v -> u), i.e. the winding a face filling the hole must have.
``t_junctions(points, edge_u, edge_v, candidates, tolerance)`` -> ``(vertex, edge, t)``: vertex
    ``candidates[i]`` lies within ``tolerance`` of the interior of edge (u, v) at parameter t.
    ``candidates`` must be sorted by x coordinate (each edge scans its x range only).
``coplanar_groups(points, faces, normals, nbr_start, nbr, distance_tol, cos_tol)`` -> group (m,).
``earcut(xy (k, 2))`` -> ``(triangles (k - 2, 3), forced)``: ear cutting of a CCW simple ring.
``bridge_holes(outer (k, 2), holes (h, 2), hole_start (H + 1,))`` -> ring indices into
    ``[outer; holes]`` forming one CCW ring with zero-width channels (holes must be CW).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402

_HASH_X = np.int64(0x8DA6B343)  # large odd multipliers (Ericson 12.1 uses the same primes)
_HASH_Y = np.int64(0xD8163841)
_HASH_Z = np.int64(0xCB1AB31F)


@njit(cache=True, nogil=True)
def _table_size(n):
    size = 16
    while size < 2 * n:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def _mix(h):
    # splitmix64 finaliser: float bit patterns differ mostly in high bits
    h = (h ^ (h >> np.int64(31))) * np.int64(-4658895280553007687)
    h = (h ^ (h >> np.int64(29))) * np.int64(-7723592293110705685)
    return h ^ (h >> np.int64(32))


@njit(cache=True, nogil=True)
def weld_exact(bits):
    n = bits.shape[0]
    size = _table_size(n)
    mask = size - 1
    table = np.full(size, -1, dtype=np.int64)  # slot -> kept position
    kept = np.empty(n, dtype=np.int64)
    remap = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        h = _mix(bits[i, 0] * _HASH_X + bits[i, 1] * _HASH_Y + bits[i, 2] * _HASH_Z)
        slot = h & mask
        while True:
            k = table[slot]
            if k < 0:
                table[slot] = count
                kept[count] = i
                remap[i] = count
                count += 1
                break
            j = kept[k]
            if bits[j, 0] == bits[i, 0] and bits[j, 1] == bits[i, 1] and bits[j, 2] == bits[i, 2]:
                remap[i] = k
                break
            slot = (slot + 1) & mask
    return remap, kept[:count].copy()


@njit(cache=True, nogil=True)
def _cell_bucket(cx, cy, cz, mask):
    return _mix(cx * _HASH_X + cy * _HASH_Y + cz * _HASH_Z) & mask


@njit(cache=True, nogil=True)
def weld_tolerance(points, tolerance, cell):
    n = points.shape[0]
    size = _table_size(n)
    mask = size - 1
    first = np.full(size, -1, dtype=np.int64)  # bucket -> first kept position in its list
    nxt = np.full(n, -1, dtype=np.int64)
    kept = np.empty(n, dtype=np.int64)
    remap = np.empty(n, dtype=np.int64)
    count = 0
    tol2 = tolerance * tolerance
    for i in range(n):
        x, y, z = points[i, 0], points[i, 1], points[i, 2]
        # np.floor, not C's (int) truncation: they differ for negative coordinates (erratum
        # L14912 / L13915)
        x0 = np.int64(np.floor((x - tolerance) / cell))
        x1 = np.int64(np.floor((x + tolerance) / cell))
        y0 = np.int64(np.floor((y - tolerance) / cell))
        y1 = np.int64(np.floor((y + tolerance) / cell))
        z0 = np.int64(np.floor((z - tolerance) / cell))
        z1 = np.int64(np.floor((z + tolerance) / cell))
        best = n  # earliest kept position within tolerance: makes the result order-defined
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    k = first[_cell_bucket(cx, cy, cz, mask)]
                    while k >= 0:
                        if k < best:
                            j = kept[k]
                            dx = points[j, 0] - x
                            dy = points[j, 1] - y
                            dz = points[j, 2] - z
                            if dx * dx + dy * dy + dz * dz <= tol2:
                                best = k
                        k = nxt[k]
        if best < n:
            remap[i] = best
        else:
            bucket = _cell_bucket(np.int64(np.floor(x / cell)), np.int64(np.floor(y / cell)),
                                  np.int64(np.floor(z / cell)), mask)
            kept[count] = i
            nxt[count] = first[bucket]
            first[bucket] = count
            remap[i] = count
            count += 1
    return remap, kept[:count].copy()


@njit(cache=True, nogil=True)
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:  # path compression
        up = parent[i]
        parent[i] = root
        i = up
    return root


@njit(cache=True, nogil=True)
def component_labels(n, a, b):
    parent = np.arange(n)
    for j in range(a.shape[0]):
        ra = _find(parent, a[j])
        rb = _find(parent, b[j])
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    labels = np.full(n, -1, dtype=np.int64)
    root_label = np.full(n, -1, dtype=np.int64)
    count = 0
    for i in range(n):
        r = _find(parent, i)
        if root_label[r] < 0:
            root_label[r] = count
            count += 1
        labels[i] = root_label[r]
    return labels


@njit(cache=True, nogil=True)
def _csr(n, a, b):
    """Symmetric adjacency of n nodes from pairs (a, b): (start (n + 1,), neighbour, pair id)."""
    degree = np.zeros(n + 1, dtype=np.int64)
    for j in range(a.shape[0]):
        degree[a[j] + 1] += 1
        degree[b[j] + 1] += 1
    for i in range(n):
        degree[i + 1] += degree[i]
    fill = degree[:-1].copy()
    nbr = np.empty(degree[n], dtype=np.int64)
    pair = np.empty(degree[n], dtype=np.int64)
    for j in range(a.shape[0]):
        nbr[fill[a[j]]] = b[j]
        pair[fill[a[j]]] = j
        fill[a[j]] += 1
        nbr[fill[b[j]]] = a[j]
        pair[fill[b[j]]] = j
        fill[b[j]] += 1
    return degree, nbr, pair


@njit(cache=True, nogil=True, inline="always")
def _labels_and_queue(m):
    """A breadth-first walk's arrays over m faces: labels (-1: not reached yet), its queue."""
    return np.full(m, -1, dtype=np.int64), np.empty(m, dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _seeded(queue, seed):
    """Start the queue at seed: (head, tail)."""
    queue[0] = seed
    return 0, 1


@njit(cache=True, nogil=True)
def orient_faces(m, face_a, face_b, same):
    start, nbr, pair = _csr(m, face_a, face_b)
    flip, queue = _labels_and_queue(m)
    conflicts = 0
    for seed in range(m):
        if flip[seed] >= 0:
            continue
        flip[seed] = 0
        head, tail = _seeded(queue, seed)
        while head < tail:
            f, head = queue[head], head + 1
            for s in range(start[f], start[f + 1]):
                g = nbr[s]
                want = flip[f] ^ same[pair[s]]
                if flip[g] < 0:
                    flip[g] = want
                    queue[tail] = g
                    tail += 1
                elif flip[g] != want and f < g:  # count each inconsistent pair once
                    conflicts += 1
    return flip, conflicts


@njit(cache=True, nogil=True)
def boundary_loops(u, v, n_vertices):
    b = u.shape[0]
    # reversed half-edges v -> u, bucketed by their start vertex v
    start = np.zeros(n_vertices + 1, dtype=np.int64)
    for j in range(b):
        start[v[j] + 1] += 1
    for i in range(n_vertices):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    out_edge = np.empty(b, dtype=np.int64)
    for j in range(b):
        out_edge[fill[v[j]]] = j
        fill[v[j]] += 1
    used = np.zeros(b, dtype=np.bool_)
    cursor = start[:-1].copy()  # next unused candidate per vertex
    loop_start = np.zeros(b + 1, dtype=np.int64)
    loop_vertices = np.empty(b, dtype=np.int64)
    loops = 0
    count = 0
    for e0 in range(b):
        if used[e0]:
            continue
        origin = v[e0]
        e = e0
        while True:
            used[e] = True
            loop_vertices[count] = v[e]
            count += 1
            here = u[e]
            if here == origin:
                break
            e = -1
            while cursor[here] < start[here + 1]:
                candidate = out_edge[cursor[here]]
                cursor[here] += 1
                if not used[candidate]:
                    e = candidate
                    break
            if e < 0:  # open chain (non-manifold boundary): keep what was walked
                break
        loops += 1
        loop_start[loops] = count
    return loop_start[: loops + 1].copy(), loop_vertices[:count].copy()


@njit(cache=True, nogil=True)
def t_junctions(points, edge_u, edge_v, candidates, tolerance):
    cap = 16
    out_vertex = np.empty(cap, dtype=np.int64)
    out_edge = np.empty(cap, dtype=np.int64)
    out_t = np.empty(cap, dtype=np.float64)
    count = 0
    tol2 = tolerance * tolerance
    # candidates come sorted by x: each edge scans only those inside its x range
    xs = np.empty(candidates.shape[0], dtype=np.float64)
    for c in range(candidates.shape[0]):
        xs[c] = points[candidates[c], 0]
    for e in range(edge_u.shape[0]):
        a = edge_u[e]
        b = edge_v[e]
        ax, ay, az = points[a, 0], points[a, 1], points[a, 2]
        dx, dy, dz = points[b, 0] - ax, points[b, 1] - ay, points[b, 2] - az
        length2 = dx * dx + dy * dy + dz * dz
        if length2 <= tol2:
            continue
        lox = min(ax, ax + dx) - tolerance
        hix = max(ax, ax + dx) + tolerance
        loy = min(ay, ay + dy) - tolerance
        hiy = max(ay, ay + dy) + tolerance
        loz = min(az, az + dz) - tolerance
        hiz = max(az, az + dz) + tolerance
        first = np.searchsorted(xs, lox, side="left")
        last = np.searchsorted(xs, hix, side="right")
        for c in range(first, last):
            p = candidates[c]
            if p == a or p == b:
                continue
            px, py, pz = points[p, 0], points[p, 1], points[p, 2]
            if px < lox or px > hix or py < loy or py > hiy or pz < loz or pz > hiz:
                continue
            t = ((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / length2
            if t <= 0.0 or t >= 1.0:
                continue
            qx, qy, qz = ax + t * dx - px, ay + t * dy - py, az + t * dz - pz
            if qx * qx + qy * qy + qz * qz > tol2:
                continue
            # not a T-vertex if it sits on an endpoint (that is a weld, not a T-junction)
            if t * t * length2 <= tol2 or (1.0 - t) * (1.0 - t) * length2 <= tol2:
                continue
            if count == cap:
                cap *= 2
                grown_v = np.empty(cap, dtype=np.int64)
                grown_e = np.empty(cap, dtype=np.int64)
                grown_t = np.empty(cap, dtype=np.float64)
                copy_into(grown_v[:count], out_vertex[:count])
                copy_into(grown_e[:count], out_edge[:count])
                copy_into(grown_t[:count], out_t[:count])
                out_vertex, out_edge, out_t = grown_v, grown_e, grown_t
            out_vertex[count] = p
            out_edge[count] = e
            out_t[count] = t
            count += 1
    return out_vertex[:count].copy(), out_edge[:count].copy(), out_t[:count].copy()


@njit(cache=True, nogil=True)
def coplanar_groups(points, faces, normals, nbr_start, nbr, distance_tol, cos_tol):
    """Ericson 12.4 / 12.4.1: grow groups over shared edges; a face joins when it faces the
    seed's way (normal dot >= cos_tol) AND all its vertices lie within the ABSOLUTE distance
    ``distance_tol`` of the seed's plane (an angle test alone is only relative, 12.4.1)."""
    m = faces.shape[0]
    group, queue = _labels_and_queue(m)
    count = 0
    for seed in range(m):
        if group[seed] >= 0:
            continue
        group[seed] = count
        nx, ny, nz = normals[seed, 0], normals[seed, 1], normals[seed, 2]
        s = faces[seed, 0]
        d = nx * points[s, 0] + ny * points[s, 1] + nz * points[s, 2]
        head, tail = _seeded(queue, seed)
        while head < tail:
            f, head = queue[head], head + 1
            for k in range(nbr_start[f], nbr_start[f + 1]):
                g = nbr[k]
                if group[g] >= 0:
                    continue
                if normals[g, 0] * nx + normals[g, 1] * ny + normals[g, 2] * nz < cos_tol:
                    continue
                flat = True
                for c in range(3):
                    w = faces[g, c]
                    if abs(nx * points[w, 0] + ny * points[w, 1] + nz * points[w, 2] - d) > distance_tol:
                        flat = False
                if flat:
                    group[g] = count
                    queue[tail] = g
                    tail += 1
        count += 1
    return group


@njit(cache=True, nogil=True)
def _orient2d(ax, ay, bx, by, cx, cy):
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


@njit(cache=True, nogil=True)
def earcut(xy):
    """Ericson 12.5.1: visit vertices around the ring, cut an ear (convex tip, no other ring
    vertex in the closed ear triangle), then step back to the previous vertex. Vertices that
    coincide with a corner of the ear (the two copies of a hole channel's endpoints) do not block
    it. If a whole lap finds no ear (a ring that is not simple, or rounding), the most convex
    vertex is cut anyway so that the loop always terminates; ``forced`` counts such cuts."""
    n = xy.shape[0]
    triangles = np.empty((max(n - 2, 0), 3), dtype=np.int64)
    if n < 3:
        return triangles, 0
    prev = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    for i in range(n):
        prev[i] = i - 1
        nxt[i] = i + 1
    prev[0] = n - 1
    nxt[n - 1] = 0
    remaining = n
    count = 0
    forced = 0
    i = 0
    misses = 0
    while remaining > 3:
        p = prev[i]
        q = nxt[i]
        ax, ay = xy[p, 0], xy[p, 1]
        bx, by = xy[i, 0], xy[i, 1]
        cx, cy = xy[q, 0], xy[q, 1]
        is_ear = _orient2d(ax, ay, bx, by, cx, cy) > 0.0
        if is_ear:
            k = nxt[q]
            while k != p:
                kx, ky = xy[k, 0], xy[k, 1]
                corner = (kx == ax and ky == ay) or (kx == bx and ky == by) or (kx == cx and ky == cy)
                if not corner:
                    if (_orient2d(ax, ay, bx, by, kx, ky) >= 0.0 and _orient2d(bx, by, cx, cy, kx, ky) >= 0.0
                            and _orient2d(cx, cy, ax, ay, kx, ky) >= 0.0):
                        is_ear = False
                        break
                k = nxt[k]
        if not is_ear:
            misses += 1
            if misses <= remaining:
                i = q
                continue
            # a full lap without an ear: cut the most convex vertex
            best = i
            best_value = -np.inf
            j = i
            for _ in range(remaining):
                value = _orient2d(xy[prev[j], 0], xy[prev[j], 1], xy[j, 0], xy[j, 1],
                                  xy[nxt[j], 0], xy[nxt[j], 1])
                if value > best_value:
                    best_value = value
                    best = j
                j = nxt[j]
            i = best
            p = prev[i]
            q = nxt[i]
            forced += 1
        triangles[count, 0] = p
        triangles[count, 1] = i
        triangles[count, 2] = q
        count += 1
        nxt[p] = q
        prev[q] = p
        remaining -= 1
        misses = 0
        i = p
    p = prev[i]
    q = nxt[i]
    triangles[count, 0] = p
    triangles[count, 1] = i
    triangles[count, 2] = q
    return triangles, forced


@njit(cache=True, nogil=True)
def _segments_cross(ax, ay, bx, by, cx, cy, dx, dy):
    """Closed segments ab and cd share a point, edges touching only at a shared endpoint
    coordinate excepted (the caller skips those)."""
    o1 = _orient2d(ax, ay, bx, by, cx, cy)
    o2 = _orient2d(ax, ay, bx, by, dx, dy)
    o3 = _orient2d(cx, cy, dx, dy, ax, ay)
    o4 = _orient2d(cx, cy, dx, dy, bx, by)
    if ((o1 > 0 and o2 < 0) or (o1 < 0 and o2 > 0)) and ((o3 > 0 and o4 < 0) or (o3 < 0 and o4 > 0)):
        return True
    # collinear touching: an endpoint of one lies on the other
    if o1 == 0.0 and min(ax, bx) <= cx <= max(ax, bx) and min(ay, by) <= cy <= max(ay, by):
        return True
    if o2 == 0.0 and min(ax, bx) <= dx <= max(ax, bx) and min(ay, by) <= dy <= max(ay, by):
        return True
    if o3 == 0.0 and min(cx, dx) <= ax <= max(cx, dx) and min(cy, dy) <= ay <= max(cy, dy):
        return True
    if o4 == 0.0 and min(cx, dx) <= bx <= max(cx, dx) and min(cy, dy) <= by <= max(cy, dy):
        return True
    return False


@njit(cache=True, nogil=True)
def _visible(points, ring, ring_count, hole_start, hole_done, h, m):
    """Segment points[h] -> points[m] crosses no edge of the current ring nor of a pending hole
    (edges with an endpoint at h's or m's coordinates are skipped)."""
    hx, hy = points[h, 0], points[h, 1]
    mx, my = points[m, 0], points[m, 1]
    for e in range(ring_count):
        c = ring[e]
        d = ring[(e + 1) % ring_count]
        cx, cy, dx, dy = points[c, 0], points[c, 1], points[d, 0], points[d, 1]
        if (cx == hx and cy == hy) or (dx == hx and dy == hy) or (cx == mx and cy == my) or (dx == mx and dy == my):
            continue
        if _segments_cross(hx, hy, mx, my, cx, cy, dx, dy):
            return False
    for k in range(hole_start.shape[0] - 1):
        if hole_done[k]:
            continue
        s0, s1 = hole_start[k], hole_start[k + 1]
        for e in range(s0, s1):
            c = e
            d = e + 1 if e + 1 < s1 else s0
            cx, cy, dx, dy = points[c, 0], points[c, 1], points[d, 0], points[d, 1]
            if (cx == hx and cy == hy) or (dx == hx and dy == hy) or (cx == mx and cy == my) or (dx == mx and dy == my):
                continue
            if _segments_cross(hx, hy, mx, my, cx, cy, dx, dy):
                return False
    return True


@njit(cache=True, nogil=True)
def bridge_holes(outer, holes, hole_start):
    """Ericson 12.5.1.1: cut a zero-width channel from the outer ring to each hole. Holes are
    taken by decreasing largest x; each is joined from its rightmost vertex to the NEAREST ring
    vertex the straight channel reaches without crossing any boundary (O(n^2), fine for the
    polygon sizes of face merging and hole filling). Returns indices into [outer; holes];
    a hole without a visible vertex (holes outside the outer ring) is skipped (status -1 at the
    end of the returned array is not used: the caller compares lengths)."""
    n_outer = outer.shape[0]
    n_holes = hole_start.shape[0] - 1
    total = n_outer + holes.shape[0]
    points = np.empty((total, 2), dtype=np.float64)
    copy_into(points[:n_outer], outer)
    copy_into(points[n_outer:], holes)
    shifted = hole_start + n_outer
    ring = np.empty(total + 2 * n_holes, dtype=np.int64)
    for i in range(n_outer):
        ring[i] = i
    ring_count = n_outer
    done = np.zeros(n_holes, dtype=np.bool_)
    order = np.empty(n_holes, dtype=np.int64)
    right = np.empty(n_holes, dtype=np.int64)
    key = np.empty(n_holes, dtype=np.float64)
    for k in range(n_holes):
        best = shifted[k]
        for j in range(shifted[k], shifted[k + 1]):
            if points[j, 0] > points[best, 0] or (points[j, 0] == points[best, 0] and points[j, 1] < points[best, 1]):
                best = j
        right[k] = best
        key[k] = -points[best, 0]
    copy_into(order, np.argsort(key))
    distances = np.empty(total + 2 * n_holes, dtype=np.float64)
    for step in range(n_holes):
        k = order[step]
        done[k] = True  # its own edges are checked through the ring once joined; skip them now
        h = right[k]
        hx, hy = points[h, 0], points[h, 1]
        for r in range(ring_count):
            dx = points[ring[r], 0] - hx
            dy = points[ring[r], 1] - hy
            distances[r] = dx * dx + dy * dy
        by_distance = np.argsort(distances[:ring_count])
        chosen = -1
        for r in by_distance:
            if _visible(points, ring, ring_count, shifted, done, h, ring[r]):
                # the hole's own edges must not be crossed either
                blocked = False
                for e in range(shifted[k], shifted[k + 1]):
                    c = e
                    d = e + 1 if e + 1 < shifted[k + 1] else shifted[k]
                    cx, cy, ex, ey = points[c, 0], points[c, 1], points[d, 0], points[d, 1]
                    mx, my = points[ring[r], 0], points[ring[r], 1]
                    if (cx == hx and cy == hy) or (ex == hx and ey == hy) or (cx == mx and cy == my) or (ex == mx and ey == my):
                        continue
                    if _segments_cross(hx, hy, mx, my, cx, cy, ex, ey):
                        blocked = True
                        break
                if not blocked:
                    chosen = r
                    break
        if chosen < 0:
            continue
        size = shifted[k + 1] - shifted[k]
        # new ring: ring[:chosen + 1], hole from h around to h, ring[chosen], ring[chosen + 1:]
        tail = ring[chosen + 1: ring_count].copy()
        w = chosen + 1
        offset = h - shifted[k]
        for j in range(size + 1):
            ring[w] = shifted[k] + (offset + j) % size
            w += 1
        ring[w] = ring[chosen]
        w += 1
        for j in range(tail.shape[0]):
            ring[w] = tail[j]
            w += 1
        ring_count = w
    return ring[:ring_count].copy()
