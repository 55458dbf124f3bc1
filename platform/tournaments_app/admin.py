"""The organizer's desk: tournaments with entries, rounds and log inline; actions call the services."""

from __future__ import annotations

from core.admin import plain_if_not_viewable
from core.rule_forms import rule_fields_form
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS
from tournaments.standings import TIE_BREAKS

from . import selectors, services
from .forms import BulkEntriesForm, ConfirmForm, OrderedChoiceField
from .models import Entry, Table, Tournament, TournamentEvent, TournamentRound
from .services import TournamentError

#: the rule options as form fields (from engine.rules); the table size is the rules' players
TournamentRuleFields = rule_fields_form()
RULE_FIELDS = list(TournamentRuleFields.base_fields)

#: fields an organizer sets; they are read-only once the tournament has started
OPTION_FIELDS = ["name", "slug", "description", "format", "rules", "deals", "duplicate", "rounds", "cycles",
                 "tie_breaks", "seed", "time_per_decision", "time_bank", "time_per_match", "seed_ladder",
                 "allow_same_owner"]


class TournamentForm(TournamentRuleFields, forms.ModelForm):  # type: ignore[valid-type,misc]  # made by rule_fields_form
    """Options checked by services.tournament_options, so the admin and the code agree.

    The rules are one field per option of engine.rules (``rule_<option>``); players is the table size."""

    tie_breaks = OrderedChoiceField(
        [(name, selectors.TIE_BREAK_TITLES.get(name, name)) for name in TIE_BREAKS], initial=list(TIE_BREAKS),
        help_text="Ties on points are broken by these, first place first; leave a place empty to use fewer.",
    )
    seed = forms.IntegerField(
        required=False,
        help_text="Empty: a random seed drawn when the tournament starts (recommended: nobody can know the "
        "deals in advance). The public sees the seed once the tournament is finished.",
    )
    slug = forms.SlugField(required=False, help_text="Empty: made from the name.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_rules_initial(self.instance.rules if self.instance.pk else {"players": 2, "rounds": 1})
        for clock in CLOCK_BOUNDS:  # empty: the default of sandbox.limits
            if clock in self.fields:
                self.fields[clock].required = False

    def clean_time_per_decision(self):
        return self._clock("time_per_decision")

    def clean_time_bank(self):
        return self._clock("time_bank")

    def clean_time_per_match(self):
        return self._clock("time_per_match")

    def _clock(self, name: str) -> float:
        value = self.cleaned_data.get(name)
        return getattr(DEFAULT_LIMITS, name) if value is None else value

    class Meta:
        model = Tournament
        fields = [f for f in OPTION_FIELDS if f != "rules"]

    def clean(self):
        data = super().clean()
        rules = self.clean_rules_fields()
        if self.errors or rules is None:
            return data
        options = {key: data.get(key) for key in OPTION_FIELDS}
        options["rules"] = rules
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
    fields = ["bot", "version", "status", "same_owner", "seeding", "withdraw_link"]
    readonly_fields = ["version", "status", "same_owner", "seeding", "withdraw_link"]
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

    @admin.display(description="same owner as")
    def same_owner(self, entry):
        if entry.pk is None:
            return ""
        others = entry.tournament.entries.filter(bot__owner_id=entry.bot.owner_id).exclude(pk=entry.pk)
        return ", ".join(others.values_list("name", flat=True)) or "-"

    @admin.display(description="seeding")
    def seeding(self, entry):
        if entry.seed_position is None:
            return "-"
        rating = "unrated" if entry.seed_rating is None else f"{entry.seed_rating:.1f}"
        return f"#{entry.seed_position} ({rating})"

    @admin.display(description="")
    def withdraw_link(self, entry):
        if entry.pk is None:  # a row not saved yet: nothing to withdraw (and no tournament to filter by)
            return ""
        url = reverse("admin:tournaments_entry_changelist") + f"?tournament__id__exact={entry.tournament_id}"
        if entry.status != Entry.Status.ACTIVE or entry.tournament.is_over:
            return format_html('<a href="{}">entries…</a>', url)
        dq = reverse("admin:tournaments_tournament_confirm", args=[entry.tournament_id, "disqualify", entry.pk])
        return format_html('<a href="{}">withdraw…</a> · <a href="{}">disqualify…</a>', url, dq)


class TournamentRoundInline(admin.TabularInline):
    model = TournamentRound
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
        for table in rnd.tables.prefetch_related("seats__entry").select_related("match"):
            seats = ", ".join(
                f"{s.entry.name}{f' ({s.rank})' if s.rank else ''}" for s in table.seats.all()
            )
            # a link only where there is a match to open (an empty link has no name: axe-core)
            if table.bye:
                rows.append(format_html("bye: {}", seats))
            elif table.match_id:
                url = reverse("admin:matches_match_change", args=[table.match_id])
                rows.append(format_html('{}. {} <a href="{}">#{} {}</a>{}', table.number, seats, url, table.match_id,
                                        table.match.status, self._table_links(rnd.tournament, table)))
            elif table.done:
                rows.append(format_html("{}. {} void", table.number, seats))
            else:
                rows.append(format_html("{}. {} held{}", table.number, seats, self._table_links(rnd.tournament, table)))
        return mark_safe("<br>".join(rows))  # each row escaped by format_html

    @staticmethod
    def _table_links(tournament, table):
        """re-run… / void… of one table, while the tournament runs (re-run) or is paused (void only)."""
        links = []
        actions = {"running": ("rerun", "void"), "paused": ("void",)}.get(tournament.status, ())
        for action in actions:
            url = reverse("admin:tournaments_tournament_confirm", args=[tournament.pk, action, table.pk])
            links.append(format_html(' <a class="table-action" href="{}">{}…</a>', url,
                                     "re-run" if action == "rerun" else "void"))
        return mark_safe("".join(links))

    @admin.display(description="why this pairing")
    def why(self, rnd):
        return format_html('<pre class="pairing-why">{}</pre>', "\n".join(rnd.explanation))


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




def _started(tournament) -> bool:
    return tournament is not None and tournament.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION)


def _editable(fields: list[str]) -> list[str]:
    """The option fields with the stored rule set replaced by one field per rule option."""
    at = fields.index("rules")
    return [*fields[:at], *RULE_FIELDS, *fields[at + 1:]]


def _progress_html(progress) -> str:
    return format_html(
        '<div class="admin-progress"><progress value="{}" max="{}"></progress><span>{} of {} matches</span></div>',
        progress.done, max(progress.total, 1), progress.done, progress.total,
    )


def _run(modeladmin, request, queryset, service, done: str, **extra):
    """Call ``service`` for each selected object; report each success and each refusal."""
    for obj in queryset:
        try:
            service(obj, actor=request.user, **extra)
        except TournamentError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
        else:
            modeladmin.message_user(request, f"{obj}: {done}", messages.SUCCESS)


def _confirm_selected(modeladmin, request, queryset, service, action: str, what: str, done: str):
    """A list action that cannot be undone: a page asks for a reason (public) and a tick first, as the
    admin's own "delete selected" does; its answer comes back to the same action."""
    form = ConfirmForm(request.POST if "reason" in request.POST else None)
    if form.is_bound and form.is_valid():
        _run(modeladmin, request, queryset, service, done, reason=form.cleaned_data["reason"])
        return None
    return TemplateResponse(request, "admin/tournaments/confirm.html", {
        **modeladmin.admin_site.each_context(request), "opts": modeladmin.model._meta, "title": f"{what}?",
        "what": what, "objects": list(queryset), "form": form, "action": action,
        "selected": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),
    })


#: irreversible actions of a tournament's page that ask for a reason: action -> (what is acted on, title,
#: service, what happened). The target is the tournament, an entry or a table of it.
CONFIRMED = {
    "cancel": ("tournament", "Cancel the tournament", services.tournament_cancel, "cancelled"),
    "disqualify": ("entry", "Disqualify the entry", services.entry_disqualify, "disqualified"),
    "rerun": ("table", "Re-run the match", services.table_rerun, "re-run as a new match"),
    "void": ("table", "Void the match", services.table_void, "void: counted for nobody"),
}
CONFIRM_NOTES = {
    "cancel": "The tournament ends without a result; queued matches are cancelled, played ones stay.",
    "disqualify": "Later rounds skip the entry; its results stay and it is listed last.",
    "rerun": "The table plays again with the same seats and deals; its result so far no longer counts.",
    "void": "The table's match counts for nobody; the round goes on without it.",
}


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    form = TournamentForm
    list_display = ["name", "status", "format", "seats", "entry_count", "progress", "created_at"]
    list_filter = ["status", "format"]
    search_fields = ["name", "slug"]
    inlines = [EntryInline, TournamentRoundInline, EventInline]
    actions = ["open_registration", "start", "pause", "resume", "rerun_failed", "cancel"]
    readonly_fields = ["seats", "status", "progress", "current_round", "total_rounds", "page", "created_by",
                       "started_at", "finished_at"]

    class Media:
        # the styles of the progress bar, the pairings' explanations and the action buttons,
        # and the cancel button's confirmation: no inline style or script (the site's CSP)
        css = {"all": ["tournaments/admin.css"]}
        js = ["tournaments/admin.js"]

    def get_inlines(self, request, obj=None):
        return [EntryInline] if obj is None else self.inlines

    def get_fields(self, request, obj=None):
        options = OPTION_FIELDS if _started(obj) else _editable(OPTION_FIELDS)
        if obj is None:
            return options
        head = ["status", "progress", "page"]
        fields = [*head, *options, *(f for f in self.readonly_fields if f not in head)]
        if obj.format == Tournament.Format.ROUND_ROBIN and obj.seats > 2:
            fields.insert(fields.index("total_rounds") + 1, "pairs")
        return plain_if_not_viewable(request, fields, _creator_link())

    def get_fieldsets(self, request, obj=None):
        fields = self.get_fields(request, obj)
        if not any(f in RULE_FIELDS for f in fields):
            return [(None, {"fields": fields})]
        cut = fields.index(RULE_FIELDS[0])
        rest = [f for f in fields[cut:] if f not in RULE_FIELDS]
        return [
            (None, {"fields": fields[:cut]}),
            ("Rules", {"fields": RULE_FIELDS, "classes": ["rule-fields"],
                       "description": "Every option of the rule set (RULES.md) with its allowed values; "
                       "players is the table size."}),
            ("Schedule, tie-breaks and clocks", {"fields": rest}),
        ]

    #: buttons on a tournament's page: action -> (service, label, statuses it applies to, what happened);
    #: cancel is a link to its confirmation page (CONFIRMED)
    BUTTONS = {
        "open_registration": (services.tournament_open_registration, "Open registration", ("draft",), "registration open"),
        "start": (services.tournament_start, "Start", ("draft", "registration"), "started"),
        "pause": (services.tournament_pause, "Pause", ("running",), "paused"),
        "resume": (services.tournament_resume, "Resume", ("paused",), "resumed"),
        "rerun_failed": (services.tournament_rerun_failed, "Re-run failed matches", ("running", "paused"),
                         "failed matches queued again"),
    }

    def get_queryset(self, request):
        return selectors.tournament_list()

    def get_urls(self):
        do = path("<int:pk>/do/<str:action>/", self.admin_site.admin_view(self.do_action),
                  name="tournaments_tournament_do")
        confirm = path("<int:pk>/confirm/<str:action>/<int:target>/", self.admin_site.admin_view(self.confirm_action),
                       name="tournaments_tournament_confirm")
        bulk = path("<int:pk>/entries/", self.admin_site.admin_view(self.bulk_entries),
                    name="tournaments_tournament_bulk_entries")
        return [do, confirm, bulk, *super().get_urls()]

    def _changeable(self, request, pk: int) -> Tournament:
        tournament = get_object_or_404(Tournament, pk=pk)
        if not self.has_change_permission(request, tournament):
            raise PermissionDenied
        return tournament

    def confirm_action(self, request, pk: int, action: str, target: int):
        """Cancel, disqualify, re-run or void one thing: a reason (shown in the public log) and a tick."""
        tournament = self._changeable(request, pk)
        if action not in CONFIRMED:
            raise Http404(f"no tournament action {action!r}")
        kind, title, service, done = CONFIRMED[action]
        if kind == "tournament":
            obj = tournament if target == tournament.pk else None
        elif kind == "entry":
            obj = Entry.objects.filter(pk=target, tournament=tournament).first()
        else:
            obj = Table.objects.filter(pk=target, round__tournament=tournament, bye=False).select_related(
                "round", "match").prefetch_related("seats__entry").first()
        if obj is None:
            raise Http404(f"no {kind} {target} in {tournament}")
        form = ConfirmForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            _run(self, request, [obj], service, done, reason=form.cleaned_data["reason"])
            return redirect("admin:tournaments_tournament_change", pk)
        if kind == "table":
            seats = ", ".join(s.entry.name for s in obj.seats.all())
            label = f"round {obj.round.number} table {obj.number} ({seats})" + (
                f", match #{obj.match_id} {obj.match.status}" if obj.match_id else "")
        else:
            label = str(obj)
        return TemplateResponse(request, "admin/tournaments/confirm.html", {
            **self.admin_site.each_context(request), "opts": Tournament._meta, "original": tournament,
            "title": f"{title}?", "what": title, "objects": [label], "note": CONFIRM_NOTES[action], "form": form,
        })

    def bulk_entries(self, request, pk: int):
        """Enter many bots at once: a ladder's active bots and/or pasted owner/bot names, all or nothing."""
        tournament = self._changeable(request, pk)
        form = BulkEntriesForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            try:
                added, skipped = services.entries_add_bulk(
                    tournament, ladder=form.cleaned_data["ladder"], names=form.cleaned_data["names"],
                    actor=request.user)
            except TournamentError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, str(exc))
            else:
                text = f"{len(added)} entr{'y' if len(added) == 1 else 'ies'} added"
                if added:
                    text += ": " + ", ".join(e.name for e in added)
                if skipped:
                    text += f"; already entered, skipped: {', '.join(skipped)}"
                self.message_user(request, text, messages.SUCCESS)
                return redirect("admin:tournaments_tournament_change", pk)
        return TemplateResponse(request, "admin/tournaments/bulk_entries.html", {
            **self.admin_site.each_context(request), "opts": Tournament._meta, "original": tournament,
            "title": f"Add entries to {tournament}", "form": form,
            "open": tournament.status in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION),
        })

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
            failed = Table.objects.filter(round__tournament=tournament, done=False, match__status__in=stuck)
            buttons = [(name, label) for name, (_, label, statuses, _) in self.BUTTONS.items()
                       if tournament.status in statuses and (name != "rerun_failed" or failed.exists())]
        links = []
        if tournament is not None and self.has_change_permission(request, tournament):
            if tournament.status in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
                links.append((reverse("admin:tournaments_tournament_bulk_entries", args=[tournament.pk]),
                              "Add entries in bulk"))
            if not tournament.is_over:
                links.append((reverse("admin:tournaments_tournament_confirm",
                                      args=[tournament.pk, "cancel", tournament.pk]), "Cancel tournament…"))
        extra_context = {**(extra_context or {}), "tournament_buttons": buttons, "tournament_links": links}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_readonly_fields(self, request, obj=None):
        fields = [*self.readonly_fields, "pairs"]
        if obj is not None and obj.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
            fields = [*OPTION_FIELDS, *fields]
        return plain_if_not_viewable(request, fields, _creator_link())

    @admin.display(description="created by")
    def created_by_text(self, tournament):
        return tournament.created_by.get_username() if tournament.created_by_id else "-"

    @admin.display(description="meetings")
    def pairs(self, tournament):
        coverage = selectors.round_robin_pair_coverage(tournament)
        if coverage is None:
            return "scheduled at the start"
        return coverage.text

    def get_form(self, request, obj=None, change=False, **kwargs):
        if _started(obj):
            kwargs["form"] = forms.ModelForm  # every option is read-only now
        return super().get_form(request, obj, change=change, **kwargs)

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
        if not tournament.pk or not tournament.slug:  # a change refused with the slug left empty
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

    @admin.action(description="Cancel (asks for a reason)")
    def cancel(self, request, queryset):
        return _confirm_selected(self, request, queryset, services.tournament_cancel, "cancel",
                                 "Cancel these tournaments", "cancelled")


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

    @admin.action(description="Disqualify (asks for a reason; later rounds skip it, listed last)")
    def disqualify(self, request, queryset):
        return _confirm_selected(self, request, queryset, services.entry_disqualify, "disqualify",
                                 "Disqualify these entries", "disqualified")
