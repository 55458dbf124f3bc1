"""Services of the API app: personal access tokens and challenges (functions that write)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from bots.models import Bot
from bots.selectors import bot_playing_version
from engine.rules import Rules, RulesError
from ladders.checks import LadderError, ladder_match_format
from ladders.services import ladder_owners_check
from matches.models import Challenge, Match
from matches.services import match_create

from . import selectors
from .models import ApiToken

#: every key starts with this, so a leaked key is recognisable in logs and secret scanners
KEY_PREFIX = "ua_"
#: a token's last use is written at most this often (not on every request)
LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiRefusal(ValueError):
    """A request is refused; the message says what was wrong and with which value."""


def token_key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Create a token for ``user``; returns it with its key, which is never stored nor shown again."""
    name = (name or "").strip()
    if not name:
        raise ApiRefusal("a token needs a name, e.g. the machine it is for")
    if len(name) > 64:
        raise ApiRefusal(f"a token name has at most 64 characters, got {len(name)}")
    limit = settings.API_TOKENS_PER_USER
    if ApiToken.objects.filter(user=user).count() >= limit:
        raise ApiRefusal(f"you already have {limit} tokens, the most allowed; revoke one first")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=key[:10], key_hash=token_key_hash(key))
    return token, key


def token_revoke(token: ApiToken) -> None:
    """Delete the token: requests with its key fail from now on."""
    token.delete()


def token_authenticate(key: str) -> ApiToken | None:
    """The token of ``key`` with its user, or None; records when it was last used."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=token_key_hash(key)).first()
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def challenge_create(*, challenger, bot: Bot, opponent: Bot, ladder, address: str = "") -> Challenge:
    """Queue an unranked head-to-head match: ``bot`` (the challenger's) against a public ``opponent``,
    under ``ladder``'s rules with two players, its games, duplicate setting and clock.

    Only an active ladder lends its rules, and its match format within the ladders' bounds. At most
    API_CHALLENGES_PENDING challenges are queued or running per account, and as many per client
    ``address`` (core.clientip.client_address), so accounts opened from one address share one cap.
    """
    if not ladder.active:
        raise ApiRefusal(f"the ladder {ladder.slug!r} is not active; challenge under an active ladder's rules")
    if bot.owner_id != challenger.pk:
        raise ApiRefusal(f"bot {bot.pk} ({bot}) is not yours; challenge with one of your own bots")
    if opponent.pk == bot.pk:
        raise ApiRefusal("a bot cannot challenge itself; pick another opponent")
    try:
        ladder_owners_check(ladder, [bot, opponent])
    except LadderError as exc:
        raise ApiRefusal(str(exc)) from None
    if not selectors.bot_is_public(opponent):
        raise ApiRefusal(
            f"bot {opponent.pk} ({opponent}) is not public: only bots with public source "
            "or an active ladder entry can be challenged"
        )
    mine, theirs = bot_playing_version(bot), bot_playing_version(opponent)
    if mine is None:
        raise ApiRefusal(f"your bot {bot} has no active version yet; wait for its validation")
    if theirs is None:
        raise ApiRefusal(f"bot {opponent} has no active version to play")
    try:
        rules = Rules.from_dict({**ladder.rules, "players": 2})
    except (RulesError, TypeError) as exc:
        raise ApiRefusal(f"the rules of ladder {ladder.slug!r} do not fit a two-player match: {exc}") from None
    try:
        match_format = ladder_match_format(ladder)
    except LadderError as exc:
        raise ApiRefusal(str(exc)) from None
    limit = settings.API_CHALLENGES_PENDING
    with transaction.atomic():
        # The user's row lock, and a lock on the address, make concurrent requests count one after
        # the other (from one account, and from several accounts at one address).
        get_user_model().objects.select_for_update().filter(pk=challenger.pk).first()
        live = Challenge.objects.filter(match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        pending = live.filter(challenger=challenger).count()
        if pending >= limit:
            raise ApiRefusal(
                f"you have {pending} challenges queued or running, the most allowed ({limit}); "
                "wait for one to finish"
            )
        if address:
            if connection.vendor == "postgresql":  # SQLite (the embedded default) serialises writers already
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"challenge-address:{address}"])
            from_address = live.filter(address=address).count()
            if from_address >= limit:
                raise ApiRefusal(
                    f"{from_address} challenges from your address are queued or running, the most allowed "
                    f"({limit}, counted per address as well as per account); wait for one to finish"
                )
        match = match_create(
            kind=Match.Kind.CHALLENGE,
            rules=rules,
            seats=[mine, theirs],
            **match_format,
        )
        return Challenge.objects.create(challenger=challenger, match=match, ladder=ladder, address=address)
