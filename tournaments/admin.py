"""The organizer's desk: tournaments with entries, rounds and log inline; actions call the services."""

from __future__ import annotations

from core.admin import plain_if_not_viewable
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from . import selectors, services
from .models import Entry, Pairing, Round, Tournament, TournamentEvent
from .services import TournamentError
from .standings import TIE_BREAKS

#: fields an organizer sets; they are read-only once the tournament has started
OPTION_FIELDS = ["name", "slug", "description", "format", "rules", "games", "duplicate", "rounds", "cycles",
                 "tie_breaks", "seed"]


class TournamentForm(forms.ModelForm):
    """Options checked by services.tournament_options, so the admin and the code agree."""

    rules = forms.JSONField(
        initial={"players": 2, "rounds": 1}, required=False,  # {} / [] / empty: every option at its default
        help_text="Rule options of RULES.md as JSON; players is the table size. Missing options take their "
        "default ({} or empty: all defaults).",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
    )
    tie_breaks = forms.JSONField(
        initial=list(TIE_BREAKS), required=False,
        help_text=f"JSON list, in order, from: {', '.join(TIE_BREAKS)}.",
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
    )
    seed = forms.IntegerField(
        required=False,
        help_text="Empty: a random seed drawn when the tournament starts (recommended: nobody can know the "
        "deals in advance). The public sees the seed once the tournament is finished.",
    )
    slug = forms.SlugField(required=False, help_text="Empty: made from the name.")

    class Meta:
        model = Tournament
        fields = OPTION_FIELDS

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        options = {key: data.get(key) for key in OPTION_FIELDS}
        if options["tie_breaks"] is None:
            options["tie_breaks"] = list(TIE_BREAKS)
        if options["rules"] is None:  # the JSON field reads {} and [] as empty: every rule at its default
            options["rules"] = {}
        try:
            services.tournament_options(**options, exclude_pk=self.instance.pk)
        except TournamentError as exc:
            # On the field at fault, which also keeps the model's own check of that field from repeating it.
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
            return data
        self.options = options
        return data


class EntryInlineForm(forms.ModelForm):
    class Meta:
        model = Entry
        fields = ["bot"]

    def clean_bot(self):
        from bots.selectors import bot_playing_version

        bot = self.cleaned_data["bot"]
        if self.instance.pk is None and bot is not None and bot_playing_version(bot) is None:
            raise forms.ValidationError(f"{bot} has no active version: upload one and wait until its validation passes")
        return bot


class EntryInline(admin.TabularInline):
    model = Entry
    form = EntryInlineForm
    fields = ["bot", "version", "status", "withdraw_link"]
    readonly_fields = ["version", "status", "withdraw_link"]
    autocomplete_fields = ["bot"]
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return obj is None or obj.status in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION)

    def has_change_permission(self, request, obj=None):
        return False

    def get_fields(self, request, obj=None):
        return plain_if_not_viewable(request, super().get_fields(request, obj), VERSION_LINK)

    def get_readonly_fields(self, request, obj=None):
        return plain_if_not_viewable(request, super().get_readonly_fields(request, obj), VERSION_LINK)

    @admin.display(description="version")
    def version_text(self, entry):
        return entry.version.label if entry.version_id else "-"

    @admin.display(description="")
    def withdraw_link(self, entry):
        if entry.pk is None:  # a row not saved yet: nothing to withdraw (and no tournament to filter by)
            return ""
        url = reverse("admin:tournaments_entry_changelist") + f"?tournament__id__exact={entry.tournament_id}"
        return format_html('<a href="{}">withdraw / disqualify…</a>', url)


class RoundInline(admin.TabularInline):
    model = Round
    fields = ["number", "status", "tables", "why"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-number"]

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="tables (rank) and matches")
    def tables(self, rnd):
        rows = []
        for pairing in rnd.pairings.prefetch_related("seats__entry").select_related("match"):
            seats = ", ".join(
                f"{s.entry.name}{f' ({s.rank})' if s.rank else ''}" for s in pairing.seats.all()
            )
            if pairing.bye:
                rows.append((f"bye: {seats}", "", ""))
            elif pairing.match_id:
                url = reverse("admin:matches_match_change", args=[pairing.match_id])
                rows.append((f"{pairing.number}. {seats} ", url, f"#{pairing.match_id} {pairing.match.status}"))
            else:
                rows.append((f"{pairing.number}. {seats} ", "", "held"))
        return format_html_join(mark_safe("<br>"), '{}<a href="{}">{}</a>', rows)

    @admin.display(description="why this pairing")
    def why(self, rnd):
        return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', "\n".join(rnd.explanation))


class EventInline(admin.TabularInline):
    model = TournamentEvent
    fields = ["at", "who", "action", "message"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-at", "-pk"]
    verbose_name_plural = "log"

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="who")
    def who(self, event):
        return event.who


#: read-only foreign keys the admin shows as links, and the permission the link's page needs
VERSION_LINK = {"version": "bots.view_botversion"}


def _creator_link() -> dict:
    opts = get_user_model()._meta
    return {"created_by": f"{opts.app_label}.view_{opts.model_name}"}




def _progress_html(progress) -> str:
    return format_html(
        '<div style="display:flex;gap:.5em;align-items:center"><progress value="{}" max="{}" style="width:7em">'
        "</progress><span>{} of {} matches</span></div>",
        progress.done, max(progress.total, 1), progress.done, progress.total,
    )


def _run(modeladmin, request, queryset, service, done: str):
    """Call ``service`` for each selected object; report each success and each refusal."""
    for obj in queryset:
        try:
            service(obj, actor=request.user)
        except TournamentError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
        else:
            modeladmin.message_user(request, f"{obj}: {done}", messages.SUCCESS)


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    form = TournamentForm
    list_display = ["name", "status", "format", "seats", "entry_count", "progress", "created_at"]
    list_filter = ["status", "format"]
    search_fields = ["name", "slug"]
    inlines = [EntryInline, RoundInline, EventInline]
    actions = ["open_registration", "start", "pause", "resume", "rerun_failed", "cancel"]
    readonly_fields = ["seats", "status", "progress", "current_round", "total_rounds", "page", "created_by",
                       "started_at", "finished_at"]

    def get_inlines(self, request, obj=None):
        return [EntryInline] if obj is None else self.inlines

    def get_fields(self, request, obj=None):
        if obj is None:
            return OPTION_FIELDS
        head = ["status", "progress", "page"]
        fields = [*head, *OPTION_FIELDS, *(f for f in self.readonly_fields if f not in head)]
        if obj.format == Tournament.Format.ROUND_ROBIN and obj.seats > 2:
            fields.insert(fields.index("total_rounds") + 1, "pairs")
        return plain_if_not_viewable(request, fields, _creator_link())

    #: buttons on a tournament's page: action -> (service, label, statuses it applies to, what happened)
    BUTTONS = {
        "open_registration": (services.tournament_open_registration, "Open registration", ("draft",), "registration open"),
        "start": (services.tournament_start, "Start", ("draft", "registration"), "started"),
        "pause": (services.tournament_pause, "Pause", ("running",), "paused"),
        "resume": (services.tournament_resume, "Resume", ("paused",), "resumed"),
        "rerun_failed": (services.tournament_rerun_failed, "Re-run failed matches", ("running", "paused"),
                         "failed matches queued again"),
        "cancel": (services.tournament_cancel, "Cancel tournament",
                   ("draft", "registration", "running", "paused"), "cancelled"),
    }

    def get_queryset(self, request):
        return selectors.tournament_list()

    def get_urls(self):
        do = path("<int:pk>/do/<str:action>/", self.admin_site.admin_view(self.do_action),
                  name="tournaments_tournament_do")
        return [do, *super().get_urls()]

    def do_action(self, request, pk: int, action: str):
        """A button on the tournament's page: the same services as the list's actions."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        tournament = get_object_or_404(Tournament, pk=pk)
        if not self.has_change_permission(request, tournament):
            raise PermissionDenied
        if action not in self.BUTTONS:
            raise Http404(f"no tournament action {action!r}")
        service, _, _, done = self.BUTTONS[action]
        _run(self, request, [tournament], service, done)
        return redirect("admin:tournaments_tournament_change", pk)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        tournament = Tournament.objects.filter(pk=object_id).first()
        buttons = []
        if tournament is not None and self.has_change_permission(request, tournament):
            stuck = ["failed", "cancelled"] if tournament.status == "running" else ["failed"]
            failed = Pairing.objects.filter(round__tournament=tournament, done=False, match__status__in=stuck)
            buttons = [(name, label) for name, (_, label, statuses, _) in self.BUTTONS.items()
                       if tournament.status in statuses and (name != "rerun_failed" or failed.exists())]
        extra_context = {**(extra_context or {}), "tournament_buttons": buttons}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_readonly_fields(self, request, obj=None):
        fields = [*self.readonly_fields, "pairs"]
        if obj is not None and obj.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
            fields = [*OPTION_FIELDS, *fields]
        return plain_if_not_viewable(request, fields, _creator_link())

    @admin.display(description="created by")
    def created_by_text(self, tournament):
        return tournament.created_by.get_username() if tournament.created_by_id else "-"

    @admin.display(description="pairs")
    def pairs(self, tournament):
        coverage = selectors.round_robin_pair_coverage(tournament)
        if coverage is None:
            return "scheduled at the start"
        return coverage.text

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None and obj.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
            kwargs["form"] = forms.ModelForm  # every option is read-only now
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is not None and "rules" in form.base_fields:
            form.base_fields["rules"].initial = obj.rules
        return form

    def save_model(self, request, obj, form, change):
        options = getattr(form, "options", None)
        if options is None:  # started: nothing of the tournament itself is edited here
            return
        if change:
            saved = services.tournament_update(obj, actor=request.user, **options)
        else:
            saved = services.tournament_create(actor=request.user, **options)
        for field in Tournament._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))
        obj._state.adding = False
        obj._state.db = saved._state.db

    def save_formset(self, request, form, formset, change):
        if formset.model is not Entry:
            return super().save_formset(request, form, formset, change)
        # The admin's change message reads these; entries are created by the service below.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for entry_form in formset.forms:
            if entry_form.instance.pk is None and entry_form.has_changed() and entry_form.cleaned_data.get("bot"):
                try:
                    services.entry_add(form.instance, entry_form.cleaned_data["bot"], actor=request.user)
                except TournamentError as exc:
                    self.message_user(request, str(exc), messages.ERROR)

    @admin.display(description="entries", ordering="entry_count")
    def entry_count(self, tournament):
        return getattr(tournament, "entry_count", None)

    @admin.display(description="progress")
    def progress(self, tournament):
        if hasattr(tournament, "matches_done"):
            p = selectors.tournament_progress(
                tournament, done=tournament.matches_done, paired=tournament.matches_paired,
                active=tournament.active_count,
            )
        else:
            p = selectors.tournament_progress(tournament)
        return _progress_html(p)

    @admin.display(description="public page")
    def page(self, tournament):
        if not tournament.pk:
            return "-"
        return format_html('<a href="{}">{}</a>', tournament.get_absolute_url(), tournament.get_absolute_url())

    @admin.action(description="Open registration")
    def open_registration(self, request, queryset):
        _run(self, request, queryset, services.tournament_open_registration, "registration open")

    @admin.action(description="Start (freeze versions, pair round 1)")
    def start(self, request, queryset):
        _run(self, request, queryset, services.tournament_start, "started")

    @admin.action(description="Pause (hold queued matches)")
    def pause(self, request, queryset):
        _run(self, request, queryset, services.tournament_pause, "paused")

    @admin.action(description="Resume")
    def resume(self, request, queryset):
        _run(self, request, queryset, services.tournament_resume, "resumed")

    @admin.action(description="Re-run failed matches")
    def rerun_failed(self, request, queryset):
        _run(self, request, queryset, services.tournament_rerun_failed, "failed matches queued again")

    @admin.action(description="Cancel")
    def cancel(self, request, queryset):
        _run(self, request, queryset, services.tournament_cancel, "cancelled")


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    list_display = ["name", "tournament", "version", "status"]
    list_filter = ["status", "tournament"]
    search_fields = ["name", "tournament__name"]
    actions = ["withdraw", "disqualify"]
    readonly_fields = ["tournament", "bot", "version", "name", "status", "created_at"]
    fields = readonly_fields

    def has_add_permission(self, request):
        return False  # entries are added on their tournament's page

    def has_delete_permission(self, request, obj=None):
        return False  # an entry with results must stay; withdraw it instead

    @admin.action(description="Withdraw (later rounds skip it, results stay)")
    def withdraw(self, request, queryset):
        _run(self, request, queryset, services.entry_withdraw, "withdrawn")

    @admin.action(description="Disqualify (later rounds skip it, listed last)")
    def disqualify(self, request, queryset):
        _run(self, request, queryset, services.entry_disqualify, "disqualified")
