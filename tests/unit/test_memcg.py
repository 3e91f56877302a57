"""ani.lab.memcg's logic: the bound's configuration, the hierarchy found, the files written
(on a directory laid out like /sys/fs/cgroup; the real cgroups are
tests/integration/test_router_memory_bound.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.errors import CapabilityMissing, LabError
from ani.lab import memcg


def test_the_bound_defaults_and_is_configurable(monkeypatch):
    monkeypatch.delenv(memcg.ENV, raising=False)
    assert memcg.configured_bytes() == memcg.DEFAULT_ROUTER_MEMORY_BYTES == 1024**3
    monkeypatch.setenv(memcg.ENV, str(256 << 20))
    assert memcg.configured_bytes() == 256 << 20
    assert memcg.configured_bytes(128 << 20) == 128 << 20  # the argument wins
    monkeypatch.setenv(memcg.ENV, "1G")
    with pytest.raises(LabError, match=r"ANI_ROUTER_MEMORY_MAX: must be a number of bytes"):
        memcg.configured_bytes()
    with pytest.raises(LabError, match=r"router_memory_bytes: 1000 bytes is below"):
        memcg.configured_bytes(1000)


def test_names_carry_the_lab_id_and_never_collide_with_call_cgroups():
    assert memcg.name("ani-ab12cd-r1") == "ani-frr-ab12cd-r1"
    assert not memcg.name("ani-a0-r1").startswith("ani-a0-")  # a lab called a0 vs A0 call cgroups


def v1_tree(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "cgroup.procs").write_text("")
    return tmp_path


def test_v1_hierarchy_files(tmp_path):
    h = memcg.hierarchy(v1_tree(tmp_path))
    assert (h.root, h.version) == (tmp_path / "memory", 1)
    d = memcg.create("ani-x1-r1", 64 << 20, h)
    assert d == tmp_path / "memory" / "ani-frr-x1-r1"
    assert (d / "memory.limit_in_bytes").read_text() == str(64 << 20)
    assert not (d / "memory.memsw.limit_in_bytes").exists()  # only where the kernel has it
    assert memcg.wrap("ani-x1-r1", ["vtysh"], h)[-2:] == [str(d / "cgroup.procs"), "vtysh"]
    assert memcg.join_script("ani-x1-r1", h) == f"echo $$ > '{d}/cgroup.procs' || exit 125; "
    (d / "memory.usage_in_bytes").write_text("123\n")
    (d / "memory.max_usage_in_bytes").write_text("456\n")
    (d / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert memcg.usage("ani-x1-r1", h) == memcg.Usage(current=123, peak=456, limit=64 << 20, oom_kills=2)
    assert memcg.lab_cgroups("x1", h) == [d] and memcg.lab_cgroups("x", h) == []
    assert memcg.lab_ids_present(h) == {"x1"}


def test_v2_hierarchy_files(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("cpu\n")
    h = memcg.hierarchy(tmp_path)
    assert (h.root, h.version) == (tmp_path, 2)
    d = memcg.create("ani-x2-r1", 64 << 20, h)
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory"  # delegated to children
    assert (d / "memory.max").read_text() == str(64 << 20)
    (d / "memory.current").write_text("10\n")
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert memcg.usage("ani-x2-r1", h) == memcg.Usage(current=10, peak=0, limit=64 << 20, oom_kills=1)


def test_no_memory_controller_is_a_missing_capability(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu pids\n")
    with pytest.raises(CapabilityMissing, match="memory cgroup"):
        memcg.hierarchy(tmp_path)
