"""The ladders app's API URLs (ladders, and the bots and challenges whose answers need ladders),
included under /api/ (namespace ``api``) by ``api.urls``."""

from django.urls import path

from . import apis

urlpatterns = [
    path("bots/", apis.BotListView.as_view(), name="bot-list"),
    path("bots/public/", apis.PublicBotListView.as_view(), name="bot-public"),
    path("bots/<id:bot_id>/", apis.BotDetailView.as_view(), name="bot-detail"),
    path("bots/<id:bot_id>/pin/", apis.BotPinView.as_view(), name="bot-pin"),
    path("challenges/", apis.ChallengeListView.as_view(), name="challenge-list"),
    path("ladders/", apis.LadderListView.as_view(), name="ladder-list"),
    path("ladders/<slug:slug>/", apis.LadderDetailView.as_view(), name="ladder-detail"),
    path("ladders/<slug:slug>/standings/", apis.LadderStandingsView.as_view(), name="ladder-standings"),
    path("ladders/<slug:slug>/entries/", apis.LadderEntryView.as_view(), name="ladder-enter"),
    path("ladders/<slug:slug>/entries/<id:bot_id>/", apis.LadderLeaveView.as_view(), name="ladder-leave"),
    path(
        "ladders/<slug:slug>/bots/<id:bot_id>/history/", apis.LadderHistoryView.as_view(), name="ladder-history"
    ),
    path("ladders/<slug:slug>/matchmake/", apis.LadderMatchmakeView.as_view(), name="ladder-matchmake"),
]
