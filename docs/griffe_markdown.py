"""Griffe extension (mkdocs.yml, mkdocstrings ``extensions``): touche's docstrings are prose
written to read well in ``help()``; two habits of that prose render badly as Markdown, and are
rewritten for the site only (the sources keep them):

- Sphinx roles, ``:class:`ImpactResult``` -> ```ImpactResult``` (a code span; Markdown would
  show the role's name and colons);
- a list started right under a line of text gets the blank line Markdown needs to see a list
  (without it the items run into the paragraph).
"""
from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`~?([^`]+)`")


def to_markdown(text):
    """``text`` with roles as code spans and a blank line before each list."""
    text = _ROLE.sub(lambda match: f"`{match.group(1)}`", text)
    lines, in_list = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("- "):
            if not in_list and lines and lines[-1].strip():
                lines.append("")
            in_list = True
        elif not line.strip():
            in_list = False
        lines.append(line)
    return "\n".join(lines)


class DocstringsToMarkdown(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
