"""The ladders app's API: ladders, entries, standings, matchmaking; and the bots and challenges,
whose answers need ladders (a bot is public when its source is or it is on a ladder; a challenge
plays under a ladder's rules)."""

from __future__ import annotations

from core.clientip import client_address
from django.core.cache import cache
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, generics, permissions, serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsStaff
from api.serializers import error_responses
from api.throttles import MatchRequestThrottle
from bots import selectors as bot_selectors
from bots import services as bot_services
from bots.apis import IsOwnerOrReadOnly, owned_bot
from bots.models import Bot, BotVersion
from matches import selectors as match_selectors
from matches.serializers import MatchSerializer

from . import selectors as ladder_selectors
from . import serializers as s
from . import services as ladder_services
from .models import Ladder, LadderEntry


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

    @extend_schema(request=s.BotCreateSerializer, responses={201: s.BotSerializer, **error_responses(400, 401)})
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

    @extend_schema(request=s.BotUpdateSerializer, responses={200: s.BotSerializer, **error_responses(400, 401, 403, 404)})
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

    @extend_schema(request=s.PinSerializer, responses={200: s.BotSerializer, **error_responses(400, 401, 403, 404)})
    def post(self, request, bot_id: int):
        """Choose the version that plays for your bot (null: the newest active one)."""
        bot = owned_bot(request, bot_id)
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
        responses={201: s.ChallengeSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request):
        incoming = s.ChallengeCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        bot = owned_bot(request, data["bot"])
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
    @extend_schema(responses={200: s.LadderSerializer, **error_responses(404)})
    def get(self, request, slug: str):
        """A ladder: its rules, format and counts."""
        return Response(s.LadderSerializer(_ladder(slug)).data)


@extend_schema(parameters=[s.StandingFilterSerializer])
class LadderStandingsView(generics.ListAPIView):
    """The ladder table a page at a time (``?page=``, ``?page_size=``, ``?q=``): active entries ranked
    by rating (equal ratings share a rank), then the others (rank null)."""

    serializer_class = s.StandingSerializer
    queryset = Ladder.objects.none()  # for the schema; get_queryset answers

    def get_queryset(self):
        query = s.StandingFilterSerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        # a sequence the paginator counts and slices: only the page's rows are read
        return ladder_selectors.LadderTable(_ladder(self.kwargs["slug"], counts=False), query.validated_data.get("q", ""))


class LadderHistoryView(generics.ListAPIView):
    """A bot's rating changes on a ladder, oldest first."""

    serializer_class = s.RatingChangeSerializer
    queryset = Ladder.objects.none()  # for the schema; get_queryset answers

    entry: LadderEntry | None = None

    def _entry(self) -> LadderEntry:
        if self.entry is None:
            ladder = _ladder(self.kwargs["slug"], counts=False)
            entry = ladder_selectors.ladder_entry(ladder, self.kwargs["bot_id"])
            if entry is None:
                raise exceptions.NotFound(f"bot {self.kwargs['bot_id']} never entered ladder {ladder.slug!r}")
            self.entry = entry
        return self.entry

    def get_queryset(self):
        return ladder_selectors.entry_history(self._entry())

    def list(self, request, *args, **kwargs):
        # A page is kept under the entry's newest change and newest fitted one (a result or a refit is
        # a new name) and the address asked (page, size, and the host the links are written with).
        key = f"ladder-history:{ladder_selectors.entry_history_key(self._entry(), request.build_absolute_uri())}"
        data = cache.get(key)
        if data is None:
            response = super().list(request, *args, **kwargs)
            cache.set(key, response.data, ladder_selectors.EXACT_KEY_SECONDS)
            return response
        return Response(data)


class LadderEntryView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=s.BotOnLadderSerializer, responses={201: s.StandingSerializer, **error_responses(400, 401, 403, 404)})
    def post(self, request, slug: str):
        """Enter your bot into the ladder (or bring it back)."""
        ladder = _ladder(slug)
        incoming = s.BotOnLadderSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        bot = owned_bot(request, incoming.validated_data["bot"])
        ladder_services.ladder_enter(ladder, bot)
        standing = ladder_selectors.entry_standing(ladder, bot.pk)
        return Response(s.StandingSerializer(standing).data, status=status.HTTP_201_CREATED)


class LadderLeaveView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={204: None, **error_responses(400, 401, 403, 404)})
    def delete(self, request, slug: str, bot_id: int):
        """Take your bot out of the ladder's matchmaking; its rating and matches stay."""
        ladder = _ladder(slug)
        bot = owned_bot(request, bot_id)
        ladder_services.ladder_leave(ladder, bot)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LadderMatchmakeView(APIView):
    permission_classes = [IsStaff]

    @extend_schema(request=None, responses={200: MatchSerializer(many=True), **error_responses(401, 403, 404)})
    def post(self, request, slug: str):
        """Organizers: run the ladder's matchmaking now (the scheduler does it every few seconds)."""
        created = ladder_services.ladder_matchmake(_ladder(slug))
        return Response(MatchSerializer(created, many=True, context={"request": request}).data)
