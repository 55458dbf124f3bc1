"""Tournaments as rows: the event, its entries, rounds, their tables (and byes) and the organizer's log.

The pairing and standings logic lives in the pure package ``tournaments``
(``schedule``, ``pairing``, ``standings``); ``services`` feeds them these rows.
Other apps' models are referred to by string so this module imports no platform code.
"""

from __future__ import annotations

import math

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from engine import glossary
from engine.rules import BOUNDS
from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS

#: seats per table: a game's bounds (engine.rules.BOUNDS, RULES.md section 2)
MIN_SEATS, MAX_SEATS = BOUNDS["players"]
#: the longest "owner/bot" label: a username (auth.User, 150) + "/" + a bot name (bots.Bot, 64)
ENTRY_NAME_MAX_LENGTH = 150 + 1 + 64

#: what each clock means, for the help texts (the bounds and defaults live in sandbox.limits)
CLOCK_HELP = {
    "time_per_decision": "Seconds per decision before the time bank is drawn on",
    "time_bank": "Seconds of extra time per bot per match, beyond the time per decision",
    "time_per_match": "Seconds of thinking per bot per match, every decision counted; "
    "a bot that uses it up forfeits (out of match time)",
}


def validate_finite(value) -> None:
    """Refuse NaN and infinities, which slip through comparisons with the bounds."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError("Enter a finite number, got %(value)s.", code="invalid", params={"value": value})


def _clock_field(name: str) -> models.FloatField:
    low, high = CLOCK_BOUNDS[name]
    return models.FloatField(
        default=getattr(DEFAULT_LIMITS, name),
        validators=[validate_finite, MinValueValidator(low), MaxValueValidator(high)],
        help_text=f"{CLOCK_HELP[name]}: {low:g} to {high:g}; copied into every match of the tournament.",
    )


def _clock_constraint(name: str) -> models.CheckConstraint:
    # The last line of defence (raw updates); the field's validators report the same bound first.
    low, high = CLOCK_BOUNDS[name]
    return models.CheckConstraint(
        condition=models.Q(**{f"{name}__gte": low, f"{name}__lte": high}),
        name=f"tournament_{name}_range",
        violation_error_message=f"{name} must be {low:g} to {high:g} seconds.",
    )


class Tournament(models.Model):
    """One event: rule set, format, table size, schedule options, seed and status."""

    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        SWISS = "swiss", "Swiss"

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        REGISTRATION = "registration", "registration"
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, max_length=4000)
    rules = models.JSONField(help_text="engine Rules.to_dict() for a full table: every option, canonical")
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.SWISS)
    seats = models.PositiveSmallIntegerField(
        default=2, help_text=f"Seats per table ({MIN_SEATS}..{MAX_SEATS}); tables of one fewer or one more when the "
        "field needs it."
    )
    deals = models.PositiveIntegerField(default=1, help_text=glossary.DEALS_HELP)
    duplicate = models.BooleanField(
        default=True, help_text=glossary.DUPLICATE_HELP
    )
    rounds = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="Swiss: number of rounds (empty: ceil(log2 entries)). Round robin with 3+ seats: rounds "
        "(empty: ceil((entries - 1) / (seats - 1))). With 3+ seats some pairs usually never meet at a table "
        "and others meet twice, more so with uneven tables or byes; give more rounds when every pair must "
        "meet. The number of pairs that do not meet is shown once the rounds are scheduled at the start.",
    )
    cycles = models.PositiveSmallIntegerField(default=1, help_text="Round robin with 2 seats: full cycles.")
    tie_breaks = models.JSONField(default=list, blank=True, help_text="Tie-break names, in order.")
    # Empty: drawn at random when the tournament starts. Shown to the public only once it is finished,
    # since every deal derives from it (round_seed).
    seed = models.BigIntegerField(
        null=True, blank=True,
        help_text="Empty: drawn at random at the start. Public only once the tournament is finished.",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    # The bots' clocks in every match of the tournament (Match.time_per_decision / time_bank / time_per_match).
    time_per_decision = _clock_field("time_per_decision")
    time_bank = _clock_field("time_bank")
    time_per_match = _clock_field("time_per_match")
    seed_ladder = models.ForeignKey(
        "ladders.Ladder", null=True, blank=True, on_delete=models.SET_NULL, related_name="seeded_tournaments",
        help_text="Swiss: round 1 pairs the entries by their rating on this ladder (top half against bottom "
        "half; at 3+ seats one entry from each rating band per table); entries without a rating there are "
        "drawn at random after the rated ones. Empty: round 1 is a random draw. Read when the tournament starts.",
    )
    allow_same_owner = models.BooleanField(
        default=False,
        help_text="Allow two entries (bots) of one owner at the same table. Off: the pairing keeps them at "
        "different tables, and the start is refused, naming the owner, when it cannot (for example an owner "
        "with more than half the entries at 2 seats, or with two entries in a 2-seat round robin).",
    )

    # Set when the tournament starts.
    total_rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    current_round = models.PositiveSmallIntegerField(default=0)
    # Round robin: the whole schedule from the pure code, in entry names (later rounds skip withdrawn entries).
    plan = models.JSONField(default=list, blank=True)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written when it finishes (services.tournament_podium_store): places 1 to 3 of the final
    # standings, ties sharing a place, disqualified entries left out, as
    # [{"rank", "name", "bot", "points"}]; the list of tournaments reads it without computing standings.
    podium = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["draft", "registration", "running", "paused", "finished", "cancelled"]),
                name="tournament_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(format__in=["round_robin", "swiss"]), name="tournament_format_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(seats__gte=2, seats__lte=10), name="tournament_seats_2_to_10"
            ),
            models.CheckConstraint(condition=models.Q(deals__gte=1), name="tournament_deals_positive"),
            models.CheckConstraint(condition=models.Q(cycles__gte=1), name="tournament_cycles_positive"),
            *(_clock_constraint(name) for name in CLOCK_BOUNDS),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("tournaments:detail", args=[self.slug])

    @property
    def is_over(self) -> bool:
        return self.status in (self.Status.FINISHED, self.Status.CANCELLED)


class Entry(models.Model):
    """A bot in a tournament; its playing version is frozen when the tournament starts."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        WITHDRAWN = "withdrawn", "withdrawn"
        DISQUALIFIED = "disqualified", "disqualified"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="tournament_entries")
    version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="tournament_entries"
    )
    # "owner/bot" at registration: the id the pairing code and its explanations use.
    name = models.CharField(max_length=ENTRY_NAME_MAX_LENGTH)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set at the start when the tournament seeds from a ladder: the rating read then (empty: unrated)
    # and the place in the seeding (1 first).
    seed_rating = models.FloatField(null=True, blank=True, help_text="Ladder rating at the start; empty: unrated.")
    seed_position = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Place in the seeding, 1 first.")

    class Meta:
        ordering = ["tournament", "pk"]
        verbose_name_plural = "entries"
        constraints = [
            models.UniqueConstraint(fields=["tournament", "bot"], name="entry_bot_unique_per_tournament"),
            models.UniqueConstraint(fields=["tournament", "name"], name="entry_name_unique_per_tournament"),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "withdrawn", "disqualified"]), name="entry_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return self.version.label if self.version_id else self.name


class TournamentRound(models.Model):
    """A tournament round as it is played: its tables (``tables``), seed, status and the pairing code's
    explanation. Not a round of UNO (the glossary's "round"); the pairing code returns it as a
    ``tournaments.tables.PairedRound``."""

    class Status(models.TextChoices):
        PLAYING = "playing", "playing"
        DONE = "done", "done"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLAYING)
    seed = models.BigIntegerField(help_text="Seed of every match of the round: all tables play the same deals.")
    explanation = models.JSONField(default=list, blank=True)
    paired_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "number"], name="round_number_unique_per_tournament"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="round_number_positive"),
            models.CheckConstraint(condition=models.Q(status__in=["playing", "done"]), name="round_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.tournament} round {self.number}"


class Table(models.Model):
    """A table of a round (its match) or a bye (no match, one seat): ``tournaments.tables.Table`` as a row."""

    round = models.ForeignKey(TournamentRound, on_delete=models.CASCADE, related_name="tables")
    number = models.PositiveSmallIntegerField(help_text="Table number in the round; byes come after the tables.")
    bye = models.BooleanField(default=False)
    # The current match; a re-run or a resume after a pause replaces it (the old one stays in the log).
    match = models.ForeignKey(
        "matches.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="tournament_tables"
    )
    done = models.BooleanField(default=False, help_text="The result is in (always true for a bye).")

    class Meta:
        ordering = ["round", "number"]
        constraints = [
            models.UniqueConstraint(fields=["round", "number"], name="table_number_unique_per_round"),
            models.UniqueConstraint(fields=["match"], name="table_match_unique"),
            models.CheckConstraint(
                condition=models.Q(bye=False) | models.Q(match__isnull=True), name="table_bye_has_no_match"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.round} table {self.number}" if not self.bye else f"{self.round} bye"


class TableSeat(models.Model):
    """An entry at a table, in seat order, with its result once the match is done."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="seats")
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True, help_text="Game points of the match.")
    forfeited = models.BooleanField(default=False)

    class Meta:
        ordering = ["table", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["table", "seat"], name="table_seat_unique"),
            models.UniqueConstraint(fields=["table", "entry"], name="table_entry_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.table} seat {self.seat}: {self.entry}"


class TournamentEvent(models.Model):
    """The organizer's log: who did what and when, and what the system did by itself."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(auto_now_add=True)
    # Empty for what the system did (a round paired after the last result, a match that failed).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=32)
    message = models.TextField()

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.tournament}: {self.action}"

    @property
    def who(self) -> str:
        return self.who_of(self.actor_id, self.actor.get_username() if self.actor_id else None)

    @staticmethod
    def who_of(actor_id: int | None, username: str | None) -> str:
        """Who acted, for the log: the actor's username, or "system" for what the system did."""
        return username if actor_id and username is not None else "system"
