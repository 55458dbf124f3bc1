"""``arena replay view FILE``: FILE.html beside FILE, one self-contained page (no network) holding the replay."""

from __future__ import annotations

import html.parser
import json
import re

import pytest

from arena_cli.main import main


class _Page(html.parser.HTMLParser):
    """What a page asks the browser to load, and its JSON script blocks."""

    def __init__(self):
        super().__init__()
        self.loads: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.scripts: dict[str, str] = {}
        self.csp: str | None = None
        self._script: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "action", "data", "srcset", "poster"):
            if attrs.get(name):
                self.loads.append((tag, name, attrs[name]))
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = attrs["content"]
        if tag == "script":
            self._script = attrs.get("id") or attrs.get("type") or ""
            self.scripts[self._script] = ""

    def handle_data(self, data):
        if self._script is not None:
            self.scripts[self._script] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None


@pytest.fixture
def replay_file(tmp_path, capsys):
    path = tmp_path / "match.json"
    assert main(["play", "greedy", "random", "--deals", "2", "--rules", "rounds=1", "--replay", str(path)]) == 0
    capsys.readouterr()
    return path


def test_view_writes_a_self_contained_page_beside_the_file(replay_file, capsys, monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    assert main(["replay", "view", str(replay_file), "--no-browser"]) == 0
    target = replay_file.with_name("match.json.html")
    assert f"wrote {target}" in capsys.readouterr().out
    assert opened == []  # --no-browser

    text = target.read_text(encoding="utf-8")
    assert not re.search(r"https?:", text), "the page names a network address"
    page = _Page()
    page.feed(text)
    assert page.loads == []  # no script, style sheet, image or link to fetch: everything is inline
    assert json.loads(page.scripts["replay-data"]) == json.loads(replay_file.read_text())
    assert set(json.loads(page.scripts["replay-meta"])) >= {"cards", "replay_versions", "local"}
    script = page.scripts["module"]  # the viewer's modules made one: nothing left to import from a file
    assert "class Viewer" in script and "class GameTimeline" in script
    assert not re.search(r"^\s*(import|export)\b", script, flags=re.M)
    # its policy allows nothing from anywhere: the one script and style only, by hash
    assert page.csp.startswith("default-src 'none'; script-src 'sha256-")
    assert "connect-src" not in page.csp  # so default-src 'none' forbids fetch too
    assert "<title>match.json: greedy v random, 2 games · Uno Arena replay</title>" in text


def test_view_opens_the_page_in_the_browser_unless_told_not_to(replay_file, capsys, monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    assert main(["replay", "view", str(replay_file)]) == 0
    assert opened == [replay_file.with_name("match.json.html").resolve().as_uri()]


def test_a_file_that_is_not_a_replay_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    cases = {
        "broken.json": ("{not json", "is not JSON"),
        "list.json": ("[1, 2]", "a replay is a JSON object, this is a JSON list"),
        "old.json": ('{"version": 99, "games": [{}]}', "unsupported replay version 99"),
        "empty.json": ('{"version": 2, "games": []}', "the replay has no games"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_text(content)
        assert main(["replay", "view", str(tmp_path / name), "--no-browser"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert main(["replay", "view", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(cases)  # no .html, no temporary


def test_replay_needs_a_match_id_or_view(capsys):
    assert main(["replay", "view"]) == 2
    assert "arena replay view FILE" in capsys.readouterr().err
    assert main(["replay", "12"]) == 2
    assert "needs -o FILE" in capsys.readouterr().err
    assert main(["replay", "twelve", "-o", "x.json"]) == 2
    assert "expected MATCH_ID (a number) or view FILE" in capsys.readouterr().err


def test_the_bundler_inlines_relative_imports_and_refuses_what_it_cannot(tmp_path):
    from arena_cli.replay_page import bundle_script

    (tmp_path / "a.js").write_text('export function f() { return "</script>"; }\nexport const k = 2;\n')
    (tmp_path / "main.js").write_text('import { f, k as two } from "./a.js";\nconsole.log(f(), two);\n')
    script = bundle_script(tmp_path / "main.js")
    assert "const module_a = (() => {" in script and "return { f, k };" in script
    assert "const { f, k: two } = module_a;" in script
    assert "</script" not in script and "<\\/script>" in script  # cannot end the page's element
    (tmp_path / "b.js").write_text('import thing from "./a.js";\n')
    with pytest.raises(ValueError, match="cannot inline 'import thing from"):
        bundle_script(tmp_path / "b.js")
