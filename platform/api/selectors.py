"""Selectors of the API app (functions that read): tokens, public bots, challenges."""

from __future__ import annotations

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet, Value

from bots.models import Bot, BotVersion
from ladders.models import Ladder, LadderEntry

from .models import ApiToken, Challenge


def token_list(user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-pk")


def _public_filter() -> Q:
    # "Public" = anyone may already see the bot play: its source is public, or it
    # competes on a ladder (where everyone meets it anyway).
    on_ladder = LadderEntry.objects.filter(bot=OuterRef("pk"), status=LadderEntry.Status.ACTIVE)
    return Q(source_public=True) | Q(Exists(on_ladder))


def public_bots() -> QuerySet[Bot]:
    """Bots anyone may challenge: public by ``_public_filter`` and with an active version."""
    active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
    return (
        Bot.objects.select_related("owner")
        .filter(_public_filter(), Exists(active))
        .annotate(is_public=Value(True))
        .order_by("name", "pk")
    )


def with_public(bots: QuerySet[Bot]) -> QuerySet[Bot]:
    """``bots`` annotated with ``is_public`` (see ``_public_filter``), for lists without a query per bot."""
    return bots.annotate(is_public=ExpressionWrapper(_public_filter(), output_field=BooleanField()))


def bot_is_public(bot: Bot) -> bool:
    return Bot.objects.filter(_public_filter(), pk=bot.pk).exists()


def challenge_ladders() -> QuerySet[Ladder]:
    """The ladders whose rules a challenge may use: the active ones, by name."""
    return Ladder.objects.filter(active=True).order_by("name")


def challenge_match_status(challenge: Challenge) -> str:
    """The status of the challenge's match as stored now (its task may have run since it was created)."""
    from matches.models import Match

    return Match.objects.filter(pk=challenge.match_id).values_list("status", flat=True).get()


def challenge_list(user) -> QuerySet[Challenge]:
    return Challenge.objects.filter(challenger=user).select_related("match", "ladder").order_by("-created_at", "-pk")


def validation_matches(version_ids) -> dict[int, int]:
    """Version id -> id of its latest validation match, for the given versions."""
    from matches.models import MatchSeat

    rows = (
        MatchSeat.objects.filter(bot_version_id__in=list(version_ids), match__kind="validation")
        .order_by("match_id")
        .values_list("bot_version_id", "match_id")
    )
    return dict(rows)  # later rows (newer matches) win


def match_query(*, bot=None, ladder=None, tournament=None, status=None, kind=None):
    """Matches for the API list: ``bot`` an id, ``ladder`` and ``tournament`` slugs; unknown ones match none.

    With ``bot`` the list pages over ``match_seats_query`` (the bot's seats' index) and this queryset
    only loads the page's matches, so it is not narrowed to the bot here."""
    from matches.selectors import match_list

    matches = match_list(kind=kind, status=status, limit=None)
    if bot is not None:
        return matches
    if ladder is not None:
        matches = matches.filter(ladder_match__ladder__slug=ladder)
    if tournament is not None:
        matches = matches.filter(tournament_tables__round__tournament__slug=tournament).distinct()
    return matches


def match_seats_query(*, bot=None, ladder=None, tournament=None, status=None, kind=None):
    """The seats of bot ``bot`` (an id) in the matches ``match_query`` lists, newest first on the
    seats' (bot, queued_at, match) index: what a bot's API list pages over; None without ``bot``."""
    from matches.selectors import match_seats
    from tournaments_app.models import Table

    if bot is None:
        return None
    seats = match_seats(bot=bot, kind=kind, status=status).only("pk", "match_id", "queued_at")
    if ladder is not None:
        seats = seats.filter(match__ladder_match__ladder__slug=ladder)
    if tournament is not None:
        seats = seats.filter(match_id__in=Table.objects.filter(round__tournament__slug=tournament).values("match_id"))
    return seats
