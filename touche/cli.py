"""The ``touche`` command (click).

    touche demo [--html DIR]         a tour of every capability on generated shapes and parts
    touche demo robot                a Panda against a shelf: configurations, pairs, distances, motions
    touche warmup                    compile every kernel into numba's on-disk cache
    touche check A.stl B.stl         do two parts intersect? intersection curve, clearance
    touche inspect M.stl             holes, T-junctions, orientation, Euler checks (Ericson ch. 12)
    touche repair IN.stl OUT.stl     weld, crack T-junctions, fill holes, orient
    touche bench                     time mesh reading / preparation / clearance on this machine
    touche batch poses|clearance     batch jobs on Dask (a local cluster, or --scheduler ADDRESS)

Exit codes (also in ``touche --help``): 0 success (``check``: no contact), 1 ``check`` found
contact (intersecting, touching, or closer than ``--min-clearance``; ``inspect --strict``: problems
found), 2 usage error, 3 bad input (unreadable, missing or malformed mesh file, a directory given
as a file, invalid geometry or pose), 4 internal error, 5 a report (``--html`` / ``--png``) needs
an optional package that is not installed (the result is still computed and printed). Errors
are one line on stderr (``TOUCHE_DEBUG=1`` shows the traceback).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

import click

from .demo import uv_sphere as _uv_sphere  # the generated part of `touche bench`

EXIT_OK, EXIT_CONTACT, EXIT_USAGE, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_MISSING_EXTRA = 0, 1, 2, 3, 4, 5

_EPILOG = (
    "Exit codes: 0 success (check: no contact); 1 check found contact (intersecting, touching or "
    "closer than --min-clearance) or inspect --strict found problems; 2 usage error; 3 bad input "
    "(unreadable, missing or malformed mesh file, a directory, invalid geometry or pose); 4 internal "
    "error; 5 a report (--html / --png) needs an optional package that is not installed (the "
    "result is still printed). Errors are one line on stderr; set TOUCHE_DEBUG=1 for a traceback."
)


class _Failure(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


class _ToucheGroup(click.Group):
    """A click group whose errors are one line with a documented exit code."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        code = self._run(args, prog_name or "touche", complete_var, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, args, prog_name, complete_var, **extra):
        try:
            result = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                  standalone_mode=False, **extra)
            return result if isinstance(result, int) else EXIT_OK
        except click.exceptions.Exit as exc:
            return exc.exit_code
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else prog_name
            click.echo(f"{prog_name}: usage error: {exc.format_message()} (see '{where} --help')", err=True)
            return EXIT_USAGE
        except click.Abort:
            click.echo(f"{prog_name}: aborted", err=True)
            return EXIT_INTERNAL
        except _Failure as exc:
            click.echo(f"{prog_name}: error: {exc}", err=True)
            return exc.code
        except Exception as exc:  # anything else is a bug: still one line, unless debugging
            code, message = _classify(exc)
            if os.environ.get("TOUCHE_DEBUG"):
                traceback.print_exc()
            click.echo(f"{prog_name}: {message}", err=True)
            return code


def _classify(exc):
    from .errors import GeometryError, MeshFormatError, ToucheError

    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, (MeshFormatError, GeometryError, FileNotFoundError)):
        return EXIT_BAD_INPUT, f"error: {first_line}"
    if isinstance(exc, ToucheError):
        return EXIT_BAD_INPUT, f"error: {first_line}"
    return EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {first_line} (TOUCHE_DEBUG=1 for a traceback)"


def _version_message():
    import platform

    import numba
    import numpy

    from . import __version__

    # the versions a bug report needs: numba compiles the kernels, numpy holds every array
    return (f"touche {__version__} (Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"numba {numba.__version__})")


def _show_version(ctx, _param, value):
    if value and not ctx.resilient_parsing:
        click.echo(_version_message())
        ctx.exit(EXIT_OK)


@click.group(name="touche", cls=_ToucheGroup, epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Print the versions of touche, Python, numpy and numba, and exit.")
def cli():
    """touche collision detection."""


class _NoProgress:
    """Stands in for click's progress bar off a terminal: click would still print the bare label
    ("checking", "repairing") once, a stray line in logs and pipes."""

    def __init__(self, items=None):
        self.items = items

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        return iter(self.items)

    def update(self, steps):
        pass


def _progress(label, length=None, items=None, **options):
    """A progress bar on stderr when stderr is a terminal, else nothing (stdout stays the result)."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return _NoProgress(items)
    return click.progressbar(items, length=length, label=label, file=sys.stderr, **options)


def _non_negative_distance(_ctx, param, value):
    """A distance option: a finite number >= 0 (a negative clearance would make every check pass)."""
    if value is not None and not (value >= 0.0 and value != float("inf")):
        raise click.BadParameter(f"must be a finite distance >= 0, got {value:g}", param=param)
    return value


def _positive_tolerance(_ctx, param, value):
    """A weld / planarity tolerance: a finite number > 0 (0 or less would weld nothing or fail)."""
    if value is not None and not (value > 0.0 and value != float("inf")):
        raise click.BadParameter(f"must be a finite distance > 0, got {value:g}", param=param)
    return value


# --------------------------------------------------------------------------------------------
# demo / warmup
class _CompileNotice:
    """While the demo runs: when numba compiles, say so on stderr (on a terminal a status line
    with the count and the time spent, cleared before the next line of output; elsewhere one
    line, once)."""

    def __init__(self, stream):
        self.stream = stream
        self.interactive = hasattr(stream, "isatty") and stream.isatty()
        self.compiled = 0
        self.said = False
        self.shown = False
        self.started = None
        self.log = None

    def __enter__(self):
        from ._warmup import CompileLog

        self.log = CompileLog(on_compiled=self._compiled).__enter__()
        return self

    def __exit__(self, *exc):
        self.clear()
        self.log.__exit__(*exc)
        return False

    def _compiled(self, entry):
        self.compiled += 1
        if self.started is None:
            self.started = time.perf_counter()
        if self.interactive:
            self.stream.write(f"\r  compiling kernels on first use: {self.compiled} compiled, "
                              f"{time.perf_counter() - self.started:.0f} s (cached for next time) ")
            self.stream.flush()
            self.shown = True
        elif not self.said:
            self.said = True
            print("touche: compiling kernels on first use (numba caches them for the next run)",
                  file=self.stream, flush=True)

    def clear(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _demo(out, html_dir=None):
    """The tour of touche.demo, each line printed as soon as its query has answered (a first run
    compiles kernels on the way: the notice on stderr says so)."""
    from . import demo

    notice = _CompileNotice(sys.stderr)

    def line(text=""):
        notice.clear()
        print(text, file=out, flush=True)

    with notice:
        return demo.run(line, html_dir)


def _warmup(out, jobs=None):
    import touche as tc

    started = time.perf_counter()
    tc.warmup(jobs=jobs)  # every package's kernels, progress on stderr
    print(f"touche kernels compiled / loaded in {time.perf_counter() - started:.2f} s", file=out)


@cli.command()
@click.argument("tour", type=click.Choice(["all", "robot"]), default="all")
@click.option("--html", "html_dir", type=click.Path(file_okay=False),
              help="also write an interactive 3D picture of each section into this folder (index.html links them)")
@click.option("--count", type=click.IntRange(min=200), default=100_000, show_default=True,
              help="robot tour: random configurations to check")
def demo(tour, html_dir, count):
    """A tour of every capability on generated shapes and parts: primitives, convex shapes,
    meshes, contacts, intersection sets, time of impact, broad phase and worlds, STL clearance.
    `touche demo robot`: a Franka Panda (example-robot-data) against a shelf: random
    configurations, colliding pairs, distances, motion segments."""
    from . import report

    if tour == "robot":
        from . import demo as demo_module

        notice = _CompileNotice(sys.stderr)

        def line(text=""):
            notice.clear()
            print(text, flush=True)

        try:
            with notice:
                demo_module.run_robot(line, count)
        except demo_module.MissingRobotData as exc:
            raise _Failure(str(exc), EXIT_MISSING_EXTRA) from exc
        return
    try:
        _demo(sys.stdout, html_dir)
    except report.MissingDependency as exc:
        raise _Failure(str(exc), EXIT_MISSING_EXTRA) from exc
    except OSError as exc:  # the folder cannot be made or written
        raise _Failure(f"{html_dir}: cannot write the pictures ({exc.strerror or exc})", EXIT_BAD_INPUT) from exc


@cli.command()
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes compiling side by side (default: all usable cores).")
def warmup(jobs):
    """Compile every kernel into numba's on-disk cache."""
    _warmup(sys.stdout, jobs)


# --------------------------------------------------------------------------------------------
# mesh commands
def _load(path, tolerance=None):
    from . import mesh

    return mesh.load(path, tolerance=tolerance)


def _pose(text, option):
    """'x,y,z' (translation), 'x,y,z,rx,ry,rz' (then a rotation vector in DEGREES: axis * angle)
    or 16 numbers (a row-major 4x4 matrix)."""
    import numpy as np

    from .pose import Pose, as_matrices

    if text is None:
        return None
    try:
        numbers = [float(x) for x in text.replace(";", ",").replace(" ", ",").split(",") if x]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got {text!r}", param_hint=option)
    if not all(np.isfinite(numbers)):
        raise click.BadParameter("NaN / inf in the pose", param_hint=option)
    if len(numbers) == 3:
        return Pose.from_translation(numbers)
    if len(numbers) == 6:
        return Pose.from_rotvec(np.radians(numbers[3:]), numbers[:3])
    if len(numbers) == 16:
        matrix = np.array(numbers).reshape(4, 4)
        as_matrices(matrix, option)  # raises GeometryError for a non-rigid matrix
        return matrix
    raise click.BadParameter(f"expected 3, 6 or 16 numbers, got {len(numbers)}", param_hint=option)


def _matrix(pose):
    import numpy as np

    from .pose import as_matrices

    return np.eye(4) if pose is None else np.array(as_matrices(pose), dtype=np.float64).reshape(4, 4)


def _world(mesh, pose):
    m = _matrix(pose)
    return mesh.vertices @ m[:3, :3].T + m[:3, 3]


def _as_list(value):
    import numpy as np

    if value is None:
        return None
    array = np.asarray(value, dtype=np.float64)
    return None if not np.isfinite(array).all() else array.tolist()


@cli.command()
@click.argument("part_a", type=click.Path())  # read by touche.mesh.load: missing files and
@click.argument("part_b", type=click.Path())  # directories are both bad input (exit 3)
@click.option("--pose-a", help="pose of A: 'x,y,z', 'x,y,z,rx,ry,rz' (rotation vector in degrees) or 16 numbers (4x4, row-major)")
@click.option("--pose-b", help="pose of B, same forms as --pose-a")
@click.option("--min-clearance", type=float, default=None, callback=_non_negative_distance,
              help="also report contact (exit 1) when the distance is below this (a distance >= 0)")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="write an interactive 3D report (self-contained HTML)")
@click.option("--png", "png_path", type=click.Path(dir_okay=False), help="write a static picture (PNG)")
def check(part_a, part_b, pose_a, pose_b, min_clearance, as_json, html_path, png_path):
    """Do two parts intersect? Prints the intersection curve or the distance and closest points.

    Exit code 0: no contact; 1: contact (intersecting or touching, or closer than
    --min-clearance); 2: usage error; 3: bad input file or pose; 4: internal error; 5: --html /
    --png needs a package that is not installed (the result is printed first)."""
    pa, pb = _pose(pose_a, "--pose-a"), _pose(pose_b, "--pose-b")
    from .clearance import clearance

    # stage progress on stderr (stdout stays clean for --json), on a terminal only (_progress)
    with _progress("checking", length=3) as bar:
        a = _load(part_a)
        bar.update(1)
        b = _load(part_b)
        bar.update(1)
        started = time.perf_counter()
        result = clearance(a, pa, b, pb, curve=True)
        elapsed = time.perf_counter() - started
        bar.update(1)
    import numpy as np

    segments = result.segments
    intersecting = bool(result.intersecting)
    distance = float(result.distance)
    solids = _interpenetration(a, pa, b, pb)
    # a closed part wholly inside the other: no surface contact, but the solids overlap
    contained = bool(solids["penetration_depth"] > 0.0 and not intersecting)
    contact = intersecting or contained or distance <= 0.0 or (min_clearance is not None and distance < min_clearance)
    curve_length = float(np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1).sum()) if len(segments) else 0.0
    summary = {
        "part_a": str(part_a), "part_b": str(part_b),
        "faces_a": int(len(a.faces)), "faces_b": int(len(b.faces)),
        "intersecting": intersecting, "distance": distance,
        "contact": bool(contact),
        "point_a": _as_list(result.point_a), "point_b": _as_list(result.point_b),
        "vector_b_to_a": _as_list(result.vector),
        # facets numbered as in the files (loading welds and drops collapsed facets, which
        # renumbers the mesh's faces); triangle_*: the welded mesh's face indices
        "facet_a": int(result.facet_a), "facet_b": int(result.facet_b),
        "triangle_a": int(result.triangle_a), "triangle_b": int(result.triangle_b),
        "intersection_segments": int(len(segments)), "intersection_length": curve_length,
        "contained": contained, **solids,
        "seconds": elapsed,
    }
    parts = [(os.path.basename(part_a), _world(a, pa), a.faces), (os.path.basename(part_b), _world(b, pb), b.faces)]
    # a report that cannot be written must not drop the result computed above: print the result,
    # then the error, and exit with the error's code
    failures = []
    for key, path in (("html", html_path), ("png", png_path)):
        if path:
            from . import report

            try:
                if key == "html":
                    report.write_html(path, parts, result, markers=_depth_markers(solids))
                else:
                    report.write_png(path, parts, result)
                summary[key] = str(path)
            except report.ReportError as exc:
                code = EXIT_MISSING_EXTRA if isinstance(exc, report.MissingDependency) else EXIT_BAD_INPUT
                failures.append((code, str(exc)))
    if failures:
        summary["report_errors"] = [message for _, message in failures]
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(f"A: {part_a} ({summary['faces_a']:,} faces)   B: {part_b} ({summary['faces_b']:,} faces)")
        if intersecting:
            click.echo(f"intersecting: yes — intersection curve of {len(segments)} segments, "
                       f"length {curve_length:.6g}")
        elif contained:
            click.echo("intersecting: yes — one part lies inside the other solid (no surface contact)")
        else:
            click.echo(f"intersecting: no — distance {distance:.6g}")
            click.echo(f"closest points: A {np.round(summary['point_a'], 6).tolist()} (file facet {summary['facet_a']})  "
                       f"B {np.round(summary['point_b'], 6).tolist()} (file facet {summary['facet_b']}; counted from 0)")
        if solids["penetration_depth"] > 0.0:
            inner, outer = ("B", "A") if solids["depth_side"] == "b_in_a" else ("A", "B")
            where = (f"vertex {solids['depth_vertex']} of {inner}" if solids["depth_side"] in ("a_in_b", "b_in_a")
                     else "A's deepest point (convex solids)")
            click.echo(f"interpenetration depth {solids['penetration_depth']:.6g}: {where} at "
                       f"{np.round(solids['depth_point_inner'], 6).tolist()}, "
                       f"{outer}'s surface at {np.round(solids['depth_point_surface'], 6).tolist()}")
        elif not (solids["solid_a"] or solids["solid_b"]) and intersecting:
            click.echo("interpenetration depth: not computed (neither part is a closed, oriented solid)")
        regions = solids.get("regions") or []
        if regions:
            click.echo(f"interpenetration regions: {len(regions)}, intersection volume "
                       f"{solids['intersection_volume']:.6g}")
            for k, region in enumerate(regions):
                click.echo(f"  region {k}: depth {region['depth']:.6g}, volume {region['volume']:.6g}, "
                           f"normal A->B {np.round(region['normal'], 6).tolist()}, {len(region['points'])} contact points")
        if min_clearance is not None and not (intersecting or contained):
            verdict = "below" if distance < min_clearance else "meets"
            click.echo(f"clearance {distance:.6g} {verdict} the minimum {min_clearance:g}")
        for key in ("html", "png"):
            if key in summary:
                click.echo(f"wrote {summary[key]}")
    for _, message in failures:
        click.echo(f"touche: error: {message}", err=True)
    if failures:
        return failures[0][0]
    return EXIT_CONTACT if contact else EXIT_OK


def _interpenetration(a, pose_a, b, pose_b):
    """How deep two parts interpenetrate, for the ones that are closed, oriented solids (the
    vertex depth of touche.penetration_depth, docs/solids.md): JSON-ready fields. A part that
    is not closed stays a surface (no depth is measured inside it)."""
    from .errors import GeometryError
    from .solid_queries import penetration_depth

    def solid(mesh):
        try:
            return mesh.as_solid()
        except GeometryError:
            return None

    solid_a, solid_b = solid(a), solid(b)
    fields = {"solid_a": solid_a is not None, "solid_b": solid_b is not None, "penetration_depth": 0.0,
              "depth_side": "", "depth_vertex": -1, "depth_point_inner": None, "depth_point_surface": None}
    if solid_a is None and solid_b is None:
        return fields
    found = penetration_depth(solid_a or a, pose_a, solid_b or b, pose_b)
    if found.depth > 0.0:
        if found.side == "b_in_a":
            inner, surface = found.point_b, found.point_a
        elif found.side == "a_in_b":
            inner, surface = found.point_a, found.point_b
        else:  # two convex solids: A's deepest point, and where it leaves B along the normal
            inner = found.point_a
            surface = found.point_a - found.depth * found.normal
        fields.update(penetration_depth=float(found.depth), depth_side=str(found.side), depth_vertex=int(found.vertex),
                      depth_point_inner=_as_list(inner), depth_point_surface=_as_list(surface))
    if solid_a is not None and solid_b is not None:
        fields.update(_regions(solid_a, pose_a, solid_b, pose_b))
    return fields


def _regions(a, pose_a, b, pose_b):
    """The interpenetration regions of two solid parts (touche.contacts on solid meshes,
    docs/solids.md "Contact regions"): the intersection volume and, per region, its depth,
    volume, normal and contact points; JSON-ready."""
    import numpy as np

    from .contacts import contacts

    found = contacts(a, pose_a, b, pose_b)
    regions = []
    for r in range(int(found.regions)):
        rows = found.region == r
        regions.append({"depth": float(found.region_depth[r]), "volume": float(found.region_volume[r]),
                        "normal": _as_list(found.region_normal[r]), "points": found.points[rows].tolist()})
    return {"intersection_volume": float(np.sum(found.region_volume)) if regions else 0.0, "regions": regions}


def _depth_markers(solids):
    """The deepest point and its nearest surface point, for the HTML report."""
    if solids["penetration_depth"] <= 0.0:
        return None
    import numpy as np

    depth = solids["penetration_depth"]
    markers = [(f"deepest point inside the other solid (depth {depth:.4g})", np.array([solids["depth_point_inner"]])),
               ("nearest point of the other solid's surface", np.array([solids["depth_point_surface"]]))]
    for k, region in enumerate(solids.get("regions") or []):
        markers.append((f"region {k} contacts (depth {region['depth']:.4g}, volume {region['volume']:.4g})",
                        np.array(region["points"]).reshape(-1, 3)))
    return markers


def _read_for_inspection(path):
    """(vertices, faces) of a mesh file as ``inspect`` judges it, and ``repair`` reports it
    before repairing (both must name the same problems). STL stores every triangle's corners
    separately: exact copies are welded (that is the format, not a defect) but degenerate faces
    are kept so that they are reported; other formats are read as they are (duplicate vertices
    of an OBJ are a finding)."""
    from . import mesh

    if str(path).lower().endswith(".stl"):
        import numpy as np

        soup = mesh.read_stl(path)
        return mesh.weld(soup.reshape(-1, 3), np.arange(3 * len(soup)).reshape(-1, 3), drop_degenerate=False)
    loaded = mesh.load(path, weld=False)
    return loaded.vertices, loaded.faces


@cli.command()
@click.argument("path", type=click.Path())  # a directory is bad input (exit 3), as a missing file
@click.option("--tolerance", type=float, default=None, callback=_positive_tolerance,
              help="weld / T-junction / planarity distance (default 1e-9 x size)")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--strict", is_flag=True, help="exit 1 when any problem is found")
def inspect(path, tolerance, as_json, strict):
    """Report holes, T-junctions, orientation, components and Euler checks of a mesh file."""
    from . import mesh

    vertices, faces = _read_for_inspection(path)
    report = mesh.inspect(vertices, faces, tolerance=tolerance)
    if as_json:
        click.echo(json.dumps({"path": str(path), **report.as_dict()}, indent=2))
    else:
        click.echo(f"{path}")
        click.echo(str(report))
    return EXIT_CONTACT if (strict and report.problems) else EXIT_OK


@cli.command()
@click.argument("source", type=click.Path())  # a directory is bad input (exit 3), as a missing file
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--tolerance", type=float, default=None, callback=_positive_tolerance,
              help="weld vertices closer than this (default 1e-9 x size)")
@click.option("--no-fill", is_flag=True, help="do not fill holes")
@click.option("--ascii", "ascii_stl", is_flag=True, help="write ASCII STL")
def repair(source, target, tolerance, no_fill, ascii_stl):
    """Weld, crack T-junctions, fill holes and orient a mesh; write it to TARGET (.stl / .obj)."""
    from . import mesh

    steps = ["read", "inspect", "repair", "check", "write"]
    with _progress("repairing", length=len(steps)) as bar:
        # the file as `touche inspect` reads it, so that both commands report the same problems
        # (repair welds exactly first, as loading would)
        vertices, faces = _read_for_inspection(source)
        bar.update(1)
        before = mesh.inspect(vertices, faces, tolerance=tolerance)
        bar.update(1)
        fixed = mesh.repair(vertices, faces, tolerance=tolerance, fill=not no_fill)
        bar.update(1)
        after = mesh.inspect(fixed, tolerance=tolerance)
        bar.update(1)
        mesh.save(fixed, target, ascii=ascii_stl)
        bar.update(1)
    click.echo(f"{source}: {before.faces:,} faces, problems: {'; '.join(before.problems) or 'none'}")
    click.echo(f"{target}: {after.faces:,} faces, problems: {'; '.join(after.problems) or 'none'}")
    return EXIT_OK


@cli.command()
@click.option("--triangles", type=int, default=200_000, show_default=True, help="size of the generated mesh")
def bench(triangles):
    """Time STL writing / reading / welding / inspection and a clearance query on a generated sphere."""
    import tempfile

    import numpy as np

    from . import mesh

    if triangles < 8:
        raise click.BadParameter("needs at least 8 triangles", param_hint="--triangles")
    from .clearance import ClearancePart, clearance, prepare

    vertices, faces = _uv_sphere(triangles)
    part = prepare((vertices, faces))
    near = np.eye(4)
    near[:3, 3] = [2.05, 0.3, 0.1]  # a second copy just beside the first
    timings = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sphere.stl")
        jobs = [("write binary STL", lambda: mesh.save((vertices, faces), path)),
                ("compile / load kernels", lambda: mesh.load(path)),
                ("read_stl (triangle soup)", lambda: mesh.read_stl(path)),
                ("load (read + exact weld)", lambda: mesh.load(path)),
                ("inspect", lambda: mesh.inspect(vertices, faces)),
                ("clearance: prepare part", lambda: ClearancePart((vertices, faces))),
                ("clearance: compile / load", lambda: clearance(part, None, part, near)),
                ("clearance: one query", lambda: clearance(part, None, part, near))]
        with _progress("benchmark", items=jobs, item_show_func=lambda j: j[0] if j else "") as bar:
            for name, job in bar:
                started = time.perf_counter()
                job()
                timings.append((name, time.perf_counter() - started))
    click.echo(f"mesh: {len(faces):,} triangles, {len(vertices):,} vertices")
    for name, seconds in timings:
        click.echo(f"  {name:<28} {seconds * 1e3:10.1f} ms")
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# batch jobs on Dask (touche.distributed)
@cli.group()
def batch():
    """Batch jobs on Dask: a local cluster on all cores, or a cluster's scheduler (--scheduler).

    \b
    touche batch poses POSES.npy A.stl B.stl -o out.npz     distance (or intersects) per pose
    touche batch clearance PARTS_DIR --threshold 0.5 -o table.csv

    Both resume: a job writes each finished chunk (a clearance job: its plan and each pair task)
    to OUT.chunks/ (atomically): run the same command again after an interruption and it
    computes only the missing chunks."""


def _client_for(scheduler, workers):
    """(client, cluster or None): the scheduler at ADDRESS, else a local cluster of one
    single-threaded worker process per core (or ``workers``)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise _Failure("touche batch needs dask and distributed: pip install 'touche[distributed]'",
                       EXIT_MISSING_EXTRA) from exc
    if scheduler:
        try:
            return Client(scheduler, timeout="30s"), None
        except OSError as exc:
            raise _Failure(f"cannot reach the scheduler at {scheduler}: {exc}", EXIT_BAD_INPUT) from exc
    import dask

    from ._warmup import default_jobs

    # a worker that dies (out of memory, killed) is restarted by its nanny; on a busy machine the
    # restart (a new process importing touche and loading its kernels) can take longer than
    # distributed's default 15 s, after which the cluster closes that worker for good and the job
    # goes on with fewer. Read when a worker leaves, so set for this (command-line) process.
    dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"})
    cluster = LocalCluster(n_workers=workers or default_jobs(), threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


class _BatchProgress:
    """A bar on a terminal; elsewhere one quiet line at the end (written by the caller)."""

    def __init__(self, label, total):
        self.bar = None
        if hasattr(sys.stderr, "isatty") and sys.stderr.isatty() and total:
            self.bar = click.progressbar(length=total, label=label, file=sys.stderr)
            self.bar.__enter__()

    def advance(self, steps=1):
        if self.bar is not None:
            self.bar.update(steps)

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _write_atomically(path, save):
    """``save(handle)`` into a temporary file beside ``path``, then rename it over ``path``: a
    reader (or a rerun) sees the whole file or none."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        save(handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _job_fingerprint(poses_path, shape_paths, verb, chunk_rows, count):
    import hashlib

    digest = hashlib.sha1()
    for path in (poses_path, *shape_paths):
        stat = os.stat(path)
        digest.update(f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return {"verb": verb, "chunk_rows": chunk_rows, "poses": count, "inputs": digest.hexdigest()}


@batch.command("poses")
@click.argument("poses_path", metavar="POSES.npy", type=click.Path(dir_okay=False))
@click.argument("shape_a", type=click.Path())
@click.argument("shape_b", type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(),
              help="results file (.npz), or with --columns a folder to create")
@click.option("--verb", type=click.Choice(["distance", "intersects"]), default="distance", show_default=True)
@click.option("--side", type=click.Choice(["b", "a"]), default="b", show_default=True,
              help="which shape the poses move (the other stays at the identity)")
@click.option("--chunk-rows", type=click.IntRange(min=1), default=None,
              help="poses per chunk (default: touche.distributed.DEFAULT_CHUNK_ROWS)")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="a Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster on all cores)")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="local cluster: worker processes (default: the cores)")
@click.option("--max-chunks", type=click.IntRange(min=1), default=None,
              help="compute at most this many missing chunks, then stop (a staged run; rerun to continue)")
@click.option("--keep-chunks", is_flag=True, help="keep OUTPUT.chunks/ after writing the results file")
@click.option("--columns", is_flag=True,
              help="write OUTPUT as a folder of one .npy per field, filled in place by the workers (nothing "
                   "is merged on this machine; each file can be memory-mapped)")
def batch_poses(poses_path, shape_a, shape_b, output, verb, side, chunk_rows, scheduler, workers, max_chunks,
                keep_chunks, columns):
    """For every pose in POSES.npy ((n, 4, 4) float64), the distance (or intersection) of
    SHAPE_A and SHAPE_B (mesh files) with the pose applied to one of them; written to OUTPUT
    (.npz: the fields of touche.DistanceResult, or 'intersects').

    The workers read their chunks of POSES.npy and write their chunks' results to
    OUTPUT.chunks/ themselves: they must see both at the same paths (a shared filesystem).
    With --columns, OUTPUT is a folder (made when the job ends, from OUTPUT.partial/) holding
    one .npy per field, which the workers fill in place: the results never pass through this
    machine (for outputs larger than its memory or disk bandwidth)."""
    import numpy as np

    from . import distributed as td
    from .errors import GeometryError

    chunk_rows = chunk_rows or td.DEFAULT_CHUNK_ROWS
    try:
        poses = np.load(poses_path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise _Failure(f"{poses_path}: not a readable .npy array ({exc})", EXIT_BAD_INPUT) from exc
    if poses.ndim != 3 or poses.shape[1:] != (4, 4):
        raise GeometryError(f"{poses_path}: poses must have shape (n, 4, 4), got {poses.shape}")
    # the workers read the mesh files (once per worker process) and build their trees: the mesh
    # files are checked by a worker before anything is written here
    a, b = td.mesh_file(shape_a), td.mesh_file(shape_b)
    count = len(poses)
    chunks = [(first, min(count, first + chunk_rows)) for first in range(0, count, chunk_rows)]
    if columns and os.path.exists(output):
        raise _Failure(f"{output} exists: remove it or choose another output folder", EXIT_BAD_INPUT)
    if not columns and os.path.isdir(output):
        raise _Failure(f"{output} is a folder: the results file is a .npz (or add --columns)", EXIT_BAD_INPUT)
    client, cluster = _client_for(scheduler, workers)
    try:
        td.read_mesh_files([a, b], client)
        started, todo, missing, skipped = _pose_job(td, client, poses_path, a, b, shape_a, shape_b, output, verb,
                                                    side, chunk_rows, max_chunks, columns, count, chunks)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    folder = output + (".partial" if columns else ".chunks")
    job_file = os.path.join(folder, "job.json")

    def chunk_path(index):
        return os.path.join(folder, _CHUNK_FILE.format(index))

    left = len(missing) - len(todo)
    elapsed = time.perf_counter() - started
    if left:
        click.echo(f"touche batch: {len(todo)} chunks computed, {skipped} done earlier, {left} left "
                   f"({elapsed:.1f} s); run the same command again to continue", err=True)
        return EXIT_OK
    if columns:  # the folder becomes the output in one rename
        import shutil

        shutil.rmtree(os.path.join(folder, td.DONE_FOLDER))
        os.remove(job_file)
        os.rename(folder, output)
    else:
        _merge_chunks(output, [chunk_path(k) for k in range(len(chunks))], count)
        if not keep_chunks:  # with the temporary file of a write a killed worker left behind
            _remove_chunks_folder(folder, [chunk_path(k) for k in range(len(chunks))] + [job_file])
    click.echo(f"touche batch: {count:,} poses in {len(chunks)} chunks ({len(todo)} computed, {skipped} done "
               f"earlier) in {elapsed:.1f} s -> {output}", err=True)
    return EXIT_OK


def _pose_job(td, client, poses_path, a, b, shape_a, shape_b, output, verb, side, chunk_rows, max_chunks, columns,
              count, chunks):
    """The chunks of a pose job still to do, computed on ``client``: (start time, chunks done
    now, chunks missing before, chunks done earlier)."""
    folder = output + (".partial" if columns else ".chunks")
    os.makedirs(folder, exist_ok=True)
    fingerprint = _job_fingerprint(poses_path, (shape_a, shape_b), verb, chunk_rows, count)
    if columns:
        fingerprint["layout"] = "columns"
    job_file = os.path.join(folder, "job.json")
    fresh = not os.path.exists(job_file)
    if not fresh:
        with open(job_file) as handle:
            if json.load(handle) != fingerprint:
                raise _Failure(f"{folder} holds chunks of another job (other inputs, verb or --chunk-rows): "
                               "remove it to start afresh", EXIT_BAD_INPUT)
    if columns:
        if fresh:  # the column files before the job file: a job file means they are there
            td.create_columns(folder, _pose_job_layout(verb, td.mesh_stand_in(), td.mesh_stand_in()), count)
        done = set(td.chunks_done(folder, len(chunks)))
        missing = [k for k in range(len(chunks)) if k not in done]
    else:
        missing = [k for k in range(len(chunks)) if not os.path.exists(os.path.join(folder, _CHUNK_FILE.format(k)))]
    if fresh:
        _write_atomically(job_file, lambda handle: handle.write(json.dumps(fingerprint).encode()))
    skipped = len(chunks) - len(missing)
    todo = missing[:max_chunks] if max_chunks else missing
    started = time.perf_counter()
    if todo:
        _run_pose_chunks(client, td, verb, side, a, b, poses_path, chunk_rows, folder, todo, columns)
    return started, todo, missing, skipped


def _run_pose_chunks(client, td, verb, side, a, b, poses_path, chunk_rows, folder, todo, columns=False):
    """The chunks ``todo`` of the job: each worker reads its chunk's poses from the file and
    writes the chunk's results into ``folder`` (touche.distributed.from_npy / save_chunks, or
    save_columns into the column files); the client sends the plan and receives row counts."""
    td.warm(client, steps=("distance / intersects: batches", "meshes: BVH pairs and rays"))
    poses = td.from_npy(poses_path, chunk_rows)
    args = (a, None, b, poses) if side == "b" else (a, poses, b, None)
    result = (td.distance if verb == "distance" else td.intersects)(*args, client=client, chunk_rows=chunk_rows)
    if columns:
        written = td.save_columns(result, folder, indices=todo, column="intersects",
                                  derived=_distance_column if verb == "distance" else None, client=client)
    else:
        written = td.save_chunks(result, folder, indices=todo, template=_CHUNK_FILE, column="intersects",
                                 client=client)
    progress = _BatchProgress("touche batch", len(todo))
    try:
        for _ in written:
            progress.advance()
    finally:
        progress.close()


def _distance_column(columns):
    """A distance job's ``distance`` column (DistanceResult.distance: 0 when penetrating), from a
    chunk's fields ({name: array}, or a chunk file)."""
    from .results import DistanceResult

    return {"distance": DistanceResult(*(columns[name] for name in DistanceResult.__slots__)).distance}


def _pose_job_layout(verb, a, b):
    """The column files of a pose job ({name: (dtype, row shape)}): the fields of the verb's
    result on an empty batch (DistanceResult's, or 'intersects'), and a distance job's
    ``distance``."""
    import numpy as np

    from . import query

    if verb == "intersects":
        return {"intersects": (np.asarray(query.intersects(a, None, b, np.zeros((0, 4, 4)))).dtype, ())}
    empty = query.distance(a, None, b, np.zeros((0, 4, 4)))
    layout = {name: (np.asarray(getattr(empty, name)).dtype, np.asarray(getattr(empty, name)).shape[1:])
              for name in ("signed_distance", "point_a", "point_b", "normal", "status")}
    layout["distance"] = (np.dtype(np.float64), ())
    return layout


_CHUNK_FILE = "chunk-{:06d}.npz"


def _merge_chunks(output, paths, count):
    """The chunk files' columns, concatenated, as one .npz (``distance`` added to a distance
    job's): written a column and a chunk at a time (the client never holds more than one
    chunk's column), atomically."""
    import zipfile

    import numpy as np

    with np.load(paths[0]) as first:
        layout = [(name, first[name].dtype, first[name].shape[1:]) for name in first.files]
    if any(name == "signed_distance" for name, _, _ in layout):  # as DistanceResult.distance: 0 when penetrating
        layout.append(("distance", np.dtype(np.float64), ()))

    def column(path, name):
        with np.load(path) as chunk:
            if name == "distance":
                return _distance_column(chunk)["distance"]
            return chunk[name]

    def save(handle):
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, dtype, trailing in layout:
                with archive.open(name + ".npy", "w", force_zip64=True) as member:
                    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                              "shape": (count,) + tuple(trailing)}
                    np.lib.format.write_array_header_1_0(member, header)
                    written = 0
                    for path in paths:
                        values = np.ascontiguousarray(column(path, name), dtype=dtype)
                        member.write(values.tobytes())
                        written += len(values)
                    if written != count:
                        raise RuntimeError(f"the chunk files hold {written} rows of {name}, not {count}")

    _write_atomically(output, save)


@batch.command("clearance")
@click.argument("parts_folder", type=click.Path(file_okay=False, exists=True))
@click.option("--threshold", type=float, required=True, callback=_non_negative_distance,
              help="report every pair of parts closer than this (0: touching or intersecting)")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="table file (.csv or .npz)")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="a Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster on all cores)")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="local cluster: worker processes (default: the cores)")
@click.option("--parts-per-group", type=click.IntRange(min=1), default=None, help="parts loaded together (default 64)")
@click.option("--pairs-per-task", type=click.IntRange(min=1), default=None,
              help="candidate pairs per task, the unit of resumption (default 512)")
@click.option("--max-chunks", type=click.IntRange(min=1), default=None,
              help="compute at most this many missing pair tasks, then stop (a staged run; rerun to continue)")
@click.option("--keep-chunks", is_flag=True, help="keep OUTPUT.chunks/ after writing the table")
def batch_clearance(parts_folder, threshold, output, scheduler, workers, parts_per_group, pairs_per_task, max_chunks,
                    keep_chunks):
    """Every pair of the STL / OBJ parts in PARTS_FOLDER (at their file coordinates) closer than
    --threshold: a table (.csv: one row per pair with the file names; .npz: the columns of
    touche.distributed.CLEARANCE_DTYPE and the part names).

    Resumable: the job's plan (the candidate pairs, cut into pair tasks) and each finished pair
    task are written to OUTPUT.chunks/ (atomically; the pair tasks by the workers, which must
    see that folder and the parts at the same paths); run the same command again after an
    interruption and it computes only the missing tasks."""
    import numpy as np

    from . import distributed as td

    names = sorted(name for name in os.listdir(parts_folder)
                   if name.lower().endswith((".stl", ".obj")) and os.path.isfile(os.path.join(parts_folder, name)))
    if len(names) < 2:
        raise _Failure(f"{parts_folder}: needs at least 2 .stl / .obj files, found {len(names)}", EXIT_BAD_INPUT)
    if not output.lower().endswith((".csv", ".npz")):
        raise click.BadParameter("must end in .csv or .npz", param_hint="--output")
    paths = [os.path.abspath(os.path.join(parts_folder, name)) for name in names]
    group_size = parts_per_group or td.DEFAULT_PARTS_PER_GROUP
    per_task = pairs_per_task or td.DEFAULT_PAIRS_PER_TASK
    folder = output + ".chunks"
    job_file = _claim_chunks_folder(folder, _clearance_fingerprint(names, paths, threshold, group_size, per_task),
                                    "other parts, part files, --threshold, --parts-per-group or --pairs-per-task")
    plan_file = os.path.join(folder, "plan.npz")

    def task_path(index):
        return os.path.join(folder, td.clearance_task_file(index))

    plan = td.ClearancePlan.load(plan_file) if os.path.exists(plan_file) else None
    earlier = {k for k in range(len(plan)) if os.path.exists(task_path(k))} if plan is not None else set()
    started = time.perf_counter()
    state = {"bar": None, "plan": plan, "computed": 0}

    def save_plan(made):
        _write_atomically(plan_file, made.save)
        state["plan"] = made

    def progress(done, total):
        if state["bar"] is None:
            state["bar"] = _BatchProgress("touche batch clearance", total)
            state["done"] = 0
        if state["bar"].bar is not None and total != state["bar"].bar.length:
            state["bar"].bar.length = total
        state["bar"].advance(done - state["done"])
        state["done"] = done

    if plan is None or len(earlier) < len(plan):
        client, cluster = _client_for(scheduler, workers)
        try:
            td.warm(client, steps=("STL clearance", "mesh preparation"))
            results = td.clearance_results(paths, threshold, client=client, parts_per_group=group_size,
                                           pairs_per_task=per_task, plan=plan, skip=earlier, max_tasks=max_chunks,
                                           on_plan=save_plan, progress=progress, write_to=folder)
            for _ in results:  # each task's rows written by its worker
                state["computed"] += 1
        finally:
            if state["bar"] is not None:
                state["bar"].close()
            client.close()
            if cluster is not None:
                cluster.close()
    plan, computed = state["plan"], state["computed"]
    left = len(plan) - len(earlier) - computed
    elapsed = time.perf_counter() - started
    if left:
        click.echo(f"touche batch: {computed} pair tasks computed, {len(earlier)} done earlier, {left} left "
                   f"({elapsed:.1f} s); run the same command again to continue", err=True)
        return EXIT_OK
    table = td.clearance_table(np.load(task_path(k)) for k in range(len(plan)))
    if output.lower().endswith(".npz"):
        _write_atomically(output, lambda handle: np.savez(handle, table=table, names=np.array(names)))
    else:
        _write_atomically(output, lambda handle: handle.write(_clearance_csv(table, names).encode()))
    if not keep_chunks:
        _remove_chunks_folder(folder, [job_file, plan_file] + [task_path(k) for k in range(len(plan))])
    click.echo(f"touche batch: {len(names)} parts, {len(table)} pairs within {threshold:g} "
               f"({int(table['intersecting'].sum())} intersecting; {len(plan)} pair tasks, {computed} computed, "
               f"{len(earlier)} done earlier) in {elapsed:.1f} s -> {output}", err=True)
    return EXIT_OK


def _clearance_fingerprint(names, paths, threshold, parts_per_group, pairs_per_task):
    """What makes a clearance job's plan and tasks: the part files (names and contents, hashed:
    the workers read them, the client reads them only here), the threshold and the cutting."""
    import hashlib

    digest = hashlib.sha1()
    for name, path in zip(names, paths):
        digest.update(f"{name}|{os.path.getsize(path)}|".encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return {"job": "clearance", "parts": len(names), "threshold": float(threshold).hex(),
            "parts_per_group": parts_per_group, "pairs_per_task": pairs_per_task, "inputs": digest.hexdigest()}


def _claim_chunks_folder(folder, fingerprint, differences):
    """Make ``folder`` (OUTPUT.chunks) and its job.json for ``fingerprint``, or check that the
    job.json already there is this job's (another job's chunks are refused, never mixed in)."""
    os.makedirs(folder, exist_ok=True)
    job_file = os.path.join(folder, "job.json")
    if os.path.exists(job_file):
        with open(job_file) as handle:
            try:
                same = json.load(handle) == fingerprint
            except ValueError:
                same = False
        if not same:
            raise _Failure(f"{folder} holds chunks of another job ({differences}): remove it to start afresh",
                           EXIT_BAD_INPUT)
    else:
        _write_atomically(job_file, lambda handle: handle.write(json.dumps(fingerprint).encode()))
    return job_file


def _remove_chunks_folder(folder, files):
    """Remove the job's ``files`` and temporary files an interrupted write left, then the folder."""
    for path in files:
        if os.path.exists(path):
            os.remove(path)
    for name in os.listdir(folder):
        if name.startswith(".") and name.endswith(".tmp"):
            os.remove(os.path.join(folder, name))
    os.rmdir(folder)


def _clearance_csv(table, names):
    lines = ["part_a,part_b,name_a,name_b,intersecting,distance,ax,ay,az,bx,by,bz,facet_a,facet_b"]
    for row in table:
        a, b = int(row["part_a"]), int(row["part_b"])
        coordinates = ",".join(repr(float(x)) for x in (*row["point_a"], *row["point_b"]))
        lines.append(f"{a},{b},{names[a]},{names[b]},{int(row['intersecting'])},{float(row['distance'])!r},"
                     f"{coordinates},{int(row['facet_a'])},{int(row['facet_b'])}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Entry point of the ``touche`` script: returns the exit code."""
    return cli.main(args=argv, prog_name="touche", standalone_mode=False)


if __name__ == "__main__":
    sys.exit(main())
