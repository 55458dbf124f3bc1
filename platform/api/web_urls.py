"""Web pages of the API app (tokens), mounted at /account/."""

from django.urls import path

from . import web

app_name = "api_web"

urlpatterns = [
    path("tokens/new/", web.token_new, name="token_new"),
    path("tokens/<int:token_id>/revoke/", web.token_revoke, name="token_revoke"),
]
