"""Selectors of the bots app (functions that read)."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from .models import Bot, BotVersion


def bot_list(*, owner=None) -> QuerySet[Bot]:
    """Bots with their version counts, optionally of one owner."""
    bots = Bot.objects.select_related("owner").annotate(
        version_count=Count("versions", distinct=True),
        active_count=Count("versions", filter=Q(versions__status=BotVersion.Status.ACTIVE), distinct=True),
    )
    if owner is not None:
        bots = bots.filter(owner=owner)
    return bots.order_by("name")


def bot_playing_version(bot: Bot) -> BotVersion | None:
    """The version that plays for the bot: the owner's pick while active, else the newest active."""
    return bot_playing_versions([bot], with_source=True).get(bot.pk)


def bot_playing_versions(bots, *, with_source: bool = False) -> dict[int, BotVersion]:
    """``bot_playing_version`` of many bots in two queries: bot id -> the version that plays."""
    bots = list(bots)
    active = BotVersion.objects.filter(bot_id__in=[b.pk for b in bots], status=BotVersion.Status.ACTIVE)
    numbers = {pk: (bot_id, number) for pk, bot_id, number in active.values_list("pk", "bot_id", "number")}
    newest: dict[int, tuple[int, int]] = {}  # bot id -> (number, pk)
    for pk, (bot_id, number) in numbers.items():
        newest[bot_id] = max(newest.get(bot_id, (0, 0)), (number, pk))
    chosen = {}
    for bot in bots:
        pinned = numbers.get(bot.pinned_version_id)
        if pinned is not None and pinned[0] == bot.pk:
            chosen[bot.pk] = bot.pinned_version_id
        elif bot.pk in newest:
            chosen[bot.pk] = newest[bot.pk][1]
    if not chosen:
        return {}
    versions = BotVersion.objects.filter(pk__in=chosen.values())
    if not with_source:
        versions = versions.defer("source")
    by_pk = versions.in_bulk()
    return {bot_id: by_pk[pk] for bot_id, pk in chosen.items()}


def bot_versions(bot: Bot) -> QuerySet[BotVersion]:
    """The bot's versions, newest first, without their bytes."""
    return bot.versions.defer("source").order_by("-number")


def user_is_owner_or_staff(user, bot: Bot) -> bool:
    return bool(user.is_authenticated and (user.is_staff or user.pk == bot.owner_id))


def can_view_source(user, bot: Bot) -> bool:
    """Source is for everyone when the bot's source is public, else for the owner and staff."""
    return bot.source_public or user_is_owner_or_staff(user, bot)


def can_revalidate(version: BotVersion) -> bool:
    """True when the version was rejected because the platform failed its validation match."""
    from matches.models import Match

    if version.status != BotVersion.Status.REJECTED:
        return False
    last = (
        Match.objects.filter(kind=Match.Kind.VALIDATION, seats__bot_version=version)
        .order_by("-queued_at", "-pk")
        .values_list("status", flat=True)
        .first()
    )
    return last == Match.Status.FAILED


def can_view_validation_log(user, bot: Bot) -> bool:
    return user_is_owner_or_staff(user, bot)


def site_counts() -> dict:
    """Figures for the home page: bots, active versions, finished matches."""
    from matches.models import Match

    return {
        "bots": Bot.objects.count(),
        "active_versions": BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).count(),
        "matches": Match.objects.filter(status=Match.Status.DONE).exclude(kind=Match.Kind.VALIDATION).count(),
    }
