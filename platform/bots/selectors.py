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
    if bot.pinned_version_id:
        pinned = BotVersion.objects.filter(pk=bot.pinned_version_id, status=BotVersion.Status.ACTIVE).first()
        if pinned is not None:
            return pinned
    return bot.versions.filter(status=BotVersion.Status.ACTIVE).order_by("-number").first()


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
