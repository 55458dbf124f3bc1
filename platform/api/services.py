"""Services of the API app: personal access tokens (functions that write)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

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
