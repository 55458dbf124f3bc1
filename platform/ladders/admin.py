"""Organizers create and edit ladders here; entries and rating changes are read-only records."""

from __future__ import annotations

from core.rule_forms import rule_fields_form
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import NON_FIELD_ERRORS
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


#: the rule options of engine.rules as form fields; players is the ladder's seats per match
LadderRuleFields = rule_fields_form(exclude=("players",))
RULE_FIELDS = list(LadderRuleFields.base_fields)


class LadderForm(LadderRuleFields, forms.ModelForm):  # type: ignore[valid-type,misc]  # made by rule_fields_form
    """The ladder with its rule set as one field per option (core.rule_forms); the model's clean checks
    the whole (ladders.checks.ladder_rules_clean)."""

    class Meta:
        model = Ladder
        fields = ["seats"]  # the admin's fieldsets list the rest; never "rules": built from the rule fields

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_rules_initial(self.instance.rules if self.instance.pk else {})

    def clean(self):
        data = super().clean()
        seats = data.get("seats")
        if seats is not None:
            rules = self.clean_rules_fields(extra={"players": seats})
            if rules is not None:
                self.instance.rules = rules
        return data

    def _update_errors(self, errors):
        # the model's clean reports the rule set on "rules", which is no field here: show it above the form
        if hasattr(errors, "error_dict") and "rules" in errors.error_dict:
            errors.error_dict.setdefault(NON_FIELD_ERRORS, []).extend(errors.error_dict.pop("rules"))
        super()._update_errors(errors)


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    form = LadderForm
    list_display = ["name", "slug", "seats", "deals", "duplicate", "active", "entry_count", "pending", "max_pending"]
    list_filter = ["active"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [LadderEntryInline]
    actions = ["matchmake_now"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "active"]}),
        ("Format", {"fields": ["seats", "deals", "duplicate", "allow_same_owner"]}),
        ("Rules", {"fields": RULE_FIELDS, "classes": ["rule-fields"],
                   "description": "Every option of the rule set (RULES.md) with its allowed values; the table "
                   "size is the seats per match above."}),
        ("Limits", {"fields": ["time_per_decision", "time_bank", "time_per_match", "max_pending", "fault_limit"]}),
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
