"""Issue 23 §1 probe, A2: "20,000 prefix-list entries in one edit_config, then commit tells the
agent timeout while the server goes on applying for 27 minutes". Reproduced at a size that keeps
the test to seconds, against the lab's real NETCONF server and FRR, with the server's bounds
(ani.netconf.limits) set small through its environment:

- an edit-config over the element bound, and a commit over the line bound, are refused
  (``too-big``, the bound named) and nothing reaches FRR;
- a commit whose apply passes the commit bound is stopped by the server and rolled back: the
  agent gets ``commit-bound`` (not a timeout), running (read out of band) is what it was, no
  confirmed commit is pending, and the router answers the next call at once.

One lab (tests/data/a1_pair.yaml) for the module, its server started with the bounds below.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

from ani.adapters.a2 import A2Adapter
from ani.device.apply import read
from ani.netconf.limits import ENV

pytestmark = pytest.mark.integration

PAIR = Path(__file__).parent.parent / "data" / "a1_pair.yaml"
NS = "urn:ani:yang:ani-frr"
#: 900 entries take FRR about 15 s on an idle 2-core host (docs/performance.md): far past 3 s
BOUNDS = {ENV["edit_elements"]: "4000", ENV["commit_lines"]: "1000", ENV["commit_bound_s"]: "3"}


@pytest.fixture(scope="module")
def lab():  # type: ignore[no-untyped-def]
    from tests.conftest import _owned_labs

    with _owned_labs() as factory:
        with pytest.MonkeyPatch.context() as mp:  # the lab's NETCONF server inherits the environment
            for k, v in BOUNDS.items():
                mp.setenv(k, v)
            lab = factory(PAIR, lab_id="ncb" + secrets.token_hex(3))
        yield lab


@pytest.fixture
def a2(lab, open_adapter):  # type: ignore[no-untyped-def]
    return open_adapter(A2Adapter(lab))


def entries(first: int, n: int) -> str:
    body = "".join(f"<entry><seq>{i + 1}</seq><action>permit</action>"
                   f"<prefix>10.{i >> 8 & 255}.{i & 255}.0/24</prefix></entry>" for i in range(first, first + n))
    return f'<frr xmlns="{NS}"><prefix-list><name>PL-BIG</name>{body}</prefix-list></frr>'


def error_of(res) -> dict:  # type: ignore[no-untyped-def]
    assert not res.ok and res.error is not None
    errs = (res.data or {}).get("errors") or (res.data or {}).get("devices", {}).get("r1", {}).get("errors")
    assert errs, res.data
    return errs[0]


def test_an_edit_over_the_bound_is_too_big_and_nothing_is_set(lab, a2):  # type: ignore[no-untyped-def]
    before = read(lab, "r1")
    res = a2.call("edit_config", {"device": "r1", "config": entries(0, 1100)})  # 4403 elements
    assert res.error.code == "command_failed" and not res.error.retriable
    err = error_of(res)
    assert (err["tag"], err.get("app_tag")) == ("too-big", "edit-too-large")
    assert "at most 4000" in err["message"]
    assert a2.call("compare", {"device": "r1"}).data["changes"] == 0  # candidate untouched
    assert read(lab, "r1") == before


def test_a_commit_over_the_line_bound_is_too_big_and_nothing_is_applied(lab, a2):  # type: ignore[no-untyped-def]
    before = read(lab, "r1")
    assert a2.call("edit_config", {"device": "r1", "config": entries(0, 550)}).ok
    assert a2.call("edit_config", {"device": "r1", "config": entries(550, 550)}).ok  # 1100 lines in all
    t0 = time.monotonic()
    res = a2.call("commit", {"devices": ["r1"]})
    err = error_of(res)
    assert (err["tag"], err.get("app_tag")) == ("too-big", "commit-too-large")
    assert "1100 configuration lines" in err["message"] and "at most 1000" in err["message"]
    assert time.monotonic() - t0 < 20  # refused up front, not after applying
    assert read(lab, "r1") == before
    assert a2.call("discard_changes", {"device": "r1"}).ok


def test_a_commit_past_its_bound_is_rolled_back_and_the_router_answers(lab, a2):  # type: ignore[no-untyped-def]
    before = read(lab, "r1")
    assert a2.call("edit_config", {"device": "r1", "config": entries(0, 900)}).ok
    t0 = time.monotonic()
    res = a2.call("commit", {"devices": ["r1"]})  # confirmed, 600 s: the bound stops it first
    took = time.monotonic() - t0
    err = error_of(res)
    assert res.error.code == "command_failed"  # the server's answer, not the client's timeout
    assert (err["tag"], err.get("app_tag")) == ("operation-failed", "commit-bound")
    assert "bound of 3 s" in err["message"] and "running was restored" in err["message"]
    assert took < a2.rpc_timeout_s
    # running is what it was (RFC 6241: a failed commit leaves it unchanged), out of band
    assert read(lab, "r1") == before
    t1 = time.monotonic()
    got = a2.call("get_config", {"device": "r1", "source": "running"})
    assert got.ok and "PL-BIG" not in got.text and time.monotonic() - t1 < 10
    # nothing pending: no confirmed commit to cancel, and the candidate still holds the edits
    assert not a2.call("cancel_commit", {"devices": ["r1"]}).ok
    assert a2.call("compare", {"device": "r1"}).data["changes"] == 900
    assert a2.call("discard_changes", {"device": "r1"}).ok


def test_a_client_with_a_shorter_rpc_timeout_waits_for_the_bounded_commit(lab, a2, open_adapter):  # type: ignore[no-untyped-def]
    """The issue's sequence with a client whose RPC timeout (2 s) is below the server's commit
    bound (3 s): it was told ``timeout`` while the server went on, and the commit landed later
    (outside check: a minute later at rpc_timeout_s=3). The server announces its bound in its
    hello (ani's commit-bound capability), A2 waits for a commit's reply past it, and so the
    agent gets the server's own answer: stopped at its bound, rolled back, running as it was."""
    before = read(lab, "r1")
    assert a2.call("edit_config", {"device": "r1", "config": entries(0, 900)}).ok  # the shared candidate
    hasty = open_adapter(A2Adapter(lab, options={"rpc_timeout_s": 2}))
    s = hasty.session("r1")
    s.ensure()  # the session is open before the clock starts
    assert s.hello is not None and s.hello.commit_bound_s == 3
    t0 = time.monotonic()
    res = hasty.call("commit", {"devices": ["r1"], "confirmed": False})
    took = time.monotonic() - t0
    assert res.error is not None and res.error.code != "timeout", res.text
    assert "3 s" in res.error.message and "stopped" in res.error.message, res.text
    assert 2.5 < took < 60  # past the client's 2 s: the server's bound (3 s) plus the rollback
    got = a2.call("get_config", {"device": "r1", "source": "running"})
    assert got.ok and "PL-BIG" not in got.text
    assert read(lab, "r1") == before  # nothing of the commit is left in FRR
    assert a2.call("discard_changes", {"device": "r1"}).ok
