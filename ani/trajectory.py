"""The run's trajectory: one structured JSON event per ANI call (structlog).

Each event line holds ``event`` ("tool_call"), ``run_id``, ``level``, ``tool``,
``arguments``, ``ok``, ``error_code``, ``changed``, ``elapsed_s``, a short one-line
``summary`` of the result text (at most 300 characters), the ``observation`` (the text a model
reads for the result, :meth:`ToolResult.observation`, whole up to :data:`OBSERVATION_CHARS`
characters, then cut with the mark ``\n[... N more characters cut]``), ``observation_chars``
(its length before any cut) and ``observation_truncated``, and an ISO timestamp; and, when the
result has them, ``refusal``, ``devices``, ``not_restored`` (:func:`outcome_fields`). Every
agent's calls go through the adapter, so the observation is recorded the same way for every agent
kind (scripted, llm, a framework agent, an MCP client; docs/tool-results.md). Agents may add their own
events (``log("agent_message", ...)``); the agent-loop actions and turns that the process
metrics (:mod:`ani.campaign.metrics`) count are written with :func:`log_agent_action` and
:func:`log_agent_turn`::

    {"event": "agent_action", "action": "wait", "seconds": 5}
    {"event": "agent_action", "action": "submit"}
    {"event": "agent_action", "action": "null", "reason": "invalid tool-call JSON"}
    {"event": "agent_turn", "turn": 3, "prompt_tokens": 812, "completion_tokens": 64}

The scripted agent with ``mistakes:`` writes one ``agent_mistake`` event (the mistake it made,
``ani.agents.scripted_mistakes``): ``{"event": "agent_mistake", "mistake": {...} | null, "note": ...}``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

import structlog

from ani.errors import AgentError
from ani.protocol import ToolResult

SUMMARY_CHARS = 300
#: characters of a result's observation a ``tool_call`` event keeps whole (then cut, with the
#: mark of :func:`cut_text`): 65,536, the adapters' own output cap (``max_output_bytes``), above
#: every result measured on the pilot-25 brownfield (A1 ``get_running_config`` 752-5,651
#: characters, A2 ``get_config`` up to 11,221, A0 ``show ip route`` up to 16,098, A2
#: ``get_state`` of a route reflector 47,933)
OBSERVATION_CHARS = 65536
TOOL_CALL_EVENT = "tool_call"
AGENT_ACTION_EVENT = "agent_action"
AGENT_TURN_EVENT = "agent_turn"
#: the agent-loop actions (tool calls are logged by the adapter)
AGENT_ACTIONS = ("wait", "submit", "null")


def _summary(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def cut_text(text: str, limit: int) -> tuple[str, int | None]:
    """``(text, None)`` if it has at most ``limit`` characters, else ``(its first limit
    characters + "\n[... N more characters cut]", its full length)``: the one truncation mark of
    a recorded observation and of the shipped LLM agent's (:mod:`ani.agents.llm`)."""
    if len(text) <= limit:
        return text, None
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut]", len(text)


def observation_fields(result: ToolResult, limit: int = OBSERVATION_CHARS) -> dict[str, Any]:
    """What a ``tool_call`` event keeps of the text a model reads: ``{"observation": str (cut
    at limit characters with :func:`cut_text`'s mark), "observation_chars": int (the whole
    text's length), "observation_truncated": bool}``."""
    text = result.observation()
    kept, full = cut_text(text, limit)
    return {"observation": kept, "observation_chars": len(text), "observation_truncated": full is not None}


def outcome_fields(result: ToolResult) -> dict[str, Any]:
    """What a ``tool_call`` event keeps of a result's ``data`` for the measured outcomes
    (:mod:`ani.campaign.outcomes`, the run record's ``invalid_calls`` and ``partial``), each key
    only when the result has it:

    - ``refusal``: a refused call's first ``data.errors[].code`` (an intent error code such as
      ``unknown-router``, ``schema``, ``seq-conflict``);
    - ``devices``: ``{device: {"ok", "changed", "cancelled"}}`` of a multi-device call's
      per-device results (``data.devices``, A2 commit / confirm_commit / cancel_commit);
    - ``not_restored``: the routers a failed transaction could not put back (``data.not_restored``).
    """
    data = result.data if isinstance(result.data, dict) else {}
    out: dict[str, Any] = {}
    errors = data.get("errors")
    if not result.ok and isinstance(errors, list) and errors and isinstance(errors[0], dict) and errors[0].get("code"):
        out["refusal"] = str(errors[0]["code"])
    devices = data.get("devices")
    if isinstance(devices, dict) and devices and all(isinstance(v, dict) and "ok" in v for v in devices.values()):
        out["devices"] = {str(d): {"ok": bool(v.get("ok")), "changed": v.get("changed"),
                                   "cancelled": bool(v.get("cancelled"))} for d, v in devices.items()}
    bad = data.get("not_restored")
    if isinstance(bad, list) and bad:
        out["not_restored"] = [str(x) for x in bad]
    return out


def writable(value: Any) -> Any:
    """``value`` if JSON can write it (with ``str`` for other objects, as the trajectory does),
    else ``"<TYPE not written: REASON>"`` (the reason JSON gave, cut to 200 characters)."""
    try:
        json.dumps(value, default=str)
        return value
    except (ValueError, RecursionError, TypeError) as exc:
        return f"<{type(value).__name__} not written: {str(exc)[:200]}>"


class Trajectory:
    """Collects call events in memory and, if ``path`` is given, appends them as JSON lines.

    Args:
        run_id: identifier of the run (stable across the campaign record and the file).
        level: the ANI level (or cell name) acting.
        path: JSONL file to append to, or None for in-memory only.
        observation_chars: characters of each result's observation kept whole
            (:data:`OBSERVATION_CHARS`).
    """

    def __init__(self, run_id: str = "adhoc", level: str = "", path: str | Path | None = None,
                 observation_chars: int = OBSERVATION_CHARS) -> None:
        self.run_id = run_id
        self.observation_chars = observation_chars
        self.level = level
        self.path = Path(path) if path else None
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._fh: IO[str] | None = None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
        # ReturnLogger: the rendered line is both written to the file and kept in memory, so
        # ``events`` equals ``Trajectory.read(path)``. No add_log_level: "level" is the ANI level.
        self._log = structlog.wrap_logger(
            structlog.ReturnLogger(),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.JSONRenderer(sort_keys=False, default=str),
            ],
        ).bind(run_id=run_id, level=level)

    def log(self, event: str, **fields: Any) -> dict[str, Any]:
        """Record one event; returns the dict as stored in memory. Never raises for a field JSON
        cannot write (an agent's integer of 5,000 digits, a list nested 100,000 deep): that field
        is recorded as ``"<int not written: ...>"`` (:func:`writable`)."""
        with self._lock:
            try:
                rendered = self._log.info(event, **fields)
            except (ValueError, RecursionError, TypeError):
                rendered = self._log.info(event, **{k: writable(v) for k, v in fields.items()})
            if self._fh:
                self._fh.write(rendered + "\n")
                self._fh.flush()
            rec = json.loads(rendered)
            self.events.append(rec)
            return rec

    def log_call(self, tool: str, arguments: dict[str, Any], result: ToolResult) -> dict[str, Any]:
        """Record one ANI tool call and its result: the observation whole up to
        ``observation_chars`` (:func:`observation_fields`), and see :func:`outcome_fields` for the
        optional ``refusal`` / ``devices`` / ``not_restored`` keys)."""
        return self.log(
            TOOL_CALL_EVENT,
            tool=tool,
            arguments=arguments,
            ok=result.ok,
            error_code=result.error.code.value if result.error else None,
            changed=result.changed,
            elapsed_s=round(result.elapsed_s, 4),
            summary=_summary(result.text),
            **observation_fields(result, self.observation_chars),
            **outcome_fields(result),
        )

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Only the ``tool_call`` events."""
        return [e for e in self.events if e.get("event") == TOOL_CALL_EVENT]

    def close(self) -> None:
        with self._lock:
            if self._fh:
                self._fh.close()
                self._fh = None

    @staticmethod
    def read(path: str | Path) -> list[dict[str, Any]]:
        """Load the events of a trajectory file."""
        out = []
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out


# -- what agents log ---------------------------------------------------------------------------


def log_agent_action(trajectory: Any, action: str, **fields: Any) -> dict[str, Any]:
    """Log an agent-loop action (``wait``, ``submit`` or ``null``) to ``trajectory``.

    Raises AgentError for another action name (tool calls are logged by the adapter).
    """
    if action not in AGENT_ACTIONS:
        raise AgentError(f"agent action must be wait, submit or null, got {action!r}")
    return trajectory.log(AGENT_ACTION_EVENT, action=action, **fields)


def log_agent_turn(
    trajectory: Any,
    turn: int,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Log one model response (a turn) with its token usage from the API's ``usage`` field
    (None: the endpoint sent none)."""
    return trajectory.log(
        AGENT_TURN_EVENT,
        turn=turn,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        **fields,
    )
