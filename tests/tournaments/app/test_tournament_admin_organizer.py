"""The organizer's admin (issue 20, point 7), driven with the test client against the real admin as an
organizer (staff with the demo organizer's permissions, not a superuser): the rules as a form generated from
engine.rules, tie-breaks as an ordered choice, bulk entries, cancel and disqualify with a confirmation and a
public reason, re-run and void of one match, and the podium of a finished tournament."""

from __future__ import annotations

import dataclasses
import re

import pytest
from core.rule_forms import rules_post_data
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from tournament_helpers import (
    active_bot,
    field,
    finish,
    make_user,
    open_matches,
    play_round,
    refreshed,
    tournament_with,
)

from engine.rules import BOOLEANS, BOUNDS, CHOICES, Rules
from matches.models import Match
from tournaments_app import services
from tournaments_app.demo import ORGANIZER_PERMISSIONS
from tournaments_app.models import Entry, Table, Tournament

pytestmark = pytest.mark.django_db

ADD = "admin:tournaments_tournament_add"


@pytest.fixture
def organizer(db):
    user = make_user("olga")
    user.is_staff = True
    user.save()
    for app_label, codename in ORGANIZER_PERMISSIONS:
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


@pytest.fixture
def desk(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def form_data(rules=None, **changes) -> dict:
    data = {
        "name": "Desk Cup", "slug": "", "description": "", "format": "swiss", "deals": "1", "duplicate": "on",
        "rounds": "", "cycles": "1", "tie_breaks": ["buchholz"], "seed": "", "time_per_decision": "",
        "time_bank": "", "time_per_match": "", "seed_ladder": "",
        "entries-TOTAL_FORMS": "0", "entries-INITIAL_FORMS": "0",
        **rules_post_data({"players": 2, "rounds": 1} if rules is None else rules),
    }
    data.update(changes)
    return data


def change_url(tournament) -> str:
    return reverse("admin:tournaments_tournament_change", args=[tournament.pk])


def confirm_url(tournament, action, target) -> str:
    return reverse("admin:tournaments_tournament_confirm", args=[tournament.pk, action, target])


# --- the rules form ---------------------------------------------------------------------------------


def test_the_rules_form_has_every_option_of_engine_rules_with_its_values_and_default(desk):
    page = desk.get(reverse(ADD)).content.decode()
    defaults = {f.name: f.default for f in dataclasses.fields(Rules)}
    assert "Rules" in page and 'name="rules"' not in page  # no JSON to type
    for option, default in defaults.items():
        assert f'name="rule_{option}"' in page, option
        if option in CHOICES:
            select = re.search(rf'<select name="rule_{option}".*?</select>', page, re.S).group(0)
            assert re.findall(r'<option value="([^"]*)"', select) == list(CHOICES[option])
            assert f'<option value="{default}" selected>' in select
            assert f"default {default}" in page
        elif option in BOOLEANS:
            tag = re.search(rf'<input type="checkbox" name="rule_{option}"[^>]*>', page).group(0)
            assert ("checked" in tag) == default
        else:
            low, high = BOUNDS[option]
            tag = re.search(rf'<input type="number" name="rule_{option}"[^>]*>', page).group(0)
            assert f'min="{low}"' in tag and f'max="{high}"' in tag
    # the new tournament's start: 2 seats, one round per game
    assert re.search(r'name="rule_players" value="2"', page) and re.search(r'name="rule_rounds" value="1"', page)


def test_a_bad_rule_value_is_refused_on_its_own_field_and_nothing_is_created(desk):
    for option, bad, words in [("hand_size", "99", "less than or equal to 20"),
                               ("wd4", "sometimes", "Select a valid choice"),
                               ("stacking", "stack", "requires wd4=enforced or wd4=free")]:
        response = desk.post(reverse(ADD), form_data(**{f"rule_{option}": bad}))
        assert response.status_code == 200
        errors = response.context["adminform"].form.errors
        assert list(errors) == [f"rule_{option}"], errors
        assert words in errors[f"rule_{option}"][0]
    # a deal too large for the table: the engine names hand_size, the form shows it there
    response = desk.post(reverse(ADD), form_data(rule_players="10", rule_hand_size="15"))
    assert "too large a deal" in response.context["adminform"].form.errors["rule_hand_size"][0]
    assert not Tournament.objects.exists()


def test_the_rules_form_stores_the_rule_set_and_shows_it_again(desk):
    response = desk.post(reverse(ADD), form_data(rules={"players": 3, "wd4": "free", "stacking": "stack",
                                                       "seven_zero": True, "rounds": 2}))
    assert response.status_code == 302, response.context["adminform"].form.errors
    cup = Tournament.objects.get(slug="desk-cup")
    assert cup.seats == 3
    assert cup.rules == Rules(players=3, wd4="free", stacking="stack", seven_zero=True, rounds=2).to_dict()
    page = desk.get(change_url(cup)).content.decode()
    assert '<option value="stack" selected>' in page and re.search(r'name="rule_rounds" value="2"', page)
    assert re.search(r'<input type="checkbox" name="rule_seven_zero"[^>]*checked', page)


def test_tie_breaks_are_an_ordered_choice_and_keep_their_order(desk):
    order = ["game_points", "head_to_head", "buchholz"]
    response = desk.post(reverse(ADD), form_data(tie_breaks=[order[0], "", order[1], order[2]]))
    assert response.status_code == 302, response.context["adminform"].form.errors
    cup = Tournament.objects.get(slug="desk-cup")
    assert cup.tie_breaks == order
    page = desk.get(change_url(cup)).content.decode()
    chosen = re.findall(r'<select name="tie_breaks"[^>]*>.*?<option value="(\w+)" selected>', page, re.S)
    assert chosen == order
    response = desk.post(change_url(cup), form_data(tie_breaks=["buchholz", "buchholz"]))
    assert "buchholz chosen twice" in response.context["adminform"].form.errors["tie_breaks"][0]
    assert refreshed(cup).tie_breaks == order


# --- bulk entries -----------------------------------------------------------------------------------


def bulk_url(tournament) -> str:
    return reverse("admin:tournaments_tournament_bulk_entries", args=[tournament.pk])


def test_bulk_entries_from_a_ladder_and_from_a_pasted_list(desk, owner):
    from ladders.models import Ladder, LadderEntry
    from ladders.services import ladder_enter

    bots = field(4, owner)
    ladder = Ladder.objects.create(name="Open", slug="open", rules=Rules(players=2).to_dict(), seats=2)
    for bot in bots[:3]:
        ladder_enter(ladder, bot)
    LadderEntry.objects.filter(ladder=ladder, bot=bots[2]).update(status=LadderEntry.Status.LEFT)
    cup = tournament_with([bots[0]], start=False)
    response = desk.post(bulk_url(cup), {"ladder": ladder.pk, "names": ""}, follow=True)
    page = response.content.decode()
    assert "1 entry added: owner/bot1; already entered, skipped: owner/bot0" in page
    other = active_bot(make_user("zoe"), "zed")
    response = desk.post(bulk_url(cup), {"names": "zoe/zed\nowner/bot3, owner/bot3"}, follow=True)
    assert "2 entries added: zoe/zed, owner/bot3" in response.content.decode()
    assert sorted(cup.entries.values_list("bot_id", flat=True)) == sorted([bots[0].pk, bots[1].pk, bots[3].pk, other.pk])
    assert cup.events.filter(action="entry", actor__username="olga").count() == 3


def test_a_bulk_list_with_unknown_names_adds_nothing_and_names_them(desk, owner):
    bots = field(2, owner)
    sleeper = active_bot(owner, "sleeper", active=False)
    cup = tournament_with([], start=False)
    response = desk.post(bulk_url(cup), {"names": "owner/bot0\nowner/nope\nbot1\nowner/bot1"})
    assert response.status_code == 200
    assert "no bot named owner/nope, bot1 (write owner/bot, one a line); nothing was added" in response.content.decode()
    response = desk.post(bulk_url(cup), {"names": f"owner/bot0\nowner/{sleeper.name}"})
    assert "no active version for owner/sleeper" in response.content.decode()
    assert not cup.entries.exists() and not cup.events.filter(action="entry").exists()
    assert desk.post(bulk_url(cup), {"names": " \n "}).status_code == 200
    assert not cup.entries.exists()
    assert bots  # the names exist: only the unknown and inactive ones made the refusal


# --- confirmations with a public reason ---------------------------------------------------------------


def test_cancel_asks_for_a_reason_and_a_tick_and_the_public_log_shows_it(desk, owner, client):
    cup = tournament_with(field(2, owner), start=False)
    page = desk.get(change_url(cup)).content.decode()
    url = confirm_url(cup, "cancel", cup.pk)
    assert f'href="{url}"' in page
    form = desk.get(url).content.decode()
    assert "This cannot be undone" in form and 'name="reason"' in form and 'name="confirm"' in form
    for data in ({"reason": "", "confirm": "on"}, {"reason": "   ", "confirm": "on"}, {"reason": "venue lost"}):
        assert desk.post(url, data).status_code == 200
        assert refreshed(cup).status == "draft"
    response = desk.post(url, {"reason": "the venue is lost", "confirm": "on"})
    assert response.status_code == 302
    assert refreshed(cup).status == "cancelled"
    public = client.get(cup.get_absolute_url()).content.decode()
    assert "cancelled: the venue is lost" in public


def test_the_list_actions_cancel_and_disqualify_confirm_first(desk, owner, client):
    cup = tournament_with(field(4, owner), format="swiss")
    entry = cup.entries.order_by("pk").first()
    changelist = reverse("admin:tournaments_entry_changelist")
    asked = desk.post(changelist, {"action": "disqualify", "_selected_action": [entry.pk]})
    assert asked.status_code == 200 and "Disqualify these entries" in asked.content.decode()
    assert Entry.objects.get(pk=entry.pk).status == "active"
    done = desk.post(changelist, {"action": "disqualify", "_selected_action": [entry.pk],
                                  "reason": "shared its source with another entrant", "confirm": "on"})
    assert done.status_code == 302
    assert Entry.objects.get(pk=entry.pk).status == "disqualified"
    assert f"{entry.name} disqualified: shared its source with another entrant" in client.get(
        cup.get_absolute_url()).content.decode()
    tournaments = reverse("admin:tournaments_tournament_changelist")
    assert desk.post(tournaments, {"action": "cancel", "_selected_action": [cup.pk]}).status_code == 200
    assert refreshed(cup).status == "running"
    desk.post(tournaments, {"action": "cancel", "_selected_action": [cup.pk], "reason": "storm", "confirm": "on"})
    assert refreshed(cup).status == "cancelled"


def test_disqualify_from_the_tournament_page_with_a_reason(desk, owner, client):
    cup = tournament_with(field(4, owner), format="swiss")
    entry = cup.entries.order_by("pk").last()
    url = confirm_url(cup, "disqualify", entry.pk)
    assert f'href="{url}"' in desk.get(change_url(cup)).content.decode()
    assert desk.post(url, {"reason": "timeouts on purpose"}).status_code == 200  # no tick
    assert Entry.objects.get(pk=entry.pk).status == "active"
    desk.post(url, {"reason": "timeouts on purpose", "confirm": "on"})
    assert Entry.objects.get(pk=entry.pk).status == "disqualified"
    assert "timeouts on purpose" in client.get(cup.get_absolute_url()).content.decode()
    other = tournament_with(field(2, make_user("else")), name="Other Cup")
    assert desk.get(confirm_url(other, "disqualify", entry.pk)).status_code == 404  # not an entry of it


# --- one match: re-run or void ------------------------------------------------------------------------


def points(tournament) -> dict:
    return {line.entry: line.points for line in services.tournament_standings_lines(tournament)}


def test_rerun_one_played_match_takes_its_result_out_until_the_new_one_finishes(desk, owner, client):
    cup = tournament_with(field(4, owner), format="swiss", rounds=2)
    first, second = open_matches(cup)
    finish(first, [1, 2])
    pairing = Table.objects.get(match=first)
    winner = pairing.seats.get(seat=0).entry.name
    assert points(cup)[winner] == 1
    url = confirm_url(cup, "rerun", pairing.pk)
    assert f'href="{url}"' in desk.get(change_url(cup)).content.decode()
    desk.post(url, {"reason": "the host ran out of memory", "confirm": "on"})
    pairing.refresh_from_db()
    assert pairing.match_id != first.pk and not pairing.done
    assert pairing.match.status == Match.Status.QUEUED and pairing.match.seed == first.seed
    assert points(cup)[winner] == 0  # out of the standings until the new match finishes
    assert f"match #{first.pk} re-run as #{pairing.match_id}: the host ran out of memory" in client.get(
        cup.get_absolute_url()).content.decode()
    finish(pairing.match, [2, 1])  # the other seat wins this time
    finish(second, [1, 2])
    assert points(refreshed(cup))[winner] == 0 and refreshed(cup).current_round == 2


def test_void_one_match_counts_for_nobody_and_the_round_goes_on(desk, owner, client):
    cup = tournament_with(field(4, owner), format="swiss", rounds=2)
    first, second = open_matches(cup)
    finish(first, [1, 2])
    pairing = Table.objects.get(match=first)
    names = [s.entry.name for s in pairing.seats.order_by("seat")]
    desk.post(confirm_url(cup, "void", pairing.pk), {"reason": "a bot read the other's hand", "confirm": "on"})
    pairing.refresh_from_db()
    assert pairing.match_id is None and pairing.done
    assert all(points(cup)[n] == 0 for n in names)
    assert next(line for line in services.tournament_standings_lines(cup) if line.entry == names[0]).played == 0
    # void the other, still queued, table: its match is cancelled and round 2 is paired at once
    other = Table.objects.get(match=second)
    desk.post(confirm_url(cup, "void", other.pk), {"reason": "no result either", "confirm": "on"})
    assert Match.objects.get(pk=second.pk).status == Match.Status.CANCELLED
    assert refreshed(cup).current_round == 2
    page = client.get(cup.get_absolute_url()).content.decode()
    assert "void, counted for nobody: a bot read the other&#x27;s hand" in page
    assert desk.post(confirm_url(cup, "void", pairing.pk), {"reason": "again", "confirm": "on"},
                     follow=True).content.decode().count("is already void") == 1


# --- the podium ----------------------------------------------------------------------------------------


def test_a_finished_tournament_shows_its_winner_and_podium_on_its_page(owner, client):
    cup = tournament_with(field(4, owner), name="Podium Cup", format="round_robin")
    running = client.get(cup.get_absolute_url()).content.decode()
    assert "data-podium" not in running
    while refreshed(cup).status == "running":
        play_round(refreshed(cup))
    lines = services.tournament_standings_lines(cup)
    top = [line.entry for line in lines if line.rank <= 3]
    page = client.get(cup.get_absolute_url()).content.decode()
    head = page.split("<h2>Standings</h2>")[0]
    assert "data-podium" in head and f"Winner: {lines[0].entry}" in head
    podium = head.split("data-podium")[1].split("</ol>")[0]
    # each place: "1st owner/bot1 v1, 2 pt"
    places = [re.sub(r"<[^>]+>", "", "<li" + p).split()[1] for p in podium.split("<li")[1:]]
    assert places == top
    # The list shows the podium stored when the tournament finished (no standings computed per row;
    # tests/scale/test_tournament_scale.py keeps the list's queries constant).
    listed = client.get(reverse("tournaments:list")).content.decode()
    assert "data-podium" in listed
    on_list = listed.split("data-podium")[1].split("</ol>")[0]
    assert [re.sub(r"<[^>]+>", "", "<li" + p).split()[1] for p in on_list.split("<li")[1:]] == top
    stored = cup.__class__.objects.get(pk=cup.pk).podium
    assert stored[0]["name"] == lines[0].entry
    # the migration that added the column fills it for tournaments finished before it
    import importlib

    from django.apps import apps as django_apps

    cup.__class__.objects.filter(pk=cup.pk).update(podium=[])
    importlib.import_module("tournaments_app.migrations.0005_podium").fill_podiums(django_apps, None)
    assert cup.__class__.objects.get(pk=cup.pk).podium == stored


def test_a_disqualified_entry_is_never_on_the_podium(owner, client):
    cup = tournament_with(field(3, owner), name="Clean Cup", format="round_robin")
    play_round(cup)
    leader = services.tournament_standings_lines(cup)[0].entry
    services.entry_disqualify(cup.entries.get(name=leader), reason="cheated")
    while refreshed(cup).status == "running":
        play_round(refreshed(cup))
    head = client.get(cup.get_absolute_url()).content.decode().split("<h2>Standings</h2>")[0]
    assert "data-podium" in head and leader not in head.split("data-podium")[1]


# --- who may ----------------------------------------------------------------------------------------------


def test_only_organizers_reach_the_rules_form_bulk_entries_and_confirmations(owner):
    cup = tournament_with(field(2, owner), start=False)
    urls = [reverse(ADD), bulk_url(cup), confirm_url(cup, "cancel", cup.pk)]
    plain = Client()
    plain.force_login(make_user("visitor"))
    for url in urls:
        response = plain.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    staff_only = make_user("intern")
    staff_only.is_staff = True
    staff_only.save()
    bare = Client()
    bare.force_login(staff_only)
    for url in urls:
        assert bare.get(url).status_code == 403, url
    assert bare.post(confirm_url(cup, "cancel", cup.pk), {"reason": "x", "confirm": "on"}).status_code == 403
    assert bare.post(bulk_url(cup), {"names": "owner/bot0"}).status_code == 403
    assert refreshed(cup).status == "draft"


def test_the_running_page_offers_rerun_and_void_per_table_and_none_for_a_bye(desk, owner):
    cup = tournament_with(field(3, owner), format="swiss")
    page = desk.get(change_url(cup))
    assert page.status_code == 200
    table = Table.objects.get(round__tournament=cup, bye=False)
    bye = Table.objects.get(round__tournament=cup, bye=True)
    text = page.content.decode()
    assert f'href="{confirm_url(cup, "rerun", table.pk)}"' in text and f'href="{confirm_url(cup, "void", table.pk)}"' in text
    assert confirm_url(cup, "void", bye.pk) not in text and "bye: " in text
    assert desk.get(confirm_url(cup, "void", bye.pk)).status_code == 404
    services.tournament_pause(cup)
    text = desk.get(change_url(cup)).content.decode()
    assert confirm_url(cup, "rerun", table.pk) not in text and confirm_url(cup, "void", table.pk) in text


def test_the_ladder_admin_has_the_same_rules_form_with_its_seats_as_the_table_size(desk):
    from ladders.models import Ladder

    add = reverse("admin:ladders_ladder_add")
    page = desk.get(add).content.decode()
    assert 'name="rules"' not in page and 'name="rule_players"' not in page  # seats is the table size
    assert all(f'name="rule_{f.name}"' in page for f in dataclasses.fields(Rules) if f.name != "players")
    data = {"name": "Form Ladder", "slug": "form-ladder", "seats": "3", "deals": "1", "duplicate": "on",
            "time_per_decision": "1", "time_bank": "10", "time_per_match": "300", "max_pending": "4",
            "fault_limit": "3", "active": "on", "entries-TOTAL_FORMS": "0", "entries-INITIAL_FORMS": "0",
            **rules_post_data({"wd4": "free", "stacking": "deflect"}, exclude=("players",))}
    response = desk.post(add, {**data, "rule_stacking": "stack", "rule_wd4": "challenge"})
    assert "requires wd4=enforced or wd4=free" in response.context["adminform"].form.errors["rule_stacking"][0]
    assert desk.post(add, data).status_code == 302
    ladder = Ladder.objects.get(slug="form-ladder")
    assert ladder.rules == Rules(players=3, wd4="free", stacking="deflect").to_dict()
    page = desk.get(reverse("admin:ladders_ladder_change", args=[ladder.pk])).content.decode()
    assert '<option value="deflect" selected>' in page
