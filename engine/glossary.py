"""The words of the platform: one definition each, used by the guide, the pages, the admin,
the API's field help and the CLI (issue 20 point 8).

Pure: no Django. ``TERMS`` is the glossary in reading order; ``count`` writes a number with
its word ("1 deal", "3 games"). A count of deals is named ``deals`` everywhere (a ladder's,
a tournament's and a match's field, the API, ``play_match``, ``arena play --deals``); a count
of games played is ``games`` (``games_played``).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.rules import BOUNDS

_MIN_SEATS, _MAX_SEATS = BOUNDS["players"]


@dataclass(frozen=True)
class Term:
    """A word, its plural, its meaning (what the site shows) and the classes that hold it in the code
    (``code``: dotted paths, for docs/glossary.md only), one class name per meaning."""

    word: str
    plural: str
    meaning: str
    code: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """The guide's fragment for this word (``/guide/#glossary-deal``)."""
        return "glossary-" + self.word.replace(" ", "-")


TERMS: tuple[Term, ...] = (
    Term("round", "rounds",
         "The cards dealt once and played until a player goes out (or the turn limit ends it). "
         "Scores are counted at the end of each round.",
         ("engine.game.Game.round (its number; no class is named Round)",)),
    Term("game", "games",
         "Rounds from one seed until a player reaches the target score, or the fixed number of rounds "
         "of the rules. A match's replay holds each of its games.",
         ("engine.game.Game",)),
    Term("deal", "deals",
         "The seed of a game, which fixes every shuffle and dealer of its rounds. Without duplicate, "
         "a deal is played once, as one game."),
    Term("rotation", "rotations",
         "One seating of a match's bots. Under duplicate deals, each deal is played once per rotation, "
         "with every bot moved one seat on, so every bot plays every seat's cards: a match of 2 deals "
         "at 4 seats is 8 games."),
    Term("match", "matches",
         "Bots at one table playing a number of deals (each in every rotation under duplicate): what is "
         "queued, played in the sandbox, rated, and replayed.",
         ("matches.models.Match",)),
    Term("table", "tables",
         f"The seats of one match, {_MIN_SEATS} to {_MAX_SEATS}. A tournament round splits its entries into "
         "tables, and every table of that round plays the same deals.",
         ("tournaments.tables.Table (as the pairing code returns it)",
          "tournaments_app.models.Table (stored, with its match; TableSeat per seat)")),
    Term("tournament round", "tournament rounds",
         "One pairing of a tournament's entries into tables (a match each) and byes. Not a round of UNO.",
         ("tournaments.tables.PairedRound (as the pairing code returns it)",
          "tournaments_app.models.TournamentRound (stored, with its seed and status)")),
    Term("standing", "standings",
         "An entry's line in a ladder's or a tournament's table: its rank and what ranks it (a ladder's "
         "rating, a tournament's match points and tie-breaks).",
         ("ladders.selectors.LadderStanding (a ladder's line)",
          "tournaments.standings.TournamentStanding (a tournament's line)")),
    Term("pair", "pairs",
         "In a version test: one match of a single deal played twice, with the two versions' seats "
         "swapped."),
)

_BY_WORD = {term.word: term for term in TERMS}


def count(n: int, word: str) -> str:
    """``n`` with the glossary's word in the right number: ``count(1, "deal") == "1 deal"``."""
    entry = _BY_WORD[word]
    return f"{n} {entry.word if n == 1 else entry.plural}"


def markdown() -> str:
    """docs/glossary.md: the glossary as a Markdown page (a test keeps the file equal to this)."""
    lines = [
        "# Glossary",
        "",
        "The words of Uno Arena, each in one sense: the site, the admin, the API's field help and",
        "`arena` use them so. Written by `arena glossary --markdown` from `engine/glossary.py`, the one",
        "place they are defined; the site's guide shows the same list.",
        "",
        "A count of deals is named `deals` (a ladder's, a tournament's and a match's field, the API,",
        "`arena play --deals`); a count of games played is `games` or `games_played`.",
        "",
        "Each word has one meaning; \"In the code\" names the classes that hold it. A class name never",
        "stands for two meanings; one meaning may have several classes (the pairing code's value and",
        "its stored row, or a ladder's and a tournament's kind of it).",
        "",
    ]
    for entry in TERMS:
        lines += [f"**{entry.word}**", f": {entry.meaning}", ""]
        if entry.code:
            lines += ["In the code: " + "; ".join(_code(name) for name in entry.code) + ".", ""]
    return "\n".join(lines)


def _code(name: str) -> str:
    """``"a.B (note)"`` as Markdown: the path as code, the note as text."""
    path, _, note = name.partition(" (")
    return f"`{path}` ({note}" if note else f"`{path}`"


def games_of(deals: int, seats: int, duplicate: bool) -> int:
    """The games of a match of ``deals`` deals at ``seats`` seats: each deal once per rotation
    under duplicate."""
    return deals * (seats if duplicate else 1)


#: the help of a competition's ``deals`` field (ladders, tournaments, matches, the API, the CLI)
DEALS_HELP = "Deals per match; under duplicate each deal is played once per rotation, a game each."
#: the help of a competition's ``duplicate`` field
DUPLICATE_HELP = "Duplicate deals: every deal once per rotation, so every bot plays every seat's cards."
