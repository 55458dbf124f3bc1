"""An uploaded bot, checked: every upload rule of BOT_CONTRACT.md, nothing imported.

The platform's upload form, the CLI and the runner all build bots through
``BotPackage``; a package that exists has passed every check. Source is only
parsed (``ast``), never executed. Standard library only.

What a zip may hold (``file_kind`` sorts its files; the one place for the rule):

- **Python source**, ``*.py``: UTF-8 that compiles. The only code a bot has.
- **Never**: compiled or native code, whatever it is called inside:
  anything under a ``__pycache__/`` folder, ``*.pyc`` / ``*.pyo`` (bytecode,
  which Python would run instead of the ``.py`` beside it), ``*.so`` /
  ``*.pyd`` / ``*.dll`` / ``*.dylib`` (native libraries), and archives Python
  can import from (``*.zip``, ``*.whl``, ``*.egg``, ``*.pyz``). A package folder
  (``x/__init__.py``) beside a module of the same name (``x.py``) is refused too:
  the folder would be imported and ``x.py`` never run.
- **Binary data**, ``*.bin`` / ``*.dat`` / ``*.npy``: any bytes, at most
  ``UploadLimits.binary_data_bytes`` each (1 MiB), and not an executable or a
  zip archive in disguise (ELF, PE, Mach-O, zip are recognised by content).
  Python never imports these names.
- **Text**, every other file (``*.json``, ``*.txt``, ``*.csv``, ``README``, ...):
  UTF-8 text without NUL bytes.

So what reviewers read (the ``.py`` files) is all the code that runs.

>>> bot = BotPackage.from_bytes("bot.py", b"def agent(obs, conf):\\n    return obs['legal_actions'][0]\\n")
>>> bot.kind, len(bot.sha256)
('py', 64)
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import stat
import sys
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sandbox.limits import DEFAULT_UPLOAD_LIMITS, UploadLimits, describe_bytes

#: the module the bot host imports; a single-file upload is stored under this name
ENTRY_MODULE = "main.py"
_READ_CHUNK = 64 * 1024

#: the kinds of file a zip may hold (see the module's docstring); ``file_kind`` decides
SOURCE, TEXT, BINARY_DATA = "source", "text", "binary data"
#: names Python never imports that may hold any bytes (up to UploadLimits.binary_data_bytes)
BINARY_DATA_SUFFIXES = (".bin", ".dat", ".npy")
#: compiled or native code: refused wherever it is, with what it is
_CODE_SUFFIXES = {
    ".pyc": "compiled Python bytecode",
    ".pyo": "compiled Python bytecode",
    ".so": "a native library",
    ".pyd": "a native library",
    ".dll": "a native library",
    ".dylib": "a native library",
    ".zip": "an archive Python can import code from",
    ".whl": "an archive Python can import code from",
    ".egg": "an archive Python can import code from",
    ".pyz": "an archive Python can import code from",
}
#: content that is code whatever the file is called (checked in binary data files)
_CODE_MAGIC = (
    (b"\x7fELF", "an ELF executable or library"),
    (b"\xfe\xed\xfa\xce", "a Mach-O executable or library"),
    (b"\xfe\xed\xfa\xcf", "a Mach-O executable or library"),
    (b"\xce\xfa\xed\xfe", "a Mach-O executable or library"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable or library"),
    (b"\xca\xfe\xba\xbe", "a Mach-O executable or library"),
)
_NO_CODE_HINT = "only .py source runs; delete compiled and binary code before zipping (e.g. zip -r bot.zip . -x '*__pycache__*')"


class PackageError(ValueError):
    """An upload breaks a rule of the bot contract; the message says which and why."""


@dataclass(frozen=True)
class BotPackage:
    """A checked bot: its files (``main.py`` at the root), the upload's name, bytes and sha256."""

    filename: str
    data: bytes = field(repr=False)
    sha256: str
    kind: str  # "py" or "zip"
    files: dict[str, bytes] = field(repr=False, compare=False)

    @classmethod
    def from_bytes(
        cls, filename: str, data: bytes, limits: UploadLimits = DEFAULT_UPLOAD_LIMITS
    ) -> BotPackage:
        """Check an upload (a ``.py`` or ``.zip``) and return it, or raise ``PackageError``."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise PackageError(f"upload data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        name = PurePosixPath(str(filename).replace("\\", "/")).name
        suffix = PurePosixPath(name).suffix.lower()
        if suffix == ".py":
            _check_size(name, len(data), limits.py_bytes, "a .py upload")
            files = {ENTRY_MODULE: data}
        elif suffix == ".zip":
            _check_size(name, len(data), limits.zip_bytes, "a .zip upload")
            files = _unpack_zip(name, data, limits)
        else:
            raise PackageError(f"{name!r}: a bot is a .py file or a .zip archive, not {suffix or 'a file without extension'!r}")
        if suffix == ".zip":
            _check_zip_files(name, files, limits)
        for path, content in files.items():
            if file_kind(path) == SOURCE:
                tree = _parse_source(name if suffix == ".py" else f"{name}:{path}", content)
                problem = _agent_problem(tree) if path == ENTRY_MODULE else None
                if problem:
                    where = name if suffix == ".py" else f"{name}:{ENTRY_MODULE}"
                    raise PackageError(f"{where}: {problem}")
        return cls(
            filename=name,
            data=data,
            sha256=hashlib.sha256(data).hexdigest(),
            kind=suffix[1:],
            files=files,
        )

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], limits: UploadLimits = DEFAULT_UPLOAD_LIMITS) -> BotPackage:
        """Read and check a bot file; a file over its size limit is refused unread."""
        path = Path(path)
        suffix = path.suffix.lower()
        cap = {".py": limits.py_bytes, ".zip": limits.zip_bytes}.get(suffix)
        try:
            # Checked before opening: opening a FIFO would block.
            if not stat.S_ISREG(path.stat().st_mode):
                raise PackageError(f"{str(path)!r} is not a regular file")
            with path.open("rb") as handle:
                # Read one byte past the cap so an oversized file is refused
                # without loading all of it.
                data = handle.read(cap + 1) if cap is not None else b""
        except OSError as exc:
            raise PackageError(f"cannot read bot file {str(path)!r}: {exc.strerror or exc}") from exc
        return cls.from_bytes(path.name, data, limits)

    def write_to(self, directory: str | os.PathLike[str]) -> Path:
        """Write the bot's files under ``directory`` (``main.py`` at its root) and return it.

        Everything is world-readable and owner-writable only: the sandbox's
        unprivileged user reads the code but can never change it.
        """
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
        for name, content in self.files.items():
            target = root
            for part in PurePosixPath(name).parts[:-1]:
                target = target / part
                if not target.is_dir():
                    target.mkdir()
                    os.chmod(target, 0o755)
            target = target / PurePosixPath(name).name
            target.write_bytes(content)
            os.chmod(target, 0o644)
        return root

    def foreign_imports(self) -> list[str]:
        """Top-level modules the bot's sources import that are neither the standard library
        nor its own files: they exist only where the bot runs outside the sandbox."""
        own = {path.split("/")[0].removesuffix(".py") for path in self.files}
        found: set[str] = set()
        for path, content in self.files.items():
            if not path.endswith(".py"):
                continue
            for node in ast.walk(ast.parse(content, filename=path)):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
        return sorted(found - own - set(sys.stdlib_module_names))

    @property
    def short_name(self) -> str:
        """Display name: the upload's name and the start of its hash."""
        return f"{self.filename}@{self.sha256[:8]}"


def file_kind(path: str) -> str:
    """What a file of a zip is by its name: ``SOURCE``, ``TEXT`` or ``BINARY_DATA``.

    Raises ``PackageError`` for compiled or native code (``__pycache__/``,
    ``.pyc``, ``.so``, ...), which no upload may hold. ``path`` is the entry's
    normalised path (``/``-separated, no ``..``).
    """
    parts = PurePosixPath(path).parts
    if "__pycache__" in parts:
        raise PackageError(f"entry {path!r} is in a __pycache__ folder (compiled Python bytecode); {_NO_CODE_HINT}")
    base = parts[-1].lower()
    suffix = PurePosixPath(base).suffix  # code by any spelling (.PYC, .So); source only as .py
    # versioned native libraries: libfoo.so.1, libfoo.so.1.2
    what = _CODE_SUFFIXES.get(suffix) or ("a native library" if ".so." in base else None)
    if what:
        raise PackageError(f"entry {path!r} is {what} ({suffix if suffix in _CODE_SUFFIXES else '.so'}), not source; {_NO_CODE_HINT}")
    if path.endswith(".py"):
        return SOURCE
    if suffix in BINARY_DATA_SUFFIXES:
        return BINARY_DATA
    return TEXT


def _check_zip_files(name: str, files: dict[str, bytes], limits: UploadLimits) -> None:
    """Every file of a zip is source, text or a small binary data file (``file_kind``)."""
    data_files = f"binary data files ({', '.join(BINARY_DATA_SUFFIXES)}) of at most {describe_bytes(limits.binary_data_bytes)} each"
    for path, content in files.items():
        try:
            kind = file_kind(path)
        except PackageError as exc:
            raise PackageError(f"{name!r}: {exc}") from None
        if kind == BINARY_DATA:
            if len(content) > limits.binary_data_bytes:
                raise PackageError(f"{name!r}: data file {path!r} is too large ({len(content)} bytes); a zip may hold {data_files}")
            what = next((what for magic, what in _CODE_MAGIC if content.startswith(magic)), None)
            if what is None and _is_pe(content):
                what = "a Windows executable or library"
            if what is None and zipfile.is_zipfile(io.BytesIO(content)):
                what = "a zip archive (Python can import code from it)"
            if what:
                raise PackageError(f"{name!r}: data file {path!r} is {what}, not data; {_NO_CODE_HINT}")
        elif kind == TEXT:
            problem = _not_text(content)
            if problem:
                raise PackageError(f"{name!r}: entry {path!r} is not UTF-8 text ({problem}); every file of a bot but its .py source must be UTF-8 text, except {data_files}")
    for path in files:
        # x/__init__.py beside x.py: `import x` takes the folder, and x.py never runs.
        pure = PurePosixPath(path)
        if pure.name == "__init__.py" and len(pure.parts) > 1:
            module = str(pure.parent) + ".py"
            if module in files:
                raise PackageError(f"{name!r}: package {str(pure.parent) + '/'!r} and module {module!r} have the same name; Python imports the package, so {module!r} would never run")


def _is_pe(content: bytes) -> bool:
    """A Windows executable or DLL: ``MZ``, and ``PE\\0\\0`` where its header says."""
    if not content.startswith(b"MZ") or len(content) < 0x40:
        return False
    offset = int.from_bytes(content[0x3C:0x40], "little")
    return content[offset : offset + 4] == b"PE\x00\x00"


def _not_text(content: bytes) -> str | None:
    """Why ``content`` is not UTF-8 text, or None when it is."""
    nul = content.find(b"\x00")
    if nul >= 0:
        return f"NUL byte at offset {nul}"
    try:
        content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"invalid byte 0x{content[exc.start]:02x} at offset {exc.start}"
    return None


def _check_size(name: str, size: int, cap: int, what: str) -> None:
    if size > cap:
        raise PackageError(f"{name!r} is too large: {what} may be at most {describe_bytes(cap)}, this one is more than that ({size} bytes read)")
    if size == 0:
        raise PackageError(f"{name!r} is empty")


def _parse_source(where: str, content: bytes) -> ast.Module:
    nul = content.find(b"\x00")
    if nul >= 0:
        raise PackageError(f"{where}: binary file, not Python source (NUL byte at offset {nul})")
    try:
        source = content.decode("utf-8-sig")  # a BOM (Windows editors) is fine: Python accepts it
    except UnicodeDecodeError as exc:
        raise PackageError(f"{where}: source is not UTF-8 (invalid byte 0x{content[exc.start]:02x} at offset {exc.start})") from None
    try:
        tree = ast.parse(source, filename=where)
        compile(tree, where, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise PackageError(f"{where}: does not compile: {exc.msg} (line {exc.lineno})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PackageError(f"{where}: does not compile: {type(exc).__name__}: {exc}") from None
    return tree


#: literals that can never be called: ``agent = 5`` is a mistake, not a bot
_LITERALS = (ast.Constant, ast.List, ast.Dict, ast.Set, ast.Tuple, ast.JoinedStr, ast.ListComp, ast.DictComp, ast.SetComp)


def _agent_problem(tree: ast.Module) -> str | None:
    """Why the module cannot have a callable top-level ``agent``, or None when it may.

    Any module-level binding of the name counts (def, class, assignment of any
    form, ``:=``, import, ``for``/``with`` targets, inside ``if``/``try``/
    ``with``/``for``/``while``/``match`` blocks), and so does anything that may
    bind it unseen (``from m import *``, ``globals()``, ``exec``): only the
    import can tell, and the validation match does. A name bound only to a
    literal (``agent = 5``) is refused: it is never callable.
    """
    bindings: list[ast.AST | None] = []  # the value bound, None when unknown or callable

    def target_binds(target: ast.AST) -> bool:
        if isinstance(target, ast.Name):
            return target.id == "agent"
        if isinstance(target, ast.Tuple | ast.List):
            return any(target_binds(t) for t in target.elts)
        if isinstance(target, ast.Starred):
            return target_binds(target.value)
        return False

    def expressions(node: ast.AST) -> None:
        # walrus targets and globals()/exec() calls in module-level code, not inside defs or lambdas
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            if isinstance(current, ast.NamedExpr) and target_binds(current.target):
                bindings.append(current.value)
            if isinstance(current, ast.Call) and isinstance(current.func, ast.Name) and current.func.id in ("globals", "exec", "vars", "setattr", "__import__"):
                bindings.append(None)
            stack.extend(ast.iter_child_nodes(current))

    def walk(statements: Iterable[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name == "agent":
                    bindings.append(None)
                for decorator in node.decorator_list:
                    expressions(decorator)
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == "agent":
                        bindings.append(None)
                continue
            if isinstance(node, ast.Assign):
                if any(target_binds(t) for t in node.targets):
                    only_name = all(isinstance(t, ast.Name) for t in node.targets)
                    bindings.append(node.value if only_name else None)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None and target_binds(node.target):
                    bindings.append(node.value)
            elif isinstance(node, ast.AugAssign):
                if target_binds(node.target):
                    bindings.append(None)
            elif isinstance(node, ast.For | ast.AsyncFor):
                if target_binds(node.target):
                    bindings.append(None)
            elif isinstance(node, ast.With | ast.AsyncWith):
                if any(item.optional_vars is not None and target_binds(item.optional_vars) for item in node.items):
                    bindings.append(None)
            elif isinstance(node, ast.Try | ast.TryStar):
                if any(handler.name == "agent" for handler in node.handlers):
                    bindings.append(None)
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    if any(isinstance(n, ast.MatchAs | ast.MatchStar) and n.name == "agent" for n in ast.walk(case.pattern)):
                        bindings.append(None)
            if not hasattr(node, "body"):
                expressions(node)  # a simple statement, all of it
            for header in ("test", "iter", "subject", "items"):  # a block's header
                part = getattr(node, header, None)
                for item in part if isinstance(part, list) else [part] if part is not None else []:
                    expressions(item)
            for block in ("body", "orelse", "finalbody"):
                walk(getattr(node, block, ()))
            for handler in getattr(node, "handlers", ()):
                walk(handler.body)
            for case in getattr(node, "cases", ()):
                walk(case.body)

    walk(tree.body)
    if not bindings:
        return "no top-level `agent` defined (write `def agent(observation, configuration): ...`)"
    if all(isinstance(value, _LITERALS) for value in bindings):
        kinds = sorted({type(value.value).__name__ if isinstance(value, ast.Constant) else type(value).__name__.lower() for value in bindings})
        return f"`agent` is bound only to a literal ({', '.join(kinds)}), never to something callable (write `def agent(observation, configuration): ...`)"
    return None


def _unpack_zip(name: str, data: bytes, limits: UploadLimits) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise PackageError(f"{name!r} is not a valid zip archive: {exc}") from None
    if len(entries) > limits.zip_entries:
        raise PackageError(f"{name!r} has {len(entries)} entries; at most {limits.zip_entries} are allowed")
    files: dict[str, bytes] = {}
    total = 0
    with archive:
        for info in entries:
            path = _check_entry_name(name, info)
            if info.is_dir() and "__pycache__" in path.split("/"):
                raise PackageError(f"{name!r}: entry {info.filename!r} is a __pycache__ folder (compiled Python bytecode); {_NO_CODE_HINT}")
            # macOS Finder adds __MACOSX/ (resource forks): metadata, never the bot's files.
            if info.is_dir() or path.split("/")[0] == "__MACOSX":
                continue
            if path in files:
                raise PackageError(f"{name!r}: entry {info.filename!r} appears twice")
            if info.flag_bits & 0x1:
                raise PackageError(f"{name!r}: entry {info.filename!r} is encrypted")
            # Declared sizes can lie (zip bombs): count what is really inflated.
            chunks = []
            try:
                with archive.open(info) as member:
                    while chunk := member.read(_READ_CHUNK):
                        total += len(chunk)
                        if total > limits.unpacked_bytes:
                            raise PackageError(f"{name!r} unpacks to more than {describe_bytes(limits.unpacked_bytes)} (stopped in entry {info.filename!r})")
                        chunks.append(chunk)
            except PackageError:
                raise
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError, RuntimeError, ValueError) as exc:
                raise PackageError(f"{name!r}: entry {info.filename!r} cannot be read: {exc}") from None
            files[path] = b"".join(chunks)
    for path in files:
        # "a" as a file and "a/b" beside it cannot both be written out.
        parents = PurePosixPath(path).parents
        clash = next((str(p) for p in parents if str(p) in files), None)
        if clash is not None:
            raise PackageError(f"{name!r}: entry {path!r} lies under {clash!r}, which is a file")
    if ENTRY_MODULE not in files:
        nested = sorted(p for p in files if PurePosixPath(p).name == ENTRY_MODULE)
        hint = f" (found {nested[0]!r}: zip the files, not their folder)" if nested else ""
        raise PackageError(f"{name!r}: no {ENTRY_MODULE} at the root of the archive{hint}")
    return files


def _check_entry_name(name: str, info: zipfile.ZipInfo) -> str:
    raw = info.filename
    unix_mode = info.external_attr >> 16
    kind = stat.S_IFMT(unix_mode)
    if kind == stat.S_IFLNK:
        raise PackageError(f"{name!r}: entry {raw!r} is a symbolic link; links are not allowed")
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise PackageError(f"{name!r}: entry {raw!r} is not a regular file (mode {oct(unix_mode)})")
    normal = raw.replace("\\", "/")
    if normal.startswith("/") or (len(normal) > 1 and normal[1] == ":"):
        raise PackageError(f"{name!r}: entry {raw!r} has an absolute path")
    parts = [p for p in normal.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PackageError(f"{name!r}: entry {raw!r} contains '..'")
    if "\x00" in normal or not parts:
        raise PackageError(f"{name!r}: entry name {raw!r} is not a valid path")
    if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in parts) or len(parts) > 32:
        raise PackageError(f"{name!r}: entry name {raw[:80]!r} is too long or too deep")
    return "/".join(parts)
