"""Pages of the play app: the form that starts a human game, the game page, and the JSON it polls
and posts to. Thin: ``services`` starts games and takes actions, ``selectors`` reads."""

from __future__ import annotations

import json
import math

from core import ratelimit
from core.clientip import client_address
from core.converters import id_or_none
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from bots.models import Bot, BotVersion
from ladders.models import Ladder
from matches import human
from matches.selectors import live_viewer_data, replay_viewer_data

from . import selectors, services
from .models import HumanGame


@login_required
def play_new(request):
    """GET: the form (``?bot=<id>`` preselects an opponent); POST: start the game and go to it."""
    chosen = Bot.objects.select_related("owner").filter(pk=id_or_none(request.GET.get("bot") or request.POST.get("chosen"))).first()
    version = (BotVersion.objects.defer("source").select_related("bot__owner")
               .filter(pk=id_or_none(request.GET.get("version") or request.POST.get("chosen_version"))).first())
    form = {"ladder": request.POST.get("ladder", ""), "seats": request.POST.get("seats", "2"),
            "clock": request.POST.get("clock", str(human.CLOCK_DEFAULT)),
            "opponents": [request.POST.get(f"opponent{i}", "") for i in range(1, services.HUMAN_MAX_SEATS)]}
    if request.method == "POST":
        game = _start(request, form)
        if game is not None:
            return redirect("play:game", match_id=game.match_id)
    options = selectors.opponent_options(request.user, chosen, version)
    if not any(form["opponents"]):
        first = options[0]["value"] if options else ""
        form["opponents"] = [first, "ref:greedy", "ref:random"]
    return render(request, "play/new.html", {
        "ladders": selectors.play_ladders(), "options": options, "chosen": chosen, "version": version, "form": form,
        "games": selectors.games_of(request.user), "seat_choices": range(services.HUMAN_MIN_SEATS, services.HUMAN_MAX_SEATS + 1),
        "clock_min": human.CLOCK_MIN, "clock_max": human.CLOCK_MAX, "thinking_minutes": human.THINKING_SECONDS // 60,
    }, status=400 if request.method == "POST" else 200)


def _start(request, form) -> HumanGame | None:
    """Start the game the form asks for; None (with the reason as a message) when refused."""
    ladder = Ladder.objects.filter(slug=form["ladder"]).first()
    seats = id_or_none(form["seats"])
    clock = id_or_none(form["clock"])
    if ladder is None:
        messages.error(request, "Choose the ladder whose rules to play.")
        return None
    if seats is None or not services.HUMAN_MIN_SEATS <= seats <= services.HUMAN_MAX_SEATS:
        messages.error(request, f"A game has {services.HUMAN_MIN_SEATS} to {services.HUMAN_MAX_SEATS} seats.")
        return None
    if clock is None:
        messages.error(request, f"The clock is a whole number of seconds, {human.CLOCK_MIN} to {human.CLOCK_MAX}.")
        return None
    try:
        opponents = [services.opponent_choice(text, request.user) for text in form["opponents"][: seats - 1]]
    except services.PlayRefusal as exc:
        messages.error(request, str(exc))
        return None
    waiting = ratelimit.hit("human_games", request)
    if waiting is not None:
        messages.error(request, f"Too many games started; retry in {max(1, math.ceil(waiting))} s (the limit counts "
                                "your account and your address).")
        return None
    try:
        return services.human_game_start(user=request.user, ladder=ladder, opponents=opponents, clock=clock,
                                         address=client_address(request))
    except services.PlayRefusal as exc:
        messages.error(request, str(exc))
        return None


def _game_or_404(match_id: int) -> HumanGame:
    try:
        return selectors.game_of(match_id)
    except HumanGame.DoesNotExist:
        raise Http404(f"no human game {match_id}") from None


@login_required
def play_game(request, match_id: int):
    """The table of a human game, for the person playing it (anyone else watches the match page)."""
    game = _game_or_404(match_id)
    seat = selectors.player_seat(game, request.user)
    if seat is None:
        return redirect(game.match)
    match = game.match
    # followed live while it is played (the page reloads into the replay at the end)
    viewer = live_viewer_data(match) if match.status == match.Status.RUNNING else replay_viewer_data(match)
    return render(request, "play/game.html", {
        "game": game, "match": match, "viewer": viewer, "seat": seat,
        "play": {"state_url": reverse("play:state", args=[match.pk]), "act_url": reverse("play:act", args=[match.pk])},
        "placeholder_seats": range(int(match.rules.get("players", 2))),
        "has_replay": match.status == match.Status.DONE,
    })


@never_cache
@login_required
def play_state(request, match_id: int):
    game = _game_or_404(match_id)
    return JsonResponse(selectors.game_state(game, request.user))


@login_required
@require_POST
def play_act(request, match_id: int):
    """Body ``{"seq": N, "index": I}``: answer decision N with the I-th legal action offered."""
    game = _game_or_404(match_id)
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return JsonResponse({"detail": "the body is JSON: {\"seq\": N, \"index\": I}"}, status=400)
    if not isinstance(body, dict):
        return JsonResponse({"detail": "the body is a JSON object: {\"seq\": N, \"index\": I}"}, status=400)
    try:
        action = services.human_game_act(game, request.user, seq=body.get("seq"), index=body.get("index"))
    except services.PlayRefusal as exc:
        return JsonResponse({"detail": str(exc)}, status=403 if isinstance(exc, services.NotYourGame) else 409)
    return JsonResponse({"ok": True, "action": action})
