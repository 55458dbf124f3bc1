"""The bot host program, run as a plain subprocess on a socketpair (no sandbox)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import sandbox.host
from sandbox.host import encode_frame
from sandbox.limits import Limits
from sandbox.seat import Channel, ChannelClosed

HOST = sandbox.host.__file__
OBS = {"legal_actions": [{"type": "draw"}]}


def start_host(tmp_path, source: str | None, log_bytes: int = 65536, extra: tuple[str, ...] = ()):
    bot = tmp_path / "bot"
    bot.mkdir(exist_ok=True)
    if source is not None:
        (bot / "main.py").write_text(textwrap.dedent(source))
    referee, child = socket.socketpair()
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", HOST, "--bot", str(bot), "--fd", str(child.fileno()), "--log-bytes", str(log_bytes),
         *extra],
        pass_fds=(child.fileno(),),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.close()
    return process, Channel(referee, Limits().frame_bytes)


def frames_until(channel: Channel, op: str, timeout: float = 5.0) -> tuple[dict, list[dict]]:
    """The first frame with ``op`` and the log frames before it."""
    logs = []
    deadline = time.monotonic() + timeout
    while True:
        message = channel.recv(deadline)
        assert message is not None, f"no {op} frame within {timeout} s"
        if message.get("op") == op:
            return message, logs
        logs.append(message)


@pytest.fixture
def host(tmp_path):
    started = []

    def start(source: str, **kwargs):
        process, channel = start_host(tmp_path, source, **kwargs)
        started.append(process)
        return process, channel

    yield start
    for process in started:
        process.kill()
        process.wait()


def test_host_answers_decide_with_the_agents_action_under_the_same_id(host):
    _, channel = host("def agent(o, c):\n    return {'type': 'draw', 'seen': c['x']}\n")
    hello, _ = frames_until(channel, "hello")
    assert hello == {"op": "hello", "id": 0, "ok": True}
    channel.send({"op": "decide", "id": 7, "observation": {}, "configuration": {"x": 3}})
    reply, _ = frames_until(channel, "reply")
    assert reply == {"op": "reply", "id": 7, "action": {"type": "draw", "seen": 3}}


def test_prints_from_python_c_level_and_children_become_log_frames_not_protocol(host):
    process, channel = host(
        """
        import os, subprocess, sys
        print("py stdout")
        os.write(2, b"raw fd 2\\n")
        subprocess.run([sys.executable, "-c", "print('from a child')"])
        def agent(o, c):
            print("in agent")
            return {"type": "draw"}
        """
    )
    _, before_hello = frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {}, "configuration": {}})
    _, before_reply = frames_until(channel, "reply")
    channel.send({"op": "stop", "id": 2})
    assert process.wait(timeout=5) == 0
    logs = before_hello + before_reply
    with pytest.raises(ChannelClosed):  # the host said all it had, then exited
        while (message := channel.recv(time.monotonic() + 2)) is not None:
            logs.append(message)
    text = "".join(m.get("data", "") for m in logs)
    assert "py stdout\n" in text and "raw fd 2\n" in text and "from a child\n" in text
    assert process.stdout.read() == b"" and process.stderr.read() == b""


def test_exception_in_agent_is_reported_with_type_and_message(host):
    _, channel = host("def agent(o, c):\n    return 1 / 0\n")
    frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply["error"] == {"kind": "exception", "reason": "ZeroDivisionError: division by zero"}


def test_sys_exit_in_agent_is_a_fault_not_the_hosts_exit(host):
    process, channel = host("import sys\ndef agent(o, c):\n    sys.exit(3)\n")
    frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply["error"] == {"kind": "exception", "reason": "SystemExit: 3"}
    assert process.poll() is None


def test_non_json_action_is_reported_as_illegal(host):
    _, channel = host("def agent(o, c):\n    return {1, 2}\n")
    frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply["error"]["kind"] == "illegal"
    assert "not JSON (set)" in reply["error"]["reason"]


def test_a_reply_over_the_frame_cap_is_an_illegal_action_and_the_host_goes_on(host):
    process, channel = host(
        "def agent(o, c):\n    return {'type': 'draw', 'pad': 'x' * (2 << 20)} if o.get('big') else {'type': 'draw'}\n"
    )
    frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {"big": True}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply["id"] == 1 and reply["error"]["kind"] == "illegal"
    assert "a reply may be at most 1048576" in reply["error"]["reason"]
    channel.send({"op": "decide", "id": 2, "observation": {}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply == {"op": "reply", "id": 2, "action": {"type": "draw"}}
    assert process.poll() is None


def test_exception_at_import_is_reported_in_hello(host):
    _, channel = host("import nonexistent_module_xyz\n")
    hello, _ = frames_until(channel, "hello")
    assert hello["error"] == {
        "kind": "exception",
        "reason": "exception at import: ModuleNotFoundError: No module named 'nonexistent_module_xyz'",
    }


@pytest.mark.slow
def test_log_is_capped_and_marked_truncated(host):
    _, channel = host("print('x' * 5000)\ndef agent(o, c):\n    return {}\n", log_bytes=1000)
    _, logs = frames_until(channel, "hello")
    deadline = time.monotonic() + 1
    while (message := channel.recv(deadline)) is not None:
        logs.append(message)
    assert sum(len(m.get("data", "")) for m in logs) == 1000
    assert logs[-1] == {"op": "log", "truncated": True}


def test_oversized_request_frame_makes_the_host_exit(host):
    process, channel = host("def agent(o, c):\n    return {}\n")
    frames_until(channel, "hello")
    channel.sock.sendall(b"\xff\xff\xff\xff" + encode_frame({"op": "decide"}))
    assert process.wait(timeout=5) == 2


def test_unencodable_deep_or_circular_actions_are_illegal_not_a_crash(host):
    process, channel = host(
        """
        calls = 0
        def agent(o, c):
            global calls
            calls += 1
            if calls == 1:
                deep = []
                for _ in range(100000):
                    deep = [deep]
                return deep
            loop = {}
            loop["self"] = loop
            return loop
        """
    )
    frames_until(channel, "hello")
    for request_id in (1, 2):
        channel.send({"op": "decide", "id": request_id, "observation": {}, "configuration": {}})
        reply, _ = frames_until(channel, "reply")
        assert reply["id"] == request_id and reply["error"]["kind"] == "illegal"
    assert process.poll() is None


def test_exception_that_cannot_be_printed_is_still_reported(host):
    _, channel = host(
        """
        class Weird(Exception):
            def __str__(self):
                raise RuntimeError("no")
        def agent(o, c):
            raise Weird()
        """
    )
    frames_until(channel, "hello")
    channel.send({"op": "decide", "id": 1, "observation": {}, "configuration": {}})
    reply, _ = frames_until(channel, "reply")
    assert reply["error"] == {"kind": "exception", "reason": "Weird: <unprintable exception>"}


COMPILED_MAIN = b"""
import helper
def agent(observation, configuration):
    return {"type": "compiled", "file": agent.__code__.co_filename, "helper": helper.where()}
"""
COMPILED_HELPER = b"def where():\n    return where.__code__.co_filename\n"


def test_the_game_process_imports_the_workers_code_file_named_as_its_sources(host, tmp_path):
    # The code file differs from the sources on purpose: what the bot answers shows which ran.
    code = tmp_path / "code.bin"
    code.write_bytes(sandbox.host.compile_bot({"main.py": COMPILED_MAIN, "helper.py": COMPILED_HELPER, "notes.txt": b"x"}))
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "helper.py").write_bytes(b"def where():\n    return 'source'\n")
    _, channel = host("def agent(observation, configuration):\n    return {'type': 'source'}\n",
                      extra=("--code", str(code)))
    hello, _ = frames_until(channel, "hello")
    assert hello.get("ok") is True
    for game in range(2):  # every game's fresh process takes it
        if game:
            channel.send({"op": "game", "id": 5})
            assert frames_until(channel, "hello")[0] == {"op": "hello", "id": 5, "ok": True}
        channel.send({"op": "decide", "id": 10 + game, "observation": OBS, "configuration": {}})
        reply, _ = frames_until(channel, "reply")
        bot = tmp_path / "bot"
        assert reply["action"] == {"type": "compiled", "file": str(bot / "main.py"), "helper": str(bot / "helper.py")}


@pytest.mark.parametrize("blob", [b"\x00\x00\r\n" + b"garbage", b"", None], ids=["other-python", "empty", "missing"])
def test_a_code_file_of_another_python_damaged_or_missing_leaves_the_sources_to_compile(host, tmp_path, blob):
    code = tmp_path / "code.bin"
    if blob is not None:
        good = sandbox.host.compile_bot({"main.py": COMPILED_MAIN})
        code.write_bytes(blob if blob else good[:len(good) // 2])
    _, channel = host("def agent(observation, configuration):\n    return {'type': 'source'}\n", extra=("--code", str(code)))
    assert frames_until(channel, "hello")[0].get("ok") is True
    channel.send({"op": "decide", "id": 1, "observation": OBS, "configuration": {}})
    assert frames_until(channel, "reply")[0]["action"] == {"type": "source"}


def test_the_worker_compiles_a_bot_in_a_child_interpreter_the_same_code_as_in_itself():
    files = {"main.py": COMPILED_MAIN, "helper.py": COMPILED_HELPER, "notes.txt": b"x", "broken.py": b"def ("}
    assert sandbox.host.compile_bot_apart(files) == sandbox.host.compile_bot(files)


@pytest.mark.slow
def test_a_source_that_costs_more_cpu_to_compile_than_the_worker_gives_is_left_to_the_sandbox():
    """An f-string of 200,000 fields is 586 KiB, under the upload limit, and takes about 23 s of CPU
    to compile: the worker's child gives up after COMPILE_CPU_SECONDS and hands no code file (the
    game process compiles the source, on the bot's clock)."""
    bomb = b"x = f'" + b"{a}" * 200_000 + b"'\n"
    started = time.monotonic()
    assert sandbox.host.compile_bot_apart({"main.py": bomb}) == b""
    assert time.monotonic() - started < 3 * sandbox.host.COMPILE_CPU_SECONDS + 5


def _children(pid: int) -> list[int]:
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as handle:
            found += [int(c) for c in handle.read().split()]
    return found


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def test_a_warm_hosts_first_game_process_waits_set_up_and_imports_the_bot_only_once_it_arrives(host, tmp_path):
    process, channel = host(None, extra=("--wait-load",))  # no bot yet: a warm seat
    deadline = time.monotonic() + 5.0
    # The zygote and the first game's parked process, both the supervisor's own children once the
    # zygote's double fork is done (its middle process, briefly a descendant too, has exited then).
    while len(_children(process.pid)) < 2:
        assert time.monotonic() < deadline, "no parked game process came up"
        time.sleep(0.02)
    parked = set(_descendants(process.pid))
    (tmp_path / "bot" / "main.py").write_text(
        "import os\ndef agent(observation, configuration):\n    return {'type': 'draw', 'pid': os.getpid()}\n")
    channel.send({"op": "load"})
    assert frames_until(channel, "hello")[0] == {"op": "hello", "id": 0, "ok": True}
    channel.send({"op": "decide", "id": 1, "observation": OBS, "configuration": {}})
    first = frames_until(channel, "reply")[0]["action"]["pid"]
    assert first in parked  # the process forked before the bot came played its first game
    channel.send({"op": "game", "id": 2})
    assert frames_until(channel, "hello")[0] == {"op": "hello", "id": 2, "ok": True}
    channel.send({"op": "decide", "id": 3, "observation": OBS, "configuration": {}})
    assert frames_until(channel, "reply")[0]["action"]["pid"] not in parked | {first}  # a fresh one the next


def test_the_hosts_command_line_takes_what_every_backend_writes_and_refuses_the_rest(tmp_path):
    from sandbox.backends.process import bwrap_command
    from sandbox.docker_backend import container_options

    class Api:  # container_options builds its host config through the client; only the command is read here
        @staticmethod
        def create_host_config(**options):
            return options

    class Client:
        api = Api()

    docker = container_options(Client(), Limits(), "m1", 0, str(tmp_path))["command"]
    args = sandbox.host.parse_arguments(docker[docker.index("-c") + 2:])
    assert (args.bot, args.connect, args.fd, args.label, args.code) == ("/sandbox/bot", "/sandbox/chan/referee.sock", None, "m1-0", "/sandbox/code.bin")
    assert (args.frame_bytes, args.log_bytes, args.wait_load, args.jail, args.scrub, args.no_zygote) == (Limits().frame_bytes, Limits().log_bytes, False, None, None, False)
    bwrap = bwrap_command("bwrap", "python3", Limits(), 5, "m1-1", seccomp_fd=7)
    args = sandbox.host.parse_arguments(bwrap[bwrap.index("-B") + 2:])  # after the interpreter's -B and the program
    assert (args.fd, args.jail, args.scrub, args.drop_caps, args.seccomp_fd) == (5, "pidns", ["/tmp", "/home/bot", "/dev/shm"], True, 7)
    assert args.tmpfs and args.tmpfs_inodes == Limits().tmp_inodes and args.thread_stack_bytes > 0
    assert sandbox.host.parse_arguments(["--bot=/b", "--fd=3", "--wait-load", "--hello-id", "4"]).hello_id == 4
    for wrong in (["--fd", "3"], ["--bot", "/b"], ["--bot", "/b", "--fd", "3", "--connect", "/s"], ["--bot", "/b", "--fd", "x"],
                  ["--bot", "/b", "--fd", "3", "--jail", "all"], ["--bot", "/b", "--fd", "3", "--verbose"],
                  ["--bot", "/b", "--fd", "3", "--wait-load=1"], ["--bot", "/b", "--fd"]):
        with pytest.raises(sandbox.host.UsageError):
            sandbox.host.parse_arguments(wrong)


def test_a_wrong_command_line_is_the_hosts_exit_code_2_with_its_reason(tmp_path):
    done = subprocess.run([sys.executable, "-I", "-S", HOST, "--bot", str(tmp_path)], capture_output=True, timeout=30)
    assert (done.returncode, done.stderr) == (2, b"host.py: one of --fd and --connect is required\n")


def test_descriptors_passed_with_the_hosts_own_helpers_arrive():
    ours, theirs = socket.socketpair()
    read_end, write_end = os.pipe()
    try:
        sandbox.host.send_fds(ours, [b"7 park\n"], [read_end, write_end])
        message, fds, _, _ = sandbox.host.recv_fds(theirs, 64, 2)
        assert message == b"7 park\n" and len(fds) == 2
        os.write(fds[1], b"through the passed pipe")
        assert os.read(read_end, 64) == b"through the passed pipe"
        for fd in fds:
            os.close(fd)
    finally:
        for fd in (read_end, write_end):
            os.close(fd)
        ours.close()
        theirs.close()


def test_the_supervisor_reads_the_id_of_decide_and_reply_frames_only_as_encode_frame_writes_them():
    # what tells a late reply (no freeze: the game holds a newer request) from one the referee takes
    assert sandbox.host.relayed_id(encode_frame({"op": "decide", "id": 12, "observation": OBS})) == 12
    assert sandbox.host.relayed_id(encode_frame({"op": "reply", "id": 3, "action": {"type": "draw"}})) == 3
    assert sandbox.host.relayed_id(encode_frame({"op": "reply", "id": 3})) == 3
    # anything else is unread, so such a reply freezes the game as one the referee takes
    assert sandbox.host.relayed_id(encode_frame({"op": "reply", "action": 1, "id": 3})) is None
    assert sandbox.host.relayed_id(encode_frame({"op": "reply", "id": "3"})) is None
    assert sandbox.host.relayed_id(encode_frame({"op": "reply", "id": -3})) is None
    assert sandbox.host.relayed_id(encode_frame({"op": "hello", "id": 3})) is None
    assert sandbox.host.relayed_id(b"\x00\x00\x00\x02{}") is None
