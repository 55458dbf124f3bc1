"""Hostile uploads: code that would run instead of the source everyone reads is refused at upload.

The attack (issue 16): a zip whose ``main.py`` is harmless, with
``__pycache__/main.cpython-311.pyc`` compiled from something else as an
*unchecked* hash-based pyc. CPython's loader runs that bytecode instead of
``main.py`` (``-B`` only stops it from writing caches, not from reading them),
so validation and every reader see one bot and the matches play another.
``sandbox.package`` refuses every compiled or native file in an upload; these
tests show the payload is real and that the package, the site's upload form
and the API all refuse it with a message naming the file.
"""

from __future__ import annotations

import importlib.util
import io
import py_compile
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from sandbox.package import BotPackage, PackageError

HONEST_SOURCE = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
HIDDEN_SOURCE = "def agent(observation, configuration):\n    return 'the hidden bot'\n"
#: the cache name CPython looks up for main.py, e.g. __pycache__/main.cpython-311.pyc
PYC_PATH = importlib.util.cache_from_source("main.py")
REFUSAL = "entry '__pycache__/main.cpython-311.pyc' is in a __pycache__ folder (compiled Python bytecode)"


def hidden_pyc(tmp_path: Path) -> bytes:
    """Bytecode of HIDDEN_SOURCE marked "never check the source": it runs whatever main.py says."""
    source = tmp_path / "hidden.py"
    source.write_text(HIDDEN_SOURCE)
    target = tmp_path / "hidden.pyc"
    py_compile.compile(str(source), cfile=str(target), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)
    return target.read_bytes()


def smuggling_zip(pyc: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.py", HONEST_SOURCE)
        archive.writestr("__pycache__/main.cpython-311.pyc", pyc)
    return buffer.getvalue()


@pytest.fixture
def payload(tmp_path) -> bytes:
    return smuggling_zip(hidden_pyc(tmp_path))


def test_the_payload_is_real_python_runs_the_hidden_bytecode_instead_of_main_py(tmp_path, payload):
    """Unpacked as is, Python's own loader (even with -B -I) plays the hidden bot, not main.py;
    the bot host's loader compiles bot modules from source only, so it plays main.py."""
    if not PYC_PATH.endswith("main.cpython-311.pyc"):
        pytest.skip(f"this interpreter caches main.py as {PYC_PATH}, not the payload's cpython-311 name")
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        archive.extractall(folder)
    host = Path(__file__).resolve().parents[2] / "sandbox" / "host.py"
    plain = (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('main', {str(folder / 'main.py')!r})\n"
        "main = importlib.util.module_from_spec(spec); spec.loader.exec_module(main)\n"
        "print(main.agent({'legal_actions': ['the honest bot']}, {}))\n"
    )
    probe = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('host', {str(host)!r})\n"
        "host = importlib.util.module_from_spec(spec); spec.loader.exec_module(host)\n"
        f"print(host.load_agent({str(folder)!r})({{'legal_actions': ['the honest bot']}}, {{}}))\n"
    )
    for code, expected in ((plain, "the hidden bot"), (probe, "the honest bot")):
        ran = subprocess.run([sys.executable, "-B", "-I", "-c", code], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == expected


def test_the_package_refuses_the_smuggled_pyc_naming_it(payload):
    with pytest.raises(PackageError) as refused:
        BotPackage.from_bytes("sneaky.zip", payload)
    assert str(refused.value).startswith(f"'sneaky.zip': {REFUSAL}")
    assert "only .py source runs" in str(refused.value)


def test_the_cli_path_refuses_it_too(tmp_path, payload):
    path = tmp_path / "sneaky.zip"
    path.write_bytes(payload)
    with pytest.raises(PackageError, match="is in a __pycache__ folder"):
        BotPackage.from_path(path)


@pytest.mark.parametrize(
    ("entry", "what"),
    [
        ("helper.pyc", "compiled Python bytecode (.pyc)"),
        ("fast.cpython-311-x86_64-linux-gnu.so", "a native library (.so)"),
        ("vendor.zip", "an archive Python can import code from (.zip)"),
    ],
)
def test_other_compiled_code_beside_main_py_is_refused(tmp_path, entry, what):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("main.py", b"import helper\n" + HONEST_SOURCE)
        archive.writestr(entry, hidden_pyc(tmp_path))
    with pytest.raises(PackageError) as refused:
        BotPackage.from_bytes("sneaky.zip", buffer.getvalue())
    assert f"entry '{entry}' is {what}, not source" in str(refused.value)


@pytest.fixture
def sneaky_bot(alice):
    from bots import services

    return services.bot_create(owner=alice, name="sneaky")


@pytest.mark.django_db
def test_the_site_upload_form_refuses_it_and_stores_nothing(client, sneaky_bot, payload):
    from bots.models import BotVersion

    client.force_login(sneaky_bot.owner)
    response = client.post(reverse("bots:upload", args=[sneaky_bot.pk]), {"file": SimpleUploadedFile("sneaky.zip", payload)})
    assert response.status_code == 200
    errors = response.context["form"].errors["file"]
    assert len(errors) == 1 and REFUSAL in errors[0]
    assert escape(REFUSAL) in response.content.decode()  # shown on the page, as text
    assert not BotVersion.objects.filter(bot=sneaky_bot).exists()


@pytest.mark.django_db
def test_the_api_upload_refuses_it_with_a_400_naming_the_file(sneaky_bot, payload):
    from rest_framework.test import APIClient

    from bots.models import BotVersion

    api = APIClient()
    api.force_authenticate(user=sneaky_bot.owner)
    response = api.post(f"/api/bots/{sneaky_bot.pk}/versions/", {"file": SimpleUploadedFile("sneaky.zip", payload)}, format="multipart")
    assert response.status_code == 400, response.content
    assert REFUSAL in response.content.decode()
    assert not BotVersion.objects.filter(bot=sneaky_bot).exists()
