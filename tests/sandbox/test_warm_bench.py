"""sandbox.warm_bench's engine CPU from cgroups (``--engine-cgroup``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox import warm_bench


def test_a_cgroup_s_cpu_is_read_in_v1_and_v2_and_a_folder_without_accounting_is_refused(tmp_path):
    v1, v2, other = tmp_path / "v1", tmp_path / "v2", tmp_path / "other"
    for folder in (v1, v2, other):
        folder.mkdir()
    (v1 / "cpuacct.usage").write_text("2500000000\n")
    (v2 / "cpu.stat").write_text("usage_usec 1750000\nuser_usec 1000000\nsystem_usec 750000\n")
    assert warm_bench.cgroup_cpu_seconds(str(v1)) == 2.5
    assert warm_bench.cgroup_cpu_seconds(str(v2)) == 1.75
    with pytest.raises(ValueError, match="not a cgroup with CPU accounting"):
        warm_bench.cgroup_cpu_seconds(str(other))


def _own_cgroup() -> str | None:
    """The folder of this process's CPU-accounting cgroup (v1 cpuacct, else v2), or None."""
    unified = None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            return f"/sys/fs/cgroup/{controllers}{path}"
        if controllers == "":
            unified = f"/sys/fs/cgroup{path}"
    return unified


def test_a_real_cgroup_counts_this_process_s_cpu():
    folder = _own_cgroup()
    try:
        before = warm_bench.cgroup_cpu_seconds(folder) if folder else None
    except (ValueError, OSError):
        before = None
    if before is None:
        pytest.skip("no readable CPU-accounting cgroup for this process")
    spent = time.process_time()
    while time.process_time() - spent < 0.2:
        pass
    assert warm_bench.cgroup_cpu_seconds(folder) - before >= 0.15


def test_the_command_refuses_a_folder_that_is_no_cgroup(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        warm_bench.main(["--starts", "1", "--engine-cgroup", str(tmp_path)])
    assert exited.value.code == 2
    assert "not a cgroup with CPU accounting" in capsys.readouterr().err
