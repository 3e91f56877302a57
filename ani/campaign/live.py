"""What ``ani run`` prints as a run goes: one line per trajectory event, for any agent.

:func:`event_line` turns one trajectory event (a dict as :class:`ani.trajectory.Trajectory`
stores it) into one line of rich markup (user text escaped), or None for nothing to print::

    get_topology({}) -> ok routers: r1 r2                       tool_call (any agent)
    agent llm: mode react, model m at http://...; 6 tools; ...  agent_start
    turn 2: 1200+40 tokens -> update_config: "I will add ..."   agent_turn (model response)
    retry 1: RateLimitError (HTTP 429): ...; next in 2 s ...    llm_retry
    warning: turn 1 had 54 prompt tokens, fewer than ...       agent_tools_check (seen false only)
    null action (invalid_json) update_config: {"device": ...    agent_action null
    wait 5 s | submit: "route added"                            agent_action wait / submit
    plan: 1. get_topology ... (4 lines)                         agent_plan
    recovery step 1                                             agent_recovery
    agent stop: submitted; 5 steps, 1 null action, 700+45 tokens  agent_stop

An event of another name (a third-party agent's own) is printed as ``name: key=value, ...``.
The runner's ``run_phase`` event (grading starts) prints, unindented,
``grading (8 hidden tests, 74 baseline invariants) ...``.
``agent_observation`` (the text the model was sent as a tool result) is not printed: the
tool call's line shows its result. Every line is cut to a readable width; the trajectory file
keeps the full events.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.markup import escape

#: longest printed argument list, summary or text excerpt (characters)
ARGS_CHARS = 160
TEXT_CHARS = 100

#: fields that every event has (not repeated by the generic line)
_COMMON = {"event", "run_id", "level", "timestamp"}


def count(n: Any, word: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``, ``0 errors``, ``? steps`` (``n`` not a number): ``n`` and
    ``word`` in the number ``n`` asks for (``plural``: an irregular plural)."""
    one = isinstance(n, int) and not isinstance(n, bool) and n == 1
    return f"{n} {word if one else (plural or word + 's')}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_line(text: Any, limit: int = TEXT_CHARS) -> str:
    """The first non-empty line of ``text`` (cut), noting how many lines there were."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    more = f" (+{count(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
    return _cut(lines[0], limit) + more


def _tokens(prompt: Any, completion: Any, total: Any = None) -> str:
    if prompt is None and completion is None:
        if isinstance(total, int) and total > 0:
            return f"{total} tokens (total only)"
        return "0 tokens" if total == 0 else "? tokens"  # 0: no response reported any usage
    p = "?" if prompt is None else prompt
    c = "?" if completion is None else completion
    return f"{p}+{c} tokens"


def _tool_call(ev: dict[str, Any]) -> str:
    args = _cut(json.dumps(ev.get("arguments", {}), ensure_ascii=False, default=str), ARGS_CHARS)
    status = (
        "[green]ok[/green]"
        if ev.get("ok")
        else f"[red]error {escape(str(ev.get('error_code')))}[/red]"
    )
    changed = " [yellow]changed[/yellow]" if ev.get("changed") else ""
    summary = str(ev.get("summary", ""))
    repeated = f"error [{ev.get('error_code')}]: "
    if not ev.get("ok") and summary.startswith(repeated):  # the status already says it
        summary = summary[len(repeated):]
    summary = _cut(summary, 120)
    return f"{escape(str(ev.get('tool')))}({escape(args)}) -> {status}{changed} {escape(summary)}"


def _agent_start(ev: dict[str, Any]) -> str:
    parts = [f"agent {ev.get('agent', '?')}"]
    detail = []
    if ev.get("mode"):
        detail.append(f"mode {ev['mode']}" + (" + recovery" if ev.get("recovery") else ""))
    if ev.get("model"):
        at = f" at {ev['base_url']}" if ev.get("base_url") else ""
        detail.append(f"model {ev['model']}{at}")
    if isinstance(ev.get("tools"), list):
        detail.append(count(len(ev["tools"]), "tool"))
    if ev.get("system_prompt") is not None:
        detail.append(f"system prompt {len(str(ev['system_prompt']))} chars")
    if ev.get("request") is not None:
        detail.append(f"request {len(str(ev['request']))} chars")
    files = ev.get("files")
    if isinstance(files, dict) and files:
        detail.append(f"files {', '.join(map(str, files))}")
    return escape(parts[0] + (": " + "; ".join(detail) if detail else ""))


def _agent_turn(ev: dict[str, Any]) -> str:
    calls = [str(c.get("name", "?")) for c in ev.get("tool_calls") or [] if isinstance(c, dict)]
    tokens = _tokens(ev.get("prompt_tokens"), ev.get("completion_tokens"), ev.get("total_tokens"))
    head = f"turn {ev.get('turn', '?')}{' (plan)' if ev.get('plan') else ''}: {tokens}"
    if (ev.get("attempts") or 1) > 1:
        head += f" after {ev['attempts']} attempts"
    if ev.get("plan"):  # calls in a planning reply are not executed
        n = len(calls)
        head += " -> plan text" + (f" ({count(n, 'tool call')} ignored)" if n else "")
    else:
        head += " -> " + (", ".join(calls) if calls else "no tool call")
    text = _first_line(ev.get("content"))
    return f"[cyan]{escape(head)}[/cyan]" + (f' "{escape(text)}"' if text else "")


def _agent_action(ev: dict[str, Any]) -> str:
    action = ev.get("action")
    if action == "null":
        raw = _cut(" ".join(str(ev.get("raw") or "").split()), 80)
        tool = f" {ev['tool']}" if ev.get("tool") else ""
        head = f"null action ({ev.get('reason')}){tool}"
        return f"[red]{escape(head)}[/red]: {escape(raw)}"
    if action == "wait":
        if ev.get("ok") is False:
            return f"[red]wait refused[/red]: seconds={escape(repr(ev.get('seconds')))}"
        waited, asked = ev.get("waited_s"), ev.get("seconds")
        if not isinstance(waited, (int, float)):
            return escape(f"wait {asked} s")
        cut = f" (asked {asked})" if asked != waited else ""
        return escape(f"wait {float(waited):g} s{cut}")
    if action == "submit":
        summary = _first_line(ev.get("summary"))
        how = " (end of the reply)" if ev.get("implicit") else ""
        return f"[bold]submit[/bold]{how}" + (f': "{escape(summary)}"' if summary else "")
    return _generic(ev)


def _llm_retry(ev: dict[str, Any]) -> str:
    line = f"retry {ev.get('attempt', '?')}: {_cut(str(ev.get('error')), 140)}"
    if ev.get("backoff_s") is not None:
        line += f"; next attempt in {float(ev['backoff_s']):g} s"
    if ev.get("retry_after_s") is not None:
        line += f" (Retry-After {float(ev['retry_after_s']):g} s)"
    return f"[yellow]{escape(line)}[/yellow]"


def _agent_tools_check(ev: dict[str, Any]) -> str | None:
    """Nothing when the endpoint saw the tools; a warning when it most likely did not."""
    if ev.get("seen") is not False:
        return None
    sent = ev.get("tool_choice") or "omitted"
    line = (
        f"warning: turn {ev.get('turn', '?')} had {ev.get('prompt_tokens')} prompt tokens, fewer "
        f"than the {ev.get('min_tokens')} its messages and tools need: the endpoint most likely "
        f"did not give the model the tools (tool_choice {sent}; see agent.tool_choice in docs/llm.md)"
    )
    return f"[yellow]{escape(line)}[/yellow]"


def _agent_plan(ev: dict[str, Any]) -> str:
    rev = ev.get("revision") or 0
    head = "plan" if not rev else f"revised plan {rev}"
    return f"[magenta]{head}[/magenta]: {escape(_first_line(ev.get('plan')) or '(empty)')}"


def _agent_stop(ev: dict[str, Any]) -> str:
    nulls = ev.get("null_actions") or 0
    line = (
        f"agent stop: {ev.get('stop_reason')}; {count(ev.get('steps', '?'), 'step')}, "
        f"{count(nulls, 'null action')}, "
        f"{_tokens(ev.get('prompt_tokens'), ev.get('completion_tokens'), ev.get('total_tokens'))}"
    )
    p, c, t = ev.get("prompt_tokens"), ev.get("completion_tokens"), ev.get("total_tokens")
    if isinstance(t, int) and isinstance(p, int) and isinstance(c, int) and t > p + c:
        line += f" ({t} counted, with totals reported without a split)"
    if ev.get("error"):
        line += f"; error: {_cut(str(ev['error']), 200)}"
    return f"[bold]{escape(line)}[/bold]"


def _generic(ev: dict[str, Any]) -> str:
    fields = ", ".join(
        f"{k}={_cut(json.dumps(v, ensure_ascii=False, default=str), 60)}"
        for k, v in ev.items()
        if k not in _COMMON
    )
    return escape(_cut(f"{ev.get('event')}: {fields}", ARGS_CHARS))


_FORMATS = {
    "tool_call": _tool_call,
    "agent_start": _agent_start,
    "agent_turn": _agent_turn,
    "agent_action": _agent_action,
    "llm_retry": _llm_retry,
    "agent_plan": _agent_plan,
    "agent_tools_check": _agent_tools_check,
    "agent_stop": _agent_stop,
}


def event_line(ev: dict[str, Any]) -> str | None:
    """One line of rich markup for trajectory event ``ev`` (indented two spaces), or None.

    Args:
        ev: an event as stored by :class:`ani.trajectory.Trajectory` (``event`` names it).

    Returns:
        The line (user text escaped, so it is safe to print with markup), or None for an
        event without a name. Never raises: a field of an unexpected type gives the generic
        ``name: key=value, ...`` line.
    """
    name = ev.get("event")
    if not name:
        return None
    if name == "agent_observation":  # the tool_call / null action line already shows it
        return None
    if name == "run_phase" and ev.get("phase") == "grading":  # the runner's, not the agent's
        parts = [count(ev[k], what) for k, what in (("hidden_tests", "hidden test"),
                 ("invariants", "baseline invariant")) if isinstance(ev.get(k), int)]
        return f"grading ({', '.join(parts) or 'hidden tests, baseline invariants'}) ..."
    if name == "agent_recovery":
        return f"  [yellow]recovery step {escape(str(ev.get('n', '?')))}[/yellow]"
    fmt = _FORMATS.get(str(name), _generic)
    try:
        line = fmt(ev)
        return None if line is None else "  " + line
    except (TypeError, ValueError, AttributeError):
        # a field of an unexpected type (another agent's event of the same name): the event
        # is still shown, generically, rather than dropped by the runner's hook guard
        return "  " + _generic(ev)


class _ShownLive(logging.Filter):
    """Drops a log record that repeats a trajectory event the live view prints itself (the
    record names it in ``extra={"ani_event": NAME}``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "ani_event", None) not in _FORMATS


@contextmanager
def live_view_logging(*loggers: str) -> Iterator[None]:
    """While the live view prints the events (``ani run``), the named loggers (default
    ``ani.agents.llm``) stay quiet about those same events, so a warning such as the
    tools-check one is printed once, not as a live line and again as a log line. Other records
    pass; the filter is removed on exit."""
    names = loggers or ("ani.agents.llm",)
    shown = _ShownLive()
    for name in names:
        logging.getLogger(name).addFilter(shown)
    try:
        yield
    finally:
        for name in names:
            logging.getLogger(name).removeFilter(shown)

