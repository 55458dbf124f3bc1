"""Web pages of the API app: make and revoke tokens on the profile page (the challenge form of a bot
page is the ladders app's, ``ladders.views.challenge_new``).

Thin like the API views: the same services.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

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
