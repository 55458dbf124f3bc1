"""Web pages of the API app: make and revoke tokens on the profile page, challenge from a bot page.

Thin like the API views: the same services, the same rate limit on match requests.
"""

from __future__ import annotations

import math

from core import ratelimit
from core.clientip import client_address
from core.converters import id_or_none
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from bots.models import Bot
from ladders import services as ladder_services
from ladders.models import Ladder
from matches import selectors as match_selectors
from matches.models import Match

from . import services
from .models import ApiToken


@login_required
@require_POST
def token_new(request):
    """Create a token and show its key on this page, once; it is never shown again."""
    try:
        token, key = services.token_create(user=request.user, name=request.POST.get("name", ""))
    except services.ApiRefusal as exc:
        messages.error(request, str(exc))
        return redirect("accounts:profile", username=request.user.username)
    response = render(request, "api/token_created.html", {"token": token, "key": key})
    response["Cache-Control"] = "no-store"  # the key must not stay in a cache
    return response


@login_required
@require_POST
def token_revoke(request, token_id: int):
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    services.token_revoke(token)
    messages.success(request, f"Token {token.name!r} ({token.prefix}…) revoked: it no longer works.")
    return redirect("accounts:profile", username=request.user.username)


@login_required
@require_POST
def challenge_new(request, bot_id: int):
    """Challenge the public bot ``bot_id`` with one of your bots under a ladder's rules."""
    opponent = get_object_or_404(Bot, pk=bot_id)
    mine = Bot.objects.filter(owner=request.user, pk=id_or_none(request.POST.get("bot"))).first()
    ladder = Ladder.objects.filter(slug=request.POST.get("ladder", "")).first()
    if mine is None or ladder is None:
        messages.error(request, "Choose one of your bots and a ladder whose rules to play.")
        return redirect(opponent)
    waiting = ratelimit.hit("challenges", request)
    if waiting is not None:
        messages.error(
            request, f"Too many challenges; retry in {max(1, math.ceil(waiting))} s (the limit counts your account "
            "and your address)."
        )
        return redirect(opponent)
    try:
        challenge = ladder_services.challenge_create(
            challenger=request.user, bot=mine, opponent=opponent, ladder=ladder, address=client_address(request)
        )
    except ladder_services.ChallengeError as exc:
        messages.error(request, str(exc))
        return redirect(opponent)
    _challenge_message(request, challenge, f"{mine} against {opponent}")
    return redirect(challenge.match)


def _challenge_message(request, challenge, label: str) -> None:
    """Say what became of the challenge's match: still waiting, or already played (tasks may run in-process)."""
    status = match_selectors.challenge_match_status(challenge)
    if status in (Match.Status.QUEUED, Match.Status.RUNNING):
        messages.success(request, f"Challenge {status}: {label}. This page shows the result when it is played.")
    elif status == Match.Status.DONE:
        messages.success(request, f"Challenge played: {label}. The result is below.")
    else:
        messages.warning(request, f"Challenge {label}: the match {status}, see below.")
