"""Ladders: a rule set and format, the bots entered, and every rating change of every match."""

from __future__ import annotations

import math
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from engine import glossary
from engine.rules import BOUNDS
from matches.models import MAX_COMPETITION_DEALS, MIN_COMPETITION_DEALS
from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS

from . import ratings

#: bounds of a ladder's settings, so a typo cannot make a match of a million deals or a clock of 1e300 s;
#: the admin, the services and the database (check constraints) all hold a ladder to them.
#: Deals per match: the same bound as a tournament's.
MIN_DEALS, MAX_DEALS = MIN_COMPETITION_DEALS, MAX_COMPETITION_DEALS
#: The clocks (seconds per decision, bank per match, thinking per match): sandbox.limits.CLOCK_BOUNDS.
MIN_TIME_PER_DECISION, MAX_TIME_PER_DECISION = CLOCK_BOUNDS["time_per_decision"]
MIN_TIME_BANK, MAX_TIME_BANK = CLOCK_BOUNDS["time_bank"]
MIN_TIME_PER_MATCH, MAX_TIME_PER_MATCH = CLOCK_BOUNDS["time_per_match"]
#: Queued and running matches of one ladder at once: each entry sits in at most one anyway.
MIN_PENDING, MAX_PENDING = 1, 50
#: Forfeits in a row before a suspension.
MIN_FAULT_LIMIT, MAX_FAULT_LIMIT = 1, 100
#: The fault rate: a version with ``fault_window_limit`` forfeits among its last ``fault_window`` ladder matches
#: is suspended (intermittent crashes), as well as after ``fault_limit`` in a row.
MIN_FAULT_WINDOW, MAX_FAULT_WINDOW = 2, 200


def validate_finite(value) -> None:
    """Refuse NaN and infinities, which slip through comparisons with the bounds."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError("Enter a finite number, got %(value)s.", code="invalid", params={"value": value})


def _bounds(low, high) -> list:
    return [MinValueValidator(low), MaxValueValidator(high)]


def _range_constraint(field: str, low, high, unit: str) -> models.CheckConstraint:
    # The last line of defence (raw updates, other clients); model validation reports the same bound
    # on the field first, so a form never shows this table-wide message.
    return models.CheckConstraint(
        condition=models.Q(**{f"{field}__gte": low, f"{field}__lte": high}),
        name=f"ladder_{field}_range",
        violation_error_message=f"{field} must be {low:g} to {high:g} {unit}.",
    )


class Ladder(models.Model):
    """A standing competition: matchmaking keeps its entries playing under one rule set."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, max_length=2000)
    rules = models.JSONField(
        default=dict,
        help_text='RULES.md options as JSON, e.g. {"players": 2, "rounds": 2}; '
        "missing options take their defaults; stored complete.",
    )
    seats = models.PositiveSmallIntegerField(default=2, help_text=f"Seats per match, {BOUNDS['players'][0]} to {BOUNDS['players'][1]}; equals rules.players.")
    deals = models.PositiveIntegerField(
        default=1,
        validators=_bounds(MIN_DEALS, MAX_DEALS),
        help_text=f"{MIN_DEALS} to {MAX_DEALS}. {glossary.DEALS_HELP}",
    )
    duplicate = models.BooleanField(default=True, help_text=glossary.DUPLICATE_HELP)
    # Copied into every ladder match (Match.time_per_decision / time_bank / time_per_match).
    time_per_decision = models.FloatField(
        default=DEFAULT_LIMITS.time_per_decision,
        validators=[validate_finite, *_bounds(MIN_TIME_PER_DECISION, MAX_TIME_PER_DECISION)],
        help_text=f"Seconds per decision, {MIN_TIME_PER_DECISION:g} to {MAX_TIME_PER_DECISION:g} "
        "(the bots' clock in this ladder's matches).",
    )
    time_bank = models.FloatField(
        default=DEFAULT_LIMITS.time_bank,
        validators=[validate_finite, *_bounds(MIN_TIME_BANK, MAX_TIME_BANK)],
        help_text=f"Seconds of extra time per match, {MIN_TIME_BANK:g} to {MAX_TIME_BANK:g}, "
        "beyond the time per decision.",
    )
    time_per_match = models.FloatField(
        default=DEFAULT_LIMITS.time_per_match,
        validators=[validate_finite, *_bounds(MIN_TIME_PER_MATCH, MAX_TIME_PER_MATCH)],
        help_text=f"Seconds of thinking per bot per match, {MIN_TIME_PER_MATCH:g} to {MAX_TIME_PER_MATCH:g}: "
        "every decision counts; a bot that uses it up forfeits (out of match time).",
    )
    allow_same_owner = models.BooleanField(
        default=False,
        help_text="Let matchmaking seat two bots of the same owner at one table, and let an owner challenge "
        "one of their own bots under this ladder. Off: every seat of a match has a different owner, "
        "so no one can feed one bot with another.",
    )
    max_pending = models.PositiveSmallIntegerField(
        default=4,
        validators=_bounds(MIN_PENDING, MAX_PENDING),
        help_text=f"At most this many of the ladder's matches are queued or running at once, "
        f"{MIN_PENDING} to {MAX_PENDING}.",
    )
    fault_limit = models.PositiveSmallIntegerField(
        default=3,
        validators=_bounds(MIN_FAULT_LIMIT, MAX_FAULT_LIMIT),
        help_text=f"A bot that forfeits this many ladder matches in a row is suspended, "
        f"{MIN_FAULT_LIMIT} to {MAX_FAULT_LIMIT}.",
    )
    fault_window = models.PositiveSmallIntegerField(
        default=20,
        validators=_bounds(MIN_FAULT_WINDOW, MAX_FAULT_WINDOW),
        help_text=f"The fault rate's window: a version's last this many ladder matches, "
        f"{MIN_FAULT_WINDOW} to {MAX_FAULT_WINDOW}.",
    )
    fault_window_limit = models.PositiveSmallIntegerField(
        default=3,
        validators=_bounds(MIN_FAULT_LIMIT, MAX_FAULT_LIMIT),
        help_text=f"A version that forfeits this many of its last fault-window matches is suspended, "
        f"{MIN_FAULT_LIMIT} to {MAX_FAULT_LIMIT} and at most the window.",
    )
    active = models.BooleanField(default=True, help_text="Matchmaking runs only for active ladders.")
    created_at = models.DateTimeField(auto_now_add=True)
    # The last rating change (pk) the stored ratings were fitted on: the refit task's debounce and
    # what ``recompute_ratings --check`` refits to reproduce the shown columns.
    refit_through = models.BigIntegerField(default=0, editable=False)
    # ladder matches whose result the hook has stored (LadderMatch.rated): counted by the hook, so the
    # ladder lists never count the history
    rated_matches = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(seats__gte=2, seats__lte=10), name="ladder_seats_2_to_10"),
            _range_constraint("deals", MIN_DEALS, MAX_DEALS, "deals per match"),
            _range_constraint("time_per_decision", MIN_TIME_PER_DECISION, MAX_TIME_PER_DECISION, "seconds"),
            _range_constraint("time_bank", MIN_TIME_BANK, MAX_TIME_BANK, "seconds"),
            _range_constraint("time_per_match", MIN_TIME_PER_MATCH, MAX_TIME_PER_MATCH, "seconds"),
            _range_constraint("max_pending", MIN_PENDING, MAX_PENDING, "matches"),
            _range_constraint("fault_limit", MIN_FAULT_LIMIT, MAX_FAULT_LIMIT, "forfeits"),
            _range_constraint("fault_window", MIN_FAULT_WINDOW, MAX_FAULT_WINDOW, "matches"),
            _range_constraint("fault_window_limit", MIN_FAULT_LIMIT, MAX_FAULT_LIMIT, "forfeits"),
            models.CheckConstraint(
                condition=models.Q(fault_window_limit__lte=models.F("fault_window")),
                name="ladder_fault_window_limit_within_window",
                violation_error_message="fault_window_limit must be at most fault_window.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("ladders:detail", args=[self.slug])

    def clean(self) -> None:
        from . import checks

        if (
            isinstance(self.fault_window_limit, int)
            and isinstance(self.fault_window, int)
            and self.fault_window_limit > self.fault_window
        ):
            raise ValidationError(
                {"fault_window_limit": f"at most the fault window ({self.fault_window} matches)."}
            )

        try:
            self.rules = checks.ladder_rules_clean(self.rules, self.seats)
        except checks.LadderError as exc:
            raise ValidationError({"rules": str(exc)}) from None
        try:
            checks.ladder_match_format(self)
        except checks.LadderError:
            return  # a setting out of its bounds: reported on its own field
        try:
            checks.ladder_time_check(self)
        except checks.LadderError as exc:
            raise ValidationError({"time_per_match": str(exc)}) from None


class LadderEntry(models.Model):
    """A bot on a ladder: the fitted rating of its rated version and whether it is matched.

    ``rating``, ``rating_low``, ``rating_high``, ``version_matches``, ``rated_version``, ``los_below`` and
    ``last_change`` are written by the refit (``services.ladder_refit``) only: the fit's rating and 95%
    interval of the version that played the entry's last rated match, that version's rated results, the
    likelihood that it is stronger than the next active entry of the table, and the change its newest
    fitted result made. ``matches_played`` and ``wins`` are counted by the result hook
    (``services.ladder_match_finish``); ``recompute_ratings`` checks (and rewrites) all of them against
    the stored history (``services.ladder_counts_check``).
    """

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        LEFT = "left", "left"
        SUSPENDED = "suspended", "suspended"

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ladder_entries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    rating = models.DecimalField(max_digits=7, decimal_places=2, default=ratings.START)
    rating_low = models.DecimalField(max_digits=7, decimal_places=2, default=ratings.PRIOR_LOW)
    rating_high = models.DecimalField(max_digits=7, decimal_places=2, default=ratings.PRIOR_HIGH)
    # rated results of rated_version in the fit (what the interval rests on)
    version_matches = models.PositiveIntegerField(default=0)
    rated_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    los_below = models.FloatField(null=True, blank=True)
    # rated ladder matches of the entry, every version
    matches_played = models.PositiveIntegerField(default=0)
    # of those, the ones finished first (shared first places count): the result hook adds them
    wins = models.PositiveIntegerField(default=0)
    # after - before of the entry's newest rating change the refit has filled (null before the first)
    last_change = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    entered_at = models.DateTimeField(auto_now_add=True)
    # When matchmaking last gave this entry a match: the longest waiting goes first.
    last_matched_at = models.DateTimeField(null=True, blank=True)
    # Ladder matches forfeited in a row; a match without forfeit resets it.
    fault_streak = models.PositiveSmallIntegerField(default=0)
    suspended_reason = models.TextField(blank=True)
    # The version that faulted: re-entering needs a different playing version.
    suspended_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["ladder", "-rating", "pk"]
        verbose_name_plural = "ladder entries"
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot"], name="ladder_entry_unique_bot"),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "left", "suspended"]), name="ladder_entry_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(status="suspended") | ~models.Q(suspended_reason=""),
                name="ladder_entry_suspension_has_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} on {self.ladder}"

    def get_absolute_url(self) -> str:
        return reverse("ladders:entry", args=[self.ladder.slug, self.bot_id])

    @property
    def elo(self) -> ratings.Shown:
        """The rating as shown: whole points, +/- the 95% interval, provisional."""
        return ratings.Shown(Decimal(self.rating), Decimal(self.rating_low), Decimal(self.rating_high))


class LadderMatch(models.Model):
    """Links a match of kind "ladder" to its ladder; ``rated`` once its rating changes are stored."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="ladder_matches")
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="ladder_match")
    rated = models.BooleanField(default=False)

    class Meta:
        ordering = ["-match_id"]
        verbose_name_plural = "ladder matches"
        # a ladder's newest matches (its page's list) without walking the other ladders'
        indexes = [models.Index(fields=["ladder", "-match"], name="ladder_match_newest_idx")]

    def __str__(self) -> str:
        return f"{self.ladder}: match {self.match_id}"


class RatingChange(models.Model):
    """One bot version's result in one rated ladder match, and the entry's rating around it.

    ``before`` is the entry's shown rating when the result was stored; ``after`` (with its interval)
    the version's fitted rating from the first refit that included the match (null until then). Rows
    written before the batch fit hold the fixed-K Elo of their time.
    """

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="rating_changes")
    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="rating_changes")
    entry = models.ForeignKey(LadderEntry, on_delete=models.CASCADE, related_name="rating_changes")
    bot_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="rating_changes")
    rank = models.PositiveSmallIntegerField()
    forfeited = models.BooleanField(default=False)
    before = models.DecimalField(max_digits=7, decimal_places=2)
    after = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    after_low = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    after_high = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    # The entry's rated matches after this one (the interval's n).
    matches_after = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Rating changes are written under the ladder's row lock, so pk order is the order they were rated.
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["match", "entry"], name="rating_change_once_per_match_entry"),
            models.CheckConstraint(condition=models.Q(rank__gte=1), name="rating_change_rank_positive"),
        ]
        indexes = [
            models.Index(fields=["ladder", "entry"], name="rating_change_ladder_entry"),
            # an entry's last change and its wins in the table (ladders.selectors._entries_with_stats):
            # without it the newest-first LIMIT 1 walked the whole table's pk index per entry
            models.Index(fields=["entry", "-id"], name="rating_change_entry_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_version} in match {self.match_id}: {self.before} -> {self.after}"

    @property
    def delta(self) -> Decimal | None:
        return None if self.after is None else self.after - self.before
