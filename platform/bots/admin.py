from core.admin import SuperuserWritesAdmin, plain_if_not_viewable
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from .models import Bot, BotVersion, SourceAccess

#: read-only foreign keys shown as links only to users who may open them
OWNER_LINK = {"owner": "auth.view_user"}


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    fields = ["number", "filename", "size", "sha256", "status", "uploaded_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Bot)
class BotAdmin(SuperuserWritesAdmin):
    """Organizers may be given the view permission; only superusers add, change or delete bots here."""

    list_display = ["name", "owner", "source_public", "created_at"]
    search_fields = ["name", "owner__username"]
    list_select_related = ["owner"]
    inlines = [BotVersionInline]

    fields = ["owner", "name", "description", "source_public", "pinned_version"]

    def get_fields(self, request, obj=None):
        if self.has_change_permission(request, obj):
            return self.fields
        return plain_if_not_viewable(request, self.fields, OWNER_LINK)

    def get_readonly_fields(self, request, obj=None):
        # a view-only user's form has every field read-only; the text twin must never be a form field
        if self.has_change_permission(request, obj):
            return self.readonly_fields
        return [*self.readonly_fields, *plain_if_not_viewable(request, self.fields, OWNER_LINK)]

    @admin.display(description="owner")
    def owner_text(self, bot):
        return bot.owner.username


@admin.register(BotVersion)
class BotVersionAdmin(SuperuserWritesAdmin):
    # Versions are immutable: uploads go through the site's form and its checks. The admin shows
    # neither the source nor the validation log: they are read on the version page, where a read by
    # anyone but the owner is allowed only as bots.selectors.private_read_reason says, and audited.
    list_display = ["__str__", "status", "size", "uploaded_at"]
    list_filter = ["status"]
    search_fields = ["bot__name", "bot__owner__username", "sha256"]
    fields = [
        "bot", "number", "filename", "size", "sha256", "uploaded_at", "status",
        "rejection_reason", "validated_at", "private_parts",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    @admin.display(description="source and validation log")
    def private_parts(self, version):
        return format_html(
            '<a href="{}">on the version page</a> (reads by others than the owner are audited)',
            reverse("bots:version", args=[version.bot_id, version.number]),
        )


@admin.register(SourceAccess)
class SourceAccessAdmin(admin.ModelAdmin):
    """The audit log of reads of private sources and logs: superusers only, never changed."""

    list_display = ["at", "username", "what", "label", "match_id", "reason", "path"]
    list_filter = ["what"]
    search_fields = ["username", "label", "path"]
    fields = list_display
    readonly_fields = list_display

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
