"""Public tournament pages, the live progress document, the standings CSV, and the admin's actions."""

from __future__ import annotations

import csv
import io

import pytest
from core.rule_forms import rules_post_data
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

from matches.models import Match
from tournaments_app import selectors, services
from tournaments_app.models import Entry, Table, Tournament

pytestmark = pytest.mark.django_db


def test_list_shows_status_format_entries_and_progress(client, swiss):
    services.tournament_create(name="Later Cup", rules=["players=3"])
    page = client.get(reverse("tournaments:list")).content.decode()
    assert "Spring Swiss" in page and "Later Cup" in page
    assert "Swiss, 2 seats" in page and "3 seats" in page
    assert 'badge-running">running' in page and 'badge-draft">draft' in page
    # 2 of 4 matches: round 1 done, round 2 paired
    assert '<span data-done>2</span> of <span data-total>4</span>' in page


def test_tournament_page_shows_standings_rounds_results_and_crosstable(client, swiss):
    page = client.get(swiss.get_absolute_url()).content.decode()
    winners = {p.seats.get(seat=0).entry.name for p in Table.objects.filter(round__number=1, round__tournament=swiss)}
    standings = page.split("<h2>Standings</h2>")[1].split("<h2>Crosstable</h2>")[0]
    # both round-1 winners lead with 1 point
    rows = standings.split("<tr>")[2:]
    assert {name for name in winners if name in rows[0] or name in rows[1]} == winners
    assert "<th class=\"num hide-phone\">Buchholz</th>" in standings
    assert "<h2>Crosstable</h2>" in page and "<td>1</td>" in page and "<td>0</td>" in page
    match = Table.objects.filter(round__tournament=swiss, round__number=1).first().match
    assert f'href="{match.get_absolute_url()}">#{match.pk}</a>' in page
    assert reverse("matches:replay_viewer", args=[match.pk]) in page
    assert "Why this pairing" not in page  # explanations are for organizers
    assert "round 2 of 2 paired" in page  # the log is public


def _results_tables(page: str) -> str:
    return page.split("<h2>Standings</h2>")[1].split("<h2>Seeding</h2>")[0].split('<h2 id="rounds">')[0]


def test_the_cached_standings_and_crosstable_change_with_each_result_and_crosstable_page(client, swiss, monkeypatch):
    """The page keeps its rendered standings and crosstable under the results they show: the next
    result is on the next view at once, and each crosstable page is its own."""
    # two crosstable pages for the four entries
    monkeypatch.setattr(selectors, "CROSSTABLE_PAGE_SIZE", 2)
    url = swiss.get_absolute_url()
    before = _results_tables(client.get(url).content.decode())
    assert _results_tables(client.get(url).content.decode()) == before  # the same results: the same tables
    second_page = _results_tables(client.get(url + "?cross=2").content.decode())
    assert second_page != before and "rows 3–4 of 4" in second_page

    match = open_matches(swiss)[0]
    names = [seat.entry.name for seat in Table.objects.get(match=match).seats.order_by("seat")]
    finish(match, [2, 1])  # seat 1 wins
    after = _results_tables(client.get(url).content.decode())
    assert after != before
    # the round-2 winner now has 2 points: seat 1 of that table had won its round-1 table too
    standings = after.split("<h2>Crosstable</h2>")[0]
    row = next(row for row in standings.split("<tr>")[2:] if names[1] in row)
    assert "<strong>2</strong>" in row


def test_organizers_see_the_pairing_explanation_and_who_acted(client, swiss, staff):
    services.tournament_pause(swiss, actor=staff)
    client.force_login(staff)
    page = client.get(swiss.get_absolute_url()).content.decode()
    assert "Why this pairing" in page and "swiss round 2: 4 active entries" in page
    assert '<td class="event-who">root</td>' in page


def test_progress_json_counts_matches_done_of_total(client, swiss):
    data = client.get(reverse("tournaments:progress", args=[swiss.slug])).json()
    assert data == {"status": "running", "current_round": 2, "total_rounds": 2, "done": 2, "total": 4, "percent": 50}
    play_round(swiss)
    data = client.get(reverse("tournaments:progress", args=[swiss.slug])).json()
    assert (data["status"], data["done"], data["total"], data["percent"]) == ("finished", 4, 4, 100)


def test_running_page_polls_progress_and_a_finished_one_does_not(client, swiss):
    url = reverse("tournaments:progress", args=[swiss.slug])
    assert url in client.get(swiss.get_absolute_url()).content.decode()
    play_round(swiss)
    assert url not in client.get(swiss.get_absolute_url()).content.decode()


def test_standings_csv_matches_the_standings_and_defuses_formulas(client, owner):
    sneaky = make_user("=cmd")
    bots = [active_bot(sneaky, "x"), *field(2, owner)]
    tournament = tournament_with(bots, name="CSV Cup", format="round_robin")
    for _ in range(3):
        play_round(tournament)
        tournament = refreshed(tournament)
    response = client.get(reverse("tournaments:standings_csv", args=[tournament.slug]))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'attachment; filename="csv-cup-standings.csv"' == response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["rank", "entry", "version", "points", "Buchholz", "Sonneborn-Berger", "Head-to-head",
                       "Game points", "played", "byes", "status"]
    lines = services.tournament_standings_lines(tournament)
    assert [r[1].lstrip("'") for r in rows[1:]] == [line.entry for line in lines]
    assert [float(r[3]) for r in rows[1:]] == [float(line.points) for line in lines]
    assert "'=cmd/x" in [r[1] for r in rows[1:]]


def test_unknown_tournament_is_404(client, db):
    assert client.get(reverse("tournaments:detail", args=["nope"])).status_code == 404
    assert client.get(reverse("tournaments:progress", args=["nope"])).status_code == 404
    assert client.get(reverse("tournaments:standings_csv", args=["nope"])).status_code == 404


def admin_action(client, action: str, model: str, pks, status: int = 302):
    url = reverse(f"admin:tournaments_{model}_changelist")
    response = client.post(url, {"action": action, "_selected_action": [str(pk) for pk in pks]})
    assert response.status_code == status
    return response


def test_admin_creates_a_tournament_with_entries_and_refuses_bad_rules(client, staff, owner):
    bots = field(2, owner)
    client.force_login(staff)
    url = reverse("admin:tournaments_tournament_add")
    data = {
        "name": "Admin Cup", "slug": "", "description": "", "format": "swiss", **rules_post_data({"players": 5}),
        "deals": "1", "duplicate": "on", "rounds": "", "cycles": "1", "tie_breaks": ["buchholz"], "seed": "9",
        "entries-TOTAL_FORMS": "0", "entries-INITIAL_FORMS": "0",
    }
    response = client.post(url, {**data, "rule_players": "11"})
    assert response.status_code == 200
    assert "less than or equal to 10" in response.context["adminform"].form.errors["rule_players"][0]
    assert not Tournament.objects.exists()
    data.update({"entries-TOTAL_FORMS": "2", "entries-0-bot": str(bots[0].pk), "entries-1-bot": str(bots[1].pk)})
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    tournament = Tournament.objects.get(slug="admin-cup")
    assert (tournament.seats, tournament.tie_breaks, tournament.seed) == (5, ["buchholz"], 9)
    assert sorted(tournament.entries.values_list("name", flat=True)) == ["owner/bot0", "owner/bot1"]
    assert tournament.created_by == staff
    assert list(tournament.events.values_list("action", flat=True).order_by("pk")) == ["created", "entry", "entry"]


def test_admin_actions_start_pause_resume_rerun_cancel(client, staff, owner):
    tournament = tournament_with(field(2, owner), start=False, format="round_robin", cycles=2)
    client.force_login(staff)
    admin_action(client, "start", "tournament", [tournament.pk])
    tournament = refreshed(tournament)
    assert tournament.status == "running"
    admin_action(client, "pause", "tournament", [tournament.pk])
    assert refreshed(tournament).status == "paused"
    admin_action(client, "resume", "tournament", [tournament.pk])
    assert refreshed(tournament).status == "running"
    (match,) = open_matches(tournament)
    from matches import services as match_services

    match_services.match_fail(match.pk, match_services.match_start(match.pk), "docker went away")
    admin_action(client, "rerun_failed", "tournament", [tournament.pk])
    (rerun,) = open_matches(refreshed(tournament))
    assert rerun.pk != match.pk and rerun.status == Match.Status.QUEUED
    finish(rerun, [1, 2])
    page = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    assert "1 of 2 matches" in page and "round robin cycle 2" in page
    admin_action(client, "cancel", "tournament", [tournament.pk], status=200)  # asks for a reason first
    assert refreshed(tournament).status == "running"
    client.post(reverse("admin:tournaments_tournament_changelist"),
                {"action": "cancel", "_selected_action": [str(tournament.pk)], "reason": "test", "confirm": "on"})
    assert refreshed(tournament).status == "cancelled"
    response = client.post(
        reverse("admin:tournaments_tournament_changelist"),
        {"action": "start", "_selected_action": [str(tournament.pk)]}, follow=True,
    )
    assert "Cannot start: Test Cup is cancelled" in response.content.decode()
    actions = list(tournament.events.filter(actor=staff).values_list("action", flat=True).order_by("pk"))
    assert actions == ["started", "paused", "resumed", "re-run", "cancelled"]


def test_admin_withdraw_and_disqualify_entries(client, staff, owner):
    tournament = tournament_with(field(4, owner), format="swiss")
    client.force_login(staff)
    a, b = Entry.objects.filter(tournament=tournament).order_by("pk")[:2]
    admin_action(client, "withdraw", "entry", [a.pk])
    client.post(reverse("admin:tournaments_entry_changelist"),
                {"action": "disqualify", "_selected_action": [str(b.pk)], "reason": "test", "confirm": "on"})
    assert list(Entry.objects.filter(pk__in=[a.pk, b.pk]).order_by("pk").values_list("status", flat=True)) == [
        "withdrawn", "disqualified"]
    listing = client.get(reverse("admin:tournaments_tournament_changelist")).content.decode()
    # round 1 keeps its 2 tables; round 2 seats the 2 entries left at 1 table
    assert "0 of 3 matches" in listing


def test_admin_is_for_staff_only(client, owner, swiss):
    client.force_login(owner)
    response = client.get(reverse("admin:tournaments_tournament_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.slow
def test_admin_page_buttons_run_the_services_for_the_current_status(client, staff, owner):
    tournament = tournament_with(field(2, owner), start=False)
    client.force_login(staff)
    change = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    do = lambda action: reverse("admin:tournaments_tournament_do", args=[tournament.pk, action])  # noqa: E731
    page = client.get(change).content.decode()
    assert f'action="{do("start")}"' in page and f'action="{do("pause")}"' not in page
    assert client.get(do("start")).status_code == 405
    assert client.post(do("explode")).status_code == 404
    response = client.post(do("start"), follow=True)
    assert refreshed(tournament).status == "running"
    assert "Test Cup: started" in response.content.decode()
    page = client.get(change).content.decode()
    assert f'action="{do("pause")}"' in page and f'action="{do("start")}"' not in page
    response = client.post(do("resume"), follow=True)  # not paused: refused with the reason
    assert "Cannot resume: Test Cup is running" in response.content.decode()
    client.force_login(owner)
    assert client.post(do("cancel")).status_code == 302
    assert refreshed(tournament).status == "running"


def test_tournament_page_queries_do_not_grow_with_the_field(client, owner):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for size in (6, 12):
        tournament = tournament_with(field(size, make_user(f"owner{size}")), name=f"Q{size}", format="swiss")
        play_round(tournament)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(tournament.get_absolute_url()).status_code == 200
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1], counts


def test_owners_enter_their_bots_during_registration_and_leave_before_the_start(client, owner):
    tournament = services.tournament_create(name="Open Cup", rules=["players=2"])
    mine, other = active_bot(owner, "mine"), active_bot(make_user("other"), "theirs")
    enter = reverse("tournaments:enter", args=[tournament.slug])
    client.force_login(owner)
    client.post(enter, {"bot": mine.pk})
    assert not tournament.entries.exists()  # a draft takes no entries from owners
    services.tournament_open_registration(tournament)
    page = client.get(tournament.get_absolute_url()).content.decode()
    assert f'<option value="{mine.pk}">mine</option>' in page and "theirs" not in page
    for hostile in (other.pk, "x", "99999999999999999999999", "²"):
        response = client.post(enter, {"bot": hostile}, follow=True)
        assert "choose one of your bots to enter" in response.content.decode()
    response = client.post(enter, {"bot": mine.pk}, follow=True)
    assert "owner/mine is entered in Open Cup" in response.content.decode()
    entry = tournament.entries.get()
    assert tournament.events.filter(action="entry", actor=owner).exists()
    client.force_login(make_user("stranger"))
    client.post(reverse("tournaments:leave", args=[tournament.slug, entry.pk]))
    assert tournament.entries.exists()
    client.force_login(owner)
    client.post(reverse("tournaments:leave", args=[tournament.slug, entry.pk]))
    assert not tournament.entries.exists()
    assert "entry owner/mine left before the start" in tournament.events.first().message


def test_registration_is_closed_once_the_tournament_runs(client, owner):
    tournament = tournament_with(field(2, owner), start=False)
    services.tournament_open_registration(tournament)
    services.tournament_start(tournament)
    late = active_bot(owner, "late")
    client.force_login(owner)
    response = client.post(reverse("tournaments:enter", args=[tournament.slug]), {"bot": late.pk}, follow=True)
    assert "Test Cup is running: entries are open only during registration" in response.content.decode()
    entry = tournament.entries.first()
    response = client.post(reverse("tournaments:leave", args=[tournament.slug, entry.pk]), follow=True)
    assert "cannot leave before the start: Test Cup is running" in response.content.decode()
    assert tournament.entries.count() == 2
