from django.contrib import admin

from .models import WorkerHeartbeat


def plain_if_not_viewable(request, fields, links: dict) -> list:
    """``fields`` with each read-only foreign key of ``links`` (field -> view permission) swapped for its
    plain-text ``<field>_text`` twin when the user lacks the permission: the admin's link would answer 403."""
    return [f"{name}_text" if name in links and not request.user.has_perm(links[name]) else name for name in fields]


class SuperuserWritesAdmin(admin.ModelAdmin):
    """A model others may be allowed to view, but only superusers add, change or delete, whatever
    permissions a staff user was given (an organizer never rewrites another user's bot)."""

    def has_add_permission(self, request, *args):
        return request.user.is_active and request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser and super().has_delete_permission(request, obj)


class SuperuserOnlyAdmin(admin.ModelAdmin):
    """Only superusers see or touch these (users and groups), whatever permissions staff were given."""

    def _superuser(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_module_permission(self, request):
        return self._superuser(request)

    def has_view_permission(self, request, obj=None):
        return self._superuser(request)

    def has_add_permission(self, request, *args):
        return self._superuser(request)

    def has_change_permission(self, request, obj=None):
        return self._superuser(request)

    def has_delete_permission(self, request, obj=None):
        return self._superuser(request)


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "python_platform"]
    readonly_fields = ["hostname", "last_seen", "python_platform"]
