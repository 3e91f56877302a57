"""The Agent-Network Interface (ANI) protocol.

One protocol, interchangeable adapters: an agent sees ``tools()`` (a list of
:class:`ToolSpec`) and calls ``call(name, arguments)``, which always returns a
:class:`ToolResult`. Levels differ only in which tools they offer
(NMAA draft, draft-salsano-nmrg-nmaa-benchmarking-framework §5.1).

Agent-actionable failures are data (``ok=False`` with a stable
:class:`~ani.errors.ErrorCode`); only harness faults raise.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from ani.errors import ErrorCode
from ani.strict_schema import from_strict, strict_schema

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Level(StrEnum):
    """ANI abstraction levels of the NMAA draft (§5.1, Table 1)."""

    A0 = "a0"  # raw device shell
    A1 = "a1"  # allowlisted per-device CLI, snapshot and rollback
    A2 = "a2"  # NETCONF/YANG, candidate datastore, confirmed commit
    A3T = "a3t"  # typed transactional service intents
    A3R = "a3r"  # git-backed reconciled source of truth
    A4 = "a4"  # A3-T and A3-R combined


class ToolSpec(BaseModel):
    """A tool offered to the agent.

    Converts losslessly to an MCP ``Tool`` (:meth:`to_mcp`) and to a
    chat-completions tool (:meth:`to_openai`).

    Attributes:
        name: ``^[a-zA-Z0-9_-]{1,64}$``, portable across MCP and chat APIs.
        description: what the tool does, for the model.
        input_schema: JSON Schema (draft 2020-12 subset) of the arguments object.
        read_only: the tool changes nothing (MCP ``readOnlyHint``).
        destructive: the tool may change what a router runs, its running configuration or
            ruleset (MCP ``destructiveHint``); False with ``read_only`` False = it changes only
            a staging area (candidate datastore, snapshot store, source-of-truth working tree).
    """

    name: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    read_only: bool = False
    destructive: bool = False

    @field_validator("name")
    @classmethod
    def _check_name(cls, v: str) -> str:
        if not TOOL_NAME_RE.match(v):
            raise ValueError(f"tool name {v!r} must match {TOOL_NAME_RE.pattern}")
        return v

    def to_openai(self, strict: bool = False) -> dict[str, Any]:
        """Chat-completions tool: ``{"type": "function", "function": {"name", "description",
        "parameters"}}``.

        Args:
            strict: give ``parameters`` in the strict form that OpenAI's strict function calling
                and openai-agents accept (:func:`ani.strict_schema.strict_schema`: every property
                required, optionals nullable, ``additionalProperties: false`` everywhere, only
                supported keywords, free-form values as JSON text) and add ``"strict": true``.
                Arguments a model sends against it go back to the tool's own form with
                :meth:`arguments_from_strict`.
        """
        fn: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": strict_schema(self.input_schema) if strict else self.input_schema,
        }
        if strict:
            fn["strict"] = True
        return {"type": "function", "function": fn}

    def arguments_from_strict(self, arguments: Any) -> Any:
        """The arguments for :meth:`Adapter.call` from ``arguments`` a model sent against
        ``to_openai(strict=True)``: a null for an optional argument dropped (the default applies),
        JSON text parsed where the tool wants an object or another non-string value
        (:func:`ani.strict_schema.from_strict`). Harmless on arguments in the tool's own form."""
        return from_strict(self.input_schema, arguments)

    def to_mcp(self) -> Any:
        """An ``mcp.types.Tool`` with annotations (needs the ``mcp`` extra).

        Raises ImportError if the ``mcp`` package is not installed.
        """
        from mcp import types  # lazy: optional dependency

        return types.Tool(
            name=self.name,
            description=self.description,
            inputSchema=self.input_schema,
            annotations=types.ToolAnnotations(
                readOnlyHint=self.read_only,
                destructiveHint=self.destructive,
            ),
        )

    @classmethod
    def from_mcp(cls, tool: Any) -> ToolSpec:
        """Inverse of :meth:`to_mcp`.

        Accepts an ``mcp.types.Tool`` of mcp 1.x (camelCase attributes) or 2.x (snake_case).
        """
        ann = getattr(tool, "annotations", None)
        return cls(
            name=tool.name,
            description=tool.description or "",
            input_schema=dict(_attr(tool, "input_schema", "inputSchema") or {"type": "object"}),
            read_only=bool(_attr(ann, "read_only_hint", "readOnlyHint")),
            destructive=bool(_attr(ann, "destructive_hint", "destructiveHint")),
        )

    @classmethod
    def from_openai(cls, tool: dict[str, Any]) -> ToolSpec:
        """Inverse of :meth:`to_openai` (hints are not carried by chat tools); of a strict tool
        it gives the strict form as ``input_schema``."""
        fn = tool["function"]
        return cls(
            name=fn["name"],
            description=fn.get("description", ""),
            input_schema=fn.get("parameters", {"type": "object"}),
        )


def _attr(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` has (None if none, or if ``obj`` is None)."""
    for n in names:
        if obj is not None and hasattr(obj, n):
            return getattr(obj, n)
    return None


#: the longest error message a tool result carries, characters: an agent's 100 kB argument named
#: in a message (an unknown identifier, a value refused) is not repeated back whole (issue 23)
MAX_MESSAGE_CHARS = 4000


def cut_message(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message``, or its first ``limit`` characters and ``... (N more characters not shown)``."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters not shown)"


class ErrorInfo(BaseModel):
    """Why a tool call failed.

    Attributes:
        code: a stable :class:`~ani.errors.ErrorCode` string.
        message: human/agent-readable cause, at most :data:`MAX_MESSAGE_CHARS` characters (a
            longer one is cut, saying how much was left out).
        retriable: retrying the same call unchanged may succeed (e.g. a timeout).
    """

    code: ErrorCode
    message: str
    retriable: bool = False

    @field_validator("message")
    @classmethod
    def _cut(cls, v: str) -> str:
        return cut_message(v)


class ToolResult(BaseModel):
    """The result of every tool call.

    Attributes:
        ok: the call did what was asked.
        text: what the agent reads.
        data: structured form of the same, or None.
        error: set iff ``ok`` is False.
        changed: device state changed (exact: measured, not guessed).
        elapsed_s: wall time of the call, seconds.
    """

    ok: bool
    text: str = ""
    data: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    changed: bool = False
    elapsed_s: float = 0.0

    def agent_text(self) -> str:
        """What the agent reads: ``text``; for a failure it always names the cause (the error
        message is prefixed as ``error [code]: message`` unless the text already holds it);
        ``ok`` / ``error`` if there is no text at all."""
        text = self.text or ""
        if self.error is not None and self.error.message not in text:
            head = f"error [{self.error.code.value}]: {self.error.message}"
            text = f"{head}\n{text}" if text else head
        return text or ("ok" if self.ok else "error")

    def error_payload(self) -> str:
        """The JSON text of a failed result (compact, UTF-8 kept): ``{"ok": false, "code": str |
        null, "message": str, "retriable": bool, "changed": bool}``, plus ``"text"`` when the
        result's text says more than ``error [code]: message``. Also given for an ``ok`` result
        (then ``"code": null``), though no path shows it to a model."""
        err = self.error
        code = None if err is None else err.code.value
        message = self.agent_text() if err is None else err.message
        payload: dict[str, Any] = {"ok": False, "code": code, "message": message,
                                   "retriable": bool(err is not None and err.retriable), "changed": self.changed}
        text = self.text or ""
        if text and err is not None and text != f"error [{code}]: {message}":
            payload["text"] = text
        return json.dumps(payload, ensure_ascii=False)

    def observation(self) -> str:
        """The one text a model reads for this result, whatever the path (the framework
        integrations of :mod:`ani.integrations`, the MCP server's text content, the shipped LLM
        agent, the ``observation`` of a trajectory's ``tool_call`` event; docs/tool-results.md):
        :meth:`agent_text` for an ``ok`` result (its ``text``; ``ok`` when it has none), and
        :meth:`error_payload` for a failure."""
        return self.agent_text() if self.ok else self.error_payload()

    def structured(self) -> dict[str, Any]:
        """The result as plain JSON data (MCP ``structuredContent``, a framework's artifact):
        ``{ok: bool, error: {code: str, message: str, retriable: bool} | None, changed: bool,
        elapsed_s: float (seconds), data: dict | None}``."""
        return {
            "ok": self.ok,
            "error": None if self.error is None else {
                "code": self.error.code.value,
                "message": self.error.message,
                "retriable": self.error.retriable,
            },
            "changed": self.changed,
            "elapsed_s": self.elapsed_s,
            "data": self.data,
        }

    @classmethod
    def success(cls, text: str, data: dict[str, Any] | None = None, *, changed: bool = False) -> ToolResult:
        return cls(ok=True, text=text, data=data, changed=changed)

    @classmethod
    def failure(
        cls,
        code: ErrorCode,
        message: str,
        *,
        retriable: bool = False,
        data: dict[str, Any] | None = None,
        changed: bool = False,
        text: str | None = None,
    ) -> ToolResult:
        message = cut_message(message)
        return cls(
            ok=False,
            text=text if text is not None else f"error [{code.value}]: {message}",
            data=data,
            error=ErrorInfo(code=code, message=message, retriable=retriable),
            changed=changed,
        )


@runtime_checkable
class Adapter(Protocol):
    """What every ANI adapter implements (synchronous core)."""

    level: Level

    def open(self) -> None:
        """Acquire sessions to the devices. Idempotent."""

    def close(self) -> None:
        """Release every session. Idempotent; never raises for already-closed sessions."""

    def tools(self) -> list[ToolSpec]:
        """The tools this adapter offers; the only thing that differs between levels."""

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool. Unknown tools and bad arguments return ``ok=False``; never raises
        for agent mistakes."""
