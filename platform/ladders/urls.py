import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "ladders"

urlpatterns = [
    path("", views.ladder_list, name="list"),
    path("enter/<id:bot_id>/", views.ladder_enter, name="enter"),
    path("<slug:slug>/", views.ladder_detail, name="detail"),
    path("<slug:slug>/bots/<id:bot_id>/", views.entry_detail, name="entry"),
    path("<slug:slug>/bots/<id:bot_id>/leave/", views.ladder_leave, name="leave"),
]
