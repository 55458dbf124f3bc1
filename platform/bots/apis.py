"""The bots app's API: a version's uploaded bytes, and what the other apps' bot endpoints share (the
owner check, the audit of private reads).

The endpoints that show a bot (``public``: open source or on a ladder) are in ``ladders/apis.py``,
and those that show versions (their validation match) in ``matches/apis.py``: each in the lowest app
that has the data, under the same URLs (docs/api.md).
"""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions
from rest_framework.views import APIView

from api.serializers import error_responses

from . import selectors as bot_selectors
from . import services as bot_services
from .models import Bot, BotVersion, SourceAccess


class IsOwnerOrReadOnly(permissions.BasePermission):
    """Everyone reads a bot; only its owner changes it (not organizers, not superusers)."""

    message = "only the bot's owner can do this"

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        return bot_selectors.user_is_owner(request.user, obj)


def owned_bot(request, bot_id: int) -> Bot:
    """The bot, when the request's user owns it (403 otherwise, organizers and superusers included;
    404 when it does not exist)."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    if not bot_selectors.user_is_owner(request.user, bot):
        raise exceptions.PermissionDenied(f"bot {bot.pk} ({bot}) is not yours")
    return bot


def record_log_reads(request, versions, body: list[dict]) -> None:
    """Audit the validation logs ``body`` (serialized ``versions``) shows to someone not their owner."""
    for version, item in zip(versions, body, strict=True):
        if item.get("validation_log") is not None:
            bot_services.private_read(
                user=request.user, version=version, what=str(SourceAccess.What.VALIDATION_LOG),
                path=request.get_full_path(),
            )


class VersionSourceView(APIView):
    @extend_schema(
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, **error_responses(403, 404)},
    )
    def get(self, request, bot_id: int, number: int):
        """The uploaded bytes: for everyone when the bot's source is public, else owner and staff."""
        version = get_object_or_404(BotVersion.objects.select_related("bot__owner"), bot_id=bot_id, number=number)
        if not version.bot.source_public and not bot_services.private_read(
            user=request.user, version=version, what=str(SourceAccess.What.SOURCE), path=request.get_full_path()
        ):
            raise exceptions.PermissionDenied(f"the source of bot {version.bot} is private")
        response = HttpResponse(bytes(version.source), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(
            True, f"{version.bot.name}-v{version.number}-{version.filename}"
        )
        return response
