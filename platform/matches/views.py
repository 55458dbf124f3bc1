"""Pages of the matches app: the match page, the replay viewer, the replay download, seat logs, the queue."""

from __future__ import annotations

from core.converters import id_or_404
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header

from bots.models import Bot, BotVersion

from . import selectors, services
from .models import Match, MatchSeat

#: matches per page of the match list
MATCHES_PER_PAGE = 50


def match_list(request):
    """Every match, newest first, a page at a time by keyset (``?before=`` / ``?after=`` a position,
    ``?oldest=1`` the last page); ``?kind=``, ``?bot=`` or ``?version=`` narrow it."""
    kind = request.GET.get("kind")
    if kind not in Match.Kind.values:
        kind = None
    bot = version = None
    if request.GET.get("version"):
        version = get_object_or_404(BotVersion.objects.select_related("bot__owner"), pk=id_or_404(request.GET["version"]))
    elif request.GET.get("bot"):
        bot = get_object_or_404(Bot.objects.select_related("owner"), pk=id_or_404(request.GET["bot"]))
    try:
        page = selectors.match_page(
            selectors.match_list(kind=kind, limit=None),
            seats=selectors.match_seats(bot=bot, version=version, kind=kind) if bot or version else None,
            before=request.GET.get("before", ""), after=request.GET.get("after", ""),
            oldest=request.GET.get("oldest") == "1", size=MATCHES_PER_PAGE,
        )
    except ValueError as exc:
        raise Http404(str(exc)) from None
    narrow = {"kind": kind, "bot": bot.pk if bot else None, "version": version.pk if version else None}
    query = "&".join(f"{k}={v}" for k, v in narrow.items() if v is not None)
    return render(
        request,
        "matches/match_list.html",
        {"page": page, "matches": page["matches"], "kind": kind, "kinds": Match.Kind.values, "bot": bot,
         "version": version, "query": query},
    )


def replay_viewer(request, match_id: int):
    """The replay viewer of a match: its replay once played, the match live while it is played."""
    try:
        match = selectors.match_detail(match_id)
    except Match.DoesNotExist:
        raise Http404(f"no match {match_id}") from None
    has_replay = match.status == Match.Status.DONE
    live = match.status == Match.Status.RUNNING
    viewer = None
    if live:  # followed as it is played (matches.live); the page reloads into the replay at the end
        viewer = selectors.live_viewer_data(match)
    if has_replay:
        path = request.get_full_path()
        readable = frozenset(
            seat.seat
            for seat in match.seats.all()
            if match.is_finished and services.seat_log_read(request.user, seat, path=path, match=match)
        )
        viewer = selectors.replay_viewer_data(match, readable)
    return render(
        request,
        "matches/replay.html",
        {
            "match": match,
            "has_replay": has_replay,
            "live": live,
            "viewer": viewer,
            # the viewer's table drawn empty until the replay is in, so loading it shifts nothing
            "placeholder_seats": range(int(match.rules.get("players", 2))) if has_replay or live else (),
        },
    )


def match_detail(request, match_id: int):
    try:
        match = selectors.match_detail(match_id)
    except Match.DoesNotExist:
        raise Http404(f"no match {match_id}") from None
    timings = (match.timings or {}).get("seats") or []
    changes = selectors.match_rating_changes(match)
    seats = [
        {
            "seat": seat,
            "can_view_log": selectors.can_view_seat_log(request.user, seat, match.kind),
            "timing": timings[seat.seat] if seat.seat < len(timings) else {},
            "rating": changes.get(seat.bot_version_id),
        }
        for seat in match.seats.all()
    ]
    return render(
        request,
        "matches/match_detail.html",
        {
            "match": match,
            "seats": seats,
            "has_replay": match.status == Match.Status.DONE,
            "clocks": selectors.match_clocks(match),
            "time_limit": selectors.match_time_limits(match)[0],
            "seating": selectors.match_seating(match),
            "event": selectors.match_event(match),
            "rated": bool(changes),
            "seed_shown": selectors.seed_shown(match, request.user),
        },
    )


def match_replay(request, match_id: int):
    match = get_object_or_404(Match.objects.only("pk"), pk=match_id)
    data = selectors.match_replay_json(match)
    if data is None:
        raise Http404(f"match {match_id} has no replay")
    response = HttpResponse(data, content_type="application/json")
    response["Content-Disposition"] = content_disposition_header(False, f"match-{match_id}-replay.json")
    return response


def seat_log(request, match_id: int, seat: int):
    seat_row = get_object_or_404(
        MatchSeat.objects.select_related("bot_version__bot", "match"), match_id=match_id, seat=seat
    )
    if not services.seat_log_read(request.user, seat_row, path=request.get_full_path()):
        raise Http404("logs are shown only to the bot's owner")
    return HttpResponse(seat_row.log, content_type="text/plain; charset=utf-8")


def queue(request):
    return render(request, "matches/queue.html", {"queue": selectors.queue_summary()})
