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
