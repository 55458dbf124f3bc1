"""Selectors of the matches app (functions that read)."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

from core.converters import MAX_ID
from core.models import WorkerHeartbeat
from django.conf import settings
from django.db.models import Count, Min, Prefetch, Q, QuerySet
from django.urls import reverse
from django.utils.module_loading import import_string

from bots.selectors import version_deferred
from engine import glossary
from engine.cards import card_table
from engine.replay import SUPPORTED_VERSIONS

from .models import Challenge, Match, MatchSeat

#: a worker whose last heartbeat is older than this is not counted as alive
WORKER_ALIVE_WINDOW = timedelta(minutes=3)

#: seconds per game for the engine, the fallback policy and the referee's bookkeeping
#: (measured in milliseconds; generous, since it is only a margin)
ENGINE_SECONDS_PER_GAME = 1.0
#: seconds for storing the result and everything around the games of one match
MATCH_BOOKKEEPING_SECONDS = 120.0
#: seconds between a match's soft time limit (the task records an infrastructure error)
#: and its hard one (Celery kills the worker process)
HARD_LIMIT_GRACE = 60.0
#: seconds after the hard limit before the sweeper presumes a running match abandoned
STALE_GRACE = 60.0


def match_time_limit(*, players: int, deals: int, duplicate: bool, limits, people: int = 0, clock: float = 0.0) -> float:
    """The seconds a match may take before it is an infrastructure fault (Celery's soft limit).

    Derived from its format and the bots' clocks (``limits``: sandbox.limits.Limits), so a bot
    that plays within its clocks can never reach it: every seat may think for its whole
    ``time_per_match`` plus one decision's overshoot (time per decision and bank), every seat of
    every game may take the whole ``start_seconds`` to start (a fresh bot process per game), plus
    the engine per game and the bookkeeping. ``people`` of the seats are persons (a human game)
    with ``clock`` seconds a decision: each may think for ``matches.human.THINKING_SECONDS`` and
    one clock more instead.

    >>> from sandbox.limits import Limits
    >>> match_time_limit(players=2, deals=1, duplicate=True, limits=Limits())
    784.0
    """
    played = glossary.games_of(deals, players, duplicate)
    from .human import THINKING_SECONDS

    bots = players - people
    thinking = bots * (limits.time_per_match + limits.time_per_decision + limits.time_bank)
    thinking += people * (THINKING_SECONDS + clock)
    starts = played * players * limits.start_seconds
    return float(thinking + starts + played * ENGINE_SECONDS_PER_GAME + MATCH_BOOKKEEPING_SECONDS)


def match_time_excess(*, players: int, deals: int, duplicate: bool, limits) -> str | None:
    """Why a match of this format and clocks could outlast MATCH_TIME_LIMIT ("could need ... s ..."), or
    None when it fits: the one check that match creation, a ladder's and a tournament's settings all make
    (each names the match it speaks of before it)."""
    needed = match_time_limit(players=players, deals=deals, duplicate=duplicate, limits=limits)
    if needed <= settings.MATCH_TIME_LIMIT:
        return None
    return (
        f"could need {needed:.0f} s ({deals} deals, {players} seats, duplicate={duplicate}, "
        f"{limits.time_per_match:g} s of thinking per bot), more than the longest match allowed "
        f"(MATCH_TIME_LIMIT={settings.MATCH_TIME_LIMIT} s): fewer deals or a shorter time per match"
    )


def match_time_limits(match: Match) -> tuple[float, float]:
    """(soft, hard) time limit in seconds of ``match``'s task: its own ``match_time_limit``, and
    HARD_LIMIT_GRACE more for the task to record the infrastructure error."""
    from . import sandboxing

    people, clock = 0, 0.0
    if match.kind == Match.Kind.HUMAN:
        people = match.seats.filter(player__isnull=False).count()
        clock = match.human_game.clock
    soft = match_time_limit(
        players=int(match.rules["players"]), deals=match.deals, duplicate=match.duplicate,
        limits=sandboxing.match_limits(match.time_per_decision, match.time_bank, match.time_per_match),
        people=people, clock=clock,
    )
    return soft, soft + HARD_LIMIT_GRACE


def match_stale_after(match: Match) -> float:
    """Seconds after its start when a running match is presumed abandoned by a dead worker (the
    sweeper's deadline): MATCH_STALE_AFTER when set (``stale_after_setting``), else its own
    (``match_own_stale_after``)."""
    return stale_after_setting() or match_own_stale_after(match)


def stale_after_setting() -> float | None:
    """MATCH_STALE_AFTER, the starting worker's setting, when set: it overrides every match's own."""
    return float(settings.MATCH_STALE_AFTER) if settings.MATCH_STALE_AFTER else None


def match_own_stale_after(match: Match, *, limits: tuple[float, float] | None = None) -> float:
    """A match's own stale time: its hard time limit plus STALE_GRACE (``limits``: its
    ``match_time_limits`` when the caller has them); ``Match.stale_after`` keeps it."""
    return (limits or match_time_limits(match))[1] + STALE_GRACE


#: what lists of matches (pages, the API) never show: left in the database
LIST_DEFERRED = ("replay_gz", "decision_ms_gz", "timings")
SEAT_LIST_DEFERRED = (
    "log", "log_marks", "faults", *version_deferred("bot_version"),
    "bot_version__rejection_reason", "bot_version__bot__description",
)


def any_in_play(matches) -> bool:
    """Whether any of ``matches`` (already loaded) is queued or running: its page's tables are
    then kept fresh (core/live.js regions)."""
    return any(m.status in (Match.Status.QUEUED, Match.Status.RUNNING) for m in matches)


def match_list(
    *, bot=None, version=None, kind: str | None = None, status: str | None = None, limit: int | None = 50
) -> QuerySet[Match]:
    """Recent matches with their seats (without replays or logs), newest first; ``limit=None``: all
    (for a paginated list: a bot's or a version's list pages by ``match_page(..., seats=match_seats(...))``).
    A bot's or a version's newest ``limit`` matches come from its seats' index (``match_seats``) by one
    subquery that reads only those seats, however long its history. Nothing a list does not show is
    loaded: no replay, timings, logs or faults, and no version's source bytes."""
    matches = _listed(Match.objects.all())
    if bot is not None or version is not None:
        seats = match_seats(bot=bot, version=version, kind=kind, status=status)
        if limit is not None:
            # the seats' index gives the newest ``limit`` in order; a bot seated twice in one match
            # would make the page one match shorter, never wrong
            seats = seats[:limit]
        matches = matches.filter(pk__in=seats.values("match_id"))
    if kind is not None:
        matches = matches.filter(kind=kind)
    if status is not None:
        matches = matches.filter(status=status)
    matches = matches.order_by("-queued_at", "-pk")
    return matches if limit is None else matches[:limit]


def _listed(matches: QuerySet[Match]) -> QuerySet[Match]:
    return matches.defer(*LIST_DEFERRED).prefetch_related(
        Prefetch(
            "seats",
            queryset=MatchSeat.objects.select_related("bot_version__bot__owner", "player").defer(*SEAT_LIST_DEFERRED).order_by("seat"),
        )
    )


def match_seats(*, bot=None, version=None, kind: str | None = None, status: str | None = None) -> QuerySet[MatchSeat]:
    """The seats of ``bot`` (or of ``version``), newest match first, on the index (bot or version,
    queued_at, match): the keys of a bot's match list (``match_list``, ``match_page``)."""
    if (bot is None) == (version is None):
        raise ValueError("match_seats: give a bot or a version")
    seats = MatchSeat.objects.filter(bot=bot) if bot is not None else MatchSeat.objects.filter(bot_version=version)
    if kind is not None:
        seats = seats.filter(match__kind=kind)
    if status is not None:
        seats = seats.filter(match__status=status)
    return seats.order_by("-queued_at", "-match_id")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def match_cursor(match: Match) -> str:
    """The match list's position of ``match`` (its sort key), for ``?before=`` and ``?after=``."""
    since = match.queued_at - _EPOCH  # exact microseconds: a float timestamp would round them
    return f"{(since.days * 86400 + since.seconds) * 1_000_000 + since.microseconds}_{match.pk}"


def _cursor_key(cursor: str):
    """(queued_at, pk) of a cursor, or None when it is not one."""
    when, _, pk = (cursor or "").partition("_")
    try:
        moment = _EPOCH + timedelta(microseconds=int(when))
        number = int(pk)
    except (ValueError, OverflowError):
        return None
    if number < 1 or number > MAX_ID:
        return None
    return moment, number


def match_page(matches: QuerySet[Match], *, before: str = "", after: str = "", oldest: bool = False,
               size: int = 50, seats: QuerySet[MatchSeat] | None = None) -> dict:
    """One page of ``matches`` (ordered newest first) by keyset: the ``size`` matches older than
    the ``before`` cursor, newer than ``after``, the oldest ones with ``oldest``, else the newest.
    Never counts or skips rows, so the last page costs what the first does (the
    ``(queued_at DESC, id DESC)`` index serves both directions). With ``seats`` (``match_seats``:
    a bot's or a version's list) the keyset runs on the seats' own index and ``matches`` only loads
    the page's rows. Returns ``matches`` (newest first) and the cursors ``newer``/``older`` of the
    neighbouring pages (None at either end); a cursor that is not one raises ValueError."""
    keyed = matches if seats is None else seats
    pk = "pk" if seats is None else "match_id"
    ascending = False
    if before:
        key = _cursor_key(before)
        if key is None:
            raise ValueError(f"not a position in the match list: {before!r}")
        # (queued_at <= q) as the index condition, the tie on q by pk as a filter: an OR of the two
        # would be a filter over the whole index (5 s at 200,000 matches)
        keyed = keyed.filter(queued_at__lte=key[0]).exclude(**{"queued_at": key[0], f"{pk}__gte": key[1]})
    elif after:
        key = _cursor_key(after)
        if key is None:
            raise ValueError(f"not a position in the match list: {after!r}")
        keyed = keyed.filter(queued_at__gte=key[0]).exclude(**{"queued_at": key[0], f"{pk}__lte": key[1]})
        ascending = True
    elif oldest:
        ascending = True
    if ascending:
        keyed = keyed.order_by("queued_at", pk)
    if seats is None:
        rows = list(keyed[: size + 1])
        more = len(rows) > size
        rows = rows[:size]
    else:
        ids = list(keyed.values_list("match_id", flat=True)[: size + 1])
        more = len(ids) > size
        ids = list(dict.fromkeys(ids[:size]))  # a bot seated twice in one match: the match once
        found = matches.in_bulk(ids)
        rows = [found[i] for i in ids if i in found]
    if ascending:
        rows.reverse()
    if not rows:
        return {"matches": [], "newer": None, "older": None}
    # a further page exists beyond the fetched side when one more row came back; on the other side
    # there is one whenever the page was reached from a cursor (the rows it came from)
    if ascending:
        newer, older = (match_cursor(rows[0]) if more else None), match_cursor(rows[-1])
        if oldest and not after:
            older = None
    else:
        newer = match_cursor(rows[0]) if before else None
        older = match_cursor(rows[-1]) if more else None
    return {"matches": rows, "newer": newer, "older": older}


def match_detail(match_id: int) -> Match:
    return (
        Match.objects.defer("replay_gz", "decision_ms_gz")
        .prefetch_related(
            Prefetch("seats", queryset=MatchSeat.objects.select_related("bot_version__bot__owner", "player").order_by("seat"))
        )
        .get(pk=match_id)
    )


def seed_shown(match: Match, user=None) -> bool:
    """Whether ``user`` may see ``match``'s seed: staff always; everyone else once the match has
    ended. Every deal and draw derives from it, so a running match's seed would show every hidden
    hand (a human game's included) to whoever computes the deals."""
    return match.is_finished or bool(user is not None and getattr(user, "is_staff", False))


def match_clocks(match: Match) -> list[dict]:
    """The bots' three clocks of ``match`` in the order of sandbox.limits.CLOCKS: ``name`` (as in
    the bots' configuration), ``label``, ``seconds`` and ``default`` (the match left it empty)."""
    from sandbox.limits import CLOCKS

    from . import sandboxing

    limits = sandboxing.match_limits(match.time_per_decision, match.time_bank, match.time_per_match)
    return [
        {
            "name": name,
            "label": name.replace("_", " ").capitalize(),
            "seconds": getattr(limits, name),
            "default": getattr(match, name) is None,
        }
        for name in CLOCKS
    ]


def match_seating(match: Match) -> str | None:
    """How the seats were balanced over the rotations of a duplicate match (the replay's
    ``seating.description``), or None: not duplicate, not played, or a replay from before
    the engine recorded it."""
    if not match.duplicate or match.status != Match.Status.DONE:
        return None
    data = match_replay_json(match)
    if data is None:
        return None
    seating = json.loads(data).get("seating")
    description = seating.get("description") if isinstance(seating, dict) else None
    return description if isinstance(description, str) and description else None


def can_view_seat_log(user, seat: MatchSeat, match_kind: str | None = None) -> bool:
    """May ``user`` read this seat's log? As ``bots.selectors.private_read_reason`` rules for a seat
    log: the bot's owner, superusers, organizers for ladder and tournament matches only. Reference
    bots print nothing of interest. Showing the log is ``services.seat_log_read``, which audits."""
    from bots.selectors import can_read_seat_log

    if seat.bot_version_id is None:
        return False
    return can_read_seat_log(user, seat.bot_version.bot, match_kind or seat.match.kind)


def match_replay_json(match: Match) -> bytes | None:
    """The replay document as JSON bytes, or None when the match has none."""
    data = Match.objects.filter(pk=match.pk).values_list("replay_gz", flat=True).first()
    if not data:
        return None
    return gzip.decompress(bytes(data))


def match_decision_ms(match: Match) -> list:
    """Per game, the decision time in ms of each action record of the replay (None: fallback
    move or untimed seat); [] when the match recorded none."""
    data = Match.objects.filter(pk=match.pk).values_list("decision_ms_gz", flat=True).first()
    if not data:
        return []
    return json.loads(gzip.decompress(bytes(data)))


def bot_decision_records(replay: dict, bot: int) -> list[tuple[int, int]]:
    """(game, action index) of every decision bot ``bot`` took itself, in the order it was asked:
    its own records up to its forfeit; the fallback's moves after it are not its decisions.

    >>> bot_decision_records({"games": [{"seats": [1, 0], "actions": [{"seat": 0}, {"seat": 1}]}]}, 0)
    [(0, 1)]
    """
    found = []
    forfeited = False
    for g, game in enumerate(replay.get("games", [])):
        seats = game["seats"]
        for i, record in enumerate(game["actions"]):
            if seats[record["seat"]] != bot or forfeited:
                continue
            found.append((g, i))
            fault = record.get("fault")
            if fault and fault.get("forfeit"):
                forfeited = True
    return found


def seat_decision_logs(seat: MatchSeat, replay: dict) -> list[list]:
    """``[game, action index, text]`` for each decision of ``seat``'s bot that printed something.

    Callers check ``can_view_seat_log`` first. Empty when the marks do not fit the
    replay (a match stored before marks existed): better no lines than lines
    beside the wrong decision.
    """
    marks = seat.log_marks
    if not isinstance(marks, dict) or not marks:
        return []
    records = bot_decision_records(replay, seat.seat)
    printed = marks.get("printed", [])
    if marks.get("decisions") != len(records) or len(printed) > len(records):
        return []
    log = seat.log
    found = []
    start = marks["start"]
    for (g, i), size in zip(records, printed, strict=False):  # decisions past `printed` printed nothing
        if size > 0:
            found.append([g, i, log[start:start + size]])
        start += size
    return found


def queue_summary(*, now=None) -> dict:
    """Counts of queued and running matches by queue kind, the oldest waiting, workers alive (each
    with its health: ``healthy``, ``health_reason``, ``consuming``), running matches whose lease
    expired or that passed their deadline (``stuck``)."""
    from .services import database_now

    now = now or database_now()
    counts = {
        (row["kind"], row["status"]): row["n"]
        for row in Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        .values("kind", "status")
        .annotate(n=Count("pk"))
    }
    kinds = [
        {
            "kind": kind,
            "queued": counts.get((kind, Match.Status.QUEUED), 0),
            "running": counts.get((kind, Match.Status.RUNNING), 0),
        }
        for kind in Match.Kind.values
    ]
    oldest = (
        Match.objects.filter(status=Match.Status.QUEUED)
        .defer("replay_gz", "decision_ms_gz")
        .order_by("queued_at", "pk")
        .first()
    )
    stuck = (
        Match.objects.filter(status=Match.Status.RUNNING)
        .filter(Q(deadline__lt=now) | Q(lease_expires_at__lte=now))
        .count()
    )
    workers = list(WorkerHeartbeat.objects.filter(last_seen__gte=now - WORKER_ALIVE_WINDOW))
    return {
        "kinds": kinds,
        "queued": sum(k["queued"] for k in kinds),
        "running": sum(k["running"] for k in kinds),
        "oldest": oldest,
        "oldest_wait": (now - oldest.queued_at) if oldest else None,
        "stuck": stuck,
        "workers": workers,
        "workers_unhealthy": sum(1 for worker in workers if not worker.healthy),
        "workers_seen": WorkerHeartbeat.objects.aggregate(first=Min("last_seen"))["first"] is not None,
    }


def _event_reader(kind: str, part: str):
    """The function settings.MATCH_EVENTS names for ``part`` of a match of ``kind``, or None."""
    path = settings.MATCH_EVENTS.get(kind, {}).get(part)
    return import_string(path) if path else None


def match_event(match: Match) -> dict | None:
    """The ladder or tournament ``match`` was played for: ``{"kind", "name", "url", "detail"}`` (detail:
    the tournament's round and table), or None (a challenge, a validation, a match no event links).
    Read by the app that owns the kind (settings.MATCH_EVENTS), so matches imports neither; one query,
    on the link's unique index."""
    reader = _event_reader(match.kind, "event")
    return reader(match) if reader is not None else None


def match_rating_changes(match: Match) -> dict[int, object]:
    """Bot version id -> its RatingChange in ``match`` (rated ladder matches only; settings.MATCH_EVENTS).
    One query."""
    reader = _event_reader(match.kind, "rating_changes")
    return reader(match) if reader is not None else {}


def match_query(*, bot=None, ladder=None, tournament=None, status=None, kind=None):
    """Matches for the API list: ``bot`` an id, ``ladder`` and ``tournament`` slugs; unknown ones match none.

    The ladder and tournament filters follow the reverse relations those apps' models declare
    (``ladder_match``, ``tournament_tables``) by name: matches imports neither app.

    With ``bot`` the list pages over ``match_seats_query`` (the bot's seats' index) and this queryset
    only loads the page's matches, so it is not narrowed to the bot here."""
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
    if bot is None:
        return None
    seats = match_seats(bot=bot, kind=kind, status=status).only("pk", "match_id", "queued_at")
    if ladder is not None:
        seats = seats.filter(match__ladder_match__ladder__slug=ladder)
    if tournament is not None:
        in_tournament = Match.objects.filter(tournament_tables__round__tournament__slug=tournament)
        seats = seats.filter(match_id__in=in_tournament.values("pk"))
    return seats


def challenge_list(user) -> QuerySet[Challenge]:
    return Challenge.objects.filter(challenger=user).select_related("match", "ladder").order_by("-created_at", "-pk")


def challenge_match_status(challenge: Challenge) -> str:
    """The status of the challenge's match as stored now (its task may have run since it was created)."""
    return Match.objects.filter(pk=challenge.match_id).values_list("status", flat=True).get()


# --- the replay viewer -------------------------------------------------------------------------


def replay_viewer_data(match: Match, readable_logs: frozenset[int] = frozenset()) -> dict:
    """What the viewer needs beside the replay JSON: who each bot is, timings (per bot and per
    decision), and the logs of the seats in ``readable_logs``, whole and split by decision (the
    caller decides and audits those reads: ``matches.services.seat_log_read``)."""
    bots = []
    logs = {}
    readable = []
    for seat in match.seats.all():  # seat order of the first game = the replay's bot index
        if seat.bot_version_id:
            version = seat.bot_version
            bots.append(
                {
                    "label": version.label,
                    "url": version.get_absolute_url(),
                    "owner": version.bot.owner.username,
                    "reference": False,
                }
            )
        elif seat.player_id:  # a person at a human game
            bots.append({"label": seat.player.username, "url": "", "owner": seat.player.username, "reference": False,
                         "human": True})
        else:
            bots.append({"label": seat.reference_bot, "url": "", "owner": "", "reference": True})
        # reference bots are our own code: their (empty) logs are nobody's business
        if match.is_finished and seat.bot_version_id and seat.seat in readable_logs:
            logs[str(seat.seat)] = seat.log
            readable.append(seat)
    decision_logs = {}
    if any(seat.log_marks for seat in readable):
        data = match_replay_json(match)
        replay = json.loads(data) if data else {}
        for seat in readable:
            decision_logs[str(seat.seat)] = seat_decision_logs(seat, replay)
    return {
        "match": match.pk,
        "kind": match.kind,
        "replay_url": reverse("matches:replay", args=[match.pk]),
        # the replay versions the viewer reads: the same as engine.replay
        "replay_versions": list(SUPPORTED_VERSIONS),
        "match_url": match.get_absolute_url(),
        "bots": bots,
        "timings": match.timings or {},
        "logs": logs,
        # per game, parallel to replay["games"][g]["actions"]: ms or null
        "decision_ms": match_decision_ms(match) if match.status == Match.Status.DONE else [],
        # per readable bot index: [game, action index, text printed during that decision]
        "decision_logs": decision_logs,
        **card_table(),
    }


def live_viewer_data(match: Match) -> dict:
    """The viewer's metadata for a match being played: it follows the match's live events
    (``matches.live``) instead of loading a replay."""
    return {**replay_viewer_data(match), "live_url": reverse("web:live_events", args=[match.pk]),
            "duplicate": match.duplicate}
