"""The documentation site builds, warnings as errors, and renders (issue 22, item 2).

One module-scoped build: ``mkdocs build --strict`` of mkdocs.yml into a scratch directory (the
build runs docs/gallery.py through the hook docs/hooks.py, which computes with touche and draws
the gallery's pictures). Then: every page of the nav exists, the gallery's pictures exist and
are PNGs linked from the gallery page, every name of ``touche.__all__`` has its entry in the API
reference, and, where Debian's chromium is installed (tests/conftest.py installs it on CI), the
home page and the gallery render in headless Chromium over HTTP with no console error and with
every picture loaded.

Skipped with a reason when mkdocs, mkdocs-material or mkdocstrings is missing (the ``docs``
extra: ``pip install -e '.[docs]'``; the ``test`` extra includes it).
"""
from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
BUILD_TIMEOUT_SECONDS = 900  # the gallery compiles a few kernels on an empty cache (the suite warms it first)
MISSING = [name for name in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "yaml")
           if importlib.util.find_spec(name.split(".")[0]) is None
           or (name == "mkdocstrings_handlers.python" and importlib.util.find_spec(name) is None)]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed (missing {', '.join(MISSING)}): "
                                "pip install -e '.[docs]'")]


def _nav_pages(nav):
    """Every markdown file of mkdocs.yml's nav, in order."""
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            yield from _nav_pages(value)
        else:
            yield value


def _html_of(site, page):
    """The built HTML file of a markdown page (use_directory_urls: a/b.md -> a/b/index.html)."""
    stem = page[:-len(".md")]
    return site / "index.html" if stem == "index" else site / stem / "index.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    import touche

    out = tmp_path_factory.mktemp("site")
    package_parent = str(Path(touche.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p),
               NO_MKDOCS_2_WARNING="1")
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                          "--site-dir", str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=BUILD_TIMEOUT_SECONDS)
    seconds = time.perf_counter() - started
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    print(f"mkdocs build --strict: {seconds:.1f} s")
    return out


def _config():
    import yaml

    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_of_the_nav_is_built(site):
    pages = list(_nav_pages(_config()["nav"]))
    wanted = {"index.md", "getting-started.md", "concepts.md", "primitives.md", "convex.md", "meshes.md",
              "time-of-impact.md", "broad-phase.md", "clearance.md", "cli.md", "gallery.md", "benchmarks.md",
              "KERNELS.md", "DISTRIBUTED.md"}
    assert wanted <= set(pages), wanted - set(pages)
    assert any(page.startswith("api/") for page in pages)
    for page in pages:
        assert (ROOT / "docs" / page).is_file(), page
        html = _html_of(site, page)
        assert html.is_file(), f"{page} was not built"
        assert "--8<--" not in html.read_text(encoding="utf-8"), f"{page}: a snippet was not included"
    # the benchmarks page is BENCHMARKS.md itself, included at build time
    assert "Targets met?" in _html_of(site, "benchmarks.md").read_text(encoding="utf-8")


def test_gallery_pictures_are_drawn_at_build_time(site):
    spec = importlib.util.spec_from_file_location("touche_docs_gallery_names", ROOT / "docs" / "gallery.py")
    source = (ROOT / "docs" / "gallery.py").read_text(encoding="utf-8")
    names = re.findall(r'"([\w]+\.png)":', source)
    assert spec is not None and len(names) >= 2
    page = _html_of(site, "gallery.md").read_text(encoding="utf-8")
    for name in names:
        picture = site / "img" / "gallery" / name
        assert picture.is_file(), name
        data = picture.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
        assert f"img/gallery/{name}" in page, f"the gallery page does not show {name}"
        assert not (ROOT / "docs" / "img" / "gallery" / name).exists()  # drawn, not committed


def test_api_reference_covers_touche_all(site):
    import touche

    html = "".join(path.read_text(encoding="utf-8") for path in (site / "api").rglob("*.html"))
    missing = [name for name in touche.__all__ if f'id="touche.{name}"' not in html]
    assert missing == [], f"names of touche.__all__ without an API entry: {missing}"


def test_api_reference_shows_docstrings_as_markdown(site):
    """docs/griffe_markdown.py: Sphinx roles become code spans and lists are lists on the site
    (the docstrings keep their help() form)."""
    html = "".join(path.read_text(encoding="utf-8") for path in (site / "api").rglob("*.html"))
    text = re.sub(r"<[^>]+>", "", html)
    assert re.findall(r":(?:class|func|meth|attr|data|mod|exc):", text) == []
    queries = _html_of(site, "api/queries.md").read_text(encoding="utf-8")
    engines = queries[queries.index('id="touche.time_of_impact"'):]
    assert "<li>both motions translational" in engines  # the engines of time_of_impact, a list


def test_docstring_markdown_conversion():
    spec = importlib.util.spec_from_file_location("touche_docs_griffe", ROOT / "docs" / "griffe_markdown.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "See :class:`ImpactResult` and :func:`~touche.distance`.\nEngines:\n- one\n  more\n- two\n\nafter"
    assert module.to_markdown(text) == ("See `ImpactResult` and `touche.distance`.\nEngines:\n\n- one\n  more\n- two\n"
                                        "\nafter")


# -- headless Chromium -----------------------------------------------------------------------------

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--window-size=1200,900",
                  "--virtual-time-budget=8000", "--enable-logging=stderr", "--v=0"]
IMAGE_CHECK = """<script>
window.addEventListener("load", function () {
  var images = Array.from(document.images);
  var loaded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  var note = document.createElement("div");
  note.id = "touche-image-check";
  note.textContent = "touche images: " + loaded.length + " of " + images.length + " loaded";
  document.body.appendChild(note);
});
</script>"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _chromium(url, tmp_path, name):
    profile = tmp_path / f"profile-{name}"
    run = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=180, cwd=tmp_path)
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if re.search(r":(ERROR|FATAL):CONSOLE|Uncaught|TypeError|ReferenceError", line)]
    return run, errors


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (/usr/bin/chromium): "
                    "apt-get install -y chromium")
def test_site_renders_in_headless_chromium(site, served, tmp_path):
    run, errors = _chromium(served, tmp_path, "index")
    assert errors == [], errors
    assert "Collision detection for Python" in run.stdout and "md-content" in run.stdout  # the theme rendered
    # the gallery page, with a copy that reports how many of its pictures loaded
    gallery = _html_of(site, "gallery.md")
    check = gallery.parent / "check.html"
    check.write_text(gallery.read_text(encoding="utf-8").replace("</body>", IMAGE_CHECK + "</body>"), encoding="utf-8")
    run, errors = _chromium(served + "gallery/check.html", tmp_path, "gallery")
    assert errors == [], errors
    match = re.search(r"touche images: (\d+) of (\d+) loaded", run.stdout)
    assert match, run.stdout[-2000:]
    loaded, total = map(int, match.groups())
    assert total >= 3 and loaded == total, match.group(0)
    # the check itself can fail: a picture that does not exist is counted as not loaded
    broken = gallery.parent / "broken.html"
    broken.write_text(f'<html><body><img src="missing.png">{IMAGE_CHECK}</body></html>', encoding="utf-8")
    run, _ = _chromium(served + "gallery/broken.html", tmp_path, "broken")
    assert "touche images: 0 of 1 loaded" in run.stdout
