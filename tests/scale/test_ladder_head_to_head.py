"""A ladder's bot page tallies its head-to-head in PostgreSQL (one GROUP BY, cut to the rows shown):
what the page reads does not grow with the bot's history, and the rows equal a tally of every change."""

from __future__ import annotations

import functools
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client


def _reference(entry) -> list[tuple[int, int, int, int, int]]:
    # the tally the page made before, in Python over every rating change of the entry and its matches
    from ladders.models import LadderEntry, RatingChange

    own = dict(RatingChange.objects.filter(entry=entry).values_list("match_id", "rank"))
    tallies: dict[int, list[int]] = {}
    for match_id, opponent_id, rank in (
        RatingChange.objects.filter(match_id__in=own).exclude(entry=entry).values_list("match_id", "entry_id", "rank")
    ):
        tally = tallies.setdefault(opponent_id, [0, 0, 0])
        mine = own[match_id]
        tally[0 if mine < rank else 1 if mine == rank else 2] += 1
    names = {e.pk: e.bot.name for e in LadderEntry.objects.select_related("bot").filter(pk__in=list(tallies))}
    rows = [(pk, sum(t), t[0], t[1], t[2]) for pk, t in tallies.items()]
    return sorted(rows, key=lambda r: (-r[1], -(r[2] + r[3] / 2) / r[1], names[r[0]], r[0]))


def _busiest():
    from ladders.models import Ladder

    ladder = Ladder.objects.order_by("-pk").first()  # the newest seeded ladder
    return ladder.entries.order_by("-matches_played", "pk").first()


@pytest.mark.slow
@pytest.mark.django_db
def test_the_head_to_head_equals_a_tally_of_every_change_and_is_cut_in_the_database():
    from ladders import selectors

    call_command("seed_scale", bots=10, matches=120, ladders=1, tournaments=0, stdout=StringIO())
    from ladders.models import LadderEntry

    for entry in LadderEntry.objects.all():
        expected = _reference(entry)
        rows = selectors.entry_head_to_head(entry)
        assert [(r.opponent.pk, r.matches, r.ahead, r.tied, r.behind) for r in rows] == expected
        top, opponents = selectors.entry_head_to_head_top(entry, limit=3)
        assert opponents == len(expected)
        assert [(r.opponent.pk, r.matches, r.ahead, r.tied, r.behind) for r in top] == expected[:3]


def _rows_read(client: Client, path: str) -> int:
    """Rows PostgreSQL returned to the page (the cursor's rowcount of each SELECT)."""
    counted = []

    def count(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            counted.append(max(0, context["cursor"].rowcount))
        return result

    client.get(path)  # warm
    with connection.execute_wrapper(count):
        assert client.get(path).status_code == 200
    return sum(counted)


@pytest.mark.slow
@pytest.mark.django_db
def test_a_ladder_bots_page_reads_as_many_rows_at_40_and_400_matches_of_history(monkeypatch):
    from ladders import selectors

    # the chart is a bounded window of 200 changes; cut to 5 here so that the bound shows at this size
    monkeypatch.setattr(selectors, "entry_chart_changes", functools.partial(selectors.entry_chart_changes, limit=5))
    client = Client()
    call_command("seed_scale", bots=6, matches=40, ladders=1, tournaments=0, stdout=StringIO())
    entry = _busiest()
    small_history = entry.rating_changes.count()
    small = _rows_read(client, f"/ladders/{entry.ladder.slug}/bots/{entry.bot_id}/")
    call_command("seed_scale", bots=6, matches=400, ladders=1, tournaments=0, force=True, stdout=StringIO())
    entry = _busiest()
    assert entry.rating_changes.count() > 5 * small_history
    large = _rows_read(client, f"/ladders/{entry.ladder.slug}/bots/{entry.bot_id}/")
    # the bounded parts (20 history rows, 20 matches with their seats and changes) may fill up from 40 to 400
    # matches; a tally in Python read every change of the entry and of its opponents in the same matches
    # (about 2 x 130 rows more at 400)
    assert large <= small + 60, (small, large)
