"""Services of version tests (functions that write): start, cancel, and fold each finished pair in.

A test is ``arena sprt NEW OLD`` on the site: pair i is one unrated match (kind
``challenge``, so no ladder ever rates it) of one deal played twice with the seats
swapped (``deals=1, duplicate=True``, seed ``test.seed + i``, NEW at seat 0), under the
rules and clocks of a two-seat ladder. A few pairs are in flight at once
(``PAIRS_IN_FLIGHT``); each finished one is folded into the pentanomial counts by
``version_test_match_finish`` (the matches app's result hook, inside the transaction
that stores the result), under the test's row lock, so a pair is counted once even
when workers finish pairs at the same moment or a hook runs twice. NEW's points in a
pair are those of ``arena sprt`` (``arena_cli.sprt.pair_points``: a game won 1, drawn
1/2, lost 0; a forfeit loses the pair, as the ladder ranks a forfeit last). The test
stops at a Wald bound (H1, H0) or at ``max_pairs`` (inconclusive). A pair whose match
failed (platform trouble, no bot blamed) is never counted: it is played again, the same
deal, up to ``PAIR_ATTEMPTS`` times, then the test fails with the match's error.
"""

from __future__ import annotations

import gzip
import json
import secrets
import threading
from dataclasses import fields
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from bots.models import BotVersion
from bots.selectors import bot_playing_version
from engine.rules import Rules, RulesError
from ladders.checks import LadderError, ladder_match_format
from ladders.models import Ladder
from matches.models import Match
from matches.services import MatchError, match_cancel, match_create, match_enqueue
from tournaments.sprt import Sprt, elo_estimate, llr, pair_cell

from .models import VersionTest, VersionTestPair

#: elo0, elo1, alpha, beta: the defaults of ``arena sprt`` (tournaments.sprt.Sprt's)
DEFAULTS = {f.name: f.default for f in fields(Sprt)}
#: pairs a test plays at most unless its owner asks for fewer (``arena sprt`` stops at 10,000)
DEFAULT_MAX_PAIRS = 1000
#: the most pairs one test may ask for: workers are shared
MAX_PAIRS_LIMIT = 5000
#: a pair whose match failed on the platform is played this many times before the test fails
PAIR_ATTEMPTS = 3
#: a seed leaves room for MAX_PAIRS_LIMIT pairs inside a 63-bit match seed
SEED_LIMIT = 2**62
#: elo0 and elo1 lie within +-ELO_LIMIT: from about +6,400 the logistic score of an Elo
#: difference rounds to 1 (and below about -123,000 it overflows), where tournaments.sprt.llr
#: divides by zero; such a test would play every pair and count none
ELO_LIMIT = 1000.0


def pairs_in_flight() -> int:
    """Pairs of one test queued or playing at once (``VERSION_TEST_PAIRS_IN_FLIGHT``, default 4)."""
    return max(1, settings.VERSION_TEST_PAIRS_IN_FLIGHT)


def running_limit() -> int:
    """Tests of one owner running at once (``VERSION_TESTS_RUNNING``, default 2)."""
    return max(1, settings.VERSION_TESTS_RUNNING)


class VersionTestError(ValueError):
    """A test cannot start (or be cancelled) as asked; ``field`` names the form field at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _check_versions(owner, new: BotVersion, old: BotVersion) -> None:
    if new.bot.owner_id != owner.pk:
        raise VersionTestError(f"{new.label} is not yours: test one of your own versions", "new_version")
    if new.status != BotVersion.Status.ACTIVE:
        raise VersionTestError(
            f"{new.label} is {new.status}: only a version that passed validation can be tested", "new_version"
        )
    if old.pk == new.pk:
        raise VersionTestError(f"NEW and OLD are both {new.label}: pick another version to test against", "old_version")
    if old.status != BotVersion.Status.ACTIVE:
        raise VersionTestError(f"{old.label} is {old.status}: OLD must be an active version", "old_version")
    if old.bot.owner_id != owner.pk:
        from ladders.selectors import bot_is_public

        if not bot_is_public(old.bot):
            raise VersionTestError(
                f"bot {old.bot} is not public: test against your own versions, or a bot with public source "
                "or an active ladder entry",
                "old_version",
            )
        playing = bot_playing_version(old.bot)
        if playing is None or playing.pk != old.pk:
            raise VersionTestError(
                f"{old.label} is not the version {old.bot} plays now"
                + (f" (v{playing.number})" if playing else "")
                + ": another owner's bot is tested in the version it plays, as a challenge meets it",
                "old_version",
            )


def _check_ladder(ladder: Ladder) -> tuple[Rules, dict]:
    if not ladder.active:
        raise VersionTestError(f"the ladder {ladder.name!r} is not active: use an active ladder's rules", "ladder")
    if ladder.seats != 2:
        raise VersionTestError(
            f"the ladder {ladder.name!r} has {ladder.seats} seats: a version test plays NEW against OLD head to "
            "head, so it needs a two-seat ladder's rules",
            "ladder",
        )
    try:
        rules = Rules.from_dict(ladder.rules)
        match_format = ladder_match_format(ladder)
    except (RulesError, TypeError, LadderError) as exc:
        raise VersionTestError(f"the ladder {ladder.name!r} cannot lend its rules: {exc}", "ladder") from None
    if rules.players != 2:
        raise VersionTestError(f"the rules of ladder {ladder.name!r} are for {rules.players} players, not 2", "ladder")
    return rules, match_format


def _check_numbers(elo0, elo1, alpha, beta, max_pairs, seed) -> None:
    try:
        Sprt(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
    except ValueError as exc:
        text = str(exc)
        field = next((name for name in ("alpha", "beta", "elo0", "elo1") if text.startswith(name)), None)
        raise VersionTestError(text, field) from None
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        if not -ELO_LIMIT <= value <= ELO_LIMIT:
            raise VersionTestError(f"{name} must be from {-ELO_LIMIT:g} to {ELO_LIMIT:g}, got {value!r}", name)
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or not 1 <= max_pairs <= MAX_PAIRS_LIMIT:
        raise VersionTestError(f"max pairs must be 1 to {MAX_PAIRS_LIMIT}, got {max_pairs!r}", "max_pairs")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT):
        raise VersionTestError(f"the seed must be a whole number from 0 to {SEED_LIMIT - 1}, got {seed!r}", "seed")


def version_test_start(
    *,
    owner,
    new_version: BotVersion,
    old_version: BotVersion,
    ladder: Ladder,
    elo0: float = DEFAULTS["elo0"],
    elo1: float = DEFAULTS["elo1"],
    alpha: float = DEFAULTS["alpha"],
    beta: float = DEFAULTS["beta"],
    max_pairs: int = DEFAULT_MAX_PAIRS,
    seed: int | None = None,
) -> VersionTest:
    """Start a test of ``new_version`` (the owner's) against ``old_version`` (the owner's, or the
    version a public bot plays) under ``ladder``'s rules and clocks, and queue its first pairs.

    At most ``running_limit()`` tests of one owner run at once. The rate limit of requests
    (core.ratelimit) is the caller's: it needs the request.
    """
    _check_versions(owner, new_version, old_version)
    rules, match_format = _check_ladder(ladder)
    _check_numbers(elo0, elo1, alpha, beta, max_pairs, seed)
    if seed is None:
        seed = secrets.randbelow(SEED_LIMIT)
    limit = running_limit()
    with transaction.atomic():
        # The owner's row lock makes concurrent starts count one after the other.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
        running = VersionTest.objects.filter(owner=owner, status=VersionTest.Status.RUNNING).count()
        if running >= limit:
            raise VersionTestError(
                f"you have {running} version tests running, the most allowed ({limit}); "
                "wait for one to end or cancel one"
            )
        test = VersionTest.objects.create(
            owner=owner, new_version=new_version, old_version=old_version, ladder=ladder, ladder_name=ladder.name,
            rules=rules.to_dict(), time_per_decision=match_format["time_per_decision"],
            time_bank=match_format["time_bank"], time_per_match=match_format["time_per_match"],
            elo0=float(elo0), elo1=float(elo1), alpha=float(alpha), beta=float(beta), max_pairs=max_pairs, seed=seed,
        )
        try:
            _top_up(test)
        except MatchError as exc:  # e.g. the ladder's clocks make a pair longer than MATCH_TIME_LIMIT
            raise VersionTestError(f"the ladder {ladder.name!r} cannot play a pair: {exc}", "ladder") from None
    return test


def version_test_cancel(test: VersionTest, *, user) -> VersionTest:
    """Stop a running test (its owner's call): its queued pairs are cancelled, nothing more is counted."""
    if user.pk != test.owner_id:
        raise VersionTestError("only the owner of a test may cancel it")
    with transaction.atomic():
        test = VersionTest.objects.select_for_update().get(pk=test.pk)
        if test.is_finished:
            raise VersionTestError(f"the test already ended ({test.get_status_display()})")
        _finish(test, VersionTest.Status.CANCELLED, f"cancelled by {user.username}")
    return test


# -- the result hook ----------------------------------------------------------------------------


def version_test_match_finish(match: Match) -> None:
    """Hook of finished challenge matches: fold a test's pair into its counts, once; ignore others.

    Runs in the transaction that stores the match's result (or marks it failed). The test's
    row lock orders concurrent pairs of one test; a pair already counted (the hook run again)
    changes nothing.
    """
    link = VersionTestPair.objects.filter(match_id=match.pk).values_list("pk", "test_id").first()
    if link is None:
        return  # a challenge of the API app
    pair_id, test_id = link
    test = VersionTest.objects.select_for_update().get(pk=test_id)
    pair = VersionTestPair.objects.select_for_update().get(pk=pair_id)
    if pair.state != VersionTestPair.State.PLAYING:
        return
    if test.is_finished:
        pair.state = VersionTestPair.State.DISCARDED
        pair.save(update_fields=["state"])
        return
    try:
        if match.status == Match.Status.DONE:
            _count(test, pair, match)
        elif match.status == Match.Status.FAILED:
            _pair_failed(test, pair, match)
        else:
            return
        if not test.is_finished:
            _top_up(test)
    except MatchError as exc:  # e.g. a version can no longer play: the test cannot go on
        _finish(test, VersionTest.Status.FAILED, f"the next pair cannot be queued: {exc}")


def pair_points_of(match: Match) -> float:
    """NEW's points (0 to 2) in the pair ``match``, NEW at seat 0: ``arena sprt``'s rule on the stored result."""
    from arena_cli.sprt import pair_points

    seats = sorted(match.seats.all(), key=lambda seat: seat.seat)
    replay = json.loads(gzip.decompress(bytes(match.replay_gz)))
    outcome = SimpleNamespace(
        players=[SimpleNamespace(forfeit=True if seat.forfeited else None) for seat in seats], replay=replay
    )
    return pair_points(outcome)


def _count(test: VersionTest, pair: VersionTestPair, match: Match) -> None:
    points = pair_points_of(match)
    counts = list(test.pentanomial)
    counts[pair_cell(points)] += 1
    test.pentanomial = counts
    test.llr = llr(counts, test.elo0, test.elo1)
    test.elo, test.elo_low, test.elo_high = elo_estimate(counts)
    pair.state = VersionTestPair.State.COUNTED
    pair.points = points
    pair.counted_number = sum(counts)
    pair.llr_after = test.llr
    pair.counted_at = timezone.now()
    pair.save(update_fields=["state", "points", "counted_number", "llr_after", "counted_at"])
    test.save(update_fields=["pentanomial", "llr", "elo", "elo_low", "elo_high"])
    lower, upper = test.bounds
    if test.llr >= upper:
        _finish(test, VersionTest.Status.H1)
    elif test.llr <= lower:
        _finish(test, VersionTest.Status.H0)
    elif test.pairs >= test.max_pairs:
        _finish(test, VersionTest.Status.INCONCLUSIVE)


def _pair_failed(test: VersionTest, pair: VersionTestPair, match: Match) -> None:
    pair.state = VersionTestPair.State.FAILED
    pair.save(update_fields=["state"])
    if pair.attempt < PAIR_ATTEMPTS:
        _queue_pair(test, pair.index, attempt=pair.attempt + 1)
        return
    _finish(
        test, VersionTest.Status.FAILED,
        f"pair {pair.index + 1} failed {pair.attempt} times on the platform (no bot blamed); "
        f"last error: {match.error or 'unknown'}",
    )


def _finish(test: VersionTest, status: str, reason: str = "") -> None:
    """End ``test`` (its row locked): the verdict or why, and its queued pairs cancelled."""
    test.status = status
    test.reason = reason
    test.finished_at = timezone.now()
    test.save(update_fields=["status", "reason", "finished_at"])
    waiting = VersionTestPair.objects.filter(
        test=test, state=VersionTestPair.State.PLAYING, match__status=Match.Status.QUEUED
    ).select_related("match")
    for pair in waiting:
        if match_cancel(pair.match):
            pair.state = VersionTestPair.State.DISCARDED
            pair.save(update_fields=["state"])
    # A pair playing now is discarded by its own hook when it ends.


def _top_up(test: VersionTest) -> None:
    """Queue new pairs (test row locked) until PAIRS_IN_FLIGHT play or every pair up to max_pairs is out."""
    playing = VersionTestPair.objects.filter(test=test, state=VersionTestPair.State.PLAYING).count()
    room = min(pairs_in_flight() - playing, test.max_pairs - test.pairs - playing)
    if room <= 0:
        return
    for _ in range(room):
        _queue_pair(test, test.next_pair, attempt=1)
        test.next_pair += 1
    test.save(update_fields=["next_pair"])


def _queue_pair(test: VersionTest, index: int, *, attempt: int) -> VersionTestPair:
    from celery import current_app

    eager = bool(current_app.conf.task_always_eager)
    match = match_create(
        kind=Match.Kind.CHALLENGE,
        rules=test.rules,
        seats=[test.new_version, test.old_version],
        seed=test.seed + index,
        deals=1,
        duplicate=True,
        time_per_decision=test.time_per_decision,
        time_bank=test.time_bank,
        time_per_match=test.time_per_match,
        enqueue=not eager,
    )
    pair = VersionTestPair.objects.create(test=test, index=index, attempt=attempt, match=match)
    if eager:
        _send_in_process(match.pk)
    return pair


# -- tasks run in-process (the embedded default without a broker, and tests) -------------------

_in_process = threading.local()


def _send_in_process(match_id: int) -> None:
    """Once the transaction commits, play the match in-process, one pair after another.

    Each finished pair queues the next from its hook: sent the ordinary way, the next match
    would play inside the previous one's commit, one level deeper for every pair, until the
    stack overflows. Here the outermost call plays the matches in a loop and a call made
    while that loop runs only adds its match to it.
    """

    def send() -> None:
        queue = getattr(_in_process, "queue", None)
        if queue is not None:
            queue.append(match_id)
            return
        _in_process.queue = [match_id]
        try:
            while _in_process.queue:
                match = Match.objects.filter(pk=_in_process.queue.pop(0), status=Match.Status.QUEUED).first()
                if match is not None:  # a cancelled pair's match is left alone
                    match_enqueue(match)
        finally:
            _in_process.queue = None

    transaction.on_commit(send)
