"""Reading URDF and SRDF files into plain descriptions (no kinematics here: see model.py).

Parser: the standard library's ``xml.etree.ElementTree``. URDF's collision subset is small (links,
their ``<collision>`` elements, joints with origin, axis, limit and mimic), and reading it here
keeps touche's dependencies as they are (yourdfpy would bring lxml, trimesh[easy] and a dozen
more packages for parts of URDF touche does not use), lets every error name the file and the
element at fault in touche's words, and refuses what yourdfpy or pybullet silently skip (a mesh
that is not there, NaN limits, a joint type touche cannot move).

``package://<package>/<path>`` file names are looked up, in order, in: the ``package_dirs`` the
caller gives (a folder holding ``<package>/`` or the package's own folder, or a mapping
{package: folder}), ``ROS_PACKAGE_PATH``, the URDF's folder and its parents, and the packages
installed in this Python environment (an importable module of that name, or a cmeel /
ament-style ``share/<package>`` folder, where example-robot-data puts its robots).
"""
from __future__ import annotations

import math
import os
import site
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import RobotModelError

JOINT_TYPES_MOVED = ("revolute", "continuous", "prismatic", "fixed")
JOINT_TYPES_REFUSED = ("floating", "planar")  # URDF types touche does not move (yet)


@dataclass
class CollisionElement:
    """One ``<collision>`` of a link: ``kind`` box / cylinder / sphere / capsule / mesh, its
    sizes, its origin (4, 4) in the link frame; meshes: the resolved ``path`` and ``scale`` (3,)."""

    link: str
    kind: str
    origin: np.ndarray
    size: dict
    path: Path | None = None
    scale: np.ndarray | None = None
    name: str | None = None


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float = -math.inf
    upper: float = math.inf
    mimic: tuple | None = None  # (master joint name, multiplier, offset)


@dataclass
class Description:
    """What a URDF says about collisions and kinematics."""

    name: str
    path: Path | None
    links: list = field(default_factory=list)  # names, in file order
    joints: list = field(default_factory=list)  # Joint, in file order
    collisions: list = field(default_factory=list)  # CollisionElement, in file order


def _fail(source, message):
    raise RobotModelError(f"{source}: {message}")


def _floats(text, count, source, what):
    try:
        values = [float(word) for word in text.split()]
    except ValueError:
        _fail(source, f"{what} must be {count} numbers, got {text!r}")
    if len(values) != count:
        _fail(source, f"{what} must be {count} numbers, got {text!r}")
    if not all(math.isfinite(v) for v in values):
        _fail(source, f"{what} must be finite, got {text!r}")
    return np.array(values)


def _float(element, attribute, source, what, default=None):
    text = element.get(attribute)
    if text is None:
        if default is None:
            _fail(source, f"{what} has no '{attribute}' attribute")
        return default
    try:
        value = float(text)
    except ValueError:
        _fail(source, f"{what} '{attribute}' is not a number: {text!r}")
    return value


def rpy_matrix(roll, pitch, yaw):
    """URDF's rpy: rotations about the fixed x, then y, then z axes: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def _origin(parent, source, what):
    matrix = np.eye(4)
    element = parent.find("origin")
    if element is None:
        return matrix
    matrix[:3, 3] = _floats(element.get("xyz", "0 0 0"), 3, source, f"{what} <origin xyz>")
    matrix[:3, :3] = rpy_matrix(*_floats(element.get("rpy", "0 0 0"), 3, source, f"{what} <origin rpy>"))
    return matrix


# ------------------------------------------------------------------------------------------------
# package:// and relative file names
def _installed_package_dirs(package):
    """Folders of an installed package named ``package``: an importable module, or a share/
    folder under a prefix (cmeel.prefix in site-packages, or sys.prefix)."""
    found = []
    module = package.replace("-", "_")
    if module.isidentifier():
        import importlib.util

        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            found.extend(Path(p) for p in spec.submodule_search_locations)
    prefixes = [Path(sys.prefix)]
    for folder in list(site.getsitepackages()) + [site.getusersitepackages()]:
        prefixes.append(Path(folder) / "cmeel.prefix")
    for prefix in prefixes:
        candidate = prefix / "share" / package
        if candidate.is_dir():
            found.append(candidate)
    return found


def _package_roots(package, package_dirs, urdf_dir):
    """Candidate folders for ``package``, in the order of the module doc."""
    roots = []
    if isinstance(package_dirs, dict):
        if package in package_dirs:
            roots.append(Path(package_dirs[package]))
    elif package_dirs is not None:
        for folder in [package_dirs] if isinstance(package_dirs, (str, os.PathLike)) else package_dirs:
            roots += [Path(folder) / package, Path(folder)]
    for folder in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
        roots += [Path(folder) / package, Path(folder)]
    if urdf_dir is not None:
        for folder in [urdf_dir, *urdf_dir.parents]:
            roots.append(folder / package)
            if folder.name == package:
                roots.append(folder)
    roots += _installed_package_dirs(package)
    return roots


def resolve_filename(filename, package_dirs, urdf_dir, source):
    """The file a URDF ``filename`` names (``package://``, ``file://``, absolute or relative to
    the URDF's folder). A file that cannot be found is a RobotModelError naming where it looked."""
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, inner = rest.partition("/")
        roots = _package_roots(package, package_dirs, urdf_dir)
        for root in roots:
            candidate = root / inner
            if candidate.is_file():
                return candidate
        looked = ", ".join(str(r) for r in dict.fromkeys(roots)) or "nowhere (no package_dirs given)"
        _fail(source, f"mesh {filename!r} not found: package {package!r} looked up in {looked} "
                      "(pass package_dirs=... naming the folder that holds it)")
    path = Path(filename[len("file://"):] if filename.startswith("file://") else filename)
    if not path.is_absolute():
        path = (urdf_dir if urdf_dir is not None else Path.cwd()) / path
    if not path.is_file():
        _fail(source, f"mesh {filename!r} not found (looked for {path})")
    return path


# ------------------------------------------------------------------------------------------------
# URDF
def _collision(element, link, index, source, package_dirs, urdf_dir):
    what = f"link {link!r} <collision> {index}"
    geometry = element.find("geometry")
    if geometry is None or len(geometry) == 0:
        _fail(source, f"{what} has no <geometry>")
    shape = geometry[0]
    origin = _origin(element, source, what)
    kind = shape.tag
    size = {}
    path = scale = None
    if kind == "box":
        size["size"] = _floats(shape.get("size", ""), 3, source, f"{what} <box size>")
    elif kind in ("cylinder", "capsule"):
        size["radius"] = _float(shape, "radius", source, f"{what} <{kind}>")
        size["length"] = _float(shape, "length", source, f"{what} <{kind}>")
    elif kind == "sphere":
        size["radius"] = _float(shape, "radius", source, f"{what} <sphere>")
    elif kind == "mesh":
        filename = shape.get("filename")
        if not filename:
            _fail(source, f"{what} <mesh> has no filename")
        path = resolve_filename(filename, package_dirs, urdf_dir, f"{source}: {what}")
        scale = _floats(shape.get("scale", "1 1 1"), 3, source, f"{what} <mesh scale>")
        if (scale == 0.0).any():
            _fail(source, f"{what} <mesh scale> has a zero factor: {scale.tolist()}")
    else:
        _fail(source, f"{what}: unknown geometry <{kind}> (touche reads box, cylinder, sphere, capsule, mesh)")
    for key, value in size.items():
        if np.any(np.asarray(value) <= 0.0) or not np.all(np.isfinite(value)):
            _fail(source, f"{what} <{kind} {key}> must be finite and > 0, got {np.asarray(value).tolist()}")
    return CollisionElement(link, kind, origin, size, path, scale, element.get("name"))


def _joint(element, source):
    name = element.get("name")
    if not name:
        _fail(source, "a <joint> has no name")
    what = f"joint {name!r}"
    kind = element.get("type")
    if kind in JOINT_TYPES_REFUSED:
        _fail(source, f"{what} has type {kind!r}, which touche does not support (it moves "
                      f"{', '.join(JOINT_TYPES_MOVED)} joints)")
    if kind not in JOINT_TYPES_MOVED:
        _fail(source, f"{what} has unknown type {kind!r} (URDF types: {', '.join(JOINT_TYPES_MOVED + JOINT_TYPES_REFUSED)})")
    links = []
    for tag in ("parent", "child"):
        child = element.find(tag)
        if child is None or not child.get("link"):
            _fail(source, f"{what} has no <{tag} link=...>")
        links.append(child.get("link"))
    origin = _origin(element, source, what)
    axis = np.array([1.0, 0.0, 0.0])
    axis_element = element.find("axis")
    if axis_element is not None and kind != "fixed":
        axis = _floats(axis_element.get("xyz", "1 0 0"), 3, source, f"{what} <axis xyz>")
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            _fail(source, f"{what} has a zero <axis>")
        axis = axis / norm
    lower, upper = -math.inf, math.inf
    limit = element.find("limit")
    if kind in ("revolute", "prismatic"):
        if limit is None:
            _fail(source, f"{what} ({kind}) has no <limit> (URDF requires one; use type 'continuous' for an unlimited revolute joint)")
        lower = _float(limit, "lower", source, f"{what} <limit>", default=0.0)
        upper = _float(limit, "upper", source, f"{what} <limit>", default=0.0)
        if not (math.isfinite(lower) and math.isfinite(upper)):
            _fail(source, f"{what} <limit> must be finite, got lower={lower!r} upper={upper!r}")
        if lower > upper:
            _fail(source, f"{what} <limit> has lower {lower!r} > upper {upper!r}")
    mimic = None
    mimic_element = element.find("mimic")
    if mimic_element is not None and kind != "fixed":
        master = mimic_element.get("joint")
        if not master:
            _fail(source, f"{what} <mimic> names no joint")
        multiplier = _float(mimic_element, "multiplier", source, f"{what} <mimic>", default=1.0)
        offset = _float(mimic_element, "offset", source, f"{what} <mimic>", default=0.0)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            _fail(source, f"{what} <mimic> multiplier and offset must be finite")
        mimic = (master, multiplier, offset)
    return Joint(name, kind, links[0], links[1], origin, axis, lower, upper, mimic)


def _root_element(path=None, text=None):
    source = str(path) if path is not None else "<urdf string>"
    try:
        root = ET.fromstring(text) if text is not None else ET.parse(path).getroot()
    except FileNotFoundError:
        _fail(source, "no such file")
    except ET.ParseError as exc:
        _fail(source, f"not well-formed XML: {exc}")
    return root, source


def read_urdf(path=None, *, text=None, package_dirs=None):
    """A :class:`Description` of the URDF file ``path`` (or of the XML string ``text``)."""
    path = Path(path) if path is not None else None
    root, source = _root_element(path, text)
    if root.tag != "robot":
        _fail(source, f"the root element is <{root.tag}>, not <robot>")
    urdf_dir = path.resolve().parent if path is not None else None
    description = Description(root.get("name", ""), path)
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            _fail(source, "a <link> has no name")
        if name in description.links:
            _fail(source, f"link {name!r} is defined twice")
        description.links.append(name)
        for index, collision in enumerate(element.findall("collision")):
            description.collisions.append(
                _collision(collision, name, index, source, package_dirs, urdf_dir)
            )
    names = set()
    for element in root.findall("joint"):
        joint = _joint(element, source)
        if joint.name in names:
            _fail(source, f"joint {joint.name!r} is defined twice")
        names.add(joint.name)
        description.joints.append(joint)
    if not description.links:
        _fail(source, "the robot has no <link>")
    return description


def read_srdf_disabled_pairs(path=None, *, text=None):
    """The link pairs of an SRDF's ``<disable_collisions link1=... link2=...>``, as a list of
    (name, name) in file order."""
    root, source = _root_element(Path(path) if path is not None else None, text)
    pairs = []
    for element in root.findall("disable_collisions"):
        a, b = element.get("link1"), element.get("link2")
        if not a or not b:
            _fail(source, "a <disable_collisions> lacks link1 or link2")
        pairs.append((a, b))
    return pairs
