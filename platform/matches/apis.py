"""The matches app's API: matches, their replays, the queue, and a bot's versions (each version shows
its validation match, so these endpoints are here rather than in bots)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, generics, permissions, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import MatchCursorPagination
from api.serializers import error_responses
from api.throttles import UploadThrottle
from bots import selectors as bot_selectors
from bots import services as bot_services
from bots.apis import owned_bot, record_log_reads
from bots.forms import CappedUploadHandler, read_capped, upload_read_cap
from bots.models import Bot, BotVersion, SourceAccess

from . import selectors as match_selectors
from . import serializers as s
from .models import Match


class VersionListView(generics.ListCreateAPIView):
    """A bot's versions, newest first; its owner uploads a new one as multipart ``file``."""

    serializer_class = s.VersionSerializer
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [UploadThrottle]
    queryset = BotVersion.objects.none()  # for the schema; get_queryset answers

    def get_permissions(self):
        if self.request.method == "POST":
            return [permissions.IsAuthenticated()]
        return []

    def get_bot(self) -> Bot:
        return get_object_or_404(Bot.objects.select_related("owner"), pk=self.kwargs["bot_id"])

    def get_queryset(self):
        return bot_selectors.bot_versions(self.get_bot()).select_related("bot__owner")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        body = s.VersionSerializer(page, many=True, context=self.get_serializer_context()).data
        record_log_reads(request, page, body)
        return self.get_paginated_response(body)

    def initial(self, request, *args, **kwargs):
        # Before the body is parsed: never hold more of an upload than the largest allowed bot.
        request._request.upload_handlers = [CappedUploadHandler(request._request)]
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": s.UploadSerializer},
        responses={201: s.VersionSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request, bot_id: int):
        bot = owned_bot(request, bot_id)
        incoming = s.UploadSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        upload = incoming.validated_data["file"]
        data = read_capped(upload, upload_read_cap())
        version = bot_services.bot_version_create(bot=bot, filename=upload.name, data=data)
        version.refresh_from_db()
        body = s.VersionSerializer(version, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


def _version(bot_id: int, number: int) -> BotVersion:
    return get_object_or_404(
        BotVersion.objects.defer("source").select_related("bot__owner"), bot_id=bot_id, number=number
    )


class VersionDetailView(APIView):
    @extend_schema(responses={200: s.VersionSerializer, **error_responses(404)})
    def get(self, request, bot_id: int, number: int):
        """A version: status, rejection reason and (owner and staff only) its validation log."""
        version = _version(bot_id, number)
        body = s.VersionSerializer(version, context={"request": request}).data
        record_log_reads(request, [version], [body])
        return Response(body)


@extend_schema(parameters=[s.MatchFilterSerializer], responses={200: s.MatchSerializer(many=True), **error_responses(400)})
class MatchListView(generics.ListAPIView):
    """Matches, newest first, filtered by bot id, ladder slug, tournament slug, status and kind."""

    serializer_class = s.MatchSerializer
    queryset = Match.objects.none()  # for the schema; get_queryset answers
    pagination_class = MatchCursorPagination

    def get_queryset(self):
        query = s.MatchFilterSerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        self.seats = match_selectors.match_seats_query(**query.validated_data)
        return match_selectors.match_query(**query.validated_data)

    def paginate_queryset(self, queryset):
        if self.seats is None:
            return super().paginate_queryset(queryset)
        # a bot's matches: the page is taken from its seats' index, then only those matches loaded
        seats = super().paginate_queryset(self.seats)
        ids = list(dict.fromkeys(seat.match_id for seat in seats))  # seated twice: the match once
        found = queryset.in_bulk(ids)
        return [found[i] for i in ids if i in found]


class MatchDetailView(APIView):
    @extend_schema(responses={200: s.MatchSerializer, **error_responses(404)})
    def get(self, request, match_id: int):
        """A match with its seats; a seat's log is there for its bot's owner and staff."""
        try:
            match = match_selectors.match_detail(match_id)
        except Match.DoesNotExist:
            raise exceptions.NotFound(f"no match {match_id}") from None
        body = s.MatchSerializer(match, context={"request": request, "with_logs": True}).data
        for seat, item in zip(match.seats.all(), body["seats"], strict=True):
            if item["log"] is None:
                continue
            # bots.selectors.private_read_reason decides (and the read is audited), whatever the
            # serializer's own check allowed
            if seat.bot_version_id is None or not bot_services.private_read(
                user=request.user, version=seat.bot_version, what=str(SourceAccess.What.SEAT_LOG),
                path=request.get_full_path(), match_kind=match.kind, match_id=match.pk,
            ):
                item["log"] = None
        return Response(body)


class MatchReplayView(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def get(self, request, match_id: int):
        """The replay document (docs/replay-format.md) of a finished match."""
        match = get_object_or_404(Match.objects.only("pk", "status"), pk=match_id)
        data = match_selectors.match_replay_json(match)
        if data is None:
            raise exceptions.NotFound(f"match {match_id} has no replay (status {match.status})")
        response = HttpResponse(data, content_type="application/json")
        response["Content-Disposition"] = content_disposition_header(False, f"match-{match_id}-replay.json")
        return response


class QueueView(APIView):
    @extend_schema(responses={200: s.QueueSerializer})
    def get(self, request):
        """Queued and running matches by kind, the oldest wait, workers alive."""
        queue = match_selectors.queue_summary()
        wait = queue["oldest_wait"]
        body = {
            "queued": queue["queued"],
            "running": queue["running"],
            "stuck": queue["stuck"],
            "oldest_wait_seconds": wait.total_seconds() if wait is not None else None,
            "workers_alive": len(queue["workers"]),
            "kinds": queue["kinds"],
        }
        return Response(s.QueueSerializer(body).data)
