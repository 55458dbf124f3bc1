"""The replay viewer away from a match page: the metadata of a replay opened from a file, and the
self-contained page ``arena replay view`` writes (one HTML file that holds the styles, the scripts
and the replay, and plays it when opened from disk, with no network at all).

Pure: no Django. The page is put together here from the viewer's own files under platform/ (read
by path, never imported): its markup parts (plain HTML in platform/matches/templates/matches/, the
same files the site's ``_replay_viewer.html`` includes), its styles and its ES modules.

>>> sorted(local_viewer_meta())
['cards', 'color_names', 'colors', 'local', 'reference_bots', 'replay_versions']
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from engine.bots import REFERENCE_BOTS
from engine.cards import card_table
from engine.replay import SUPPORTED_VERSIONS

PLATFORM = Path(__file__).resolve().parent.parent / "platform"
#: every app's static folder: the scripts' "/static/..." imports resolve in them
STATIC_ROOTS = sorted(PLATFORM.glob("*/static"))
#: the viewer's entry module and styles (the site's styles first, as core/base.html loads them)
ENTRY_SCRIPT = PLATFORM / "web" / "static" / "web" / "replay.js"
STYLES = (PLATFORM / "core" / "static" / "core" / "site.css", PLATFORM / "web" / "static" / "web" / "replay.css")
#: the viewer's markup parts, plain HTML that matches/_replay_viewer.html includes
MARKUP = PLATFORM / "matches" / "templates" / "matches"

def local_viewer_meta() -> dict[str, Any]:
    """The viewer's ``replay-meta`` for a replay from a file: no match, no logs, no timings; the
    viewer names each bot by the replay's ``names`` (a reference bot's name marked as such)."""
    return {
        "local": True,
        "replay_versions": list(SUPPORTED_VERSIONS),
        "reference_bots": list(REFERENCE_BOTS),
        **card_table(),
    }


def replay_problem(document: object) -> str | None:
    """Why ``document`` is not a replay the viewer can play (None when it is)."""
    if not isinstance(document, dict):
        return f"a replay is a JSON object, this is a JSON {type(document).__name__}"
    if document.get("version") not in SUPPORTED_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
        return f"unsupported replay version {document.get('version')!r} (this viewer reads {supported})"
    games = document.get("games")
    if not isinstance(games, list) or not games:
        return "the replay has no games"
    return None


# --- one script out of the viewer's ES modules --------------------------------------------------
# A page opened from disk (file://) may not load module files (Chromium refuses them), so the
# modules are put into one inline script: each imported module becomes a function whose exports
# are the fields of a constant, and each import a destructuring of that constant.

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"([^"]+)"\s*;?[ \t]*$', re.M)
_EXPORT = re.compile(r"^export\s+((?:async\s+)?(?:function\*?|class|const|let|var))\s+([A-Za-z_$][\w$]*)", re.M)
_LEFT_OVER = re.compile(r"^\s*(?:import|export)\b", re.M)


def _resolve(spec: str, importer: Path) -> Path:
    if spec.startswith("/static/"):
        for root in STATIC_ROOTS:
            candidate = root / spec.removeprefix("/static/")
            if candidate.is_file():
                return candidate.resolve()
        raise ValueError(f"{importer.name}: no static file for import {spec!r}")
    if spec.startswith(("./", "../")):
        return (importer.parent / spec).resolve()
    raise ValueError(f"{importer.name}: cannot inline import {spec!r} (only ./, ../ and /static/ paths)")


def bundle_script(entry: Path = ENTRY_SCRIPT) -> str:
    """The entry module and every module it imports, as the text of one inline module script."""
    names: dict[Path, str] = {}
    out: list[str] = []
    visiting: set[Path] = set()

    def emit(path: Path, is_entry: bool) -> str:
        if path in names:
            return names[path]
        if path in visiting:
            raise ValueError(f"import cycle through {path.name}")
        visiting.add(path)
        source = path.read_text(encoding="utf-8")

        def import_line(match: re.Match[str]) -> str:
            module = emit(_resolve(match[2], path), False)
            fields = [part.strip() for part in match[1].split(",") if part.strip()]
            return f"const {{ {', '.join(f.replace(' as ', ': ') for f in fields)} }} = {module};"

        source = _IMPORT.sub(import_line, source)
        exported = [m[2] for m in _EXPORT.finditer(source)]
        source = _EXPORT.sub(r"\1 \2", source)
        left_over = _LEFT_OVER.search(source)
        if left_over:
            raise ValueError(f"{path.name}: cannot inline {source[left_over.start():].splitlines()[0].strip()!r}")
        visiting.discard(path)
        if is_entry:
            out.append(f"// {path.name}\n{source}")
            return ""
        name = "module_" + re.sub(r"\W", "_", path.stem)
        while name in names.values():
            name += "_"
        names[path] = name
        out.append(f"// {path.name}\nconst {name} = (() => {{\n{source}\nreturn {{ {', '.join(exported)} }};\n}})();")
        return name

    emit(entry.resolve(), True)
    return _inline_safe("\n".join(out))


def _inline_safe(text: str) -> str:
    # "</script" would end the element early, "<!--" would start the HTML parser's script states;
    # in JavaScript "<\/" is "</" in a string, a template or a regular expression.
    return re.sub(r"<(/script|!--)", r"<\\\1", text, flags=re.I)


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def _json_script(value: object, element_id: str) -> str:
    # as Django's json_script: the JSON with <, > and & escaped, so it cannot end the element
    text = json.dumps(value).translate({ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"})
    return f'<script id="{html.escape(element_id)}" type="application/json">{text}</script>'


def viewer_markup() -> str:
    """The viewer's markup for a page that plays the replay it holds: the parts of
    matches/_replay_viewer.html rendered with ``local`` and ``embedded`` (no placeholder seats).

    >>> markup = viewer_markup()
    >>> markup.startswith('<div id="replay" class="replay" data-state="loading">'), 'id="rv-open"' in markup
    (True, True)
    """
    part = {name: (MARKUP / f"_replay_viewer_{name}.html").read_text(encoding="utf-8")
            for name in ("open", "bar", "loading", "controls")}
    return (
        '<div id="replay" class="replay" data-state="loading">\n'
        f"{part['open']}{part['bar']}  {part['loading']}{part['controls']}</div>\n"
    )


def standalone_html(replay: dict[str, Any], *, title: str) -> str:
    """A whole HTML page that plays ``replay`` from disk: styles, scripts and the replay inline.

    Its own Content-Security-Policy allows exactly its one style sheet and its one script (by
    hash) and nothing from anywhere else (``default-src 'none'``), so the page cannot reach
    the network even by mistake.
    """
    problem = replay_problem(replay)
    if problem:
        raise ValueError(problem)
    style = "\n".join(_inline_safe(path.read_text(encoding="utf-8")) for path in STYLES)
    script = bundle_script()
    policy = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="description" content="A UNO bot replay, played from this file: no server, no network.">
  <title>{html.escape(title)} · Uno Arena replay</title>
  <style>{style}</style>
</head>
<body>
  <header class="topbar"><span class="brand"><span class="brand-card" aria-hidden="true">U</span> Uno Arena</span></header>
  <main class="page">
    <div class="page-head"><h1>Replay of {html.escape(title)}</h1></div>
    {viewer_markup()}
    {_json_script(local_viewer_meta(), "replay-meta")}
    {_json_script(replay, "replay-data")}
  </main>
  <footer class="footer">Written by <code>arena replay view</code>: this file plays by itself, offline.</footer>
  <script type="module">{script}</script>
</body>
</html>
"""


def replay_title(replay: dict[str, Any], file_name: str) -> str:
    """``match.json: expert v random, 20 games`` (the bots by the replay's names)."""
    names = [str(n) for n in replay.get("names") or []]
    games = len(replay.get("games") or [])
    who = " v ".join(names) if names else "a replay"
    return f"{file_name}: {who}, {games} game{'' if games == 1 else 's'}"

