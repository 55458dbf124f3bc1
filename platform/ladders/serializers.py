"""Serializers of the ladders app's API: ladders, their standings and rating histories, bots (whose
``public`` says whether anyone may challenge them: open source or on a ladder) and challenges."""

from __future__ import annotations

from core.converters import MAX_ID
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import NULLABLE_INT
from bots import selectors as bot_selectors
from bots.models import Bot
from engine import glossary
from matches.models import Challenge
from matches.serializers import MatchSerializer

from . import selectors


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


class ChallengeCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="id of your bot")
    opponent = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="id of a public bot")
    ladder = serializers.SlugField(max_length=100, help_text="slug of an active ladder whose rules are played")


class ChallengeSerializer(serializers.ModelSerializer):
    challenger = serializers.CharField(source="challenger.username", read_only=True)
    ladder = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    match = MatchSerializer(read_only=True)

    class Meta:
        model = Challenge
        fields = ["id", "challenger", "ladder", "created_at", "match"]
        read_only_fields = fields


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


class StandingFilterSerializer(serializers.Serializer):
    q = serializers.CharField(required=False, max_length=100, help_text="only bots whose name or owner contains this")


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
