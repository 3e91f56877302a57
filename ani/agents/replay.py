"""The ``replay`` agent: issue the tool calls recorded in a trajectory, in order, against a fresh
lab, and record where an answer differs from the recorded one (``ani campaign rerun --replay``).

    create_agent({"kind": "replay", "trajectory": "run/trajectories/a1-onboard-site-s1.jsonl"})

The trajectory is ani's JSONL or an ATIF document (:func:`ani.trajectory_atif.read_events`). The
agent has no model and reads no answer: each recorded ``tool_call`` is called again through
``adapter.call`` with its recorded arguments (a call the adapter refused is issued again, and is
expected to be refused again), and between calls it waits the time the recorded agent took
(its own thinking, a scripted agent's pause, an LLM agent's ``wait``; each gap at most
``max_gap_s`` seconds; ``pace: false`` issues them back to back). It then stops the way the
recorded agent stopped: the ``stop_reason`` given (the run record's), else the trajectory's
``agent_stop`` event's, else ``submitted``; a mistake the recorded scripted agent made on purpose
(its ``agent_mistake`` event) is returned as the run's mistake.

Identifiers the fresh lab mints anew and an agent passes back (the source of truth's git
revisions at A3-R / A4: ``sot_list`` answers ``HEAD <revision>``, ``sot_patch`` takes it as
``base_revision``) are renamed (:class:`Renames`): the n-th revision of a recorded answer is the
n-th of the replayed one, and later arguments carry the fresh lab's value (full or short form).
Without this every patch would be a stale-base ``conflict``.

How answers are compared (:func:`compare`), per call:

- the flags ``ok``, ``error_code`` and ``changed`` strictly, wherever the recording has them;
- the text where it was recorded: the ``observation`` of the ``tool_call`` event (the text a
  model read) against the new result's, else the 300-character ``summary`` against the new
  summary. Text that legitimately changes from one lab to the next (clock times, ISO timestamps,
  FRR uptimes such as ``00:01:23`` or ``1d02h03m``, ages ``12s ago``) is masked first
  (:data:`VOLATILE`); a text that differs after masking is a reported difference, never a
  failure.

Each difference is one ``replay_diff`` trajectory event (``index`` 0-based, ``tool``,
``fields``: ``{name: {"recorded": ..., "replayed": ...}}``; the text's values are its first
differing 120 characters on each side, from ``at``), and the run ends with one ``replay_end``
event: ``calls`` (recorded), ``replayed``, ``differing`` (calls with any difference),
``flag_differences``, ``text_differences``, ``rewritten`` (calls whose arguments carried a
renamed identifier), ``stop_reason`` and ``source`` (the trajectory's file name).

Raises (at creation, before any lab): ConfigError (TrajectoryError) when the trajectory cannot be
read or holds no events, or ``stop_reason`` is not a stop reason.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from ani.agents.base import AgentRun, AgentTask, Budget, BudgetExceeded, StepCounter, StopReason
from ani.errors import ConfigError, TrajectoryError
from ani.trajectory import _summary, log_agent_action, observation_fields
from ani.trajectory_atif import RecordedCall, read_events, recorded_calls

#: patterns masked before two texts are compared (they differ from one lab run to the next)
VOLATILE = tuple(re.compile(p) for p in (
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?",  # ISO timestamps
    r"\b\d{1,2}:\d\d:\d\d(?:\.\d+)?\b",                                   # clock times, uptimes
    r"\b(?:\d+[wdhms]){2,4}\b",                                          # FRR uptimes 1d02h03m
    r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds?|msecs?)\b(?:\s+ago)?",  # ages, timers
))
#: identifiers a lab mints anew (git revisions: SHA-1, SHA-256) that an agent reads and passes back
IDENTIFIER = re.compile(r"\b(?:[0-9a-f]{64}|[0-9a-f]{40})\b")
#: the short forms of a revision shown in answers (``base eaaddd54a3b4``), characters
SHORT_FORMS = (12, 7)
#: characters of each side kept in a text difference
EXCERPT = 120
STOP_REASONS = get_args(StopReason)


@dataclass(frozen=True)
class Step:
    """One thing to replay: a call (``call``) or an LLM agent's ``wait`` (``wait_s``), after a
    pause of ``gap_s`` seconds (the recorded time between the previous step and this one)."""

    call: RecordedCall | None = None
    wait_s: float = 0.0
    gap_s: float = 0.0


def mask(text: str) -> str:
    """``text`` with every :data:`VOLATILE` match replaced by ``#``."""
    for pat in VOLATILE:
        text = pat.sub("#", text)
    return text


def _text_diff(recorded: str, replayed: str) -> dict[str, Any] | None:
    a, b = mask(recorded), mask(replayed)
    if a == b:
        return None
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return {"recorded": a[at:at + EXCERPT], "replayed": b[at:at + EXCERPT], "at": at}


def recorded_text(rec: RecordedCall, result: Any) -> tuple[str, str, str] | None:
    """``(kind, recorded text, replayed text)`` of a call: the ``observation`` where the recording
    has it, else the ``summary`` (the same 300-character one-line summary of the new result);
    None: the recording has neither."""
    if isinstance(rec.event.get("observation"), str):
        return "observation", rec.event["observation"], observation_fields(result)["observation"]
    if rec.summary is not None:
        return "summary", rec.summary, _summary(result.text or "")
    return None


def compare(rec: RecordedCall, result: Any, renames: Renames | None = None) -> dict[str, Any]:
    """The differences between a recorded call's answer and ``result`` (a ToolResult):
    ``{field: {"recorded": ..., "replayed": ...}}`` for each flag (``ok``, ``error_code``,
    ``changed``) the recording has and that differs, and ``text`` (``observation`` or
    ``summary``, whichever was recorded; the lab's identifiers renamed by ``renames``, volatile
    parts masked) when it differs. ``{}``: same."""
    got = {"ok": result.ok, "error_code": result.error.code.value if result.error else None,
           "changed": result.changed}
    out: dict[str, Any] = {}
    for name in ("ok", "error_code", "changed"):
        if name in rec.event and rec.event[name] != got[name]:
            out[name] = {"recorded": rec.event[name], "replayed": got[name]}
    texts = recorded_text(rec, result)
    if texts is not None:
        kind, was, now = texts
        diff = _text_diff(renames.apply(was) if renames is not None else was, now)
        if diff is not None:
            out["text"] = {"kind": kind, **diff}
    return out


class Renames:
    """The lab's own identifiers (:data:`IDENTIFIER`: the source of truth's git revisions at A3-R /
    A4) as recorded and as the fresh lab minted them, learnt from the answers in order (the n-th
    identifier of a recorded text is the n-th of the replayed one), so a later call's arguments
    carry the fresh lab's (``base_revision`` read from ``sot_list``). A revision's short forms
    (its first :data:`SHORT_FORMS` characters) are renamed with it."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def learn(self, recorded: str, replayed: str) -> None:
        """Pair the identifiers of the two texts in order (the first pairing of one wins)."""
        for old, new in zip(IDENTIFIER.findall(recorded), IDENTIFIER.findall(replayed), strict=False):
            if old != new and len(old) == len(new):
                self.names.setdefault(old, new)

    def apply(self, text: str) -> str:
        """``text`` with every known identifier (and its short forms) renamed."""
        for old, new in self.names.items():
            text = text.replace(old, new)
            for n in SHORT_FORMS:
                text = re.sub(rf"\b{old[:n]}\b", new[:n], text)
        return text

    def rewrite(self, value: Any) -> Any:
        """``value`` (JSON arguments) with :meth:`apply` on every string in it."""
        if isinstance(value, str):
            return self.apply(value) if self.names else value
        if isinstance(value, list):
            return [self.rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: self.rewrite(v) for k, v in value.items()}
        return value


def _when(ev: dict[str, Any]) -> float | None:
    try:
        return datetime.fromisoformat(str(ev["timestamp"]).replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, TypeError):
        return None


def _waited(ev: dict[str, Any]) -> float:
    """Seconds an LLM agent's ``wait`` lasted: its ``waited_s`` (logged after the sleep), else
    the ``seconds`` asked."""
    value = ev.get("waited_s", ev.get("seconds"))
    try:
        return max(0.0, float(value or 0.0))
    except (TypeError, ValueError):
        return 0.0


def script(events: list[dict[str, Any]]) -> list[Step]:
    """The steps of ``events`` in order: each ``tool_call`` and each ``agent_action`` ``wait``,
    with the recorded gap before it (the time from the previous step's end to this one's start:
    an event's end is its timestamp, its start that minus its ``elapsed_s`` (a call) or
    ``waited_s`` (a wait); 0 without times)."""
    calls = iter(recorded_calls(events))
    steps: list[Step] = []
    last: float | None = None
    for ev in events:
        kind = ev.get("event")
        is_wait = kind == "agent_action" and ev.get("action") == "wait"
        if kind != "tool_call" and not is_wait:
            continue
        end = _when(ev)
        waited = _waited(ev) if is_wait else 0.0
        took = float(ev.get("elapsed_s") or 0.0) if kind == "tool_call" else waited
        gap = max(0.0, end - took - last) if end is not None and last is not None else 0.0
        if end is not None:
            last = end
        if is_wait:
            steps.append(Step(wait_s=waited, gap_s=gap))
        else:
            steps.append(Step(call=next(calls), gap_s=gap))
    return steps


def recorded_stop(events: list[dict[str, Any]]) -> str | None:
    """The stop reason of the trajectory's last ``agent_stop`` event (None: none)."""
    stops = [e.get("stop_reason") for e in events if e.get("event") == "agent_stop"]
    return str(stops[-1]) if stops and stops[-1] in STOP_REASONS else None


def recorded_mistake(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``mistake`` of the trajectory's ``agent_mistake`` event (None: none)."""
    for ev in events:
        if ev.get("event") == "agent_mistake" and isinstance(ev.get("mistake"), dict):
            return dict(ev["mistake"])
    return None


class ReplayAgent:
    """Replays the tool calls of ``trajectory`` (see the module docstring).

    Args:
        trajectory: path of the trajectory (ani's JSONL or ATIF).
        stop_reason: how the recorded agent stopped (the run record's ``stop_reason``); None:
            the trajectory's ``agent_stop``, else ``submitted``.
        pace: wait the recorded time between calls (True) or issue them back to back.
        max_gap_s: the longest wait between two calls, seconds.
    """

    name = "replay"

    def __init__(self, trajectory: str, stop_reason: str | None = None, pace: bool = True,
                 max_gap_s: float = 30.0) -> None:
        if stop_reason is not None and stop_reason not in STOP_REASONS:
            raise ConfigError(f"agent.stop_reason: {stop_reason!r} is not one of {', '.join(STOP_REASONS)}")
        self.source = Path(trajectory)
        self.events = read_events(self.source)
        if not self.events:
            raise TrajectoryError(f"{self.source}: no events to replay")
        self.steps = script(self.events)
        self.stop_reason = stop_reason or recorded_stop(self.events) or "submitted"
        self.pace = bool(pace)
        self.max_gap_s = max(0.0, float(max_gap_s))

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Issue every recorded call through ``adapter`` within ``budget``; never raises for a
        call's answer (differences are recorded, see :func:`compare`)."""
        counter = StepCounter(adapter, budget)
        traj = getattr(adapter, "trajectory", None)
        tally = {"replayed": 0, "differing": 0, "flag_differences": 0, "text_differences": 0, "rewritten": 0}
        renames = Renames()
        reason: StopReason = self.stop_reason  # type: ignore[assignment]
        try:
            for step in self.steps:
                self._pause(step.gap_s, counter)
                if step.call is None:
                    self._pause(step.wait_s, counter)
                    if traj is not None:
                        log_agent_action(traj, "wait", seconds=step.wait_s)
                    continue
                self._one(counter, traj, step.call, tally, renames)
        except BudgetExceeded as exc:
            reason = exc.reason
        calls = sum(1 for s in self.steps if s.call is not None)
        if traj is not None:
            if reason == "submitted":
                log_agent_action(traj, "submit")
            traj.log("replay_end", calls=calls, source=self.source.name, stop_reason=reason, **tally)
        return AgentRun(stop_reason=reason, steps=counter.steps, submitted=reason == "submitted",
                        error="replay of a run whose agent stopped with an error" if reason == "error" else None,
                        trajectory=traj, mistake=recorded_mistake(self.events))

    def _one(self, counter: StepCounter, traj: Any, call: RecordedCall, tally: dict[str, int],
             renames: Renames) -> None:
        index = tally["replayed"]
        arguments = renames.rewrite(dict(call.arguments))
        tally["rewritten"] += arguments != call.arguments
        result = counter.call(call.tool, arguments)
        tally["replayed"] += 1
        texts = recorded_text(call, result)
        if texts is not None:
            renames.learn(texts[1], texts[2])
        diff = compare(call, result, renames)
        if not diff:
            return
        tally["differing"] += 1
        tally["text_differences"] += "text" in diff
        tally["flag_differences"] += len(diff) - ("text" in diff)
        if traj is not None:
            traj.log("replay_diff", index=index, tool=call.tool, fields=diff)

    def _pause(self, seconds: float, counter: StepCounter) -> None:
        if not self.pace or seconds <= 0:
            return
        left = counter.budget.wall_clock_s - (time.monotonic() - counter.t0)
        time.sleep(max(0.0, min(seconds, self.max_gap_s, left)))
        counter.check_clock()
