"""The web app's pages and JSON: replay page (who receives which logs), guide, starter bot, live status."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from bots import services as bot_services
from bots.models import BotVersion
from engine import rules as engine_rules
from engine.cards import CODES
from matches.models import Match
from matches.services import match_create
from sandbox import runner
from sandbox.limits import DEFAULT_LIMITS
from sandbox.package import BotPackage
from web import guide

PRINTING_BOT = b"""def agent(observation, configuration):
    print("secret plan of seat", observation["seat"])
    return observation["legal_actions"][0]
"""


def _user(name, *, staff=False):
    return get_user_model().objects.create_user(username=name, password="correct horse battery", is_staff=staff)


@pytest.fixture
def eager(django_capture_on_commit_callbacks):
    """Run what a block enqueues on commit right away, in-process (the embedded default)."""
    from celery import current_app

    before = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield lambda: django_capture_on_commit_callbacks(execute=True)
    current_app.conf.task_always_eager = before


def _validated(eager, username: str, name: str, data: bytes) -> BotVersion:
    """A new user's bot ``name`` whose upload ``data`` passed its validation match (run in-process)."""
    bot = bot_services.bot_create(owner=_user(username), name=name)
    with eager():
        version = bot_services.bot_version_create(bot=bot, filename=f"{name}.py", data=data)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    return version


@pytest.fixture
def played(db, eager):
    """A done challenge match between alice's printing bot and a reference bot."""
    version = _validated(eager, "alice", "planner", PRINTING_BOT)
    with eager():
        match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=[version, "greedy"], seed=5)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    return match


def _meta(response) -> dict:
    html = response.content.decode()
    found = re.search(r'<script id="replay-meta" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the replay page carries no viewer metadata"
    return json.loads(found.group(1))


def test_replay_page_gives_the_viewer_seats_and_logs_only_to_the_owner_and_superusers(client, played):
    url = reverse("matches:replay_viewer", args=[played.pk])
    response = client.get(url)
    assert response.status_code == 200
    meta = _meta(response)
    assert meta["replay_url"] == reverse("matches:replay", args=[played.pk])
    assert [b["label"] for b in meta["bots"]] == ["alice/planner v1", "greedy"]
    assert meta["bots"][1]["reference"] is True
    assert set(meta["cards"]) == set(CODES)
    assert b"web/replay.js" in response.content
    # anonymous, then another user: no log at all
    assert meta["logs"] == {} and b"secret plan" not in response.content
    _user("bob")
    client.login(username="bob", password="correct horse battery")
    response = client.get(url)
    assert _meta(response)["logs"] == {} and b"secret plan" not in response.content
    # an organizer (staff) judges events, not challenges: no log of this challenge either
    _user("olga", staff=True)
    client.login(username="olga", password="correct horse battery")
    assert _meta(client.get(url))["logs"] == {}
    # the owner and a superuser: the bot's log, never the reference bot's
    get_user_model().objects.create_superuser(username="root", password="correct horse battery")
    for who in ("alice", "root"):
        client.login(username=who, password="correct horse battery")
        logs = _meta(client.get(url))["logs"]
        assert "secret plan of seat 0" in logs["0"] and "1" not in logs, who


COUNTING_BOT = b"""calls = 0


def agent(observation, configuration):
    global calls
    calls += 1
    print("decision", calls)
    return observation["legal_actions"][0]
"""


def test_replay_page_carries_each_decisions_time_and_its_log_lines_for_the_owner_only(client, db, eager):
    version = _validated(eager, "alice", "counter", COUNTING_BOT)
    with eager():
        match = match_create(kind="challenge", rules={"players": 2, "rounds": 2}, seats=["first", version], seed=3)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    url = reverse("matches:replay_viewer", args=[match.pk])
    replay = json.loads(client.get(reverse("matches:replay", args=[match.pk])).content)

    meta = _meta(client.get(url))  # anonymous: times yes, logs no
    assert [len(times) for times in meta["decision_ms"]] == [len(g["actions"]) for g in replay["games"]]
    assert all(isinstance(ms, float) and ms >= 0 for times in meta["decision_ms"] for ms in times)
    assert meta["decision_logs"] == {}
    _user("bob")
    client.login(username="bob", password="correct horse battery")
    response = client.get(url)
    assert _meta(response)["decision_logs"] == {} and b"decision 1" not in response.content

    client.login(username="alice", password="correct horse battery")
    entries = _meta(client.get(url))["decision_logs"]["1"]  # the bot sits at index 1
    assert "0" not in _meta(client.get(url))["decision_logs"]  # never a reference bot's
    own = [(g, i) for g, game in enumerate(replay["games"]) for i, r in enumerate(game["actions"]) if game["seats"][r["seat"]] == 1]
    # the k-th decision of the bot (in replay order) printed "decision k", and nothing else did
    assert [(g, i) for g, i, _ in entries] == own
    assert [text for _, _, text in entries] == [f"decision {k}\n" for k in range(1, len(own) + 1)]


def test_viewer_card_table_is_engine_cards():
    from engine import cards
    from engine.cards import card_table

    table = card_table()
    assert table["colors"] == list(cards.COLORS)
    assert list(table["cards"]) == list(cards.CODES)
    assert table["cards"]["Y+2"] == {"color": "Y", "rank": "draw_two", "name": "yellow draw two", "order": cards.kind_of("Y+2")}
    assert table["cards"]["G6"]["name"] == "green 6" and table["cards"]["W+4"]["name"] == "wild draw four"
    assert table["color_names"] == {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}
    assert table["cards"]["R7"]["rank"] == 7 and table["cards"]["GS"]["rank"] == "skip"
    assert table["cards"]["W+4"]["color"] is None and table["cards"]["W"]["rank"] == "wild"


def test_replay_page_of_a_queued_match_says_why_there_is_nothing_to_show(client, db):
    match = match_create(kind="challenge", rules={"players": 2}, seats=["random", "first"], enqueue=False)
    response = client.get(reverse("matches:replay_viewer", args=[match.pk]))
    assert response.status_code == 200
    assert b"waiting for a worker" in response.content
    assert b"replay-meta" not in response.content and b"web/replay.js" not in response.content


def test_replay_page_of_an_unknown_match_is_404(client, db):
    assert client.get(reverse("matches:replay_viewer", args=[987654])).status_code == 404


def test_match_page_links_to_its_replay(client, played):
    response = client.get(reverse("matches:detail", args=[played.pk]))
    assert reverse("matches:replay_viewer", args=[played.pk]).encode() in response.content


def test_every_rule_option_is_in_the_guide_with_its_default_and_allowed_values(client, db):
    html = client.get(reverse("web:guide")).content.decode()
    assert set(guide.RULE_MEANINGS) == set(engine_rules.OPTIONS)
    for row in guide.rule_options():
        assert f'id="rule-{row["name"]}"' in html
        assert row["meaning"], f"rule option {row['name']} has no meaning in the guide"
    rows = {row["name"]: row for row in guide.rule_options()}
    assert rows["wd4"]["default"] == "challenge" and rows["wd4"]["allowed"] == "challenge, enforced, free"
    assert rows["target"]["default"] == "500 (winner) / 200 (penalty)"
    assert rows["players"]["allowed"] == "2..10"
    assert rows["rounds"]["default"] == "none"


def test_every_observation_key_is_explained_and_limits_come_from_sandbox_limits(client, db):
    keys = [row["key"] for row in guide.observation_keys()]
    assert set(keys) == set(guide.OBSERVATION_MEANINGS)
    html = client.get(reverse("web:guide")).content.decode()
    for key in keys:
        assert f"<code>{key}</code>" in html
    limits = {row["name"]: row["value"] for row in guide.limits()}
    assert limits["Time per decision"] == f"{DEFAULT_LIMITS.time_per_decision:g} s"
    assert limits["Time bank"] == f"{DEFAULT_LIMITS.time_bank:g} s"
    assert limits["Time per match"] == f"{DEFAULT_LIMITS.time_per_match:g} s" == "300 s"
    meanings = {row["name"]: row["meaning"] for row in guide.limits()}
    assert "forfeits the match" in meanings["Time per match"] and "out of match time" in meanings["Time per match"]
    assert "timeout (a strike)" in meanings["Time bank"] and "from the time bank" in meanings["Time per decision"]
    assert "may set 1 to 3600 s" in meanings["Time per match"] and "may set 0.1 to 60 s" in meanings["Time per decision"]
    for name in ("Time per decision", "Time bank", "Time per match"):
        assert name in html
    assert "<code>time_per_match</code>" in html and "--time-per-match" in html
    assert guide.configuration_keys() == ["rules", "time_per_decision", "time_bank", "time_per_match"]


def test_starter_bot_download_is_the_file_and_passes_the_upload_checks(client, db):
    response = client.get(reverse("web:starter_bot"))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"] and "starter_bot.py" in response["Content-Disposition"]
    data = b"".join(response.streaming_content)
    assert data == guide.STARTER_BOT.read_bytes()
    package = BotPackage.from_bytes("starter_bot.py", data)
    assert package.sha256


@pytest.mark.parametrize(
    "rules",
    [["players=2", "rounds=2"], ["players=3", "rounds=1", "seven_zero=true", "jump_in=true", "stacking=stack", "wd4=free"]],
)
def test_starter_bot_plays_a_match_without_a_fault(rules):
    rule_set = engine_rules.Rules.parse(rules)
    bots = [BotPackage.from_path(guide.STARTER_BOT), *(["greedy", "random"][: rule_set.players - 1])]
    outcome = runner.play_sandboxed_match(rule_set, bots, seed=3, backend="inprocess")
    assert outcome.result.players[0].faults == ()
    assert outcome.result.players[0].forfeit is None
    assert outcome.result.rounds >= 1


def test_starter_bot_beats_random_more_often_than_not():
    # a starter that loses to random would teach the wrong thing
    rules = engine_rules.Rules.parse(["players=2", "rounds=1"])
    bots = [BotPackage.from_path(guide.STARTER_BOT), "random"]
    wins = sum(runner.play_sandboxed_match(rules, bots, seed=s, backend="inprocess").result.players[0].rank == 1 for s in range(12))
    assert wins >= 7


def test_live_queue_counts_queued_matches(client, db):
    before = client.get(reverse("web:live_queue")).json()
    match_create(kind="ladder", rules={"players": 2}, seats=["random", "first"], enqueue=False)
    after = client.get(reverse("web:live_queue")).json()
    assert after["queued"] == before["queued"] + 1
    ladder = next(k for k in after["kinds"] if k["kind"] == "ladder")
    assert ladder["queued"] >= 1
    assert after["oldest"] is not None and after["oldest_wait_seconds"] >= 0
    assert client.get(reverse("web:live_queue"))["Cache-Control"].startswith("max-age=0")


def test_live_version_status_is_final_once_validated_and_carries_the_rejection(client, db, eager):
    alice = _user("alice")
    bot = bot_services.bot_create(owner=alice, name="crashy")
    pending = bot_services.bot_version_create(
        bot=bot, filename="a.py", data=b"def agent(o, c):\n    return o['legal_actions'][0]\n", validate=False
    )
    status = client.get(reverse("web:live_version", args=[bot.pk, pending.number])).json()
    assert status == {
        "bot": bot.pk, "number": pending.number, "status": "validating", "final": False,
        "rejection_reason": "", "validated_at": None,
    }
    with eager():
        broken = bot_services.bot_version_create(
            bot=bot, filename="b.py", data=b"def agent(o, c):\n    raise RuntimeError('boom')\n"
        )
    status = client.get(reverse("web:live_version", args=[bot.pk, broken.number])).json()
    assert status["status"] == "rejected" and status["final"] is True
    assert "boom" in status["rejection_reason"]
    assert client.get(reverse("web:live_version", args=[bot.pk, 99])).status_code == 404


def test_validating_version_page_polls_its_status(client, db):
    alice = _user("alice")
    bot = bot_services.bot_create(owner=alice, name="slow")
    version = bot_services.bot_version_create(
        bot=bot, filename="a.py", data=b"def agent(o, c):\n    return o['legal_actions'][0]\n", validate=False
    )
    html = client.get(version.get_absolute_url()).content.decode()
    assert f'data-live-url="{reverse("web:live_version", args=[bot.pk, version.number])}"' in html
    assert "core/live.js" in html


def test_home_page_lists_sections_and_the_guide(client, db):
    html = client.get("/").content.decode()
    assert reverse("web:guide") in html and reverse("web:starter_bot") in html
    assert "Recent matches" in html
    from django.apps import apps

    if apps.is_installed("ladders"):
        assert "No ladder is running yet" in html
    if apps.is_installed("tournaments_app"):
        assert "No tournament is running" in html


def test_every_arena_play_command_in_the_guide_runs(client, db, tmp_path, capsys):
    from arena_cli.main import main

    html = client.get(reverse("web:guide")).content.decode()
    commands = re.findall(r"arena play [^<\n]*", html)
    assert len(commands) >= 3
    for command in commands:
        argv = command.split()[1:]
        argv = [str(guide.STARTER_BOT) if a == "starter_bot.py" else str(tmp_path / a) if a.endswith(".json") else a
                for a in argv]
        assert main(argv) == 0, f"{command!r} failed: {capsys.readouterr().err}"
    assert (tmp_path / "match.json").exists()


def test_live_match_status_and_pages_that_wait_for_it(client, db):
    match = match_create(kind="challenge", rules={"players": 2}, seats=["random", "first"], enqueue=False)
    url = reverse("web:live_match", args=[match.pk])
    assert client.get(url).json() == {"match": match.pk, "status": "queued", "final": False, "started": False, "has_replay": False}
    for page in (reverse("matches:replay_viewer", args=[match.pk]), reverse("matches:detail", args=[match.pk])):
        assert f'data-live-url="{url}"'.encode() in client.get(page).content
    Match.objects.filter(pk=match.pk).update(status=Match.Status.FAILED)
    assert client.get(url).json()["final"] is True
    assert f'data-live-url="{url}"'.encode() not in client.get(reverse("matches:detail", args=[match.pk])).content
    assert client.get(reverse("web:live_match", args=[987654])).status_code == 404


def test_home_page_lists_active_ladders_with_leaders_and_open_tournaments(client, db, eager):
    from ladders.models import Ladder
    from ladders.services import ladder_enter
    from tournaments_app.services import tournament_create, tournament_open_registration

    heads_up = Ladder.objects.create(name="Heads-up classic", slug="heads-up", rules={"players": 2}, seats=2)
    bot = bot_services.bot_create(owner=_user("carol"), name="frontrunner")
    with eager():
        bot_services.bot_version_create(bot=bot, filename="f.py", data=PRINTING_BOT)
    ladder_enter(heads_up, bot)
    Ladder.objects.create(name="Closed ladder", slug="closed", rules={"players": 2}, seats=2, active=False)
    cup = tournament_create(name="Winter Cup", rules=["players=2", "rounds=1"], format="round_robin")
    tournament_open_registration(cup)
    tournament_create(name="Draft Cup", rules=["players=2", "rounds=1"], format="round_robin")
    html = client.get("/").content.decode()
    assert "Heads-up classic" in html and "/ladders/heads-up/" in html
    leaders = html[html.index('<ol class="leaders">'):]
    assert leaders.index("frontrunner") < leaders.index("</ol>")
    assert "Closed ladder" not in html
    assert "Winter Cup" in html and "Draft Cup" not in html
