"""System calls through a foreign ABI (32-bit ``int $0x80``, x32) on each backend.

A static x86_64 program, compiled with gcc at test time (skipped without
gcc, or on another architecture), makes ``getpid`` through the ABI named by
its argument and prints what it got. The seats' seccomp policy
(``sandbox.seccomp``) allows only the host's native ABI: under runc and under
the process backend's filter a call through another ABI never reaches the
kernel, libseccomp's bad-architecture action kills the caller (SIGSYS).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import docker_backend, seccomp

ABI_PROBE = r"""
#include <stdio.h>
#include <string.h>
/* getpid through one ABI: native x86_64 (39), i386 by int $0x80 (20), x32 (39 | __X32_SYSCALL_BIT) */
static long native(void) { long r; __asm__ volatile ("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory"); return r; }
static long i386(void) { long r; __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory"); return (long)(int)r; }
static long x32(void) { long r; __asm__ volatile ("syscall" : "=a"(r) : "a"(0x40000000L | 39L) : "rcx", "r11", "memory"); return r; }
int main(int argc, char **argv) {
    long r;
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "native")) r = native();
    else if (!strcmp(argv[1], "i386")) r = i386();
    else if (!strcmp(argv[1], "x32")) r = x32();
    else return 2;
    printf("%ld\n", r);
    return 0;
}
"""
ABIS = ("native", "i386", "x32")

#: runs the probe once per ABI; prints {abi: [exit status (negative: the signal), getpid's value or null]}
RUN_ALL = (
    "import json, subprocess, sys\n"
    "out = {}\n"
    "for abi in sys.argv[2:]:\n"
    "    p = subprocess.run([sys.argv[1], abi], capture_output=True, text=True)\n"
    "    out[abi] = [p.returncode, int(p.stdout) if p.stdout.strip() else None]\n"
    "print(json.dumps(out))\n"
)

KILLED = [-signal.SIGSYS, None]


@pytest.fixture(scope="module")
def abi_probe(tmp_path_factory) -> Path:
    if platform.machine() != "x86_64":
        pytest.skip("the probe is x86_64 code (int $0x80, x32 system call numbers)")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: the foreign-ABI probe is compiled at test time")
    folder = tmp_path_factory.mktemp("abi")
    folder.chmod(0o755)  # the seat's user (10001) reads it through the bind mount
    (folder / "abi.c").write_text(ABI_PROBE)
    built = subprocess.run([gcc, "-static", "-O2", "-o", str(folder / "abi"), str(folder / "abi.c")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return folder / "abi"


def outcomes(output: str) -> dict[str, list]:
    return json.loads(output.strip().splitlines()[-1])


def test_the_process_filter_kills_a_call_through_a_foreign_abi(abi_probe):
    unfiltered = outcomes(subprocess.run([sys.executable, "-c", RUN_ALL, str(abi_probe), *ABIS],
                                         capture_output=True, text=True, check=True).stdout)
    # the premise: without a filter the 32-bit ABI reaches the kernel here (x32 needs CONFIG_X86_X32_ABI)
    assert unfiltered["i386"][0] == 0 and unfiltered["i386"][1] > 0, unfiltered
    # the filter installed as the supervisor installs it (host.confine), then the probe runs under it
    install = (
        "import os, sys, types\n"
        "from sandbox import host\n"
        "host.confine(types.SimpleNamespace(tmpfs=None, drop_caps=False, seccomp_fd=int(sys.argv[1])))\n"
        "sys.argv[1:] = sys.argv[2:]\n"
    )
    fd = seccomp.filter_fd()
    try:
        filtered = outcomes(subprocess.run([sys.executable, "-c", install + RUN_ALL, str(fd), str(abi_probe), *ABIS],
                                           capture_output=True, text=True, check=True, pass_fds=(fd,)).stdout)
    finally:
        os.close(fd)
    assert filtered["native"][0] == 0 and filtered["native"][1] > 0, filtered
    assert filtered["i386"] == KILLED and filtered["x32"] == KILLED, filtered


def run_in_a_seat(client, probe: Path, security_opt: list[str], runtime: str | None = None) -> dict[str, list]:
    """The probe in a container locked down like a seat, bind-mounted read-only; removed when it exits."""
    output = client.containers.run(
        docker_backend.IMAGE, ["python3", "-I", "-S", "-c", RUN_ALL, f"/abi/{probe.name}", *ABIS], remove=True,
        network_mode="none", network_disabled=True, read_only=True, cap_drop=["ALL"], user=docker_backend.BOT_USER,
        security_opt=security_opt, runtime=runtime, volumes={str(probe.parent): {"bind": "/abi", "mode": "ro"}},
        labels={docker_backend.LABEL_MATCH: "abi-test", docker_backend.LABEL_STARTED: str(int(time.time()))},
    )
    return outcomes(output.decode())


@pytest.mark.services
@pytest.mark.docker
def test_the_seats_profile_kills_a_call_through_a_foreign_abi_under_runc(docker_client, abi_probe):
    # Docker's default profile (x86_64 with x86 and x32): the 32-bit getpid reaches the kernel
    default = run_in_a_seat(docker_client, abi_probe, ["no-new-privileges"], runtime="runc")
    assert default["i386"][0] == 0 and default["i386"][1] > 0, default
    # the project's profile: runc's filter is for x86_64 alone; another ABI meets libseccomp's
    # bad-architecture action, SIGSYS, before the kernel sees the call
    project = run_in_a_seat(docker_client, abi_probe, seccomp.docker_security_options(None), runtime="runc")
    assert project["native"][0] == 0 and project["native"][1] > 0, project
    assert project["i386"] == KILLED and project["x32"] == KILLED, project


@pytest.mark.services
@pytest.mark.docker
def test_gvisor_answers_a_call_through_a_foreign_abi_with_an_error(docker_client, abi_probe):
    if seccomp.RUNSC not in (docker_client.info().get("Runtimes") or {}):
        pytest.skip("gVisor (runsc) is not registered with this Docker engine (see test_docker_seccomp.py)")
    # runsc does not apply the profile (no --oci-seccomp); its own kernel has no 32-bit or x32 ABI
    seen = run_in_a_seat(docker_client, abi_probe, seccomp.docker_security_options(seccomp.RUNSC), runtime=seccomp.RUNSC)
    assert seen["native"][0] == 0 and seen["native"][1] > 0, seen
    for abi in ("i386", "x32"):
        assert seen[abi][0] == 0 and seen[abi][1] < 0, seen
    print("in gVisor:", seen)
