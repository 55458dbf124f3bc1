"""The tournament app's API URLs, included under /api/ (namespace ``api``) by ``api.urls``."""

from django.urls import path

from . import apis

urlpatterns = [
    path("tournaments/", apis.TournamentListView.as_view(), name="tournament-list"),
    path("tournaments/<slug:slug>/", apis.TournamentDetailView.as_view(), name="tournament-detail"),
    path("tournaments/<slug:slug>/entries/", apis.TournamentEntryView.as_view(), name="tournament-enter"),
    path("tournaments/<slug:slug>/<str:action>/", apis.TournamentActionView.as_view(), name="tournament-action"),
]
