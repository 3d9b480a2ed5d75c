"""mkdocs hooks (mkdocs.yml ``hooks:``): the gallery's pictures are drawn at build time.

``on_files`` runs docs/gallery.py's examples (touche + matplotlib, small inputs) and adds each
PNG to the site as a generated file ``img/gallery/<name>.png``: docs/gallery.md links to them,
``mkdocs build --strict`` checks those links, and no picture is committed to the repository.
Under ``mkdocs serve`` the pictures are drawn once and redrawn only when gallery.py changes.
"""
from __future__ import annotations

import importlib.util
import logging
import sys
import time
from pathlib import Path

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.gallery")
GALLERY = Path(__file__).resolve().parent / "gallery.py"
FOLDER = "img/gallery"
_drawn = {}  # (mtime of gallery.py) -> {name: png bytes}


def _gallery_module():
    root = str(GALLERY.parent.parent)
    if root not in sys.path:  # the repository's touche, also without an installed package
        sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location("touche_docs_gallery", GALLERY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pictures():
    """{file name: PNG bytes} of the gallery, drawn once per version of gallery.py."""
    key = GALLERY.stat().st_mtime_ns
    if key not in _drawn:
        started = time.perf_counter()
        _drawn.clear()
        _drawn[key] = _gallery_module().render()
        log.info("gallery: drew %d pictures in %.1f s", len(_drawn[key]), time.perf_counter() - started)
    return _drawn[key]


def on_files(files, config):
    for name, data in pictures().items():
        files.append(File.generated(config, f"{FOLDER}/{name}", content=data))
    return files
