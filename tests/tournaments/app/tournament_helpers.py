"""Builders for the tournament app's tests: bots with active versions, tournaments, finished matches."""

from __future__ import annotations

from testsupport import make_user, played_match  # noqa: F401  (make_user re-exported for the tests here)

from bots import services as bot_services
from bots.models import BotVersion
from matches import services as match_services
from matches.models import Match
from tournaments_app import services
from tournaments_app.models import Table, Tournament

BOT_SOURCE = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"




def active_bot(owner, name: str, *, active: bool = True):
    """A bot with one version; active without a validation match (the tests here are about tournaments)."""
    bot = bot_services.bot_create(owner=owner, name=name)
    version = bot_services.bot_version_create(
        bot=bot, filename=f"{name}.py", data=BOT_SOURCE + f"# {name}\n".encode(), validate=False
    )
    if active:
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
    return bot


def field(n: int, owner=None) -> list:
    owner = owner or make_user("owner")
    return [active_bot(owner, f"bot{i}") for i in range(n)]


def tournament_with(bots, *, start: bool = True, **options) -> Tournament:
    options.setdefault("rules", ["players=2", "rounds=1"])
    options.setdefault("name", "Test Cup")
    options.setdefault("seed", 5)
    # field() gives every bot one owner; the tests of the owner rule pass allow_same_owner=False
    options.setdefault("allow_same_owner", True)
    tournament = services.tournament_create(**options)
    for bot in bots:
        services.entry_add(tournament, bot)
    if start:
        tournament = services.tournament_start(tournament)
    return tournament


def finish(match: Match, ranks, scores=None) -> None:
    """Store a result for ``match`` through the worker's own path (start, record, hooks)."""
    token = match_services.match_start(match.pk)
    assert token is not None, f"match {match.pk} could not start ({match.status})"
    scores = scores or [100 * (len(ranks) - r) for r in ranks]
    outcome = played_match(list(ranks), scores=list(scores), replay={"events": []})
    assert match_services.match_record_result(match.pk, token, outcome)


def open_matches(tournament: Tournament) -> list[Match]:
    """The current round's unfinished matches, in table order."""
    pairings = Table.objects.filter(
        round__tournament=tournament, round__number=tournament.current_round, bye=False, done=False
    ).select_related("match").order_by("number")
    return [p.match for p in pairings]


def play_round(tournament: Tournament, *, first_seat_wins: bool = True) -> None:
    """Finish every open match of the current round; seat 0 wins unless told otherwise."""
    for match in open_matches(tournament):
        k = match.seats.count()
        ranks = list(range(1, k + 1)) if first_seat_wins else list(range(k, 0, -1))
        finish(match, ranks)


def refreshed(tournament: Tournament) -> Tournament:
    return Tournament.objects.get(pk=tournament.pk)

