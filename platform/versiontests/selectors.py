"""Selectors of version tests (functions that read): who sees a test, its lists, its live status."""

from __future__ import annotations

from django.db.models import QuerySet

from bots.models import BotVersion
from bots.selectors import bot_playing_versions
from matches.models import Match

from . import charts
from .models import PENTANOMIAL_LABELS, VersionTest, VersionTestPair

VERDICTS = {
    VersionTest.Status.H1: "H1 accepted: NEW is better",
    VersionTest.Status.H0: "H0 accepted: NEW is not better by elo1",
    VersionTest.Status.INCONCLUSIVE: "inconclusive: no verdict within the pairs allowed",
    VersionTest.Status.CANCELLED: "cancelled",
    VersionTest.Status.FAILED: "failed",
    VersionTest.Status.RUNNING: "no bound reached yet",
}


def can_view(user, test: VersionTest) -> bool:
    """A test is its owner's business (it shows how an unreleased version plays) and staff's (core.roles)."""
    from core.roles import is_organizer

    return bool(user is not None and user.is_authenticated and (user.pk == test.owner_id or is_organizer(user)))


def version_test_list(user) -> QuerySet[VersionTest]:
    return (
        VersionTest.objects.filter(owner=user)
        .select_related("new_version__bot", "old_version__bot__owner")
        .order_by("-created_at", "-pk")
    )


def version_test_get(pk: int) -> VersionTest:
    return VersionTest.objects.select_related("owner", "new_version__bot__owner", "old_version__bot__owner").get(pk=pk)


def version_test_matches(test: VersionTest) -> QuerySet[Match]:
    """The matches of the test's pairs (each attempt), newest first, as the match tables show them."""
    return (
        Match.objects.filter(version_test_pair__test=test)
        .defer("replay_gz", "decision_ms_gz", "timings")
        .prefetch_related("seats__bot_version__bot")
        .order_by("-pk")
    )


def llr_history(test: VersionTest) -> list[float]:
    """The test's LLR after each counted pair, in the order they were counted."""
    return list(
        VersionTestPair.objects.filter(test=test, state=VersionTestPair.State.COUNTED)
        .order_by("counted_number")
        .values_list("llr_after", flat=True)
    )


def version_test_status(test: VersionTest) -> dict:
    """Everything the page shows and its script updates: counts, LLR, bounds, verdict, chart geometry."""
    lower, upper = test.bounds
    playing = VersionTestPair.objects.filter(test=test, state=VersionTestPair.State.PLAYING).count()
    pairs = test.pairs
    score = (
        sum(count * points for count, points in zip(test.pentanomial, (0, 0.5, 1, 1.5, 2), strict=True)) / (2 * pairs)
        if pairs else None
    )
    return {
        "id": test.pk,
        "status": test.status,
        "final": test.is_finished,
        "verdict": VERDICTS[test.status],
        "reason": test.reason,
        "pairs": pairs,
        "games": 2 * pairs,
        "max_pairs": test.max_pairs,
        "playing": playing,
        "pentanomial": list(test.pentanomial),
        "pentanomial_labels": list(PENTANOMIAL_LABELS),
        "score": None if score is None else round(100 * score, 1),
        "llr": round(test.llr, 3),
        "lower": round(lower, 3),
        "upper": round(upper, 3),
        "elo0": test.elo0,
        "elo1": test.elo1,
        "alpha": test.alpha,
        "beta": test.beta,
        "elo": None if test.elo is None else round(test.elo, 1),
        "elo_low": None if test.elo_low is None else round(test.elo_low, 1),
        "elo_high": None if test.elo_high is None else round(test.elo_high, 1),
        "chart": charts.llr_chart(llr_history(test), lower, upper),
        "gauge": charts.llr_gauge(test.llr, lower, upper),
    }


def new_version_choices(user) -> list[BotVersion]:
    """The versions ``user`` may test: their own active ones, newest bot first by name."""
    return list(
        BotVersion.objects.filter(bot__owner=user, status=BotVersion.Status.ACTIVE)
        .select_related("bot__owner")
        .defer("source")
        .order_by("bot__name", "-number")
    )


def public_old_versions(user) -> list[BotVersion]:
    """The versions other owners' public bots play now: what ``user`` may test against besides their own."""
    from ladders.selectors import public_bots

    bots = list(public_bots().exclude(owner=user))
    playing = bot_playing_versions(bots)
    by_bot = {bot.pk: bot for bot in bots}
    versions = []
    for bot_id, version in playing.items():
        version.bot = by_bot[bot_id]
        versions.append(version)
    return sorted(versions, key=lambda v: (v.bot.name, v.bot.owner.username))
