"""BSP tree queries (Ericson 8.4): point location, points inside a solid tree, rays, spheres and
polytopes, on a tree built by bsp_build.py (whose module doc gives the layout).

Everything here works in the tree's LOCAL frame: the caller subtracts the mesh's bounding-box
centre from the vertices before the build and from every query point (so that coordinates and the
plane offsets ``d`` are of the size of the mesh, not of its distance from the origin: the plane
thickness then scales with the mesh alone).

Thick planes (why ``eps`` is what it is: touche/bsp.py, ``plane_thickness``).
"""
import math
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


# ---------------------------------------------------------------------------------------------
# point queries (Ericson 8.4.1)
@njit(cache=True, nogil=True)
def _leaf_of(node_planes, node_children, root, eps, x, y, z):
    """The leaf reached by the point, a point within eps of a plane going BACK (the book's
    second PointInSolidSpace: points on the boundary count as inside the solid)."""
    node = root
    while node >= 0:
        dist = node_planes[node, 0] * x + node_planes[node, 1] * y + node_planes[node, 2] * z - node_planes[node, 3]
        node = node_children[node, 1] if dist <= eps else node_children[node, 0]
    return -1 - node


@njit(cache=True, nogil=True)
def locate_many(node_planes, node_children, root, eps, center, points, out_leaf, lo, hi):
    """Leaf index of each point (world points; ``center`` is the local frame's origin)."""
    for i in range(lo, hi):
        out_leaf[i] = _leaf_of(node_planes, node_children, root, eps, points[i, 0] - center[0],
                               points[i, 1] - center[1], points[i, 2] - center[2])


@njit(cache=True, nogil=True)
def _inside(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
            fragment_planes, root, eps, x, y, z, stack):
    """Whether the point is in the closed solid (Ericson 8.4.1), robust to thin cells.

    Deviation from the book's thick-plane descent ("within eps of a plane: go back"): where two
    dividing planes are nearly parallel (angle a), a point within eps of both can be sent into
    the sliver cell between them as far as eps / a from it (found on the benchmark panel: a
    point 0.1 off a 44-unit gear classified solid). So: descend by the plane's exact sign (no
    thickness: off the surface the cell reached is the point's own, up to rounding); a solid leaf
    means inside; an empty one means outside, unless the path came within eps of a plane, where
    the point may lie on the surface: then inside iff a boundary fragment lies within eps
    (the exact distance, _sphere_touches_boundary). Points on the surface are inside, points
    outside within eps of it may be (the boundary band)."""
    node = root
    near = False
    while node >= 0:
        dist = node_planes[node, 0] * x + node_planes[node, 1] * y + node_planes[node, 2] * z - node_planes[node, 3]
        if abs(dist) <= eps:
            near = True
        node = node_children[node, 1] if dist <= 0.0 else node_children[node, 0]
    if leaf_solid[-1 - node] != 0:
        return True
    if not near:
        return False
    return _sphere_touches_boundary(node_planes, node_children, node_fragments, root, eps, fragment_vertices,
                                    fragment_offsets, fragment_planes, x, y, z, eps, stack)


@njit(cache=True, nogil=True)
def contains_many(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
                  fragment_planes, root, depth, eps, center, points, out, lo, hi):
    """Solid-leaf point containment (``_inside``)."""
    stack = np.empty(depth + 2, dtype=np.int64)
    for i in range(lo, hi):
        out[i] = _inside(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
                         fragment_planes, root, eps, points[i, 0] - center[0], points[i, 1] - center[1],
                         points[i, 2] - center[2], stack)


# ---------------------------------------------------------------------------------------------
# rays (Ericson 8.4.2, with thick planes and an exact first hit)
@njit(cache=True, nogil=True)
def _ray_polygon(fragment_vertices, start, stop, plane, ox, oy, oz, dx, dy, dz, t_lo, t_hi, slack):
    """t of the ray's crossing of the convex polygon (inf if none in [t_lo, t_hi]). A crossing
    within ``slack`` (a distance) outside an edge counts: it closes the rounding-size gaps a
    T-junction between fragments of different subtrees may leave."""
    nx = plane[0]; ny = plane[1]; nz = plane[2]
    denom = nx * dx + ny * dy + nz * dz
    if denom == 0.0:
        return np.inf
    t = (plane[3] - (nx * ox + ny * oy + nz * oz)) / denom
    if not (t_lo <= t <= t_hi):
        return np.inf
    px = ox + t * dx; py = oy + t * dy; pz = oz + t * dz
    prev = stop - 1
    for j in range(start, stop):
        ax = fragment_vertices[prev, 0]; ay = fragment_vertices[prev, 1]; az = fragment_vertices[prev, 2]
        ex = fragment_vertices[j, 0] - ax; ey = fragment_vertices[j, 1] - ay; ez = fragment_vertices[j, 2] - az
        wx = px - ax; wy = py - ay; wz = pz - az
        # (e x w) . n: twice the signed area left of the edge; over |e| a signed distance
        cross_n = (ey * wz - ez * wy) * nx + (ez * wx - ex * wz) * ny + (ex * wy - ey * wx) * nz
        if cross_n < -slack * math.sqrt(ex * ex + ey * ey + ez * ez):
            return np.inf
        prev = j
    return t


@njit(cache=True, nogil=True)
def _band_times(dist0, denom, t_min, t_max, eps):
    """For the line s(t) = dist0 + t * denom on [t_min, t_max]: the sub-intervals where
    s >= -eps (front side of the thick plane) and s <= eps (back side), and t where s = 0.
    Returns (front_lo, front_hi, back_lo, back_hi, t_cross); an empty side has lo > hi."""
    s_min = dist0 + t_min * denom
    # parallel (denom 0: s_max would be inf * 0 = NaN for a ray), or the whole interval in the band
    if denom == 0.0 or (abs(s_min) <= eps and abs(dist0 + t_max * denom) <= eps):
        front_lo = t_min if s_min >= -eps else np.inf
        back_lo = t_min if s_min <= eps else np.inf
        return front_lo, t_max, back_lo, t_max, t_min
    inverse = 1.0 / denom
    t_cross = -dist0 * inverse
    t_front_edge = (-eps - dist0) * inverse  # s = -eps
    t_back_edge = (eps - dist0) * inverse  # s = +eps
    if denom > 0.0:  # s grows: back part first, then front
        back_lo = t_min
        back_hi = min(t_max, t_back_edge)
        front_lo = max(t_min, t_front_edge)
        front_hi = t_max
    else:
        front_lo = t_min
        front_hi = min(t_max, t_front_edge)
        back_lo = max(t_min, t_back_edge)
        back_hi = t_max
    return front_lo, front_hi, back_lo, back_hi, min(max(t_cross, t_min), t_max)


@njit(cache=True, nogil=True)
def _ray_solid(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
               fragment_planes, root, depth, eps, ox, oy, oz, dx, dy, dz, t_max, stack_node, stack_times, stack):
    """First t in [0, t_max] where the ray is in a solid leaf (0 when it starts inside), and the
    node whose plane it crossed there (-1: it started inside). Ericson 8.4.2 with three changes:
    - thick planes: an active interval touching a plane's band visits both sides, the near side
      up to the far edge of the band, the far side from the EXACT crossing time (so the hit time
      is the plane's, not the band edge's);
    - the stack keeps each entry's own [t_lo, t_hi] (with bands, intervals overlap);
    - a solid leaf does not end the search: the best t so far prunes every entry starting later,
      the rest are still visited (an overlapping entry may start earlier);
    - a solid leaf's entry point is checked before it counts: within 2 eps of a boundary
      fragment (an entry from outside is a point of the surface), or, at t = 0, inside (the ray
      starts in the solid). Why: where two dividing planes are nearly parallel (angle a), the
      cell between them, thickened by eps, reaches eps / a along them: a ray can pass through
      the thick bands of a sliver cell far from the cell itself (seen on the panel's torus: a
      solid sliver "hit" 0.03 before the surface, planes 1e-7 apart in angle). A point query at
      the entry point would not do: it lies on a plane, where the same slivers catch it.
    ``stack_*`` hold at least depth + 1 entries."""
    best_t = np.inf
    best_node = -1
    top = 0
    node = root
    t_lo = 0.0
    t_hi = t_max
    enter_node = -1
    while True:
        if node >= 0 and t_lo <= t_hi and t_lo < best_t:
            n0 = node_planes[node, 0]; n1 = node_planes[node, 1]; n2 = node_planes[node, 2]
            dist0 = n0 * ox + n1 * oy + n2 * oz - node_planes[node, 3]
            denom = n0 * dx + n1 * dy + n2 * dz
            f_lo, f_hi, b_lo, b_hi, t_cross = _band_times(dist0, denom, t_lo, t_hi, eps)
            front = node_children[node, 0]
            back = node_children[node, 1]
            has_front = f_lo <= f_hi
            has_back = b_lo <= b_hi
            if has_front and has_back:
                # near side: the one whose interval starts first; the other crossed at t_cross
                if f_lo <= b_lo:
                    near, near_lo, near_hi, far, far_lo, far_hi = front, f_lo, f_hi, back, b_lo, b_hi
                else:
                    near, near_lo, near_hi, far, far_lo, far_hi = back, b_lo, b_hi, front, f_lo, f_hi
                if far_lo > near_lo:
                    far_lo = max(t_cross, near_lo)  # the exact plane crossing, not the band edge
                    far_enter = node
                else:
                    far_enter = enter_node
                if far >= 0 or leaf_solid[-1 - far] != 0:  # an empty leaf needs no visit
                    stack_node[top] = far
                    stack_times[top, 0] = far_lo
                    stack_times[top, 1] = far_hi
                    stack_times[top, 2] = far_enter
                    top += 1
                node = near
                t_lo = near_lo
                t_hi = near_hi
            elif has_front:
                node = front
                t_lo = f_lo
                t_hi = f_hi
            elif has_back:
                node = back
                t_lo = b_lo
                t_hi = b_hi
            else:
                t_lo = np.inf
            continue
        if node < 0 and t_lo <= t_hi and t_lo < best_t and leaf_solid[-1 - node] != 0:
            px = ox + t_lo * dx; py = oy + t_lo * dy; pz = oz + t_lo * dz
            # an entry from outside is a point of the surface; t = 0 may also be a start inside
            if _sphere_touches_boundary(node_planes, node_children, node_fragments, root, eps, fragment_vertices,
                                        fragment_offsets, fragment_planes, px, py, pz, 2.0 * eps, stack) or (
                    t_lo == 0.0 and _inside(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices,
                                            fragment_offsets, fragment_planes, root, eps, px, py, pz, stack)):
                best_t = t_lo
                best_node = enter_node
        if top == 0:
            break
        top -= 1
        node = stack_node[top]
        t_lo = stack_times[top, 0]
        t_hi = stack_times[top, 1]
        enter_node = np.int64(stack_times[top, 2])
    return best_t, best_node


@njit(cache=True, nogil=True)
def raycast_solid_many(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
                       fragment_planes, root, depth, eps, center, origins, directions, max_t, out_t, out_normal,
                       lo, hi):
    """First entry of each ray into the solid: ``out_t`` (inf: no hit; 0: the origin is inside),
    ``out_normal`` the unit normal of the entered face, facing the ray (zeros when t = 0 inside).
    ``directions`` need not be unit: t is in units of the direction given."""
    stack_node = np.empty(depth + 2, dtype=np.int64)
    stack_times = np.empty((depth + 2, 3))
    stack = np.empty(depth + 2, dtype=np.int64)
    for i in range(lo, hi):
        ox = origins[i, 0] - center[0]; oy = origins[i, 1] - center[1]; oz = origins[i, 2] - center[2]
        dx = directions[i, 0]; dy = directions[i, 1]; dz = directions[i, 2]
        t, node = _ray_solid(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices,
                             fragment_offsets, fragment_planes, root, depth, eps, ox, oy, oz, dx, dy, dz, max_t[i],
                             stack_node, stack_times, stack)
        out_t[i] = t
        if node >= 0 and t < np.inf:
            denom = node_planes[node, 0] * dx + node_planes[node, 1] * dy + node_planes[node, 2] * dz
            sign = -1.0 if denom > 0.0 else 1.0
            for k in range(3):
                out_normal[i, k] = sign * node_planes[node, k]
        else:
            for k in range(3):
                out_normal[i, k] = 0.0


@njit(cache=True, nogil=True)
def raycast_surface_many(node_planes, node_children, node_fragments, leaf_fragments, root, depth, eps, center,
                         fragment_vertices, fragment_offsets, fragment_planes, fragment_source, origins,
                         directions, max_t, out_t, out_source, lo, hi):
    """First polygon hit by each ray (node-storing and leaf-storing trees): the traversal of
    ``_ray_solid`` (near side first, overlapping thick-plane intervals, pruned by the best t),
    testing the fragments stored at every node whose band the active interval touches and in
    every leaf reached. Fragments are clipped to their cells, so a hit found in one lies in it;
    the pruning keeps the nearest. ``out_source``: input triangle index (-1: no hit)."""
    stack_node = np.empty(depth + 2, dtype=np.int64)
    stack_times = np.empty((depth + 2, 3))
    slack = eps
    for i in range(lo, hi):
        ox = origins[i, 0] - center[0]; oy = origins[i, 1] - center[1]; oz = origins[i, 2] - center[2]
        dx = directions[i, 0]; dy = directions[i, 1]; dz = directions[i, 2]
        best_t = np.inf
        best_source = -1
        top = 0
        node = root
        t_lo = 0.0
        t_hi = max_t[i]
        while True:
            if t_lo <= t_hi and t_lo <= best_t:
                if node >= 0:
                    start = node_fragments[node, 0]
                    count = node_fragments[node, 1]
                else:
                    start = leaf_fragments[-1 - node, 0]
                    count = leaf_fragments[-1 - node, 1]
                if node >= 0:
                    n0 = node_planes[node, 0]; n1 = node_planes[node, 1]; n2 = node_planes[node, 2]
                    dist0 = n0 * ox + n1 * oy + n2 * oz - node_planes[node, 3]
                    denom = n0 * dx + n1 * dy + n2 * dz
                    f_lo, f_hi, b_lo, b_hi, t_cross = _band_times(dist0, denom, t_lo, t_hi, eps)
                    if f_lo <= f_hi and b_lo <= b_hi:
                        for f in range(start, start + count):  # the interval meets this plane
                            t = _ray_polygon(fragment_vertices, fragment_offsets[f], fragment_offsets[f + 1],
                                             fragment_planes[f], ox, oy, oz, dx, dy, dz, 0.0, max_t[i], slack)
                            if t < best_t:
                                best_t = t
                                best_source = fragment_source[f]
                        if f_lo <= b_lo:
                            stack_node[top] = node_children[node, 1]
                            stack_times[top, 0] = b_lo
                            stack_times[top, 1] = b_hi
                            node = node_children[node, 0]
                            t_lo = f_lo
                            t_hi = f_hi
                        else:
                            stack_node[top] = node_children[node, 0]
                            stack_times[top, 0] = f_lo
                            stack_times[top, 1] = f_hi
                            node = node_children[node, 1]
                            t_lo = b_lo
                            t_hi = b_hi
                        top += 1
                    elif f_lo <= f_hi:
                        node = node_children[node, 0]
                        t_lo = f_lo
                        t_hi = f_hi
                    else:
                        node = node_children[node, 1]
                        t_lo = b_lo
                        t_hi = b_hi
                    continue
                for f in range(start, start + count):  # a leaf's polygons
                    t = _ray_polygon(fragment_vertices, fragment_offsets[f], fragment_offsets[f + 1],
                                     fragment_planes[f], ox, oy, oz, dx, dy, dz, 0.0, max_t[i], slack)
                    if t < best_t:
                        best_t = t
                        best_source = fragment_source[f]
            if top == 0:
                break
            top -= 1
            node = stack_node[top]
            t_lo = stack_times[top, 0]
            t_hi = stack_times[top, 1]
        out_t[i] = best_t
        out_source[i] = best_source


# ---------------------------------------------------------------------------------------------
# volume queries on solid trees: the planes are pushed by the query's extent (Ericson 8.4.3's
# offset planes) to decide which subtrees the volume reaches; instead of the book's bevel planes
# (which need the leaf polytopes), the boundary fragments stored at the nodes reached are tested
# exactly, so the answer is exact: the volume meets the solid iff one of its points is inside
# (tested with one point query) or it meets the boundary (a stored fragment).
@njit(cache=True, nogil=True)
def _point_polygon_distance_squared(fragment_vertices, start, stop, plane, px, py, pz):
    """Squared distance from the point to the convex polygon (Ericson 5.1.5 generalised: inside
    every edge -> the plane distance, else the nearest edge)."""
    nx = plane[0]; ny = plane[1]; nz = plane[2]
    inside = True
    prev = stop - 1
    for j in range(start, stop):
        ax = fragment_vertices[prev, 0]; ay = fragment_vertices[prev, 1]; az = fragment_vertices[prev, 2]
        ex = fragment_vertices[j, 0] - ax; ey = fragment_vertices[j, 1] - ay; ez = fragment_vertices[j, 2] - az
        wx = px - ax; wy = py - ay; wz = pz - az
        if (ey * wz - ez * wy) * nx + (ez * wx - ex * wz) * ny + (ex * wy - ey * wx) * nz < 0.0:
            inside = False
            break
        prev = j
    if inside:
        h = nx * px + ny * py + nz * pz - plane[3]
        return h * h
    best = np.inf
    prev = stop - 1
    for j in range(start, stop):
        ax = fragment_vertices[prev, 0]; ay = fragment_vertices[prev, 1]; az = fragment_vertices[prev, 2]
        ex = fragment_vertices[j, 0] - ax; ey = fragment_vertices[j, 1] - ay; ez = fragment_vertices[j, 2] - az
        wx = px - ax; wy = py - ay; wz = pz - az
        ee = ex * ex + ey * ey + ez * ez
        s = 0.0
        if ee > 0.0:
            s = min(max((wx * ex + wy * ey + wz * ez) / ee, 0.0), 1.0)
        qx = wx - s * ex; qy = wy - s * ey; qz = wz - s * ez
        best = min(best, qx * qx + qy * qy + qz * qz)
        prev = j
    return best


@njit(cache=True, nogil=True)
def _sphere_touches_boundary(node_planes, node_children, node_fragments, root, eps, fragment_vertices,
                             fragment_offsets, fragment_planes, px, py, pz, r, stack):
    """Whether some stored fragment lies within r of the point: descend with every plane pushed
    by r (8.4.3), test the fragments of the nodes whose pushed slab holds the point."""
    top = 0
    node = root
    while True:
        if node >= 0:
            dist = node_planes[node, 0] * px + node_planes[node, 1] * py + node_planes[node, 2] * pz - node_planes[node, 3]
            if dist > r + eps:
                node = node_children[node, 0]
                continue
            if dist < -(r + eps):
                node = node_children[node, 1]
                continue
            for f in range(node_fragments[node, 0], node_fragments[node, 0] + node_fragments[node, 1]):
                if _point_polygon_distance_squared(fragment_vertices, fragment_offsets[f], fragment_offsets[f + 1],
                                                   fragment_planes[f], px, py, pz) <= r * r:
                    return True
            stack[top] = node_children[node, 1]
            top += 1
            node = node_children[node, 0]
            continue
        if top == 0:
            return False
        top -= 1
        node = stack[top]


@njit(cache=True, nogil=True)
def sphere_intersects_many(node_planes, node_children, node_fragments, leaf_solid, root, depth, eps, center,
                           fragment_vertices, fragment_offsets, fragment_planes, centers, radii, out, lo, hi):
    """Whether each closed sphere meets the solid (touching counts)."""
    stack = np.empty(depth + 2, dtype=np.int64)
    for i in range(lo, hi):
        px = centers[i, 0] - center[0]; py = centers[i, 1] - center[1]; pz = centers[i, 2] - center[2]
        if _inside(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
                   fragment_planes, root, eps, px, py, pz, stack):
            out[i] = True
        else:
            out[i] = _sphere_touches_boundary(node_planes, node_children, node_fragments, root, eps, fragment_vertices,
                                              fragment_offsets, fragment_planes, px, py, pz, radii[i], stack)


@njit(cache=True, nogil=True)
def _polygon_meets_polytope(fragment_vertices, start, stop, planes, scratch_a, scratch_b):
    """Whether the convex polygon meets the convex polytope ``planes`` (rows n, d; inside
    n . x <= d): Sutherland-Hodgman clipping of the polygon by each plane (front part dropped);
    anything left means they meet. Closed sets: a point on a plane is kept."""
    count = stop - start
    for j in range(count):
        for k in range(3):
            scratch_a[j, k] = fragment_vertices[start + j, k]
    src = scratch_a
    dst = scratch_b
    for q in range(planes.shape[0]):
        nx = planes[q, 0]; ny = planes[q, 1]; nz = planes[q, 2]; d = planes[q, 3]
        out_count = 0
        ax = src[count - 1, 0]; ay = src[count - 1, 1]; az = src[count - 1, 2]
        sa = nx * ax + ny * ay + nz * az - d
        for j in range(count):
            bx = src[j, 0]; by = src[j, 1]; bz = src[j, 2]
            sb = nx * bx + ny * by + nz * bz - d
            if (sa <= 0.0) != (sb <= 0.0):
                # from the kept endpoint to the dropped one: the same bits for either direction
                if sa <= 0.0:
                    t = sa / (sa - sb)
                    dst[out_count, 0] = ax + t * (bx - ax); dst[out_count, 1] = ay + t * (by - ay)
                    dst[out_count, 2] = az + t * (bz - az)
                else:
                    t = sb / (sb - sa)
                    dst[out_count, 0] = bx + t * (ax - bx); dst[out_count, 1] = by + t * (ay - by)
                    dst[out_count, 2] = bz + t * (az - bz)
                out_count += 1
            if sb <= 0.0:
                dst[out_count, 0] = bx; dst[out_count, 1] = by; dst[out_count, 2] = bz
                out_count += 1
            ax = bx; ay = by; az = bz
            sa = sb
        if out_count == 0:
            return False
        count = out_count
        src, dst = dst, src
    return True


@njit(cache=True, nogil=True)
def polytope_intersects_many(node_planes, node_children, node_fragments, leaf_solid, root, depth, eps, center,
                             fragment_vertices, fragment_offsets, fragment_planes, polytope_vertices, polytope_planes,
                             poses, out, lo, hi):
    """Whether the convex polytope (local ``vertices (k, 3)``, ``planes (f, 4)`` outward, inside
    n . x <= d) placed by each pose (in the tree's frame) meets the solid. Steps: its vertices
    and planes moved into the tree's local frame; any vertex inside -> True; else descend with
    each plane pushed by the polytope's support (its extent along the plane normal, 8.4.3) and
    clip the fragments stored at every node it straddles against the polytope."""
    k = polytope_vertices.shape[0]
    moved = np.empty((k, 3))
    planes = np.empty((polytope_planes.shape[0], 4))
    stack = np.empty(depth + 2, dtype=np.int64)
    max_count = 3
    for f in range(fragment_offsets.shape[0] - 1):
        max_count = max(max_count, fragment_offsets[f + 1] - fragment_offsets[f])
    scratch_a = np.empty((max_count + polytope_planes.shape[0] + 2, 3))
    scratch_b = np.empty((max_count + polytope_planes.shape[0] + 2, 3))
    for i in range(lo, hi):
        tx = poses[i, 0, 3] - center[0]; ty = poses[i, 1, 3] - center[1]; tz = poses[i, 2, 3] - center[2]
        for j in range(k):
            for r in range(3):
                moved[j, r] = (poses[i, r, 0] * polytope_vertices[j, 0] + poses[i, r, 1] * polytope_vertices[j, 1]
                               + poses[i, r, 2] * polytope_vertices[j, 2])
            moved[j, 0] += tx; moved[j, 1] += ty; moved[j, 2] += tz
        for q in range(polytope_planes.shape[0]):
            for r in range(3):
                planes[q, r] = (poses[i, r, 0] * polytope_planes[q, 0] + poses[i, r, 1] * polytope_planes[q, 1]
                                + poses[i, r, 2] * polytope_planes[q, 2])
            planes[q, 3] = polytope_planes[q, 3] + planes[q, 0] * tx + planes[q, 1] * ty + planes[q, 2] * tz
        hit = False
        for j in range(k):
            if _inside(node_planes, node_children, leaf_solid, node_fragments, fragment_vertices, fragment_offsets,
                       fragment_planes, root, eps, moved[j, 0], moved[j, 1], moved[j, 2], stack):
                hit = True
                break
        if hit:
            out[i] = True
            continue
        top = 0
        node = root
        while True:
            if node >= 0:
                n0 = node_planes[node, 0]; n1 = node_planes[node, 1]; n2 = node_planes[node, 2]
                low = np.inf
                high = -np.inf
                for j in range(k):
                    s = n0 * moved[j, 0] + n1 * moved[j, 1] + n2 * moved[j, 2]
                    low = min(low, s)
                    high = max(high, s)
                d = node_planes[node, 3]
                if low > d + eps:
                    node = node_children[node, 0]
                    continue
                if high < d - eps:
                    node = node_children[node, 1]
                    continue
                for f in range(node_fragments[node, 0], node_fragments[node, 0] + node_fragments[node, 1]):
                    if _polygon_meets_polytope(fragment_vertices, fragment_offsets[f], fragment_offsets[f + 1],
                                               planes, scratch_a, scratch_b):
                        hit = True
                        break
                if hit:
                    break
                stack[top] = node_children[node, 1]
                top += 1
                node = node_children[node, 0]
                continue
            if top == 0:
                break
            top -= 1
            node = stack[top]
        out[i] = hit
