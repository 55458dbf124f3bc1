import core.converters  # noqa: F401  (registers <id:...>)
from django.urls import path

from . import views

app_name = "versiontests"

urlpatterns = [
    path("", views.test_list, name="list"),
    path("new/", views.test_new, name="new"),
    path("<id:pk>/", views.test_detail, name="detail"),
    path("<id:pk>/live.json", views.test_live, name="live"),
    path("<id:pk>/cancel/", views.test_cancel, name="cancel"),
]
