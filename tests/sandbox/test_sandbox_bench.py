"""sandbox.bench: figures per backend beside the echo, and what it says when a backend is missing."""

from __future__ import annotations

import json

import docker

from sandbox import bench, docker_backend


def test_process_backend_figures_sit_beside_the_echo(bwrap_path, capsys):
    figures = bench.run(decisions=50, starts=2, backends=("process",))
    process = figures["backends"]["process"]
    assert figures["echo"]["decision_us"] > 0
    assert process["decision_us"] > 0 and process["start_stop_s"] >= process["start_s"] > 0
    assert process["x_echo"] == process["decision_us"] / figures["echo"]["decision_us"]
    assert set(figures["targets"]) == {"process_start_stop_within_0.5s"}
    bench.print_table(figures)
    table = capsys.readouterr().out
    assert "unix echo" in table and "process" in table


def test_missing_docker_is_reported_not_raised(monkeypatch, capsys):
    dead = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41", timeout=2)
    monkeypatch.setattr(docker_backend, "_client", dead)
    assert bench.main(["--decisions", "20", "--starts", "1", "--backend", "docker", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert "Docker could not start the sandbox" in figures["backends"]["docker"]["error"]
    assert figures["targets"] == {}
