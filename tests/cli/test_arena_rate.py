"""``arena rate``: each input kind, the table and the JSON document, one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from arena_cli.main import main


def rate(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["rate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def rate_json(capsys, *argv: str) -> dict:
    code, out, err = rate(capsys, *argv, "--json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def write_lines(path, docs) -> str:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return str(path)


def test_rankings_lines_give_the_documented_document_best_first(tmp_path, capsys):
    lines = [{"ranks": {"alice": 1, "bob": 2}}] * 6 + [{"ranks": {"bob": 1, "alice": 2}}] * 2
    lines += [{"ranks": {"carol": 1, "alice": 2, "bob": 2}}] * 3  # a 3-seat ranking with a tie
    doc = rate_json(capsys, write_lines(tmp_path / "r.jsonl", lines))
    assert list(doc) == ["bots"]
    names = [b["name"] for b in doc["bots"]]
    assert names == ["carol", "alice", "bob"]
    ratings = [b["rating"] for b in doc["bots"]]
    assert ratings == sorted(ratings, reverse=True)
    for bot in doc["bots"]:
        assert set(bot) == {"name", "rating", "low", "high", "games", "score"}
        assert bot["low"] < bot["rating"] < bot["high"]
    assert {b["name"]: b["games"] for b in doc["bots"]} == {"alice": 11, "bob": 11, "carol": 3}
    assert sum(b["rating"] for b in doc["bots"]) / 3 == pytest.approx(1500, abs=0.2)


def test_table_shows_ratings_intervals_and_the_superiority_matrix(tmp_path, capsys):
    lines = [{"ranks": {"alice": 1, "bob": 2}}] * 5 + [{"ranks": {"bob": 1, "alice": 2}}]
    code, out, err = rate(capsys, write_lines(tmp_path / "r.jsonl", lines))
    assert (code, err) == (0, "")
    text = out.splitlines()
    assert text[0].startswith("6 results, 2 bots")
    assert text[1].split() == ["#", "bot", "rating", "95%", "interval", "games", "score"]
    first = text[2].split()
    assert first[:2] == ["1", "alice"] and first[4] == ".." and first[6:] == ["6", "83.3%"]
    assert "likelihood of superiority" in out
    matrix = [line.split() for line in text[text.index("") + 3 :]]
    assert matrix[0][:3] == ["1", "alice", "-"] and int(matrix[0][3]) > 80
    assert int(matrix[1][2]) == 100 - int(matrix[0][3])


def test_arena_play_outputs_and_replays_are_read(tmp_path, capsys):
    outputs = []
    for seed in (1, 2, 3):
        replay = tmp_path / f"m{seed}.json"
        assert main(["play", "expert", "random", "--deals", "2", "--seed", str(seed), "--json", "--replay", str(replay)]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    played = write_lines(tmp_path / "played.jsonl", outputs)
    from_play = rate_json(capsys, played)
    from_replays = rate_json(capsys, *(str(tmp_path / f"m{s}.json") for s in (1, 2, 3)))
    assert from_play == from_replays  # one result per match either way
    assert [b["name"] for b in from_play["bots"]] == ["expert", "random"]
    assert [b["games"] for b in from_play["bots"]] == [3, 3]
    # a pretty-printed `arena play --json` document on several lines is one result
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(outputs[0], indent=2), encoding="utf-8")
    mixed = rate_json(capsys, played, str(pretty), str(tmp_path / "m1.json"))
    assert [b["games"] for b in mixed["bots"]] == [5, 5]


def test_a_forfeit_counts_as_last_place(tmp_path, capsys):
    # carol "ranked 1" but forfeited: she is last in every result
    lines = [{"ranks": {"carol": 1, "alice": 2, "bob": 3}, "forfeits": ["carol"]}] * 4
    doc = rate_json(capsys, write_lines(tmp_path / "f.jsonl", lines))
    assert [b["name"] for b in doc["bots"]] == ["alice", "bob", "carol"]
    play = {"games": 1, "rounds": 3, "players": [
        {"bot": "x", "score": 0, "rank": 1, "wins": 0, "forfeit": "crash"},
        {"bot": "y", "score": 0, "rank": 2, "wins": 0, "forfeit": None}]}
    doc = rate_json(capsys, write_lines(tmp_path / "p.jsonl", [play] * 3))
    assert [b["name"] for b in doc["bots"]] == ["y", "x"]


def test_anchor_rates_the_named_bot_1500(tmp_path, capsys):
    lines = [{"ranks": {"alice": 1, "bob": 2}}] * 3 + [{"ranks": {"bob": 1, "alice": 2}}]
    path = write_lines(tmp_path / "r.jsonl", lines)
    doc = rate_json(capsys, path, "--anchor", "bob")
    by_name = {b["name"]: b for b in doc["bots"]}
    assert by_name["bob"]["rating"] == 1500
    assert by_name["alice"]["rating"] == pytest.approx(1500 + 170.1, abs=0.2)  # 2 x 85.04, the hand-checked fit


BAD = [
    ("not json\n", "x.jsonl:1: not JSON"),
    ('{"ranks": {"a": 1, "b": 2}}\n\n{"ranks": {"a": 1}}\n', "x.jsonl:3: a result needs 2 to 10 bots, got 1"),
    ('{"ranks": {"a": 1, "b": 0}}\n', "x.jsonl:1: rank of 'b' must be a positive integer, got 0"),
    ('{"ranks": {"a": 1, "b": true}}\n', "x.jsonl:1: rank of 'b' must be a positive integer, got true"),
    ('{"ranks": {"a": 1, "b": 2}, "forfeits": ["c"]}\n', "x.jsonl:1: forfeit of 'c', who is not in the result"),
    ('{"ranks": [1, 2]}\n', 'x.jsonl:1: "ranks" must be an object'),
    ('[1, 2]\n', "x.jsonl:1: expected a JSON object"),
    ('{"hello": 1}\n', "x.jsonl:1: not a result"),
    ('{"players": [{"bot": "a", "rank": 1}, {"bot": "a", "rank": 2}]}\n', "x.jsonl:1: bot 'a' appears twice"),
    ('{"version": 9, "result": {}}\n', "x.jsonl:1: replay version 9"),
    ('{"version": 2, "names": ["a", "b"], "result": {"ranks": [1]}}\n', "x.jsonl:1: a replay's \"result\" needs one rank"),
    ("", "no results in"),
    ("\n\n", "no results in"),
    ('{"ranks": {' + ", ".join(f'"p{i}": 1' for i in range(11)) + "}}\n", "2 to 10 bots, got 11"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_input_is_one_line_naming_file_and_line_exit_2(tmp_path, capsys, text, message):
    path = tmp_path / "x.jsonl"
    path.write_text(text, encoding="utf-8")
    code, out, err = rate(capsys, str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("arena: error: ")
    assert message in err


def test_missing_and_binary_files_and_an_unknown_anchor(tmp_path, capsys):
    code, _, err = rate(capsys, str(tmp_path / "nope.jsonl"))
    assert code == 2 and "nope.jsonl: cannot read" in err and err.count("\n") == 1
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = rate(capsys, str(binary))
    assert code == 2 and "b.jsonl: not UTF-8 text" in err
    good = write_lines(tmp_path / "g.jsonl", [{"ranks": {"a": 1, "b": 2}}])
    code, _, err = rate(capsys, good, "--anchor", "zed")
    assert code == 2 and "--anchor 'zed': no such bot" in err
    code, _, err = rate(capsys)
    assert code == 2 and err.count("\n") == 1
