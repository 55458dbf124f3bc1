"""The matches app's API URLs, included under /api/ (namespace ``api``) by ``api.urls``."""

from django.urls import path

from . import apis

urlpatterns = [
    path("bots/<id:bot_id>/versions/", apis.VersionListView.as_view(), name="version-list"),
    path("bots/<id:bot_id>/versions/<id:number>/", apis.VersionDetailView.as_view(), name="version-detail"),
    path("matches/", apis.MatchListView.as_view(), name="match-list"),
    path("matches/<id:match_id>/", apis.MatchDetailView.as_view(), name="match-detail"),
    path("matches/<id:match_id>/replay/", apis.MatchReplayView.as_view(), name="match-replay"),
    path("queue/", apis.QueueView.as_view(), name="queue"),
]
