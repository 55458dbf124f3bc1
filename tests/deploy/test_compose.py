"""deploy/compose.yaml for one central host and N worker hosts, read as compose reads it
(tests/deploy/composefile.py: the files merged, variables interpolated, profiles applied).

No compose binary is needed (Debian's docker.io has no compose plugin): these check the file's
structure; tests/deploy/test_platform_image.py runs its commands in the platform image and
tests/faults/test_two_hosts.py runs two workers with separate configurations as two hosts would.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from composefile import DEPLOY, MissingVariable, active_services, interpolate, load, raw, variables

#: what a worker host's deploy/.env must set (env.example, "every host")
WORKER_HOST_ENV = {
    "SECRET_KEY": "secret-of-the-test",
    "ALLOWED_HOSTS": "arena.example.org",
    "DATABASE_URL": "postgresql://arena:pw-db@10.0.0.1:5432/arena",
    "REDIS_URL": "redis://:pw-redis@10.0.0.1:6379/0",
    "HOST_NAME": "worker-2",
}
CENTRAL_ENV = {
    **WORKER_HOST_ENV,
    "HOST_NAME": "central",
    "DATABASE_URL": "postgresql://arena:pw-db@db:5432/arena",
    "REDIS_URL": "redis://:pw-redis@redis:6379/0",
    "POSTGRES_PASSWORD": "pw-db",
    "REDIS_PASSWORD": "pw-redis",
}
PLATFORM_SERVICES = {"migrate", "web", "worker", "beat"}
#: settings fixed in the file: none is an address or a secret
CONSTANTS = {"DEBUG": "0", "SECURE_PROXY_SSL_HEADER": "1", "SANDBOX_BACKEND": "docker",
             "POSTGRES_USER": "arena", "POSTGRES_DB": "arena"}


def strings(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def test_every_address_and_secret_comes_from_the_environment():
    model = load(CENTRAL_ENV)
    for name in PLATFORM_SERVICES:
        env = model["services"][name]["environment"]
        for key in ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"):
            assert env[key] == CENTRAL_ENV[key], (name, key)
    assert model["services"]["db"]["environment"]["POSTGRES_PASSWORD"] == "pw-db"
    assert model["services"]["redis"]["environment"]["REDIS_PASSWORD"] == "pw-redis"
    # every value fixed in the files is one of the known constants: no URL, host or password
    for name, service in raw()["services"].items():
        environment = service.get("environment", {})
        for key, value in environment.items():
            if key == "<<" or variables(value):
                continue
            assert CONSTANTS.get(key) == value, f"{name}: {key}={value!r} is fixed in compose.yaml"
    for key, value in raw()["x-platform"]["environment"].items():
        assert variables(value) or CONSTANTS.get(key) == value, f"x-platform: {key}={value!r}"
    # no address written into the files themselves: every URL or host:port comes from a variable
    for name in ("compose.yaml", "compose.publish.yaml"):
        text = re.sub(r"#.*", "", (DEPLOY / name).read_text())
        text = re.sub(r"\$\{[^}]*\}", "VAR", text)
        assert "://" not in text and not re.search(r"\b\d{1,3}(\.\d{1,3}){3}\b", text), name


def test_secrets_and_addresses_a_host_needs_are_refused_when_missing():
    for key in WORKER_HOST_ENV:
        with pytest.raises(MissingVariable, match=key):
            load({k: v for k, v in WORKER_HOST_ENV.items() if k != key})


def test_a_worker_host_needs_only_its_own_settings_and_starts_only_workers():
    # compose interpolates every service before it applies profiles: nothing of the central
    # services may be required of a worker host
    model = load(WORKER_HOST_ENV)
    assert active_services(model, {"worker"}) == {"worker"}
    assert active_services(model, {"central"}) == set(model["services"])
    # every service belongs to a profile: a worker host never starts PostgreSQL, Redis or the site
    assert all(service.get("profiles") for service in model["services"].values())
    worker = model["services"]["worker"]
    assert worker["environment"]["DATABASE_URL"] == WORKER_HOST_ENV["DATABASE_URL"]
    assert worker["environment"]["REDIS_URL"] == WORKER_HOST_ENV["REDIS_URL"]
    assert "depends_on" not in worker, "a worker host has no db or redis service to wait for"


def test_each_host_has_its_own_worker_name_docker_engine_and_seats_folder():
    def worker_on(**env):
        return load({**WORKER_HOST_ENV, **env})["services"]["worker"]

    default = worker_on()
    command = default["command"]
    assert command[command.index("-n") + 1] == "%h@worker-2"  # container@host: replicas differ too
    assert default["volumes"] == [
        "/var/run/docker.sock:/var/run/docker.sock", "/var/lib/uno-arena/seats:/var/lib/uno-arena/seats"
    ]
    assert default["environment"]["SANDBOX_WORK_DIR"] == "/var/lib/uno-arena/seats"
    other = worker_on(HOST_NAME="worker-3", DOCKER_SOCKET="/run/docker-b.sock", SEATS_DIR="/srv/seats")
    assert other["command"][command.index("-n") + 1] == "%h@worker-3"
    # the engine bind-mounts seat folders by host path: the same path on both sides
    assert other["volumes"] == ["/run/docker-b.sock:/var/run/docker.sock", "/srv/seats:/srv/seats"]
    assert other["environment"]["SANDBOX_WORK_DIR"] == "/srv/seats"


def test_postgresql_and_redis_are_published_only_when_the_publish_file_asks():
    alone = load(CENTRAL_ENV)
    for name in ("db", "redis"):
        assert "ports" not in alone["services"][name], f"{name} publishes a port without compose.publish.yaml"
    with pytest.raises(MissingVariable, match="PUBLISH_ADDRESS"):
        load(CENTRAL_ENV, "compose.yaml", "compose.publish.yaml")
    published = load({**CENTRAL_ENV, "PUBLISH_ADDRESS": "10.0.0.1"}, "compose.yaml", "compose.publish.yaml")
    assert published["services"]["db"]["ports"] == ["10.0.0.1:5432:5432"]
    assert published["services"]["redis"]["ports"] == ["10.0.0.1:6379:6379"]
    assert set(raw("compose.publish.yaml")["services"]) == {"db", "redis"}
    # the site listens where WEB_ADDRESS says (default: this host only, behind a proxy)
    assert alone["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]


def test_redis_refuses_to_start_without_a_password():
    command = load(CENTRAL_ENV)["services"]["redis"]["command"]
    assert command[:2] == ["sh", "-c"] and '--requirepass "$REDIS_PASSWORD"' in command[2]
    # the guard before redis-server, run as the container runs it (empty password: refused)
    guard, _, start = command[2].partition("exec redis-server")
    assert start.strip() == '--appendonly yes --requirepass "$REDIS_PASSWORD"'
    ran = subprocess.run(["sh", "-c", guard], env={"REDIS_PASSWORD": ""}, capture_output=True, text=True)
    assert ran.returncode == 1 and "set REDIS_PASSWORD" in ran.stderr
    ran = subprocess.run(["sh", "-c", guard], env={"REDIS_PASSWORD": "pw"}, capture_output=True, text=True)
    assert ran.returncode == 0


def test_env_example_names_every_variable_the_files_use_and_no_other():
    used = variables(raw()) | variables(raw("compose.publish.yaml"))
    example = (DEPLOY / "env.example").read_text()
    named = set(re.findall(r"^#?([A-Z][A-Z0-9_]*)=", example, flags=re.MULTILINE))
    compose_own = {"COMPOSE_PROFILES", "COMPOSE_FILE"}
    assert used - named == set(), f"not in deploy/env.example: {sorted(used - named)}"
    assert named - used - compose_own == set(), f"deploy/env.example names unused: {sorted(named - used - compose_own)}"
    # its profile is one the file has
    profiles = {p for service in raw()["services"].values() for p in service.get("profiles", [])}
    assert profiles == {"central", "worker"}
    assert re.search(r"^COMPOSE_PROFILES=(central|worker)$", example, flags=re.MULTILINE)


def test_interpolation_follows_compose():
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate("${SET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d} ${UNSET} $$SET $SET", env) == "x d  d  $SET x"
    with pytest.raises(MissingVariable, match="EMPTY: say"):
        interpolate("${EMPTY:?say}", env)
    assert interpolate("${EMPTY?say}", env) == ""
