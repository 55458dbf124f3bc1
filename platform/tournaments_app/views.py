"""Public pages of tournaments: the list, a tournament's page, its live progress (JSON) and standings CSV."""

from __future__ import annotations

import csv

from core.cachekeys import digest
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.functional import SimpleLazyObject
from django.utils.http import content_disposition_header
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from . import selectors, services
from .models import Entry, Tournament

# A spreadsheet runs a cell starting with one of these as a formula; bot names are user input.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def tournament_list(request):
    tournaments = list(selectors.tournament_list()[:200])
    rows = [{"tournament": t, "progress": selectors.counted_progress(t)} for t in tournaments]
    return render(request, "tournaments/tournament_list.html", {"rows": rows})


def tournament_detail(request, slug: str):
    """A tournament's page. What it shows of the results, the rounds, the entries and the log is
    rendered once per state and kept (``{% cache %}``) under a name of what it shows (``*_key``): the
    same for every visitor until a result, a match, a round, an entry or an event changes it."""
    tournament = get_object_or_404(Tournament.objects.select_related("seed_ladder"), slug=slug)
    entries = list(selectors.tournament_entries(tournament))  # read once: standings, seeding, owners
    counts = selectors.table_counts(tournament)  # read once: progress and the standings' key
    standings = selectors.tournament_standings(tournament, entries, counts)
    organizer = selectors.can_organize(request.user)
    rounds, round_numbers = selectors.tournament_rounds_shown(tournament, request.GET.get("round"), entries)
    events = selectors.tournament_events(tournament, request.user)
    enterable = selectors.bots_to_enter(tournament, request.user)
    cross_page = selectors.crosstable_page(standings, _page(request.GET.get("cross")))
    return render(
        request,
        "tournaments/tournament_detail.html",
        {
            "tournament": tournament,
            "rules_changed": selectors.rules_changed(tournament.rules),
            "progress": selectors.page_progress(tournament, entries, counts),
            "standings": standings,
            "podium": selectors.tournament_podium(tournament, standings),
            "tie_break_titles": [selectors.TIE_BREAK_TITLES.get(tb, tb) for tb in tournament.tie_breaks],
            # computed only when its cached table is not: read in the {% cache %} block below
            "crosstable": SimpleLazyObject(
                lambda: selectors.tournament_crosstable(tournament, standings, page=cross_page)
            ),
            "cross_page": cross_page,
            # the rendered standings and crosstable are cached under the results they show
            "results_key": selectors.tournament_results_key(tournament, entries, counts),
            "cache_seconds": selectors.STANDINGS_CACHE_SECONDS,
            "rounds": rounds,
            "round_numbers": round_numbers,
            "entries": entries,
            # the entries' table has the owners' "leave" forms (and their CSRF token) while registration is open
            "entries_key": selectors.entries_digest(entries) if enterable is None else None,
            "events": events,
            "events_key": digest(tournament.pk, events),
            "seed_visible": selectors.seed_visible(tournament, request.user),
            "pair_coverage": selectors.round_robin_pair_coverage(tournament),
            "clocks": selectors.tournament_clocks(tournament),
            "seeding": selectors.tournament_seeding(tournament, entries),
            "same_owner": selectors.same_owner_entries(tournament, entries),
            "organizer": organizer,
            "enterable": enterable,
            "live": tournament.status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED),
        },
    )


def _page(value) -> int:
    try:
        return int(value or 1)
    except ValueError:
        return 1


@require_POST
@login_required
def tournament_enter(request, slug: str):
    """A bot's owner enters it while registration is open."""
    from bots.models import Bot

    tournament = get_object_or_404(Tournament, slug=slug)
    form = forms.Form(request.POST)
    form.fields["bot"] = forms.ModelChoiceField(queryset=Bot.objects.filter(owner=request.user))
    if not form.is_valid():
        messages.error(request, "choose one of your bots to enter")
    else:
        bot = form.cleaned_data["bot"]
        try:
            services.entry_register(tournament, bot, user=request.user)
        except services.TournamentError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{bot} is entered in {tournament}")
    return redirect(tournament)


@require_POST
@login_required
def tournament_leave(request, slug: str, entry_id: int):
    """Take one's own entry out before the start."""
    entry = get_object_or_404(Entry.objects.select_related("bot", "tournament"), pk=entry_id, tournament__slug=slug)
    if entry.bot.owner_id != request.user.pk and not request.user.is_staff:
        messages.error(request, f"only the owner of {entry.bot} can take it out")
    else:
        try:
            services.entry_leave_before_start(entry, actor=request.user)
        except services.TournamentError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{entry.name} left {entry.tournament}")
    return redirect(entry.tournament)


@never_cache
def tournament_progress(request, slug: str):
    tournament = get_object_or_404(selectors.tournament_list(), slug=slug)
    return JsonResponse(selectors.counted_progress(tournament).as_dict())


def tournament_standings_csv(request, slug: str):
    tournament = get_object_or_404(Tournament, slug=slug)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, f"{tournament.slug}-standings.csv")
    writer = csv.writer(response)
    for row in selectors.standings_csv_rows(tournament):
        writer.writerow([_cell(value) for value in row])
    return response


def _cell(value: str) -> str:
    """Text a spreadsheet shows as text, never runs as a formula (numbers stay numbers)."""
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value if value.startswith(FORMULA_START) else value
