"""URL map of the REST API, mounted at /api/ (see docs/api.md)."""

import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import views
from .exceptions import not_found

app_name = "api"



urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves its script from ?script, not inline: the site's CSP allows no inline script
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("me/", views.MeView.as_view(), name="me"),
    path("auth/token/", views.TokenObtainView.as_view(), name="token-obtain"),
    path("tokens/", views.TokenListView.as_view(), name="token-list"),
    path("tokens/<id:pk>/", views.TokenDetailView.as_view(), name="token-detail"),
    path("bots/", views.BotListView.as_view(), name="bot-list"),
    path("bots/public/", views.PublicBotListView.as_view(), name="bot-public"),
    path("bots/<id:bot_id>/", views.BotDetailView.as_view(), name="bot-detail"),
    path("bots/<id:bot_id>/pin/", views.BotPinView.as_view(), name="bot-pin"),
    path("bots/<id:bot_id>/versions/", views.VersionListView.as_view(), name="version-list"),
    path("bots/<id:bot_id>/versions/<id:number>/", views.VersionDetailView.as_view(), name="version-detail"),
    path(
        "bots/<id:bot_id>/versions/<id:number>/source/",
        views.VersionSourceView.as_view(),
        name="version-source",
    ),
    path("matches/", views.MatchListView.as_view(), name="match-list"),
    path("matches/<id:match_id>/", views.MatchDetailView.as_view(), name="match-detail"),
    path("matches/<id:match_id>/replay/", views.MatchReplayView.as_view(), name="match-replay"),
    path("queue/", views.QueueView.as_view(), name="queue"),
    path("challenges/", views.ChallengeListView.as_view(), name="challenge-list"),
    path("ladders/", views.LadderListView.as_view(), name="ladder-list"),
    path("ladders/<slug:slug>/", views.LadderDetailView.as_view(), name="ladder-detail"),
    path("ladders/<slug:slug>/standings/", views.LadderStandingsView.as_view(), name="ladder-standings"),
    path("ladders/<slug:slug>/entries/", views.LadderEntryView.as_view(), name="ladder-enter"),
    path("ladders/<slug:slug>/entries/<id:bot_id>/", views.LadderLeaveView.as_view(), name="ladder-leave"),
    path(
        "ladders/<slug:slug>/bots/<id:bot_id>/history/", views.LadderHistoryView.as_view(), name="ladder-history"
    ),
    path("ladders/<slug:slug>/matchmake/", views.LadderMatchmakeView.as_view(), name="ladder-matchmake"),
    path("tournaments/", views.TournamentListView.as_view(), name="tournament-list"),
    path("tournaments/<slug:slug>/", views.TournamentDetailView.as_view(), name="tournament-detail"),
    path("tournaments/<slug:slug>/entries/", views.TournamentEntryView.as_view(), name="tournament-enter"),
    path("tournaments/<slug:slug>/<str:action>/", views.TournamentActionView.as_view(), name="tournament-action"),
    # Anything else under /api/ is a JSON 404, never the site's HTML page.
    re_path(r"^[\s\S]*$", not_found),  # [\s\S]: a path may hold a newline
]
