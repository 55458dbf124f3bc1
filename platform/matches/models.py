"""Matches: who sits where, under which rules, and everything the worker recorded."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from engine import glossary

#: the fewest and the most deals one match of a competition may have (a ladder's or a tournament's
#: ``deals``), so a typo cannot make a match of a million deals
MIN_COMPETITION_DEALS, MAX_COMPETITION_DEALS = 1, 100


class Match(models.Model):
    """One match: rules, seats, seed and format in; results, replay, logs and timings out."""

    class Kind(models.TextChoices):
        VALIDATION = "validation", "validation"
        LADDER = "ladder", "ladder"
        TOURNAMENT = "tournament", "tournament"
        CHALLENGE = "challenge", "challenge"
        # a person plays bots in the browser (the play app): unranked, one deal
        HUMAN = "human", "human game"

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    rules = models.JSONField(help_text="engine Rules.to_dict(): every option, canonical")
    seed = models.BigIntegerField()
    deals = models.PositiveIntegerField(default=1, help_text=glossary.DEALS_HELP)
    duplicate = models.BooleanField(default=False, help_text=glossary.DUPLICATE_HELP)
    # The bots' clock for this match; empty means the sandbox.limits default.
    time_per_decision = models.FloatField(null=True, blank=True, help_text="seconds; empty: the default")
    time_bank = models.FloatField(null=True, blank=True, help_text="seconds; empty: the default")
    time_per_match = models.FloatField(null=True, blank=True, help_text="seconds; empty: the default")

    queued_at = models.DateTimeField(auto_now_add=True)
    # When the task was last sent; a queued match whose message was lost is sent again.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # After this a running match is presumed abandoned by a dead worker and may start again.
    deadline = models.DateTimeField(null=True, blank=True)
    # How long after its start that is by the match's own format and clocks
    # (selectors.match_own_stale_after; MATCH_STALE_AFTER, when set, overrides it), written when its
    # task is sent: a start takes the match and sets its deadline in one statement (services.match_begin).
    stale_after = models.DurationField(null=True, blank=True)
    # Each start takes a fresh token; only the holder of the current token may store a result.
    attempts = models.PositiveIntegerField(default=0)
    attempt_token = models.CharField(max_length=32, blank=True)
    # The running attempt's lease, on the database's clock: its worker renews it every few
    # seconds (MATCH_LEASE_RENEW_SECONDS); once it passed, any worker may take the match again.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The Celery worker (hostname) of the latest attempt.
    worker = models.CharField(max_length=255, blank=True)
    # After an infrastructure error on this worker, it leaves the match to another healthy
    # worker until avoid_until (database clock), when there is one.
    avoid_worker = models.CharField(max_length=255, blank=True)
    avoid_until = models.DateTimeField(null=True, blank=True)
    # Sending the match's task to the broker failed at this time: the sweeper sends it again.
    send_failed_at = models.DateTimeField(null=True, blank=True)

    rounds_played = models.PositiveIntegerField(null=True, blank=True)
    games_played = models.PositiveIntegerField(null=True, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    replay_gz = models.BinaryField(null=True, blank=True)
    # gzipped JSON: per game, each action record's decision time in ms (null: fallback or untimed),
    # engine MatchResult.decision_ms; kept apart from `timings` because it grows with the match
    decision_ms_gz = models.BinaryField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-queued_at", "-pk"]
        verbose_name_plural = "matches"
        indexes = [
            models.Index(fields=["status", "queued_at"], name="match_status_queued_idx"),
            # the match list's order (matches.selectors.match_list)
            models.Index(fields=["-queued_at", "-id"], name="match_list_order_idx"),
            # the lease sweeper: running matches whose lease expired
            models.Index(fields=["status", "lease_expires_at"], name="match_status_lease_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "done", "failed", "cancelled"]),
                name="match_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=["validation", "ladder", "tournament", "challenge", "human"]),
                name="match_kind_valid",
            ),
            models.CheckConstraint(condition=models.Q(deals__gte=1), name="match_deals_positive"),
            models.CheckConstraint(
                condition=~models.Q(status="running") | models.Q(deadline__isnull=False),
                name="match_running_has_deadline",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.kind}, {self.status})"

    def get_absolute_url(self) -> str:
        return reverse("matches:detail", args=[self.pk])

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class MatchSeat(models.Model):
    """A seat of a match (first game's seat order) and what its bot achieved."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    bot_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="seats"
    )
    # Copies that never change, kept on the seat so a bot's or a version's matches are read newest
    # first from one index ((bot or version, queued_at, match) below) without touching the rest of
    # the history: the version's bot and the match's queued_at. Filled on creation (``save``,
    # ``matches.services.match_create``); the migration that added them filled the older rows.
    bot = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )  # indexed with queued_at below
    queued_at = models.DateTimeField()
    # A reference bot of engine.bots by name (our own code), e.g. the validation opponent.
    reference_bot = models.CharField(max_length=64, blank=True)
    # A person at the table (a human game, the play app): they decide in the browser.
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="human_seats"
    )

    score = models.FloatField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    wins = models.PositiveIntegerField(null=True, blank=True)
    strikes = models.PositiveIntegerField(default=0)
    forfeited = models.BooleanField(default=False)
    # The forfeit when there was one, else the first strike; every fault is in `faults`.
    fault_kind = models.CharField(max_length=32, blank=True)
    fault_reason = models.TextField(blank=True)
    faults = models.JSONField(default=list, blank=True)
    log = models.TextField(blank=True)
    # Where in `log` each decision's prints are (sandboxing.compact_log_marks):
    # {"start", "decisions", "printed": chars per decision, trailing zeros left out}; {} with no log.
    log_marks = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["match", "seat"]
        indexes = [
            # a bot's and a version's matches, newest first (matches.selectors.match_seats)
            models.Index(fields=["bot", "-queued_at", "-match"], name="seat_bot_matches_idx"),
            models.Index(fields=["bot_version", "-queued_at", "-match"], name="seat_version_matches_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="match_seat_unique"),
            models.CheckConstraint(
                condition=models.Q(bot_version__isnull=True, bot__isnull=True)
                | models.Q(bot_version__isnull=False, bot__isnull=False),
                name="match_seat_bot_with_version",
            ),
            # exactly one of: a bot's version, a reference bot, a person
            models.CheckConstraint(
                condition=(
                    models.Q(bot_version__isnull=False, reference_bot="", player__isnull=True)
                    | models.Q(bot_version__isnull=True, player__isnull=True) & ~models.Q(reference_bot="")
                    | models.Q(bot_version__isnull=True, reference_bot="", player__isnull=False)
                ),
                name="match_seat_one_occupant",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.match} seat {self.seat}: {self.label}"

    def save(self, *args, **kwargs) -> None:
        self.fill_copies()
        super().save(*args, **kwargs)

    def fill_copies(self) -> MatchSeat:
        """Set the copied columns (the version's bot, the match's queued_at) when not set yet: for
        seats written by ``bulk_create`` or ``COPY``, which skip ``save``."""
        if self.bot_version_id is not None and self.bot_id is None:
            self.bot_id = self.bot_version.bot_id
        if self.queued_at is None and self.match_id is not None:
            self.queued_at = self.match.queued_at
        return self

    @property
    def label(self) -> str:
        if self.bot_version_id:
            return self.bot_version.label
        if self.player_id:
            return f"{self.player.username} (human)"
        return f"{self.reference_bot} (reference)"


class Challenge(models.Model):
    """An unranked match a user asked for: their bot against a public bot under a ladder's rules.

    The ladder is named by string, never imported: ladders sit above matches (what makes a
    challenge, ``ladders.services.challenge_create``, lives there)."""

    challenger = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges")
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="challenge")
    ladder = models.ForeignKey("ladders.Ladder", null=True, on_delete=models.SET_NULL, related_name="challenges")
    #: the client address it was asked from (core.clientip): the pending cap counts it as well as the
    #: account, so opening accounts does not multiply it; "" when the server gave none
    address = models.CharField(max_length=45, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # the table of the API app, where challenges were first kept (matches/0012 moved the model)
        db_table = "api_challenge"
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["address", "created_at"], name="api_challenge_address")]

    def __str__(self) -> str:
        return f"challenge by {self.challenger}: match {self.match_id}"
