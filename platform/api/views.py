"""Views of the REST API: thin, they check input and call the apps' services and selectors."""

from __future__ import annotations

from core.clientip import client_address
from core.roles import is_organizer
from django.contrib.auth import authenticate
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, permissions, serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from bots import selectors as bot_selectors
from bots import services as bot_services
from bots.forms import CappedUploadHandler, read_capped, upload_read_cap
from bots.models import Bot, BotVersion, SourceAccess
from ladders import selectors as ladder_selectors
from ladders import services as ladder_services
from ladders.models import Ladder, LadderEntry
from matches import selectors as match_selectors
from matches.models import Match
from tournaments_app import selectors as tournament_selectors
from tournaments_app import services as tournament_services
from tournaments_app.models import Tournament

from . import selectors, services
from . import serializers as s
from .pagination import MatchCursorPagination
from .permissions import IsOwnerOrReadOnly, IsStaff
from .throttles import LoginThrottle, MatchRequestThrottle, UploadThrottle

ERRORS = {
    400: OpenApiResponse(s.ErrorSerializer, "invalid input or refused by the rules of the site"),
    401: OpenApiResponse(s.ErrorSerializer, "not logged in / bad token"),
    403: OpenApiResponse(s.ErrorSerializer, "not allowed"),
    404: OpenApiResponse(s.ErrorSerializer, "not found"),
    429: OpenApiResponse(s.ErrorSerializer, "rate limit reached: retry_after says when to try again"),
}


def _errors(*codes: int) -> dict:
    return {code: ERRORS[code] for code in codes}


def _owned_bot(request, bot_id: int) -> Bot:
    """The bot, when the request's user owns it (403 otherwise, organizers and superusers included;
    404 when it does not exist)."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    if not bot_selectors.user_is_owner(request.user, bot):
        raise exceptions.PermissionDenied(f"bot {bot.pk} ({bot}) is not yours")
    return bot


def _record_log_reads(request, versions, body: list[dict]) -> None:
    """Audit the validation logs ``body`` (serialized ``versions``) shows to someone not their owner."""
    for version, item in zip(versions, body, strict=True):
        if item.get("validation_log") is not None:
            bot_services.private_read(
                user=request.user, version=version, what=SourceAccess.What.VALIDATION_LOG,
                path=request.get_full_path(),
            )


# --- the user and their tokens ------------------------------------------------------------------


class MeView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: s.UserSerializer, **_errors(401)})
    def get(self, request):
        """The user these credentials belong to."""
        return Response(s.UserSerializer(request.user).data)


class TokenListView(generics.ListCreateAPIView):
    """Your personal access tokens; creating one answers with its key, once."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.TokenSerializer

    def get_queryset(self):
        return selectors.token_list(self.request.user)

    @extend_schema(request=s.TokenSerializer, responses={201: s.NewTokenSerializer, **_errors(400, 401)})
    def post(self, request):
        incoming = s.TokenSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        token, key = services.token_create(user=request.user, name=incoming.validated_data["name"])
        token.key = key
        return Response(s.NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenObtainView(APIView):
    """Exchange a username and password for a new token (what ``arena login`` does)."""

    authentication_classes: list = []  # the password is the credential; no session, so no CSRF
    throttle_classes = [LoginThrottle]

    @extend_schema(request=s.LoginSerializer, responses={201: s.NewTokenSerializer, **_errors(400, 429)})
    def post(self, request):
        incoming = s.LoginSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        user = authenticate(request._request, username=data["username"], password=data["password"])
        if user is None:
            raise services.ApiRefusal("wrong username or password")
        token, key = services.token_create(user=user, name=data["name"])
        token.key = key
        return Response(s.NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenDetailView(generics.RetrieveDestroyAPIView):
    """One of your tokens; DELETE revokes it."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.TokenSerializer

    def get_queryset(self):
        return selectors.token_list(self.request.user)

    def perform_destroy(self, instance):
        services.token_revoke(instance)


# --- bots and versions --------------------------------------------------------------------------


class _BotPageMixin:
    """Lists of bots: each page's playing versions in two queries, not two per bot."""

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        context = {**self.get_serializer_context(), "playing_versions": bot_selectors.bot_playing_versions(page)}
        return self.get_paginated_response(s.BotSerializer(page, many=True, context=context).data)


class BotListView(_BotPageMixin, generics.ListCreateAPIView):
    """Your bots; POST creates one."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.BotSerializer

    def get_queryset(self):
        return ladder_selectors.with_public(bot_selectors.bot_list(owner=self.request.user)).order_by("name", "pk")

    @extend_schema(request=s.BotCreateSerializer, responses={201: s.BotSerializer, **_errors(400, 401)})
    def post(self, request):
        incoming = s.BotCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        bot = bot_services.bot_create(owner=request.user, **incoming.validated_data)
        return Response(s.BotSerializer(bot, context={"request": request}).data, status=status.HTTP_201_CREATED)


class PublicBotListView(_BotPageMixin, generics.ListAPIView):
    """Bots anyone may challenge: public source or an active ladder entry, and an active version."""

    serializer_class = s.BotSerializer
    queryset = Bot.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        return ladder_selectors.public_bots()


class BotDetailView(generics.RetrieveUpdateAPIView):
    """A bot; its owner may PATCH its description and source visibility."""

    permission_classes = [IsOwnerOrReadOnly]
    serializer_class = s.BotSerializer
    queryset = Bot.objects.select_related("owner")
    lookup_url_kwarg = "bot_id"
    http_method_names = ["get", "patch", "head", "options"]

    @extend_schema(request=s.BotUpdateSerializer, responses={200: s.BotSerializer, **_errors(400, 401, 403, 404)})
    def patch(self, request, *args, **kwargs):
        bot = self.get_object()
        incoming = s.BotUpdateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        bot = bot_services.bot_update(
            bot,
            description=data.get("description", bot.description),
            source_public=data.get("source_public", bot.source_public),
        )
        return Response(s.BotSerializer(bot, context={"request": request}).data)


class BotPinView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=s.PinSerializer, responses={200: s.BotSerializer, **_errors(400, 401, 403, 404)})
    def post(self, request, bot_id: int):
        """Choose the version that plays for your bot (null: the newest active one)."""
        bot = _owned_bot(request, bot_id)
        incoming = s.PinSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        number = incoming.validated_data["version"]
        version = None
        if number is not None:
            version = BotVersion.objects.filter(bot=bot, number=number).first()
            if version is None:
                raise serializers.ValidationError({"version": [f"bot {bot.pk} has no version {number}"]})
        bot = bot_services.bot_pin_version(bot, version)
        return Response(s.BotSerializer(bot, context={"request": request}).data)


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

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "validation_matches": None}

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        context = self.get_serializer_context()
        context["validation_matches"] = match_selectors.validation_matches(v.pk for v in page)
        body = s.VersionSerializer(page, many=True, context=context).data
        _record_log_reads(request, page, body)
        return self.get_paginated_response(body)

    def initial(self, request, *args, **kwargs):
        # Before the body is parsed: never hold more of an upload than the largest allowed bot.
        request._request.upload_handlers = [CappedUploadHandler(request._request)]
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": s.UploadSerializer},
        responses={201: s.VersionSerializer, **_errors(400, 401, 403, 404, 429)},
    )
    def post(self, request, bot_id: int):
        bot = _owned_bot(request, bot_id)
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
    @extend_schema(responses={200: s.VersionSerializer, **_errors(404)})
    def get(self, request, bot_id: int, number: int):
        """A version: status, rejection reason and (owner and staff only) its validation log."""
        version = _version(bot_id, number)
        body = s.VersionSerializer(version, context={"request": request}).data
        _record_log_reads(request, [version], [body])
        return Response(body)


class VersionSourceView(APIView):
    @extend_schema(
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, **_errors(403, 404)},
    )
    def get(self, request, bot_id: int, number: int):
        """The uploaded bytes: for everyone when the bot's source is public, else owner and staff."""
        version = get_object_or_404(BotVersion.objects.select_related("bot__owner"), bot_id=bot_id, number=number)
        if not version.bot.source_public and not bot_services.private_read(
            user=request.user, version=version, what=SourceAccess.What.SOURCE, path=request.get_full_path()
        ):
            raise exceptions.PermissionDenied(f"the source of bot {version.bot} is private")
        response = HttpResponse(bytes(version.source), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(
            True, f"{version.bot.name}-v{version.number}-{version.filename}"
        )
        return response


# --- matches ------------------------------------------------------------------------------------


class MatchFilterSerializer(serializers.Serializer):
    bot = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    ladder = serializers.SlugField(required=False, max_length=100)
    tournament = serializers.SlugField(required=False, max_length=100)
    status = serializers.ChoiceField(required=False, choices=Match.Status.values)
    kind = serializers.ChoiceField(required=False, choices=Match.Kind.values)


@extend_schema(parameters=[MatchFilterSerializer], responses={200: s.MatchSerializer(many=True), **_errors(400)})
class MatchListView(generics.ListAPIView):
    """Matches, newest first, filtered by bot id, ladder slug, tournament slug, status and kind."""

    serializer_class = s.MatchSerializer
    queryset = Match.objects.none()  # for the schema; get_queryset answers
    pagination_class = MatchCursorPagination

    def get_queryset(self):
        query = MatchFilterSerializer(data=self.request.query_params)
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
    @extend_schema(responses={200: s.MatchSerializer, **_errors(404)})
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
                user=request.user, version=seat.bot_version, what=SourceAccess.What.SEAT_LOG,
                path=request.get_full_path(), match_kind=match.kind, match_id=match.pk,
            ):
                item["log"] = None
        return Response(body)


class MatchReplayView(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, **_errors(404)})
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


# --- challenges ---------------------------------------------------------------------------------


class ChallengeListView(generics.ListCreateAPIView):
    """Your challenges, newest first; POST asks for an unranked match against a public bot."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.ChallengeSerializer
    throttle_classes = [MatchRequestThrottle]
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def get_queryset(self):
        return match_selectors.challenge_list(self.request.user)

    @extend_schema(
        request=s.ChallengeCreateSerializer,
        responses={201: s.ChallengeSerializer, **_errors(400, 401, 403, 404, 429)},
    )
    def post(self, request):
        incoming = s.ChallengeCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        bot = _owned_bot(request, data["bot"])
        opponent = Bot.objects.filter(pk=data["opponent"]).first()
        if opponent is None:
            raise serializers.ValidationError({"opponent": [f"no bot with id {data['opponent']}"]})
        ladder = Ladder.objects.filter(slug=data["ladder"]).first()
        if ladder is None:
            raise serializers.ValidationError({"ladder": [f"no ladder {data['ladder']!r}"]})
        challenge = ladder_services.challenge_create(
            challenger=request.user, bot=bot, opponent=opponent, ladder=ladder, address=client_address(request)
        )
        body = s.ChallengeSerializer(challenge, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)



# --- ladders ------------------------------------------------------------------------------------


def _ladder(slug: str, *, counts: bool = True) -> Ladder:
    # the counts (entries, rated matches) only where the answer shows them
    ladder = (ladder_selectors.ladder_list() if counts else Ladder.objects).filter(slug=slug).first()
    if ladder is None:
        raise exceptions.NotFound(f"no ladder {slug!r}")
    return ladder


class LadderListView(generics.ListAPIView):
    """Ladders, active ones first."""

    serializer_class = s.LadderSerializer
    queryset = Ladder.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        return ladder_selectors.ladder_list()


class LadderDetailView(APIView):
    @extend_schema(responses={200: s.LadderSerializer, **_errors(404)})
    def get(self, request, slug: str):
        """A ladder: its rules, format and counts."""
        return Response(s.LadderSerializer(_ladder(slug)).data)


class StandingFilterSerializer(serializers.Serializer):
    q = serializers.CharField(required=False, max_length=100, help_text="only bots whose name or owner contains this")


@extend_schema(parameters=[StandingFilterSerializer])
class LadderStandingsView(generics.ListAPIView):
    """The ladder table a page at a time (``?page=``, ``?page_size=``, ``?q=``): active entries ranked
    by rating (equal ratings share a rank), then the others (rank null)."""

    serializer_class = s.StandingSerializer
    queryset = Ladder.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        query = StandingFilterSerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        # a sequence the paginator counts and slices: only the page's rows are read
        return ladder_selectors.LadderTable(_ladder(self.kwargs["slug"], counts=False), query.validated_data.get("q", ""))


class LadderHistoryView(generics.ListAPIView):
    """A bot's rating changes on a ladder, oldest first."""

    serializer_class = s.RatingChangeSerializer
    queryset = Ladder.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        ladder = _ladder(self.kwargs["slug"], counts=False)
        entry = LadderEntry.objects.filter(ladder=ladder, bot_id=self.kwargs["bot_id"]).first()
        if entry is None:
            raise exceptions.NotFound(f"bot {self.kwargs['bot_id']} never entered ladder {ladder.slug!r}")
        return ladder_selectors.entry_history(entry)


class LadderEntryView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=s.BotOnLadderSerializer, responses={201: s.StandingSerializer, **_errors(400, 401, 403, 404)})
    def post(self, request, slug: str):
        """Enter your bot into the ladder (or bring it back)."""
        ladder = _ladder(slug)
        incoming = s.BotOnLadderSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        bot = _owned_bot(request, incoming.validated_data["bot"])
        ladder_services.ladder_enter(ladder, bot)
        standing = ladder_selectors.entry_standing(ladder, bot.pk)
        return Response(s.StandingSerializer(standing).data, status=status.HTTP_201_CREATED)


class LadderLeaveView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={204: None, **_errors(400, 401, 403, 404)})
    def delete(self, request, slug: str, bot_id: int):
        """Take your bot out of the ladder's matchmaking; its rating and matches stay."""
        ladder = _ladder(slug)
        bot = _owned_bot(request, bot_id)
        ladder_services.ladder_leave(ladder, bot)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LadderMatchmakeView(APIView):
    permission_classes = [IsStaff]

    @extend_schema(request=None, responses={200: s.MatchSerializer(many=True), **_errors(401, 403, 404)})
    def post(self, request, slug: str):
        """Organizers: run the ladder's matchmaking now (the scheduler does it every few seconds)."""
        created = ladder_services.ladder_matchmake(_ladder(slug))
        return Response(s.MatchSerializer(created, many=True, context={"request": request}).data)


# --- tournaments --------------------------------------------------------------------------------


def _tournament(slug: str) -> Tournament:
    tournament = Tournament.objects.filter(slug=slug).first()
    if tournament is None:
        raise exceptions.NotFound(f"no tournament {slug!r}")
    return tournament


class TournamentListView(generics.ListAPIView):
    """Tournaments, newest first."""

    serializer_class = s.TournamentSerializer
    queryset = Tournament.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        return tournament_selectors.tournament_list()


def _tournament_body(tournament: Tournament) -> dict:
    body = s.TournamentSerializer(tournament).data
    body["progress"] = tournament_selectors.tournament_progress(tournament).as_dict()
    body["entries"] = s.TournamentEntrySerializer(tournament_selectors.tournament_entries(tournament), many=True).data
    body["standings"] = s.TournamentStandingSerializer(
        tournament_selectors.tournament_standings(tournament), many=True
    ).data
    body["rounds"] = s.RoundSerializer(tournament_selectors.tournament_rounds(tournament), many=True).data
    return body


class TournamentDetailView(APIView):
    @extend_schema(responses={200: s.TournamentDetailSerializer, **_errors(404)})
    def get(self, request, slug: str):
        """A tournament with its progress, entries, standings, and rounds (newest first) with pairings."""
        return Response(_tournament_body(_tournament(slug)))


class TournamentEntryView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=s.BotOnLadderSerializer, responses={201: s.TournamentEntrySerializer, **_errors(400, 401, 403, 404)}
    )
    def post(self, request, slug: str):
        """Enter your bot while registration is open (organizers: also in a draft)."""
        tournament = _tournament(slug)
        incoming = s.BotOnLadderSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        bot = _owned_bot(request, incoming.validated_data["bot"])
        if tournament.status != Tournament.Status.REGISTRATION and not is_organizer(request.user):
            raise services.ApiRefusal(f"{tournament} is {tournament.status}, not open for registration")
        entry = tournament_services.entry_add(tournament, bot, actor=request.user)
        return Response(s.TournamentEntrySerializer(entry).data, status=status.HTTP_201_CREATED)


#: organizer actions by the name in the URL
TOURNAMENT_ACTIONS = {
    "open": tournament_services.tournament_open_registration,
    "start": tournament_services.tournament_start,
    "pause": tournament_services.tournament_pause,
    "resume": tournament_services.tournament_resume,
    "rerun": tournament_services.tournament_rerun_failed,
    "cancel": tournament_services.tournament_cancel,
}


class TournamentActionView(APIView):
    permission_classes = [IsStaff]

    @extend_schema(
        request=None,
        parameters=[OpenApiParameter("action", str, OpenApiParameter.PATH, enum=sorted(TOURNAMENT_ACTIONS))],
        responses={200: s.TournamentDetailSerializer, **_errors(400, 401, 403, 404)},
    )
    def post(self, request, slug: str, action: str):
        """Organizers: open registration, start, pause, resume, re-run failed matches, cancel."""
        run = TOURNAMENT_ACTIONS.get(action)
        if run is None:
            raise exceptions.NotFound(f"no tournament action {action!r} (known: {', '.join(sorted(TOURNAMENT_ACTIONS))})")
        tournament = _tournament(slug)
        run(tournament, actor=request.user)
        return Response(_tournament_body(_tournament(slug)))
