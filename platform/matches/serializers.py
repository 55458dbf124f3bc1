"""Serializers of the matches app's API: matches with their seats, the queue, a bot's versions
(with their validation match), and the upload of a version.

What is private (a version's validation log, a seat's log) is present only for the bot's owner
and staff; for everyone else the field is null.
"""

from __future__ import annotations

import functools

from core.converters import MAX_ID
from django.urls import get_script_prefix, get_urlconf, reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import NULLABLE_INT, NULLABLE_STR, request_user
from bots import selectors as bot_selectors
from bots.models import BotVersion

from . import selectors as match_selectors
from .models import Match, MatchSeat
from .sandboxing import match_limits


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
        if bot_selectors.can_view_validation_log(request_user(self.context), version.bot):
            return version.validation_log
        return None

    @extend_schema_field(NULLABLE_INT)
    def get_validation_match(self, version: BotVersion) -> int | None:
        return version.validation_match_id  # stored on the version when validation queues a match

    @extend_schema_field(NULLABLE_STR)
    def get_source(self, version: BotVersion) -> str | None:
        if bot_selectors.can_view_source(request_user(self.context), version.bot):
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
        if match_selectors.can_view_seat_log(request_user(self.context), seat):
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
        return match.seed if match_selectors.seed_shown(match, request_user(self.context)) else None

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
            "viewer": _match_url("matches:replay_viewer", match.pk) if done else None,
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
        return _match_url("matches:replay_viewer", match.pk)


def _clocks(match: Match):
    return match_limits(match.time_per_decision, match.time_bank, match.time_per_match)


class MatchFilterSerializer(serializers.Serializer):
    bot = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    ladder = serializers.SlugField(required=False, max_length=100)
    tournament = serializers.SlugField(required=False, max_length=100)
    status = serializers.ChoiceField(required=False, choices=Match.Status.values)
    kind = serializers.ChoiceField(required=False, choices=Match.Kind.values)


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
