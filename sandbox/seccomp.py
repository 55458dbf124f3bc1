"""The sandbox's seccomp policies: one list of what a bot never needs, two forms.

* ``process_filter_bpf()``: a deny-list filter for the process backend, built
  with libseccomp (``libseccomp.so.2`` through ctypes, ``seccomp_export_bpf``),
  that the bot host's supervisor installs on itself before any bot code runs
  (``host.py --seccomp-fd``), so every game process inherits it.
* ``docker_profile()``: a Docker seccomp profile (Docker's own JSON format):
  the unconditional allow list of Docker's default profile, minus what is
  denied here, for ``security_opt=["seccomp=<json>"]`` on every seat
  (``docker_security_options()``); ``deploy/sandbox/seccomp.json`` is the same
  profile as a file (a test checks they agree).

Denied (``DENIED``): new namespaces (``unshare``, ``setns``, ``clone`` with any
``CLONE_NEW*`` flag; ``clone3`` answers ENOSYS so the C library falls back to
``clone``, whose flags a filter can read), mounting and changing the root,
``ptrace`` and reading or writing other processes' memory, the kernel
keyrings, ``bpf``, ``io_uring``, ``perf_event_open``, ``userfaultfd``, loading
kernels and modules, rebooting, swap, accounting, quotas, the clock, and
sockets of any family but Unix, IPv4 and IPv6 (no netlink, packet, key,
crypto or vsock sockets). Denied calls fail with EPERM (ENOSYS for
``clone3`` and ``io_uring``, so libraries fall back), they do not kill: a bot
that probes gets an error and plays on.

Both forms are for the host's native ABI alone (x86_64 on x86_64 hosts,
aarch64 on arm64). A call through another ABI (``int $0x80``, x32, arm32) meets
libseccomp's bad-architecture action, which kills the calling thread with
SIGSYS (the process, when it has one thread) before the kernel sees the call:
neither the filter nor runc can make it an error instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

#: the project's Docker seccomp profile as a file (generated from this module: ``python -m sandbox.seccomp``)
DOCKER_PROFILE_PATH = Path(__file__).resolve().parent.parent / "deploy" / "sandbox" / "seccomp.json"

#: clone(2) flags that make a new namespace (CLONE_NEWNS, _NEWCGROUP, _NEWUTS, _NEWIPC, _NEWUSER, _NEWPID, _NEWNET)
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_NAMESPACE_MASK = sum(CLONE_NAMESPACE_FLAGS.values())  # 0x7e020000, as in Docker's default profile

#: socket families a bot may open (Unix for its own pipes, IP for loopback in its empty network namespace)
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
ALLOWED_SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)

#: what no bot needs, by family (names are the kernel's; those unknown on this architecture are skipped)
DENIED: dict[str, tuple[str, ...]] = {
    "namespaces": ("unshare", "setns"),
    "mounts": ("mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
               "fsmount", "fspick", "mount_setattr"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp"),
    "keyrings": ("keyctl", "add_key", "request_key"),
    "kernel interfaces": ("bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie",
                          "open_by_handle_at", "name_to_handle_at", "quotactl", "quotactl_fd", "syslog",
                          "iopl", "ioperm", "vhangup", "acct"),
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "system administration": ("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                              "reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime",
                              "sethostname", "setdomainname"),
}
#: denied with ENOSYS rather than EPERM: callers fall back to an older call (glibc: clone3 to clone)
ENOSYS_CALLS = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")

# -- libseccomp through ctypes -------------------------------------------------

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO_BASE = 0x00050000
SCMP_CMP_EQ, SCMP_CMP_GT, SCMP_CMP_MASKED_EQ = 4, 6, 7
NR_SCMP_ERROR = -1


def scmp_act_errno(code: int) -> int:
    return SCMP_ACT_ERRNO_BASE | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


class SeccompUnavailable(RuntimeError):
    """libseccomp cannot be loaded or refused the filter (the process sandbox cannot start safely)."""


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp not found ({exc}): apt-get install libseccomp2") from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _rule(lib: ctypes.CDLL, ctx: int, action: int, name: str, *comparisons: tuple[int, int, int, int]) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number == NR_SCMP_ERROR:
        return  # not a system call of this architecture
    array = (_ArgCmp * len(comparisons))(*[_ArgCmp(*c) for c in comparisons]) if comparisons else None
    result = lib.seccomp_rule_add_array(ctx, action, number, len(comparisons), array)
    if result < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {name}: {os.strerror(-result)}")


@lru_cache(maxsize=1)
def process_filter_bpf() -> bytes:
    """The process sandbox's filter as classic BPF (``struct sock_filter`` array) for this machine.

    Default: allow. Everything in ``DENIED`` fails (EPERM, or ENOSYS for
    ``ENOSYS_CALLS``), as do ``clone`` with a namespace flag and ``socket`` of a
    family not in ``ALLOWED_SOCKET_FAMILIES``. The filter is for the native ABI
    only (``seccomp_init``'s): a call through another (32-bit ``int 0x80``, or
    x32, whose numbers have bit 30 set) kills the calling thread with SIGSYS,
    libseccomp's default bad-architecture action, as the Docker profile's does.
    """
    lib = _library()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    eperm = scmp_act_errno(errno.EPERM)
    try:
        for names in DENIED.values():
            for name in names:
                _rule(lib, ctx, scmp_act_errno(errno.ENOSYS) if name in ENOSYS_CALLS else eperm, name)
        _rule(lib, ctx, scmp_act_errno(errno.ENOSYS), "clone3")
        # clone's flags are its first argument on every architecture but s390 (which we do not run on)
        for flag in CLONE_NAMESPACE_FLAGS.values():
            _rule(lib, ctx, eperm, "clone", (0, SCMP_CMP_MASKED_EQ, flag, flag))
        # socket(domain): every 64-bit value but 1, 2 and 10 (a value above 10 also covers high bits set
        # to smuggle a small family past the kernel's int truncation)
        last = 0
        for allowed in ALLOWED_SOCKET_FAMILIES:
            for family in range(last, allowed):
                _rule(lib, ctx, eperm, "socket", (0, SCMP_CMP_EQ, family, 0))
            last = allowed + 1
        _rule(lib, ctx, eperm, "socket", (0, SCMP_CMP_GT, max(ALLOWED_SOCKET_FAMILIES), 0))
        fd = os.memfd_create("seccomp-bpf")
        try:
            result = lib.seccomp_export_bpf(ctx, fd)
            if result < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-result)}")
            size = os.lseek(fd, 0, os.SEEK_CUR)
            return os.pread(fd, size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


def filter_fd() -> int:
    """A fresh read-only-positioned memfd holding ``process_filter_bpf()`` (the caller closes it)."""
    data = process_filter_bpf()
    fd = os.memfd_create("uno-arena-seccomp")
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


# -- Docker ----------------------------------------------------------------------

#: Docker's default profile allows these unconditionally (a container without capabilities gets
#: nothing from its capability-gated entries); the project's profile allows them minus DENIED
DOCKER_DEFAULT_ALLOWED = (
    "accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown chown32 clock_adjtime "
    "clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep "
    "clock_nanosleep_time64 close close_range connect copy_file_range creat dup dup2 dup3 epoll_create "
    "epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 "
    "execve execveat exit exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir "
    "fchmod fchmodat fchown fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork "
    "fremovexattr fsetxattr fstat fstat64 fstatat64 fstatfs fstatfs64 fsync ftruncate ftruncate64 futex "
    "futex_time64 futex_waitv futimesat getcpu getcwd getdents getdents64 getegid getegid32 geteuid geteuid32 "
    "getgid getgid32 getgroups getgroups32 getitimer getpeername getpgid getpgrp getpid getppid getpriority "
    "getrandom getresgid getresgid32 getresuid getresuid32 getrlimit get_robust_list getrusage getsid "
    "getsockname getsockopt get_thread_area gettid gettimeofday getuid getuid32 getxattr inotify_add_watch "
    "inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy io_getevents io_pgetevents "
    "io_pgetevents_time64 ioprio_get ioprio_set io_setup io_submit io_uring_enter io_uring_register "
    "io_uring_setup ipc kill landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown lchown32 "
    "lgetxattr link linkat listen listxattr llistxattr _llseek lremovexattr lseek lsetxattr lstat lstat64 "
    "madvise membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall "
    "mmap mmap2 mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend "
    "mq_timedsend_time64 mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap "
    "name_to_handle_at nanosleep newfstatat _newselect open openat openat2 pause pidfd_open pidfd_send_signal "
    "pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2 "
    "prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink "
    "readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages removexattr rename "
    "renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo "
    "rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity "
    "sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min sched_getscheduler "
    "sched_rr_get_interval sched_rr_get_interval_time64 sched_setaffinity sched_setattr sched_setparam "
    "sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop semtimedop_time64 send "
    "sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32 setfsuid setfsuid32 setgid setgid32 "
    "setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid setresgid32 setresuid "
    "setresuid32 setreuid setreuid32 setrlimit set_robust_list setsid setsockopt set_thread_area "
    "set_tid_address setuid setuid32 setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd "
    "signalfd4 sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statx symlink "
    "symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete timer_getoverrun "
    "timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create timerfd_gettime "
    "timerfd_gettime64 timerfd_settime timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask "
    "uname unlink unlinkat utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write "
    "writev"
).split()


#: the host architectures the profile serves, each without its compatibility ABIs (Docker's default
#: lists x86 and x32 under x86_64, arm under aarch64: rules for three ABIs at every start, and a bot's
#: 32-bit calls reach the kernel's compat entry points)
NATIVE_ARCHITECTURES = ("SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64")

#: the gVisor runtime's name; SANDBOX_DOCKER_RUNTIME selects a runtime for every seat
RUNSC = "runsc"


def _denied_names() -> set[str]:
    return {name for names in DENIED.values() for name in names} | set(ENOSYS_CALLS)


def docker_profile(runtime: str | None = None) -> dict[str, Any]:
    """The seats' Docker seccomp profile (Docker's format; default action: EPERM).

    ``runtime="runsc"``: gVisor applies the profile itself (``--oci-seccomp``) but
    ignores ``errnoRet``, so a clone3 rule would answer EPERM and glibc would not
    fall back to clone (no process could start); there clone3 is allowed, and
    gVisor's own kernel answers it with ENOSYS.
    """
    denied = _denied_names()
    allowed = sorted(name for name in DOCKER_DEFAULT_ALLOWED if name not in denied)
    if runtime == RUNSC:
        allowed = sorted([*allowed, "clone3"])
    rules: list[dict[str, Any]] = [
        {"names": allowed, "action": "SCMP_ACT_ALLOW"},
        # threads and processes, never a namespace (Docker's default, for a container without CAP_SYS_ADMIN)
        {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": CLONE_NAMESPACE_MASK, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
        # clone3's flags are in memory, out of a filter's reach: ENOSYS makes glibc use clone
        *([] if runtime == RUNSC else [{"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS}]),
        {"names": ["io_uring_setup", "io_uring_enter", "io_uring_register"], "action": "SCMP_ACT_ERRNO",
         "errnoRet": errno.ENOSYS},
    ]
    for family in ALLOWED_SOCKET_FAMILIES:
        rules.append({"names": ["socket"], "action": "SCMP_ACT_ALLOW",
                      "args": [{"index": 0, "value": family, "valueTwo": 0, "op": "SCMP_CMP_EQ"}]})
    # personality(2): only querying and the values Docker's default allows (0, PER_LINUX32, UNAME26 variants)
    for persona in (0, 8, 131072, 131080, 4294967295):
        rules.append({"names": ["personality"], "action": "SCMP_ACT_ALLOW",
                      "args": [{"index": 0, "value": persona, "valueTwo": 0, "op": "SCMP_CMP_EQ"}]})
    rules.append({"names": ["arch_prctl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64", "x32"]}})
    rules.append({"names": ["modify_ldt"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64", "x32", "x86"]}})
    rules.append({"names": ["arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint",
                            "cacheflush", "set_tls"], "action": "SCMP_ACT_ALLOW",
                  "includes": {"arches": ["arm", "arm64"]}})
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": errno.EPERM,
        # The host's own ABI only: Docker keeps the entry of its own architecture (none on another
        # host), so runc builds the filter, and its ENOSYS stub for calls newer than the profile, for
        # that ABI alone; a call through another (int 0x80, x32, arm32) meets libseccomp's
        # bad-architecture action. Not "architectures": that list is taken as it is, x86_64 on an
        # arm64 host too; not nothing: runc then writes no ENOSYS stub (unknown calls get EPERM).
        "archMap": [{"architecture": arch, "subArchitectures": []} for arch in NATIVE_ARCHITECTURES],
        "syscalls": rules,
    }


def docker_profile_json() -> str:
    """The profile as the text of ``deploy/sandbox/seccomp.json`` (stable: sorted, indented)."""
    return json.dumps(docker_profile(), indent=1) + "\n"


def docker_runtime() -> str | None:
    """The Docker runtime of the seats: ``SANDBOX_DOCKER_RUNTIME`` (e.g. ``runsc``), else Docker's default.

    The one place this setting is read.
    """
    value = os.environ.get("SANDBOX_DOCKER_RUNTIME", "").strip()
    return value or None


def docker_security_options(runtime: str | None = None) -> list[str]:
    """``security_opt`` of every seat: no new privileges, the project's seccomp profile (for
    ``runtime``, default ``docker_runtime()``). The Docker API takes the profile's text."""
    profile = docker_profile(runtime or docker_runtime())
    return ["no-new-privileges", "seccomp=" + json.dumps(profile, separators=(",", ":"))]


if __name__ == "__main__":  # regenerate deploy/sandbox/seccomp.json
    DOCKER_PROFILE_PATH.write_text(docker_profile_json())
    print(f"wrote {DOCKER_PROFILE_PATH}")
