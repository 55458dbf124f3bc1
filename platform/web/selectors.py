"""Selectors of the web app: what the replay viewer and the live pages may show (functions that read)."""

from __future__ import annotations

import json

from django.urls import reverse

from bots.models import BotVersion
from engine.cards import card_table
from engine.replay import SUPPORTED_VERSIONS
from matches.models import Match
from matches.selectors import (
    match_decision_ms,
    match_replay_json,
    queue_summary,
    seat_decision_logs,
)


def replay_viewer_data(match: Match, readable_logs: frozenset[int] = frozenset()) -> dict:
    """What the viewer needs beside the replay JSON: who each bot is, timings (per bot and per
    decision), and the logs of the seats in ``readable_logs``, whole and split by decision (the
    caller decides and audits those reads: ``matches.services.seat_log_read``)."""
    bots = []
    logs = {}
    readable = []
    for seat in match.seats.all():  # seat order of the first game = the replay's bot index
        if seat.bot_version_id:
            version = seat.bot_version
            bots.append(
                {
                    "label": version.label,
                    "url": version.get_absolute_url(),
                    "owner": version.bot.owner.username,
                    "reference": False,
                }
            )
        elif seat.player_id:  # a person at a human game
            bots.append({"label": seat.player.username, "url": "", "owner": seat.player.username, "reference": False,
                         "human": True})
        else:
            bots.append({"label": seat.reference_bot, "url": "", "owner": "", "reference": True})
        # reference bots are our own code: their (empty) logs are nobody's business
        if match.is_finished and seat.bot_version_id and seat.seat in readable_logs:
            logs[str(seat.seat)] = seat.log
            readable.append(seat)
    decision_logs = {}
    if any(seat.log_marks for seat in readable):
        data = match_replay_json(match)
        replay = json.loads(data) if data else {}
        for seat in readable:
            decision_logs[str(seat.seat)] = seat_decision_logs(seat, replay)
    return {
        "match": match.pk,
        "kind": match.kind,
        "replay_url": reverse("matches:replay", args=[match.pk]),
        # the replay versions the viewer reads: the same as engine.replay
        "replay_versions": list(SUPPORTED_VERSIONS),
        "match_url": match.get_absolute_url(),
        "bots": bots,
        "timings": match.timings or {},
        "logs": logs,
        # per game, parallel to replay["games"][g]["actions"]: ms or null
        "decision_ms": match_decision_ms(match) if match.status == Match.Status.DONE else [],
        # per readable bot index: [game, action index, text printed during that decision]
        "decision_logs": decision_logs,
        **card_table(),
    }


def live_viewer_data(match: Match) -> dict:
    """The viewer's metadata for a match being played: it follows the match's live events
    (``matches.live``) instead of loading a replay."""
    return {**replay_viewer_data(match), "live_url": reverse("web:live_events", args=[match.pk]),
            "duplicate": match.duplicate}


def queue_counts() -> dict:
    """The queue page's numbers as plain JSON values."""
    summary = queue_summary()
    oldest = summary["oldest"]
    return {
        "queued": summary["queued"],
        "running": summary["running"],
        "workers": len(summary["workers"]),
        "stuck": summary["stuck"],
        "kinds": summary["kinds"],
        "oldest": {"id": oldest.pk, "kind": oldest.kind, "url": oldest.get_absolute_url()} if oldest else None,
        "oldest_wait_seconds": round(summary["oldest_wait"].total_seconds()) if summary["oldest_wait"] else None,
    }


def version_status(version: BotVersion) -> dict:
    """A bot version's validation state, as the bot and version pages show it."""
    return {
        "bot": version.bot_id,
        "number": version.number,
        "status": version.status,
        "final": version.status != BotVersion.Status.VALIDATING,
        "rejection_reason": version.rejection_reason if version.status == BotVersion.Status.REJECTED else "",
        "validated_at": version.validated_at.isoformat() if version.validated_at else None,
    }


def match_status(match: Match) -> dict:
    """A match's state as its pages show it while people wait for it."""
    return {
        "match": match.pk,
        "status": match.status,
        "final": match.is_finished,
        "started": match.status != Match.Status.QUEUED,  # running (its page follows it live) or ended
        "has_replay": match.status == Match.Status.DONE,
    }
