"""Slow, obviously correct references for touche/_kernels/base/predicates.py and containment.py.

Everything is exact rational arithmetic (fractions.Fraction of the float64 inputs) unless noted.
"""

from fractions import Fraction as Fr
from itertools import permutations

import numpy as np


def F(x):
    return Fr(float(x))


def sign(x):
    return (x > 0) - (x < 0)


def det(M):
    """Exact determinant (Leibniz) of a small square matrix of Fractions/ints."""
    n = len(M)
    total = Fr(0)
    for p in permutations(range(n)):
        inv = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        prod = Fr(1)
        for r in range(n):
            prod *= M[r][p[r]]
            if prod == 0:
                break
        total += -prod if inv & 1 else prod
    return total


def orient2d_exact(ax, ay, bx, by, cx, cy):
    """Ericson 3.1.6.1 3x3 form, exact."""
    return det([[F(ax), F(ay), 1], [F(bx), F(by), 1], [F(cx), F(cy), 1]])


def orient3d_exact(a, b, c, d):
    return det([[F(v) for v in p] + [1] for p in (a, b, c, d)])


def incircle_exact(a, b, c, d):
    rows = []
    for p in (a, b, c, d):
        x, y = F(p[0]), F(p[1])
        rows.append([x, y, x * x + y * y, 1])
    return det(rows)


def insphere_exact(a, b, c, d, e):
    """Ericson 3.1.6.4 4x4 difference form (equal to the 5x5 form), exact."""
    E = [F(v) for v in e]
    rows = []
    for p in (a, b, c, d):
        q = [F(p[i]) - E[i] for i in range(3)]
        rows.append(q + [q[0] ** 2 + q[1] ** 2 + q[2] ** 2])
    return det(rows)


def orient2d_naive_float(ax, ay, bx, by, cx, cy):
    """Plain double evaluation (the formula that gets the sign wrong near degeneracy)."""
    return (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)


# ---------------------------------------------------------------- containment references


def on_segment_exact(p, a, b):
    """p on closed segment ab (exact; a == b allowed)."""
    P, A, B = [(F(q[0]), F(q[1])) for q in (p, a, b)]
    if (B[0] - A[0]) * (P[1] - A[1]) - (B[1] - A[1]) * (P[0] - A[0]) != 0:
        return False
    return (min(A[0], B[0]) <= P[0] <= max(A[0], B[0])
            and min(A[1], B[1]) <= P[1] <= max(A[1], B[1]))


def winding_number_exact(px, py, xs, ys):
    """Winding number of the closed polygon about p (p not on the boundary), exact."""
    P = (F(px), F(py))
    V = [(F(x), F(y)) for x, y in zip(xs, ys)]
    wn = 0
    n = len(V)
    for i in range(n):
        a, b = V[i], V[(i + 1) % n]
        o = (b[0] - a[0]) * (P[1] - a[1]) - (b[1] - a[1]) * (P[0] - a[0])
        if a[1] <= P[1]:
            if b[1] > P[1] and o > 0:
                wn += 1
        else:
            if b[1] <= P[1] and o < 0:
                wn -= 1
    return wn


def point_in_polygon_exact(px, py, xs, ys):
    """Closed polygon (boundary counts as inside), nonzero winding rule."""
    n = len(xs)
    for i in range(n):
        j = (i + 1) % n
        if on_segment_exact((px, py), (xs[i], ys[i]), (xs[j], ys[j])):
            return True
    return winding_number_exact(px, py, xs, ys) != 0


def point_in_triangle_2d_exact(p, a, b, c):
    """Closed triangle (possibly degenerate) = convex hull of a, b, c; exact via LP-free test:
    p in hull iff p is on an edge or strictly inside by orientation signs."""
    o = [orient2d_exact(*a, *b, *c)]
    if o[0] == 0:
        return (on_segment_exact(p, a, b) or on_segment_exact(p, b, c)
                or on_segment_exact(p, c, a))
    s1 = sign(orient2d_exact(*a, *b, *p))
    s2 = sign(orient2d_exact(*b, *c, *p))
    s3 = sign(orient2d_exact(*c, *a, *p))
    s = sign(o[0])
    return all(t == s or t == 0 for t in (s1, s2, s3))


def convex_hull_exact(pts):
    """Strict convex hull (no collinear vertices), ccw, Andrew's monotone chain in Fractions."""
    P = sorted(set((F(x), F(y)) for x, y in pts))
    if len(P) <= 2:
        return P

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in P:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(P):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def is_strictly_convex_exact(xs, ys):
    """Polygon is a strictly convex polygon: its vertex cycle equals the strict convex hull
    cycle (ccw or cw), every vertex distinct."""
    V = [(F(x), F(y)) for x, y in zip(xs, ys)]
    n = len(V)
    if n < 3 or len(set(V)) != n:
        return False
    H = convex_hull_exact(list(zip(xs, ys)))
    if len(H) != n:
        return False
    for seq in (V, V[::-1]):
        k = seq.index(H[0])
        if seq[k:] + seq[:k] == H:
            return True
    return False


def barycentric_exact(p, a, b, c):
    """Exact (u, v, w) of the orthogonal projection of p onto the plane of abc (Fractions)."""
    P, A, B, C = [[F(t) for t in q] for q in (p, a, b, c)]
    v0 = [B[i] - A[i] for i in range(3)]
    v1 = [C[i] - A[i] for i in range(3)]
    v2 = [P[i] - A[i] for i in range(3)]

    def dot(x, y):
        return sum(x[i] * y[i] for i in range(3))

    d00, d01, d11, d20, d21 = dot(v0, v0), dot(v0, v1), dot(v1, v1), dot(v2, v0), dot(v2, v1)
    den = d00 * d11 - d01 * d01
    if den == 0:
        return None
    v = (d11 * d20 - d01 * d21) / den
    w = (d00 * d21 - d01 * d20) / den
    return 1 - v - w, v, w


def point_in_convex_polyhedron_lp(p, vertices):
    """p in conv(vertices) via scipy linprog feasibility (float reference, for points not
    within ~1e-9 of the boundary)."""
    from scipy.optimize import linprog

    V = np.asarray(vertices, float)
    n = len(V)
    A_eq = np.vstack([V.T, np.ones((1, n))])
    b_eq = np.concatenate([np.asarray(p, float), [1.0]])
    r = linprog(np.zeros(n), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * n, method="highs")
    return r.status == 0
