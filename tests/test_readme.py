"""The README's code runs and prints what it says (issue 22, item 1).

Every ```python block of README.md and of docs/**/*.md (the documentation site's pages, sub-folders included) runs, in file order, in one namespace per
file (a block may use what an earlier block defined), in a fresh Python process bounded in time,
as a user pasting them into a script would run them.

Conventions for the blocks (README.md, "The code in this README"):

- ``# prints: TEXT`` at the end of a statement: what that statement prints. The test compares it
  with the captured output, whitespace runs collapsed to one space (numpy pads columns); ``...``
  in TEXT stands for any text.
- ``<!-- not run -->`` on the line before the opening fence: a block that is deliberately not run
  (keep such blocks rare; at most MAX_NOT_RUN per file).
- A bare expression that is not a call (``r.distance`` alone on a line) is refused: in a script
  it prints nothing, which is what a reader of the README was told it would show.

Run directly to check files by hand: ``python tests/test_readme.py README.md docs/*.md``.
"""
from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import subprocess
import sys
import tokenize
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_RUN = "<!-- not run -->"
MAX_NOT_RUN = 2
PRINTS = re.compile(r"#\s*prints:\s?(.*)$")
TIMEOUT_SECONDS = 900  # kernels compile on first use: minutes on an empty cache (the suite warms it first)


class BlockFailure(Exception):
    """A block raised, printed something else than it claims, or shows a value it never prints."""


def python_blocks(text):
    """[(first line number of the code, source, run?)] of the ```python blocks of a markdown text."""
    blocks = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if re.fullmatch(r"```python\s*", lines[index]):
            previous = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
            body = []
            index += 1
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            if index == len(lines):
                raise BlockFailure(f"line {index - len(body)}: a ```python block is never closed")
            blocks.append((index - len(body) + 1, "\n".join(body) + "\n", previous != NOT_RUN))
        index += 1
    return blocks


def _claims(source):
    """{line (1-based, in the block): expected output} from the ``# prints:`` comments."""
    claims = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            match = PRINTS.search(token.string)
            if match:
                claims[token.start[0]] = match.group(1).strip()
    return claims


def _normalise(text):
    return " ".join(text.split())


def _matches(expected, printed):
    pattern = ".*".join(re.escape(part) for part in _normalise(expected).split("..."))
    return re.fullmatch(pattern, _normalise(printed), flags=re.DOTALL) is not None


def run_blocks(path, text, namespace=None):
    """Run the blocks of one markdown text in one namespace; returns how many ``# prints:``
    claims were checked. Raises BlockFailure naming the file and line of the first problem."""
    namespace = {"__name__": "__main__"} if namespace is None else namespace
    checked = 0
    for first_line, source, run in python_blocks(text):
        if not run:
            continue
        offset = first_line - 1
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise BlockFailure(f"{path}:{offset + (exc.lineno or 1)}: syntax error: {exc.msg}") from None
        claims = _claims(source)
        for statement in tree.body:
            where = f"{path}:{offset + statement.lineno}"
            if isinstance(statement, ast.Expr) and not isinstance(statement.value, ast.Call):
                raise BlockFailure(f"{where}: a bare expression prints nothing in a script; print() it")
            lines = range(statement.lineno, statement.end_lineno + 1)
            expected = [claims[line] for line in lines if line in claims]
            ast.increment_lineno(statement, offset)  # tracebacks name the markdown file's lines
            code = compile(ast.Module(body=[statement], type_ignores=[]), str(path), "exec")
            captured = io.StringIO()
            try:
                with contextlib.redirect_stdout(captured):
                    exec(code, namespace)
            except Exception:
                raise BlockFailure(f"{where}: the block raised\n{traceback.format_exc(limit=-3)}") from None
            printed = captured.getvalue()
            sys.stdout.write(printed)
            if expected:
                checked += 1
                if not _matches(expected[0], printed):
                    raise BlockFailure(f"{where}: the comment says it prints {expected[0]!r}, "
                                       f"it printed {_normalise(printed)!r}")
    return checked


def documents():
    """README.md and the docs/*.md files that hold Python blocks."""
    paths = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    return [path for path in paths if path.exists() and python_blocks(path.read_text(encoding="utf-8"))]


def main(argv):
    total = 0
    for name in argv:
        path = Path(name)
        try:
            checked = run_blocks(path.name, path.read_text(encoding="utf-8"))
        except BlockFailure as exc:
            print(f"FAILED {exc}", file=sys.stderr)
            return 1
        print(f"\n{path.name}: every block ran; {checked} '# prints:' claims checked", file=sys.stderr)
        total += checked
    print(f"CHECKED {total}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------
# the tests

def _run_file(path, tmp_path):
    """The blocks of ``path`` in a fresh interpreter (the touche this test imports), in a scratch
    directory (a block may write files); (exit code, stdout, stderr)."""
    import touche

    package_parent = str(Path(touche.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, __file__, str(path)], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=TIMEOUT_SECONDS)
    return run.returncode, run.stdout, run.stderr


def test_readme_blocks_run_and_print_what_they_claim(tmp_path):
    code, out, err = _run_file(ROOT / "README.md", tmp_path)
    assert code == 0, err
    checked = int(re.search(r"CHECKED (\d+)", err).group(1))
    assert checked >= 10, err  # the quick start states its output, line by line
    # the quick start ends with a time of impact that is a real hit, not a start in contact
    assert "HIT 2.0" in out and "ALREADY_TOUCHING" not in out


@pytest.mark.slow
def test_docs_blocks_run(tmp_path):
    for path in documents():
        if path.name == "README.md":
            continue
        code, _, err = _run_file(path, tmp_path)
        assert code == 0, f"{path}: {err}"


def test_blocks_not_run_are_rare_and_marked():
    for path in [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")):
        blocks = python_blocks(path.read_text(encoding="utf-8"))
        skipped = [line for line, _, run in blocks if not run]
        assert len(skipped) <= MAX_NOT_RUN, f"{path.name}: blocks not run at lines {skipped}"
    assert python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))[0][2]  # the quick start runs


# the checker itself: it must fail on what issue 22 found in the README
def _check(markdown):
    return run_blocks("doc.md", markdown)


def test_checker_compares_prints_claims():
    assert _check("```python\nx = 2\nprint(x, [1.0,  2.5])  # prints: 2 [1.0, 2.5]\n```\n") == 1
    assert _check("```python\nprint('HIT', 2.0000001)  # prints: HIT 2.0...\n```\n") == 1
    try:
        _check("```python\nimport enum\nprint(1)  # prints: HIT\n```\n")
    except BlockFailure as exc:
        assert "doc.md:3: the comment says it prints 'HIT', it printed '1'" in str(exc)
    else:
        raise AssertionError("a wrong '# prints:' claim passed")


def test_checker_fails_on_errors_with_the_markdown_line():
    try:
        _check("text\n\n```python\nrays = 1\n```\n\n```python\nprint(origins)\n```\n")
    except BlockFailure as exc:
        assert "doc.md:8: the block raised" in str(exc) and "NameError" in str(exc)
        assert 'File "doc.md", line 8' in str(exc)  # the traceback points into the markdown
    else:
        raise AssertionError("a NameError passed")


def test_checker_refuses_bare_expressions_and_shares_one_namespace():
    try:
        _check("```python\nx = 3\nx\n```\n")
    except BlockFailure as exc:
        assert "doc.md:3: a bare expression prints nothing" in str(exc)
    else:
        raise AssertionError("a bare expression passed")
    # blocks build on each other; a marked block is skipped
    assert _check("```python\nx = 3\n```\n<!-- not run -->\n```python\nx = 1 / 0\n```\n"
                  "```python\nprint(x)  # prints: 3\n```\n") == 1


def test_benchmark_log_is_not_tracked_and_the_install_is_named():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # where the README gives the benchmark command, it gives the install of the peers first
    command = readme.index("benchmarks/run.py")
    assert "pip install -q -e '.[bench]'" in readme[max(0, command - 400):command]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^bench = \[.*"coal".*"python-fcl"', pyproject, re.M)
    if not (ROOT / ".git").exists():
        return  # not a git checkout (an sdist): nothing is tracked
    tracked = subprocess.run(["git", "ls-files", "benchmarks"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "results.csv" not in tracked
    ignored = subprocess.run(["git", "check-ignore", "-q", "benchmarks/results/results.csv"], cwd=ROOT)
    assert ignored.returncode == 0  # the log benchmarks/run.py appends to is ignored


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
