"""Sections other apps' pages include: API tokens on the profile, the challenge form on a bot page."""

from __future__ import annotations

from django import template

from bots.models import Bot, BotVersion
from ladders import selectors as ladder_selectors

from .. import selectors

register = template.Library()


@register.inclusion_tag("api/_tokens.html", takes_context=True)
def api_tokens(context):
    """The signed-in user's tokens with revoke buttons, and the form for a new one."""
    request = context["request"]
    return {"tokens": list(selectors.token_list(request.user)), "csrf_token": context.get("csrf_token")}


@register.inclusion_tag("api/_challenge.html", takes_context=True)
def challenge_form(context, bot: Bot):
    """For a signed-in visitor who is not the owner of a public ``bot``: pick your bot and an active ladder."""
    user = context["request"].user
    shown = user.is_authenticated and user.pk != bot.owner_id and ladder_selectors.bot_is_public(bot)
    mine = (
        Bot.objects.filter(owner=user, versions__status=BotVersion.Status.ACTIVE).distinct().order_by("name")
        if shown else []
    )
    return {
        "shown": shown,
        "bot": bot,
        "mine": mine,
        "ladders": ladder_selectors.challenge_ladders() if shown else [],
        "csrf_token": context.get("csrf_token"),
    }
