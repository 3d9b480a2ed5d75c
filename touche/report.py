"""Reports of a clearance check: a self-contained interactive HTML page (plotly, works offline:
plotly.js is embedded) and a static PNG (matplotlib). Both need the ``report`` extra
(``pip install 'touche[report]'``).

``write_html(path, parts, result, title=None)`` / ``write_png(path, parts, result, title=None)``
(``figure`` / ``png_figure``: the plotly / matplotlib Figure they draw)

``parts``: a list of ``(name, vertices (n, 3) world coordinates, faces (m, 3))``.
``result``: any object with ``intersecting`` (bool), ``distance`` (float), ``point_a`` /
``point_b`` ((3,) closest points, world; may be None or NaN when intersecting) and
``segments`` ((k, 2, 3) intersection-curve segments, world; may be empty).
"""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from .errors import ToucheError

_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2"]


class ReportError(ToucheError, RuntimeError):
    """The report could not be written (missing optional dependency, unwritable path)."""


class MissingDependency(ReportError, ImportError):
    """The report needs an optional package that is not installed (the ``report`` extra). The
    ``touche`` command exits with its own code for it (5) after printing the result."""


def _summary(result):
    if result is None:
        return ""
    if bool(getattr(result, "intersecting", False)):
        count = len(_segments(result))
        return f"intersecting ({count} intersection segments)"
    return f"separated, distance {float(result.distance):.6g}"


def _segments(result):
    segments = getattr(result, "segments", None)
    if segments is None:
        segments = getattr(result, "intersection_segments", None)
    if segments is None:
        return np.zeros((0, 2, 3))
    return np.asarray(segments, dtype=np.float64).reshape(-1, 2, 3)


def _closest(result):
    a, b = getattr(result, "point_a", None), getattr(result, "point_b", None)
    if a is None or b is None:
        return None
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != (3,) or b.shape != (3,) or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    return a, b


# Display meshes are decimated above this many triangles per picture (all parts together): a
# browser turns a 70,000-triangle part pair into 2 MB of page and a sluggish view, and a
# picture needs far fewer. Only what is drawn changes: the result (curve, closest points,
# figures in the title) is the query's, exact.
DISPLAY_FACES = 20_000


def display_mesh(vertices, faces, budget):
    """``(vertices, faces)`` with at most about ``budget`` faces, for drawing: vertex clustering
    (vertices merged per cell of a grid, each cell's mean kept; faces that collapse dropped),
    with the cell size found by bisection. A mesh within the budget is returned as it is."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if len(faces) <= budget:
        return vertices, faces
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    span = float((high - low).max()) or 1.0
    # faces of a clustered surface grow as (span / cell)^2: start near the budget, then bisect
    fine, coarse = span / (4.0 * np.sqrt(budget)), span
    best = None
    for _ in range(16):
        cell = np.sqrt(fine * coarse)
        clustered = _cluster(vertices, faces, low, cell)
        if len(clustered[1]) <= budget:
            best, coarse = clustered, cell
        else:
            fine = cell
        if best is not None and len(best[1]) >= 0.8 * budget:
            break
    return best if best is not None else _cluster(vertices, faces, low, coarse)


def _cluster(vertices, faces, origin, cell):
    keys = np.floor((vertices - origin) / cell).astype(np.int64)
    _, cluster, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    cluster = cluster.reshape(-1)
    merged = np.zeros((len(counts), 3))
    np.add.at(merged, cluster, vertices)
    merged /= counts[:, None]
    mapped = cluster[faces]
    kept = (mapped[:, 0] != mapped[:, 1]) & (mapped[:, 1] != mapped[:, 2]) & (mapped[:, 0] != mapped[:, 2])
    mapped = mapped[kept]
    _, first = np.unique(np.sort(mapped, axis=1), axis=0, return_index=True)  # one of each face
    return merged, mapped[np.sort(first)]


def _display_parts(parts, budget=DISPLAY_FACES):
    """``parts`` as drawn: each part's share of ``budget`` in proportion to its faces; the name
    says when its display was decimated."""
    total = sum(len(faces) for _, _, faces in parts) or 1
    shown = []
    for name, vertices, faces in parts:
        share = max(1_000, int(budget * len(faces) / total))
        v, f = display_mesh(vertices, faces, share)
        label = str(name) if len(f) == len(faces) else f"{name} (drawn with {len(f):,} of {len(faces):,} faces)"
        shown.append((label, v, f))
    return shown


def require_plotly():
    """Import plotly's graph objects, or raise :class:`MissingDependency` saying how to get it."""
    try:
        import plotly.graph_objects as go
    except ImportError as exc:
        raise MissingDependency("the HTML report needs plotly (pip install 'touche[report]')") from exc
    return go


def _markers(markers):
    """``markers``: (label, points (k, 3)) pairs; empty ones are left out."""
    for label, points in markers or ():
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        points = points[np.isfinite(points).all(axis=1)]
        if len(points):
            yield str(label), points


def figure(parts, result=None, title=None, markers=None):
    """The plotly Figure of the parts, the intersection curve, the closest-point segment and
    ``markers`` ((label, points (k, 3)) pairs, drawn as labelled dots)."""
    go = require_plotly()
    traces = []
    for index, (name, vertices, faces) in enumerate(_display_parts(parts)):
        v = np.asarray(vertices, dtype=np.float32)  # drawn only: float32 halves the page's vertex data
        f = np.asarray(faces, dtype=np.int32)
        traces.append(go.Mesh3d(x=v[:, 0], y=v[:, 1], z=v[:, 2], i=f[:, 0], j=f[:, 1], k=f[:, 2],
                                name=str(name), color=_COLOURS[index % len(_COLOURS)], opacity=0.55,
                                flatshading=True, showlegend=True, hoverinfo="name"))
    segments = _segments(result) if result is not None else np.zeros((0, 2, 3))
    if len(segments):
        # one polyline trace with NaN breaks between segments
        xyz = np.concatenate([segments, np.full((len(segments), 1, 3), np.nan)], axis=1).reshape(-1, 3)
        traces.append(go.Scatter3d(x=xyz[:, 0], y=xyz[:, 1], z=xyz[:, 2], mode="lines",
                                   line=dict(color="#d62728", width=6), name="intersection curve"))
    closest = _closest(result) if result is not None else None
    if closest is not None and not bool(getattr(result, "intersecting", False)):
        a, b = closest
        traces.append(go.Scatter3d(x=[a[0], b[0]], y=[a[1], b[1]], z=[a[2], b[2]], mode="lines+markers",
                                   line=dict(color="black", width=5), marker=dict(size=4, color="black"),
                                   name=f"closest points ({float(result.distance):.4g})"))
    for label, points in _markers(markers):
        traces.append(go.Scatter3d(x=points[:, 0], y=points[:, 1], z=points[:, 2], mode="markers",
                                   marker=dict(size=5, color="#d62728", symbol="diamond"), name=label))
    heading = title or "touche clearance check"
    summary = _summary(result)
    fig = go.Figure(data=traces)
    fig.update_layout(title=html.escape(f"{heading}: {summary}" if summary else heading),
                      scene=dict(aspectmode="data"), margin=dict(l=0, r=0, t=40, b=0),
                      legend=dict(x=0.01, y=0.98), autosize=True)
    return fig


# Runs after the plot is drawn: marks the page so headless browsers (and tests) can tell a
# rendered report from a broken one, and one that fits its window (no scrolling, nothing cut)
# from one that does not.
_POST_SCRIPT = ("var gd = document.getElementById('{plot_id}');"
                "document.title = (gd && gd.data && gd.data.length) ? 'touche report: rendered' "
                ": 'touche report: EMPTY';"
                "var box = gd ? gd.getBoundingClientRect() : null;"
                "document.body.setAttribute('data-fits', String(!!box && box.bottom <= window.innerHeight + 1 "
                "&& document.documentElement.scrollHeight <= window.innerHeight + 1));")

# The plot fills the window and follows its size: without this the browser's default body
# margin pushes a 95vh plot past the bottom of the window (a scroll bar, the bottom cut off).
_PAGE_STYLE = "<style>html, body { margin: 0; padding: 0; height: 100%; overflow: hidden; }</style>"


def write_html(path, parts, result=None, title=None, markers=None, shared_plotlyjs=False):
    """Write an interactive page that fills the browser window and follows its size. By default
    self-contained (plotly.js embedded: opens offline); ``shared_plotlyjs``: plotly.js is
    written once as ``plotly.min.js`` beside the page and shared by every page of that folder
    (still offline; the pages are then small). Parts of more than :data:`DISPLAY_FACES`
    triangles are drawn decimated (:func:`display_mesh`); the result drawn is exact."""
    fig = figure(parts, result, title, markers)
    path = Path(path)
    try:
        if shared_plotlyjs:
            script = path.parent / "plotly.min.js"
            if not script.exists():
                from plotly.offline.offline import get_plotlyjs

                script.write_text(get_plotlyjs(), encoding="utf-8")
        page = fig.to_html(include_plotlyjs="plotly.min.js" if shared_plotlyjs else True, full_html=True,
                           post_script=_POST_SCRIPT, default_width="100%", default_height="100vh",
                           config={"displaylogo": False, "responsive": True})
        path.write_text(page.replace("<head>", "<head>" + _PAGE_STYLE, 1), encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{path}: cannot write the report ({exc.strerror or exc})") from exc
    return path


# The PNG draws the parts translucent and everything the check found on top of them: matplotlib
# sorts 3D artists by depth by default, which buries the curve inside the parts it lies on.
_CURVE_COLOUR = "#c2007a"  # magenta: apart from the parts' blue / orange / green / purple
_PARTS_ZORDER, _FINDINGS_ZORDER = 1, 10


def png_figure(parts, result=None, title=None, size=(8.0, 6.0), dpi=100):
    """The matplotlib Figure of :func:`write_png` (Agg backend; the caller closes it): the parts,
    then on top of them the intersection curve (thick, with a white halo) or the closest-point
    segment, a legend naming each, and labelled axes."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        from matplotlib import patheffects
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
    except ImportError as exc:
        raise MissingDependency("the PNG report needs matplotlib (pip install 'touche[report]')") from exc
    fig = plt.figure(figsize=size, dpi=dpi)
    ax = fig.add_subplot(projection="3d")
    ax.computed_zorder = False  # draw by zorder: findings over the parts
    everything = []
    for index, (name, vertices, faces) in enumerate(_display_parts(parts)):
        v = np.asarray(vertices, dtype=np.float64)
        f = np.asarray(faces, dtype=np.int64)
        ax.add_collection3d(Poly3DCollection(v[f], facecolor=_COLOURS[index % len(_COLOURS)], alpha=0.35,
                                             edgecolor="none", label=str(name), zorder=_PARTS_ZORDER))
        everything.append(v)
    segments = _segments(result) if result is not None else np.zeros((0, 2, 3))
    if len(segments):
        # the white halo is a collection of its own under the curve: a path effect would outline
        # each segment in turn and cut the curve into dashes
        ax.add_collection3d(Line3DCollection(segments, colors="white", linewidths=6.5, capstyle="round",
                                             zorder=_FINDINGS_ZORDER - 1))
        ax.add_collection3d(Line3DCollection(segments, colors=_CURVE_COLOUR, linewidths=3.5, capstyle="round",
                                             zorder=_FINDINGS_ZORDER,
                                             label=f"intersection curve ({len(segments)} segments)"))
    closest = _closest(result) if result is not None else None
    if closest is not None and not bool(getattr(result, "intersecting", False)):
        a, b = closest
        ax.plot(*np.stack([a, b]).T, color="black", linewidth=2.5, marker="o", markersize=5,
                zorder=_FINDINGS_ZORDER, path_effects=[patheffects.withStroke(linewidth=5, foreground="white")],
                label=f"closest points, distance {float(result.distance):.4g}")
    points = np.concatenate(everything) if everything else np.zeros((1, 3))
    low, high = points.min(axis=0), points.max(axis=0)
    centre, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-12)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    ax.legend(loc="upper left", fontsize="small", framealpha=0.9)
    summary = _summary(result)
    ax.set_title((title or "touche clearance check") + (f": {summary}" if summary else ""))
    return fig


def write_png(path, parts, result=None, title=None, size=(8.0, 6.0), dpi=100):
    """Write a static picture (matplotlib, Agg backend; no display needed): :func:`png_figure`."""
    fig = png_figure(parts, result, title, size, dpi)  # first: it says when matplotlib is missing
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        fig.savefig(path)
    except OSError as exc:
        raise ReportError(f"{path}: cannot write the picture ({exc.strerror or exc})") from exc
    finally:
        plt.close(fig)
    return path
