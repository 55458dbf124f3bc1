"""Selectors of the matches app (functions that read)."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

from core.models import WorkerHeartbeat
from django.db.models import Count, Min, Prefetch, QuerySet
from django.utils import timezone

from .models import Match, MatchSeat

#: a worker whose last heartbeat is older than this is not counted as alive
WORKER_ALIVE_WINDOW = timedelta(minutes=3)


def match_list(
    *, bot=None, version=None, kind: str | None = None, status: str | None = None, limit: int | None = 50
) -> QuerySet[Match]:
    """Recent matches with their seats (without replays or logs), newest first; ``limit=None``: all
    (for a paginated list)."""
    matches = Match.objects.defer("replay_gz", "decision_ms_gz").prefetch_related(
        Prefetch(
            "seats",
            queryset=MatchSeat.objects.defer("log", "log_marks").select_related("bot_version__bot__owner").order_by("seat"),
        )
    )
    if bot is not None:
        matches = matches.filter(seats__bot_version__bot=bot).distinct()
    if version is not None:
        matches = matches.filter(seats__bot_version=version).distinct()
    if kind is not None:
        matches = matches.filter(kind=kind)
    if status is not None:
        matches = matches.filter(status=status)
    matches = matches.order_by("-queued_at", "-pk")
    return matches if limit is None else matches[:limit]


def match_detail(match_id: int) -> Match:
    return (
        Match.objects.defer("replay_gz", "decision_ms_gz")
        .prefetch_related(
            Prefetch("seats", queryset=MatchSeat.objects.select_related("bot_version__bot__owner").order_by("seat"))
        )
        .get(pk=match_id)
    )


def can_view_seat_log(user, seat: MatchSeat) -> bool:
    """A seat's log is for its bot's owner and for staff; reference bots print nothing of interest."""
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    return seat.bot_version_id is not None and seat.bot_version.bot.owner_id == user.pk


def match_replay_json(match: Match) -> bytes | None:
    """The replay document as JSON bytes, or None when the match has none."""
    data = Match.objects.filter(pk=match.pk).values_list("replay_gz", flat=True).first()
    if not data:
        return None
    return gzip.decompress(bytes(data))


def match_decision_ms(match: Match) -> list:
    """Per game, the decision time in ms of each action record of the replay (None: fallback
    move or untimed seat); [] when the match recorded none."""
    data = Match.objects.filter(pk=match.pk).values_list("decision_ms_gz", flat=True).first()
    if not data:
        return []
    return json.loads(gzip.decompress(bytes(data)))


def bot_decision_records(replay: dict, bot: int) -> list[tuple[int, int]]:
    """(game, action index) of every decision bot ``bot`` took itself, in the order it was asked:
    its own records up to its forfeit; the fallback's moves after it are not its decisions.

    >>> bot_decision_records({"games": [{"seats": [1, 0], "actions": [{"seat": 0}, {"seat": 1}]}]}, 0)
    [(0, 1)]
    """
    found = []
    forfeited = False
    for g, game in enumerate(replay.get("games", [])):
        seats = game["seats"]
        for i, record in enumerate(game["actions"]):
            if seats[record["seat"]] != bot or forfeited:
                continue
            found.append((g, i))
            fault = record.get("fault")
            if fault and fault.get("forfeit"):
                forfeited = True
    return found


def seat_decision_logs(seat: MatchSeat, replay: dict) -> list[list]:
    """``[game, action index, text]`` for each decision of ``seat``'s bot that printed something.

    Callers check ``can_view_seat_log`` first. Empty when the marks do not fit the
    replay (a match stored before marks existed): better no lines than lines
    beside the wrong decision.
    """
    marks = seat.log_marks
    if not isinstance(marks, dict) or not marks:
        return []
    records = bot_decision_records(replay, seat.seat)
    printed = marks.get("printed", [])
    if marks.get("decisions") != len(records) or len(printed) > len(records):
        return []
    log = seat.log
    found = []
    start = marks["start"]
    for (g, i), size in zip(records, printed, strict=False):  # decisions past `printed` printed nothing
        if size > 0:
            found.append([g, i, log[start:start + size]])
        start += size
    return found


def queue_summary(*, now=None) -> dict:
    """Counts of queued and running matches by queue kind, the oldest waiting, workers alive."""
    now = now or timezone.now()
    counts = {
        (row["kind"], row["status"]): row["n"]
        for row in Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        .values("kind", "status")
        .annotate(n=Count("pk"))
    }
    kinds = [
        {
            "kind": kind,
            "queued": counts.get((kind, Match.Status.QUEUED), 0),
            "running": counts.get((kind, Match.Status.RUNNING), 0),
        }
        for kind in Match.Kind.values
    ]
    oldest = (
        Match.objects.filter(status=Match.Status.QUEUED)
        .defer("replay_gz", "decision_ms_gz")
        .order_by("queued_at", "pk")
        .first()
    )
    stuck = Match.objects.filter(status=Match.Status.RUNNING, deadline__lt=now).count()
    workers = list(WorkerHeartbeat.objects.filter(last_seen__gte=now - WORKER_ALIVE_WINDOW))
    return {
        "kinds": kinds,
        "queued": sum(k["queued"] for k in kinds),
        "running": sum(k["running"] for k in kinds),
        "oldest": oldest,
        "oldest_wait": (now - oldest.queued_at) if oldest else None,
        "stuck": stuck,
        "workers": workers,
        "workers_seen": WorkerHeartbeat.objects.aggregate(first=Min("last_seen"))["first"] is not None,
    }
