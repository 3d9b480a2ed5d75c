"""The ``touche`` command's rough edges met by a new user (issue 22, item 4), one test each:
a missing optional extra has its own exit code and the result is still printed; a directory and
a missing file exit alike; ``--version``; ``python -m touche``; no stray progress labels off a
terminal; ``inspect`` and ``repair`` name the same problems; plurals; coplanar patches explained;
distances and tolerances validated."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import touche
from touche import mesh as tm
from touche.cli import (EXIT_BAD_INPUT, EXIT_CONTACT, EXIT_MISSING_EXTRA, EXIT_OK, EXIT_USAGE, _uv_sphere,
                        cli)

from naive import mesh as naive


def _run(*args):
    """(exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parts")
    v, f = _uv_sphere(600)
    paths = {"folder": folder}
    for name, vertices in (("a", v), ("b", v * 0.5 + [1.2, 0, 0]), ("far", v + [3.5, 0, 0])):
        paths[name] = tm.save((vertices, f), folder / f"{name}.stl")
    cube_v, cube_f = naive.cube()
    paths["open"] = tm.save((cube_v, cube_f[:-2]), folder / "open.stl", ascii=True)
    # every face with its own three vertices, as exporters write UV seams: duplicates to weld
    soup = cube_v[cube_f].reshape(-1, 3)
    paths["seams"] = folder / "seams.obj"
    with open(paths["seams"], "w") as handle:
        handle.writelines("v %.17g %.17g %.17g\n" % tuple(p) for p in soup)
        handle.writelines("f %d %d %d\n" % (3 * i + 1, 3 * i + 2, 3 * i + 3) for i in range(len(cube_f)))
    return paths


@pytest.fixture
def no_report_extra(monkeypatch):
    """plotly and matplotlib not installed (a None entry in sys.modules makes the import fail)."""
    for name in ("plotly", "plotly.graph_objects", "matplotlib", "matplotlib.pyplot", "mpl_toolkits",
                 "mpl_toolkits.mplot3d", "mpl_toolkits.mplot3d.art3d"):
        monkeypatch.setitem(sys.modules, name, None)


def test_missing_report_extra_has_its_own_exit_code_and_prints_the_result(parts, tmp_path, no_report_extra):
    html, png = tmp_path / "view.html", tmp_path / "view.png"
    code, out, err = _run("check", parts["a"], parts["far"], "--html", html)
    assert code == EXIT_MISSING_EXTRA == 5
    assert "intersecting: no — distance" in out and "closest points" in out  # the result is not dropped
    assert "the HTML report needs plotly (pip install 'touche[report]')" in err and not html.exists()
    code, out, err = _run("check", parts["a"], parts["b"], "--png", png, "--json")
    assert code == EXIT_MISSING_EXTRA and not png.exists()
    result = json.loads(out)
    assert result["intersecting"] and result["intersection_segments"] > 10
    assert result["report_errors"] == ["the PNG report needs matplotlib (pip install 'touche[report]')"]
    assert err.count("touche: error:") == 1
    assert "5 a report" in " ".join(_run("--help")[1].split())  # documented with the others


def test_an_unwritable_report_is_bad_input_after_the_result(parts, tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = _run("check", parts["a"], parts["far"], "--png", tmp_path / "no" / "such" / "dir.png")
    assert code == EXIT_BAD_INPUT and "intersecting: no" in out and "cannot write the picture" in err


@pytest.mark.parametrize("command", ["check", "inspect", "repair"])
def test_a_directory_and_a_missing_file_exit_alike(parts, tmp_path, command):
    (tmp_path / "folder.stl").mkdir()
    codes = {}
    for what, path in (("missing", tmp_path / "missing.stl"), ("directory", tmp_path / "folder.stl"),
                       ("bare directory", tmp_path)):
        args = {"check": [parts["a"], path], "inspect": [path], "repair": [path, tmp_path / "out.stl"]}[command]
        code, out, err = _run(command, *args)
        codes[what] = code
        assert err.count("touche: error:") == 1 and "Traceback" not in err
        assert ("no such file" if what == "missing" else "is a directory, not a mesh file") in err
    assert set(codes.values()) == {EXIT_BAD_INPUT}, codes


def test_version_option():
    code, out, _ = _run("--version")
    assert code == EXIT_OK and out.startswith(f"touche {touche.__version__} (Python ")
    assert f"numpy {np.__version__}" in out


def test_python_dash_m_touche_runs_the_command_with_its_exit_code(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(touche.__file__)),
                                                                   os.environ.get("PYTHONPATH")) if p))

    def module(*args):
        return subprocess.run([sys.executable, "-m", "touche", *map(str, args)], capture_output=True, text=True,
                              timeout=300, env=env, cwd=tmp_path)

    run = module("--version")
    assert run.returncode == EXIT_OK and run.stdout.startswith(f"touche {touche.__version__}"), run.stderr
    run = module("frobnicate")
    assert run.returncode == EXIT_USAGE and "touche: usage error: No such command 'frobnicate'" in run.stderr
    run = module("inspect", tmp_path / "missing.stl")
    assert run.returncode == EXIT_BAD_INPUT and "no such file" in run.stderr


def test_no_stray_progress_labels_off_a_terminal(parts, tmp_path):
    # CliRunner's stderr is not a terminal: click's bar would print its bare label there
    code, out, err = _run("check", parts["a"], parts["far"])
    assert code == EXIT_OK and err == "" and "checking" not in out
    code, out, err = _run("repair", parts["open"], tmp_path / "fixed.stl")
    assert code == EXIT_OK and err == "" and "repairing" not in out


def _problems_line(text):
    return [line for line in text.splitlines() if "problems:" in line][0].split("problems:", 1)[1].strip()


def test_inspect_and_repair_report_the_same_problems(parts, tmp_path):
    pytest.importorskip("trimesh")  # OBJ is read through trimesh
    code, inspected, _ = _run("inspect", parts["seams"])
    assert code == EXIT_OK
    assert _problems_line(inspected) == "28 duplicate vertices (weld them)"  # 36 corners, 8 distinct
    code, repaired, _ = _run("repair", parts["seams"], tmp_path / "welded.stl")
    before, after = repaired.splitlines()
    assert code == EXIT_OK and _problems_line(before) == _problems_line(inspected)
    assert _problems_line(after) == "none"
    # STL: the two commands agree too (the open cube: one hole of four edges)
    code, inspected, _ = _run("inspect", parts["open"])
    code, repaired, _ = _run("repair", parts["open"], tmp_path / "closed.stl")
    assert _problems_line(repaired.splitlines()[0]) == _problems_line(inspected)


def test_problem_counts_are_plural_only_when_more_than_one(parts):
    code, out, _ = _run("inspect", parts["open"])
    problems = _problems_line(out)
    assert "1 hole" in problems and "1 holes" not in problems
    v, f = naive.cube()
    two_holes = tm.inspect(v, np.delete(f, [0, 2], axis=0))  # one face off x = 0, one off x = 1
    assert "2 holes" in two_holes.problems
    one_unused = tm.inspect(np.vstack([v, [[5.0, 5.0, 5.0]]]), f)
    assert "1 unused vertex" in one_unused.problems


def test_coplanar_patches_are_explained(parts):
    code, out, _ = _run("inspect", parts["open"])
    line = [line for line in out.splitlines() if line.startswith("coplanar patches")][0]
    # the open cube: 10 faces on 5 sides, each side one flat region
    assert line.startswith("coplanar patches 5 (flat regions: neighbouring faces in one plane count as one")
    assert "10 faces form 5 regions" in line
    tetrahedron = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    report = tm.inspect(tetrahedron, [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    assert report.coplanar_patches == report.faces
    assert "no two neighbouring faces lie in one plane" in str(report)


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-0.001"])
def test_min_clearance_must_be_a_distance(parts, value):
    code, out, err = _run("check", parts["a"], parts["far"], "--min-clearance", value)
    assert code == EXIT_USAGE and out == ""
    assert "Invalid value for '--min-clearance': must be a finite distance >= 0" in err


def test_min_clearance_zero_is_a_distance(parts):
    code, out, _ = _run("check", parts["a"], parts["far"], "--min-clearance", "0")
    assert code == EXIT_OK and "meets the minimum 0" in out


@pytest.mark.parametrize("command", ["inspect", "repair"])
@pytest.mark.parametrize("value", ["0", "-1e-6", "nan"])
def test_tolerance_must_be_positive(parts, tmp_path, command, value):
    args = [parts["open"]] + ([tmp_path / "out.stl"] if command == "repair" else [])
    code, _, err = _run(command, *args, "--tolerance", value)
    assert code == EXIT_USAGE and "Invalid value for '--tolerance': must be a finite distance > 0" in err


def test_an_obj_renamed_stl_is_named_by_the_command(parts, tmp_path):
    renamed = tmp_path / "duck.stl"
    renamed.write_bytes(open(parts["seams"], "rb").read())
    code, _, err = _run("inspect", renamed)
    assert code == EXIT_BAD_INPUT
    assert "duck.stl: not an STL file: it looks like an OBJ file" in err and "truncated" not in err
