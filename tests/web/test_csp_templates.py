"""The Content-Security-Policy holds by construction: the header is sent, and no template or
HTML-building code of the project has an inline script, inline style or event handler.

The browser tests (tests/browser/test_csp.py) see what Chromium blocks on the pages they
visit; this looks at every template, including pages no browser test opens.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: every template (the page `arena replay view` writes, with its scripts and styles inline and its own
#: Content-Security-Policy allowing exactly them by hash, is no template: arena_cli.replay_page builds
#: it; tests/cli/test_arena_replay_view.py checks it)
TEMPLATES = sorted(
    [*ROOT.glob("platform/*/templates/**/*.html"), *ROOT.glob("platform/tournaments_app/templates/**/*.html")]
)
#: Python that builds HTML (format_html in admins, views): the same rules apply to its strings
HTML_IN_PYTHON = sorted([*ROOT.glob("platform/*/*.py"), *ROOT.glob("tournaments/*.py")])

INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle\s*=\s*[\"']", re.I)
HANDLER = re.compile(r"\son[a-z]+\s*=\s*[\"']", re.I)
JS_URL = re.compile(r"href\s*=\s*[\"']\s*javascript:", re.I)


def test_the_templates_are_found():
    names = {p.name for p in TEMPLATES}
    assert {"base.html", "replay.html", "tournament_detail.html", "home.html"} <= names


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_has_inline_script_style_or_handlers(path):
    text = re.sub(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", "", path.read_text(), flags=re.S)
    for rule, pattern in (("inline script", INLINE_SCRIPT), ("inline style", INLINE_STYLE),
                          ("event handler attribute", HANDLER), ("javascript: URL", JS_URL)):
        found = pattern.search(text)
        assert found is None, f"{path.relative_to(ROOT)}: {rule} {found.group(0)!r}: the CSP blocks it; use a static file"


def test_no_python_builds_html_with_inline_style_or_handlers():
    offenders = []
    for path in HTML_IN_PYTHON:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"<[a-z][^>]*\sstyle=|<[a-z][^>]*\son[a-z]+=|<script>|<style", line, re.I):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, offenders


def test_every_page_sends_the_policy(client, db):
    from django.conf import settings

    response = client.get("/")
    header = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    assert directives == {
        name: " ".join(values) for name, values in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"].items()
    }
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe" not in header
    assert directives["frame-ancestors"] == "'none'"
