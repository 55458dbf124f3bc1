"""Selectors of the play app: what the play form offers and what the game page is sent."""

from __future__ import annotations

import time
from typing import Any

from django.db.models import QuerySet
from django.urls import reverse

from bots.models import Bot, BotVersion
from engine import cards
from ladders.models import Ladder
from ladders.selectors import public_bots
from matches import human, live
from matches.models import Match

from .models import HumanGame

#: public bots the form lists by name (beside the bot the visitor came from and their own)
LISTED_PUBLIC_BOTS = 40


def play_ladders() -> QuerySet[Ladder]:
    """The ladders whose rules a human game may borrow: the active ones, by name."""
    return Ladder.objects.filter(active=True).order_by("name")


def opponent_options(user, chosen: Bot | None = None, version: BotVersion | None = None) -> list[dict]:
    """The bots a seat of the form may hold, as ``{"value", "label", "group"}``: the bot the
    visitor came from (or the version), their own bots with an active version, the first public bots by name,
    and the reference bots. Bounded: at most LISTED_PUBLIC_BOTS public bots, one query each."""
    from matches.sandboxing import reference_bot_names

    options: list[dict] = []
    seen: set[int] = set()

    def add(bot: Bot, group: str) -> None:
        if bot.pk not in seen:
            seen.add(bot.pk)
            options.append({"value": f"bot:{bot.pk}", "label": f"{bot.name} by {bot.owner.username}", "group": group})

    if version is not None:
        options.append({"value": f"ver:{version.pk}", "label": f"{version.label} by {version.bot.owner.username}",
                        "group": "Chosen"})
    if chosen is not None:
        add(chosen, "Chosen")
    if user.is_authenticated:
        active = BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).values("bot_id")
        for bot in Bot.objects.select_related("owner").filter(owner=user, pk__in=active).order_by("name")[:20]:
            add(bot, "Your bots")
    for bot in public_bots()[:LISTED_PUBLIC_BOTS]:
        add(bot, "Public bots")
    for name in reference_bot_names():
        options.append({"value": f"ref:{name}", "label": f"{name} (reference bot)", "group": "Reference bots"})
    return options


def games_of(user, *, limit: int = 10) -> QuerySet[HumanGame]:
    """``user``'s newest human games with their matches."""
    return (
        HumanGame.objects.filter(match__seats__player=user)
        .select_related("match", "ladder")
        .defer("match__replay_gz", "match__decision_ms_gz", "match__timings")
        .order_by("-created_at", "-pk")[:limit]
    )


def game_of(match_id: int) -> HumanGame:
    """The human game of match ``match_id`` with its seats (HumanGame.DoesNotExist when none)."""
    return (
        HumanGame.objects.select_related("match", "ladder")
        .defer("match__replay_gz", "match__decision_ms_gz")
        .prefetch_related("match__seats__bot_version__bot__owner", "match__seats__player")
        .get(match_id=match_id)
    )


def player_seat(game: HumanGame, user) -> int | None:
    """The seat of ``user`` at ``game`` (None: not theirs)."""
    for seat in game.match.seats.all():
        if seat.player_id is not None and seat.player_id == user.pk:
            return seat.seat
    return None


def seat_names(game: HumanGame) -> list[str]:
    return [seat.player.username if seat.player_id else seat.label for seat in game.match.seats.all()]


def action_label(action: dict, names: list[str]) -> str:
    """A legal action in words, for its button: "Play green 6", "Play wild, naming red", "Draw"."""
    kind = action.get("type")
    if kind == "play":
        name = cards.KIND_NAMES[cards.kind_of(action["card"])]
        if action.get("color"):
            name += f", naming {cards.COLOR_NAMES[action['color']]}"
        return f"Play {name}" + (" and call UNO" if action.get("uno") else "")
    if kind == "color":
        return f"Name {cards.COLOR_NAMES[action['color']]}"
    if kind == "swap":
        target = action.get("target")
        who = names[target] if isinstance(target, int) and 0 <= target < len(names) else f"seat {target}"
        return f"Swap hands with {who}"
    return {"draw": "Draw a card", "pass": "Pass (keep the card)", "accept": "Take the penalty",
            "challenge": "Challenge the Wild Draw Four"}.get(str(kind), str(kind))


def game_state(game: HumanGame, user, *, now: float | None = None) -> dict[str, Any]:
    """What the game page polls: the match's status, and for the person at the table the decision
    asked now (their hand, the legal actions in words, the seconds left on their clock) or, once
    the game ended, each seat's result. Nothing of another seat's hand."""
    match = game.match
    seat = player_seat(game, user)
    names = seat_names(game)
    state: dict[str, Any] = {
        "status": match.status, "seat": seat, "names": names, "clock": game.clock, "question": None,
        "match_url": match.get_absolute_url(),
    }
    if seat is None:
        return state
    if match.status == Match.Status.RUNNING:
        question = human.current_question(live.channel(), live.human_prefix(match))
        if question is not None and question.get("seat") == seat:
            observation = question["observation"]
            left = float(question["deadline"]) - (time.time() if now is None else now)
            state["question"] = {
                "seq": question["seq"],
                "decision": observation.get("decision"),
                "hand": observation.get("hand", []),
                "top_card": observation.get("top_card"),
                "color": observation.get("color"),
                "pending_draw": observation.get("pending_draw", 0),
                "hand_sizes": observation.get("hand_sizes", []),
                "seconds_left": max(0.0, round(left, 1)),
                "clock": question.get("clock", game.clock),
                "actions": [
                    {"index": i, "label": action_label(a, names), "type": a.get("type"), "card": a.get("card"),
                     "color": a.get("color")}
                    for i, a in enumerate(observation.get("legal_actions", []))
                ],
            }
    elif match.is_finished:
        state["replay_url"] = reverse("matches:replay_viewer", args=[match.pk]) if match.status == Match.Status.DONE else None
        state["error"] = match.error if match.status == Match.Status.FAILED else ""
        state["results"] = [
            {"seat": s.seat, "name": names[s.seat], "rank": s.rank, "score": s.score, "forfeited": s.forfeited,
             "fault": s.fault_reason}
            for s in match.seats.all()
        ]
    return state
