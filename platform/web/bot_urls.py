import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import bot_views as views

app_name = "bots"

urlpatterns = [
    path("", views.bot_list, name="list"),
    path("new/", views.bot_new, name="new"),
    path("<id:bot_id>/", views.bot_detail, name="detail"),
    path("<id:bot_id>/edit/", views.bot_edit, name="edit"),
    path("<id:bot_id>/upload/", views.bot_upload, name="upload"),
    path("<id:bot_id>/pin/", views.bot_pin, name="pin"),
    path("<id:bot_id>/v<id:number>/", views.version_detail, name="version"),
    path("<id:bot_id>/v<id:number>/source/", views.version_source, name="source"),
    path("<id:bot_id>/v<id:number>/revalidate/", views.version_revalidate, name="revalidate"),
]
