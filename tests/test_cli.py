"""The ``touche`` command (click): inspect, repair, check, errors and exit codes; the HTML report
rendered in headless Chromium (tests/conftest.py installs Debian's chromium; the test is skipped
only when /usr/bin/chromium is still absent)."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from touche import mesh as tm
from touche.cli import EXIT_BAD_INPUT, EXIT_CONTACT, EXIT_OK, EXIT_USAGE, _uv_sphere, cli, main

from naive import mesh as naive

CHROMIUM = "/usr/bin/chromium"


def _run(*args):
    """(exit code, stdout, stdout + stderr)."""
    result = CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.stdout, result.output


def _one_line_error(output, code, expected):
    lines = [line for line in output.strip().splitlines() if line.startswith("touche:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    assert expected in lines[0]


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parts")
    v, f = _uv_sphere(600)
    paths = {}
    for name, vertices in (("a", v), ("b", v * 0.5 + [1.2, 0, 0]), ("far", v + [3.5, 0, 0])):
        paths[name] = tm.save((vertices, f), folder / f"{name}.stl")
    cube_v, cube_f = naive.cube()
    paths["open"] = tm.save((cube_v, cube_f[:-2]), folder / "open.stl", ascii=True)
    paths["folder"] = folder
    return paths


def test_inspect_and_json(parts):
    code, output, _ = _run("inspect", parts["a"])
    assert code == EXIT_OK and "genus 0" in output and "problems:" in output
    code, output, _ = _run("inspect", parts["open"], "--json")
    report = json.loads(output)
    assert code == EXIT_OK and report["holes"] == 1 and not report["closed"]
    assert report["duplicate_vertices"] == 0 and report["vertices"] == 8  # STL corners welded
    code, _, _ = _run("inspect", parts["open"], "--strict")
    assert code == EXIT_CONTACT


def test_repair_closes_the_hole(parts, tmp_path):
    target = tmp_path / "fixed.stl"
    code, output, _ = _run("repair", parts["open"], target)
    assert code == EXIT_OK and target.exists()
    fixed = tm.load(target)
    report = tm.inspect(fixed)
    assert report.watertight and report.problems == [] and report.volume == pytest.approx(1.0)
    assert "problems: none" in output


def test_check_contact_and_clearance(parts, tmp_path):
    code, output, _ = _run("check", parts["a"], parts["b"], "--json")
    result = json.loads(output)
    assert code == EXIT_CONTACT and result["intersecting"] and result["intersection_segments"] > 10
    # the intersection curve of two spheres is a circle: length 2 pi r for the circle of
    # x^2+y^2+z^2 = 1 and (x-1.2)^2+.. = 0.25 -> r = sqrt(1 - x0^2), x0 = (1 + 1.44 - 0.25) / 2.4
    x0 = (1 + 1.44 - 0.25) / 2.4
    assert result["intersection_length"] == pytest.approx(2 * np.pi * np.sqrt(1 - x0 ** 2), rel=0.05)
    code, output, _ = _run("check", parts["a"], parts["far"])
    assert code == EXIT_OK and "intersecting: no" in output
    code, output, _ = _run("check", parts["a"], parts["far"], "--json", "--min-clearance", "2")
    # facets lie inside the true spheres (gap 1.5): the polyhedral gap is a bit larger
    result = json.loads(output)
    assert code == EXIT_CONTACT and 1.5 <= result["distance"] <= 1.6
    # the command reports what touche.clearance computes: points, vector (B to A), faces
    import touche as tc

    a, far = tm.load(parts["a"]), tm.load(parts["far"])
    direct = tc.clearance(a, None, far, None)
    assert result["distance"] == direct.distance and not result["intersecting"]
    np.testing.assert_allclose(result["point_a"], direct.point_a, rtol=1e-15)
    np.testing.assert_allclose(result["vector_b_to_a"], np.subtract(result["point_a"], result["point_b"]), rtol=1e-12)
    assert (result["triangle_a"], result["triangle_b"]) == (direct.triangle_a, direct.triangle_b)
    assert np.linalg.norm(result["vector_b_to_a"]) == pytest.approx(result["distance"], rel=1e-12)
    # a pose moves B away: no contact any more
    code, _, _ = _run("check", parts["a"], parts["b"], "--pose-b", "3,0,0")
    assert code == EXIT_OK
    code, _, _ = _run("check", parts["a"], parts["far"], "--pose-b", "0,-3.5,0,0,0,90")  # R (3.5,0,0) = (0,3.5,0)
    assert code == EXIT_CONTACT


def test_check_reports_interpenetration_of_closed_parts(parts, tmp_path):
    """Closed parts are solids (issue 19 item 4): a part wholly inside another is contact with no
    surface crossing, and crossing parts get the vertex depth of touche.penetration_depth."""
    import touche as tc

    cube_v, cube_f = naive.cube()  # the unit cube [0, 1]^3
    big = tm.save((cube_v * 4.0 - 2.0, cube_f), tmp_path / "big.stl")  # [-2, 2]^3
    small = tm.save((cube_v * 0.5 - 0.25, cube_f), tmp_path / "small.stl")  # [-0.25, 0.25]^3
    code, output, _ = _run("check", small, big, "--pose-a", "1.5,0,0")
    assert code == EXIT_CONTACT and "lies inside the other solid" in output
    code, output, _ = _run("check", small, big, "--pose-a", "1.5,0,0", "--json")
    result = json.loads(output)
    assert result["contained"] and not result["intersecting"] and result["solid_a"] and result["solid_b"]
    # the small cube spans x in [1.25, 1.75]: moved out through the big cube's x = 2 face it
    # needs 2 - 1.25 = 0.75 (two convex solids: the exact depth of their hulls, side "convex")
    assert result["penetration_depth"] == pytest.approx(0.75, abs=1e-12)
    assert result["depth_side"] in ("a_in_b", "convex")
    direct = tc.penetration_depth(tm.load(small).as_solid(), tc.Pose.from_translation([1.5, 0, 0]),
                                  tm.load(big).as_solid(), None)
    assert result["penetration_depth"] == direct.depth
    np.testing.assert_allclose(result["depth_point_inner"], direct.point_a, rtol=1e-15)
    # one region, the small cube's whole volume, as touche.contacts on the two solids says
    assert len(result["regions"]) == 1
    assert result["intersection_volume"] == pytest.approx(0.125, rel=1e-9)
    region = result["regions"][0]
    assert region["volume"] == pytest.approx(0.125, rel=1e-9) and 1 <= len(region["points"]) <= 4
    direct = tc.contacts(tm.load(small).as_solid(), tc.Pose.from_translation([1.5, 0, 0]), tm.load(big).as_solid(), None)
    assert direct.regions == 1 and region["depth"] == float(direct.region_depth[0])
    # crossing the wall: the surfaces meet and the depth is the deepest vertex's
    code, output, _ = _run("check", small, big, "--pose-a", "2.1,0,0", "--json")
    result = json.loads(output)
    assert code == EXIT_CONTACT and result["intersecting"] and not result["contained"]
    assert result["penetration_depth"] == pytest.approx(0.15, abs=1e-12)
    # the slab x in [1.85, 2] of the small cube is inside the big one
    assert len(result["regions"]) == 1
    assert result["intersection_volume"] == pytest.approx(0.15 * 0.25, rel=1e-9)
    assert result["regions"][0]["depth"] == pytest.approx(0.15, abs=1e-12)
    code, output, _ = _run("check", small, big, "--pose-a", "2.1,0,0")
    assert "interpenetration depth 0.15" in output
    assert "interpenetration regions: 1, intersection volume 0.0375" in output
    # apart: no depth; an open part is a surface, never a solid
    code, output, _ = _run("check", small, big, "--pose-a", "5,0,0", "--json")
    result = json.loads(output)
    assert code == EXIT_OK and result["penetration_depth"] == 0.0 and not result["contained"]
    assert result["regions"] == [] and result["intersection_volume"] == 0.0
    code, output, _ = _run("check", parts["open"], big, "--json")
    result = json.loads(output)
    assert not result["solid_a"] and result["solid_b"]


def test_errors_are_one_line_with_exit_codes(parts, tmp_path):
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"x" * 80 + (5).to_bytes(4, "little") + b"\0" * 20)
    code, _, output = _run("inspect", bad)
    assert code == EXIT_BAD_INPUT
    _one_line_error(output, code, "truncated binary STL")
    code, _, output = _run("check", parts["a"], tmp_path / "missing.stl")
    assert code == EXIT_BAD_INPUT
    _one_line_error(output, code, "no such file")
    code, _, output = _run("check", parts["a"])
    assert code == EXIT_USAGE
    _one_line_error(output, code, "Missing argument")
    code, _, output = _run("check", parts["a"], parts["b"], "--pose-a", "1,2")
    assert code == EXIT_USAGE
    _one_line_error(output, code, "3, 6 or 16 numbers")
    code, output, _ = _run("check", parts["a"], parts["b"], "--pose-a", ",".join(["1"] * 16))
    assert code == EXIT_BAD_INPUT  # a matrix that is not a rigid transform
    code, output, _ = _run("frobnicate")
    assert code == EXIT_USAGE
    code, output, _ = _run("--help")
    assert code == EXIT_OK and "Exit codes" in output
    assert main(["inspect", str(bad)]) == EXIT_BAD_INPUT


def test_png_report(parts, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "report.png"
    code, _, _ = _run("check", parts["a"], parts["b"], "--png", target)
    assert code == EXIT_CONTACT
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The flags that work on these machines (as root, closed network): no sandbox, no GPU (WebGL through
# SwiftShader), and no background networking / component updates / sync, which would otherwise try
# to reach Google's hosts; a fresh profile directory per run.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--window-size=900,700",
                  "--virtual-time-budget=8000", "--enable-logging=stderr", "--v=0"]


def _chromium(html, tmp_path, name):
    shot = tmp_path / f"{name}.png"
    profile = tmp_path / f"profile-{name}"
    run = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}", "--dump-dom",
         html.as_uri()],
        capture_output=True, text=True, timeout=180, cwd=tmp_path)
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if re.search(r":(ERROR|FATAL):CONSOLE|Uncaught|TypeError|ReferenceError", line)]
    return run, shot, errors


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (/usr/bin/chromium): "
                    "apt-get install -y chromium")
def test_html_report_renders_in_headless_chromium(parts, tmp_path):
    pytest.importorskip("plotly")
    Image = pytest.importorskip("PIL.Image")
    target = tmp_path / "report.html"
    code, _, _ = _run("check", parts["a"], parts["b"], "--html", target)
    assert code == EXIT_CONTACT
    text = target.read_text()
    assert "<script" in text and "cdn.plot.ly" not in text.split("<body>")[0]  # plotly.js embedded
    run, shot, errors = _chromium(target, tmp_path, "report")
    assert "touche report: rendered" in run.stdout  # set by the page after plotting
    assert 'data-fits="true"' in run.stdout  # the plot ends inside the window, nothing to scroll
    assert errors == [], errors
    image = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    background = np.median(image.reshape(-1, 3), axis=0)
    differs = (np.abs(image - background).sum(axis=2) > 30).mean()
    assert differs > 0.05  # not blank
    red = ((image[..., 0] > 180) & (image[..., 1] < 90) & (image[..., 2] < 90)).sum()
    assert red > 50  # the intersection curve is drawn
    # the console check itself can fail: a page with a script error is caught
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>console.error('bad'); undefinedFunction();</script></body></html>")
    _, _, broken_errors = _chromium(broken, tmp_path, "broken")
    assert broken_errors


def test_demo_and_warmup_commands_exist():
    code, output, _ = _run("--help")
    assert "demo" in output and "warmup" in output and "bench" in output


def test_bench_command_runs():
    code, output, _ = _run("bench", "--triangles", "2000")
    assert code == EXIT_OK and "load (read + exact weld)" in output and "clearance: one query" in output
    code, _, output = _run("bench", "--triangles", "3")
    assert code == EXIT_USAGE
    _one_line_error(output, code, "at least 8 triangles")


_SCRIPT = os.path.join(os.path.dirname(sys.executable), "touche")


@pytest.mark.skipif(not os.path.exists(_SCRIPT), reason="console script not installed next to python")
def test_console_script_exit_code(parts):
    run = subprocess.run([_SCRIPT, "check", str(parts["a"]), str(parts["b"])], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == EXIT_CONTACT, run.stderr
