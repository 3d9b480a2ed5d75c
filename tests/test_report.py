"""touche.report: the PNG view (legend, axis labels, the intersection curve drawn over the parts,
the closest-point segment) and the HTML view (issue 22, item 4). The matplotlib / plotly Figure
objects are inspected, not pixels."""
import numpy as np
import pytest

import touche as tc
from touche import report
from touche.demo import uv_sphere

VERTICES, FACES = uv_sphere(600)


def _parts(offset, scale=1.0):
    other = VERTICES * scale + offset
    found = tc.clearance((VERTICES, FACES), None, (other, FACES), None, curve=True)
    return [("a.stl", VERTICES, FACES), ("b.stl", other, FACES)], found


@pytest.fixture
def png_figure():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    figures = []

    def draw(parts, result):
        figure = report.png_figure(parts, result)
        figures.append(figure)
        return figure, figure.axes[0]

    yield draw
    for figure in figures:
        plt.close(figure)


def test_png_of_intersecting_parts_draws_the_curve_on_top(png_figure):
    parts, found = _parts([1.2, 0.0, 0.0], scale=0.5)
    assert found.intersecting and len(found.segments) > 10
    figure, ax = png_figure(parts, found)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["a.stl", "b.stl", f"intersection curve ({len(found.segments)} segments)"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()) == ("x", "y", "z")
    curve = [c for c in ax.collections if c.get_label().startswith("intersection curve")]
    surfaces = [c for c in ax.collections if c.get_label() in ("a.stl", "b.stl")]
    assert len(curve) == 1 and len(surfaces) == 2
    # drawn by zorder, not by depth, so the curve is never buried in the translucent parts
    assert not ax.computed_zorder
    assert curve[0].get_zorder() > max(surface.get_zorder() for surface in surfaces)
    assert curve[0].get_linewidth()[0] >= 3.0
    curve_colour = tuple(curve[0].get_color()[0][:3])
    assert all(tuple(surface.get_facecolor()[0][:3]) != curve_colour for surface in surfaces)
    assert not [line for line in ax.lines if line.get_label().startswith("closest points")]


def test_png_of_separated_parts_joins_the_closest_points(png_figure):
    parts, found = _parts([3.5, 0.0, 0.0])
    assert not found.intersecting
    figure, ax = png_figure(parts, found)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["a.stl", "b.stl", f"closest points, distance {float(found.distance):.4g}"]
    segment = [line for line in ax.lines if line.get_label().startswith("closest points")]
    assert len(segment) == 1
    xs, ys, zs = segment[0].get_data_3d()
    ends = np.stack([xs, ys, zs], axis=1)
    np.testing.assert_allclose(ends, np.stack([found.point_a, found.point_b]))
    assert segment[0].get_linestyle() == "-" and segment[0].get_zorder() > 1
    assert np.linalg.norm(ends[1] - ends[0]) == pytest.approx(float(found.distance))


def test_write_png_writes_a_picture(tmp_path):
    pytest.importorskip("matplotlib")
    parts, found = _parts([3.5, 0.0, 0.0])
    path = report.write_png(tmp_path / "view.png", parts, found)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_display_mesh_keeps_small_meshes_and_decimates_large_ones():
    vertices, faces = uv_sphere(60_000)
    same_v, same_f = report.display_mesh(vertices, faces, len(faces))
    assert same_v is not None and np.array_equal(same_f, faces) and np.array_equal(same_v, vertices)
    small_v, small_f = report.display_mesh(vertices, faces, 5_000)
    assert 2_500 <= len(small_f) <= 5_000
    assert small_f.min() >= 0 and small_f.max() < len(small_v)
    assert (small_f[:, 0] != small_f[:, 1]).all() and (small_f[:, 1] != small_f[:, 2]).all()
    # still the unit sphere, drawn coarser: every kept vertex near radius 1, the extent kept
    radii = np.linalg.norm(small_v, axis=1)
    assert np.abs(radii - 1.0).max() < 0.05
    np.testing.assert_allclose(small_v.min(axis=0), -1.0, atol=0.05)
    np.testing.assert_allclose(small_v.max(axis=0), 1.0, atol=0.05)


def _plotted(page):
    """The traces of a written page, their binary arrays decoded (plotly writes numpy arrays as
    base64 'bdata')."""
    import base64
    import json
    import re

    data = json.loads(re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*\{', page, re.S).group(1))

    def decode(value):
        if isinstance(value, dict) and "bdata" in value:
            return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return np.asarray(value, dtype=float)

    return [{key: decode(value) if key in "xyzijk" else value for key, value in trace.items()} for trace in data]


def test_html_report_of_large_parts_stays_small_and_exact(tmp_path):
    pytest.importorskip("plotly")
    from plotly.offline.offline import get_plotlyjs

    vertices, faces = uv_sphere(200_000)
    other = vertices * 0.6 + [1.0, 0.2, 0.1]
    found = tc.clearance((vertices, faces), None, (other, faces), None, curve=True)
    parts = [("big.stl", vertices, faces), ("other.stl", other, faces)]
    page = report.write_html(tmp_path / "alone.html", parts, found).read_text()
    # self-contained: plotly.js (4.8 MB) plus the figure, which is what decimation bounds
    assert len(page.encode()) - len(get_plotlyjs().encode()) < 800_000
    shared = report.write_html(tmp_path / "shared.html", parts, found, shared_plotlyjs=True)
    assert shared.stat().st_size < 800_000 and (tmp_path / "plotly.min.js").stat().st_size > 1_000_000
    traces = _plotted(page)
    meshes = [trace for trace in traces if trace["type"] == "mesh3d"]
    assert sum(len(trace["i"]) for trace in meshes) <= report.DISPLAY_FACES
    assert [trace["name"].split(" (drawn with")[0] for trace in meshes] == ["big.stl", "other.stl"]
    assert all(f"of {len(faces):,} faces)" in trace["name"] for trace in meshes)
    # the intersection curve is the query's, to the bit
    curve = next(trace for trace in traces if trace["name"] == "intersection curve")
    drawn = np.stack([curve["x"], curve["y"], curve["z"]], axis=1).reshape(-1, 3, 3)[:, :2]
    assert drawn.dtype == np.float64 and np.array_equal(drawn, found.segments)


def test_html_report_fills_the_window(tmp_path):
    """The page has no margin to push the plot past the window, and the plot follows the
    window's size (headless Chromium checks the rendered page: tests/test_cli.py)."""
    pytest.importorskip("plotly")
    parts, found = _parts([3.5, 0.0, 0.0])
    assert report.figure(parts, found).layout.autosize is True
    page = report.write_html(tmp_path / "view.html", parts, found).read_text()
    head = page.split("<body>")[0]
    assert "margin: 0" in head and "overflow: hidden" in head
    assert "height:100vh; width:100%;" in page and '"responsive": true' in page
