"""URL map of the REST API, mounted at /api/ (see docs/api.md): the schema, the API's own endpoints
(who you are, tokens), and each app's ``api_urls`` in the namespace ``api``.

This module is the top of the API, like ``arena.urls`` of the site: it includes the apps, which
import the rest of ``api`` (serializers, permissions, throttles, pagination), never this.
"""

import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import apis
from .exceptions import not_found

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves its script from ?script, not inline: the site's CSP allows no inline script
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("me/", apis.MeView.as_view(), name="me"),
    path("auth/token/", apis.TokenObtainView.as_view(), name="token-obtain"),
    path("tokens/", apis.TokenListView.as_view(), name="token-list"),
    path("tokens/<id:pk>/", apis.TokenDetailView.as_view(), name="token-detail"),
    path("", include("ladders.api_urls")),
    path("", include("matches.api_urls")),
    path("", include("bots.api_urls")),
    path("", include("tournaments_app.api_urls")),
    # Anything else under /api/ is a JSON 404, never the site's HTML page.
    re_path(r"^[\s\S]*$", not_found),  # [\s\S]: a path may hold a newline
]
