from django.contrib import admin

from .models import WorkerHeartbeat


def plain_if_not_viewable(request, fields, links: dict) -> list:
    """``fields`` with each read-only foreign key of ``links`` (field -> view permission) swapped for its
    plain-text ``<field>_text`` twin when the user lacks the permission: the admin's link would answer 403."""
    return [f"{name}_text" if name in links and not request.user.has_perm(links[name]) else name for name in fields]


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "python_platform"]
    readonly_fields = ["hostname", "last_seen", "python_platform"]
