"""Selectors of the matches app (functions that read)."""

from __future__ import annotations

import gzip
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
    matches = Match.objects.defer("replay_gz").prefetch_related(
        Prefetch(
            "seats",
            queryset=MatchSeat.objects.defer("log").select_related("bot_version__bot__owner").order_by("seat"),
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
        Match.objects.defer("replay_gz")
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
        .defer("replay_gz")
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
