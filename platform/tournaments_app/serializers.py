"""Serializers of the tournament app's API: tournaments with their progress, entries, standings and
rounds of pairings."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import NULLABLE_STR
from engine import glossary


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
        return pairing.match_status


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
