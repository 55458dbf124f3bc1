"""Pages of the ladders app: thin views over services and selectors."""

from __future__ import annotations

import functools
import math

from core import ratelimit
from core.clientip import client_address
from core.converters import id_or_none
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from bots.models import Bot
from bots.selectors import user_is_owner_or_staff
from matches import selectors as match_selectors
from matches.models import Match

from . import charts, ratings, selectors, services
from .forms import EnterForm
from .models import Ladder, LadderEntry

#: opponents shown on a bot's ladder page (the most met first)
HEAD_TO_HEAD_ROWS = 30
#: matches in a ladder's and a bot's "Recent matches"
RECENT_MATCHES = 20


def ladder_list(request):
    return render(request, "ladders/ladder_list.html", {"ladders": selectors.ladder_list()})


def ladder_detail(request, slug: str):
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    table = selectors.ladder_table_page(ladder, page=page, query=request.GET.get("q", ""))
    return render(
        request,
        "ladders/ladder_detail.html",
        {
            "ladder": ladder,
            "table": table,
            "standings": table.rows,
            "provisional_margin": ratings.PROVISIONAL_MARGIN,
            # the rendered table and match list are kept under names of what they show (the
            # template's {% cache %}); the match list is read only when its name is new
            "table_key": selectors.ladder_table_key(ladder, table),
            "table_seconds": selectors.EXACT_KEY_SECONDS,
            "matches_key": selectors.ladder_matches_key(ladder, limit=RECENT_MATCHES),
            "matches": functools.partial(selectors.ladder_matches, ladder, limit=RECENT_MATCHES),
            "fragment_seconds": selectors.FRAGMENT_SECONDS,
            "pending": selectors.ladder_pending_count(ladder),
        },
    )


def entry_detail(request, slug: str, bot_id: int):
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        standing = selectors.entry_standing(ladder, bot_id)
    except LadderEntry.DoesNotExist:
        raise Http404(f"bot {bot_id} is not on the ladder {slug!r}") from None
    entry = standing.entry
    try:
        before = int(request.GET["before"]) if "before" in request.GET else None
    except ValueError:
        raise Http404("before must be a rating change id") from None
    is_owner = user_is_owner_or_staff(request.user, entry.bot)
    return render(
        request,
        "ladders/entry_detail.html",
        {
            "ladder": ladder,
            "entry": entry,
            "standing": standing,
            # the chart, the history, the head-to-head and the match list are kept rendered under
            # names of what they show (the template's {% cache %}): each is computed only when its
            # name is new
            "chart_key": selectors.entry_chart_key(entry),
            "chart_parts": functools.partial(_entry_chart, entry),
            "head_to_head_key": selectors.entry_head_to_head_key(entry),
            "head_to_head": functools.partial(selectors.entry_head_to_head_top, entry, limit=HEAD_TO_HEAD_ROWS),
            "matches_key": selectors.ladder_matches_key(ladder, entry=entry, limit=RECENT_MATCHES),
            "matches": functools.partial(selectors.ladder_matches, ladder, entry=entry, limit=RECENT_MATCHES),
            "fragment_seconds": selectors.FRAGMENT_SECONDS,
            "history_key": selectors.entry_history_key(entry, f"before={before}"),
            "history_page": functools.partial(selectors.entry_history_page, entry, before=before),
            "exact_seconds": selectors.EXACT_KEY_SECONDS,
            "is_owner": is_owner,
            # an active entry matchmaking holds for its version's validation here (its owner's to know)
            "held": services.ladder_entry_validation(entry) if is_owner and entry.status == LadderEntry.Status.ACTIVE else "",
            "provisional_margin": ratings.PROVISIONAL_MARGIN,
        },
    )


def _entry_chart(entry: LadderEntry) -> dict:
    """The entry's rating chart over the newest fitted changes only (a bounded window of a long
    history), and the window's length when it is not the whole history."""
    window = selectors.entry_chart_changes(entry)
    chart = charts.rating_chart(
        [change.after for change in window],
        labels=[f"match #{c.match_id} (v{c.bot_version.number}, rank {c.rank})" for c in window],
        lows=[change.after_low for change in window],
        highs=[change.after_high for change in window],
        start=window[0].before if window and window[0].matches_after > 1 else None,
        first=window[0].matches_after if window else 1,
    )
    return {"chart": chart, "window": len(window) if window and window[0].matches_after > 1 else None}


def _owned_bot(request, bot_id: int) -> Bot:
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    if not user_is_owner_or_staff(request.user, bot):
        raise Http404("not your bot")
    return bot


@login_required
@require_POST
def ladder_enter(request, bot_id: int):
    bot = _owned_bot(request, bot_id)
    form = EnterForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a ladder to enter.")
        return redirect(bot)
    ladder = get_object_or_404(Ladder, slug=form.cleaned_data["ladder"])
    try:
        entry = services.ladder_enter(ladder, bot)
    except services.LadderError as exc:
        messages.error(request, str(exc))
    else:
        waiting = services.ladder_entry_validation(entry)
        if waiting:
            messages.info(request, f"{bot.name} entered {ladder.name}: {waiting}.")
        else:
            messages.success(request, f"{bot.name} entered {ladder.name}: matchmaking will give it matches.")
    return redirect(bot)


@login_required
@require_POST
def ladder_leave(request, slug: str, bot_id: int):
    bot = _owned_bot(request, bot_id)
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        services.ladder_leave(ladder, bot)
    except services.LadderError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{bot.name} left {ladder.name}; its rating and matches stay on record.")
    return redirect(bot)


# --- challenges: /account/challenge/<bot>/ (ladders.challenge_urls), the form on a public bot's page


@login_required
@require_POST
def challenge_new(request, bot_id: int):
    """Challenge the public bot ``bot_id`` with one of your bots under a ladder's rules."""
    opponent = get_object_or_404(Bot, pk=bot_id)
    mine = Bot.objects.filter(owner=request.user, pk=id_or_none(request.POST.get("bot"))).first()
    ladder = Ladder.objects.filter(slug=request.POST.get("ladder", "")).first()
    if mine is None or ladder is None:
        messages.error(request, "Choose one of your bots and a ladder whose rules to play.")
        return redirect(opponent)
    waiting = ratelimit.hit("challenges", request)
    if waiting is not None:
        messages.error(
            request, f"Too many challenges; retry in {max(1, math.ceil(waiting))} s (the limit counts your account "
            "and your address)."
        )
        return redirect(opponent)
    try:
        challenge = services.challenge_create(
            challenger=request.user, bot=mine, opponent=opponent, ladder=ladder, address=client_address(request)
        )
    except services.ChallengeError as exc:
        messages.error(request, str(exc))
        return redirect(opponent)
    _challenge_message(request, challenge, f"{mine} against {opponent}")
    return redirect(challenge.match)


def _challenge_message(request, challenge, label: str) -> None:
    """Say what became of the challenge's match: still waiting, or already played (tasks may run in-process)."""
    status = match_selectors.challenge_match_status(challenge)
    if status in (Match.Status.QUEUED, Match.Status.RUNNING):
        messages.success(request, f"Challenge {status}: {label}. This page shows the result when it is played.")
    elif status == Match.Status.DONE:
        messages.success(request, f"Challenge played: {label}. The result is below.")
    else:
        messages.warning(request, f"Challenge {label}: the match {status}, see below.")
