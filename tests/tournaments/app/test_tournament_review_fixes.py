"""Fixes from the site review: the seed stays secret until the end, long entry names, unmet pairs of
k-seat round robins, admin form rough edges, and what the demo organizer may open."""

from __future__ import annotations

import re
from itertools import combinations

import pytest
from core.rule_forms import rules_post_data
from django.contrib.auth import get_user_model
from django.urls import reverse
from tournament_helpers import active_bot, field, make_user, play_round, refreshed, tournament_with

from bots.models import Bot
from tournaments_app import selectors, services
from tournaments_app.demo import demo_organizer
from tournaments_app.models import Entry, Tournament, TournamentRound
from tournaments_app.services import TournamentError, round_seed

pytestmark = pytest.mark.django_db

SEED = 1408355813


def play_to_the_end(tournament: Tournament) -> Tournament:
    while (tournament := refreshed(tournament)).status == Tournament.Status.RUNNING:
        play_round(tournament)
    return tournament


# --- 1. the seed is not public before the end ------------------------------------------------------


def test_without_a_seed_it_is_drawn_at_the_start_and_every_deal_derives_from_it(owner):
    tournament = tournament_with(field(3, owner), start=False, seed=None, format="swiss")
    assert tournament.seed is None
    assert "seed drawn at the start" in tournament.events.get(action="created").message
    tournament = refreshed(services.tournament_start(tournament))
    assert tournament.seed is not None
    assert f"seed {tournament.seed} drawn" in tournament.events.get(action="started").message
    assert TournamentRound.objects.get(tournament=tournament, number=1).seed == round_seed(tournament.seed, 1)


def test_a_refused_start_draws_no_seed(owner):
    tournament = tournament_with(field(1, owner), start=False, seed=None)
    with pytest.raises(TournamentError, match="at least 2 entries"):
        services.tournament_start(tournament)
    assert refreshed(tournament).seed is None


def test_an_organizer_seed_is_kept_and_reproduces_the_same_deals(owner):
    one = tournament_with(field(4, owner), seed=SEED, name="One", format="swiss")
    two = tournament_with(field(4, make_user("second")), seed=SEED, name="Two", format="swiss")
    assert refreshed(one).seed == refreshed(two).seed == SEED
    assert TournamentRound.objects.get(tournament=one, number=1).seed == TournamentRound.objects.get(tournament=two, number=1).seed


def test_the_public_never_sees_the_seed_before_the_tournament_finishes(client, owner, staff):
    bots = field(2, owner)
    tournament = tournament_with(bots, start=False, seed=SEED, format="round_robin")
    services.tournament_update(tournament, name="Test Cup", rules=["players=2", "rounds=1"],
                               format="round_robin", seed=SEED + 1)
    services.tournament_update(tournament, name="Test Cup", rules=["players=2", "rounds=1"],
                               format="round_robin", seed=SEED)
    services.tournament_open_registration(tournament)
    stranger = make_user("stranger")

    def public_views() -> list[str]:
        bodies = []
        for user in (None, stranger, owner):
            client.logout()
            if user is not None:
                client.force_login(user)
            bodies.append(client.get(tournament.get_absolute_url()).content.decode())
        client.logout()
        bodies.append(client.get(reverse("tournaments:progress", args=[tournament.slug])).content.decode())
        bodies.append(client.get(reverse("tournaments:standings_csv", args=[tournament.slug])).content.decode())
        bodies.append(client.get(reverse("tournaments:list")).content.decode())
        bodies.append(client.get(reverse("api:tournament-detail", args=[tournament.slug])).content.decode())
        bodies.append(client.get(reverse("api:tournament-list")).content.decode())
        return bodies

    for body in public_views():  # registration open
        assert str(SEED) not in body and str(SEED + 1) not in body
    page = public_views()[0]
    assert "seed hidden until the tournament finishes" in page and "data-seed" not in page

    client.force_login(staff)  # organizers see it, with a note that the public does not yet
    page = client.get(tournament.get_absolute_url()).content.decode()
    assert f"seed {SEED}" in page and f"<code>{SEED}</code>" in page and "public once the tournament finishes" in page

    services.tournament_start(tournament)
    for body in public_views():  # running
        assert str(SEED) not in body

    tournament = play_to_the_end(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    page = public_views()[0]
    assert f"<code>{SEED}</code>" in page and f"seed {SEED}" in page
    assert "seed hidden" not in page and "public once the tournament finishes" not in page


def test_a_cancelled_tournament_keeps_its_seed_hidden(client, owner):
    tournament = tournament_with(field(2, owner), start=False, seed=SEED)
    services.tournament_cancel(tournament)
    assert str(SEED) not in client.get(tournament.get_absolute_url()).content.decode()


def test_the_seed_is_redacted_only_where_the_log_writes_it():
    assert services.redact_seed("created: Swiss, 2 seats, seed -42") == (
        "created: Swiss, 2 seats, seed hidden until the tournament finishes")
    assert services.redact_seed("entry owner/seedling added") == "entry owner/seedling added"


def test_the_admin_leaves_the_seed_empty_until_the_start(client, staff):
    client.force_login(staff)
    response = client.post(reverse("admin:tournaments_tournament_add"), admin_data(name="Blind Cup"))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Tournament.objects.get(slug="blind-cup").seed is None


# --- 2. entry names of the longest owner and bot names ---------------------------------------------


def test_the_entry_name_holds_the_longest_owner_slash_bot_label():
    username = get_user_model()._meta.get_field("username").max_length
    bot_name = Bot._meta.get_field("name").max_length
    assert Entry._meta.get_field("name").max_length >= username + 1 + bot_name


def long_named_bots():
    owner = make_user("u" * 150)
    return [active_bot(owner, "b" * 49 + last) for last in "xy"]


def test_bots_whose_labels_differ_only_past_200_characters_both_enter():
    bots = long_named_bots()
    tournament = tournament_with(bots, start=False)
    assert sorted(tournament.entries.values_list("name", flat=True)) == sorted(str(bot) for bot in bots)
    assert str(bots[0])[:200] == str(bots[1])[:200]  # the old name field (200) made them one name
    tournament = services.tournament_start(tournament)
    assert tournament.status == Tournament.Status.RUNNING


def test_the_admin_adds_long_named_entries_together(client, staff):
    bots = long_named_bots()
    client.force_login(staff)
    data = admin_data(name="Long Cup", **{
        "entries-TOTAL_FORMS": "2", "entries-0-bot": str(bots[0].pk), "entries-1-bot": str(bots[1].pk)})
    response = client.post(reverse("admin:tournaments_tournament_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Tournament.objects.get(slug="long-cup").entries.count() == 2


def test_a_clashing_entry_name_is_a_clear_refusal_not_a_500(client, owner):
    tournament = services.tournament_create(name="Open Cup", rules=["players=2"])
    services.tournament_open_registration(tournament)
    squatter = services.entry_add(tournament, active_bot(make_user("other"), "theirs"))
    mine = active_bot(owner, "mine")
    Entry.objects.filter(pk=squatter.pk).update(name=str(mine))  # a row left from before any fix
    with pytest.raises(TournamentError, match="owner/mine cannot enter Open Cup"):
        services.entry_add(tournament, mine)
    client.force_login(owner)
    response = client.post(reverse("tournaments:enter", args=[tournament.slug]), {"bot": mine.pk}, follow=True)
    assert response.status_code == 200
    assert "owner/mine cannot enter Open Cup" in response.content.decode()
    assert tournament.entries.count() == 1
    assert tournament.events.filter(action="entry").count() == 1  # no log line for the refused entry


# --- 3. pairs that never meet in a k-seat round robin ----------------------------------------------


def planned_meetings(tournament: Tournament) -> dict:
    counts: dict = {}
    for planned in tournament.plan:
        for table in planned["tables"]:
            for pair in combinations(sorted(table), 2):
                counts[pair] = counts.get(pair, 0) + 1
    return counts


def test_a_three_seat_round_robin_says_how_many_pairs_never_meet(client, owner, staff):
    tournament = refreshed(tournament_with(field(5, owner), format="round_robin", rules=["players=3", "rounds=1"]))
    assert tournament.total_rounds == 2  # the default: 2 rounds of a 3 and a 2 table seat 8 of the 10 pairs
    counts = planned_meetings(tournament)
    unmet, repeated = 10 - len(counts), sum(1 for c in counts.values() if c > 1)
    assert unmet >= 2
    coverage = selectors.round_robin_pair_coverage(tournament)
    assert (coverage.pairs, coverage.unmet, coverage.repeated) == (10, unmet, repeated)
    expected = f"{unmet} of 10 pairs of entries do not meet at a table"
    page = client.get(tournament.get_absolute_url()).content.decode()
    assert expected in page
    client.force_login(staff)
    admin_page = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    assert expected in admin_page


def test_the_pair_note_before_the_start_and_not_for_two_seats(client, owner):
    three = tournament_with(field(5, owner), start=False, format="round_robin", rules=["players=3"], name="Three")
    assert selectors.round_robin_pair_coverage(three) is None
    assert "some pairs of entries may never meet at a table" in client.get(three.get_absolute_url()).content.decode()
    two = tournament_with(field(4, make_user("two")), format="round_robin", name="Two")
    assert selectors.round_robin_pair_coverage(two) is None
    assert "data-pairs" not in client.get(two.get_absolute_url()).content.decode()


def test_a_schedule_where_every_pair_meets_says_so(owner):
    tournament = refreshed(tournament_with(field(4, owner), format="round_robin", rules=["players=3"], rounds=3))
    coverage = selectors.round_robin_pair_coverage(tournament)
    assert coverage.unmet == 0 and coverage.text.startswith("every one of the 6 pairs of entries meets")


def test_the_rounds_help_no_longer_promises_that_every_pair_can_meet():
    help_text = Tournament._meta.get_field("rounds").help_text
    assert "every pair could meet" not in help_text and "never meet" in help_text


# --- 4. admin form rough edges ---------------------------------------------------------------------


def admin_data(**changes) -> dict:
    data = {
        "name": "Admin Cup", "slug": "", "description": "", "format": "swiss", **rules_post_data({"players": 2}),
        "deals": "1", "duplicate": "on", "rounds": "", "cycles": "1", "tie_breaks": ["buchholz"], "seed": "",
        "entries-TOTAL_FORMS": "0", "entries-INITIAL_FORMS": "0",
    }
    return {**data, **changes}


def test_rule_fields_left_at_their_defaults_take_every_default(client, staff):
    client.force_login(staff)
    response = client.post(reverse("admin:tournaments_tournament_add"), admin_data(**rules_post_data({})))
    assert response.status_code == 302, response.content.decode()[:2000]
    tournament = Tournament.objects.get()
    defaults = services.parse_rules({})
    assert tournament.seats == defaults.players and tournament.rules == defaults.to_dict()


def test_zero_deals_is_one_clear_message_on_the_field(client, staff):
    client.force_login(staff)
    response = client.post(reverse("admin:tournaments_tournament_add"), admin_data(deals="0"))
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert form.errors == {"deals": ["deals per match must be a whole number 1..100, got 0"]}
    assert "Constraint" not in response.content.decode()
    assert not Tournament.objects.exists()


def test_unsaved_entry_rows_have_no_withdraw_link(client, staff, owner):
    client.force_login(staff)
    add_page = client.get(reverse("admin:tournaments_tournament_add")).content.decode()
    assert "tournament__id__exact=None" not in add_page and "withdraw / disqualify" not in add_page
    tournament = tournament_with(field(2, owner), start=False)
    change = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    assert "tournament__id__exact=None" not in change
    assert change.count(f"tournament__id__exact={tournament.pk}") == 2  # one per saved entry


# --- 5. the demo organizer ---------------------------------------------------------------------------


def test_the_demo_organizer_opens_every_link_of_a_tournament_page(client, staff, owner):
    organizer = demo_organizer("pw", log=lambda _: None)
    tournament = tournament_with(field(3, owner), format="round_robin", rules=["players=3"])
    Tournament.objects.filter(pk=tournament.pk).update(created_by=staff)  # someone else's account
    client.force_login(organizer)
    page = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    links = set(re.findall(r'href="(/admin/[^"]*)"', page))
    assert any("/bots/botversion/" in link for link in links)  # the frozen versions stay one click away
    assert not any("/auth/user/" in link for link in links)
    assert "root" in page  # created by, as plain text
    for link in sorted(links):
        if "logout" in link:
            continue
        response = client.get(link.replace("&amp;", "&"))
        if link.startswith("/admin/r/"):  # "view on site": a redirect to the public page
            assert response.status_code == 302 and response["Location"].endswith(tournament.get_absolute_url())
        else:
            assert response.status_code == 200, link


def test_staff_without_version_permission_see_plain_version_labels(client, owner):
    from django.contrib.auth.models import Permission

    clerk = get_user_model().objects.create_user(username="clerk", password="pw", is_staff=True)
    clerk.user_permissions.add(*Permission.objects.filter(codename__in=["view_tournament", "view_entry"]))
    tournament = tournament_with(field(2, owner))
    client.force_login(clerk)
    page = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    assert "/admin/bots/botversion/" not in page and "owner/bot0 v1" in page


def test_the_demo_organizer_runs_ladders_but_only_views_bots_and_users_not_at_all(client):
    organizer = demo_organizer("pw", log=lambda _: None)
    organizer = get_user_model().objects.get(pk=organizer.pk)  # fresh permission cache
    assert organizer.has_perms(["ladders.add_ladder", "ladders.change_ladder", "ladders.view_ladder"])
    assert organizer.has_perms(["bots.view_bot", "bots.view_botversion"])
    assert not any(organizer.has_perm(p) for p in (
        "bots.change_bot", "bots.change_botversion", "ladders.delete_ladder", "auth.view_user", "auth.change_user"))
    client.force_login(organizer)
    assert client.get(reverse("admin:ladders_ladder_add")).status_code == 200


def test_a_demo_organizer_from_an_older_seed_gets_the_new_permissions():
    organizer = get_user_model().objects.create_user(username="organizer", password="old", is_staff=True)
    demo_organizer("pw", log=lambda _: None)
    organizer = get_user_model().objects.get(pk=organizer.pk)
    assert organizer.has_perm("ladders.add_ladder") and organizer.check_password("old")
