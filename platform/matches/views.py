"""Pages of the matches app: the match page, the replay download, seat logs, the queue."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header

from . import selectors
from .models import Match, MatchSeat


def match_list(request):
    kind = request.GET.get("kind")
    if kind not in Match.Kind.values:
        kind = None
    return render(
        request,
        "matches/match_list.html",
        {"matches": selectors.match_list(kind=kind, limit=100), "kind": kind, "kinds": Match.Kind.values},
    )


def match_detail(request, match_id: int):
    try:
        match = selectors.match_detail(match_id)
    except Match.DoesNotExist:
        raise Http404(f"no match {match_id}") from None
    timings = (match.timings or {}).get("seats") or []
    seats = [
        {
            "seat": seat,
            "can_view_log": selectors.can_view_seat_log(request.user, seat),
            "timing": timings[seat.seat] if seat.seat < len(timings) else {},
        }
        for seat in match.seats.all()
    ]
    return render(
        request,
        "matches/match_detail.html",
        {"match": match, "seats": seats, "has_replay": match.status == Match.Status.DONE},
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
        MatchSeat.objects.select_related("bot_version__bot"), match_id=match_id, seat=seat
    )
    if not selectors.can_view_seat_log(request.user, seat_row):
        raise Http404("logs are shown only to the bot's owner")
    return HttpResponse(seat_row.log, content_type="text/plain; charset=utf-8")


def queue(request):
    return render(request, "matches/queue.html", {"queue": selectors.queue_summary()})
