from django.urls import path

from . import views

app_name = "web"

urlpatterns = [
    path("matches/<int:match_id>/replay/", views.replay, name="replay"),
    path("guide/", views.bot_guide, name="guide"),
    path("guide/starter_bot.py", views.starter_bot, name="starter_bot"),
    path("live/queue.json", views.live_queue, name="live_queue"),
    path("live/matches/<int:match_id>.json", views.live_match, name="live_match"),
    path("live/bots/<int:bot_id>/v<int:number>.json", views.live_version, name="live_version"),
]
