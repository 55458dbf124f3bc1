import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "play"

urlpatterns = [
    path("", views.play_new, name="new"),
    path("<id:match_id>/", views.play_game, name="game"),
    path("<id:match_id>/state.json", views.play_state, name="state"),
    path("<id:match_id>/act", views.play_act, name="act"),
]
