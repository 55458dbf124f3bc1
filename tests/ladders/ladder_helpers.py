"""Builders for ladder tests: bots with an active version, ladders, results recorded without a sandbox."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from testsupport import make_ladder, played_match

from bots import services as bot_services
from bots.models import Bot, BotVersion
from ladders.models import Ladder
from matches import services as match_services
from matches.models import Match

BOT_SOURCE = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def user(name: str):
    User = get_user_model()
    return User.objects.filter(username=name).first() or User.objects.create_user(name)  # no password: hashing one is slow and force_login needs none


def active_bot(name: str, owner: str | None = None) -> Bot:
    """A bot whose first version is active (its validation is not what these tests are about).

    Each bot has its own owner (``<name>-owner``) unless ``owner`` is given: ladders keep one
    owner's bots apart unless they allow it.
    """
    bot = bot_services.bot_create(owner=user(owner or f"{name}-owner"), name=name)
    new_version(bot)
    return bot


def new_version(bot: Bot, status: str = BotVersion.Status.ACTIVE) -> BotVersion:
    tag = f"# {bot.name} {bot.versions.count() + 1}\n".encode()
    version = bot_services.bot_version_create(bot=bot, filename="bot.py", data=BOT_SOURCE + tag, validate=False)
    reason = "crash: test" if status == BotVersion.Status.REJECTED else ""
    BotVersion.objects.filter(pk=version.pk).update(status=status, rejection_reason=reason)
    version.refresh_from_db()
    return version


def ladder(**fields) -> Ladder:
    fields.setdefault("name", "Test ladder")
    fields.setdefault("slug", "test")
    fields.setdefault("rules", {"players": fields.get("seats", 2), "rounds": 1})
    return make_ladder(**fields)


def record(match: Match, ranks: dict[int, int], forfeits: frozenset[int] = frozenset(), *, refit: bool = True) -> None:
    """Store a result as the worker would: ``ranks`` maps bot id -> rank; ``forfeits`` holds bot ids.

    With ``refit``, then what the ``ladder_refit`` task queued by the result hook does (tests run in
    one transaction that never commits, so the hook's on-commit request does not run by itself).
    """
    token = match_services.match_start(match.pk)
    assert token is not None
    bot_ids = [seat.bot_version.bot_id for seat in match.seats.select_related("bot_version").order_by("seat")]
    outcome = played_match([ranks[b] for b in bot_ids], forfeits={i for i, b in enumerate(bot_ids) if b in forfeits})
    assert match_services.match_record_result(match.pk, token, outcome)
    if refit:
        from ladders.models import LadderMatch
        from ladders.services import ladder_refit

        link = LadderMatch.objects.filter(match_id=match.pk).select_related("ladder").first()
        if link is not None:
            ladder_refit(link.ladder)


def bots_of(match: Match) -> list[int]:
    return [seat.bot_version.bot_id for seat in match.seats.select_related("bot_version").order_by("seat")]
