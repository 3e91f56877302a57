"""Configuration and prompt of the LLM agent (``agent: {kind: llm, ...}`` in a campaign file).

::

    agent:
      kind: llm
      mode: react                     # react | single-turn | planner-executor
      recovery: false                 # a recovery step after a failed action
      base_url: http://127.0.0.1:8000/v1
      model: Qwen/Qwen2.5-7B-Instruct
      api_key_env: OPENAI_API_KEY     # NAME of the variable holding the key (null: no key)
      tool_choice: auto               # auto | required | none | omit (leave the field out)
      temperature: 0.0
      seed: 1
      request_timeout_s: 120          # one chat-completions request, seconds
      max_retries: 4                  # extra attempts on 429, 5xx, timeouts and connection errors
      retry_backoff_s: 1.0            # first backoff (exponential, capped at retry_backoff_max_s)
      retry_after_max_s: 60           # longest wait a 429/503 Retry-After header can ask for

The system prompt (:func:`system_prompt`: :data:`SYSTEM_PROMPT` and the mode's paragraph) is
the same for every level: only the tool list differs (the matched development budget of the NMAA
draft). The mode is a controlled factor, so its paragraph differs between modes. ``wait`` and
``submit`` are actions of the agent loop, offered at every level in addition to the adapter's tools
(:func:`loop_tools`).
"""

from __future__ import annotations

from typing import Any, Literal

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ani.errors import ConfigError
from ani.validation import format_validation_error
from ani.protocol import ToolSpec

Mode = Literal["react", "single-turn", "planner-executor"]
#: what the agent sends as ``tool_choice`` (``omit``: the field is left out of the request)
ToolChoice = Literal["auto", "required", "none", "omit"]

#: the one system prompt of every level (only the tool list differs between levels)
SYSTEM_PROMPT = """\
You are a network engineer operating a production network of FRR routers. An operator asks you \
to make a change. You act on the network only through the tools you are given; you cannot ask \
the operator anything, nobody will answer.

Work like this:
- Look before you change: read the topology and the relevant configuration or state first.
- Make the change the request asks for, and nothing else: other services on the network must \
keep working.
- Verify that the change has the intended effect (routing converges in seconds; call \
wait(seconds) to let it settle before checking again).
- When you are done, call submit() with a one-line summary. Always end by calling submit(); \
a reply without a tool call is an error.

A tool result that is JSON with "ok": false, or a text that starts with "error", means the \
call did not do what you asked: read the message, it names the cause ("code" is the kind of \
error, "retriable" says whether the same call may succeed later)."""

#: the paragraph of each mode, appended to SYSTEM_PROMPT
MODE_PROMPTS: dict[str, str] = {
    "react": "You work in turns: call one or more tools, read their results, then decide the next "
    "call.",
    "single-turn": "You get exactly one reply: plan the whole change and return ALL the tool calls "
    "it needs, in the order they must run, in that one reply. You will not see their results. "
    "End with submit().",
    "planner-executor": "First you write a numbered plan (text, no tool calls). Then you execute "
    "it step by step with tool calls, reading each result. If a step fails you are asked for a "
    "revised plan.",
}

#: first planning request (planner-executor)
PLAN_REQUEST = (
    "Write your plan now: a short numbered list of steps, each naming the tool you will call "
    "and why. Do not call tools yet."
)
#: request for a revised plan after a failed step (planner-executor)
REPLAN_REQUEST = (
    "A step failed (see the last result). Write a revised numbered plan for what is left, "
    "taking the failure into account. Do not call tools yet."
)
#: after a plan (planner-executor)
EXECUTE_REQUEST = "Now execute the plan, step by step, with tool calls. Call submit() when done."
#: the recovery step after a failed action (react, planner-executor)
RECOVERY_REQUEST = (
    "The last action failed. Before anything else, state in one or two sentences what caused "
    "the failure and how you will fix it; then continue with tool calls."
)
#: the recovery step of single-turn: one more reply, with every result of the first
SINGLE_TURN_RECOVERY_REQUEST = (
    "Some of your calls failed (see the results above). Reply once more with ALL the tool "
    "calls needed to finish the task, in order, ending with submit()."
)


def system_prompt(mode: str) -> str:
    """The system prompt of ``mode``: identical for every level."""
    return f"{SYSTEM_PROMPT}\n\n{MODE_PROMPTS[mode]}"


#: what the agent says when the model replied with text instead of a tool call
TEXT_INSTEAD_OF_CALL = (
    "error: your reply contained no tool call. Act by calling one of the tools; "
    "call submit() when the task is done."
)


class LLMConfig(BaseModel):
    """Options of the LLM agent (unknown keys refused; numbers must be finite: no NaN/inf).

    Attributes:
        mode: ``react`` (the tool-calling loop), ``single-turn`` (one reply with every tool
            call, executed in order; the end of the reply submits) or ``planner-executor`` (a
            text plan, then a ReAct loop that executes it; a failed action asks for a revised
            plan, at most ``max_replans`` times).
        recovery: add a recovery step after a failed action (a tool result with ok False, or a
            null action): ``react`` / ``planner-executor`` ask the model to state the cause and
            the fix before going on (at most ``max_recoveries`` times); ``single-turn`` asks for
            one more reply with every result of the first.
        max_recoveries: recovery steps per run (react, planner-executor).
        max_replans: revised plans per run (planner-executor).
        base_url: the OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1`` (an
            ``http://`` or ``https://`` URL with a host; anything else is refused).
        model: the model name sent with each request (not empty).
        api_key_env: name of the environment variable that holds the API key; None for an
            endpoint without authentication. The key itself is never stored in the config, the
            trajectory or the run record.
        tool_choice: what every request that offers the tools sends as ``tool_choice``:
            ``auto`` (the default: the model may call a tool), ``required`` (it must), ``none``
            (it may not: the tools are listed but not callable), or ``omit`` (the field is left
            out, for an endpoint that refuses it). Planning requests (planner-executor) send
            ``none`` unless ``omit``. Sent explicitly because some servers render the tools
            into the prompt only when it is there (llama-cpp-python's
            ``chatml-function-calling``); ``docs/llm.md`` gives the value per server kind.
        temperature: sampling temperature.
        seed: sampling seed (sent when not None; endpoints may ignore it).
        request_timeout_s: timeout of one chat-completions request, seconds (also bounded by
            what is left of the run's wall clock).
        max_retries: extra attempts after a transient error (HTTP 429, 5xx, a timeout, a refused
            connection); other errors end the run at once.
        retry_backoff_s: first backoff before a retry, seconds (exponential, doubling).
        retry_backoff_max_s: cap of one backoff, seconds.
        retry_after_max_s: on HTTP 429 or 503 with a ``retry-after-ms`` or ``Retry-After``
            header (seconds or an HTTP date), the retry waits what the server asks instead of
            the backoff, capped at this many seconds and at what is left of the wall clock.
        max_completion_tokens: per-response cap sent to the endpoint (None: not sent).
        max_observation_chars: a tool result longer than this is cut (the model is told so).
        wait_max_s: longest single ``wait(seconds)``, seconds.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    mode: Mode = "react"
    recovery: bool = False
    max_recoveries: int = Field(default=3, ge=0)
    max_replans: int = Field(default=2, ge=0)
    base_url: str
    model: str = Field(min_length=1)
    api_key_env: str | None = "OPENAI_API_KEY"
    tool_choice: ToolChoice = "auto"
    temperature: float = Field(default=0.0, ge=0)
    seed: int | None = None
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    retry_backoff_s: float = Field(default=1.0, ge=0)
    retry_backoff_max_s: float = Field(default=30.0, ge=0)
    retry_after_max_s: float = Field(default=60.0, ge=0)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    max_observation_chars: int = Field(default=20000, ge=100)
    wait_max_s: float = Field(default=60.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        """``http://`` or ``https://`` with a host: anything else fails at the first request,
        after a lab was started, with a bare "Connection error"."""
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"must be an http:// or https:// URL with a host, e.g. "
                f"http://127.0.0.1:8000/v1; got {value!r}"
            )
        return value.strip()

    @classmethod
    def parse(cls, options: dict[str, Any]) -> LLMConfig:
        """The config from a campaign's ``agent:`` options; ConfigError names each bad field."""
        try:
            return cls(**options)
        except ValidationError as exc:  # a key that is not a name is counted, never quoted
            problems = format_validation_error(exc, prefix="agent", top="agent", unknown="unknown option",
                                               known=list(cls.model_fields))
            raise ConfigError(f"agent (kind llm): {problems}") from None


def loop_tools(wait_max_s: float) -> list[ToolSpec]:
    """The agent-loop actions offered at every level: ``wait(seconds)`` and ``submit(summary)``."""
    return [
        ToolSpec(
            name="wait",
            description="Wait before the next action (e.g. to let routing converge).",
            input_schema={
                "type": "object",
                "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": wait_max_s}},
                "required": ["seconds"],
                "additionalProperties": False,
            },
            read_only=True,
        ),
        ToolSpec(
            name="submit",
            description="Declare the task done; ends your work. Give a one-line summary.",
            input_schema={
                "type": "object",
                "properties": {"summary": {"type": "string"}},
                "additionalProperties": False,
            },
            read_only=True,
        ),
    ]


def user_message(request: str, files: dict[str, str]) -> str:
    """The first user message: the operator's request, then each attached file.

    Shape::

        <request>

        Attached file site.yaml:
        ```
        <text>
        ```
    """
    parts = [request.strip()]
    for name, text in files.items():
        parts.append(f"Attached file {name}:\n```\n{text.rstrip()}\n```")
    return "\n\n".join(parts)
