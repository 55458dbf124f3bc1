"""Failed-login throttling (issue 16, point 2): the site's login form, the admin's and the API's
token endpoint lock an account and a client address after LOGIN_FAILURE_LIMIT failures (django-axes);
client addresses come from the connection, or from X-Forwarded-For only through TRUSTED_PROXIES."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from api_helpers import make_user
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
ADDRESS = "198.51.100.7"


@pytest.fixture(autouse=True)
def _generous_api_rate(settings):
    # The API's own rate limit on the token endpoint would answer 429 first; axes is under test here.
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "login": "1000/minute"}


def login(where: str, username: str, password: str, *, address: str = ADDRESS, forwarded: str | None = None):
    """One login attempt; returns (logged in?, response)."""
    extra = {"REMOTE_ADDR": address}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    client = Client()
    if where == "site":
        response = client.post("/accounts/login/", {"username": username, "password": password}, **extra)
        return response.status_code == 302, response
    if where == "admin":
        response = client.post("/admin/login/?next=/admin/", {"username": username, "password": password}, **extra)
        return response.status_code == 302 and response["Location"] == "/admin/", response
    if where == "api":
        response = client.post(
            "/api/auth/token/", {"username": username, "password": password, "name": "t"},
            content_type="application/json", **extra,
        )
        return response.status_code == 201, response
    raise AssertionError(where)


def assert_locked(response, where: str):
    assert response.status_code == 429, (where, response.status_code)
    assert int(response["Retry-After"]) == 15 * 60
    text = response.json()["detail"] if where == "api" else response.content.decode()
    assert "too many failed logins" in text.lower() and "15 minutes" in text and "UTC" in text
    if where == "api":
        assert response.json()["retry_after"] == 15 * 60


WHERE = ["site", "admin", "api"]


@pytest.fixture
def carol(db):
    user = make_user("carol")
    user.is_staff = True  # may use the admin
    user.save()
    return user


@pytest.mark.parametrize("where", WHERE)
def test_the_right_password_works_before_any_failure(carol, where):
    assert login(where, "carol", PASSWORD)[0]


@pytest.mark.slow  # forty hashed logins per place: seconds of CPU, left out of make check
@pytest.mark.parametrize("where", WHERE)
def test_forty_wrong_passwords_then_the_right_one_does_not_log_in(carol, where):
    for i in range(40):
        ok, response = login(where, "carol", f"guess {i}")
        assert not ok
    ok, response = login(where, "carol", PASSWORD)
    assert not ok
    assert_locked(response, where)


@pytest.mark.parametrize("where", WHERE)
def test_the_account_is_locked_whatever_address_the_guesses_come_from(carol, where):
    for i in range(10):
        assert not login(where, "carol", f"guess {i}", address=f"203.0.113.{i + 1}")[0]
    ok, response = login(where, "carol", PASSWORD, address="192.0.2.200")
    assert not ok
    assert_locked(response, where)


@pytest.mark.parametrize("where", WHERE)
def test_an_address_guessing_many_accounts_is_locked_and_a_varied_forwarded_for_does_not_help(carol, where):
    for i in range(10):  # one guess each at ten accounts, each claiming another origin
        assert not login(where, f"user{i}", "guess", forwarded=f"10.0.{i}.1")[0]
    ok, response = login(where, "carol", PASSWORD, forwarded="10.9.9.9")
    assert not ok
    assert_locked(response, where)
    # another address is not locked, nor the account
    assert login(where, "carol", PASSWORD, address="192.0.2.9")[0]


@pytest.mark.parametrize("where", WHERE)
def test_behind_one_trusted_proxy_the_right_most_forwarded_address_counts(carol, settings, where):
    settings.TRUSTED_PROXIES = 1
    proxy = "10.0.0.2"  # every request arrives from the proxy
    for i in range(10):  # the client varies what it writes itself (left), the proxy appends what it saw
        assert not login(where, f"user{i}", "guess", address=proxy, forwarded=f"1.2.3.{i}, {ADDRESS}")[0]
    ok, response = login(where, "carol", PASSWORD, address=proxy, forwarded=f"4.4.4.4, {ADDRESS}")
    assert not ok
    assert_locked(response, where)
    # another client behind the same proxy is not locked
    assert login(where, "carol", PASSWORD, address=proxy, forwarded="192.0.2.50")[0]


@pytest.mark.slow
def test_the_lock_ends_after_the_cool_off(carol, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=1)
    for i in range(10):
        login("site", "carol", f"guess {i}")
    assert login("site", "carol", PASSWORD)[1].status_code == 429
    time.sleep(1.5)
    assert login("site", "carol", PASSWORD)[0]


def test_the_api_rate_limit_counts_the_connection_not_a_client_sent_forwarded_for(carol, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "login": "5/minute"}
    statuses = [login("api", "carol", PASSWORD, forwarded=f"10.1.{i}.1")[1].status_code for i in range(6)]
    assert statuses == [201] * 5 + [429]


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "1.1.1.1", ADDRESS),  # no trusted proxy: the header is the client's word, ignored
        (1, "1.1.1.1, 2.2.2.2", "2.2.2.2"),  # the right-most: what our one proxy saw
        (2, "1.1.1.1, 2.2.2.2, 3.3.3.3", "2.2.2.2"),
        (2, "2.2.2.2", "2.2.2.2"),  # a shorter chain: its left-most, as DRF's NUM_PROXIES
        (1, "not-an-address", ADDRESS),  # never a made-up key: the connection's address
        (1, "", ADDRESS),
    ],
)
def test_the_client_address_rule(settings, proxies, forwarded, expected):
    from core.clientip import client_address
    from django.test import RequestFactory

    settings.TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=ADDRESS, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected
