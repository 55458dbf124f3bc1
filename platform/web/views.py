"""Pages of the web app: the page that opens a replay file, the bot author guide, and the JSON the live pages poll."""

from __future__ import annotations

from django.http import FileResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache

from arena_cli.replay_page import local_viewer_meta
from bots.models import BotVersion
from engine import glossary
from matches import live
from matches import selectors as match_selectors
from matches.models import Match

from . import guide, selectors
from . import home as home_selectors


def replay_open(request):
    """The viewer for a replay file from the visitor's own disk: the browser reads it, nothing is uploaded."""
    return render(request, "web/replay_open.html", {"viewer": local_viewer_meta()})


def bot_guide(request):
    return render(
        request,
        "web/guide.html",
        {
            "rule_options": guide.rule_options(),
            "observation_keys": guide.observation_keys(),
            "limits": guide.limits(),
            "configuration_keys": guide.configuration_keys(),
            "starter_source": guide.STARTER_BOT.read_text(),
            "binary_data_limit": guide.binary_data_limit(),
            "glossary": glossary.TERMS,
        },
    )


def starter_bot(request):
    return FileResponse(
        guide.STARTER_BOT.open("rb"), as_attachment=True, filename="starter_bot.py", content_type="text/x-python"
    )


@never_cache
def live_queue(request):
    return JsonResponse(selectors.queue_counts())


@never_cache
def live_version(request, bot_id: int, number: int):
    version = get_object_or_404(BotVersion.objects.defer("source"), bot_id=bot_id, number=number)
    return JsonResponse(selectors.version_status(version))


@never_cache
def live_events(request, match_id: int):
    """A running match's events for its live page: ``?game=G&after=N`` (matches.live.live_view);
    every card a hand holds is hidden unless the user is staff."""
    match = get_object_or_404(Match.objects.only("pk", "status", "attempt_token"), pk=match_id)
    try:
        game, after = int(request.GET.get("game", 0)), int(request.GET.get("after", 0))
    except ValueError:
        return JsonResponse({"detail": "game and after are whole numbers"}, status=400)
    if not (0 <= game <= 10_000 and 0 <= after <= 10_000_000):
        return JsonResponse({"detail": "game or after out of range"}, status=400)
    return JsonResponse(live.live_view(match, game=game, after=after, full=request.user.is_staff))


def live_match(request, match_id: int):
    match = get_object_or_404(Match.objects.only("pk", "status"), pk=match_id)
    return JsonResponse(selectors.match_status(match))


HOME_LADDERS = 6
HOME_LEADERS = 3
HOME_TOURNAMENTS = 6


def _active_ladders() -> list | None:
    """Active ladders with their entry counts and leaders; None while the ladders app is not installed."""
    ladders = home_selectors.home_ladders(HOME_LADDERS)
    if ladders is None:
        return None
    leaders = home_selectors.ladder_leaders(ladders, HOME_LEADERS)
    return [{"ladder": ladder, "leaders": leaders.get(ladder.pk, [])} for ladder in ladders]


def _current_tournaments() -> list | None:
    """Running, paused and open tournaments with their progress; None without the tournaments app."""
    current = home_selectors.home_tournaments(HOME_TOURNAMENTS)
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
        "web/home.html",
        {
            "counts": home_selectors.site_counts(),
            "recent": match_selectors.match_list(limit=8),
            "ladders": _active_ladders(),
            "tournaments": _current_tournaments(),
            "in_play": home_selectors.matches_in_play(),
        },
    )
