"""Site-wide pages."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from matches.selectors import match_list

from . import selectors

HOME_LADDERS = 6
HOME_LEADERS = 3
HOME_TOURNAMENTS = 6


def _active_ladders() -> list | None:
    """Active ladders with their entry counts and leaders; None while the ladders app is not installed."""
    ladders = selectors.home_ladders(HOME_LADDERS)
    if ladders is None:
        return None
    leaders = selectors.ladder_leaders(ladders, HOME_LEADERS)
    return [{"ladder": ladder, "leaders": leaders.get(ladder.pk, [])} for ladder in ladders]


def _current_tournaments() -> list | None:
    """Running, paused and open tournaments with their progress; None without the tournaments app."""
    current = selectors.home_tournaments(HOME_TOURNAMENTS)
    if current is None:
        return None
    from tournaments_app.selectors import tournament_progress

    return [
        {
            "tournament": t,
            "progress": tournament_progress(t, done=t.matches_done, paired=t.matches_paired, active=t.active_count),
        }
        for t in current
    ]


def home(request):
    return render(
        request,
        "core/home.html",
        {
            "counts": selectors.site_counts(),
            "recent": match_list(limit=8),
            "ladders": _active_ladders(),
            "tournaments": _current_tournaments(),
            "in_play": selectors.matches_in_play(),
        },
    )


@never_cache
def healthz(request):
    """The trivial view: no database, no template; what load_bench compares every page with."""
    return HttpResponse("ok", content_type="text/plain")
