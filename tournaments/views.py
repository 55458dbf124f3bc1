"""Public pages of tournaments: the list, a tournament's page, its live progress (JSON) and standings CSV."""

from __future__ import annotations

import csv

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header
from django.views.decorators.cache import never_cache

from . import selectors
from .models import Tournament

# A spreadsheet runs a cell starting with one of these as a formula; bot names are user input.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def tournament_list(request):
    tournaments = list(selectors.tournament_list()[:200])
    rows = [
        {
            "tournament": t,
            "progress": selectors.tournament_progress(
                t, done=t.matches_done, paired=t.matches_paired, active=t.active_count
            ),
        }
        for t in tournaments
    ]
    return render(request, "tournaments/tournament_list.html", {"rows": rows})


def tournament_detail(request, slug: str):
    tournament = get_object_or_404(Tournament, slug=slug)
    standings = selectors.tournament_standings(tournament)
    organizer = selectors.can_organize(request.user)
    return render(
        request,
        "tournaments/tournament_detail.html",
        {
            "tournament": tournament,
            "rules_changed": selectors.rules_changed(tournament.rules),
            "progress": selectors.tournament_progress(tournament),
            "standings": standings,
            "tie_break_titles": [selectors.TIE_BREAK_TITLES.get(tb, tb) for tb in tournament.tie_breaks],
            "crosstable": selectors.tournament_crosstable(tournament, standings),
            "rounds": selectors.tournament_rounds(tournament),
            "entries": selectors.tournament_entries(tournament),
            "events": selectors.tournament_events(tournament),
            "organizer": organizer,
            "live": tournament.status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED),
        },
    )


@never_cache
def tournament_progress(request, slug: str):
    tournament = get_object_or_404(Tournament, slug=slug)
    return JsonResponse(selectors.tournament_progress(tournament).as_dict())


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
