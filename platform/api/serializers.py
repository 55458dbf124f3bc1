"""Serializers of the API: the JSON shape of bots, versions, matches, ladders and tournaments.

What is private (a version's validation log, a seat's log) is present only
for the bot's owner and staff; for everyone else the field is null.
"""

from __future__ import annotations

import functools

from django.urls import get_script_prefix, get_urlconf, reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bots import selectors as bot_selectors
from bots.models import Bot, BotVersion
from engine import glossary
from matches import selectors as match_selectors
from matches.models import Match, MatchSeat
from matches.sandboxing import match_limits

from . import selectors
from .models import ApiToken, Challenge

#: schema types of method fields that may be null
NULLABLE_INT = serializers.IntegerField(allow_null=True)
NULLABLE_STR = serializers.CharField(allow_null=True)


def _user(context):
    request = context.get("request")
    return getattr(request, "user", None)


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer."""

    detail = serializers.CharField(help_text="what was wrong, in one sentence")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="per field (dotted for nested input), the messages",
    )
    retry_after = serializers.IntegerField(required=False, help_text="429 only: seconds to wait")


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    is_staff = serializers.BooleanField(read_only=True)


class TokenSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at"]
        read_only_fields = ["id", "prefix", "created_at", "last_used_at"]


class NewTokenSerializer(TokenSerializer):
    key = serializers.CharField(read_only=True, help_text="shown only in this answer; store it now")

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "key"]


class LoginSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})
    name = serializers.CharField(max_length=64, help_text="what the token is for, e.g. 'arena CLI on laptop'")


class BotSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    public = serializers.SerializerMethodField(help_text="anyone may challenge it (see docs/api.md)")
    playing_version = serializers.SerializerMethodField(help_text="number of the version that plays, or null")
    page = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = [
            "id", "name", "owner", "description", "source_public", "public", "playing_version",
            "created_at", "page",
        ]
        read_only_fields = ["id", "created_at"]

    def get_public(self, bot: Bot) -> bool:
        known = getattr(bot, "is_public", None)  # annotated by selectors.with_public in lists
        return bool(known) if known is not None else selectors.bot_is_public(bot)

    @extend_schema_field(NULLABLE_INT)
    def get_playing_version(self, bot: Bot) -> int | None:
        known = self.context.get("playing_versions")  # filled per page by the list views
        version = (known if known is not None else bot_selectors.bot_playing_versions([bot])).get(bot.pk)
        return version.number if version else None

    def get_page(self, bot: Bot) -> str:
        return bot.get_absolute_url()


class BotCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    source_public = serializers.BooleanField(required=False, default=False)


class BotUpdateSerializer(serializers.Serializer):
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    source_public = serializers.BooleanField(required=False)


class PinSerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, allow_null=True,
        help_text="number of an active version; null: the newest active version plays",
    )


class VersionSerializer(serializers.ModelSerializer):
    bot = serializers.IntegerField(source="bot_id", read_only=True)
    validation_log = serializers.SerializerMethodField(help_text="owner and staff only; null for others")
    validation_match = serializers.SerializerMethodField(help_text="id of the validation match, or null")
    source = serializers.SerializerMethodField(help_text="API URL of the bytes, or null when private")
    page = serializers.SerializerMethodField()

    class Meta:
        model = BotVersion
        fields = [
            "bot", "number", "filename", "sha256", "size", "uploaded_at", "status", "rejection_reason",
            "validated_at", "validation_log", "validation_match", "source", "page",
        ]
        read_only_fields = fields

    @extend_schema_field(NULLABLE_STR)
    def get_validation_log(self, version: BotVersion) -> str | None:
        if bot_selectors.can_view_validation_log(_user(self.context), version.bot):
            return version.validation_log
        return None

    @extend_schema_field(NULLABLE_INT)
    def get_validation_match(self, version: BotVersion) -> int | None:
        known = self.context.get("validation_matches")
        if known is not None:
            return known.get(version.pk)
        return selectors.validation_matches([version.pk]).get(version.pk)

    @extend_schema_field(NULLABLE_STR)
    def get_source(self, version: BotVersion) -> str | None:
        if bot_selectors.can_view_source(_user(self.context), version.bot):
            return reverse("api:version-source", args=[version.bot_id, version.number])
        return None

    def get_page(self, version: BotVersion) -> str:
        return version.get_absolute_url()


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True, help_text="a .py file or a .zip with main.py at its root (BOT_CONTRACT.md)"
    )


#: a number no match has, put in a URL once and replaced by each match's id (``_match_url``)
_URL_ID = 9_876_543_210_123


@functools.lru_cache(maxsize=64)
def _url_template(name: str, urlconf, prefix: str) -> str:
    return reverse(name, args=[_URL_ID], urlconf=urlconf)


def _match_url(name: str, match_id: int) -> str:
    """``reverse(name, args=[match_id])`` for a URL whose one argument is a match id: reversed once
    per URL configuration and script prefix, then the id put in (reverse cost ~20 µs a call, three a
    match: a quarter of a page of 50 matches)."""
    template = _url_template(name, get_urlconf(), get_script_prefix())
    return template.replace(str(_URL_ID), str(match_id))


class SeatSerializer(serializers.ModelSerializer):
    bot = serializers.SerializerMethodField(help_text="bot id, null for a reference bot")
    version = serializers.SerializerMethodField(help_text="version number, null for a reference bot")
    label = serializers.CharField(read_only=True)
    log = serializers.SerializerMethodField(help_text="what the bot printed: owner and staff only, else null")

    class Meta:
        model = MatchSeat
        fields = [
            "seat", "bot", "version", "reference_bot", "label", "score", "rank", "wins", "strikes",
            "forfeited", "fault_kind", "fault_reason", "log",
        ]
        read_only_fields = fields

    def to_representation(self, seat: MatchSeat) -> dict:
        # The fields above, read directly: DRF's per-field machinery cost more than the data
        # (13 fields x 2-4 seats x 50 matches a page). The schema still comes from the fields.
        version = seat.bot_version if seat.bot_version_id else None
        return {
            "seat": seat.seat,
            "bot": version.bot_id if version else None,
            "version": version.number if version else None,
            "reference_bot": seat.reference_bot,
            "label": seat.label,
            "score": seat.score,
            "rank": seat.rank,
            "wins": seat.wins,
            "strikes": seat.strikes,
            "forfeited": seat.forfeited,
            "fault_kind": seat.fault_kind,
            "fault_reason": seat.fault_reason,
            "log": self.get_log(seat),
        }

    @extend_schema_field(NULLABLE_INT)
    def get_bot(self, seat: MatchSeat) -> int | None:
        return seat.bot_version.bot_id if seat.bot_version_id else None

    @extend_schema_field(NULLABLE_INT)
    def get_version(self, seat: MatchSeat) -> int | None:
        return seat.bot_version.number if seat.bot_version_id else None

    @extend_schema_field(NULLABLE_STR)
    def get_log(self, seat: MatchSeat) -> str | None:
        if not self.context.get("with_logs"):
            return None
        if match_selectors.can_view_seat_log(_user(self.context), seat):
            return seat.log
        return None


class MatchSerializer(serializers.ModelSerializer):
    seats = SeatSerializer(many=True, read_only=True)
    # The clocks the bots played (or will play) under: the match's own, else the contract's default.
    time_per_decision = serializers.SerializerMethodField(help_text="seconds a decision may take")
    time_bank = serializers.SerializerMethodField(help_text="seconds per match a bot may spend beyond time_per_decision")
    time_per_match = serializers.SerializerMethodField(
        help_text="seconds of thinking per bot per match; using it up forfeits (out of match time)"
    )
    seed = serializers.SerializerMethodField(
        help_text="the seed every deal and draw derives from: null until the match ends (staff see it always)",
    )
    replay = serializers.SerializerMethodField(help_text="API URL of the replay JSON, null until done")
    page = serializers.SerializerMethodField(help_text="the match page")
    viewer = serializers.SerializerMethodField(help_text="the replay viewer page, null until done")

    class Meta:
        model = Match
        fields = [
            "id", "kind", "status", "rules", "seed", "deals", "duplicate", "time_per_decision", "time_bank",
            "time_per_match", "queued_at", "started_at",
            "finished_at", "rounds_played", "games_played", "error", "seats", "replay", "page", "viewer",
        ]
        read_only_fields = fields

    def get_seed(self, match: Match) -> int | None:
        return match.seed if match_selectors.seed_shown(match, _user(self.context)) else None

    def to_representation(self, match: Match) -> dict:
        # The fields above in their order, read directly (DRF's per-field work was most of a list
        # page's CPU); the clocks computed once per match, the URLs by _match_url.
        clocks = _clocks(match)
        done = match.status == Match.Status.DONE
        when = self._datetime.to_representation
        seats = self.fields["seats"]
        return {
            "id": match.pk,
            "kind": match.kind,
            "status": match.status,
            "rules": match.rules,
            "seed": self.get_seed(match),
            "deals": match.deals,
            "duplicate": match.duplicate,
            "time_per_decision": clocks.time_per_decision,
            "time_bank": clocks.time_bank,
            "time_per_match": clocks.time_per_match,
            "queued_at": when(match.queued_at) if match.queued_at else None,
            "started_at": when(match.started_at) if match.started_at else None,
            "finished_at": when(match.finished_at) if match.finished_at else None,
            "rounds_played": match.rounds_played,
            "games_played": match.games_played,
            "error": match.error,
            "seats": seats.to_representation(match.seats.all()),
            "replay": _match_url("api:match-replay", match.pk) if done else None,
            "page": _match_url("matches:detail", match.pk),
            "viewer": _match_url("web:replay", match.pk) if done else None,
        }

    @functools.cached_property
    def _datetime(self) -> serializers.DateTimeField:
        return serializers.DateTimeField()

    def get_time_per_decision(self, match: Match) -> float:
        return _clocks(match).time_per_decision

    def get_time_bank(self, match: Match) -> float:
        return _clocks(match).time_bank

    def get_time_per_match(self, match: Match) -> float:
        return _clocks(match).time_per_match

    @extend_schema_field(NULLABLE_STR)
    def get_replay(self, match: Match) -> str | None:
        if match.status != Match.Status.DONE:
            return None
        return _match_url("api:match-replay", match.pk)

    def get_page(self, match: Match) -> str:
        return _match_url("matches:detail", match.pk)

    @extend_schema_field(NULLABLE_STR)
    def get_viewer(self, match: Match) -> str | None:
        if match.status != Match.Status.DONE:
            return None
        return _match_url("web:replay", match.pk)


def _clocks(match: Match):
    return match_limits(match.time_per_decision, match.time_bank, match.time_per_match)


class ChallengeCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="id of your bot")
    opponent = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="id of a public bot")
    ladder = serializers.SlugField(max_length=100, help_text="slug of an active ladder whose rules are played")


class ChallengeSerializer(serializers.ModelSerializer):
    challenger = serializers.CharField(source="challenger.username", read_only=True)
    ladder = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    match = MatchSerializer(read_only=True)

    class Meta:
        model = Challenge
        fields = ["id", "challenger", "ladder", "created_at", "match"]
        read_only_fields = fields


class QueueKindSerializer(serializers.Serializer):
    kind = serializers.CharField()
    queued = serializers.IntegerField()
    running = serializers.IntegerField()


class QueueSerializer(serializers.Serializer):
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    stuck = serializers.IntegerField(help_text="running matches past their deadline (worker presumed dead)")
    oldest_wait_seconds = serializers.FloatField(allow_null=True)
    workers_alive = serializers.IntegerField()
    kinds = QueueKindSerializer(many=True)


# --- ladders -------------------------------------------------------------------------------------


class LadderSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    rules = serializers.DictField(help_text="every RULES.md option in force")
    seats = serializers.IntegerField()
    deals = serializers.IntegerField(help_text=glossary.DEALS_HELP)
    duplicate = serializers.BooleanField(help_text=glossary.DUPLICATE_HELP)
    time_per_decision = serializers.FloatField(help_text="seconds a decision may take (BOT_CONTRACT.md)")
    time_bank = serializers.FloatField(help_text="seconds per match a bot may spend beyond time_per_decision")
    time_per_match = serializers.FloatField(
        help_text="seconds of thinking per bot per match; using it up forfeits (out of match time)"
    )
    allow_same_owner = serializers.BooleanField(help_text="whether one owner's bots may sit at one table")
    active = serializers.BooleanField()
    entries = serializers.IntegerField(source="entry_count", help_text="active entries")
    rated_matches = serializers.IntegerField()
    page = serializers.CharField(source="get_absolute_url")


class StandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True, help_text="null for entries that left or are suspended")
    bot = serializers.IntegerField(source="entry.bot_id")
    name = serializers.SerializerMethodField()
    status = serializers.CharField(source="entry.status")
    rating = serializers.IntegerField(
        source="rating.value", help_text="the batch fit's rating of the entry's rated version, whole points"
    )
    margin = serializers.IntegerField(source="rating.margin", help_text="uncertainty: rating ± margin (95%)")
    low = serializers.IntegerField(source="rating.low_points", help_text="the 95% interval's low end")
    high = serializers.IntegerField(source="rating.high_points", help_text="the 95% interval's high end")
    provisional = serializers.BooleanField(
        source="rating.provisional", help_text="the 95% interval is wider than ± ladders.ratings.PROVISIONAL_MARGIN"
    )
    version = serializers.IntegerField(
        source="entry.rated_version_id", allow_null=True, help_text="id of the version the rating is of"
    )
    matches = serializers.IntegerField(source="entry.matches_played", help_text="rated matches, every version")
    version_matches = serializers.IntegerField(
        source="entry.version_matches", help_text="rated matches of the rated version (the fit's)"
    )
    games = serializers.IntegerField(
        help_text="games played in the rated matches, every version (each deal once per rotation under duplicate)"
    )
    los_next = serializers.IntegerField(
        source="los_percent",
        allow_null=True,
        help_text="likelihood (%) that this version is stronger than the next ranked one; null for the last",
    )
    wins = serializers.IntegerField(help_text="matches finished first (shared first places count)")
    last_change = serializers.DecimalField(max_digits=7, decimal_places=2, allow_null=True)

    def get_name(self, standing) -> str:
        return str(standing.entry.bot)


class RatingChangeSerializer(serializers.Serializer):
    match = serializers.IntegerField(source="match_id")
    version = serializers.IntegerField(source="bot_version.number")
    rank = serializers.IntegerField()
    forfeited = serializers.BooleanField(help_text="a forfeit: a last place in the fit")
    before = serializers.DecimalField(max_digits=7, decimal_places=2, help_text="the entry's rating shown before")
    after = serializers.DecimalField(
        max_digits=7,
        decimal_places=2,
        allow_null=True,
        help_text="the version's rating from the first refit that included the match (null until it ran)",
    )
    after_low = serializers.DecimalField(max_digits=7, decimal_places=2, allow_null=True)
    after_high = serializers.DecimalField(max_digits=7, decimal_places=2, allow_null=True)
    matches_after = serializers.IntegerField()
    at = serializers.DateTimeField(source="created_at")


class BotOnLadderSerializer(serializers.Serializer):
    bot = serializers.IntegerField()


# --- tournaments ---------------------------------------------------------------------------------


class TournamentSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    format = serializers.CharField()
    status = serializers.CharField()
    rules = serializers.DictField()
    seats = serializers.IntegerField()
    deals = serializers.IntegerField(help_text=glossary.DEALS_HELP)
    duplicate = serializers.BooleanField(help_text=glossary.DUPLICATE_HELP)
    tie_breaks = serializers.ListField(child=serializers.CharField())
    time_per_decision = serializers.FloatField(help_text="seconds a decision may take (BOT_CONTRACT.md)")
    time_bank = serializers.FloatField(help_text="seconds per match a bot may spend beyond time_per_decision")
    time_per_match = serializers.FloatField(
        help_text="seconds of thinking per bot per match; using it up forfeits ('out of match time')"
    )
    allow_same_owner = serializers.BooleanField(help_text="whether one owner's bots may sit at one table")
    seed_ladder = serializers.CharField(
        source="seed_ladder.slug", allow_null=True, default=None,
        help_text="slug of the ladder whose ratings seed round 1 of a Swiss (top half against bottom half), or null",
    )
    current_round = serializers.IntegerField()
    total_rounds = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    page = serializers.CharField(source="get_absolute_url")


class TournamentProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    current_round = serializers.IntegerField()
    total_rounds = serializers.IntegerField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class TournamentEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    bot = serializers.IntegerField(source="bot_id")
    name = serializers.CharField()
    version = serializers.IntegerField(source="version.number", allow_null=True, default=None)
    status = serializers.CharField()


class TournamentStandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    entry = serializers.CharField(source="entry.name")
    bot = serializers.IntegerField(source="entry.bot_id")
    points = serializers.CharField(help_text="match points, as shown on the site (2.5)")
    tie_breaks = serializers.ListField(child=serializers.CharField(), help_text="in the tournament's tie-break order")
    played = serializers.IntegerField()
    byes = serializers.IntegerField()
    status = serializers.CharField()


class PairingSeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    entry = serializers.CharField(source="entry.name")
    rank = serializers.IntegerField(allow_null=True)
    score = serializers.FloatField(allow_null=True, help_text="game points of the match")
    forfeited = serializers.BooleanField()


class PairingSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="table number in the tournament round; byes come after the tables")
    bye = serializers.BooleanField()
    done = serializers.BooleanField()
    match = serializers.IntegerField(source="match_id", allow_null=True)
    match_status = serializers.SerializerMethodField()
    seats = PairingSeatSerializer(many=True)

    @extend_schema_field(NULLABLE_STR)
    def get_match_status(self, pairing) -> str | None:
        return pairing.match.status if pairing.match_id else None


class RoundSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="the tournament round (a pairing into tables, not a round of UNO)")
    status = serializers.CharField()
    explanation = serializers.ListField(child=serializers.CharField(), help_text="how the round was paired")
    pairings = PairingSerializer(many=True, source="tables", help_text="the round's tables (a match each) and byes")


class TournamentDetailSerializer(TournamentSerializer):
    progress = TournamentProgressSerializer()
    entries = TournamentEntrySerializer(many=True)
    standings = TournamentStandingSerializer(many=True)
    rounds = RoundSerializer(many=True)
