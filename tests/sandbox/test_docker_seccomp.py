"""The Docker seats' seccomp profile (sandbox.seccomp) and the optional gVisor runtime (runsc).

The profile checks start their containers themselves through the Docker SDK,
locked down like a seat (no network, no capabilities, user 10001); each is
removed when it exits (``remove=True``).
"""

from __future__ import annotations

import json
import os
import statistics
import time

import pytest

from engine.rules import Rules
from sandbox import docker_backend, seccomp
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match
from tests.hostile.test_hostile_syscalls import ATTEMPTS, PROBE, probe_source, syscall_results

pytestmark = [pytest.mark.services, pytest.mark.docker]


def run_probe(client, *, security_opt=None, runtime=None) -> dict:
    script = f"ATTEMPTS = {ATTEMPTS!r}\n" + PROBE
    output = client.containers.run(
        docker_backend.IMAGE, ["python3", "-I", "-S", "-c", script], remove=True, network_mode="none",
        cap_drop=["ALL"], user=docker_backend.BOT_USER, security_opt=security_opt, runtime=runtime,
        labels={docker_backend.LABEL_MATCH: "seccomp-test", docker_backend.LABEL_STARTED: str(int(time.time()))},
    )
    return syscall_results(output.decode())


def test_the_profile_file_is_the_generated_profile():
    assert json.loads(seccomp.DOCKER_PROFILE_PATH.read_text()) == seccomp.docker_profile()
    profile = seccomp.docker_profile()
    allowed = profile["syscalls"][0]["names"]
    for name in ("io_uring_setup", "unshare", "keyctl", "add_key", "ptrace", "mount", "bpf", "setns"):
        assert name not in allowed
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    # each host architecture alone, without its 32-bit or x32 ABI (test_foreign_abi.py: what a call through one does)
    assert [(a["architecture"], a["subArchitectures"]) for a in profile["archMap"]] == [
        ("SCMP_ARCH_X86_64", []), ("SCMP_ARCH_AARCH64", [])]
    assert "architectures" not in profile


def test_the_project_profile_denies_what_the_default_allows(docker_client):
    default = run_probe(docker_client, security_opt=["no-new-privileges"])
    project = run_probe(docker_client, security_opt=seccomp.docker_security_options())
    wrong = {name: r for name, r in project.items() if r[0] != -1 or r[1] not in (1, 38)}
    assert wrong == {}, f"calls the project profile let through: {wrong}"
    assert project["io_uring_setup"] == [-1, 38]
    assert project["unshare(CLONE_NEWUSER)"][0] == -1
    # What Docker's default profile lets through on this engine (20.10: io_uring_setup and netlink
    # sockets work inside a seat); the project's profile stops all of it.
    leaked = sorted(name for name, r in default.items() if r[0] != -1)
    print("Docker's default profile allows:", leaked)
    assert set(leaked) <= set(ATTEMPTS)


def runsc_registered(client) -> bool:
    return seccomp.RUNSC in (client.info().get("Runtimes") or {})


def test_a_hostile_match_plays_in_gvisor(docker_client, monkeypatch):
    if not runsc_registered(docker_client):
        pytest.skip("gVisor (runsc) is not registered with this Docker engine: apt-get install runsc, then "
                    '/etc/docker/daemon.json "runtimes": {"runsc": {"path": "/usr/bin/runsc", '
                    '"runtimeArgs": ["--network=none", "--host-uds=open"]}} and SIGHUP dockerd (.ci/run does)')
    monkeypatch.setenv("SANDBOX_DOCKER_RUNTIME", seccomp.RUNSC)
    seen = []
    real_create = docker_client.api.create_container

    def create(*args, **kwargs):
        seen.append(kwargs["host_config"].get("Runtime"))
        return real_create(*args, **kwargs)

    monkeypatch.setattr(docker_client.api, "create_container", create)
    rules = Rules.parse(["players=2", "rounds=1", "hand_size=3"])
    source = "import os\nprint('KERNEL:', os.uname().release)\n" + probe_source()
    probe = BotPackage.from_bytes("probe.py", source.encode())
    plain = BotPackage.from_bytes("plain.py", b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n")
    limits = Limits(time_per_decision=2.0, time_bank=5.0, start_seconds=30.0)
    outcome = play_sandboxed_match(rules, [probe, plain], seed=3, backend="docker", limits=limits, docker_client=docker_client,
                         match_id="runsc-test")
    assert seen == [seccomp.RUNSC, seccomp.RUNSC]  # the runtime came from SANDBOX_DOCKER_RUNTIME
    hostile, opponent = outcome.result.players
    assert opponent.forfeit is None and opponent.faults == ()
    # The bot's system calls went to gVisor's kernel (it reports its own release), not the host's:
    # what "works" there (its own user namespaces, ptrace of its own processes, io_uring) is gVisor's.
    kernel = next(line for line in outcome.logs[0].splitlines() if line.startswith("KERNEL:")).split()[1]
    assert kernel != os.uname().release
    results = syscall_results(outcome.logs[0])
    assert set(results) == set(ATTEMPTS)
    print("in gVisor:", {name: r for name, r in results.items() if r[0] != -1}, "hostile seat:", hostile.forfeit)
    assert docker_backend.match_containers("runsc-test") == []


def test_the_seat_start_cost_of_runsc_beside_runc(docker_client):
    if not runsc_registered(docker_client):
        pytest.skip("gVisor (runsc) is not registered with this Docker engine (see the test above)")
    times: dict[str | None, list[float]] = {None: [], seccomp.RUNSC: []}
    for _ in range(3):
        for runtime in times:  # interleaved, so load changes hit both alike
            started = time.monotonic()
            run_probe(docker_client, security_opt=seccomp.docker_security_options(), runtime=runtime)
            times[runtime].append(time.monotonic() - started)
    runc, runsc = statistics.median(times[None]), statistics.median(times[seccomp.RUNSC])
    print(f"container start+probe+removal: runc {runc:.2f} s, runsc {runsc:.2f} s (medians of 3)")
    assert runsc > 0 and runc > 0
