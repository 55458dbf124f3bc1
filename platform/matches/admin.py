from django.contrib import admin

from .models import Challenge, Match, MatchSeat


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    fields = ["seat", "bot_version", "reference_bot", "rank", "score", "wins", "strikes", "forfeited", "fault_kind", "fault_reason"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    # Results are written only by the worker path; the admin shows them.
    list_display = ["pk", "kind", "status", "queued_at", "started_at", "finished_at", "attempts"]
    list_filter = ["kind", "status"]
    exclude = ["replay_gz", "decision_ms_gz"]
    readonly_fields = [
        "kind", "status", "rules", "seed", "deals", "duplicate", "queued_at", "started_at", "finished_at",
        "time_per_decision", "time_bank", "time_per_match",
        "deadline", "attempts", "attempt_token", "rounds_played", "games_played", "timings", "error",
        # the worker path's bookkeeping: never edited by hand (and Django's split date-time widget
        # leaves its two inputs without labels)
        "enqueued_at", "stale_after", "lease_expires_at", "worker", "avoid_worker", "avoid_until", "send_failed_at",
    ]
    inlines = [MatchSeatInline]

    def has_add_permission(self, request):
        return False


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ["pk", "challenger", "ladder", "match", "created_at"]
    list_select_related = ["challenger", "ladder", "match"]
    search_fields = ["challenger__username"]
    readonly_fields = ["challenger", "ladder", "match", "created_at"]

    def has_add_permission(self, request):
        return False
