"""``manage.py load_bench``: every page and API list or detail a visitor meets, timed against a running server.

The paths come from the database the command is pointed at (the server's own): the biggest
ladder and its most played entry (the ladder's pages of a bot), the busiest bot with its newest
version (the bot's and version's pages and API), the newest finished match, the match list's first
and deepest pages, a round robin and the biggest Swiss tournament.

The bot's pages are the busiest bot's (most seats) on purpose: their lists are bounded (20 matches
on the bot's and the version's page, 50 in ``/api/matches/?bot=``), so a bot with fewer seats than
that shows fewer rows in a small database than in a big one and its pages seem to grow with the
history when only their row count does (session 12: the ladder's most played entry had 26 seats at
10,000 matches and 776 at 200,000). The busiest bot fills them at 10,000 matches already (88 seats
in the seeded 10k database), so the 10k and 200k figures compare the same rows. ``--bot ID`` times
another bot's pages (the old choice: ``--bot`` the ladder entry's bot) to show the numbers both ways. Each round requests every path
once, then the trivial view (``/healthz``) once, so the baseline sees the same load as the pages
(interleaved); the run stops after ``requests`` rounds or ``seconds``, whichever comes first.
Only loopback addresses are ever requested.

Queries per request are counted in this process, not the server's: each path is requested once
more through Django's test client against the same database inside
``CaptureQueriesContext`` (the server's settings are the same code; only the cache, when it is
per process, may be warm there and cold here or the reverse).
"""

from __future__ import annotations

import http.client
import ipaddress
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: the trivial view every page is compared with
TRIVIAL = "/healthz"
#: seconds one request may take before it counts as failed
REQUEST_TIMEOUT = 60.0


class BenchError(Exception):
    """Bad arguments (a host that is not this machine, no data to discover)."""


def check_url(url: str) -> tuple[str, int]:
    """(host, port) of ``url`` when it points at this machine's loopback, else BenchError."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise BenchError(f"{url!r}: give http://127.0.0.1:PORT")
    host = parts.hostname
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise BenchError(f"{host} is not a loopback address: load_bench requests this machine only")
    return host, parts.port or 80


def busiest_bot_id() -> int | None:
    """The bot with the most seats (ties: the lowest id), whose bounded match lists are full. One
    GROUP BY over the seats' (bot, ...) index: a few hundred ms at 200,000 matches, once a run."""
    from django.db.models import Count

    from matches.models import MatchSeat

    return (
        MatchSeat.objects.filter(bot__isnull=False).values("bot").annotate(n=Count("pk"))
        .order_by("-n", "bot").values_list("bot", flat=True).first()
    )


def discover_paths(bot_id: int | None = None) -> list[tuple[str, str]]:
    """(label, path) of every page and API list and detail a user meets, with real ids; the bot's
    pages are ``bot_id``'s, else the busiest bot's (``busiest_bot_id``: see the module's docstring)."""
    from django.db.models import Count
    from django.urls import reverse

    from bots.models import BotVersion
    from ladders.models import Ladder, LadderEntry
    from matches.models import Match
    from matches.views import MATCHES_PER_PAGE
    from tournaments_app.models import Tournament

    match = Match.objects.filter(status=Match.Status.DONE).order_by("-pk").only("pk").first()
    ladder = Ladder.objects.annotate(n=Count("entries")).order_by("-n", "pk").first() if Ladder.objects.exists() else None
    entry = (
        LadderEntry.objects.filter(ladder=ladder).order_by("-matches_played", "pk").first() if ladder else None
    )
    if bot_id is None:
        bot_id = busiest_bot_id() or (entry.bot_id if entry else None)
    version = (
        BotVersion.objects.filter(bot_id=bot_id).order_by("-number").first() if bot_id is not None
        else BotVersion.objects.order_by("-pk").first()
    )
    if match is None or version is None:
        raise BenchError("the database has no finished match or no bot version (or no bot of that id): "
                         "run seed_scale first")
    bot_id = version.bot_id
    swiss = (
        Tournament.objects.filter(format=Tournament.Format.SWISS).annotate(n=Count("entries"))
        .order_by("-n", "pk").first()
    )
    robin = (
        Tournament.objects.filter(format=Tournament.Format.ROUND_ROBIN).annotate(n=Count("entries"))
        .order_by("-n", "pk").first()
    )
    total = Match.objects.count()
    deep = max(1, (total + MATCHES_PER_PAGE - 1) // MATCHES_PER_PAGE)
    paths = [
        ("home", reverse("home")),
        ("guide", reverse("web:guide")),
        ("queue", reverse("matches:queue")),
        ("bots", reverse("bots:list")),
        ("bot", reverse("bots:detail", args=[bot_id])),
        ("version", reverse("bots:version", args=[bot_id, version.number])),
        ("matches p1", reverse("matches:list")),
        ("matches deep", _deep_match_page(deep)),
        ("match", reverse("matches:detail", args=[match.pk])),
        ("replay page", reverse("matches:replay_viewer", args=[match.pk])),
        ("replay json", reverse("matches:replay", args=[match.pk])),
        ("ladders", reverse("ladders:list")),
        ("tournaments", reverse("tournaments:list")),
        ("api bots public", reverse("api:bot-public")),
        ("api bot", reverse("api:bot-detail", args=[bot_id])),
        ("api versions", reverse("api:version-list", args=[bot_id])),
        ("api version", reverse("api:version-detail", args=[bot_id, version.number])),
        ("api matches", reverse("api:match-list")),
        ("api matches bot", reverse("api:match-list") + f"?bot={bot_id}"),
        ("api match", reverse("api:match-detail", args=[match.pk])),
        ("api replay", reverse("api:match-replay", args=[match.pk])),
        ("api queue", reverse("api:queue")),
        ("api ladders", reverse("api:ladder-list")),
        ("api tournaments", reverse("api:tournament-list")),
    ]
    if ladder is not None:
        paths += [
            ("ladder", reverse("ladders:detail", args=[ladder.slug])),
            ("ladder bot", reverse("ladders:entry", args=[ladder.slug, entry.bot_id])),
            ("api ladder", reverse("api:ladder-detail", args=[ladder.slug])),
            ("api standings", reverse("api:ladder-standings", args=[ladder.slug])),
            ("api history", reverse("api:ladder-history", args=[ladder.slug, entry.bot_id])),
        ]
    for label, tournament in (("swiss", swiss), ("round robin", robin)):
        if tournament is None:
            continue
        paths += [
            (f"{label}", reverse("tournaments:detail", args=[tournament.slug])),
            (f"{label} standings.csv", reverse("tournaments:standings_csv", args=[tournament.slug])),
            (f"{label} progress", reverse("tournaments:progress", args=[tournament.slug])),
            (f"api {label}", reverse("api:tournament-detail", args=[tournament.slug])),
        ]
    return paths


def _deep_match_page(page: int) -> str:
    """The match list's deepest page: by number while the list pages by number (OFFSET), else
    the keyset position of the match ``MATCHES_PER_PAGE`` from the oldest (the page before last)."""
    from django.urls import reverse

    from matches import selectors
    from matches.models import Match
    from matches.views import MATCHES_PER_PAGE

    if not hasattr(selectors, "match_cursor"):
        return reverse("matches:list") + f"?page={page}"
    near_end = Match.objects.order_by("queued_at", "pk")[MATCHES_PER_PAGE:MATCHES_PER_PAGE + 1].first()
    if near_end is None:
        return reverse("matches:list") + "?oldest=1"
    return reverse("matches:list") + f"?before={selectors.match_cursor(near_end)}"


@dataclass
class Figures:
    label: str
    path: str
    times: list = field(default_factory=list)
    statuses: dict = field(default_factory=dict)
    bytes: int = 0
    queries: int | None = None

    def summary(self, trivial_p50: float | None) -> dict:
        times = sorted(self.times)
        p50 = _percentile(times, 50)
        return {
            "label": self.label,
            "path": self.path,
            "requests": len(times),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "p50_ms": _ms(p50),
            "p95_ms": _ms(_percentile(times, 95)),
            "p99_ms": _ms(_percentile(times, 99)),
            "max_ms": _ms(times[-1] if times else None),
            "per_second": round(len(times) / sum(times), 1) if times and sum(times) else None,
            "x_trivial": round(p50 / trivial_p50, 1) if p50 and trivial_p50 else None,
            "bytes": self.bytes,
            "queries": self.queries,
        }


def _percentile(sorted_times: list, q: float) -> float | None:
    """Nearest-rank percentile (the slowest of the fastest q%)."""
    if not sorted_times:
        return None
    rank = max(1, -(-len(sorted_times) * q // 100))
    return sorted_times[int(rank) - 1]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def _get(host: str, port: int, path: str) -> tuple[int, int, float]:
    """(status, body bytes, seconds) of one GET."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection(host, port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request("GET", path, headers={"Host": f"{host}:{port}", "Accept": "*/*"})
        response = connection.getresponse()
        body = response.read()
        status = response.status
    except (OSError, http.client.HTTPException):
        return 0, 0, time.perf_counter() - started
    finally:
        connection.close()
    return status, len(body), time.perf_counter() - started


def count_queries(paths: list[tuple[str, str]], host: str) -> dict[str, int | str]:
    """Queries each path makes, served in this process by Django's test client, under the web
    process's statement timeout (settings.WEB_STATEMENT_TIMEOUT_MS on PostgreSQL): a path whose
    query is cancelled there counts as ``"N, cancelled"``."""
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST=host, raise_request_exception=False)
    timeout = getattr(settings, "WEB_STATEMENT_TIMEOUT_MS", 0)
    if connection.vendor == "postgresql" and timeout:
        with connection.cursor() as cursor:
            cursor.execute(f"SET statement_timeout = {int(timeout)}")
    counts: dict[str, int | str] = {}
    for _label, path in paths:
        with CaptureQueriesContext(connection) as queries:
            status = client.get(path, secure=True).status_code
        counts[path] = len(queries) if status < 500 else f"{len(queries)}, cancelled"
    return counts


def run(url: str, *, requests: int = 20, seconds: float = 120.0, paths=None, progress=None,
        bot: int | None = None) -> dict:
    """Time every path against the server at ``url`` (``paths``, else ``discover_paths(bot)``);
    returns the report."""
    host, port = check_url(url)
    paths = paths or discover_paths(bot)
    status, _, _ = _get(host, port, TRIVIAL)
    if status != 200:
        raise BenchError(f"{url}{TRIVIAL} answered {status or 'nothing'}: is the server running?")
    figures = {path: Figures(label, path) for label, path in paths}
    trivial = Figures("trivial view", TRIVIAL)
    for _label, path in paths:  # one warm-up request each (connections, caches, imports)
        _get(host, port, path)
    started = time.monotonic()
    rounds = 0
    while rounds < requests and time.monotonic() - started < seconds:
        for _label, path in paths:
            for item, p in ((figures[path], path), (trivial, TRIVIAL)):
                code, size, took = _get(host, port, p)
                item.times.append(took)
                item.statuses[code] = item.statuses.get(code, 0) + 1
                item.bytes = size
        rounds += 1
        if progress:
            progress(rounds, requests)
    elapsed = time.monotonic() - started
    queries = count_queries(paths, host)
    for path, item in figures.items():
        item.queries = queries.get(path)
    trivial_p50 = _percentile(sorted(trivial.times), 50)
    return {
        "url": url,
        "rounds": rounds,
        "seconds": round(elapsed, 1),
        "trivial": trivial.summary(None),
        "pages": [figures[path].summary(trivial_p50) for _label, path in paths],
    }


def table(report: dict) -> str:
    """The report as a Markdown table."""
    t = report["trivial"]
    lines = [
        f"{report['url']}: {report['rounds']} rounds in {report['seconds']} s; trivial view p50 "
        f"{t['p50_ms']} ms, p95 {t['p95_ms']} ms",
        "",
        "| page | path | status | p50 ms | p95 ms | p99 ms | req/s | x trivial | KB | queries |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in report["pages"]:
        statuses = ", ".join(f"{k}x{v}" for k, v in row["statuses"].items())
        lines.append(
            f"| {row['label']} | `{row['path']}` | {statuses} | {row['p50_ms']} | {row['p95_ms']} | {row['p99_ms']} | "
            f"{row['per_second']} | {row['x_trivial']} | {row['bytes'] / 1024:.1f} | {row['queries']} |"
        )
    return "\n".join(lines)
