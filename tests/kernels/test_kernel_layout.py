"""The kernel layer's layout as checked facts (docs/KERNELS.md, "Layout"): every kernel module sits
on one floor of touche/_kernels, imports point down (or within the floor), no kernel imports
another module's underscore names, and every module is found by its file name alone."""
import ast
from pathlib import Path

import pytest

import touche._kernels as kernels

KERNELS = Path(kernels.__file__).resolve().parent
# lower number = lower floor; narrow, motion and broad stand side by side on the top floor and
# must not import one another
RANK = {"base": 0, "primitives": 1, "convex": 2, "trees": 3, "narrow": 4, "motion": 4, "broad": 4}


def _kernel_files():
    return sorted(path for path in KERNELS.glob("*/*.py") if path.stem != "__init__")


def _kernel_imports(path):
    """[(floor, module or None, [imported names])] of every ``from touche._kernels... import``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        assert node.level == 0, f"{path.name}: relative import {node.module!r}; kernels import absolutely"
        parts = (node.module or "").split(".")
        if parts[:2] != ["touche", "_kernels"] or len(parts) == 2:
            continue
        floor, module = parts[2], (parts[3] if len(parts) > 3 else None)
        found.append((floor, module, [alias.name for alias in node.names]))
    return found


def test_the_floors_are_the_documented_ones_and_hold_every_kernel_module():
    floors = {path.name for path in KERNELS.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert floors == set(RANK)
    assert not [path.name for path in KERNELS.glob("*.py") if path.stem != "__init__"], \
        "a kernel module outside the floors"
    names = [path.stem for path in _kernel_files()]
    assert len(names) == len(set(names)), "two kernel modules share a file name"
    assert not set(names) & set(RANK), "a kernel module named like a floor"
    assert set(names) == set(kernels._PATHS)


@pytest.mark.parametrize("path", _kernel_files(), ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_kernel_imports_point_down_and_take_public_names_only(path):
    floor = path.parent.name
    for target_floor, module, names in _kernel_imports(path):
        assert target_floor in RANK, f"{path.name} imports an unknown floor {target_floor}"
        upward = RANK[target_floor] > RANK[floor]
        sideways = RANK[target_floor] == RANK[floor] and target_floor != floor
        assert not (upward or sideways), f"{floor}/{path.name} imports {target_floor}/{module}"
        if module is not None:
            private = [name for name in names if name.startswith("_")]
            assert not private, f"{path.name} imports {private} from {module}"
        else:
            assert all((KERNELS / target_floor / f"{name}.py").is_file() for name in names)


def test_every_kernel_module_loads_by_its_file_name():
    for name, path in kernels._PATHS.items():
        module = kernels.load(name)
        assert Path(module.__file__).resolve() == path
        assert getattr(kernels, name) is module
    with pytest.raises(AttributeError):
        kernels.no_such_kernel_module  # noqa: B018


def test_the_cache_guard_follows_absolute_imports_across_floors():
    sources = kernels._module_sources()
    modules = set(sources)
    # pairs (narrow) reaches gjk (convex) and vec (base) by absolute imports
    assert {"gjk", "vec", "kinds"} <= kernels._direct_imports(sources["pairs"], modules)
    # "from touche._kernels.base import kinds": the floor's names count as modules
    assert "kinds" in kernels._direct_imports(b"from touche._kernels.base import kinds\n", modules)


# each kernel module holds one idea; a file past ~900 lines holds several
LINE_LIMIT = 900


@pytest.mark.parametrize("floor", sorted(RANK))
def test_no_kernel_module_is_over_the_line_limit(floor):
    lines = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in (KERNELS / floor).glob("*.py")}
    assert not {name: n for name, n in lines.items() if n > LINE_LIMIT}
