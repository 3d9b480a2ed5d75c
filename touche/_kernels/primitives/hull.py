"""Convex hull support for the mesh time of impact (touche/impact.py ``_pack_hull``).

The hull "slack": how far a point set reaches outside the planes of its (Qhull) hull,
max(0, max over facets f and points p of n_f . p + d_f). Qhull's facets pass within rounding of
the points, so nearly every value is negative and the maximum sits at the hull's surface.
Evaluating every pair costs facets x points (3e9 for a fine 82k-triangle sphere: 15-20 s).
Here the points are sorted along a Morton curve and cut into blocks of ``BLOCK`` points (and
super-blocks of ``SUPER`` blocks); each block stores a slab: its centroid c, a unit normal m (the
least-spread direction, by power iteration), its half-thickness t along m and its radius r
across m. For p in the block, n . p + d <= n . c + d + |n . m| t + |n - (n . m) m| r, and a facet
skips every block (and super-block) whose bound, plus a margin of many rounding errors, cannot
beat the best value so far (0 to start: the floor of the answer). So the result is the same
maximum of the same expression as evaluating every pair, for a few hundred evaluations per facet.

``slack_many`` is a batch kernel over facets for touche._parallel.run (its last two arguments
are the facet range); it writes each facet's running maximum, and the answer is their maximum.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.morton import spread_bits  # noqa: E402

BLOCK = 32  # points per block
SUPER = 16  # blocks per super-block
SLAB_WIDTH = 8  # slab rows: centroid (3), normal (3), half-thickness, radius
MARGIN = 1e-13  # rounding margin of a bound, relative to |n|_1 |largest coordinate| + |d|


@njit(cache=True, nogil=True)
def _slabs(points, size, largest, slabs):
    """The slab of every run of ``size`` consecutive points (see the module doc); t and r are
    inflated by rounding margins, so they bound the points' true offsets."""
    n = points.shape[0]
    for b in range(slabs.shape[0]):
        start = b * size
        stop = min(start + size, n)
        c = np.zeros(3)
        for i in range(start, stop):
            for k in range(3):
                c[k] += points[i, k]
        c /= stop - start
        cov = np.zeros((3, 3))
        for i in range(start, stop):
            for r in range(3):
                for s in range(3):
                    cov[r, s] += (points[i, r] - c[r]) * (points[i, s] - c[s])
        # least-spread direction: power iteration on trace * I - cov, from the thinnest axis
        # (any unit m gives a valid bound; a good one gives a tight bound)
        trace = cov[0, 0] + cov[1, 1] + cov[2, 2]
        m = np.zeros(3)
        thinnest = 0
        for k in range(1, 3):
            if cov[k, k] < cov[thinnest, thinnest]:
                thinnest = k
        m[thinnest] = 1.0
        for _ in range(40):
            w = trace * m - cov @ m
            length = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
            if not length > 0.0:
                break
            m = w / length
        thickness = 0.0
        radius = 0.0
        for i in range(start, stop):
            e0 = points[i, 0] - c[0]
            e1 = points[i, 1] - c[1]
            e2 = points[i, 2] - c[2]
            along = e0 * m[0] + e1 * m[1] + e2 * m[2]
            q0 = e0 - along * m[0]
            q1 = e1 - along * m[1]
            q2 = e2 - along * m[2]
            thickness = max(thickness, abs(along))
            radius = max(radius, np.sqrt(q0 * q0 + q1 * q1 + q2 * q2))
        for k in range(3):
            slabs[b, k] = c[k]
            slabs[b, 3 + k] = m[k]
        slabs[b, 6] = thickness * (1.0 + 1e-12) + 1e-15 * largest
        slabs[b, 7] = radius * (1.0 + 1e-12) + 1e-15 * largest


@njit(cache=True, nogil=True)
def prepare_points(points):
    """(points sorted along a Morton curve (n, 3), block slabs, super-block slabs, largest
    absolute coordinate) for ``slack_many``."""
    n = points.shape[0]
    lower = np.empty(3)
    upper = np.empty(3)
    largest = 0.0
    for k in range(3):
        lower[k] = points[:, k].min()
        upper[k] = points[:, k].max()
        largest = max(largest, abs(lower[k]), abs(upper[k]))
    codes = np.empty(n, dtype=np.int64)
    for i in range(n):
        code = 0
        for k in range(3):
            extent = upper[k] - lower[k]
            q = 0
            if extent > 0.0:
                q = min(max(int((points[i, k] - lower[k]) / extent * 1023.0), 0), 1023)
            code |= spread_bits(q) << k
        codes[i] = code
    order = np.argsort(codes)
    ordered = np.empty((n, 3))
    for i in range(n):
        for k in range(3):
            ordered[i, k] = points[order[i], k]
    blocks = (n + BLOCK - 1) // BLOCK
    block_slabs = np.empty((blocks, SLAB_WIDTH))
    super_slabs = np.empty(((blocks + SUPER - 1) // SUPER, SLAB_WIDTH))
    _slabs(ordered, BLOCK, largest, block_slabs)
    _slabs(ordered, BLOCK * SUPER, largest, super_slabs)
    return ordered, block_slabs, super_slabs, largest


@njit(cache=True, nogil=True)
def _slab_bound(a, b, c, d, slabs, row):
    """Upper bound of a x + b y + c z + d over the points of one slab (before the margin)."""
    along = a * slabs[row, 3] + b * slabs[row, 4] + c * slabs[row, 5]
    across = np.sqrt(max(a * a + b * b + c * c - along * along, 0.0))
    return (a * slabs[row, 0] + b * slabs[row, 1] + c * slabs[row, 2] + d
            + abs(along) * slabs[row, 6] + across * slabs[row, 7])


@njit(cache=True, nogil=True)
def slack_many(equations, ordered, block_slabs, super_slabs, largest, best_so_far, lo, hi):
    """For facets lo..hi of ``equations (F, 4)``: ``best_so_far[f]`` = max(0, every value
    n . p + d of facets lo..f at every point)."""
    n = ordered.shape[0]
    blocks = block_slabs.shape[0]
    best = 0.0
    for f in range(lo, hi):
        a = equations[f, 0]
        b = equations[f, 1]
        c = equations[f, 2]
        d = equations[f, 3]
        margin = MARGIN * ((abs(a) + abs(b) + abs(c)) * largest + abs(d))
        for s in range(super_slabs.shape[0]):
            if _slab_bound(a, b, c, d, super_slabs, s) + margin <= best:
                continue
            for block in range(s * SUPER, min((s + 1) * SUPER, blocks)):
                if _slab_bound(a, b, c, d, block_slabs, block) + margin <= best:
                    continue
                for i in range(block * BLOCK, min((block + 1) * BLOCK, n)):
                    value = a * ordered[i, 0] + b * ordered[i, 1] + c * ordered[i, 2] + d
                    if value > best:
                        best = value
        best_so_far[f] = best
