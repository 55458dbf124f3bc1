"""URL map of the site."""

from django.contrib import admin
from django.urls import include, path

from web import views as web_views

admin.site.site_header = "Uno Arena administration"
admin.site.site_title = "Uno Arena admin"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("account/", include("api.web_urls")),
    path("account/", include("ladders.challenge_urls")),
    path("", include("core.urls")),
    path("", web_views.home, name="home"),
    path("", include("accounts.urls")),
    path("bots/", include("web.bot_urls")),
    path("matches/", include("matches.urls")),
    path("", include("web.urls")),
    path("ladders/", include("ladders.urls")),
    path("tournaments/", include("tournaments_app.urls")),
    path("versiontests/", include("versiontests.urls")),
    path("play/", include("play.urls")),
]
