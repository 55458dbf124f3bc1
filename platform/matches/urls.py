import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "matches"

urlpatterns = [
    path("", views.match_list, name="list"),
    path("queue/", views.queue, name="queue"),
    path("<id:match_id>/", views.match_detail, name="detail"),
    path("<id:match_id>/replay/", views.replay_viewer, name="replay_viewer"),
    path("<id:match_id>/replay.json", views.match_replay, name="replay"),
    path("<id:match_id>/seats/<id:seat>/log.txt", views.seat_log, name="log"),
]
