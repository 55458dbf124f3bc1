"""Selectors of the bots app (functions that read)."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from .models import Bot, BotVersion

#: what a list that reaches versions through a relation never shows of them: the upload's bytes
#: (up to megabytes a version), the validation log and its plan
VERSION_LIST_DEFERRED = ("source", "validation_log", "validation_runs")


def version_deferred(relation: str) -> list[str]:
    """VERSION_LIST_DEFERRED through ``relation`` (``"version"``, ``"bot_version"``), for ``defer()``."""
    return [f"{relation}__{name}" for name in VERSION_LIST_DEFERRED]


def _version_count(**filters):
    """The bot's versions (matching ``filters``) counted by one scalar subquery: no join, no GROUP BY
    over the bot list."""
    counted = (
        BotVersion.objects.filter(bot=OuterRef("pk"), **filters).order_by().values("bot").annotate(n=Count("pk")).values("n")
    )
    return Coalesce(Subquery(counted[:1], output_field=IntegerField()), Value(0))


def bot_list(*, owner=None, search: str = "") -> QuerySet[Bot]:
    """Bots with their version counts, optionally of one owner, and those whose name or owner's
    username contains ``search`` (any case)."""
    bots = Bot.objects.select_related("owner").annotate(
        version_count=_version_count(),
        active_count=_version_count(status=BotVersion.Status.ACTIVE),
    )
    if owner is not None:
        bots = bots.filter(owner=owner)
    search = (search or "").strip()
    if search:
        bots = bots.filter(Q(name__icontains=search) | Q(owner__username__icontains=search))
    return bots.order_by("name", "pk")


def bot_playing_version(bot: Bot) -> BotVersion | None:
    """The version that plays for the bot: the owner's pick while active, else the newest active."""
    return bot_playing_versions([bot], with_source=True).get(bot.pk)


def bot_playing_versions(bots, *, with_source: bool = False, bot_ids=None, only=None) -> dict[int, BotVersion]:
    """``bot_playing_version`` of many bots in one query: bot id -> the version that plays.

    ``bot_ids``, a queryset of the same bots' ids, filters in SQL by a subquery instead of an
    IN list of every id, and ``only``, the fields the caller reads, loads no others (what a
    1,000-entry ladder's matchmaking passes)."""
    bots = list(bots)
    if not bots:
        return {}
    active = BotVersion.objects.filter(
        bot_id__in=bot_ids if bot_ids is not None else [b.pk for b in bots], status=BotVersion.Status.ACTIVE
    )
    if only is not None:
        active = active.only("bot_id", "number", "status", *only)
    elif not with_source:
        active = active.defer("source")
    active_of: dict[int, dict[int, BotVersion]] = {}  # bot id -> {pk: version}
    for version in active:
        active_of.setdefault(version.bot_id, {})[version.pk] = version
    chosen = {}
    for bot in bots:
        versions = active_of.get(bot.pk, {})
        pk = _playing_choice(bot, [(v.pk, v.number) for v in versions.values()])
        if pk is not None:
            chosen[bot.pk] = versions[pk]
    return chosen


def _playing_choice(bot: Bot, active: list[tuple[int, int]]) -> int | None:
    """The pk of the version that plays among the bot's active ``(pk, number)``: the owner's pick
    while active, else the newest active; None when none is active.

    >>> _playing_choice(Bot(pinned_version_id=7), [(7, 1), (9, 2)]), _playing_choice(Bot(), [(7, 1), (9, 2)])
    (7, 9)
    """
    if any(pk == bot.pinned_version_id for pk, _ in active):
        return bot.pinned_version_id
    return max(active, key=lambda row: row[1])[0] if active else None


def playing_among(bot: Bot, versions: list[BotVersion]) -> BotVersion | None:
    """``bot_playing_version`` from the bot's versions already loaded (the bot page's list): no query."""
    pk = _playing_choice(bot, [(v.pk, v.number) for v in versions if v.status == BotVersion.Status.ACTIVE])
    return next((v for v in versions if v.pk == pk), None)


def bot_versions(bot: Bot) -> QuerySet[BotVersion]:
    """The bot's versions, newest first, without their bytes."""
    return bot.versions.defer("source").order_by("-number")


def user_is_owner(user, bot: Bot) -> bool:
    """Only the owner uploads into, edits, renames, pins or changes the visibility of a bot."""
    return bool(user is not None and user.is_authenticated and user.pk == bot.owner_id)


def user_is_owner_or_staff(user, bot: Bot) -> bool:
    """Owner or any staff user. Kept for the ladder pages; bots, versions and the API use
    ``user_is_owner`` to act on a bot and ``private_read_reason`` to read its private parts."""
    return bool(user.is_authenticated and (user.is_staff or user.pk == bot.owner_id))


#: why a private part of a bot may be read: the owner's own reads are never audited
OWNER = "owner"
#: matches of these kinds are events an organizer runs and judges
EVENT_MATCH_KINDS = ("ladder", "tournament")


def bot_plays_in_events(bot: Bot) -> bool:
    """True when a version of the bot has had a seat in a ladder or tournament match (any status):
    the bot is an entrant that organizers may have to judge. Reads ``Bot.plays_in_events``, which
    the matches app sets when it seats the bot in such a match (no query)."""
    return bot.plays_in_events


def private_read_reason(user, bot: Bot, *, match_kind: str | None = None) -> str | None:
    """Why ``user`` may read the private parts of ``bot`` (its source when not public, its
    validation logs, and, with ``match_kind``, its seat log in a match of that kind), or None.

    - the owner: ``OWNER``, never audited;
    - a superuser: everything, audited;
    - an organizer (staff): the source and validation logs of a bot that plays in events (a seat
      in a ladder or tournament match), and seat logs of ladder and tournament matches only (not
      challenges, not validation matches), audited;
    - anyone else: nothing.
    """
    from core.roles import is_organizer, is_superuser

    if user is None or not user.is_authenticated:
        return None
    if user.pk == bot.owner_id:
        return OWNER
    if is_superuser(user):
        return "superuser"
    if not is_organizer(user):
        return None
    if match_kind is not None:
        return f"organizer judging a {match_kind} match" if match_kind in EVENT_MATCH_KINDS else None
    if bot_plays_in_events(bot):
        return "organizer judging an entrant (the bot plays in ladder or tournament matches)"
    return None


def can_view_source(user, bot: Bot) -> bool:
    """Source is for everyone when the bot's source is public, else as ``private_read_reason`` says."""
    return bot.source_public or private_read_reason(user, bot) is not None


def can_read_seat_log(user, bot: Bot, match_kind: str) -> bool:
    """A seat's log in a match of ``match_kind``: as ``private_read_reason`` says."""
    return private_read_reason(user, bot, match_kind=match_kind) is not None


def can_view_validation_log(user, bot: Bot) -> bool:
    return private_read_reason(user, bot) is not None
