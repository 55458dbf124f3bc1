"""The viewer's JavaScript replay state (web/static/web/replay-state.js) against engine.replay.state_at.

Runs the ES module under node on replays of varied rule sets and compares the
state after every event with the engine's own reading of the replay.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from testsupport import service_missing

from engine import bots
from engine.cards import card_table
from engine.match import AgentSeat, play_match
from engine.replay import action_points, state_at
from engine.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
STATE_JS = ROOT / "platform" / "web" / "static" / "web" / "replay-state.js"
DUMP_JS = Path(__file__).with_name("node_state_dump.mjs")


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        service_missing("node (apt-get install nodejs)")
    return node


def _illegal_every_fifth():
    calls = {"n": 0}

    def agent(observation, configuration):
        calls["n"] += 1
        if calls["n"] % 5 == 0:
            return {"type": "play", "card": "R99"}
        return observation["legal_actions"][-1]

    return agent


def _replay(rules: list[str], names: list[str], seed: int, deals: int = 1, duplicate: bool = False) -> dict:
    seats = [
        AgentSeat(_illegal_every_fifth(), "faulty") if n == "faulty" else AgentSeat(bots.get(n), n) for n in names
    ]
    parsed = Rules.parse([f"players={len(names)}", *rules])
    return play_match(parsed, seats, seed=seed, deals=deals, duplicate=duplicate).replay


CASES = {
    "official-4": (["rounds=2"], ["random", "first", "greedy", "expert"], 3),
    "two-player-reverse": (["rounds=2"], ["greedy", "random"], 11),
    "seven-zero-jump-in": (["rounds=2", "seven_zero=true", "jump_in=true"], ["random", "expert", "greedy"], 5),
    "stacking": (["rounds=2", "stacking=stack", "wd4=free", "draw=until_playable"], ["random", "greedy", "expert"], 8),
    "reshuffles-10-seats": (["rounds=1", "hand_size=10"], ["random"] * 10, 2),
    "faults-and-forfeit": (["rounds=2"], ["faulty", "greedy", "random"], 4),
    "turn-limit-with-stacks": (["rounds=4", "max_turns=12", "stacking=stack", "wd4=free"], ["random"] * 3, 6),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_js_state_equals_engine_state_after_every_event(case, tmp_path):
    node = _node()
    rules, names, seed = CASES[case]
    replay = _replay(rules, names, seed, deals=2, duplicate=False)
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    out = subprocess.run(
        [node, str(DUMP_JS), str(STATE_JS), str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    checked = 0
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if "state" not in row:
            continue
        expected = state_at(replay, row["g"], row["e"])
        assert row["state"] == expected, f"{case}: game {row['g']} event {row['e']}"
        checked += 1
    assert checked == sum(len(g["events"]) + 1 for g in replay["games"])


def test_case_set_exercises_every_state_changing_event():
    kinds = set()
    for rules, names, seed in CASES.values():
        for game in _replay(rules, names, seed, deals=2)["games"]:
            kinds.update(event["e"] for event in game["events"])
    needed = {"round_start", "turn", "play", "draw", "reshuffle", "direction", "pending", "color",
              "pass_hands", "swap", "round_end", "game_end", "fault", "forfeit"}
    assert needed <= kinds, f"not exercised: {sorted(needed - kinds)}"


def test_steps_stop_where_a_bot_decides_and_before_each_deal(tmp_path):
    node = _node()
    replay = _replay(["rounds=2"], ["greedy", "random"], 11)
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    out = subprocess.run([node, str(DUMP_JS), str(STATE_JS), str(path)], capture_output=True, text=True, check=True)
    summary = [json.loads(line) for line in out.stdout.splitlines() if '"stops"' in line][0]
    events = replay["games"][0]["events"]
    starts = [i for i, ev in enumerate(events) if ev["e"] == "round_start"]
    assert [r["start"] for r in summary["rounds"]] == starts
    assert [r["round"] for r in summary["rounds"]] == [1, 2]
    stops = summary["stops"]
    asked = set(action_points(replay["games"][0]["actions"]))
    deals = {i for i in starts if i > 0}
    assert stops == sorted(asked | deals | {0, len(events)})


def test_a_forfeit_is_known_from_its_event_on_and_in_later_games_from_the_start(tmp_path):
    node = _node()
    rules, names, seed = CASES["faults-and-forfeit"]
    replay = _replay(rules, names, seed, deals=2)
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    out = subprocess.run([node, str(DUMP_JS), str(STATE_JS), str(path)], capture_output=True, text=True, check=True)
    summaries = [json.loads(line) for line in out.stdout.splitlines() if '"stops"' in line]
    first = replay["games"][0]["events"]
    forfeit_index = next(i for i, ev in enumerate(first) if ev["e"] == "forfeit")
    assert summaries[0]["forfeits"] == {str(first[forfeit_index]["seat"]): forfeit_index + 1}
    assert replay["games"][1]["forfeited"], "the faulty bot forfeits the whole match"
    assert summaries[1]["forfeits"] == {str(s): 0 for s in replay["games"][1]["forfeited"]}


def _describe(events: list[dict], visible: list[int] | None) -> str:
    script = (
        f"const m = await import({json.dumps(STATE_JS.as_uri())});"
        f"const events = {json.dumps(events)}; const visible = {json.dumps(visible)};"
        "const name = (s) => `seat ${s} (bot${s})`;"
        "const canSee = (s) => visible === null || visible.includes(s);"
        f"const table = {json.dumps(card_table())};"
        "process.stdout.write(m.describeStep(events, name, canSee, table));"
    )
    out = subprocess.run([_node(), "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return out.stdout


def test_a_step_is_told_in_words_and_a_seat_view_hides_other_seats_draws():
    step = [
        {"e": "turn", "seat": 2},
        {"e": "play", "seat": 2, "card": "R+2", "color": "R"},
        {"e": "draw", "seat": 3, "cards": ["Y+2", "YS"], "reason": "penalty"},
        {"e": "skip", "seat": 3},
    ]
    assert _describe(step, None) == (
        "Seat 2 (bot2) plays red draw two; seat 3 (bot3) draws 2: yellow draw two, yellow skip; seat 3 (bot3) is skipped"
    )
    assert _describe(step, [2]) == "Seat 2 (bot2) plays red draw two; seat 3 (bot3) draws 2; seat 3 (bot3) is skipped"
    wild = [{"e": "play", "seat": 0, "card": "W+4", "color": "B", "uno": True}]
    assert _describe(wild, None) == "Seat 0 (bot0) plays wild draw four and names blue and says UNO"
