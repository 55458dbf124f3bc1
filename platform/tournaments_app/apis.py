"""The tournament app's API: tournaments, entries, and the organizers' actions."""

from __future__ import annotations

from core.cachekeys import digest
from core.roles import is_organizer
from django.core.cache import cache
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, generics, permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsStaff
from api.serializers import error_responses
from api.services import ApiRefusal
from bots.apis import owned_bot
from ladders.serializers import BotOnLadderSerializer

from . import selectors as tournament_selectors
from . import serializers as s
from . import services as tournament_services
from .models import Tournament


def _tournament(slug: str) -> Tournament:
    tournament = Tournament.objects.select_related("seed_ladder").filter(slug=slug).first()
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
    """The tournament with its progress, and its entries, standings and rounds: those three lists are
    serialized once per state and cached under a name of what they show (the standings' results key,
    the entries as read, every value of the rounds), so a result, a rerun, a match that starts, a new
    round or a withdrawal is the next answer at once."""
    body = s.TournamentSerializer(tournament).data
    entries = list(tournament_selectors.tournament_entries(tournament))  # read once for all three
    counts = tournament_selectors.table_counts(tournament)  # read once: progress and the standings' key
    body["progress"] = tournament_selectors.page_progress(tournament, entries, counts).as_dict()
    rounds = tournament_selectors.tournament_rounds(tournament, entries=entries)
    key = "api-tournament-lists:" + digest(
        tournament_selectors.tournament_results_key(tournament, entries, counts),
        tournament_selectors.entries_digest(entries),
        rounds.key,
    )
    lists = cache.get(key)
    if lists is None:
        lists = {
            "entries": s.TournamentEntrySerializer(entries, many=True).data,
            "standings": s.TournamentStandingSerializer(
                tournament_selectors.tournament_standings(tournament, entries, counts), many=True
            ).data,
            "rounds": s.RoundSerializer(rounds, many=True).data,
        }
        cache.set(key, lists, tournament_selectors.STANDINGS_CACHE_SECONDS)
    body.update(lists)
    return body


class TournamentDetailView(APIView):
    @extend_schema(responses={200: s.TournamentDetailSerializer, **error_responses(404)})
    def get(self, request, slug: str):
        """A tournament with its progress, entries, standings, and rounds (newest first) with pairings."""
        return Response(_tournament_body(_tournament(slug)))


class TournamentEntryView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=BotOnLadderSerializer, responses={201: s.TournamentEntrySerializer, **error_responses(400, 401, 403, 404)}
    )
    def post(self, request, slug: str):
        """Enter your bot while registration is open (organizers: also in a draft)."""
        tournament = _tournament(slug)
        incoming = BotOnLadderSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        bot = owned_bot(request, incoming.validated_data["bot"])
        if tournament.status != Tournament.Status.REGISTRATION and not is_organizer(request.user):
            raise ApiRefusal(f"{tournament} is {tournament.status}, not open for registration")
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
        responses={200: s.TournamentDetailSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, slug: str, action: str):
        """Organizers: open registration, start, pause, resume, re-run failed matches, cancel."""
        run = TOURNAMENT_ACTIONS.get(action)
        if run is None:
            raise exceptions.NotFound(f"no tournament action {action!r} (known: {', '.join(sorted(TOURNAMENT_ACTIONS))})")
        tournament = _tournament(slug)
        run(tournament, actor=request.user)
        return Response(_tournament_body(_tournament(slug)))
