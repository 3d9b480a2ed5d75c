"""EPA: the penetration depth of two overlapping convex shapes from GJK's final simplex
(Ericson 9.5; van den Bergen's expanding polytope). ``epa_buffers()`` makes the work arrays once
per chunk of pairs; ``epa(...)`` expands the polytope until the support gap along the closest
face is within EPA_RELATIVE of the depth (or the accepted tolerances, see gjk.py).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.convex.support import support_pair, support_pair_called  # noqa: E402
from touche._kernels.convex.simplex import DEGENERATE_SQ, det3, plane_normal, s2d  # noqa: E402
# EPA stops when the support gap along the closest face <= EPA_RELATIVE * depth + tolerance:
# 1e-12 is well inside the 1e-6 relative depth target and still reached in a few iterations.
EPA_RELATIVE = 1e-12
EPA_ACCEPT_RELATIVE = 1e-7
# EPA's support-plane gap is measured to about EPA_ROUNDING * |support points| (a few roundings of
# a dot product); smaller gaps are noise
EPA_ROUNDING = 1e-14
EPA_MAX_VERTICES = 512  # curved shapes (two cylinders, cones) need several hundred


# ----------------------------------------------------------------------------------------------
# EPA (van den Bergen 2001; the polytope-expansion companion of Ericson 9.5)
#
# The expanding polytope is a closed triangle mesh with face adjacency, held in work buffers made
# by epa_buffers() (a batch makes them once per thread, not once per pair; nothing inside EPA
# allocates):
#   verts (EPA_MAX_VERTICES + 1, 9): support points, columns as the GJK simplex (w, a, b);
#   fnorm (EPA_MAX_FACES, 4): unit outward normal and plane offset (the origin's distance);
#   fint (EPA_MAX_FACES, 7): vertex indices (counter-clockwise seen from outside; edge e runs
#       from vertex e to vertex e + 1), the neighbour across each edge as 3 * face + its edge,
#       and a state: 0 alive, -1 free, > 0 the iteration that found the face visible;
#   free (EPA_MAX_FACES,): free face slots (dead faces are recycled, so the slot count stays
#       within the 2V - 4 faces of a convex polytope with V vertices);
#   stack (2 * EPA_MAX_FACES + 3, 2): the silhouette walk; horizon (EPA_MAX_FACES, 2): the
#       horizon edges in loop order; vslot (EPA_MAX_VERTICES + 1,): the new face starting at
#       each horizon vertex (stitching the new faces to each other).
# The visible region is found by the silhouette walk (a depth-first walk over face adjacency from
# the closest face, the recursive form of Bullet's / van den Bergen's horizon search written with
# an explicit stack), so one iteration costs O(visible faces) plus one scan for the closest face.
EPA_MAX_FACES = 2 * EPA_MAX_VERTICES + 64


@njit(cache=True, nogil=True)
def epa_buffers():
    """Fresh EPA work buffers (see above): (verts, fnorm, fint, free, stack, horizon, vslot)."""
    return (
        np.empty((EPA_MAX_VERTICES + 1, 9)),
        np.empty((EPA_MAX_FACES, 4)),
        np.empty((EPA_MAX_FACES, 7), dtype=np.int64),
        np.empty(EPA_MAX_FACES, dtype=np.int64),
        np.empty((2 * EPA_MAX_FACES + 3, 2), dtype=np.int64),
        np.empty((EPA_MAX_FACES, 2), dtype=np.int64),
        np.empty(EPA_MAX_VERTICES + 1, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _epa_face(verts, fnorm, fint, f, i, j, k):
    fint[f, 0] = i
    fint[f, 1] = j
    fint[f, 2] = k
    fint[f, 6] = 0
    # the normal from the face's two shortest edges (see shortest_cross): near a curved contact
    # EPA's faces become small and thin, and the textbook e1 x e2 left their planes off by
    # ~1e-11 of the size, which broke the polytope's convexity before the gap criterion was met
    nx, ny, nz, scale = plane_normal(verts, i, j, k)
    nn = nx * nx + ny * ny + nz * nz
    if nn <= DEGENERATE_SQ * scale * scale or nn == 0.0:
        # a sliver: never the closest face, never visible; only keeps the surface closed
        fnorm[f, 0] = 0.0
        fnorm[f, 1] = 0.0
        fnorm[f, 2] = 0.0
        fnorm[f, 3] = np.inf
        return
    inv = 1.0 / np.sqrt(nn)
    nx *= inv
    ny *= inv
    nz *= inv
    fnorm[f, 0] = nx
    fnorm[f, 1] = ny
    fnorm[f, 2] = nz
    fnorm[f, 3] = nx * verts[i, 0] + ny * verts[i, 1] + nz * verts[i, 2]


@njit(cache=True, nogil=True)
def _perpendicular(x, y, z):
    if abs(x) < 0.57:
        px, py, pz = 0.0, z, -y  # x-axis cross
    else:
        px, py, pz = -z, 0.0, x  # y-axis cross
    length = np.sqrt(px * px + py * py + pz * pz)
    if length == 0.0:
        return 0.0, 0.0, 1.0
    return px / length, py / length, pz / length


@njit(cache=True, nogil=True, inline="always")
def _dist2(verts, i, j):
    dx, dy, dz = _row_diff(verts, i, j)
    return dx * dx + dy * dy + dz * dz


@njit(cache=True, nogil=True, inline="always")
def _cross3(ax, ay, az, bx, by, bz):
    """a x b."""
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, nogil=True, inline="always")
def _row_diff(verts, i, j):
    """verts[i] - verts[j] (their first three columns: the Minkowski-difference points)."""
    return verts[i, 0] - verts[j, 0], verts[i, 1] - verts[j, 1], verts[i, 2] - verts[j, 2]


@njit(cache=True, nogil=True, inline="always")
def _copy_row(verts, src, dst):
    for c in range(9):
        verts[dst, c] = verts[src, c]


@njit(cache=True, nogil=True)
def _epa_witness(verts, i, j, k, nx, ny, nz, depth):
    """A's and B's witness points: the origin's projection on face (i, j, k), barycentric."""
    px, py, pz = depth * nx, depth * ny, depth * nz
    ci = nx * ((verts[j, 1] - py) * (verts[k, 2] - pz) - (verts[j, 2] - pz) * (verts[k, 1] - py)) + ny * (
        (verts[j, 2] - pz) * (verts[k, 0] - px) - (verts[j, 0] - px) * (verts[k, 2] - pz)
    ) + nz * ((verts[j, 0] - px) * (verts[k, 1] - py) - (verts[j, 1] - py) * (verts[k, 0] - px))
    cj = nx * ((verts[k, 1] - py) * (verts[i, 2] - pz) - (verts[k, 2] - pz) * (verts[i, 1] - py)) + ny * (
        (verts[k, 2] - pz) * (verts[i, 0] - px) - (verts[k, 0] - px) * (verts[i, 2] - pz)
    ) + nz * ((verts[k, 0] - px) * (verts[i, 1] - py) - (verts[k, 1] - py) * (verts[i, 0] - px))
    ck = nx * ((verts[i, 1] - py) * (verts[j, 2] - pz) - (verts[i, 2] - pz) * (verts[j, 1] - py)) + ny * (
        (verts[i, 2] - pz) * (verts[j, 0] - px) - (verts[i, 0] - px) * (verts[j, 2] - pz)
    ) + nz * ((verts[i, 0] - px) * (verts[j, 1] - py) - (verts[i, 1] - py) * (verts[j, 0] - px))
    total = ci + cj + ck
    if total != 0.0:
        ci /= total
        cj /= total
        ck /= total
    else:
        ci, cj, ck = 1.0, 0.0, 0.0
    ax = ci * verts[i, 3] + cj * verts[j, 3] + ck * verts[k, 3]
    ay = ci * verts[i, 4] + cj * verts[j, 4] + ck * verts[k, 4]
    az = ci * verts[i, 5] + cj * verts[j, 5] + ck * verts[k, 5]
    bx = ci * verts[i, 6] + cj * verts[j, 6] + ck * verts[k, 6]
    by = ci * verts[i, 7] + cj * verts[j, 7] + ck * verts[k, 7]
    bz = ci * verts[i, 8] + cj * verts[j, 8] + ck * verts[k, 8]
    return ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def epa(ka, pa, pta, m, kb, pb, ptb, s, count, hints, tol, verts, fnorm, fint, free, stack, horizon, vslot):
    """Penetration depth of the cores by polytope expansion, from a GJK simplex that holds the
    origin (a point, segment or triangle is blown up to a tetrahedron first).

    Returns (ok, depth, nx, ny, nz, ax, ay, az, bx, by, bz, iterations) in B's frame: ``n`` the
    outward normal of A - B at its boundary point closest to the origin (= the direction B
    moves to separate), a / b the witness points. ok = 0 converged, 1 iteration/memory limit,
    2 degenerate (flat Minkowski difference: depth 0 along n)."""
    for r in range(count):
        for c in range(9):
            verts[r, c] = s[r, c]
    nverts = count
    # -- blow up to a tetrahedron -----------------------------------------------------------
    if nverts == 1:
        best = -1.0
        for axis in range(6):
            sign = 1.0 if axis < 3 else -1.0
            support_pair_called(
                ka, pa, pta, m, kb, pb, ptb,
                sign if axis % 3 == 0 else 0.0, sign if axis % 3 == 1 else 0.0, sign if axis % 3 == 2 else 0.0,
                hints, 1, verts,
            )
            dd = _dist2(verts, 0, 1)
            if dd > best:
                best = dd
                _copy_row(verts, 1, 2)
        _copy_row(verts, 2, 1)
        nverts = 2
        if best <= 0.0:
            return 2, 0.0, 0.0, 0.0, 1.0, verts[0, 3], verts[0, 4], verts[0, 5], verts[0, 6], verts[0, 7], verts[0, 8], 0
    if nverts == 2:
        ex, ey, ez = _row_diff(verts, 1, 0)
        ux, uy, uz = _perpendicular(ex, ey, ez)
        vx_, vy_, vz_ = _cross3(ex, ey, ez, ux, uy, uz)
        best = -1.0
        for k in range(4):
            if k == 0:
                dx, dy, dz = ux, uy, uz
            elif k == 1:
                dx, dy, dz = -ux, -uy, -uz
            elif k == 2:
                dx, dy, dz = vx_, vy_, vz_
            else:
                dx, dy, dz = -vx_, -vy_, -vz_
            support_pair_called(ka, pa, pta, m, kb, pb, ptb, dx, dy, dz, hints, 2, verts)
            px, py, pz = _row_diff(verts, 2, 0)
            cx, cy, cz = _cross3(ex, ey, ez, px, py, pz)
            area = cx * cx + cy * cy + cz * cz
            if area > best:
                best = area
                _copy_row(verts, 2, 3)
        _copy_row(verts, 3, 2)
        nverts = 3
    if nverts == 3:
        e1x, e1y, e1z = _row_diff(verts, 1, 0)
        e2x, e2y, e2z = _row_diff(verts, 2, 0)
        nx, ny, nz = _cross3(e1x, e1y, e1z, e2x, e2y, e2z)
        nn = np.sqrt(nx * nx + ny * ny + nz * nz)
        if nn == 0.0:  # collinear after the blow-up: the difference is a segment (or a point)
            nx, ny, nz = _perpendicular(e1x, e1y, e1z)
            return 2, 0.0, nx, ny, nz, verts[0, 3], verts[0, 4], verts[0, 5], verts[0, 6], verts[0, 7], verts[0, 8], 0
        nx /= nn
        ny /= nn
        nz /= nn
        base = nx * verts[0, 0] + ny * verts[0, 1] + nz * verts[0, 2]
        support_pair_called(ka, pa, pta, m, kb, pb, ptb, nx, ny, nz, hints, 3, verts)
        up = nx * verts[3, 0] + ny * verts[3, 1] + nz * verts[3, 2] - base
        support_pair_called(ka, pa, pta, m, kb, pb, ptb, -nx, -ny, -nz, hints, 4, verts)
        down = base - (nx * verts[4, 0] + ny * verts[4, 1] + nz * verts[4, 2])
        size = np.sqrt(max(e1x * e1x + e1y * e1y + e1z * e1z, e2x * e2x + e2y * e2y + e2z * e2z))
        if max(up, down) <= tol + 1e-15 * size:
            # flat Minkowski difference (coplanar flat shapes): no depth along its normal
            lam0, lam1, lam2, _, _, _, _ = s2d(verts, 0, 1, 2)
            ax = lam0 * verts[0, 3] + lam1 * verts[1, 3] + lam2 * verts[2, 3]
            ay = lam0 * verts[0, 4] + lam1 * verts[1, 4] + lam2 * verts[2, 4]
            az = lam0 * verts[0, 5] + lam1 * verts[1, 5] + lam2 * verts[2, 5]
            bx = lam0 * verts[0, 6] + lam1 * verts[1, 6] + lam2 * verts[2, 6]
            by = lam0 * verts[0, 7] + lam1 * verts[1, 7] + lam2 * verts[2, 7]
            bz = lam0 * verts[0, 8] + lam1 * verts[1, 8] + lam2 * verts[2, 8]
            return 2, 0.0, nx, ny, nz, ax, ay, az, bx, by, bz, 0
        if down > up:
            _copy_row(verts, 4, 3)
        nverts = 4
    # -- initial tetrahedron, faces outward ---------------------------------------------------
    volume = det3(
        verts[1, 0] - verts[0, 0], verts[1, 1] - verts[0, 1], verts[1, 2] - verts[0, 2],
        verts[2, 0] - verts[0, 0], verts[2, 1] - verts[0, 1], verts[2, 2] - verts[0, 2],
        verts[3, 0] - verts[0, 0], verts[3, 1] - verts[0, 1], verts[3, 2] - verts[0, 2],
    )
    if volume > 0.0:  # make (0,1,2), (0,3,1), (1,3,2), (2,3,0) outward
        for c in range(9):
            tmp = verts[1, c]
            verts[1, c] = verts[2, c]
            verts[2, c] = tmp
    _epa_face(verts, fnorm, fint, 0, 0, 1, 2)
    _epa_face(verts, fnorm, fint, 1, 0, 3, 1)
    _epa_face(verts, fnorm, fint, 2, 1, 3, 2)
    _epa_face(verts, fnorm, fint, 3, 2, 3, 0)
    for f in range(4):  # every two faces of a tetrahedron share an edge (opposite directions)
        for e in range(3):
            u = fint[f, e]
            v = fint[f, (e + 1) % 3]
            for g in range(4):
                for k in range(3):
                    if fint[g, k] == v and fint[g, (k + 1) % 3] == u:
                        fint[f, 3 + e] = 3 * g + k
    nfaces = 4  # face slots in use (alive, dead or free)
    nfree = 0
    iterations = 0
    outcome = 1
    # rounding floor of the support-plane tests: ~eps * |w| per dot product (EPA_ROUNDING
    # allows a few of them); without it a caller's tolerance of 0 asked EPA for a gap below its
    # own rounding, and the sign tests of the silhouette walk then corrupted the polytope
    size2 = 0.0
    for r in range(4):
        size2 = max(size2, verts[r, 0] * verts[r, 0] + verts[r, 1] * verts[r, 1] + verts[r, 2] * verts[r, 2])
    # the face with the largest distance seen and its measured support gap: the closest-face
    # distance (the inscribed radius of the growing polytope) never decreases in exact
    # arithmetic, so a drop means rounding broke the polytope; EPA then stops and reports the
    # kept face, judged by its own gap
    bi, bj, bk = 0, 1, 2
    bnx, bny, bnz = fnorm[0, 0], fnorm[0, 1], fnorm[0, 2]
    best_d = -np.inf
    best_gap = np.inf
    while True:
        best = -1
        closest = np.inf
        for f in range(nfaces):
            if fint[f, 6] == 0 and fnorm[f, 3] < closest:
                closest = fnorm[f, 3]
                best = f
        if best < 0:  # every face degenerate: give up on depth
            outcome = 2
            break
        floor = EPA_ROUNDING * np.sqrt(size2)
        if best_d > floor and closest < best_d - floor:
            # the origin is inside and the inscribed radius shrank: rounding broke convexity,
            # keep the best face so far (while the origin is on or outside the polytope, which
            # a touching start allows, the closest signed face distance is not monotone)
            break
        if iterations >= 4 * EPA_MAX_VERTICES or nverts >= EPA_MAX_VERTICES:
            break
        iterations += 1
        new = nverts
        cnx, cny, cnz = fnorm[best, 0], fnorm[best, 1], fnorm[best, 2]
        support_pair(ka, pa, pta, m, kb, pb, ptb, cnx, cny, cnz, hints, new, verts)
        wx, wy, wz = verts[new, 0], verts[new, 1], verts[new, 2]
        size2 = max(size2, wx * wx + wy * wy + wz * wz)
        gap = cnx * wx + cny * wy + cnz * wz - closest
        if closest >= best_d:
            best_d = closest
            best_gap = gap
            bi, bj, bk = fint[best, 0], fint[best, 1], fint[best, 2]
            bnx, bny, bnz = cnx, cny, cnz
        if gap <= EPA_RELATIVE * abs(closest) + tol + floor:
            outcome = 0
            break
        nverts += 1
        # silhouette walk: visible faces get state = iterations, the horizon edges are listed in
        # loop order (each as the surviving face and its edge towards the visible region)
        fint[best, 6] = iterations
        top = 0
        for e in range(2, -1, -1):
            code = fint[best, 3 + e]
            stack[top, 0] = code // 3
            stack[top, 1] = code % 3
            top += 1
        nh = 0
        broken = False
        while top > 0:
            top -= 1
            g = stack[top, 0]
            k = stack[top, 1]
            if fint[g, 6] != 0:
                continue  # already visible: an interior edge of the visible region
            if fnorm[g, 0] * wx + fnorm[g, 1] * wy + fnorm[g, 2] * wz - fnorm[g, 3] > 0.0:
                fint[g, 6] = iterations
                code = fint[g, 3 + (k + 2) % 3]
                stack[top, 0] = code // 3
                stack[top, 1] = code % 3
                top += 1
                code = fint[g, 3 + (k + 1) % 3]
                stack[top, 0] = code // 3
                stack[top, 1] = code % 3
                top += 1
            else:
                if nh >= horizon.shape[0]:
                    broken = True
                    break
                horizon[nh, 0] = g
                horizon[nh, 1] = k
                nh += 1
        # recycle the visible faces' slots
        for f in range(nfaces):
            if fint[f, 6] == iterations:
                fint[f, 6] = -1
                free[nfree] = f
                nfree += 1
        if broken or nh < 3 or nh > nfree + EPA_MAX_FACES - nfaces:
            break
        # one new face (a, b, new) per horizon edge b -> a of the surviving face; edge 0 of the
        # new face is glued to that face, edges 1 (b -> new) and 2 (new -> a) to the neighbours
        for h in range(nh):
            g = horizon[h, 0]
            k = horizon[h, 1]
            a = fint[g, (k + 1) % 3]
            b = fint[g, k]
            # (vslot is only trusted where it names a live face made in this iteration)
            previous = vslot[a]
            if 0 <= previous < nfaces and fint[previous, 2] == new and fint[previous, 0] == a and fint[previous, 6] == 0:
                broken = True  # a vertex twice on the horizon: not a simple loop
            if nfree > 0:
                nfree -= 1
                f = free[nfree]
            else:
                f = nfaces
                nfaces += 1
            _epa_face(verts, fnorm, fint, f, a, b, new)
            fint[f, 3] = 3 * g + k
            fint[g, 3 + k] = 3 * f
            vslot[a] = f
            horizon[h, 0] = f
        if not broken:
            for h in range(nh):
                f = horizon[h, 0]
                b = fint[f, 1]
                g = vslot[b]
                if not (0 <= g < nfaces and fint[g, 2] == new and fint[g, 0] == b and fint[g, 6] == 0):
                    broken = True
                    break
                fint[f, 4] = 3 * g + 2
                fint[g, 5] = 3 * f + 1
        if broken:  # rounding broke the polytope's topology: stop with the best face so far
            break
    if outcome == 1 and best_gap <= EPA_ACCEPT_RELATIVE * abs(best_d) + tol + EPA_ROUNDING * np.sqrt(size2):
        outcome = 0  # stopped at a limit or by rounding, but the kept face is within the accepted gap
    depth = best_d
    if not np.isfinite(depth):
        depth = 0.0
    ax, ay, az, bx, by, bz = _epa_witness(verts, bi, bj, bk, bnx, bny, bnz, depth)
    return outcome, max(depth, 0.0), bnx, bny, bnz, ax, ay, az, bx, by, bz, iterations
