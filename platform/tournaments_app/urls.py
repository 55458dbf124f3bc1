import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "tournaments"

urlpatterns = [
    path("", views.tournament_list, name="list"),
    path("<slug:slug>/", views.tournament_detail, name="detail"),
    path("<slug:slug>/enter/", views.tournament_enter, name="enter"),
    path("<slug:slug>/entries/<id:entry_id>/leave/", views.tournament_leave, name="leave"),
    path("<slug:slug>/progress.json", views.tournament_progress, name="progress"),
    path("<slug:slug>/standings.csv", views.tournament_standings_csv, name="standings_csv"),
]
