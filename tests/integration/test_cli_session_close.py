"""Closing A1's CLI session never reaches a freed scrapli driver (``ani.adapters.cli_session.close_within``).

scrapli 2's ``Cli.close`` frees its driver and keeps the pointer; called with
``operation_timeout_ns``, its timeout decorator then reset the timeout on the freed driver: a use
after free at every bounded close, which crashed a pytest worker with a segfault under load
(CI rehearsal, 2026-12-07, three A1 runs side by side). The test wraps libscrapli's calls on the
real driver of a real vtysh session and checks that none takes a pointer after it was freed, for
the orderly close and for the forced discard of a broken session. One lab of
tests/data/a1_pair.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.adapters.cli_session import CliSession
from ani.adapters.platform import load_platform

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "csc", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def _watch(session: CliSession, monkeypatch) -> list[str]:  # noqa: ANN001
    """Wrap the open session's libscrapli calls that take its driver: returns the list of calls
    made with a driver already freed (each ``"<call> after free"``)."""
    ffi = session._cli.ffi_mapping  # type: ignore[attr-defined]
    freed: set[int] = set()
    late: list[str] = []

    def key(ptr) -> int:  # noqa: ANN001
        return int(getattr(ptr, "value", ptr) or 0)

    def wrap(owner, name: str, frees: bool = False) -> None:  # noqa: ANN001
        real = getattr(owner, name)

        def call(ptr, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
            if key(ptr) in freed:
                late.append(f"{name} after free")
            out = real(ptr, *args, **kw)
            if frees:
                freed.add(key(ptr))
            return out

        monkeypatch.setattr(owner, name, call)

    wrap(ffi.session_mapping, "set_operation_timeout_ns")
    wrap(ffi.shared_mapping, "free", frees=True)
    return late


@pytest.mark.parametrize("how", ["close", "discard"])
def test_no_call_reaches_the_freed_driver(lab, monkeypatch, how):
    platform = load_platform("frr")
    session = CliSession("r1", lab.node_argv("r1", ["vtysh"]), platform, 10.0)
    session.open()
    assert "FRRouting" in session.send("show version", mode=platform.d.exec_mode).output
    late = _watch(session, monkeypatch)
    session.close() if how == "close" else session._drop()
    assert not session.is_open
    assert late == []
