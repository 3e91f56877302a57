"""A run's trajectory as ATIF, the Agent Trajectory Interchange Format of the Harbor framework
(the ``atif`` package's pydantic models, ATIF v1.8), and back: :func:`to_atif`, :func:`from_atif`.

ani's own trajectory is a list of events (:mod:`ani.trajectory`); ATIF is a list of steps. The
mapping, in the events' order::

    agent_start (LLM agent)      a system step (its system prompt) and the user step (its request);
                                 its tool list is the ATIF agent's tool_definitions
    (no agent_start)             the user step holds the request given (the task variant's)
    agent_turn (a model reply)   an agent step: the reply's text, its tool calls (id, name,
                                 arguments), metrics (prompt / completion tokens), llm_call_count 1
    tool_call (the adapter's)    inside a model turn: the tool call of that reply it answers
                                 (named by the LLM agent's agent_observation; a framework agent's:
                                 the reply's first unanswered call of the same tool); otherwise
                                 (the scripted agent, a call no model asked for) an agent step of
                                 its own with llm_call_count 0 (a deterministic dispatch)
    agent_observation            the observation result of its tool call (the text the model saw)
    agent_stop                   a system step ("agent stopped: <reason>", its error)
    any other event              kept on the step it happened during (faults, mistakes, notes)

A tool call's observation is what the agent was answered: the LLM agent's ``agent_observation``
text, else the ``tool_call`` event's ``observation`` (the text whole up to
:data:`ani.trajectory.OBSERVATION_CHARS`, with a truncation mark), else, in trajectories written
before it was recorded, its ``summary`` (the first 300 characters, whitespace folded).

Nothing is lost: every event is also kept, in ``extra["ani_events"]`` of the ATIF object it
lies on, as ``{"seq": <its index>, "event": <name>, "fields": {...}}`` with only the fields the
ATIF object does not already say (the tool's name, arguments, flags, the reply's text and
tokens ...; ``"absent"`` lists what the object says that the event did not have), so
:func:`from_atif` gives the same events in the same order. An adapter call's ``ok`` /
``error_code`` / ``changed`` are on its observation result's ``extra``. An ATIF document written by
another harness (no ani events) reads as one ``tool_call`` event per tool call, in step order,
with the observation's text as its ``observation`` (and its summary).

Use :func:`read_events` for a file of either kind and :func:`recorded_calls` for the tool calls
a replay issues (name, arguments, result text, in order).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ani.errors import TrajectoryError
from ani.trajectory import AGENT_TURN_EVENT, TOOL_CALL_EVENT, _summary
from ani.validation import format_validation_error

#: the ATIF version written (the newest the ``atif`` package's models validate)
SCHEMA_VERSION = "ATIF-v1.8"
#: the version of ani's own layout inside ATIF's ``extra`` fields
ANI_FORMAT = 1
EVENTS_KEY = "ani_events"
#: agent-loop tools that are not the adapter's (``ani.agents.llm``)
LOOP_TOOLS = ("wait", "submit")
#: a tool result's flags, shown on its ATIF observation result's ``extra``
FLAGS = ("ok", "error_code", "changed")


@dataclass(frozen=True)
class AgentInfo:
    """Who acted: the ATIF ``agent`` object (``name``, ``version``, ``model_name``, ``extra``)."""

    name: str = "ani-agent"
    version: str = ""
    model_name: str | None = None
    extra: dict[str, Any] | None = None


@dataclass(frozen=True)
class RecordedCall:
    """One adapter tool call as recorded, in the order it was issued.

    Attributes:
        tool / arguments: what was called (the adapter's tool name, its JSON arguments).
        text: what the agent was answered: the LLM agent's ``agent_observation`` text when one
            was recorded, else ``summary``.
        summary: the ``tool_call`` event's summary of the result (None: not recorded).
        ok / error_code / changed: the result's flags (None: not recorded).
        call_id: the model's tool-call id (None: no model, e.g. the scripted agent).
        event: the whole ``tool_call`` event.
    """

    tool: str
    arguments: dict[str, Any]
    text: str | None
    summary: str | None
    ok: bool | None
    error_code: str | None
    changed: bool | None
    call_id: str | None = None
    event: dict[str, Any] = field(default_factory=dict)


# --- ani events -> ATIF ------------------------------------------------------------------------


def to_atif(events: list[dict[str, Any]], *, request: str | None = None, agent: AgentInfo | None = None,
            session_id: str | None = None, extra: dict[str, Any] | None = None,
            final_metrics: dict[str, Any] | None = None, notes: str | None = None) -> Any:
    """The ATIF document (an ``atif.Trajectory``, validated) of ``events``.

    Args:
        events: the trajectory's events (``Trajectory.read(path)``), in order.
        request: the user step's message when the events hold no ``agent_start`` (the task
            variant's request; None: a placeholder saying it was not recorded).
        agent: the ATIF agent (name, version, model); session_id: the run id.
        extra: run metadata for the document's ``extra["ani"]`` (verdict, level, scenario hash ...).
        final_metrics: ``atif.FinalMetrics`` fields (total tokens ...).
    Raises:
        TrajectoryError: the events do not make a valid ATIF document (a bug, not bad input).
    """
    from atif import Trajectory as AtifTrajectory

    builder = _Builder(events, request)
    steps = builder.build()
    who = agent or AgentInfo()
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "agent": {"name": who.name, "version": who.version or _version(), "model_name": who.model_name,
                  "tool_definitions": builder.tools, "extra": who.extra},
        "steps": steps,
        "notes": notes,
        "final_metrics": {**(final_metrics or {}), "total_steps": len(steps)},
        "extra": {"ani": {"format": ANI_FORMAT, "bound": builder.bound, **(extra or {})}},
    }
    try:
        return AtifTrajectory.model_validate(doc)
    except ValidationError as exc:
        raise TrajectoryError(f"the ATIF document does not validate: {format_validation_error(exc)}") from None


def _version() -> str:
    # the package ani is loaded before any of its modules; reading it from sys.modules spares an
    # import of the root package, whose __init__ loads ani.connect (a layer above this one)
    return str(sys.modules["ani"].__version__)


def _iso(value: Any) -> bool:
    """``value`` is an ISO 8601 timestamp (what ATIF's step timestamp must be)."""
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _new_step(source: str, message: str, timestamp: Any = None, **more: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"source": source, "message": message, "_events": []}
    if _iso(timestamp):
        step["timestamp"] = timestamp
    step.update(more)
    return step


class _Builder:
    """Walks the events once, in order, building the steps (dicts) of :func:`to_atif`."""

    def __init__(self, events: list[dict[str, Any]], request: str | None) -> None:
        self.events = [e for e in events if isinstance(e, dict)]
        self.request = request
        self.steps: list[dict[str, Any]] = []
        self.turn: dict[str, Any] | None = None  # the agent step of the model reply being answered
        self.pending: list[tuple[int, dict[str, Any]]] = []  # events of the tool call being answered
        self.tools: list[dict[str, Any]] | None = None
        self.bound = _bound(self.events)

    def build(self) -> list[dict[str, Any]]:
        start = next((i for i, e in enumerate(self.events) if e.get("event") == "agent_start"), None)
        self.open(start)
        for seq, ev in enumerate(self.events):
            if seq != start:
                self.add(seq, ev)
        self.end_turn()
        return [_finish(i, s, self.bound) for i, s in enumerate(self.steps, 1)]

    def open(self, start: int | None) -> None:
        """The system step (the LLM agent's prompt) and the user step (the request)."""
        if start is None:
            text = self.request if self.request is not None else "(the request was not recorded)"
            self.steps.append(_new_step("user", text))
            return
        ev = self.events[start]
        if isinstance(ev.get("system_prompt"), str):
            self.steps.append(_new_step("system", ev["system_prompt"], ev.get("timestamp"), _role="system_prompt"))
        tools = ev.get("tools")
        if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
            self.tools = tools
        request = ev.get("request") if isinstance(ev.get("request"), str) else (self.request or "")
        user = _new_step("user", request, ev.get("timestamp"), _tools=self.tools,
                         _system_prompt=ev["system_prompt"] if isinstance(ev.get("system_prompt"), str) else None)
        user["_events"].append((start, ev))
        self.steps.append(user)

    def add(self, seq: int, ev: dict[str, Any]) -> None:
        name = ev.get("event")
        if name == AGENT_TURN_EVENT:
            self.end_turn()
            self.turn = _turn_step(ev)
            self.turn["_events"].append((seq, ev))
            self.steps.append(self.turn)
        elif name == "agent_observation" and self.turn is not None:
            self.observe(seq, ev)
        elif name in (TOOL_CALL_EVENT, "agent_action") and self.turn is not None:
            self.pending.append((seq, ev))
        elif name == TOOL_CALL_EVENT:
            self.steps.append(_call_step(seq, ev, len(self.steps) + 1))
        elif name == "agent_stop":
            self.end_turn()
            self.steps.append(_stop_step(seq, ev))
        else:
            self.steps[-1]["_events"].append((seq, ev))

    def observe(self, seq: int, ev: dict[str, Any]) -> None:
        """The answer to one tool call of the current reply: its events and its result."""
        turn = self.turn if self.turn is not None else self.steps[-1]
        call_id = ev.get("tool_call_id")
        call = next((c for c in turn.get("tool_calls") or [] if c["tool_call_id"] == call_id), None)
        result: dict[str, Any] = {"source_call_id": call_id if call is not None else None,
                                  "content": ev.get("text") if isinstance(ev.get("text"), str) else None,
                                  "_events": [(seq, ev)]}
        if call is not None:
            call["_events"].extend(self.pending)
            call["_result"] = result
        else:
            turn["_events"].extend(self.pending)
        self.pending = []
        turn.setdefault("observation", {"results": []})["results"].append(result)

    def end_turn(self) -> None:
        """Events of the reply that no observation answered stay on its step. An adapter call
        answers the reply's first unanswered tool call of the same tool (a framework agent's
        turns: no ``agent_observation``, the adapter's result is what the model read); one that
        answers none is a step of its own (ATIF shows every call)."""
        turn, pending = self.turn, self.pending
        self.pending, self.turn = [], None
        for seq, ev in pending:
            if ev.get("event") != TOOL_CALL_EVENT:
                if turn is not None:
                    turn["_events"].append((seq, ev))
            elif turn is None or not self.answer(turn, seq, ev):
                self.steps.append(_call_step(seq, ev, len(self.steps) + 1))

    @staticmethod
    def answer(turn: dict[str, Any], seq: int, ev: dict[str, Any]) -> bool:
        """Make the adapter call ``ev`` the result of the first tool call of ``turn`` that has
        none and names the same tool; False when there is none."""
        call = next((c for c in turn.get("tool_calls") or []
                     if "_result" not in c and c["function_name"] == str(ev.get("tool") or "")), None)
        if call is None:
            return False
        result = {"source_call_id": call["tool_call_id"], "content": _said(ev), "_events": []}
        call["_events"].append((seq, ev))
        call["_result"] = result
        turn.setdefault("observation", {"results": []})["results"].append(result)
        return True


def _bound(events: list[dict[str, Any]]) -> dict[str, Any]:
    """``run_id`` / ``level`` when every event carries the same value (the trajectory binds them)."""
    out: dict[str, Any] = {}
    for key in ("run_id", "level"):
        values = {json.dumps(e.get(key)) for e in events if key in e}
        if len(values) == 1 and all(key in e for e in events):
            out[key] = events[0][key]
    return out


def _turn_step(ev: dict[str, Any]) -> dict[str, Any]:
    """The agent step of one model reply (``agent_turn``)."""
    step = _new_step("agent", ev.get("content") if isinstance(ev.get("content"), str) else "",
                     ev.get("timestamp"), llm_call_count=1)
    pt, ct = ev.get("prompt_tokens"), ev.get("completion_tokens")
    if isinstance(pt, int) or isinstance(ct, int):
        step["metrics"] = {"prompt_tokens": pt if isinstance(pt, int) else None,
                           "completion_tokens": ct if isinstance(ct, int) else None}
    calls, seen = [], set()
    for i, c in enumerate(ev.get("tool_calls") or []):
        if not isinstance(c, dict):
            continue
        call_id = c.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = f"call_{ev.get('turn')}_{i}"  # the LLM agent's own rule (ani.agents.llm)
        seen.add(call_id)
        args, raw = _arguments(c.get("arguments"))
        call: dict[str, Any] = {"tool_call_id": call_id, "function_name": str(c.get("name") or ""),
                                "arguments": args, "_events": []}
        if raw is not None:
            call["extra"] = {"raw_arguments": raw}
        calls.append(call)
    if calls:
        step["tool_calls"] = calls
    return step


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """``(the arguments as an object, the raw text when it is not one)`` of a model's call."""
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            return {}, raw
        return (value, None) if isinstance(value, dict) else ({}, raw)
    return {}, None if raw is None else json.dumps(raw, default=str)


def _call_step(seq: int, ev: dict[str, Any], n: int) -> dict[str, Any]:
    """An adapter call outside a model reply: an agent step of its own (no model)."""
    args = ev.get("arguments") if isinstance(ev.get("arguments"), dict) else {}
    call_id = f"call_{n}"
    text = _said(ev)
    result = {"source_call_id": call_id, "content": text, "_events": []}
    call = {"tool_call_id": call_id, "function_name": str(ev.get("tool") or ""), "arguments": args,
            "_events": [(seq, ev)], "_result": result}
    step = _new_step("agent", "", ev.get("timestamp"), llm_call_count=0, tool_calls=[call])
    step["observation"] = {"results": [result]}
    return step


def _said(ev: dict[str, Any]) -> str | None:
    """What a ``tool_call`` event says the agent was answered: its ``observation`` (recorded
    whole up to :data:`ani.trajectory.OBSERVATION_CHARS` since issue 26), else, in older
    trajectories, its 300-character ``summary``."""
    for key in ("observation", "summary"):
        if isinstance(ev.get(key), str):
            return ev[key]
    return None


def _stop_step(seq: int, ev: dict[str, Any]) -> dict[str, Any]:
    said = f"agent stopped: {ev.get('stop_reason')}"
    if ev.get("error"):
        said += f"; error: {ev['error']}"
    step = _new_step("system", said, ev.get("timestamp"))
    step["_events"].append((seq, ev))
    return step


# --- what ATIF already says of an event (shared by export and import) ---------------------------


def _implied(name: str, host: dict[str, Any], bound: dict[str, Any]) -> dict[str, Any]:
    """The fields of an event called ``name`` that its ATIF host says: ``host`` is the step, the
    tool call (with ``_result``) or the observation result the event lies on."""
    out = dict(bound)
    if name == TOOL_CALL_EVENT and "function_name" in host:
        out.update(tool=host["function_name"], arguments=host.get("arguments"))
        result = host.get("_result") or {}
        if isinstance(result.get("content"), str):
            out.update(observation=result["content"], summary=_summary(result["content"]))
        out.update({k: v for k, v in (result.get("extra") or {}).items() if k in FLAGS})
    elif name == "agent_observation" and "source_call_id" in host:
        out.update(text=host.get("content"))
        if host.get("source_call_id") is not None:
            out["tool_call_id"] = host["source_call_id"]
    elif name == AGENT_TURN_EVENT and host.get("source") == "agent":
        metrics = host.get("metrics") or {}
        out.update(content=host.get("message"), prompt_tokens=metrics.get("prompt_tokens"),
                   completion_tokens=metrics.get("completion_tokens"),
                   tool_calls=[{"id": c["tool_call_id"], "name": c["function_name"],
                                "arguments": (c.get("extra") or {}).get("raw_arguments", json.dumps(c["arguments"]))}
                               for c in host.get("tool_calls") or []])
    elif name == "agent_start" and host.get("source") == "user":
        out.update(request=host.get("message"), system_prompt=host.get("_system_prompt"),
                   tools=host.get("_tools"))
    return out


def _entry(seq: int, ev: dict[str, Any], host: dict[str, Any], bound: dict[str, Any]) -> dict[str, Any]:
    """What ``extra["ani_events"]`` keeps of one event: ``{"seq", "event", "fields": what its
    host does not say, "absent": fields the host would say that the event does not have}``."""
    name = str(ev.get("event"))
    implied = _implied(name, host, bound)
    entry: dict[str, Any] = {"seq": seq, "event": name,
                             "fields": {k: v for k, v in ev.items()
                                        if k != "event" and (k not in implied or implied[k] != v)}}
    absent = [k for k in implied if k not in ev]
    if absent:
        entry["absent"] = absent
    return entry


def _finish(step_id: int, step: dict[str, Any], bound: dict[str, Any]) -> dict[str, Any]:
    """The step as ATIF: ``step_id``, each object's events in its ``extra``, private keys gone."""
    out = {"step_id": step_id}
    for call in step.get("tool_calls") or []:
        _flags(call)
        _store(call, bound)
    for result in (step.get("observation") or {}).get("results", []):
        _store(result, bound)
    _store(step, bound)
    for k, v in step.items():
        if not k.startswith("_"):
            out[k] = v
    if "tool_calls" in out:
        out["tool_calls"] = [{k: v for k, v in c.items() if not k.startswith("_")} for c in out["tool_calls"]]
    if "observation" in out:
        out["observation"] = {"results": [{k: v for k, v in r.items() if not k.startswith("_")}
                                          for r in out["observation"]["results"]]}
    return out


def _flags(call: dict[str, Any]) -> None:
    """The adapter result's ``ok`` / ``error_code`` / ``changed`` on the call's observation
    result's ``extra`` (where an ATIF reader sees a failed call)."""
    result = call.get("_result")
    done = next((e for _s, e in call.get("_events") or [] if e.get("event") == TOOL_CALL_EVENT), None)
    if result is None or done is None:
        return
    result["extra"] = {**(result.get("extra") or {}),
                       **{k: done.get(k) for k in FLAGS if k in done}}


def _store(host: dict[str, Any], bound: dict[str, Any]) -> None:
    """Move ``host["_events"]`` into ``host["extra"]["ani_events"]`` (tool calls always get the
    key, so an ani export's call that no adapter call answered reads as none)."""
    events = host.get("_events") or []
    if host.get("_role") == "system_prompt":
        host["extra"] = {"ani_role": "system_prompt"}
    if not events and "function_name" not in host:
        return
    host.setdefault("extra", {})
    host["extra"] = {**(host.get("extra") or {}), EVENTS_KEY: [_entry(s, e, host, bound) for s, e in events]}


# --- ATIF -> ani events ------------------------------------------------------------------------


def from_atif(doc: Any) -> list[dict[str, Any]]:
    """ani's events of an ATIF document (a dict, JSON text or ``atif.Trajectory``), in order.

    An ani export gives back the events it was made from (same fields, same order). A document
    of another harness gives one ``tool_call`` event per tool call (``tool``, ``arguments``,
    ``summary`` of its observation; ``ok`` / ``changed`` / ``error_code`` None), in step order.

    Raises:
        TrajectoryError: not an ATIF document (the first field the ``atif`` models refuse).
    """
    traj = _validated(doc)
    data = traj.model_dump(mode="json")
    ani = (data.get("extra") or {}).get("ani")
    if not isinstance(ani, dict) or ani.get("format") != ANI_FORMAT:
        return _foreign_events(data)
    bound = ani.get("bound") if isinstance(ani.get("bound"), dict) else {}
    tools = (data.get("agent") or {}).get("tool_definitions")
    found: list[tuple[int, dict[str, Any]]] = []
    system_prompt = None
    for step in data["steps"]:
        if ((step.get("extra") or {}).get("ani_role")) == "system_prompt":
            system_prompt = step.get("message")
        step["_system_prompt"], step["_tools"] = system_prompt, tools
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results", [])}
        for call in step.get("tool_calls") or []:
            call["_result"] = results.get(call["tool_call_id"])
            found += _events_on(call, bound)
        for result in (step.get("observation") or {}).get("results", []):
            found += _events_on(result, bound)
        found += _events_on(step, bound)
    return [ev for _seq, ev in sorted(found, key=lambda p: p[0])]


def _validated(doc: Any) -> Any:
    from atif import Trajectory as AtifTrajectory

    if isinstance(doc, AtifTrajectory):
        return doc
    try:
        if isinstance(doc, (str, bytes)):
            return AtifTrajectory.model_validate_json(doc)
        return AtifTrajectory.model_validate(doc)
    except ValidationError as exc:
        raise TrajectoryError(f"not an ATIF trajectory: {format_validation_error(exc)}") from None


def _events_on(host: dict[str, Any], bound: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for entry in (host.get("extra") or {}).get(EVENTS_KEY) or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("seq"), int):
            raise TrajectoryError(f"{EVENTS_KEY}: an entry without its integer seq")
        name = str(entry.get("event"))
        fields = entry.get("fields") if isinstance(entry.get("fields"), dict) else {}
        absent = set(entry.get("absent") or [])
        ev = {k: v for k, v in _implied(name, host, bound).items() if k not in absent}
        out.append((entry["seq"], {"event": name, **ev, **fields}))
    return out


def _foreign_events(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of an ATIF document no ani wrote, as ``tool_call`` events."""
    out = []
    for step in data["steps"]:
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results", [])}
        for call in step.get("tool_calls") or []:
            content = (results.get(call["tool_call_id"]) or {}).get("content")
            text = content if isinstance(content, str) else None
            out.append({"event": TOOL_CALL_EVENT, "tool": call["function_name"], "arguments": call["arguments"],
                        "ok": None, "error_code": None, "changed": None,
                        "summary": _summary(text) if text is not None else None,
                        **({"observation": text} if text is not None else {}),
                        "tool_call_id": call["tool_call_id"], "timestamp": step.get("timestamp")})
    return out


# --- files and tool calls ----------------------------------------------------------------------


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The events of a trajectory file: ani's JSONL (``trajectories/<run id>.jsonl``) or an ATIF
    JSON document (``ani campaign export --format atif``, or another harness's).

    Raises:
        TrajectoryError: the file cannot be read, or is neither (the line or field, never its text).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TrajectoryError(f"{p}: cannot read the trajectory ({type(exc).__name__})") from None
    head = text.lstrip()[:1]
    if head == "{":
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None  # JSON lines: one object per line
        if isinstance(doc, dict) and "schema_version" in doc:
            try:
                return from_atif(doc)
            except TrajectoryError as exc:
                raise TrajectoryError(f"{p}: {exc}") from None
    events = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            raise TrajectoryError(f"{p}:{i}: not a JSON line (neither ani's trajectory nor ATIF)") from None
        if not isinstance(ev, dict) or "event" not in ev:
            raise TrajectoryError(f"{p}:{i}: not a trajectory event (no 'event' field)")
        events.append(ev)
    return events


def recorded_calls(events: list[dict[str, Any]]) -> list[RecordedCall]:
    """The adapter tool calls of ``events`` in order, each with the text the agent was answered
    (the ``agent_observation`` after it, before the next call or model reply; else its summary)."""
    out: list[RecordedCall] = []
    for i, ev in enumerate(events):
        if ev.get("event") != TOOL_CALL_EVENT:
            continue
        seen = _observation_after(events, i)
        summary = ev.get("summary") if isinstance(ev.get("summary"), str) else None
        out.append(RecordedCall(
            tool=str(ev.get("tool") or ""),
            arguments=dict(ev["arguments"]) if isinstance(ev.get("arguments"), dict) else {},
            text=seen.get("text") if seen is not None else _said(ev),
            summary=summary, ok=ev.get("ok"), error_code=ev.get("error_code"), changed=ev.get("changed"),
            call_id=(seen or {}).get("tool_call_id") or ev.get("tool_call_id"), event=dict(ev)))
    return out


def _observation_after(events: list[dict[str, Any]], i: int) -> dict[str, Any] | None:
    for ev in events[i + 1:]:
        name = ev.get("event")
        if name == "agent_observation":
            return ev
        if name in (TOOL_CALL_EVENT, AGENT_TURN_EVENT, "agent_stop"):
            return None
    return None


def read_calls(path: str | Path) -> list[RecordedCall]:
    """:func:`recorded_calls` of the file ``path`` (:func:`read_events`). Raises TrajectoryError."""
    return recorded_calls(read_events(path))


__all__ = ["ANI_FORMAT", "SCHEMA_VERSION", "AgentInfo", "RecordedCall", "from_atif", "read_calls",
           "read_events", "recorded_calls", "to_atif"]
