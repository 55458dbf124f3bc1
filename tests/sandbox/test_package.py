"""Upload checks of BOT_CONTRACT.md: what BotPackage accepts and how it refuses."""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile

import pytest

from sandbox.limits import UploadLimits
from sandbox.package import BotPackage, PackageError

AGENT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def make_zip(entries: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def test_single_file_bot_is_stored_as_main_with_sha256_of_upload():
    bot = BotPackage.from_bytes("mybot.py", AGENT)
    assert bot.kind == "py"
    assert bot.files == {"main.py": AGENT}
    assert bot.sha256 == hashlib.sha256(AGENT).hexdigest()


def test_zip_bot_with_helper_module_and_data_file_is_accepted():
    data = make_zip({"main.py": b"from helper import agent\n", "helper.py": AGENT, "book/x.bin": b"\xff\x00"})
    bot = BotPackage.from_bytes("bot.zip", data)
    assert bot.kind == "zip"
    assert set(bot.files) == {"main.py", "helper.py", "book/x.bin"}
    assert bot.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    "source",
    [
        b"agent = lambda o, c: o['legal_actions'][0]\n",
        b"class agent:\n    pass\n",
        b"try:\n    from fast import agent\nexcept ImportError:\n    def agent(o, c):\n        return 0\n",
    ],
)
def test_agent_bound_by_assignment_class_or_guarded_import_counts(source):
    assert BotPackage.from_bytes("b.py", source).kind == "py"


def test_agent_only_inside_a_function_is_refused():
    with pytest.raises(PackageError, match="no top-level `agent`"):
        BotPackage.from_bytes("b.py", b"def setup():\n    def agent(o, c):\n        return 0\n")


F = b"def _f(o, c):\n    return o['legal_actions'][0]\n"


@pytest.mark.parametrize(
    "binding",
    [
        b"agent, other = _f, 1\n",
        b"[agent] = [_f]\n",
        b"*rest, agent = [1, _f]\n",
        b"with open(__file__) as _handle:\n    agent = _f\n",
        b"for agent in [_f]:\n    pass\n",
        b"while True:\n    agent = _f\n    break\n",
        b"match 1:\n    case _:\n        agent = _f\n",
        b"try:\n    pass\nexcept* ValueError:\n    pass\nelse:\n    agent = _f\n",
        b"if (agent := _f):\n    pass\n",
        b"globals()['agent'] = _f\n",
        b"globals().update(agent=_f)\n",
        b"exec('agent = _f')\n",
        b"agent = 5\nagent = _f\n",
        b"agent = lambda o, c: _f(o, c)\n",
        b"@staticmethod\ndef agent(o, c):\n    return 0\n",
    ],
)
def test_agent_bound_in_any_module_level_form_counts(binding):
    assert BotPackage.from_bytes("b.py", F + binding).kind == "py"


def test_agent_from_a_star_import_of_a_sibling_counts():
    data = make_zip({"main.py": b"from strategy import *\n", "strategy.py": AGENT})
    assert BotPackage.from_bytes("bot.zip", data).kind == "zip"


@pytest.mark.parametrize(
    ("source", "kinds"),
    [
        (b"agent = 5\n", "int"),
        (b"agent = None\n", "NoneType"),
        (b"agent = 'first'\nagent: str = 'x'\n", "str"),
        (b"agent = [1, 2]\n", "list"),
        (b"agent = {}\n", "dict"),
    ],
)
def test_agent_bound_only_to_a_literal_is_refused(source, kinds):
    with pytest.raises(PackageError, match=rf"bound only to a literal \({kinds}\)"):
        BotPackage.from_bytes("b.py", source)


def test_agent_inside_a_lambda_or_class_body_is_not_top_level():
    for source in (b"f = lambda: (agent := 1)\n", b"class Bot:\n    agent = 1\n"):
        with pytest.raises(PackageError, match="no top-level `agent`"):
            BotPackage.from_bytes("b.py", source)


def test_source_that_does_not_compile_names_the_line():
    with pytest.raises(PackageError, match=r"does not compile: .*line 2"):
        BotPackage.from_bytes("b.py", b"def agent(o, c):\nreturn 0\n")


def test_non_utf8_source_names_the_byte_and_offset():
    with pytest.raises(PackageError, match=r"not UTF-8 \(invalid byte 0xe9 at offset 1\)"):
        BotPackage.from_bytes("b.py", b"#\xe9\ndef agent(o, c): pass\n")


def test_binary_file_posing_as_python_is_refused():
    with pytest.raises(PackageError, match="binary file"):
        BotPackage.from_bytes("b.py", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 100)


def test_oversized_py_is_refused_with_the_limit():
    data = AGENT + b"#" * (1024 * 1024)
    with pytest.raises(PackageError, match=r"at most 1 MiB"):
        BotPackage.from_bytes("b.py", data)


def test_unknown_extension_is_refused():
    with pytest.raises(PackageError, match=r"\.py file or a \.zip archive, not '\.exe'"):
        BotPackage.from_bytes("b.exe", AGENT)


def test_zip_without_main_at_root_points_to_the_nested_one():
    with pytest.raises(PackageError, match=r"no main.py at the root .*found 'mybot/main.py'"):
        BotPackage.from_bytes("b.zip", make_zip({"mybot/main.py": AGENT}))


@pytest.mark.parametrize(
    ("entry", "message"),
    [("/etc/cron.d/x", "absolute path"), ("../evil.py", r"contains '\.\.'"), ("a/../../x", r"contains '\.\.'"), ("C:/x.py", "absolute path")],
)
def test_zip_entries_escaping_the_bot_directory_are_refused(entry, message):
    with pytest.raises(PackageError, match=message):
        BotPackage.from_bytes("b.zip", make_zip({"main.py": AGENT, entry: b"x"}))


def test_zip_with_symlink_is_refused():
    data = make_zip({"main.py": AGENT}, symlinks={"secrets": "/etc/shadow"})
    with pytest.raises(PackageError, match="'secrets' is a symbolic link"):
        BotPackage.from_bytes("b.zip", data)


def test_zip_with_too_many_entries_is_refused():
    entries = {"main.py": AGENT} | {f"d{i}.txt": b"" for i in range(200)}
    with pytest.raises(PackageError, match="201 entries; at most 200"):
        BotPackage.from_bytes("b.zip", make_zip(entries))


def test_zip_bomb_with_lying_sizes_is_stopped_at_the_unpacked_cap():
    limits = UploadLimits(unpacked_bytes=1024 * 1024)
    # 4 MiB of zeros compress to a few KiB; then patch the declared size to lie.
    data = bytearray(make_zip({"main.py": AGENT, "bomb.bin": b"\x00" * (4 * 1024 * 1024)}))
    declared = (4 * 1024 * 1024).to_bytes(4, "little")
    small = (10).to_bytes(4, "little")
    data = bytes(data).replace(declared, small)
    with pytest.raises(PackageError, match=r"unpacks to more than 1 MiB|cannot be read"):
        BotPackage.from_bytes("b.zip", data, limits)


def test_zip_bomb_with_honest_sizes_is_refused_before_exhausting_memory():
    limits = UploadLimits(unpacked_bytes=2 * 1024 * 1024)
    data = make_zip({"main.py": AGENT, "bomb.bin": b"\x00" * (8 * 1024 * 1024)})
    with pytest.raises(PackageError, match=r"unpacks to more than 2 MiB \(stopped in entry 'bomb.bin'\)"):
        BotPackage.from_bytes("b.zip", data, limits)


def test_garbage_posing_as_zip_is_refused():
    with pytest.raises(PackageError, match="not a valid zip archive"):
        BotPackage.from_bytes("b.zip", b"PK\x03\x04 definitely not a zip")


def test_non_utf8_helper_module_in_zip_is_refused_with_its_path():
    data = make_zip({"main.py": AGENT, "lib/util.py": b"x = '\xff'\n"})
    with pytest.raises(PackageError, match=r"b.zip:lib/util.py: source is not UTF-8"):
        BotPackage.from_bytes("b.zip", data)


def test_from_path_refuses_oversized_file_without_reading_it_all(tmp_path):
    path = tmp_path / "huge.py"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: large on paper, cheap on disk
    with pytest.raises(PackageError, match="at most 1 MiB"):
        BotPackage.from_path(path)


def test_from_path_reads_a_zip_and_writes_it_back_out(tmp_path):
    source = tmp_path / "bot.zip"
    source.write_bytes(make_zip({"main.py": b"from lib.core import agent\n", "lib/core.py": AGENT}))
    bot = BotPackage.from_path(source)
    out = bot.write_to(tmp_path / "unpacked")
    assert (out / "main.py").read_bytes() == b"from lib.core import agent\n"
    assert (out / "lib" / "core.py").read_bytes() == AGENT


def test_from_path_of_missing_file_names_it(tmp_path):
    with pytest.raises(PackageError, match="cannot read bot file .*nope.py"):
        BotPackage.from_path(tmp_path / "nope.py")


def test_from_path_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "bot.py"
    os.mkfifo(fifo)
    with pytest.raises(PackageError, match="is not a regular file"):
        BotPackage.from_path(fifo)


def test_zip_with_a_file_where_a_folder_should_be_is_refused():
    data = make_zip({"main.py": AGENT, "lib": b"x", "lib/util.py": b"y = 1\n"})
    with pytest.raises(PackageError, match="entry 'lib/util.py' lies under 'lib', which is a file"):
        BotPackage.from_bytes("b.zip", data)


def test_zip_entry_with_an_overlong_name_is_refused():
    data = make_zip({"main.py": AGENT, "x" * 300 + ".txt": b"x"})
    with pytest.raises(PackageError, match="too long or too deep"):
        BotPackage.from_bytes("b.zip", data)


def test_utf8_source_with_a_byte_order_mark_is_accepted():
    bot = BotPackage.from_bytes("windows.py", b"\xef\xbb\xbf" + AGENT)
    assert bot.files["main.py"].startswith(b"\xef\xbb\xbf")


def test_macos_resource_forks_in_a_zip_are_left_out():
    data = make_zip({"main.py": AGENT, "__MACOSX/._main.py": b"\x00\x05\x16\x07 binary", "helper.py": b"x = 1\n"})
    assert set(BotPackage.from_bytes("mac.zip", data).files) == {"main.py", "helper.py"}


def test_foreign_imports_are_the_modules_neither_standard_nor_the_bots_own():
    data = make_zip({
        "main.py": b"import json, numpy.linalg\nfrom helpers import x\nfrom . import y\nfrom torch import nn\n" + AGENT,
        "helpers.py": b"import collections\nimport requests\nx = 1\n",
        "tools/__init__.py": b"",
        "tools/more.py": b"from tools import more\n",
    })
    assert BotPackage.from_bytes("bot.zip", data).foreign_imports() == ["numpy", "requests", "torch"]
    assert BotPackage.from_bytes("b.py", b"import random, os.path\n" + AGENT).foreign_imports() == []


# --- no compiled or binary code (issue 16): .py is all the code; data is text or small .bin/.dat/.npy

PE_DLL = b"MZ" + b"\x00" * 0x3A + (0x40).to_bytes(4, "little") + b"PE\x00\x00" + b"\x00" * 64


@pytest.mark.parametrize(
    ("entry", "content", "expected"),
    [
        ("__pycache__/main.cpython-311.pyc", b"\xa7\r\r\n" + b"\x00" * 12, r"is in a __pycache__ folder"),
        ("lib/__pycache__/util.cpython-311.py", b"x = 1\n", r"is in a __pycache__ folder"),
        ("helper.pyc", b"\xa7\r\r\n", r"is compiled Python bytecode \(.pyc\), not source"),
        ("HELPER.PYO", b"\xa7\r\r\n", r"is compiled Python bytecode \(.pyo\)"),
        ("fast.cpython-311-x86_64-linux-gnu.so", b"\x7fELF", r"is a native library \(.so\)"),
        ("lib/libfast.so.1", b"\x7fELF", r"is a native library \(.so\)"),
        ("fast.pyd", PE_DLL, r"is a native library \(.pyd\)"),
        ("fast.dll", PE_DLL, r"is a native library \(.dll\)"),
        ("fast.dylib", b"\xcf\xfa\xed\xfe", r"is a native library \(.dylib\)"),
        ("deps.zip", make_zip({"x.py": b"x = 1\n"}), r"is an archive Python can import code from \(.zip\)"),
        ("deps.whl", b"PK", r"is an archive Python can import code from \(.whl\)"),
    ],
)
def test_compiled_native_and_archived_code_in_a_zip_is_refused_naming_the_entry(entry, content, expected):
    data = make_zip({"main.py": AGENT, entry: content})
    with pytest.raises(PackageError, match=rf"^'bot.zip': entry {re.escape(repr(entry))} {expected}.*only .py source runs"):
        BotPackage.from_bytes("bot.zip", data)


def test_an_empty_pycache_folder_entry_is_refused_too():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("main.py", AGENT)
        archive.writestr(zipfile.ZipInfo("__pycache__/"), b"")
    with pytest.raises(PackageError, match=r"entry '__pycache__/' is a __pycache__ folder"):
        BotPackage.from_bytes("bot.zip", buffer.getvalue())


@pytest.mark.parametrize(
    ("entry", "content", "expected"),
    [
        ("weights.bin", b"\x7fELF\x02\x01\x01" + b"\x00" * 32, "is an ELF executable or library, not data"),
        ("book.dat", PE_DLL, "is a Windows executable or library, not data"),
        ("table.npy", b"\xcf\xfa\xed\xfe" + b"\x00" * 16, "is a Mach-O executable or library, not data"),
        ("more.bin", b"junk before " + make_zip({"evil.py": b"x = 1\n"}), r"is a zip archive \(Python can import code from it\)"),
    ],
)
def test_a_binary_data_file_that_is_really_code_is_refused(entry, content, expected):
    data = make_zip({"main.py": AGENT, entry: content})
    with pytest.raises(PackageError, match=rf"data file '{entry}' {expected}"):
        BotPackage.from_bytes("bot.zip", data)


def test_binary_data_files_are_capped_each():
    limits = UploadLimits(binary_data_bytes=1000)
    assert BotPackage.from_bytes("bot.zip", make_zip({"main.py": AGENT, "w.bin": b"\xff" * 1000}), limits)
    with pytest.raises(PackageError, match=r"data file 'w.npy' is too large \(1001 bytes\); a zip may hold binary data files \(.bin, .dat, .npy\) of at most 1000 bytes each"):
        BotPackage.from_bytes("bot.zip", make_zip({"main.py": AGENT, "w.npy": b"\xff" * 1001}), limits)


def test_binary_data_files_within_the_cap_are_accepted_as_they_are():
    weights = b"\x93NUMPY\x01\x00v\x00" + bytes(range(256)) * 100
    not_pe = b"MZ" + bytes(range(200))  # starts like a Windows executable but is not one
    data = make_zip({"main.py": AGENT, "model/weights.npy": weights, "book.DAT": not_pe, "x.bin": b""})
    bot = BotPackage.from_bytes("bot.zip", data)
    assert bot.files["model/weights.npy"] == weights and bot.files["book.DAT"] == not_pe


@pytest.mark.parametrize(
    ("entry", "content", "expected"),
    [
        ("logo.png", b"\x89PNG\r\n\x1a\n", r"'logo.png' is not UTF-8 text \(invalid byte 0x89 at offset 0\)"),
        ("openings.json", b'{"a": "caf\xe9"}', r"'openings.json' is not UTF-8 text \(invalid byte 0xe9 at offset 10\)"),
        ("notes.txt", b"one\x00two", r"'notes.txt' is not UTF-8 text \(NUL byte at offset 3\)"),
        ("weights.pkl", b"\x80\x04\x95", r"'weights.pkl' is not UTF-8 text \(invalid byte 0x80 at offset 0\)"),
    ],
)
def test_any_other_file_that_is_not_utf8_text_is_refused_naming_the_rule(entry, content, expected):
    data = make_zip({"main.py": AGENT, entry: content})
    with pytest.raises(PackageError, match=rf"^'bot.zip': entry {expected}; every file of a bot but its .py source must be UTF-8 text, except binary data files \(.bin, .dat, .npy\) of at most 1 MiB each$"):
        BotPackage.from_bytes("bot.zip", data)


def test_text_files_of_any_name_are_accepted():
    texts = {
        "README": b"how it plays\n",
        "LICENSE.md": "\u00a9 2026 Zo\u00eb\n".encode(),
        "data/openings.json": b'{"R7": 1}',
        "data/table.csv": b"\xef\xbb\xbfa,b\n1,2\n",  # a BOM is fine
        "data/x.tsv": b"",
        "NOTES.PY": b"not python, and not imported: Python only imports .py\n",
    }
    bot = BotPackage.from_bytes("bot.zip", make_zip({"main.py": AGENT, **texts}))
    assert set(bot.files) == {"main.py", *texts}


def test_a_package_folder_that_would_shadow_a_module_is_refused():
    data = make_zip({"main.py": b"from helper import agent\n", "helper.py": AGENT, "helper/__init__.py": b"def agent(o, c):\n    return 0\n"})
    with pytest.raises(PackageError, match=r"package 'helper/' and module 'helper.py' have the same name; Python imports the package, so 'helper.py' would never run"):
        BotPackage.from_bytes("bot.zip", data)
    # a folder of data beside a module of its name shadows nothing
    assert BotPackage.from_bytes("bot.zip", make_zip({"main.py": AGENT, "book.py": b"x = 1\n", "book/lines.txt": b"a\n"}))


@pytest.mark.parametrize(
    ("path", "kind"),
    [("main.py", "source"), ("lib/a.py", "source"), ("a.json", "text"), ("README", "text"),
     ("a.PY", "text"), ("w.bin", "binary data"), ("w.NPY", "binary data"), ("x.dat", "binary data")],
)
def test_file_kind_sorts_files_by_name(path, kind):
    from sandbox.package import file_kind

    assert file_kind(path) == kind
