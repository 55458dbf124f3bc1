import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "web"

urlpatterns = [
    path("replays/open/", views.replay_open, name="replay_open"),
    path("guide/", views.bot_guide, name="guide"),
    path("guide/starter_bot.py", views.starter_bot, name="starter_bot"),
    path("live/queue.json", views.live_queue, name="live_queue"),
    path("live/matches/<id:match_id>.json", views.live_match, name="live_match"),
    path("live/matches/<id:match_id>/events.json", views.live_events, name="live_events"),
    path("live/bots/<id:bot_id>/v<id:number>.json", views.live_version, name="live_version"),
]
