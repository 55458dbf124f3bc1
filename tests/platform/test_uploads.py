"""Uploading bot versions: the stored version, every refusal of the contract, duplicates."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from platform_helpers import good_bot, make_zip

from bots import services
from bots.forms import CappedUploadHandler, read_capped, upload_read_cap
from bots.models import BotVersion
from sandbox.limits import DEFAULT_UPLOAD_LIMITS, MIB

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]

AGENT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def post_upload(client, bot, name: str, data: bytes):
    client.force_login(bot.owner)
    return client.post(
        reverse("bots:upload", args=[bot.pk]), {"file": SimpleUploadedFile(name, data)}
    )


def upload_error(response) -> str:
    assert response.status_code == 200, response.status_code
    errors = response.context["form"].errors.get("file")
    assert errors, "the upload was accepted but should have been refused"
    return errors[0]


def test_upload_of_a_py_file_stores_an_immutable_version_with_its_sha256(client, bot, run_on_commit):
    data = good_bot("one")
    with run_on_commit():
        response = post_upload(client, bot, "alpha.py", data)
    version = BotVersion.objects.get(bot=bot)
    assert response.status_code == 302
    assert response["Location"] == version.get_absolute_url()
    assert bytes(version.source) == data
    assert version.sha256 == hashlib.sha256(data).hexdigest()
    assert (version.number, version.filename, version.size) == (1, "alpha.py", len(data))
    assert version.status == BotVersion.Status.ACTIVE


def test_upload_of_a_zip_with_main_and_a_helper_module_is_accepted(client, bot, run_on_commit):
    data = make_zip({"main.py": b"from helper import agent\n", "helper.py": AGENT, "data/book.txt": b"x"})
    with run_on_commit():
        response = post_upload(client, bot, "alpha.zip", data)
    assert response.status_code == 302
    version = BotVersion.objects.get(bot=bot)
    assert version.filename == "alpha.zip" and bytes(version.source) == data


def test_versions_are_numbered_in_upload_order(bot):
    first = services.bot_version_create(bot=bot, filename="a.py", data=good_bot("1"), validate=False)
    second = services.bot_version_create(bot=bot, filename="a.py", data=good_bot("2"), validate=False)
    assert (first.number, second.number) == (1, 2)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("big.py", AGENT + b"#" * DEFAULT_UPLOAD_LIMITS.py_bytes, "too large"),
        ("big.zip", b"PK" + b"\0" * (DEFAULT_UPLOAD_LIMITS.zip_bytes + 10), "too large"),
        ("many.zip", make_zip({"main.py": AGENT, **{f"f{i}.txt": b"" for i in range(DEFAULT_UPLOAD_LIMITS.zip_entries)}}), "entries"),
        ("abs.zip", make_zip({"main.py": AGENT, "/etc/passwd": b"x"}), "absolute path"),
        ("dots.zip", make_zip({"main.py": AGENT, "../evil.py": b"x = 1\n"}), "'..'"),
        ("link.zip", make_zip({"main.py": AGENT, "secret": b"/etc/shadow"}, symlinks=("secret",)), "symbolic link"),
        ("nomain.zip", make_zip({"bot.py": AGENT}), "no main.py at the root"),
        ("nested.zip", make_zip({"alpha/main.py": AGENT}), "zip the files, not their folder"),
        ("broken.py", b"def agent(observation, configuration)\n    return 1\n", "does not compile"),
        ("noagent.py", b"def play(observation, configuration):\n    return 1\n", "no top-level `agent`"),
        ("latin1.py", AGENT + "# caf\xe9\n".encode("latin-1"), "not UTF-8"),
        ("binary.py", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "binary file"),
        ("bomb.zip", make_zip({"main.py": AGENT, "zeros.bin": b"\0" * (DEFAULT_UPLOAD_LIMITS.unpacked_bytes + MIB)}), "unpacks to more than"),
        ("garbage.zip", b"this is not a zip archive at all", "not a valid zip"),
        ("bot.exe", AGENT, "a bot is a .py file or a .zip"),
        ("empty.py", b"", "is empty"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 20 else None,
)
def test_upload_breaking_the_contract_is_refused_with_a_form_error(client, bot, name, data, expected):
    message = upload_error(post_upload(client, bot, name, data))
    assert expected in message, message
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_uploading_the_same_bytes_twice_is_refused_with_the_existing_version(client, bot):
    data = good_bot("same")
    services.bot_version_create(bot=bot, filename="alpha.py", data=data, validate=False)
    message = upload_error(post_upload(client, bot, "renamed.py", data))
    assert "already uploaded as version 1" in message
    assert BotVersion.objects.filter(bot=bot).count() == 1


def test_the_same_bytes_may_be_uploaded_for_another_bot(bot, bob):
    other = services.bot_create(owner=bob, name="alpha")
    data = good_bot("shared")
    services.bot_version_create(bot=bot, filename="a.py", data=data, validate=False)
    version = services.bot_version_create(bot=other, filename="a.py", data=data, validate=False)
    assert version.number == 1


def test_an_oversized_upload_is_read_only_up_to_the_cap(tmp_path):
    cap = upload_read_cap()
    huge = SimpleUploadedFile("huge.zip", b"\0" * (cap + 3 * MIB))
    assert len(read_capped(huge, cap)) == cap
    assert cap == max(DEFAULT_UPLOAD_LIMITS.py_bytes, DEFAULT_UPLOAD_LIMITS.zip_bytes) + 1


def test_only_the_owner_may_upload_to_a_bot(client, bot, bob):
    client.force_login(bob)
    response = client.post(reverse("bots:upload", args=[bot.pk]), {"file": SimpleUploadedFile("a.py", AGENT)})
    assert response.status_code == 404
    assert not BotVersion.objects.exists()


@pytest.mark.parametrize("name", ["Alpha", "ALPHA ", "alpha"])
def test_bot_names_are_unique_per_owner_whatever_their_case(alice, bot, name):
    with pytest.raises(services.BotError, match="already have a bot named 'alpha'"):
        services.bot_create(owner=alice, name=name)


@pytest.mark.parametrize("name", ["a/b", "tab\there", "line\nbreak"])
def test_a_bot_name_with_a_slash_or_control_characters_is_refused(alice, name):
    with pytest.raises(services.BotError, match="may not contain '/'"):
        services.bot_create(owner=alice, name=name)


def test_bot_names_are_unique_per_owner(client, alice, bot):
    client.force_login(alice)
    response = client.post(reverse("bots:new"), {"name": "alpha", "description": ""})
    assert response.status_code == 200
    assert "already have a bot named 'alpha'" in response.context["form"].errors["name"][0]


def test_a_huge_upload_is_refused_and_only_a_capped_prefix_is_kept(client, bot):
    huge = AGENT + b"#" * (upload_read_cap() + 4 * MIB)
    response = post_upload(client, bot, "huge.py", huge)
    message = upload_error(response)
    assert "too large" in message and f"({upload_read_cap()} bytes read)" in message
    assert not BotVersion.objects.exists()


def test_the_capped_upload_handler_keeps_at_most_the_cap():
    handler = CappedUploadHandler(cap=10)
    handler.new_file("file", "bot.py", "text/x-python", None)
    for start in range(0, 1000, 100):
        handler.receive_data_chunk(b"x" * 100, start)
    kept = handler.file_complete(1000)
    assert kept.read() == b"x" * 10
    assert handler.received == 1000


def test_the_upload_form_still_checks_csrf(bot):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(bot.owner)
    response = client.post(reverse("bots:upload", args=[bot.pk]), {"file": SimpleUploadedFile("a.py", AGENT)})
    assert response.status_code == 403
    assert not BotVersion.objects.exists()


def test_system_checks_catch_an_unplayable_validation_setup(settings):
    from bots.checks import validation_settings_check

    assert validation_settings_check() == []
    settings.VALIDATION_OPPONENT = "nobody"
    settings.VALIDATION_RULES = ["players=3"]
    ids = sorted(error.id for error in validation_settings_check())
    assert ids == ["bots.E001", "bots.E003"]
    settings.VALIDATION_RULES = ["wd4=sometimes"]
    assert "bots.E002" in [error.id for error in validation_settings_check()]


def test_settings_change_the_upload_limits_everywhere_they_show(client, bot, settings):
    from sandbox.limits import UploadLimits

    settings.BOT_UPLOAD_LIMITS = UploadLimits(py_bytes=2048, zip_bytes=4096, unpacked_bytes=8192, zip_entries=3)
    message = upload_error(post_upload(client, bot, "big.py", AGENT + b"#" * 3000))
    assert "too large" in message and "2 KiB" in message
    assert upload_read_cap() == 4096 + 1
    page = client.get(reverse("bots:upload", args=[bot.pk])).content.decode()
    assert "at most 2 KiB" in page and "at most 4 KiB" in page
    guide = client.get(reverse("web:guide")).content.decode()
    assert "8 KiB unpacked, 3 entries" in guide
    # within the limits the same bot is accepted
    response = post_upload(client, bot, "small.py", AGENT)
    assert response.status_code == 302 and BotVersion.objects.count() == 1


@pytest.mark.slow
def test_upload_limits_from_the_environment_are_checked_at_start(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "BOT_UPLOAD_ZIP_ENTRIES": "0", "PYTHONPATH": f"{root}:{root / 'platform'}",
           "DJANGO_SETTINGS_MODULE": "arena.settings"}
    proc = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "zip_entries must be a positive int, got 0" in proc.stderr and "BOT_UPLOAD_ZIP_ENTRIES" in proc.stderr
    env["BOT_UPLOAD_ZIP_ENTRIES"] = "7"
    proc = subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
                           "print(settings.BOT_UPLOAD_LIMITS.zip_entries)"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "7", proc.stderr
