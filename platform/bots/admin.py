from core.admin import plain_if_not_viewable
from django.contrib import admin

from .models import Bot, BotVersion

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
class BotAdmin(admin.ModelAdmin):
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
class BotVersionAdmin(admin.ModelAdmin):
    # Versions are immutable: uploads go through the site's form and its checks.
    list_display = ["__str__", "status", "size", "uploaded_at"]
    list_filter = ["status"]
    search_fields = ["bot__name", "bot__owner__username", "sha256"]
    exclude = ["source"]
    readonly_fields = [
        "bot", "number", "filename", "size", "sha256", "uploaded_at", "status",
        "rejection_reason", "validation_log", "validated_at",
    ]

    def has_add_permission(self, request):
        return False
