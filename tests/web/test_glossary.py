"""One glossary (issue 20 point 8): engine.glossary's words in the guide, the pages, the admin,
the API's field help and the CLI, each in one sense."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from engine import glossary

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIRS = [ROOT / "platform", ROOT / "tournaments"]

#: wordings the glossary retired: (pattern, why)
RETIRED = [
    (r"per pairing", "a tournament's games field counts deals per match"),
    (r"\bseat rotation\b", "the glossary's word is rotation"),
    (r"\bhands?/s\b|\bhands per second\b", "arena bench counts one-round games"),
    (r"\{\{ [\w.]+ \}\} (deal|game|round|match)\{\{", "counts go through the glossary's count filter"),
    (r"\bdeals\b[^<]{0,40}>\s*games\b|\.deals \}\} games", "deals and games are different counts"),
]


def test_the_glossary_defines_the_issue_s_six_words_once_each():
    words = [term.word for term in glossary.TERMS]
    assert {"deal", "game", "round", "rotation", "match", "table"} <= set(words)
    assert len(words) == len(set(words))
    assert all(term.meaning.endswith(".") and len(term.meaning) > 40 for term in glossary.TERMS)


@pytest.mark.parametrize(("n", "word", "text"), [(1, "deal", "1 deal"), (0, "match", "0 matches"),
                                                 (3, "game", "3 games"), (2, "tournament round", "2 tournament rounds")])
def test_count_writes_the_number_with_the_word(n, word, text):
    assert glossary.count(n, word) == text
    assert Template('{% load glossary %}{{ n|count:w }}').render(Context({"n": n, "w": word})) == text


def test_count_refuses_a_word_that_is_not_in_the_glossary():
    with pytest.raises(KeyError):
        glossary.count(2, "hand")


def test_games_of_a_duplicate_match_are_its_deals_times_its_seats():
    assert glossary.games_of(2, 4, True) == 8
    assert glossary.games_of(2, 4, False) == 2


def test_the_guide_shows_every_word_with_its_anchor(client, db):
    html = client.get(reverse("web:guide")).content.decode()
    assert 'href="#glossary"' in html
    for term in glossary.TERMS:
        assert f'<dt id="{term.anchor}">{term.word.capitalize()}</dt><dd>{term.meaning}</dd>' in html.replace("&#x27;", "'")


def test_no_template_uses_a_retired_wording():
    found = []
    for base in TEMPLATE_DIRS:
        for path in base.rglob("*.html"):
            text = path.read_text()
            for pattern, why in RETIRED:
                for m in re.finditer(pattern, text):
                    found.append(f"{path.relative_to(ROOT)}: {m.group(0)!r} ({why})")
    assert found == []


def test_competition_fields_carry_the_glossary_s_help_in_the_models_and_the_api(db):
    from ladders.models import Ladder
    from ladders.serializers import LadderSerializer, StandingSerializer
    from matches.models import Match
    from tournaments_app.models import Tournament
    from tournaments_app.serializers import TournamentSerializer

    for model in (Ladder, Tournament, Match):
        assert glossary.DEALS_HELP in model._meta.get_field("deals").help_text, model
        assert model._meta.get_field("duplicate").help_text == glossary.DUPLICATE_HELP, model
    for serializer in (LadderSerializer, TournamentSerializer):
        fields = serializer().fields
        assert fields["deals"].help_text == glossary.DEALS_HELP and "games" not in fields
        assert fields["duplicate"].help_text == glossary.DUPLICATE_HELP
    standing = StandingSerializer().fields
    assert "deals" not in standing and "games played" in standing["games"].help_text
    assert "rated matches" in standing["version_matches"].help_text


def test_arena_glossary_prints_every_word(capsys):
    from arena_cli.main import main

    assert main(["glossary"]) == 0
    out = capsys.readouterr().out
    for term in glossary.TERMS:
        assert f"\n{term.word}\n" in f"\n{out}"
        assert term.meaning.split()[0] in out


@pytest.mark.parametrize(("change", "shown"), [("12.30", "+12"), ("-4.00", "\u22124"), ("0.40", "0"), ("-0.40", "0"), (None, "")])
def test_rating_changes_are_shown_in_whole_points(change, shown):
    from decimal import Decimal

    value = None if change is None else Decimal(change)
    assert Template("{% load ladders %}{{ v|signed }}").render(Context({"v": value})) == shown


def test_docs_glossary_md_is_the_glossary():
    assert (ROOT / "docs" / "glossary.md").read_text() == glossary.markdown(), (
        "docs/glossary.md is out of date: arena glossary --markdown > docs/glossary.md"
    )


def _resolve(path: str):
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(path)


def test_every_class_the_glossary_names_exists_and_stands_for_one_word(db):
    named = [(term.word, name.partition(" (")[0]) for term in glossary.TERMS for name in term.code]
    assert {"table", "tournament round", "standing"} <= {word for word, _ in named}
    for _, path in named:
        assert _resolve(path) is not None, path
    paths = [path for _, path in named]
    assert len(paths) == len(set(paths))


#: class names retired by the glossary (issue 15 point 4): each stood for two meanings, or not for its own
RETIRED_CLASSES = {"Round", "Standing", "Pairing", "PairingSeat"}


@pytest.mark.slow
def test_no_class_is_named_with_a_retired_name():
    import ast

    found = []
    for base in ("engine", "sandbox", "tournaments", "arena_cli", "platform"):
        for path in (ROOT / base).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and node.name in RETIRED_CLASSES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} class {node.name}")
    assert found == []
