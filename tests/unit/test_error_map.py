"""``ani.adapters.error_map.error_result``: the one mapping of exceptions to tool results that
every level uses (issue 11, section 5: each level used to map on its own)."""

from __future__ import annotations

import pytest

from ani.adapters.allowlist import Refused
from ani.adapters.cli_session import SessionError
from ani.adapters.error_map import error_result
from ani.adapters.netconf_xml import XmlArgError
from ani.device.outcome import ApplyError, ReadError, ReadTimeout
from ani.errors import AniTimeout, ErrorCode, LabError, LabGone, UnknownNode
from ani.intents.errors import IntentError, PoolExhausted
from ani.netconf.client import ReplyError, RpcFailed, SessionLost
from ani.sot.errors import Conflict, SotError

E = ErrorCode


@pytest.mark.parametrize(("exc", "kw", "code", "retriable", "message"), [
    (AniTimeout(2, "opening vtysh on r2"), {"device": "r2"}, E.TIMEOUT, True, "r2: timeout after 2 s (opening vtysh on r2)"),
    (ReadTimeout("r2", 10, "reading the running config"), {"device": "r2"}, E.TIMEOUT, True,
     "r2: timeout after 10 s (reading the running config)"),  # the device named once
    (ReadTimeout("r2", 10, "reading the running config"), {"what": "cannot read the routers' configurations"},
     E.TIMEOUT, True, "cannot read the routers' configurations: r2: timeout after 10 s (reading the running config)"),
    (ReadError("r1: cannot read the running config (exit 1): boom"), {"device": "r1", "what": "cannot read config"},
     E.DEVICE_UNREACHABLE, True, "r1: cannot read config: cannot read the running config (exit 1): boom"),
    (ReadError("r1: lab ab12 is not running (no /x/r1/enter)", gone=True), {"device": "r1"}, E.DEVICE_UNREACHABLE,
     False, "r1: lab ab12 is not running (no /x/r1/enter)"),  # the lab is gone: a retry cannot succeed
    (LabGone("ab12", "no /x/r1/enter"), {"device": "r1"}, E.DEVICE_UNREACHABLE, False,
     "r1: lab ab12 is not running (no /x/r1/enter)"),  # the lab is gone: a retry cannot succeed
    (SessionError("r1: vtysh gave no prompt: EOF"), {"device": "r1"}, E.DEVICE_UNREACHABLE, True,
     "r1: vtysh gave no prompt: EOF"),
    (LabError("no JSON"), {}, E.DEVICE_UNREACHABLE, True, "no JSON"),
    (UnknownNode("lab x: no node 'r9'"), {}, E.UNKNOWN_DEVICE, False, "lab x: no node 'r9'"),
    (ApplyError("e2: cannot read the running config (timed out): ", restored=True), {},
     E.DEVICE_UNREACHABLE, True, "e2: cannot read the running config (timed out): "),
    (Refused(1, "write memory", "not on the allowlist"), {}, E.NOT_ALLOWED, False,
     "command 2 'write memory' refused: not on the allowlist"),
    (XmlArgError("config is not well-formed XML"), {"what": "edit_config"}, E.INVALID_ARGUMENTS, False,
     "edit_config: config is not well-formed XML"),
    (SotError("nothing to commit (patch first)"), {}, E.INVALID_ARGUMENTS, False, "nothing to commit (patch first)"),
    (ValueError("odd"), {}, E.INTERNAL, False, "odd"),
    (KeyError("k"), {"device": "r1"}, E.INTERNAL, False, "r1: KeyError: 'k'"),
])
def test_each_kind_maps_to_its_code_retriable_and_message(exc, kw, code, retriable, message):
    res = error_result(exc, **kw)
    assert (res.ok, res.error.code, res.error.retriable, res.error.message) == (False, code, retriable, message)
    assert res.text == f"error [{code.value}]: {message}"


def test_a_lost_session_caused_by_a_gone_lab_is_not_retriable():
    try:
        try:
            raise LabGone("ab12", "no /run/ani/labs/ab12")
        except LabGone as cause:
            raise SessionLost(f"r1: {cause}") from cause
    except SessionLost as exc:
        res = error_result(exc, device="r1")
    assert (res.error.code, res.error.retriable) == (E.DEVICE_UNREACHABLE, False)
    assert res.data == {"device": "r1", "outcome_unknown": False}


def test_rpc_failures_name_every_error_and_are_retriable_for_lock_denied_only():
    locked = RpcFailed("lock", [ReplyError("error", "lock-denied", "protocol", "held", info={"session-id": "3"})],
                       [ReplyError("warning", "operation-failed", "application", "slow")])
    res = error_result(locked, device="r1", what="lock candidate")
    assert res.error.code is E.COMMAND_FAILED and res.error.retriable is True
    assert res.error.message == ("r1: lock candidate failed: lock-denied (protocol): held [session-id=3]"
                                 "\nwarning: operation-failed (application): slow")
    assert res.data["errors"][0]["tag"] == "lock-denied" and res.data["warnings"][0]["severity"] == "warning"
    bad = RpcFailed("edit-config", [ReplyError("error", "invalid-value", "application", "no")], [])
    assert error_result(bad, device="r1", what="edit-config").error.retriable is False


def test_intent_and_pool_errors_keep_their_data():
    res = error_result(IntentError("unknown-reference", "route-map RM-X does not exist", "changes.0.route_map_in"))
    assert res.error.code is E.INVALID_INTENT
    assert res.error.message == ("refused (unknown-reference) (changes.0.route_map_in): route-map RM-X does not "
                                 "exist; nothing was sent to any router")
    assert res.data == {"errors": [{"code": "unknown-reference", "path": "changes.0.route_map_in",
                                    "message": "route-map RM-X does not exist"}]}
    res = error_result(PoolExhausted("site/198.19.0.0/16", 256))
    assert res.error.code is E.RESOURCE_EXHAUSTED and (res.data["pool"], res.data["size"]) == ("site/198.19.0.0/16", 256)


def test_data_and_changed_are_passed_through():
    res = error_result(AniTimeout(120, "no reply to commit"), device="r1", what="commit",
                       data={"device": "r1", "outcome_unknown": True}, changed=True)
    assert res.error.message == "r1: commit: timeout after 120 s (no reply to commit)"
    assert res.data == {"device": "r1", "outcome_unknown": True} and res.changed is True
    conflict = error_result(Conflict("aaa", "bbb"), data={"extra": 1})
    assert conflict.error.retriable and conflict.data == {"expected": "aaa", "actual": "bbb", "extra": 1}
