"""``touche demo``: every capability in one tour on generated data (issue 22, item 3), with its
pictures (``--html DIR``); the figures it prints are checked against what they claim."""
import re
import sys

import pytest
from click.testing import CliRunner

from touche.cli import EXIT_BAD_INPUT, EXIT_MISSING_EXTRA, EXIT_OK, EXIT_USAGE, cli

SECTIONS = ["primitives", "convex shapes", "meshes", "contacts", "intersection sets", "time of impact",
            "broad phase and CollisionWorld", "clearance of two STL parts"]
PICTURES = ["primitives", "convex", "meshes", "contacts", "intersection", "time_of_impact", "broad_phase",
            "clearance"]


def _run(*args):
    result = CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    pytest.importorskip("plotly")
    folder = tmp_path_factory.mktemp("demo") / "pictures"  # made by the demo
    code, out, err = _run("demo", "--html", folder)
    return code, out, err, folder


def _number(pattern, text):
    match = re.search(pattern, text)
    assert match, pattern
    return float(match.group(1))


def test_every_section_is_shown_in_order_with_progress(tour):
    code, out, _, _ = tour
    assert code == EXIT_OK
    headings = re.findall(r"^\[(\d)/(\d)\] (.*)$", out, flags=re.M)
    assert [int(k) for k, _, _ in headings] == list(range(1, 9)) and {n for _, n, _ in headings} == {"8"}
    for (_, _, title), name in zip(headings, SECTIONS):
        assert title.startswith(name)
    assert len(re.findall(r"^  \(\d+\.\d\d s\)$", out, flags=re.M)) == 8  # each section timed
    assert re.search(r"^done in \d+\.\d s$", out, flags=re.M)


def test_the_printed_figures_say_what_was_computed(tour):
    out = tour[1]
    assert "hit=True  t=2.5000" in out and "hit=False t=inf" in out  # ray at a sphere of radius 0.5 from x=-3
    assert "warm-started 1 " in out or "warm-started 0 " in out
    mesh_gap = _number(r"sphere 1\.2 above the hole: SEPARATED, distance (\d\.\d+)", out)
    assert mesh_gap == pytest.approx(_number(r"smooth surfaces: (\d\.\d+); ", out), abs=0.01)
    assert "[0.0, 0.0, 0.0] -> +0.6985 (outside)" in out and "(inside)" in out
    assert "PENETRATING, 4 points" in out and "an edge down): 2 points" in out
    assert "POLYHEDRON, 10 vertices" in out and "POLYGON, 4 vertices, area 0.7000" in out and "apart: EMPTY" in out
    assert "HIT at t=2.0000, normal [-1.0, 0.0, 0.0]" in out
    spun = _number(r"spinning at 2 rad/s about z: HIT at t=(\d\.\d+)", out)
    assert 1.0 < spun < 2.0  # a turning cube's corners reach the other cube first
    assert _number(r"distance at that time (\S+)\n", out) < 1e-6
    assert out.count("agrees: True") == 3
    assert len(re.findall(r"floor hits ball \d at t=", out)) == 3
    assert re.search(r"cannot reach the floor within the step: (\d) of them, \1 expected", out)
    assert "closed True, problems none" in out
    assert _number(r"clearance (\d\.\d+) between facet", out) > 0
    assert _number(r"intersection curve of (\d+) segments", out) > 50


def test_html_pictures_are_written_and_linked(tour):
    code, out, _, folder = tour
    assert code == EXIT_OK
    for name in PICTURES:
        page = folder / f"{name}.html"
        text = page.read_text()
        assert "plotly.min.js" in text and "Plotly.newPlot" in text, name  # shared script, a real plot
        assert f"picture: {page}" in out
    script = folder / "plotly.min.js"
    assert script.stat().st_size > 1_000_000  # plotly.js written once for all pages: they stay small
    assert all((folder / f"{name}.html").stat().st_size < 500_000 for name in PICTURES)
    index = (folder / "index.html").read_text()
    assert all(f"href='{name}.html'" in index for name in PICTURES)
    assert f"pictures: {folder / 'index.html'} (8 pages)" in out


def test_without_plotly_the_tour_is_printed_then_exit_5(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    code, out, err = _run("demo", "--html", tmp_path / "pictures")
    assert code == EXIT_MISSING_EXTRA
    assert "[8/8] clearance of two STL parts" in out and "done in" in out
    assert "the HTML report needs plotly" in err and not (tmp_path / "pictures").exists()


def test_a_file_in_place_of_the_folder(tmp_path):
    pytest.importorskip("plotly")
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    code, out, err = _run("demo", "--html", blocker)
    assert code == EXIT_USAGE and "is a file" in err and "[1/8]" not in out
    code, out, err = _run("demo", "--html", blocker / "pictures")  # cannot be made: bad input, before the tour
    assert code == EXIT_BAD_INPUT and "cannot write the pictures" in err and "[1/8]" not in out


# ---------------------------------------------------------------------------------------------
# touche demo robot
def test_robot_tour_reports_what_the_robot_checks_answer():
    """`touche demo robot` runs on the Panda of example-robot-data; its figures are those of
    the robot API on the same seeded configurations (counted again here), and the motion
    segments it calls free are free when sampled densely."""
    import numpy as np

    from touche import demo, robot

    if robot.example_robot_data() is None:
        pytest.skip("example-robot-data is not installed")
    result = CliRunner().invoke(cli, ["demo", "robot", "--count", "400"])
    assert result.exit_code == EXIT_OK, result.output
    lines = []
    figures = demo.run_robot(lambda text="": lines.append(text), count=400)
    share = robot.example_robot_data()
    panda = robot.load_urdf(share / "panda_description/urdf/panda.urdf", share / "panda_description/srdf/panda.srdf")
    q = panda.lower + (panda.upper - panda.lower) * np.random.default_rng(0).random((400, panda.dof))
    scene = demo.shelf([0.55, 0.0, 0.0])
    hits = panda.in_collision(q, scene)
    assert figures["colliding"] == int(hits.sum()) and 0 < figures["colliding"] < 400
    assert f"{figures['colliding']:,} in collision" in result.output
    free = np.flatnonzero(~hits)
    assert figures["nearest"] == pytest.approx(float(panda.distances(q[free[:20]], scene).minimum.min()), abs=1e-12)
    assert figures["motions_in_collision"] + figures["motions_free"] <= 100
    motion = panda.check_motion(q[free[:100]], q[free[100:200]], scene)
    certified = np.flatnonzero(motion.status == robot.MotionStatus.FREE)[:5]
    s = np.linspace(0.0, 1.0, 401)[:, None]
    for k in certified:  # a dense sampling of the certified-free segments finds nothing
        path = q[free[k]] + s * (q[free[100 + k]] - q[free[k]])
        assert not panda.in_collision(path, scene).any()


def test_robot_tour_without_example_robot_data_exits_5(monkeypatch):
    from touche import robot

    monkeypatch.setattr(robot, "example_robot_data", lambda: None)
    result = CliRunner().invoke(cli, ["demo", "robot"])
    assert result.exit_code == EXIT_MISSING_EXTRA
    assert "pip install example-robot-data" in result.output
