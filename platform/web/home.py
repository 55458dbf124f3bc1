"""Selectors of the home page: each part a constant number of small queries, whatever the history.

The figures every visitor would recompute (the site's counts, each ladder's entry and rated-match
counts) are cached for ``HOME_CACHE_SECONDS`` and dropped when a match result is stored
(``home_cache_clear``, named for every match kind in ``settings.MATCH_RESULT_HOOKS``). With a
cache shared by the processes (``CACHE_URL``) the drop reaches every web process at once; with the
per-process default a process sees a new result at most ``HOME_CACHE_SECONDS`` late.
"""

from __future__ import annotations

from core.services import cache_delete_on_commit
from django.core.cache import cache
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

#: seconds the home page's counts are kept at most
HOME_CACHE_SECONDS = 60
COUNTS_KEY = "home:counts"
LADDERS_KEY = "home:ladders"
#: active ladders cached for the home page (it shows the first few)
LADDERS_CACHED = 20


def site_counts() -> dict:
    """Bots, active versions and finished matches (validation matches not counted), cached."""
    counts = cache.get(COUNTS_KEY)
    if counts is None:
        from bots.models import Bot, BotVersion
        from matches.models import Match

        counts = {
            "bots": Bot.objects.count(),
            "active_versions": BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).count(),
            "matches": Match.objects.filter(status=Match.Status.DONE).exclude(kind=Match.Kind.VALIDATION).count(),
        }
        cache.set(COUNTS_KEY, counts, HOME_CACHE_SECONDS)
    return counts


def matches_in_play() -> bool:
    """Whether any match is queued or running: the home page's tables are then kept fresh."""
    from matches.models import Match

    return Match.objects.filter(status__in=(Match.Status.QUEUED, Match.Status.RUNNING)).exists()


def home_ladders(limit: int) -> list | None:
    """The first ``limit`` active ladders by name, each with ``entry_count`` (active entries) and
    ``rated_count``, cached; None while the ladders app is not installed. One query."""
    from django.apps import apps

    if not apps.is_installed("ladders"):
        return None
    ladders = cache.get(LADDERS_KEY)
    if ladders is None:
        from ladders.models import Ladder, LadderEntry

        entries = LadderEntry.objects.filter(ladder=OuterRef("pk"), status=LadderEntry.Status.ACTIVE)
        ladders = list(
            Ladder.objects.filter(active=True)
            # rated matches: the count the ladders' result hook stores
            .annotate(entry_count=_grouped_count(entries, "ladder"), rated_count=F("rated_matches"))
            .order_by("name")[:LADDERS_CACHED]
        )
        cache.set(LADDERS_KEY, ladders, HOME_CACHE_SECONDS)
    return ladders[:limit]


def _grouped_count(queryset, group: str):
    """COUNT(*) of ``queryset`` (filtered on its ``group`` = OuterRef) as one scalar subquery."""
    counted = queryset.order_by().values(group).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted[:1], output_field=IntegerField()), Value(0))


def ladder_leaders(ladders, count: int) -> dict:
    """Ladder id -> its first ``count`` active entries by rating (bot loaded, ``rank`` as in the
    ladder's table), in one query.

    The one place the home page reads who leads a ladder: when ratings move elsewhere (a batch
    fit), only this function changes. Entries with equal ratings keep the ladder table's order
    (entered first first)."""
    from django.db.models import F, Window
    from django.db.models.functions import Rank, RowNumber

    from ladders.models import LadderEntry

    ids = [ladder.pk for ladder in ladders]
    if not ids:
        return {}
    rows = (
        LadderEntry.objects.filter(ladder_id__in=ids, status=LadderEntry.Status.ACTIVE)
        .select_related("bot")
        .annotate(
            place=Window(RowNumber(), partition_by=[F("ladder_id")],
                         order_by=[F("rating").desc(), F("entered_at").asc(), F("pk").asc()]),
            # the ladder table's rank: equal ratings share one
            rank=Window(Rank(), partition_by=[F("ladder_id")], order_by=[F("rating").desc()]),
        )
        .filter(place__lte=count)
        .order_by("ladder_id", "place")
    )
    leaders: dict = {pk: [] for pk in ids}
    for entry in rows:
        leaders[entry.ladder_id].append(entry)
    return leaders


def home_tournaments(limit: int) -> list | None:
    """Running, paused and open tournaments, newest first, with ``active_count``, ``matches_done``
    and ``matches_paired`` as one scalar subquery each; None without the tournaments app."""
    from django.apps import apps

    if not apps.is_installed("tournaments_app"):
        return None
    from tournaments_app.models import Entry, Table, Tournament

    active = Entry.objects.filter(tournament=OuterRef("pk"), status=Entry.Status.ACTIVE)
    paired = Table.objects.filter(round__tournament=OuterRef("pk"), bye=False)
    return list(
        Tournament.objects.filter(status__in=["running", "paused", "registration"])
        .annotate(
            active_count=_grouped_count(active, "tournament"),
            matches_paired=_grouped_count(paired, "round__tournament"),
            matches_done=_grouped_count(paired.filter(done=True), "round__tournament"),
        )
        .order_by("-created_at", "-pk")[:limit]
    )


def home_cache_clear(match=None) -> None:
    """Drop the home page's cached counts once the current transaction commits (a result hook; with
    the other hooks' keys, one ``delete_many``)."""
    cache_delete_on_commit([COUNTS_KEY, LADDERS_KEY])
