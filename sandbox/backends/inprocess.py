"""In-process backend: the bot's ``agent`` called directly. Trusted code only.

For reference bots (our own code) and for ``arena play`` on the author's own
machine, where authors test a bot before uploading it: a package seat
(``InProcessSeat.from_package``) behaves like the same bot in a sandbox as far
as a plain function call can.

- Own modules: the bot is imported as ``main`` (as in the sandbox) with its
  folder first on its own ``sys.path``; every module that lives in its folder
  (imported at load time or later, during a decision) belongs to that seat
  alone and is in ``sys.modules`` only while the seat's code runs. Two bots
  with a ``helper.py`` each, or one bot in two seats, never share a module, and
  a bot's ``engine.py`` is not the arena's ``engine``. A bot's module named
  like a standard module the sandbox's bot host has already imported (say
  ``json.py``) is not used, as in the sandbox.
- Working directory: the bot's folder during its import and every decision
  (a ``chdir`` of the bot's own is kept for its next decision), so relative
  paths to its data files work as in the sandbox.
- Faults as in the sandbox: an exception (``SystemExit`` and a
  ``KeyboardInterrupt`` the bot raises itself too), a reply that is not JSON
  (also one nested too deep to encode). A real Ctrl-C still stops the caller:
  while bot code runs in the main thread, SIGINT is noted by a handler of ours
  and raised again afterwards, whatever the bot does with it.

Still not as in a sandbox: no preemption (a decision that runs too long is
measured afterwards and faulted like in a sandbox, but cannot be interrupted);
no resource limits (memory, processes, files, CPU); prints are captured at the
Python level only (``sys.stdout``/``sys.stderr``: output written to fd 1/2
directly, via ``os.write``, C code or a child process, is not captured);
standard modules (and installed packages) are shared with the arena and the
other seats (module-level ``random`` state, a monkeypatch), and what is
installed beside the arena can be imported; ``sys``, ``os.environ`` and the
process are shared. Seats from a plain callable (reference bots) run as they
are: no module, path or directory switching (it costs nothing per decision).
"""

from __future__ import annotations

import _signal
import contextlib
import functools
import importlib.machinery
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from engine.faults import SeatFault
from engine.match import lazy_option
from sandbox.host import (
    ENTRY_MODULE,
    NOT_JSON_ERRORS,
    describe_exception,
    forget_bot_dir,
    load_agent,
    not_json_reason,
)
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.seat import MarksLog, SeatLog, fault_from_error, make_seat_dir, match_time_reason

_MISSING = object()


class _LogWriter(io.TextIOBase):
    def __init__(self, log: SeatLog):
        self.target = log

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.target.add(text)
        return len(text)


@functools.cache
def _host_preloaded() -> frozenset[str]:
    """Top-level modules the sandbox's bot host has imported before it imports a bot.

    There a bot's own module of such a name (a ``json.py``) is never used:
    ``import json`` finds the host's in ``sys.modules``. Asked of a bare
    interpreter once, and only when a bot brings a module named like a
    standard one.
    """
    from sandbox import host

    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('host', sys.argv[1])\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(' '.join(sys.modules))\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, host.__file__],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        # A guess on the safe side: every standard module this process has loaded.
        return frozenset(name for name in sys.stdlib_module_names if name in sys.modules)
    return frozenset(name.partition(".")[0] for name in out.split())


def _provided_names(bot_dir: str) -> frozenset[str]:
    """Top-level module names the bot's folder provides, which resolve to its own files there."""
    suffixes = importlib.machinery.all_suffixes()
    names = set()
    for entry in os.scandir(bot_dir):
        if entry.is_dir(follow_symlinks=False):
            name = entry.name  # a package, or a namespace package
        else:
            name = next((entry.name[: -len(s)] for s in suffixes if entry.name.endswith(s)), "")
        if name.isidentifier() and name != "__pycache__":
            names.add(name)
    # Built-in modules always win over files; the host's own imports win there too.
    names -= set(sys.builtin_module_names)
    if names & sys.stdlib_module_names:
        names -= _host_preloaded()
    return frozenset(names)


class _Namespace:
    """What one package seat's code sees of the process: its modules, ``sys.path`` and directory.

    ``run`` swaps them in around a call of bot code and out again afterwards
    (whatever happens), restoring the arena's.
    """

    def __init__(self, bot_dir: str, tempdir: str | None = None):
        self.bot_dir = bot_dir
        self.tempdir = tempdir  # tempfile's folder while the bot's code runs (its game's own)
        self.prefixes = tuple({os.path.join(bot_dir, ""), os.path.join(os.path.realpath(bot_dir), "")})
        self.shadowed = _provided_names(bot_dir)
        self.modules: dict[str, ModuleType] = {}
        self.path = [bot_dir, *(p for p in sys.path if p != bot_dir)]
        self.cwd = bot_dir
        self.interrupted = False  # a real SIGINT arrived during the last run
        self.armed = False
        self._subs: dict[str, tuple[int, list[str]]] = {}

    def owns(self, name: str, module: object) -> bool:
        """True for a module that is the bot's: loaded from its folder, or under a name it provides."""
        if name.partition(".")[0] in self.shadowed:
            return True
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and where.startswith(self.prefixes):
            return True
        path = getattr(module, "__path__", None)
        try:
            return any(isinstance(p, str) and p.startswith(self.prefixes) for p in path or ())
        except Exception:  # noqa: BLE001 - a strange __path__ is not ours to judge
            return False

    def run(
        self, writer: io.TextIOBase, function: Callable[..., Any], *args: Any
    ) -> tuple[Any, BaseException | None, float]:
        """Call ``function(*args)`` as the bot's code: ``(result, error, seconds)``.

        ``error`` is what it raised (``result`` is None then). Raises
        ``KeyboardInterrupt`` only for a real SIGINT, after restoring everything.
        """
        modules = sys.modules
        saved: dict[str, object] = {}  # the arena's entries to put back
        arena_path = sys.path
        arena_cwd: str | None = None
        moved = False
        previous_handler, foreign_handler = None, False
        count, last = -1, None
        result: Any = None
        error: BaseException | None = None
        elapsed = 0.0
        self.interrupted = False
        arena_tempdir = tempfile.tempdir
        try:
            tempfile.tempdir = self.tempdir
            # First: from here on a real Ctrl-C is noted, and raised only once all is restored.
            previous_handler, foreign_handler = self._watch_sigint()
            for name in self.shadowed:  # the arena's modules of those names (packages with theirs)
                outside = modules.pop(name, None)
                if outside is not None:
                    saved[name] = outside
                    if hasattr(outside, "__path__"):
                        for sub in self._submodules(name):
                            module = modules.pop(sub, None)
                            if module is not None:
                                saved[sub] = module
            for name, module in self.modules.items():
                if name not in saved:
                    saved[name] = modules.get(name, _MISSING)
                modules[name] = module
            sys.path = self.path
            with contextlib.suppress(OSError):
                arena_cwd = os.getcwd()
            for where in (self.cwd, self.bot_dir):
                with contextlib.suppress(OSError):
                    os.chdir(where)
                    moved = True
                    break
            count, last = len(modules), next(reversed(modules), None)
            started = time.monotonic()
            try:
                with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
                    self.armed = True
                    try:
                        result = function(*args)
                    finally:
                        self.armed = False
                        elapsed = time.monotonic() - started
            except BaseException as exc:  # noqa: BLE001 - anything the bot raises is its fault
                error = exc
        finally:
            self.armed = False
            tempfile.tempdir = arena_tempdir
            if moved:
                with contextlib.suppress(OSError):
                    self.cwd = os.getcwd()  # a chdir of the bot's own lasts, as in a sandbox
                if arena_cwd is not None:
                    with contextlib.suppress(OSError):
                        os.chdir(arena_cwd)
            if sys.path is not self.path and sys.path is not arena_path and isinstance(sys.path, list):
                self.path = sys.path  # the bot set a new list: it keeps it, as in a sandbox
            sys.path = arena_path
            if len(modules) != count or next(reversed(modules), None) != last:
                # The bot imported something: its own modules join the seat's.
                for name, module in list(modules.items()):
                    if name not in self.modules and module is not saved.get(name) and self.owns(name, module):
                        self.modules[name] = module
            for name in list(self.modules):
                current = modules.pop(name, _MISSING)
                if current is _MISSING:
                    del self.modules[name]  # the bot removed it: gone for it, as in a sandbox
                else:
                    self.modules[name] = cast(ModuleType, current)
            for name, entry in saved.items():
                if entry is _MISSING:
                    modules.pop(name, None)
                else:
                    modules[name] = cast(ModuleType, entry)  # taken from sys.modules above
            if previous_handler is not None:  # last: a Ctrl-C while restoring waited for it
                _signal.signal(signal.SIGINT, previous_handler)
        if self.interrupted:
            raise KeyboardInterrupt
        if foreign_handler and isinstance(error, KeyboardInterrupt):
            raise error  # cannot tell it from a real Ctrl-C: passed on, as for reference bots
        return result, error, elapsed

    def _submodules(self, name: str) -> list[str]:
        """The names under the arena's package ``name`` in ``sys.modules`` (cached while its size stays)."""
        size = len(sys.modules)
        cached = self._subs.get(name)
        if cached is None or cached[0] != size:
            prefix = name + "."
            cached = self._subs[name] = (size, [key for key in sys.modules if key.startswith(prefix)])
        return cached[1]

    def _watch_sigint(self) -> tuple[Callable[..., Any] | None, bool]:
        """Put our SIGINT handler in place of Python's default one: ``(handler to restore, foreign)``.

        ``foreign`` means someone else's handler is in place: a
        ``KeyboardInterrupt`` may be a real one then, and is passed on.
        """
        if threading.current_thread() is not threading.main_thread():
            return None, False  # SIGINT never raises in this thread: a KeyboardInterrupt here is the bot's
        # _signal: the C module under ``signal``, without its enum wrapping (10 us a call pair)
        previous = _signal.getsignal(signal.SIGINT)
        if previous is signal.default_int_handler:
            _signal.signal(signal.SIGINT, self._on_sigint)
            return previous, False
        # SIG_IGN, SIG_DFL: no KeyboardInterrupt comes from a SIGINT then
        return None, previous not in (signal.SIG_IGN, signal.SIG_DFL, None)

    def _on_sigint(self, signum: int, frame: object) -> None:
        self.interrupted = True
        if self.armed:  # in bot code: stop it; in our restoring code: raised after it
            raise KeyboardInterrupt

    def close(self) -> None:
        self.modules.clear()
        forget_bot_dir(self.bot_dir)
        for key in [k for k in sys.path_importer_cache if isinstance(k, str) and k.startswith(self.prefixes + (self.bot_dir,))]:
            sys.path_importer_cache.pop(key, None)


#: ``os.environ`` is one per process: seats stopping in parallel (the runner stops a match's
#: seats on a thread pool) restore it one at a time
_ENVIRON_LOCK = threading.Lock()


def _restore_environment(saved: dict[str, str] | None) -> None:
    """Put ``os.environ`` back as ``saved`` (what a bot's game set is gone before the next)."""
    if saved is None:
        return
    with _ENVIRON_LOCK:
        for key in [k for k in list(os.environ) if k not in saved]:
            os.environ.pop(key, None)
        for key, value in saved.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


class InProcessSeat(MarksLog):
    """An engine seat calling ``agent`` in this process, with the sandbox's clocks and log.

    ``lazy_observation=True`` (trusted callables only, never with ``copy_json``,
    which package seats use to see what a sandboxed bot sees): the referee hands
    the agent ``Game.snapshot()``, a read-only ``engine.snapshot.Snapshot``,
    instead of a fresh plain dict (docs/engine.md, "Observations: plain or snapshot").

    >>> seat = InProcessSeat(lambda o, c: o["legal_actions"][0], Limits(), "first")
    >>> seat.decide({"legal_actions": [{"type": "draw"}]}, {})
    {'type': 'draw'}
    """

    def __init__(
        self,
        agent: Callable[..., Any] | None,
        limits: Limits,
        name: str,
        *,
        copy_json: bool = False,
        lazy_observation: bool = False,
    ) -> None:
        if lazy_option(lazy_observation) and copy_json:
            raise ValueError("lazy_observation is for trusted in-process agents: a copy_json seat gets plain JSON dicts")
        #: read by the referee (``engine.match.play_match``): hand this seat snapshots, not dicts
        self.lazy_observation = lazy_observation
        self.agent = agent
        self.limits = limits
        self.name = name
        self.copy_json = copy_json
        self.bank = limits.time_bank
        self.log = SeatLog(limits.log_bytes)
        self.faults: list[str] = []
        self.fault: SeatFault | None = None
        self.last_decision_seconds = 0.0
        self.log_marks: list[int] = []  # as SandboxSeat.log_marks: prints are captured as they happen
        self.cleanup: Callable[[], None] | None = None
        self.namespace: _Namespace | None = None  # a package seat's own modules, path and directory
        self.match_left = limits.time_per_match  # the match clock, across all its games
        self.package: BotPackage | None = None  # a package seat: imported afresh for each game
        self.game: int | None = None
        self.environ: dict[str, str] | None = None  # the environment at the seat's start

    @classmethod
    def from_package(cls, package: BotPackage, limits: Limits, name: str) -> InProcessSeat:
        """Import ``package`` here, in a namespace of its own; an import error faults the seat.

        The entry module is named ``main`` as in the sandbox: every seat has
        its own ``sys.modules`` view, so names need not be unique.
        """
        seat = cls(None, limits, name, copy_json=True)
        seat.package = package
        seat.environ = dict(os.environ)
        seat._load()
        return seat

    def begin_game(self, game_index: int) -> None:
        """Before each game (the referee calls it): every game after the first imports the bot afresh.

        A new copy of its files in a new folder (working directory and temp
        folder), a new namespace (its modules imported again), and the
        environment as it was when the seat started: nothing of the previous
        game's module state or files is left. Plain callables (reference bots)
        are left as they are.
        """
        if self.package is None or self.fault is not None:
            return
        if self.game is None or self.game == game_index:
            self.game = game_index
            return
        self.game = game_index
        self.agent = None
        if self.cleanup is not None:
            self.cleanup()
            self.cleanup = None
        _restore_environment(self.environ)
        self._load()

    def _load(self) -> None:
        assert self.package is not None  # only a package seat loads
        package = self.package
        workdir = Path(make_seat_dir("inprocess"))
        namespace = None

        def cleanup() -> None:
            if namespace is not None:
                namespace.close()
            shutil.rmtree(workdir, ignore_errors=True)

        self.cleanup = cleanup
        try:
            bot_dir = str(package.write_to(workdir / "bot"))
            (workdir / "tmp").mkdir()
            namespace = self.namespace = _Namespace(bot_dir, str(workdir / "tmp"))
            agent, error, elapsed = namespace.run(_LogWriter(self.log), load_agent, bot_dir, ENTRY_MODULE.removesuffix(".py"))
        except BaseException:
            self.stop()  # a real Ctrl-C, or our own failure: nothing is left behind
            raise
        if error is not None:
            self._record(self._fault_for(describe_exception(error), at_import=True))
        elif elapsed > self.limits.start_seconds:
            self._record(SeatFault("crash", f"bot did not start within {self.limits.start_seconds:g} s (import too slow?)"))
        else:
            self.agent = agent

    def _decide(self, observation: Mapping[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
        if self.fault is not None:
            raise self.fault
        agent = self.agent
        assert agent is not None  # a seat without its agent has a fault
        if self.copy_json:
            # Same view as a sandboxed bot gets: JSON values, nothing shared with the engine.
            observation = json.loads(json.dumps(observation))
            configuration = json.loads(json.dumps(configuration))
        writer = _LogWriter(self.log)
        if self.namespace is not None:
            action, error, elapsed = self.namespace.run(writer, agent, observation, configuration)
            self.last_decision_seconds = elapsed
            if error is not None:
                raise self._record(self._fault_for(describe_exception(error))) from None
        else:
            started = time.monotonic()
            try:
                with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
                    action = agent(observation, configuration)
            except BaseException as exc:  # noqa: BLE001 - SystemExit from a bot is a fault, not our exit
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise self._record(self._fault_for(describe_exception(exc))) from None
            finally:
                elapsed = time.monotonic() - started
                self.last_decision_seconds = elapsed
        match_left = self.match_left
        self.match_left = max(0.0, match_left - elapsed)
        allowed = self.limits.time_per_decision + self.bank
        if elapsed > match_left and match_left <= allowed:
            # as in the sandbox: the match clock bound this decision, and it ran out
            raise self._record(SeatFault("match_time", match_time_reason(self.limits)))
        over = elapsed - self.limits.time_per_decision
        if over > 0:
            if over > self.bank:
                self.bank = 0.0
                raise self._record(SeatFault("timeout", f"no reply within {self.limits.time_per_decision:g} s and the time bank ({self.limits.time_bank:g} s) is used up ({elapsed:.2f} s)"))
            self.bank -= over
        if self.copy_json:
            try:
                action = json.loads(json.dumps(action, allow_nan=False))
            except NOT_JSON_ERRORS as exc:  # as the bot host: one nested too deep to encode too
                raise self._record(SeatFault("illegal", not_json_reason(action, exc))) from None
        reply: dict[str, Any] = action
        return reply

    def stop(self) -> None:
        if self.cleanup is not None:
            self.cleanup()
            self.cleanup = None
        if self.environ is not None:
            _restore_environment(self.environ)  # the last game's variables go with it too
            self.environ = None

    def _fault_for(self, error: dict[str, Any], at_import: bool = False) -> SeatFault:
        if at_import:
            error = {**error, "reason": f"exception at import: {error['reason']}"}
        return fault_from_error(error, self.limits)

    def _record(self, fault: SeatFault) -> SeatFault:
        self.faults.append(str(fault))
        if fault.forfeits:
            self.fault = fault
        return fault
