"""Site-wide pages."""

from django.apps import apps
from django.shortcuts import render

from bots.selectors import site_counts
from matches.selectors import match_list

HOME_LADDERS = 6
HOME_LEADERS = 3
HOME_TOURNAMENTS = 6


def _active_ladders() -> list | None:
    """Active ladders with their entry counts and leaders; None while the ladders app is not installed."""
    if not apps.is_installed("ladders"):
        return None
    from ladders.selectors import ladder_list, ladder_standings

    return [
        {"ladder": ladder, "leaders": [row for row in ladder_standings(ladder) if row.rank][:HOME_LEADERS]}
        for ladder in ladder_list(active_only=True)[:HOME_LADDERS]
    ]


def _current_tournaments() -> list | None:
    """Running, paused and open tournaments with their progress; None without the tournaments app."""
    if not apps.is_installed("tournaments"):
        return None
    from tournaments.selectors import tournament_list, tournament_progress

    current = tournament_list().filter(status__in=["running", "paused", "registration"])[:HOME_TOURNAMENTS]
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
            "counts": site_counts(),
            "recent": match_list(limit=8),
            "ladders": _active_ladders(),
            "tournaments": _current_tournaments(),
        },
    )
