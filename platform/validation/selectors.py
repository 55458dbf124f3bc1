"""Selectors of the validation app (functions that read)."""

from __future__ import annotations

from bots.models import BotVersion
from matches.models import Match


def can_revalidate(version: BotVersion) -> bool:
    """True when the version was rejected because the platform failed its validation match."""
    if version.status != BotVersion.Status.REJECTED:
        return False
    failed = next((run for run in version.validation_runs or [] if run.get("status") == "failed"), None)
    if failed is not None:  # the configuration that rejected it: did the platform fail that match?
        return Match.objects.filter(pk=failed["match"], status=Match.Status.FAILED).exists()
    if version.validation_match_id is None:
        return False
    # the version's newest validation match, stored on it: one row whatever its history
    last = Match.objects.filter(pk=version.validation_match_id).values_list("status", flat=True).first()
    return last == Match.Status.FAILED
