"""Organizers create and edit ladders here; entries and rating changes are read-only records."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, Q

from matches.models import Match

from . import services
from .models import Ladder, LadderEntry, RatingChange


class LadderEntryInline(admin.TabularInline):
    model = LadderEntry
    fields = ["bot", "status", "rating", "matches_played", "fault_streak", "last_matched_at", "suspended_reason"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # owners enter their bots from the bot page


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "seats", "games", "duplicate", "active", "entry_count", "pending", "max_pending"]
    list_filter = ["active"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [LadderEntryInline]
    actions = ["matchmake_now"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "active"]}),
        ("Rules and format", {"fields": ["rules", "seats", "games", "duplicate"]}),
        ("Limits", {"fields": ["time_per_decision", "time_bank", "max_pending", "fault_limit"]}),
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                entry_count=Count("entries", filter=Q(entries__status=LadderEntry.Status.ACTIVE), distinct=True),
                pending=Count(
                    "ladder_matches",
                    filter=Q(ladder_matches__match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING]),
                    distinct=True,
                ),
            )
        )

    @admin.display(description="entries", ordering="entry_count")
    def entry_count(self, obj):
        return obj.entry_count

    @admin.display(description="queued+running", ordering="pending")
    def pending(self, obj):
        return obj.pending

    @admin.action(description="Run matchmaking now")
    def matchmake_now(self, request, queryset):
        for ladder in queryset:
            created = services.ladder_matchmake(ladder)
            self.message_user(request, f"{ladder.name}: {len(created)} match(es) created", messages.SUCCESS)


@admin.register(LadderEntry)
class LadderEntryAdmin(admin.ModelAdmin):
    list_display = ["bot", "ladder", "status", "rating", "matches_played", "fault_streak"]
    list_filter = ["ladder", "status"]
    search_fields = ["bot__name", "bot__owner__username"]
    list_select_related = ["bot__owner", "ladder"]
    readonly_fields = [
        "ladder", "bot", "status", "rating", "matches_played", "entered_at", "last_matched_at",
        "fault_streak", "suspended_reason", "suspended_version",
    ]

    def has_add_permission(self, request):
        return False


@admin.register(RatingChange)
class RatingChangeAdmin(admin.ModelAdmin):
    # The rating history is recomputed (manage.py recompute_ratings), never edited by hand.
    list_display = ["match", "bot_version", "ladder", "rank", "before", "after", "matches_after"]
    list_filter = ["ladder"]
    list_select_related = ["bot_version__bot__owner", "ladder", "match"]
    readonly_fields = ["ladder", "match", "entry", "bot_version", "rank", "before", "after", "matches_after"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
