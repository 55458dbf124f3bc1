"""The bots app's API URLs, included under /api/ (namespace ``api``) by ``api.urls``."""

from django.urls import path

from . import apis

urlpatterns = [
    path(
        "bots/<id:bot_id>/versions/<id:number>/source/",
        apis.VersionSourceView.as_view(),
        name="version-source",
    ),
]
