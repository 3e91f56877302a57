# size: the tool-kind tables of every level (data, ~100 lines) and the process metrics computed from them
"""Process metrics of a run (NetConfArena §III-D.2), computed from its trajectory events.

Pure functions: no I/O, no clocks. Input is the list of trajectory events of one run
(``Trajectory.events`` or ``Trajectory.read(path)``); output is a :class:`ProcessMetrics`.

Actions and their kinds
    An *action* is one ``tool_call`` event (logged by the adapter) or one ``agent_action`` event
    (logged by the agent loop for what is not an adapter call: ``wait``, ``submit``, ``null``).
    Every action has exactly one kind of :data:`ACTION_KINDS`:

    - ``retrieval``: reads configuration or inventory (get_topology, get_running_config, ...);
    - ``update``: changes, stages or undoes configuration (update_config, apply_config,
      batch_configure_devices, edit_config, commit, sot_patch, apply, rollback, snapshot, lock, ...);
    - ``validation``: checks behaviour or a pending change (execute_validation, operational
      state such as check_device_status, validate, compare, plan, drift, ...);
    - ``wait`` / ``submit``: the agent-loop actions;
    - ``null``: unrecognised: a malformed model output (logged by the agent as
      ``agent_action`` with ``action="null"``) or a tool name the level does not have.

    The kind of a tool call comes from the level's name table (:data:`TOOL_KINDS`, a0..a4), a
    few argument-sensitive rules (A0 ``shell`` by its command; A3-T/A4 ``get_state`` with
    ``what=config`` is a retrieval), and for tools not in the table (third-party adapters) the
    ToolSpec hints: ``read_only`` -> retrieval, otherwise update.

Trajectory conventions for agents (written with :func:`ani.trajectory.log_agent_action` and
:func:`ani.trajectory.log_agent_turn`)::

    {"event": "agent_action", "action": "wait", "seconds": 5}
    {"event": "agent_action", "action": "submit"}
    {"event": "agent_action", "action": "null", "reason": "invalid tool-call JSON"}
    {"event": "agent_turn", "turn": 3, "prompt_tokens": 812, "completion_tokens": 64}

Metrics (all counts are of actions unless said otherwise)
    - turns: number of ``agent_turn`` events if the agent logs them (one per model response,
      which may hold several tool calls), else the number of actions (one action per turn).
    - shares: ``action_counts[kind] / actions``.
    - error actions: actions with ``ok`` False (the flag, never the text): refused tool calls,
      and agent-loop actions the loop refused (a ``wait`` with bad seconds); a call to a tool
      the level does not have is a null action, not an error action.
      ``error_action_rate = error_actions / actions``.
    - repeat actions: an update or validation tool call identical (same tool, same arguments)
      to the action just before it, or an action that is the exact inverse of the action just
      before it where the level can tell (:func:`is_inverse`).
      ``repeat_action_rate = repeat_actions / actions``.
    - completion mode (:func:`completion_mode`).
    - tokens: sums of ``prompt_tokens`` / ``completion_tokens`` over ``agent_turn`` events (a
      turn without usage adds nothing), else the agent's own totals if it reports them, else None
      (scripted agents use no model). Turns logged without any usage and zero agent totals (an
      endpoint that sends no ``usage``) give None: unknown, not free.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, model_validator

from ani.campaign.outcomes import is_invalid
from ani.trajectory import AGENT_ACTION_EVENT, AGENT_TURN_EVENT, TOOL_CALL_EVENT

ActionKind = Literal["retrieval", "update", "validation", "wait", "submit", "null"]
ACTION_KINDS: tuple[str, ...] = ("retrieval", "update", "validation", "wait", "submit", "null")

CompletionMode = Literal[
    "early_submission",
    "interaction_limit",
    "correct_submission",
    "error_submission",
    "agent_error",
    "no_submission",
]
#: the four modes of NetConfArena, then the two that only a crash or a silent stop produce
COMPLETION_MODES: tuple[str, ...] = get_args(CompletionMode)
#: stop reasons that mean a budget ended the run
LIMIT_STOP_REASONS = frozenset({"max_steps", "wall_clock", "max_tokens"})


_R, _U, _V = "retrieval", "update", "validation"

#: tool name -> kind, per level. Shared names (get_topology) are repeated on purpose: a level's
#: table is complete for its adapter, so an unknown name is visibly unknown.
TOOL_KINDS: dict[str, dict[str, str]] = {
    "a0": {"get_topology": _R, "shell": _U},  # shell: refined by its command (_shell_kind)
    "a1": {
        "get_topology": _R,
        "get_running_config": _R,
        "list_snapshots": _R,
        "execute_validation": _V,
        "update_config": _U,
        "snapshot": _U,
        "rollback": _U,
        # the options extra_tools (NetConfBench draft §6.3) and apply_config_shape (NetConfArena)
        "check_device_status": _V,  # operational state: what a validation checks (as A2's get_state)
        "batch_configure_devices": _U,
        "apply_config": _U,
    },
    "a2": {
        "get_topology": _R,
        "get_config": _R,
        "get_schema": _R,
        "get_state": _V,  # operational state: what a validation checks
        "validate": _V,
        "compare": _V,  # the diff a commit would make
        "edit_config": _U,
        "discard_changes": _U,
        "lock": _U,
        "unlock": _U,
        "commit": _U,
        "confirm_commit": _U,
        "cancel_commit": _U,
    },
    "a3t": {
        "get_topology": _R,
        "list_service_types": _R,
        "get_service_schema": _R,
        "list_services": _R,
        "get_service": _R,
        "get_state": _V,  # what=config: retrieval (_arg_kind)
        "plan": _V,
        "apply": _U,
    },
    "a3r": {
        "get_topology": _R,
        "sot_list": _R,
        "sot_read": _R,
        "sot_log": _R,
        "sot_diff": _V,
        "drift": _V,
        "reconcile_status": _V,
        "sot_patch": _U,
        "sot_discard": _U,
        "sot_commit": _U,
        "sot_revert": _U,
        "reconcile": _U,
    },
}
TOOL_KINDS["a4"] = {
    **TOOL_KINDS["a3r"],
    **{k: v for k, v in TOOL_KINDS["a3t"].items() if k != "apply"},
    "sot_delete": _U,
}
#: update-kind tools that prepare or guard a change without attempting one (A1 snapshot, A2
#: lock/unlock): a run that only called these before submitting is an early submission
PREPARATORY_TOOLS = frozenset({"snapshot", "lock", "unlock"})
#: names that are agent-loop actions whatever the level (an adapter exposing them is honoured)
LOOP_TOOLS = {"wait": "wait", "submit": "submit"}


class ProcessMetrics(BaseModel):
    """Process metrics of one run (a field of :class:`~ani.campaign.results.RunRecord`).

    Attributes:
        turns: agent turns (model responses; actions when the agent logs no turns).
        actions: number of actions (tool calls + agent-loop actions).
        action_counts: actions per kind, every kind of :data:`ACTION_KINDS` present.
        error_actions: actions with ``ok`` False (null actions excluded).
        repeat_identical: update/validation tool calls identical to the action before.
        repeat_inverse: actions that exactly undo the action before.
        completion_mode: one of :data:`COMPLETION_MODES`, or None when it cannot be told
            (a submitted run that was never graded: an infrastructure error).
        submit_inferred: the agent reported ``submitted`` without logging a submit action; one
            submit action was counted at the end.
        prompt_tokens / completion_tokens: model tokens; None when unknown: no model turn with
            ``usage`` was logged and the agent reported no tokens (a scripted agent, an agent
            that never got a model response, an endpoint without ``usage``). A record holding
            ``0``/``0`` (written before this rule, e.g. a scripted run) is read as None: no model
            turn reads an empty prompt.
        invalid_calls: tool calls refused for bad arguments or an unknown name
            (:func:`ani.campaign.outcomes.is_invalid`; an unknown tool among them, which the
            action kinds count as a null action).
    """

    turns: int = 0
    actions: int = 0
    action_counts: dict[str, int] = Field(default_factory=lambda: {k: 0 for k in ACTION_KINDS})
    error_actions: int = 0
    repeat_identical: int = 0
    repeat_inverse: int = 0
    completion_mode: CompletionMode | None = None
    submit_inferred: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    invalid_calls: int = 0  # cases-tools: refused for bad arguments / unknown names (ani.campaign.outcomes)

    @model_validator(mode="after")
    def _zero_tokens_are_unknown(self) -> ProcessMetrics:
        if self.prompt_tokens == 0 and self.completion_tokens == 0:
            self.prompt_tokens = self.completion_tokens = None
        return self

    @property
    def repeat_actions(self) -> int:
        return self.repeat_identical + self.repeat_inverse

    def share(self, kind: str) -> float | None:
        """``action_counts[kind] / actions`` (None without actions)."""
        return self.action_counts.get(kind, 0) / self.actions if self.actions else None

    @property
    def error_action_rate(self) -> float | None:
        return self.error_actions / self.actions if self.actions else None

    @property
    def repeat_action_rate(self) -> float | None:
        return self.repeat_actions / self.actions if self.actions else None

    def describe(self) -> str:
        """One line for a terminal, e.g. ``4 turns; 4 actions (null 3, submit 1); 0 errors, 0 repeats;
        error_submission; tokens 1050/26``."""
        kinds = ", ".join(f"{k} {self.action_counts[k]}" for k in ACTION_KINDS if self.action_counts.get(k))
        tokens = (
            f"; tokens {self.prompt_tokens}/{self.completion_tokens}"
            if self.prompt_tokens is not None or self.completion_tokens is not None
            else ""
        )
        def n(count: int, word: str) -> str:
            return f"{count} {word}{'' if count == 1 else 's'}"

        return (
            f"{n(self.turns, 'turn')}; {n(self.actions, 'action')} ({kinds or 'none'}); "
            f"{n(self.error_actions, 'error')}, {n(self.repeat_actions, 'repeat')}; "
            f"{self.completion_mode or 'no completion mode'}{tokens}"
        )


# --- classification --------------------------------------------------------------------------------

_SHELL_UPDATE = re.compile(
    r"\bconf(?:igure)?(?:\s+t(?:erminal)?)?\b|\bwrite\b|\bcopy\b"
    r"|\bip\s+(?:-\S+\s+)*(?:addr(?:ess)?|route|link|rule|neigh)\s+(?:add|del|delete|change|replace|set|flush)\b"
    r"|\bnft\s+(?:-\S+\s+)*(?:add|delete|insert|flush|replace|create|destroy|-f)\b"
    r"|\bsysctl\s+-w\b|\bsed\s+-i\b|\btee\b|(?<![0-9])>\s*[\w/$~.-]|\brm\b|\bmv\b|\bkill\b|\bsystemctl\b"
)
_SHELL_VALIDATION = re.compile(r"\b(?:ping|traceroute|tracepath|mtr)\b|\bshow\s+(?!run)")
_SHELL_RETRIEVAL = re.compile(
    r"\bshow\s+run|\bcat\b|\bls\b|\bip\b|\bnft\s+(?:-\S+\s+)*list\b"
)


def _shell_kind(command: str, changed: bool | None) -> str:
    """A0 shell: update if the command writes (vtysh configure, ip ... add, nft add, ...);
    validation for ping/traceroute and vtysh show (other than running-config); retrieval for
    show running-config, cat, ip/nft listings; otherwise update if the call changed the router
    (measured), else retrieval."""
    if _SHELL_UPDATE.search(command):
        return _U
    if _SHELL_VALIDATION.search(command):
        return _V
    if _SHELL_RETRIEVAL.search(command):
        return _R
    return _U if changed else _R


def _tool_hints(tools: Iterable[Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in tools or ():
        name = getattr(t, "name", None)
        if name:
            out[name] = _R if getattr(t, "read_only", False) else _U
    return out


def tool_kind(
    level: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    changed: bool | None = None,
    tools: Iterable[Any] | None = None,
) -> str:
    """The kind of one tool call at ``level``.

    Args:
        level: ``a0``..``a4`` (a cell's level); other names use only ``tools``.
        tool: the tool name called.
        arguments: the call's arguments (A0 shell and A3-T/A4 get_state look at them).
        changed: the call's measured ``changed`` flag (A0 shell fallback).
        tools: the adapter's ToolSpecs, for tools not in the level's table.

    Returns:
        one of :data:`ACTION_KINDS`; ``null`` for a name neither the table nor ``tools`` knows.
    """
    args = arguments or {}
    if tool in LOOP_TOOLS:
        return LOOP_TOOLS[tool]
    table = TOOL_KINDS.get(str(level).lower(), {})
    kind = table.get(tool)
    if kind is None:
        kind = _tool_hints(tools).get(tool)
    if kind is None:
        return "null"
    if tool == "shell" and isinstance(args.get("command"), str):
        return _shell_kind(args["command"], changed)
    if tool == "get_state" and args.get("what") == "config":
        return _R
    return kind


# --- inverse actions -------------------------------------------------------------------------------


def _toggle_line(line: str) -> str:
    s = " ".join(line.split())
    if s.startswith("no "):
        return s[3:]
    if s.startswith("nft add "):
        return "nft delete " + s[8:]
    if s.startswith("nft delete "):
        return "nft add " + s[11:]
    return "no " + s


def _lines_inverse(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """``b`` repeats ``a`` line by line with at least one line negated (``no X`` <-> ``X``,
    ``nft add`` <-> ``nft delete``); the other lines (block headers) are equal."""
    if not a or len(a) != len(b) or not all(isinstance(x, str) for x in [*a, *b]):
        return False
    toggled = 0
    for x, y in zip(a, b, strict=True):
        nx, ny = " ".join(x.split()), " ".join(y.split())
        if nx == ny:
            continue
        if _toggle_line(nx) == ny:
            toggled += 1
        else:
            return False
    return toggled > 0


def _patch_op_inverse(op: Any, inv: Any) -> bool:
    if not isinstance(op, Mapping) or not isinstance(inv, Mapping):
        return False
    if op.get("op") == "add" and inv.get("op") == "remove":
        return op.get("path") == inv.get("path")
    if op.get("op") == "move" and inv.get("op") == "move":
        return op.get("from") == inv.get("path") and op.get("path") == inv.get("from")
    return False


def _patch_ops(patch: Any) -> list[Any] | None:
    """The operations of a JSON Patch that change something (``test`` operations only guard)."""
    if not isinstance(patch, list):
        return None
    return [op for op in patch if not (isinstance(op, Mapping) and op.get("op") == "test")]


def _patch_inverse(a: Any, b: Any) -> bool:
    """JSON Patch ``b`` undoes ``a``: ``test`` operations aside, same length, ``b[i]`` undoes
    ``a[n-1-i]`` (add p <-> remove p, move a->b <-> move b->a). A remove then an add is not
    counted (the old value is unknown), nor an add to an array's end (``/-``: which element it
    became is unknown)."""
    a, b = _patch_ops(a), _patch_ops(b)
    if not a or not b or len(a) != len(b):
        return False
    if any(isinstance(op, Mapping) and str(op.get("path", "")).endswith("/-") for op in a):
        return False
    return all(_patch_op_inverse(op, inv) for op, inv in zip(a, reversed(b), strict=True))


def _creates_service_file(path: Any, patch: Any) -> bool:
    """A3-R/A4 ``sot_patch`` that writes a whole service: a ``services/`` file whose patch adds
    the document (``""``) or both its ``/type`` and ``/action`` (what creating one takes)."""
    ops = _patch_ops(patch)
    if not isinstance(path, str) or not path.startswith("services/") or not ops:
        return False
    added = {op.get("path") for op in ops if isinstance(op, Mapping) and op.get("op") == "add"}
    return "" in added or {"/type", "/action"} <= added


_COMMITTED = re.compile(r"^committed ([0-9a-f]{7,40})\b")


def _reverts_commit(summary: Any, revision: Any) -> bool:
    """``sot_revert(revision)`` names the commit whose result summary was ``committed <sha>``:
    ``HEAD`` or at least 7 leading hex digits of that sha."""
    m = _COMMITTED.match(summary) if isinstance(summary, str) else None
    if m is None or not isinstance(revision, str):
        return False
    rev = revision.strip().lower()
    return rev == "head" or (len(rev) >= 7 and m.group(1).startswith(rev))


_CREATING = {"add", "onboard", "apply"}


def _service_id(change: Any) -> str | None:
    try:
        from ani.intents.models import parse_change

        return str(parse_change(change).service_id())
    except Exception:  # noqa: BLE001 - an invalid change has no identity
        return None


def _changes_inverse(a: Any, b: Any) -> bool:
    """A3-T changes ``b`` remove, in reverse order, exactly the services ``a`` created."""
    if not isinstance(a, list) or not isinstance(b, list) or not a or len(a) != len(b):
        return False
    for ch, inv in zip(a, reversed(b), strict=True):
        if not isinstance(ch, Mapping) or not isinstance(inv, Mapping):
            return False
        if ch.get("action") not in _CREATING or inv.get("action") != "remove":
            return False
        sid = _service_id(ch)
        if sid is None or sid != _service_id(inv):
            return False
    return True


def _devices(args: Mapping[str, Any]) -> list[str] | None:
    d = args.get("devices")
    return sorted(d) if isinstance(d, list) and all(isinstance(x, str) for x in d) else None


def is_inverse(prev: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """``cur`` exactly undoes ``prev`` (two ``tool_call`` events), where the level can tell:

    - A1 ``update_config`` then ``update_config`` on the same device negating lines of the first;
    - A2 ``edit_config`` then ``discard_changes`` on the same device; ``commit`` then
      ``cancel_commit`` of the same devices;
    - A3-R/A4 ``sot_patch`` then ``sot_patch`` of the same file with the inverse operations
      (``test`` operations aside), or then ``sot_discard``; ``sot_commit`` then ``sot_revert`` of
      that commit (``HEAD`` or its sha, read from the commit's result summary);
    - A4 ``sot_patch`` creating a service file (adding the whole document, or its ``/type`` and
      ``/action``) then ``sot_delete`` of that file;
    - A3-T ``apply`` then ``apply`` removing the services the first created.

    A0's shell and A1's rollback cannot be told apart from other changes: never counted.
    Only calls that succeeded count (undoing a refused call undoes nothing; a commit whose
    reconcile failed and was rolled back is not ok, so reverting it is a fix, not an inverse).
    """
    if prev.get("event") != TOOL_CALL_EVENT or cur.get("event") != TOOL_CALL_EVENT:
        return False
    if prev.get("ok") is not True or cur.get("ok") is not True:
        return False
    pt, ct = prev.get("tool"), cur.get("tool")
    pa = prev.get("arguments") if isinstance(prev.get("arguments"), Mapping) else {}
    ca = cur.get("arguments") if isinstance(cur.get("arguments"), Mapping) else {}
    if pt == ct == "update_config":
        return pa.get("device") == ca.get("device") and _lines_inverse(
            pa.get("commands") or [], ca.get("commands") or []
        )
    if (pt, ct) == ("edit_config", "discard_changes"):
        return pa.get("device") is not None and pa.get("device") == ca.get("device")
    if (pt, ct) == ("commit", "cancel_commit"):
        return _devices(pa) is not None and _devices(pa) == _devices(ca)
    if pt == ct == "sot_patch":
        return pa.get("path") == ca.get("path") and _patch_inverse(pa.get("patch"), ca.get("patch"))
    if (pt, ct) == ("sot_patch", "sot_discard"):
        return True
    if (pt, ct) == ("sot_patch", "sot_delete"):
        return pa.get("path") == ca.get("path") and _creates_service_file(
            pa.get("path"), pa.get("patch")
        )
    if (pt, ct) == ("sot_commit", "sot_revert"):
        return _reverts_commit(prev.get("summary"), ca.get("revision"))
    if pt == ct == "apply":
        return _changes_inverse(pa.get("changes"), ca.get("changes"))
    return False


# --- the metrics -----------------------------------------------------------------------------------


def _canonical(args: Any) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def completion_mode(
    stop_reason: str | None,
    submitted: bool,
    success: bool | None,
    attempted_update: bool,
    null_actions: int,
) -> str | None:
    """How the run ended, first match wins:

    1. ``interaction_limit``: a budget ended it (stop reason max_steps, wall_clock, max_tokens);
    2. ``agent_error``: the agent failed (stop reason ``error``) without submitting;
    3. not submitted: ``no_submission`` (the agent returned without submit);
    4. ``correct_submission``: submitted and the hidden tests pass;
    5. ``early_submission``: submitted without attempting any update, and without any null
       action (it only looked: no attempt at configuration is visible; a snapshot or a lock,
       :data:`PREPARATORY_TOOLS`, is not an attempt). A null action is an unrecognised
       attempt, so a submission after malformed outputs is judged on the result;
    6. ``error_submission``: submitted and the tests fail.

    Returns None when submitted but never graded (``success`` None: an infrastructure error).
    """
    if stop_reason in LIMIT_STOP_REASONS:
        return "interaction_limit"
    if not submitted:
        return "agent_error" if stop_reason == "error" else "no_submission"
    if success is None:
        return None
    if success:
        return "correct_submission"
    if not attempted_update and null_actions == 0:
        return "early_submission"
    return "error_submission"


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def compute_metrics(
    events: Iterable[Mapping[str, Any]],
    level: str,
    *,
    stop_reason: str | None = None,
    submitted: bool | None = None,
    success: bool | None = None,
    tools: Iterable[Any] | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> ProcessMetrics:
    """Process metrics of one run.

    Args:
        events: the run's trajectory events, in order.
        level: the cell's level (``a0``..``a4``), for the tool-kind table.
        stop_reason: the agent's stop reason (``submitted|max_steps|wall_clock|max_tokens|error``).
        submitted: the agent declared the task done (``AgentRun.submitted``); None: a submit
            action in the trajectory, or stop reason ``submitted``, says so.
        success: the hidden tests' verdict (None: not graded).
        tools: the adapter's ToolSpecs (kinds of tools not in the level's table).
        prompt_tokens / completion_tokens: the agent's own totals, used when the trajectory has
            no ``agent_turn`` usage.

    Returns:
        :class:`ProcessMetrics`.
    """
    tally = _Tally()
    tool_list = list(tools or [])
    for ev in events:
        tally.add(ev, level, tool_list)
    counts = tally.counts
    if submitted is None:
        submitted = counts["submit"] > 0 or stop_reason == "submitted"
    inferred = False
    if submitted and counts["submit"] == 0:
        counts["submit"] = 1
        inferred = True
    n_actions = sum(counts.values())
    p_out, c_out = tally.tokens(prompt_tokens, completion_tokens)
    return ProcessMetrics(
        turns=tally.turns if tally.turns else n_actions,
        actions=n_actions,
        action_counts=counts,
        error_actions=tally.errors,
        repeat_identical=tally.rep_same,
        repeat_inverse=tally.rep_inv,
        completion_mode=completion_mode(
            stop_reason, bool(submitted), success, tally.attempted_update, counts["null"]
        ),
        submit_inferred=inferred,
        prompt_tokens=p_out,
        completion_tokens=c_out,
        invalid_calls=tally.invalid,
    )


@dataclass
class _Tally:
    """What :func:`compute_metrics` counts over a trajectory, one event at a time (:meth:`add`):
    model turns and their usage, actions per kind, errors, repeats, refused calls, and whether
    an update was attempted."""

    counts: dict[str, int] = field(default_factory=lambda: {k: 0 for k in ACTION_KINDS})
    actions: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)
    turns: int = 0
    p_sum: int = 0
    c_sum: int = 0
    has_usage: bool = False
    errors: int = 0
    rep_same: int = 0
    rep_inv: int = 0
    invalid: int = 0
    attempted_update: bool = False

    def add(self, ev: Mapping[str, Any], level: str, tool_list: list[Any]) -> None:
        """Count one event: a model turn, or an action (tool call or agent-loop action); other
        events are not counted."""
        name = ev.get("event")
        if name == AGENT_TURN_EVENT:
            self._turn(ev)
            return
        kind = self._kind(ev, name, level, tool_list)
        if kind is None:
            return
        if kind != "null" and ev.get("ok") is False:
            self.errors += 1
        if self.actions:
            self._repeat(ev, name, kind)
        self.counts[kind] += 1
        self.actions.append((kind, ev))

    def _turn(self, ev: Mapping[str, Any]) -> None:
        self.turns += 1
        p, c = _int_or_none(ev.get("prompt_tokens")), _int_or_none(ev.get("completion_tokens"))
        if p is not None or c is not None:
            self.has_usage = True
            self.p_sum += p or 0
            self.c_sum += c or 0

    def _kind(self, ev: Mapping[str, Any], name: Any, level: str, tool_list: list[Any]) -> str | None:
        """The action kind of a tool call (noting refused calls and attempted updates) or of an
        agent-loop action; None: not an action."""
        if name == TOOL_CALL_EVENT:
            self.invalid += 1 if is_invalid(ev) else 0  # whatever its kind (an unknown tool is a null action)
            args = ev.get("arguments")
            kind = tool_kind(
                level,
                str(ev.get("tool", "")),
                args if isinstance(args, Mapping) else None,
                changed=ev.get("changed"),
                tools=tool_list,
            )
            if kind == _U and ev.get("tool") not in PREPARATORY_TOOLS:
                self.attempted_update = True
            return kind
        if name == AGENT_ACTION_EVENT:
            kind = str(ev.get("action"))
            return kind if kind in ("wait", "submit", "null") else "null"
        return None

    def _repeat(self, ev: Mapping[str, Any], name: Any, kind: str) -> None:
        """Count ``ev`` as a repeat of the action before: the same update/validation call with the
        same arguments, else one that exactly undoes it."""
        _, prev = self.actions[-1]
        if (
            name == TOOL_CALL_EVENT
            and kind in (_U, _V)
            and prev.get("event") == TOOL_CALL_EVENT
            and prev.get("tool") == ev.get("tool")
            and _canonical(prev.get("arguments")) == _canonical(ev.get("arguments"))
        ):
            self.rep_same += 1
        elif is_inverse(prev, ev):
            self.rep_inv += 1

    def tokens(self, prompt_tokens: int | None, completion_tokens: int | None) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens: the turns' usage, else the agent's own totals, else unknown."""
        if self.has_usage:
            return self.p_sum, self.c_sum
        if prompt_tokens or completion_tokens:  # an agent counting its own tokens is believed
            return _int_or_none(prompt_tokens), _int_or_none(completion_tokens)
        # no usage logged and zero totals: a scripted agent (no model), a model agent that never
        # got a response, or an endpoint that sends no usage. Unknown, not zero.
        return None, None
