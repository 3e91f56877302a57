"""Argument models of the A2 tools (:mod:`ani.adapters.a2`), the workflow text the tool
descriptions teach, and the ``confirm_timeout_s`` rules (issue 3, case 10).

``confirm_timeout_s`` (RFC 6241 §8.4.5.1 ``confirm-timeout``, uint32 seconds, default 600):
:func:`check_confirm_timeout` accepts an int, an integral float or a decimal string and refuses
0, negatives, fractions, booleans and the rest before anything is sent; :func:`commit_kwargs`
hands the value to ncclient as a decimal string (ncclient 0.7.1 raises TypeError inside lxml for
an int).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from ani.adapters.base import Args
from ani.adapters.netconf_xml import FRR_NS
from ani.adapters.options import Options
from ani.netconf.errors import non_xml_char

DEFAULT_CONFIRM_TIMEOUT_S = 600  # RFC 6241 §8.4.5.1
MAX_CONFIRM_TIMEOUT_S = 4294967295  # uint32 in ietf-netconf

WORKFLOW = (
    "Workflow: lock(device) the candidate; edit_config(device, config) one or more times "
    "(edits the candidate only); validate(device); compare(device) to review the diff "
    "running -> candidate; commit(devices, confirm_timeout_s=120) (a confirmed commit: "
    "running takes the candidate but reverts by itself unless confirmed); verify with "
    "get_state / get_config running; confirm_commit(devices) to make it permanent (or "
    "cancel_commit(devices) to revert now); unlock(device). discard_changes(device) throws "
    "away uncommitted candidate edits. The data model is the YANG module ani-frr, namespace "
    "urn:ani:yang:ani-frr (read it with get_schema): config under <frr>, operational state "
    "under <frr-state>."
)


def _frr(inner: str) -> str:
    return f'<frr xmlns="{FRR_NS}">{inner}</frr>'


class A2Options(Options):
    """The options of A2 (:mod:`ani.adapters.a2`)."""

    connect_timeout_s: float = Field(10.0, gt=0, description="bound of opening a NETCONF session, seconds")
    rpc_timeout_s: float = Field(120.0, gt=0, description="bound of one RPC's reply, seconds")
    max_output_bytes: int = Field(65536, ge=1, description="cap on a reply shown to the agent, bytes")


# -- argument models ------------------------------------------------------------------------


def check_xml_chars(v: Any) -> Any:
    """``v`` (a string, a list of strings, or anything else, returned as given) when every
    string in it is text XML 1.0 can carry; ValueError naming the first character that is not
    (its position and code point, never the value: ``position 7 is U+0000 (a control
    character), which XML 1.0 and so NETCONF cannot carry``). Every A2 argument ends up in an
    RPC's XML, so this runs before anything is sent (issue 23 §1)."""
    items = [(None, v)] if isinstance(v, str) else list(enumerate(v)) if isinstance(v, list) else []
    for i, text in items:
        bad = non_xml_char(text) if isinstance(text, str) else None
        if bad is not None:
            where = "" if i is None else f"entry {i}: "
            raise ValueError(f"{where}position {bad[0]} is {bad[1]}, which XML 1.0 and so NETCONF "
                             "cannot carry; nothing was sent")
    return v


class A2Args(Args):
    """Base of the A2 argument models: every string argument (and every string of a list) is
    checked by :func:`check_xml_chars`, so text XML 1.0 cannot carry is ``invalid_arguments``,
    never a harness fault inside lxml or ncclient."""

    @field_validator("*", mode="before")
    @classmethod
    def _xml_chars(cls, v: Any) -> Any:
        return check_xml_chars(v)


class A2DeviceArgs(A2Args):
    device: str = Field(description="Device name (a router of the topology)")


class GetConfigArgs(A2Args):
    device: str = Field(description="Device name (a router of the topology)")
    source: Literal["running", "candidate"] = Field(
        default="running", description="Datastore to read: running (in effect) or candidate (being edited)"
    )
    filter: str | None = Field(
        default=None,
        description=(
            "Optional subtree filter (RFC 6241 §6), XML, e.g. "
            f"'<frr xmlns=\"{FRR_NS}\"><prefix-list/></frr>' (all prefix-lists) or "
            f"'<frr xmlns=\"{FRR_NS}\"><interface><name>eth0</name></interface></frr>'. "
            "Omit for the whole configuration."
        ),
    )


class GetStateArgs(A2Args):
    device: str = Field(description="Device name (a router of the topology)")
    filter: str | None = Field(
        default=None,
        description=(
            "Optional subtree filter, XML. Default: all operational state "
            f"('<frr-state xmlns=\"{FRR_NS}\"/>': interface, route, bgp-neighbor, "
            "ospf-neighbor lists). E.g. one route: "
            f"'<frr-state xmlns=\"{FRR_NS}\"><route><prefix>192.0.2.0/24</prefix></route></frr-state>'."
        ),
    )


class EditConfigArgs(A2Args):
    device: str = Field(description="Device name (a router of the topology)")
    config: str = Field(
        min_length=1,
        description=(
            "The change, as XML in namespace urn:ani:yang:ani-frr, e.g. "
            + _frr("<prefix-list><name>PL-A</name><entry><seq>10</seq><action>permit</action>"
                   "<prefix>192.0.2.0/24</prefix></entry></prefix-list>")
            + " (a <config> wrapper is optional). Per-node operations: the attribute "
            "operation=\"merge|replace|create|delete|remove\" in the NETCONF base namespace, "
            "e.g. xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\" and nc:operation=\"delete\". "
            "RFC 7951 JSON is accepted too: {\"ani-frr:frr\": {...}}, operations as "
            "\"@\": {\"ietf-netconf:operation\": \"delete\"}."
        ),
    )
    default_operation: Literal["merge", "replace", "none"] = Field(
        default="merge",
        description=(
            "merge: add/update what the config names (default); replace: the config replaces "
            "the whole candidate (omitted nodes are deleted); none: only nodes with an explicit "
            "operation attribute change."
        ),
    )
    error_option: Literal["stop-on-error", "continue-on-error", "rollback-on-error"] = Field(
        default="rollback-on-error",
        description="rollback-on-error (default): all of the edit or nothing; stop-on-error; continue-on-error.",
    )


class CompareArgs(A2DeviceArgs):
    format: Literal["cli", "xml"] = Field(
        default="cli",
        description="cli: diff of the FRR configuration text and firewall lines (default); xml: diff of the XML",
    )


class CommitArgs(A2Args):
    devices: list[str] = Field(min_length=1, description="Devices whose candidate to commit, in order")
    confirmed: bool = Field(
        default=True,
        description=(
            "true (default): a confirmed commit that reverts by itself after confirm_timeout_s "
            "unless confirm_commit is called; false: a plain, final commit"
        ),
    )
    confirm_timeout_s: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONFIRM_TIMEOUT_S,
        description="Seconds until an unconfirmed commit reverts (a whole number >= 1); omit for the default, 600",
    )

    @field_validator("confirm_timeout_s", mode="before")
    @classmethod
    def _timeout(cls, v: Any) -> Any:
        return check_confirm_timeout(v)


class DevicesArgs(A2Args):
    devices: list[str] = Field(min_length=1, description="Device names")


class LockArgs(A2Args):
    device: str = Field(description="Device name (a router of the topology)")
    target: Literal["candidate", "running"] = Field(
        default="candidate", description="Datastore to lock (candidate by default; running too if no one else may commit)"
    )


class SchemaArgs(A2Args):
    identifier: str = Field(default="ani-frr", min_length=1, description="YANG module name (ani-frr)")
    version: str | None = Field(default=None, description="Revision (e.g. 2026-11-29); omit for the server's")
    device: str | None = Field(default=None, description="Device to ask (any router serves the same module); default: the first")


def check_confirm_timeout(v: Any) -> int | None:
    """``confirm_timeout_s`` as given by an agent -> a positive int (or None: server default).

    Accepts an int, an integral float (``30.0``) or a decimal string (``"30"``); refuses 0,
    negatives, fractions, booleans, values above 4294967295 and anything else with a
    ValueError whose message says what is allowed.
    """
    if v is None:
        return None
    if isinstance(v, bool):
        raise ValueError(f"must be a whole number of seconds >= 1, not a boolean ({v})")
    if isinstance(v, float):
        if not v.is_integer():
            raise ValueError(f"must be a whole number of seconds >= 1, got {v!r} (not an integer)")
        v = int(v)
    elif isinstance(v, str):
        if not re.fullmatch(r"\s*[+-]?\d+\s*", v):
            raise ValueError(f"must be a whole number of seconds >= 1, got {v!r}")
        v = int(v)
    elif not isinstance(v, int):
        raise ValueError(f"must be a whole number of seconds >= 1, got {type(v).__name__}")
    if v < 1:
        raise ValueError(f"must be a whole number of seconds >= 1, got {v}")
    if v > MAX_CONFIRM_TIMEOUT_S:
        raise ValueError(f"must be at most {MAX_CONFIRM_TIMEOUT_S} s, got {v}")
    return v


def commit_kwargs(confirmed: bool, confirm_timeout_s: int | None) -> dict[str, Any]:
    """ncclient ``commit`` keyword arguments: the timeout as a decimal string (RFC 6241
    §8.4.5.1 ``confirm-timeout``; ncclient 0.7.1 raises TypeError for an int)."""
    if not confirmed:
        return {}
    out: dict[str, Any] = {"confirmed": True}
    if confirm_timeout_s is not None:
        out["timeout"] = str(int(confirm_timeout_s))
    return out
