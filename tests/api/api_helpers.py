"""Builders for the API tests: users, tokens, bots with versions in a chosen state, clients."""

from __future__ import annotations

from django.utils import timezone
from rest_framework.test import APIClient
from testsupport import make_user  # noqa: F401  (re-exported for the tests here)

from api import services as api_services
from bots import services as bot_services
from bots.models import BotVersion

GOOD_BOT = b"""def agent(observation, configuration):
    print("seat", observation["seat"], "plays")
    return observation["legal_actions"][0]
"""

CRASHING_BOT = b"""def agent(observation, configuration):
    print("thinking hard")
    raise RuntimeError("my bot is broken")
"""


def good_bot(tag: str = "") -> bytes:
    """A valid bot; a different ``tag`` gives different bytes (a new version)."""
    return GOOD_BOT + f"# {tag}\n".encode()




def make_bot(owner, name: str = "alpha", *, status: str | None = "active", public: bool = False, log: str = ""):
    """A bot of ``owner`` with one version in ``status`` (no validation match is played), or none."""
    bot = bot_services.bot_create(owner=owner, name=name, source_public=public)
    if status is not None:
        version = bot_services.bot_version_create(
            bot=bot, filename=f"{name}.py", data=good_bot(name), validate=False
        )
        BotVersion.objects.filter(pk=version.pk).update(
            status=status,
            validation_log=log,
            rejection_reason="illegal: 3 strikes" if status == "rejected" else "",
            validated_at=timezone.now() if status != "validating" else None,
        )
    return bot


def client_for(user=None, *, token: bool = True) -> APIClient:
    """An API client authenticated by a real token of ``user`` (or by session when token=False)."""
    client = APIClient()
    if user is None:
        return client
    if token:
        _, key = api_services.token_create(user=user, name="tests")
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    else:
        client.force_login(user)
    return client


def assert_json_error(response, status: int, *words: str) -> dict:
    """The response has ``status`` and the common error body; its detail mentions every word."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert isinstance(body.get("detail"), str) and body["detail"], body
    for word in words:
        assert word.lower() in body["detail"].lower(), (word, body)
    return body
