"""Selectors of the web app: what the live pages may show (functions that read)."""

from __future__ import annotations

from bots.models import BotVersion
from matches.models import Match
from matches.selectors import queue_summary


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
