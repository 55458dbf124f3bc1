"""Every 4xx of the API carries the JSON error body: ``{"detail": ..., "errors"?: {...}}``."""

from __future__ import annotations

import pytest
from api_helpers import assert_json_error, client_for, make_bot


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "status"),
    [
        ("get", "/api/me/", None, None, 401),
        ("post", "/api/bots/", "{not json", "application/json", 400),
        ("post", "/api/bots/", "name=x", "text/plain", 415),
        ("delete", "/api/bots/", None, None, 405),
        ("get", "/api/matches/?bot=abc", None, None, 400),
        ("get", "/api/matches/?page=999", None, None, 404),
        ("get", "/api/matches/99999999999999999999999/", None, None, 404),
        ("get", "/api/bots/1/versions/1/source/", None, None, 404),
        ("post", "/api/tokens/", '{"name": "' + "x" * 65 + '"}', "application/json", 400),
        ("get", "/api/ladders/%0A/", None, None, 404),
    ],
)
def test_error_answers_are_json_with_a_detail(alice, method, path, body, content_type, status):
    client = client_for(alice) if status != 401 else client_for(None)
    kwargs = {} if body is None else {"data": body, "content_type": content_type}
    response = getattr(client, method)(path, **kwargs)
    assert_json_error(response, status)


def test_a_body_over_the_size_limit_is_a_json_413(alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = client_for(alice).post("/api/bots/", '{"name": "' + "x" * 4096 + '"}', content_type="application/json")
    assert_json_error(response, 413, "larger than the limit of 1024 bytes")


def test_session_write_without_csrf_token_is_a_json_403(alice):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)
    assert_json_error(client.post("/api/bots/", {"name": "x"}, format="json"), 403, "csrf")


def test_field_errors_name_each_field(alice):
    bot = make_bot(alice, status=None)
    response = client_for(alice).post(f"/api/bots/{bot.pk}/pin/", {"version": "two"}, format="json")
    body = assert_json_error(response, 400, "version")
    assert body["errors"] == {"version": ["A valid integer is required."]}
