"""Template tags of the ladders app: the ladder section and the challenge form of the bot page."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from bots.models import Bot, BotVersion
from bots.selectors import user_is_owner_or_staff

from .. import ratings, selectors

register = template.Library()


@register.inclusion_tag("ladders/_bot_ladders.html", takes_context=True)
def bot_ladders(context, bot):
    """The bot's ladders with rating and status; for its owner, enter and leave buttons.

    Usage on the bot page: ``{% load ladders %}{% bot_ladders bot %}``
    """
    request = context.get("request")
    user = getattr(request, "user", None)
    rows = selectors.bot_ladders(bot)
    return {
        "bot": bot,
        "rows": rows,
        "entered": [r for r in rows if r.entry is not None],
        "open": [r for r in rows if r.entry is None or r.entry.status != "active"],
        "is_owner": user is not None and user_is_owner_or_staff(user, bot),
        "csrf_token": context.get("csrf_token"),
        "in_play": any(r.entry is not None and r.entry.status == "active" for r in rows),
    }


@register.filter
def signed(value) -> str:
    """A rating change in whole points with its sign: +12, −4, 0 (ratings are shown in whole points)."""
    if value is None:
        return ""
    points = round(value)
    return "0" if points == 0 else f"{points:+d}".replace("-", "\u2212")


@register.simple_tag
def rating(shown: ratings.Shown) -> SafeString:
    """A rating with its ± and, while its 95% interval is wide, the "provisional" badge: a cell of
    every ladder table row (a tag, not an included template: 50 includes were a third of the table
    page's render, measured).

    Usage: ``{% rating row.rating %}``"""
    low, high = shown.interval
    badge = format_html(
        ' <span class="badge badge-warn" title="95% interval wider than ±{}: the rating may still move a lot">'
        '<span class="long">provisional</span><span class="short">P</span></span>', ratings.PROVISIONAL_MARGIN,
    ) if shown.provisional else ""
    return format_html(
        '<span class="rating"><span class="value-margin"><strong>{}</strong> <span class="muted" title="95% interval'
        ' {} to {}">±{}</span></span>{}</span>', shown.value, low, high, shown.margin, badge,
    )


@register.filter
def percent(value) -> str:
    return "" if value is None else f"{value * 100:.0f}%"


@register.inclusion_tag("ladders/_challenge.html", takes_context=True)
def challenge_form(context, bot: Bot):
    """For a signed-in visitor who is not the owner of a public ``bot``: pick your bot and an active ladder."""
    user = context["request"].user
    shown = user.is_authenticated and user.pk != bot.owner_id and selectors.bot_is_public(bot)
    mine = (
        Bot.objects.filter(owner=user, versions__status=BotVersion.Status.ACTIVE).distinct().order_by("name")
        if shown else []
    )
    return {
        "shown": shown,
        "bot": bot,
        "mine": mine,
        "ladders": selectors.challenge_ladders() if shown else [],
        "csrf_token": context.get("csrf_token"),
    }
