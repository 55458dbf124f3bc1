"""The challenge form's target, mounted at /account/ beside the token pages (its URL predates the
move from the api app)."""

from django.urls import path

from . import views

app_name = "challenges"

urlpatterns = [
    path("challenge/<int:bot_id>/", views.challenge_new, name="new"),
]
