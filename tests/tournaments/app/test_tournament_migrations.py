"""The tournament app's renames keep what is stored: a round (once a ``Round``, now a ``TournamentRound``),
its tables (once ``Pairing``) with their seats and matches come through the migrations unchanged, and a
group that could view rounds and pairings can view tournament rounds and tables."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_TABLE = ("tournaments", "0006_deals")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_renames_keep_every_round_table_seat_and_match_and_who_may_view_them():
    # the migrate command (not the bare executor), so its signals rename the content types and make
    # the permissions as on a real install; every other app stays as it is now
    call_command("migrate", *BEFORE_TABLE, verbosity=0)
    executor = MigrationExecutor(connection)
    before = [node for node in executor.loader.graph.leaf_nodes() if node[0] != "tournaments"] + [BEFORE_TABLE]
    old = MigrationExecutor(connection).loader.project_state(before).apps
    User, Bot = old.get_model("auth", "User"), old.get_model("bots", "Bot")
    Match = old.get_model("matches", "Match")
    Tournament, Entry, Round = (old.get_model("tournaments", name) for name in ("Tournament", "Entry", "Round"))
    Pairing, PairingSeat = old.get_model("tournaments", "Pairing"), old.get_model("tournaments", "PairingSeat")
    owner = User.objects.create(username="old-organizer")
    Group, Permission = old.get_model("auth", "Group"), old.get_model("auth", "Permission")
    view_pairing = Permission.objects.get(content_type__app_label="tournaments", codename="view_pairing")
    assert not Permission.objects.filter(content_type__app_label="tournaments", codename="view_table").exists()
    view_round = Permission.objects.get(content_type__app_label="tournaments", codename="view_round")
    Group.objects.create(name="old-organizers").permissions.add(view_pairing, view_round)
    bots = [Bot.objects.create(owner=owner, name=name) for name in ("a", "b", "c")]
    cup = Tournament.objects.create(name="Old cup", slug="old-cup", rules={"players": 2}, seed=7, created_by=owner)
    entries = [Entry.objects.create(tournament=cup, bot=bot, name=f"old-organizer/{bot.name}") for bot in bots]
    rnd = Round.objects.create(tournament=cup, number=1, seed=11)
    match = Match.objects.create(kind="tournament", rules={"players": 2}, seed=11)
    table = Pairing.objects.create(round=rnd, number=1, match=match, done=True)
    PairingSeat.objects.create(pairing=table, seat=0, entry=entries[0], rank=1, score=500.0)
    PairingSeat.objects.create(pairing=table, seat=1, entry=entries[1], rank=2, score=120.0, forfeited=True)
    bye = Pairing.objects.create(round=rnd, number=2, bye=True, done=True)
    PairingSeat.objects.create(pairing=bye, seat=0, entry=entries[2])

    call_command("migrate", verbosity=0)

    from matches.models import Match as NewMatch
    from tournaments_app.models import Table, TableSeat, TournamentRound

    kept = TournamentRound.objects.get(pk=rnd.pk)
    assert (kept.tournament.slug, kept.number, kept.seed, kept.status) == ("old-cup", 1, 11, "playing")
    assert [(t.pk, t.number, t.bye, t.done, t.match_id) for t in kept.tables.order_by("number")] == [
        (table.pk, 1, False, True, match.pk),
        (bye.pk, 2, True, True, None),
    ]
    assert NewMatch.objects.get(pk=match.pk).tournament_tables.get().pk == table.pk
    seats = TableSeat.objects.filter(table__round=kept).order_by("table__number", "seat")
    assert [(s.table_id, s.seat, s.entry.name, s.rank, s.score, s.forfeited) for s in seats] == [
        (table.pk, 0, "old-organizer/a", 1, 500.0, False),
        (table.pk, 1, "old-organizer/b", 2, 120.0, True),
        (bye.pk, 0, "old-organizer/c", None, None, False),
    ]
    assert (Table._meta.db_table, TournamentRound._meta.db_table) == ("tournaments_table", "tournaments_tournamentround")

    from django.contrib.auth.models import Group as NewGroup
    from django.contrib.auth.models import Permission as NewPermission

    held = NewGroup.objects.get(name="old-organizers").permissions.order_by("codename")
    assert [(p.content_type.model, p.codename, p.name) for p in held] == [
        ("table", "view_table", "Can view table"),
        ("tournamentround", "view_tournamentround", "Can view tournament round"),
    ]
    assert not NewPermission.objects.filter(codename__regex=r"_(pairing|pairingseat|round)$").exists()
