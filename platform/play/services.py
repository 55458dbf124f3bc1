"""Services of the play app: start a human game, and hand the person's action to its seat.

A human game is a normal match (kind ``human``, one deal, unranked) whose seat 0 is the person
(``MatchSeat.player``) and whose other seats are bots in the real sandbox, played by a worker of
the ``play`` queue like any match (``matches.services.match_play``). The person's seat
(``matches.human.HumanSeat``) asks through the human channel (``matches.live.channel``);
the page reads the question and answers with ``human_game_act``.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.converters import id_or_none
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from bots.models import Bot, BotVersion
from bots.selectors import bot_playing_version
from engine.rules import BOUNDS, Rules, RulesError
from ladders.models import Ladder
from ladders.selectors import bot_is_public
from matches import human, live
from matches.models import Match
from matches.services import MatchError, match_create, match_enqueue

from .models import HumanGame

#: seats of a human game (a bound of its own within the game's BOUNDS["players"]): the person and one
#: to three bots
HUMAN_MIN_SEATS, HUMAN_MAX_SEATS = BOUNDS["players"][0], 4
#: the statuses in which a human game holds a table
IN_PLAY = (Match.Status.QUEUED, Match.Status.RUNNING)


class PlayRefusal(ValueError):
    """A human game cannot start or take an action as asked; the message says why."""


class NotYourGame(PlayRefusal):
    """An action for a game at which the user does not sit."""


def _playable(bot: Bot, user) -> None:
    if bot.owner_id != user.pk and not bot_is_public(bot):
        raise PlayRefusal(
            f"bot {bot.pk} ({bot}) is not public: you can play your own bots, bots with public source "
            "and bots on a ladder"
        )


def opponent_choice(text: str, user) -> Bot | BotVersion | str:
    """A seat chosen on the form: ``bot:<id>`` (a public bot, or one of ``user``'s own: the version
    it plays now), ``ver:<id>`` (an active version of such a bot) or ``ref:<name>`` (a reference bot)."""
    kind, _, value = (text or "").partition(":")
    number = id_or_none(value)
    if kind == "ver" and number is not None:
        version = BotVersion.objects.defer("source").select_related("bot__owner").filter(pk=number).first()
        if version is None:
            raise PlayRefusal(f"there is no bot version {value}")
        _playable(version.bot, user)
        if version.status != BotVersion.Status.ACTIVE:
            raise PlayRefusal(f"{version.label} is {version.status}, not active: it cannot play")
        return version
    if kind == "ref":
        from matches.sandboxing import reference_bot_names

        if value not in reference_bot_names():
            raise PlayRefusal(f"unknown reference bot {value!r} (known: {', '.join(reference_bot_names())})")
        return value
    if kind == "bot" and number is not None:
        bot = Bot.objects.select_related("owner").filter(pk=number).first()
        if bot is None:
            raise PlayRefusal(f"there is no bot {value}")
        _playable(bot, user)
        return bot
    raise PlayRefusal(f"choose each seat's bot from the list (got {text[:40]!r})")


def human_game_start(*, user, ladder: Ladder, opponents: Sequence[Bot | BotVersion | str], clock: float = human.CLOCK_DEFAULT,
                     address: str = "") -> HumanGame:
    """Start a human game: ``user`` at seat 0 against ``opponents`` (bots, each plays its playing
    version; a version as it is; reference bot names) under ``ladder``'s rules, with ``clock`` seconds a decision.

    Refused (PlayRefusal, saying why) for an inactive ladder, a seat count out of 2-4, a bot with
    no active version, a clock out of range, while the user (or their address) already has a game
    queued or running, or when HUMAN_GAMES_AT_ONCE games are in play on the site.
    """
    if not ladder.active:
        raise PlayRefusal(f"the ladder {ladder.name!r} is not active; play under an active ladder's rules")
    seats = 1 + len(opponents)
    if not HUMAN_MIN_SEATS <= seats <= HUMAN_MAX_SEATS:
        raise PlayRefusal(f"a human game has {HUMAN_MIN_SEATS} to {HUMAN_MAX_SEATS} seats, you and 1 to 3 bots (asked for {seats})")
    if isinstance(clock, bool) or not isinstance(clock, int | float) or not human.CLOCK_MIN <= clock <= human.CLOCK_MAX:
        raise PlayRefusal(f"the clock is {human.CLOCK_MIN} to {human.CLOCK_MAX} seconds a decision (got {clock!r})")
    players: list = [user]
    for opponent in opponents:
        if isinstance(opponent, str | BotVersion):
            if isinstance(opponent, BotVersion) and opponent.status != BotVersion.Status.ACTIVE:
                raise PlayRefusal(f"{opponent.label} is {opponent.status}, not active: it cannot play")
            players.append(opponent)
            continue
        version = bot_playing_version(opponent)
        if version is None:
            raise PlayRefusal(f"bot {opponent} has no active version to play")
        players.append(version)
    try:
        rules = Rules.from_dict({**ladder.rules, "players": seats})
    except (RulesError, TypeError, ValueError) as exc:
        raise PlayRefusal(f"the rules of ladder {ladder.name!r} do not fit a {seats}-seat game: {exc}") from None
    with transaction.atomic():
        # the user's row lock and a lock on the address count concurrent starts one after the other
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if connection.vendor == "postgresql":  # SQLite (the embedded default) serialises writers already
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext('play-tables'))")
        in_play = HumanGame.objects.filter(match__status__in=IN_PLAY)
        mine = in_play.filter(match__seats__player=user).values_list("match_id", flat=True).first()
        if mine is not None:
            raise PlayRefusal(f"you are already playing game {mine}: finish it (or let its clock run out) first")
        if address and in_play.filter(address=address).exists():
            raise PlayRefusal("a game started from your address is still in play: one game at a time per address")
        tables = settings.HUMAN_GAMES_AT_ONCE
        if in_play.count() >= tables:
            raise PlayRefusal(f"all {tables} tables for human games are taken; try again in a few minutes")
        try:
            match = match_create(kind=str(Match.Kind.HUMAN), rules=rules, seats=players, deals=1, duplicate=False,
                                 enqueue=False)
        except MatchError as exc:
            raise PlayRefusal(str(exc)) from None
        game = HumanGame.objects.create(match=match, ladder=ladder, clock=float(clock), address=address)
        match_enqueue(match)  # after the game's row: the task's time limit counts the person's clock
    return game


def human_game_act(game: HumanGame, user, *, seq, index) -> dict:
    """Answer decision ``seq`` of ``game`` with the ``index``-th of its legal actions; only the
    person at the table may. Returns the action taken; PlayRefusal when it is not theirs, not
    asked now, or not a listed action."""
    from .selectors import player_seat

    match = game.match
    if player_seat(game, user) is None:
        raise NotYourGame("this is not your game")
    if match.status != Match.Status.RUNNING:
        raise PlayRefusal(f"the game is {match.status}: no decision is waiting")
    client, prefix = live.channel(), live.human_prefix(match)
    question = human.current_question(client, prefix)
    legal = (question or {}).get("observation", {}).get("legal_actions", [])
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(legal):
        raise PlayRefusal(f"choose one of the {len(legal)} actions offered (got {index!r})")
    try:
        return human.submit_answer(client, prefix, seq, legal[index])
    except human.HumanActionError as exc:
        raise PlayRefusal(str(exc)) from None
