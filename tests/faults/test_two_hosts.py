"""Two worker hosts that share nothing but PostgreSQL and Redis (issue 18 point 6).

Each worker runs as a host of its own would: its own host name (a UTS namespace: ``unshare
--uts`` and ``hostname``), its own Docker engine (worker B: a second ``dockerd`` the test starts
on its own socket, data root, exec root and network namespace, with the sandbox image loaded
into it by ``docker save``/``load``), its own seats' folder, and worker B its own clock, two hours behind
(``faketime``; the monotonic clock, a duration, is left alone). Both take the test's matches
from the test's Redis and record them in the test database.

Checked: every match ends once (attempts 1: no lease of B's looked expired to A, as it would
if leases were stamped on B's clock), both workers played; every container on engine B is
host B's and none of host B's is on engine A; each engine's seats mount only its own host's
seats' folder; B's leases and heartbeat are on the database's clock; after both stop nothing
is left on either engine or in either folder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings
from faultsupport import (
    BackgroundWatch,
    all_finished,
    assert_each_played_once,
    heartbeat_of,
    ladder_with_matches,
    seats_folder,
)
from testsupport import service_missing, wait_for

from matches.models import Match
from matches.services import database_now

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

SKEW = dt.timedelta(hours=2)  # host B's clock is this far behind
MATCHES = 4
HOST_LABEL = "uno-arena.host"


def host_wrapper(host: str, *clock: str) -> list[str]:
    """Run a command as on host ``host`` (its own UTS namespace), under ``clock`` if given."""
    if shutil.which("unshare") is None:
        service_missing("unshare (util-linux)")
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *clock]


@contextlib.contextmanager
def second_docker_engine(docker_client):
    """A dockerd of the test's own (socket, data root, exec root, network namespace, its own
    containerd) holding the sandbox image; yields (DOCKER_HOST, client). Stopped and its folders
    removed after."""
    import docker

    binary = shutil.which("dockerd")
    if binary is None or shutil.which("unshare") is None:
        service_missing("dockerd and unshare (apt-get install docker.io util-linux)")
    root = Path(tempfile.mkdtemp(prefix="ua-dk-", dir="/tmp"))
    url = f"unix://{root}/docker.sock"
    log = open(root / "dockerd.log", "wb")
    # Its own network namespace: a dockerd with --bridge none deletes the docker0 interface it
    # finds, which here would be the host's engine's (its bridge containers then fail to start).
    proc = subprocess.Popen(
        ["unshare", "--net", binary, "--host", url, "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
         "--pidfile", str(root / "dockerd.pid"), "--bridge", "none", "--iptables=false"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    log.close()
    client = None
    try:
        deadline = time.monotonic() + 30
        while client is None:
            try:
                client = docker.DockerClient(base_url=url, timeout=60)  # asks the engine its version
            except docker.errors.DockerException:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the second dockerd did not start:\n{(root / 'dockerd.log').read_text()[-3000:]}")
                time.sleep(0.2)
        image = docker_client.images.get(settings.SANDBOX_IMAGE)
        client.images.load(image.save(named=True))
        assert client.images.get(settings.SANDBOX_IMAGE).id == image.id
        yield url, client
    finally:
        if client is not None:
            client.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            mount_point = line.split()[1]
            if mount_point.startswith(str(root)):
                subprocess.run(["umount", "-l", mount_point], check=False)
        shutil.rmtree(root, ignore_errors=True)


class ContainerWatch(BackgroundWatch):
    """Every 0.2 s, the sandbox containers of hosts ``hosts`` on each engine: their labels and
    the folders they mount (read from each engine by a client of the watch's own)."""

    def __init__(self, engines: dict[str, str], hosts: list[str]):
        self.engines = engines
        self.hosts = hosts
        self.seen: dict[str, dict[str, dict]] = {name: {} for name in engines}
        super().__init__()

    def _run(self):
        import docker

        clients = {name: docker.APIClient(base_url=url, timeout=30) for name, url in self.engines.items()}
        try:
            while not self._stop.wait(0.2):
                for name, api in clients.items():
                    for host in self.hosts:
                        for row in api.containers(all=True, filters={"label": f"{HOST_LABEL}={host}"}):
                            self.seen[name].setdefault(row["Id"], {
                                "labels": row["Labels"], "mounts": [m.get("Source", "") for m in row.get("Mounts", [])],
                            })
        finally:
            for api in clients.values():
                api.close()


def created(client, since: float, host: str | None = None) -> list[dict]:
    """The sandbox containers created on an engine since ``since`` (its events), of ``host`` if given."""
    filters = {"type": "container", "event": "create", "label": [f"{HOST_LABEL}={host}" if host else HOST_LABEL]}
    return [
        event["Actor"]["Attributes"]
        for event in client.events(since=int(since) - 1, until=int(time.time()) + 1, filters=filters, decode=True)
    ]


def log_clock_offset(log: str) -> dt.timedelta:
    """How far behind the real time the last timestamp of a celery log is."""
    stamps = re.findall(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+:", log, flags=re.MULTILINE)
    assert stamps, log[-2000:]
    last = dt.datetime.strptime(stamps[-1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC)
    return dt.datetime.now(dt.UTC) - last


def test_two_worker_hosts_share_only_postgresql_and_redis_and_a_skewed_clock_keeps_its_leases(workers, docker_client):
    if shutil.which("faketime") is None:
        service_missing("faketime (apt-get install faketime)")
    engine_a = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"  # the tests' engine
    began = time.time()
    with second_docker_engine(docker_client) as (engine_b, client_b), seats_folder() as seats_a, seats_folder() as seats_b:
        engine_ready = time.time()
        common = {"MATCH_SWEEP_SECONDS": 1}
        a = workers.start("a", wrapper=host_wrapper("host-a"), DOCKER_HOST=engine_a, SANDBOX_WORK_DIR=seats_a, **common)
        b = workers.start(
            "b", wrapper=host_wrapper("host-b", "faketime", "-f", f"-{int(SKEW.total_seconds())}"),
            DOCKER_HOST=engine_b, SANDBOX_WORK_DIR=seats_b, FAKETIME_DONT_FAKE_MONOTONIC=1, **common,
        )
        # B's clock really is two hours behind, A's is not
        assert abs(log_clock_offset(b.log) - SKEW) < dt.timedelta(minutes=5), b.log[-1000:]
        assert abs(log_clock_offset(a.log)) < dt.timedelta(minutes=5)
        workers_ready = time.time()
        db_before = database_now()
        leases_of_b: list[float] = []
        with ContainerWatch({"a": engine_a, "b": engine_b}, ["host-a", "host-b"]) as watch:
            item, matches = ladder_with_matches("hosts", MATCHES, delay=0.01)
            ids = [m.pk for m in matches]

            def finished():
                # while they play: B's leases run MATCH_LEASE_SECONDS from the database's now
                now = database_now()
                for lease in Match.objects.filter(pk__in=ids, status="running", worker__startswith="b-").values_list(
                    "lease_expires_at", flat=True
                ):
                    if lease is not None:
                        leases_of_b.append((lease - now).total_seconds())
                return all_finished(matches)

            wait_for("every match", finished, 150, b)
            played_at = time.time()
            db_after = database_now()
            # each sees the other alive on the database's clock
            from matches.worker import other_healthy_workers

            beat_a, beat_b = heartbeat_of("a"), heartbeat_of("b")
            assert beat_a and beat_b
            assert abs((beat_b.last_seen - database_now()).total_seconds()) < 30
            assert other_healthy_workers(beat_a.hostname) and other_healthy_workers(beat_b.hostname)
            workers.stop_all()
        stopped = time.time()

        assert_each_played_once(item, matches)
        rows = list(Match.objects.filter(pk__in=ids))
        assert [r.attempts for r in rows] == [1] * MATCHES, {r.pk: (r.attempts, r.worker) for r in rows}
        played = {name: [r for r in rows if r.worker.startswith(f"{name}-")] for name in ("a", "b")}
        assert played["a"] and played["b"], {r.pk: r.worker for r in rows}
        assert {r.worker.split("@")[1] for r in played["a"]} == {"host-a"}
        assert {r.worker.split("@")[1] for r in played["b"]} == {"host-b"}
        assert all(r.timings.get("backend") == "docker" for r in rows)
        # B stamped its attempts and leases on the database's clock, not on its own
        for row in played["b"]:
            assert db_before <= row.started_at <= db_after, (row.started_at, db_before, db_after)
            assert row.started_at <= row.finished_at <= db_after, (row.started_at, row.finished_at, db_after)
        assert leases_of_b and all(0 < left <= settings.MATCH_LEASE_SECONDS + 1 for left in leases_of_b), leases_of_b

        # each worker's seats ran on its own engine only, from its own seats' folder
        on_b = created(client_b, began)
        assert {c.get(HOST_LABEL) for c in on_b} == {"host-b"}, on_b
        assert created(docker_client, began, "host-b") == []
        on_a = created(docker_client, began, "host-a")
        for name, count in (("a", len(on_a)), ("b", len(on_b))):
            assert count >= 2 * len(played[name]), f"{count} seat containers on engine {name} for {len(played[name])} matches"
        assert not any(c["labels"].get(HOST_LABEL) == "host-a" for c in watch.seen["b"].values())
        for engine, folder in (("a", seats_a), ("b", seats_b)):
            mounts = {m for c in watch.seen[engine].values() for m in c["mounts"]}
            assert mounts and all(m.startswith(f"{folder}/") for m in mounts), (engine, mounts)

        # after both stopped: nothing of theirs on either engine, both folders empty
        assert client_b.containers.list(all=True) == []
        assert docker_client.containers.list(all=True, filters={"label": f"{HOST_LABEL}=host-a"}) == []
        assert docker_client.containers.list(all=True, filters={"label": f"{HOST_LABEL}=host-b"}) == []
        assert [p.name for p in Path(seats_a).iterdir()] == [] and [p.name for p in Path(seats_b).iterdir()] == []
    print(f"\ntwo hosts: {len(played['a'])} + {len(played['b'])} matches, {len(on_a)} + {len(on_b)} seat containers, "
          f"second engine ready {engine_ready - began:.1f} s, workers {workers_ready - engine_ready:.1f} s, "
          f"matches {played_at - workers_ready:.1f} s, stop {stopped - played_at:.1f} s")
