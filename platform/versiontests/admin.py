"""Version tests in the admin: read-only records (owners start and cancel them on the site)."""

from __future__ import annotations

from django.contrib import admin

from .models import VersionTest, VersionTestPair


class VersionTestPairInline(admin.TabularInline):
    model = VersionTestPair
    fields = ["index", "attempt", "match", "state", "points", "counted_number", "llr_after", "counted_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(VersionTest)
class VersionTestAdmin(admin.ModelAdmin):
    list_display = ["pk", "owner", "new_version", "old_version", "ladder_name", "status", "llr", "created_at"]
    list_filter = ["status"]
    list_select_related = ["owner", "new_version__bot", "old_version__bot"]
    search_fields = ["owner__username", "new_version__bot__name", "old_version__bot__name"]
    inlines = [VersionTestPairInline]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False
