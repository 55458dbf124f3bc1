"""The API's match serializer reads its fields directly (the per-field machinery was most of a list
page's CPU): what it writes must stay exactly what the declared fields would write."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command
from rest_framework import serializers
from rest_framework.test import APIRequestFactory


def test_the_direct_representation_equals_the_declared_fields_for_every_kind_of_match(db):
    from matches.models import Match
    from matches.selectors import match_list
    from matches.serializers import MatchSerializer, SeatSerializer

    call_command("seed_scale", bots=6, matches=8, ladders=1, tournaments=0, stdout=StringIO())
    queued = Match.objects.filter(status=Match.Status.DONE).first()
    Match.objects.filter(pk=queued.pk).update(status=Match.Status.QUEUED, started_at=None, finished_at=None)
    Match.objects.filter(pk=Match.objects.exclude(pk=queued.pk).first().pk).update(time_bank=3.5)
    matches = list(match_list(limit=None))
    assert {m.status for m in matches} == {Match.Status.DONE, Match.Status.QUEUED}
    request = APIRequestFactory().get("/api/matches/")
    for context in ({"request": request}, {"request": request, "with_logs": True}):
        fast = MatchSerializer(matches, many=True, context=context).data
        for match, body in zip(matches, fast, strict=True):
            declared = serializers.ModelSerializer.to_representation(MatchSerializer(context=context), match)
            declared["seats"] = [
                serializers.ModelSerializer.to_representation(SeatSerializer(context=context), seat)
                for seat in match.seats.all()
            ]
            assert body == declared
            assert list(body) == list(declared)  # the same order of keys
