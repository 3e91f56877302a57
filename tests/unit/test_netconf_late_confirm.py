"""A confirming commit that comes too late never confirms (issue 14 case 3, RFC 6241 §8.4.1),
and a held Device (a frozen router's management plane) runs nothing until released.

The defect kind: a Device whose confirm timer had not run yet when the deadline passed (its
thread held up: a frozen management plane, a loaded host) confirmed a late confirming commit;
and once the timer had rolled back, the session's plain confirming commit of nothing answered
<ok/>: the client believed its change was confirmed while it had been rolled back."""

from __future__ import annotations

import threading
import time

import pytest

from ani.netconf.errors import RpcError
from tests.unit.test_netconf_datastore import A, B, V1, config, make, routes_xml, timers  # noqa: F401


def committed(dev, be, timeout="5"):
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout=timeout)
    assert len(be.cfg.static_routes) == 2


def test_a_confirming_commit_after_the_deadline_rolls_back_and_says_so(timers):
    dev, be = make(V1, timers)
    committed(dev, be)
    dev._pending.deadline = time.monotonic() - 2.0  # the timer thread was held up past it
    with pytest.raises(RpcError) as ei:
        dev.commit(A)
    assert ei.value.tag == "operation-failed"
    assert "not confirmed within its confirm-timeout of 5 s" in ei.value.message
    assert "has been rolled back" in ei.value.message
    assert be.cfg == V1 and dev._pending is None
    timers.all[0].callback()  # the held-up timer, when it finally runs, does nothing more
    assert be.cfg == V1


def test_a_confirming_commit_before_the_deadline_still_confirms(timers):
    dev, be = make(V1, timers)
    committed(dev, be, timeout="600")
    dev.commit(A)
    assert len(be.cfg.static_routes) == 2 and dev._pending is None


def test_a_late_cancel_commit_rolls_back_and_succeeds(timers):
    dev, be = make(V1, timers)
    committed(dev, be)
    dev._pending.deadline = time.monotonic() - 1.0
    dev.cancel_commit(A)
    assert be.cfg == V1 and dev._pending is None


def test_after_the_timer_rolled_back_a_plain_commit_of_nothing_is_refused_once(timers):
    dev, be = make(V1, timers)
    committed(dev, be)
    timers.live()[0].fire()
    assert be.cfg == V1
    with pytest.raises(RpcError) as ei:
        dev.commit(A)  # meant as the confirming commit
    assert ei.value.tag == "operation-failed" and ei.value.app_tag == "confirm-timeout-expired"
    assert "was not confirmed within 5 s and was rolled back" in ei.value.message
    dev.commit(A)  # told once: the next plain commit is an ordinary one
    dev.commit(B)  # another session was never told anything
    # a commit that has something to commit is never refused for it
    committed(dev, be)
    timers.live()[0].fire()
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))
    dev.commit(A)
    assert [str(r.prefix) for r in be.cfg.static_routes] == ["192.0.2.0/24", "203.0.113.0/24"]


def test_a_held_device_runs_nothing_until_released(timers):
    dev, be = make(V1, timers)
    release, held = threading.Event(), threading.Event()
    holder = threading.Thread(target=dev.hold, args=(release, held), daemon=True)
    holder.start()
    assert held.wait(5)
    got: list[object] = []
    call = threading.Thread(target=lambda: got.append(dev.get_config(A, "running")), daemon=True)
    call.start()
    call.join(0.3)
    assert call.is_alive() and got == [] and be.calls == []  # waiting, the backend untouched
    release.set()
    call.join(5)
    holder.join(5)
    assert not call.is_alive() and len(got) == 1 and be.calls == ["read"]
