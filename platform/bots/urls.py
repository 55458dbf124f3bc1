from django.urls import path

from . import views

app_name = "bots"

urlpatterns = [
    path("", views.bot_list, name="list"),
    path("new/", views.bot_new, name="new"),
    path("<int:bot_id>/", views.bot_detail, name="detail"),
    path("<int:bot_id>/edit/", views.bot_edit, name="edit"),
    path("<int:bot_id>/upload/", views.bot_upload, name="upload"),
    path("<int:bot_id>/pin/", views.bot_pin, name="pin"),
    path("<int:bot_id>/v<int:number>/", views.version_detail, name="version"),
    path("<int:bot_id>/v<int:number>/source/", views.version_source, name="source"),
    path("<int:bot_id>/v<int:number>/revalidate/", views.version_revalidate, name="revalidate"),
]
