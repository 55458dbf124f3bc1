from django.urls import path

from . import views

app_name = "matches"

urlpatterns = [
    path("", views.match_list, name="list"),
    path("queue/", views.queue, name="queue"),
    path("<int:match_id>/", views.match_detail, name="detail"),
    path("<int:match_id>/replay.json", views.match_replay, name="replay"),
    path("<int:match_id>/seats/<int:seat>/log.txt", views.seat_log, name="log"),
]
