# size: the LLM agent: its config, the request loop with retries and the ReAct / planner-executor turns share one run state
"""The LLM agent: any OpenAI-compatible chat-completions endpoint, with tool calling.

::

    agent = create_agent({"kind": "llm", "mode": "react", "base_url": "http://127.0.0.1:8000/v1",
                          "model": "qwen2.5-7b", "api_key_env": "OPENAI_API_KEY"})
    run = agent.run(task, adapter, Budget(max_steps=40, max_tokens=200_000, wall_clock_s=600))

Options: :class:`ani.agents.llm_config.LLMConfig`. The request goes through the official
``openai`` client (its own retries off); transient errors (HTTP 429, 5xx, timeouts, refused
connections) are retried with exponential backoff by tenacity, within the run's wall clock; an
HTTP 429 or 503 with ``retry-after-ms`` / ``Retry-After`` waits what the server asks instead
(capped at ``retry_after_max_s`` and at the wall clock left). A request that has no complete
response ``ABANDON_GRACE_S`` past its timeout (an endpoint dripping bytes defeats the client's
per-read timeout) is abandoned and counts as a timeout (:func:`bounded`).

Every request carries ``tool_choice`` as configured (``tool_choice``: ``auto`` by default,
``required``, ``none``, or ``omit`` to leave it out; planning requests ``none``): some servers
render the tools into the prompt only when it is sent, so it is never left to the server.

Modes (``mode``; each with or without ``recovery``, see :class:`LLMConfig`). In every mode the
model sees the system prompt (identical at every level; a paragraph per mode), the task (request
+ attached files) and the adapter's tools plus ``wait(seconds)`` and ``submit(summary)``.

- ``react``: the tool-calling loop: each response's tool calls are executed in order and
  answered with the tool's text (a ``tool`` message), until ``submit`` or a budget ends the run.
- ``single-turn``: one response; its calls are executed in order, and the end of the response
  (or its ``submit``) submits. With recovery, a failed action earns one more response that sees
  every result.
- ``planner-executor``: a plan (a text reply, ``tool_choice="none"``), then the ReAct loop
  executes it; a response with a failed action (tool result ok False, null action) is followed
  by a revised plan, at most ``max_replans`` times.
- recovery (react, planner-executor): after a failed action the model is asked to state the
  cause and the fix before going on (at most ``max_recoveries`` times).

Actions and steps (``AgentRun.steps``): every tool call, ``wait`` and null action is one step;
``submit`` is not. A *null action* is malformed model output, answered with an error observation
and counted, never a crash: tool-call arguments that are not a JSON object (strict JSON: NaN,
Infinity and out-of-range numbers are invalid; arguments sent as a JSON value instead of its
text are serialised first), an unknown tool name, or a reply with no tool call (text where a
call was needed). Usage numbers that are not non-negative integers count as not reported; an
HTTP 200 body that is not a chat completion (no ``choices`` list) ends the run with ``error``
naming it, and one that
holds ``error`` and no choices (a gateway's upstream failure) is retried like a 5xx: neither is
charged to the model as a null action.

Budgets end the run with their stop reason: ``max_steps`` (an action is attempted when
``budget.max_steps`` steps were made), ``max_tokens`` (prompt + completion tokens from the
responses' ``usage``; a response whose usage has only ``total_tokens`` counts that total;
checked before each request), ``wall_clock`` (checked before each request
and action; ``wait`` and request timeouts are cut to what is left). An endpoint error that is not
transient, or retries exhausted, ends the run with ``error`` naming the URL, the cause and the
bound, never the key (:func:`endpoint_cause`)::

    chat-completions endpoint: POST http://127.0.0.1:8000/v1/chat/completions: connection refused (after 5 attempts)
    chat-completions endpoint: POST http://h/chat/completions: HTTP 404 (is base_url up to /v1? ...): ... (after 1 attempt)
    chat-completions endpoint: POST http://h/v1/chat/completions: timeout after 2 s (after 3 attempts)

Trajectory events (in ``adapter.trajectory`` next to the adapter's ``tool_call`` events)::

    agent_start     mode, model, base_url (a password or query values in it as ***),
                    temperature, seed, tool_choice (the configured one), system_prompt,
                    request (the user message), files, tools (chat-completions tool list)
                    -- never the API key
    agent_turn      one model response: turn, prompt_tokens, completion_tokens (None if the
                    endpoint did not send them), total_tokens (the usage's total, or None),
                    finish_reason, content, tool_calls [{id, name,
                    arguments (raw text)}], attempts, plan (True: a planning request, whose
                    tool calls are not executed)
    agent_tools_check  after the first turn whose tools were callable (not a plan, tool_choice
                    not none): turn, seen (True / False: the prompt tokens are too few to
                    hold the tools, also logged as a warning / None: no usage reported),
                    prompt_tokens, min_tokens, message_chars, tool_chars, tool_choice (as
                    sent, None: omitted); see :mod:`ani.agents.llm_tools_check`
    llm_retry       attempt, error (class and HTTP status), backoff_s (the wait before the
                    next attempt), retry_after_s (what a 429/503 Retry-After header asked, or None)
    agent_action    action="wait": seconds (asked), waited_s, ok
                    action="null": reason (invalid_json | not_an_object | unknown_tool |
                    no_tool_call), tool, raw
                    action="submit": summary
    agent_observation  what the model was sent as one tool result (the ``tool`` message):
                    tool_call_id, tool, text (exactly the text sent: the result's
                    observation, :meth:`ToolResult.observation`, i.e. its text, or the
                    JSON error payload of a failure, cut at ``max_observation_chars``
                    with :func:`ani.trajectory.cut_text`'s mark; or the error observation of a null
                    action, ``waited N s``, ``submitted``, ``not run: after submit``),
                    truncated (the tool's text was cut), full_chars (its length before the
                    cut, or None)
    agent_plan      revision (0: the first plan), plan (text)       -- planner-executor
    agent_recovery  n                                              -- recovery steps
    agent_stop      stop_reason, steps, null_actions, prompt_tokens, completion_tokens (sums
                    of the reported ones; None if no response reported them), total_tokens (what the token budget counted: those
                    plus the totals of turns that reported no split), error

(``agent_turn`` and ``agent_action`` are written with :func:`ani.trajectory.log_agent_turn` /
:func:`ani.trajectory.log_agent_action`, the conventions read by the process metrics,
:mod:`ani.campaign.metrics`.)
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from typing import Any

from ani.agents.base import AgentRun, AgentTask, Budget, BudgetExceeded, StepCounter, StopReason
from ani.agents.llm_config import (
    EXECUTE_REQUEST,
    PLAN_REQUEST,
    RECOVERY_REQUEST,
    REPLAN_REQUEST,
    SINGLE_TURN_RECOVERY_REQUEST,
    TEXT_INSTEAD_OF_CALL,
    LLMConfig,
    loop_tools,
    system_prompt,
    user_message,
)
from ani.agents.llm_tools_check import tools_check
from ani.errors import AgentError, AniTimeout, ConfigError
from ani.llm_endpoint import (
    ABANDON_GRACE_S,
    EndpointError,
    bounded,
    check_body,
    describe_error,
    endpoint_cause,
    is_transient,
    message_text,
    redact_url,
    retry_after_s,
    token_count,
)
from ani.trajectory import Trajectory, cut_text, log_agent_action, log_agent_turn

log = logging.getLogger(__name__)

#: characters of a malformed call's raw text kept in the observation and the trajectory
RAW_CHARS = 500

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def parse_arguments(raw: str) -> Any:
    """The arguments of a tool call, parsed as strict JSON (an empty text is ``{}``).

    NaN, Infinity and numbers that overflow a float are refused (they are not JSON numbers, and
    would make the trajectory invalid JSON). Raises ValueError (json.JSONDecodeError included).
    """
    if not raw.strip():
        return {}
    return json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)


class LLMAgent:
    """An agent backed by a chat-completions model (see module doc).

    Args:
        **options: :class:`LLMConfig` fields. Raises ConfigError for bad options and when
            ``api_key_env`` names a variable that is not set.

    Attributes:
        clock: monotonic clock, seconds (replaceable in tests).
        sleep: what ``wait`` and retry backoffs sleep with (replaceable in tests).
    """

    name = "llm"

    def __init__(self, **options: Any) -> None:
        self.config = LLMConfig.parse(options)
        self._api_key = self._read_key(self.config.api_key_env)
        self.clock: Callable[[], float] = time.monotonic
        self.sleep: Callable[[float], None] = time.sleep
        self._client: Any = None

    @staticmethod
    def _read_key(env: str | None) -> str:
        if env is None:
            return "no-key"  # the client requires a non-empty key; endpoints without auth ignore it
        key = os.environ.get(env)
        if not key:
            raise ConfigError(
                f"agent.api_key_env: environment variable {env} is not set (or empty)"
            )
        return key

    def __repr__(self) -> str:
        c = self.config
        return f"LLMAgent(model={c.model!r}, base_url={redact_url(c.base_url)!r}, mode={c.mode!r})"

    #: seconds the preflight check waits for GET {base_url}/models
    PREFLIGHT_TIMEOUT_S = 5.0

    def preflight(self) -> list[str]:
        """One cheap reachability check of the endpoint before any lab starts:
        ``GET {base_url}/models`` with the key, bounded by ``PREFLIGHT_TIMEOUT_S`` (no retries).

        Returns:
            warnings (text, not fatal): a 404 (some servers have no /models; the hint says
            base_url usually ends in /v1), another HTTP status, a timeout, a body that is not a
            model list. An empty list: the endpoint answered.

        Raises:
            ConfigError: naming base_url and the cause when no run could work: the connection is
                refused, the host is not found or the connection fails otherwise, or the key is
                rejected (HTTP 401/403). The key is never in the message.
        """
        import openai

        url = self.endpoint_url("models")
        where = f"agent.base_url {redact_url(self.config.base_url)}"
        timeout = min(self.PREFLIGHT_TIMEOUT_S, self.config.request_timeout_s)
        client = self.client
        try:
            bounded(lambda: client.models.list(timeout=timeout), timeout + ABANDON_GRACE_S,
                    self.drop_client)
        except openai.APIConnectionError as exc:
            if isinstance(exc, openai.APITimeoutError):
                return [f"{where}: GET {url}: {endpoint_cause(exc, timeout)}; going on"]
            raise ConfigError(f"{where}: {endpoint_cause(exc)} (GET {url}); no lab was started") from None
        except AniTimeout as exc:
            return [f"{where}: GET {url}: {endpoint_cause(exc, timeout)}; going on"]
        except openai.APIStatusError as exc:
            cause = endpoint_cause(exc, timeout, self.config.api_key_env)
            if exc.status_code in (401, 403):
                raise ConfigError(f"{where}: {cause} (GET {url}); no lab was started") from None
            if exc.status_code == 404:
                return [f"{where}: GET {url}: HTTP 404 (some servers have no /models; if requests "
                        "fail too, base_url usually ends in /v1); going on"]
            return [f"{where}: GET {url}: {cause}; going on"]
        except Exception as exc:  # noqa: BLE001 - an odd body is not a reason to stop here
            return [f"{where}: GET {url}: {endpoint_cause(exc, timeout)}; going on"]
        return []

    def endpoint_url(self, path: str) -> str:
        """``base_url`` + ``/path``, fit for logs (:func:`redact_url`): the URL a request went to."""
        return redact_url(self.config.base_url.rstrip("/") + "/" + path.lstrip("/"))

    def drop_client(self) -> None:
        """Close the client (a request was abandoned); the next request makes a new one."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001, S110 - closing an abandoned client is best effort
                pass

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client (created on first use; its own retries off)."""
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=self._api_key,
                timeout=self.config.request_timeout_s,
                max_retries=0,
            )
        return self._client

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Work on ``task`` through ``adapter`` within ``budget``; never raises."""
        traj = getattr(adapter, "trajectory", None)
        if traj is None:
            traj = Trajectory(level=str(getattr(adapter, "level", "")))
        session = _Session(self, task, adapter, budget, traj)
        reason: StopReason
        error = infra_error = None
        try:
            session.loop()
            reason = "submitted"
        except BudgetExceeded as exc:
            reason = exc.reason
        except EndpointError as exc:
            reason, error = "error", f"chat-completions endpoint: {exc}"
            if session.turn == 0:  # no model turn received: not the model's failure
                infra_error = error
        except Exception as exc:  # noqa: BLE001 - the agent's own failure is data
            reason, error = "error", f"{type(exc).__name__}: {exc}"
        traj.log(
            "agent_stop",
            stop_reason=reason,
            steps=session.steps.steps,
            null_actions=session.null_actions,
            prompt_tokens=session.prompt_tokens if session.split_reported else None,
            completion_tokens=session.completion_tokens if session.split_reported else None,
            total_tokens=session.tokens(),
            error=error,
        )
        return AgentRun(
            stop_reason=reason,
            steps=session.steps.steps,
            submitted=reason == "submitted",
            error=error,
            trajectory=traj,
            tokens=session.tokens(),
            prompt_tokens=session.prompt_tokens,
            completion_tokens=session.completion_tokens,
            null_actions=session.null_actions,
            infra_error=infra_error,
        )


class _Submitted(AgentError):
    """``submit`` was called: the loop ends."""


class _Session:
    """One run of the agent (state: messages, counters); :meth:`loop` runs the mode."""

    def __init__(
        self, agent: LLMAgent, task: AgentTask, adapter: Any, budget: Budget, traj: Any
    ) -> None:
        self.agent = agent
        self.cfg = agent.config
        self.adapter = adapter
        self.budget = budget
        self.traj = traj
        self.steps = StepCounter(adapter, budget)
        self.t0 = agent.clock()
        self.null_actions = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.split_reported = False  # a response reported prompt or completion tokens
        self.other_tokens = 0  # tokens of turns whose usage had only total_tokens (no split)
        self.turn = 0
        self.last_timeout_s: float | None = None  # the bound of the last request, seconds
        loop = loop_tools(self.cfg.wait_max_s)
        loop_names = {t.name for t in loop}
        self.adapter_tools = {t.name for t in adapter.tools()} - loop_names
        specs = [t for t in adapter.tools() if t.name not in loop_names] + loop
        self.tools = [t.to_openai() for t in specs]
        request = user_message(task.request, task.files)
        self.system_prompt = system_prompt(self.cfg.mode)
        self.failed = False  # an action of the current response failed (tool ok False, null)
        self.recoveries = 0
        self.summary: str | None = None  # of the submit call
        self.replans = 0
        self.cut_chars: int | None = None  # the full length of the tool text being answered, if cut
        self.tools_checked = False  # agent_tools_check was logged (first turn with callable tools)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": request},
        ]
        traj.log(
            "agent_start",
            agent="llm",
            mode=self.cfg.mode,
            model=self.cfg.model,
            base_url=redact_url(self.cfg.base_url),
            temperature=self.cfg.temperature,
            seed=self.cfg.seed,
            recovery=self.cfg.recovery,
            tool_choice=self.cfg.tool_choice,
            system_prompt=self.system_prompt,
            request=request,
            files=dict(task.files),
            tools=self.tools,
        )

    # -- budgets ---------------------------------------------------------------------------

    def tokens(self) -> int:
        """Tokens used so far: prompt + completion, plus what turns reported only as a total."""
        return self.prompt_tokens + self.completion_tokens + self.other_tokens

    def remaining_s(self) -> float:
        return self.budget.wall_clock_s - (self.agent.clock() - self.t0)

    def check_clock(self) -> None:
        if self.remaining_s() <= 0:
            raise BudgetExceeded("wall_clock")

    def take_step(self) -> None:
        """Count one non-adapter action (wait, null) against max_steps."""
        self.check_clock()
        if self.steps.steps >= self.budget.max_steps:
            raise BudgetExceeded("max_steps")
        self.steps.steps += 1

    # -- the loop --------------------------------------------------------------------------

    def loop(self) -> None:
        """Run the configured mode until submit or a budget (which raises BudgetExceeded)."""
        try:
            if self.cfg.mode == "single-turn":
                self.single_turn()
            elif self.cfg.mode == "planner-executor":
                self.plan(PLAN_REQUEST)
                self.messages.append({"role": "user", "content": EXECUTE_REQUEST})
                self.react()
            else:
                self.react()
        except _Submitted:
            return

    def before_request(self) -> None:
        self.check_clock()
        used = self.tokens()
        if self.budget.max_tokens is not None and used >= self.budget.max_tokens:
            raise BudgetExceeded("max_tokens")

    def react(self) -> None:
        """The tool-calling loop (also the executor of planner-executor)."""
        while True:
            self.before_request()
            self.failed = False
            self.act(self.complete())
            if not self.failed:
                continue
            if self.cfg.mode == "planner-executor" and self.replans < self.cfg.max_replans:
                self.replans += 1
                self.plan(REPLAN_REQUEST)
                self.messages.append({"role": "user", "content": EXECUTE_REQUEST})
            elif self.cfg.recovery and self.recoveries < self.cfg.max_recoveries:
                self.recoveries += 1
                self.traj.log("agent_recovery", n=self.recoveries)
                self.messages.append({"role": "user", "content": RECOVERY_REQUEST})

    def single_turn(self) -> None:
        """One reply whose calls run in order; the end of the reply submits. With ``recovery``:
        if an action failed, one more reply (seeing every result) runs the same way."""
        self.before_request()
        self.failed = False
        try:
            self.act(self.complete())
        except _Submitted:
            pass
        if self.failed and self.cfg.recovery:
            self.recoveries += 1
            self.traj.log("agent_recovery", n=self.recoveries)
            self.messages.append({"role": "user", "content": SINGLE_TURN_RECOVERY_REQUEST})
            self.before_request()
            try:
                self.act(self.complete())
            except _Submitted:
                pass
        implicit = self.summary is None
        log_agent_action(self.traj, "submit", summary=self.summary, implicit=implicit)
        raise _Submitted

    def plan(self, request: str) -> None:
        """Ask for a (revised) plan: a text reply with tools offered but not callable."""
        self.messages.append({"role": "user", "content": request})
        self.before_request()
        message = self.complete(plan=True)
        text = (message_text(message) or "").strip()
        self.traj.log("agent_plan", revision=self.replans, plan=text)
        # tool calls in a planning reply are not executed (and not kept in the history)
        self.messages.append({"role": "assistant", "content": text or "(no plan)"})

    def tool_choice(self, plan: bool) -> str | None:
        """The ``tool_choice`` a request sends (None: left out): the configured one, ``none``
        for a planning request; nothing with ``tool_choice: omit``."""
        choice = self.cfg.tool_choice
        if choice == "omit":
            return None
        return "none" if plan else choice

    def complete(self, plan: bool = False) -> Any:
        """One chat-completions request (retried on transient errors); returns the message.

        ``plan``: a planning request (tools offered, not callable). The first request whose
        tools are callable is followed by the check that the endpoint saw them
        (:meth:`check_tools_seen`)."""
        cfg = self.cfg
        retrying = self._retrying()
        tool_choice = self.tool_choice(plan)
        kwargs = self._request_kwargs(tool_choice)

        def request() -> Any:
            self.check_clock()
            timeout = max(0.001, min(cfg.request_timeout_s, self.remaining_s()))
            self.last_timeout_s = timeout
            client = self.agent.client
            return check_body(
                bounded(
                    lambda: client.chat.completions.create(**kwargs, timeout=timeout),
                    timeout + ABANDON_GRACE_S,
                    self.agent.drop_client,
                )
            )

        try:
            resp = retrying(request)
        except BudgetExceeded:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._endpoint_error(exc, retrying.statistics.get("attempt_number", 1)) from None
        self.turn += 1
        pt, ct, tt = self._count_usage(getattr(resp, "usage", None))
        choices = getattr(resp, "choices", None)
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(choice, "message", None) if choice is not None else None
        calls = _calls(message)
        log_agent_turn(
            self.traj,
            self.turn,
            prompt_tokens=pt,
            completion_tokens=ct,
            total_tokens=tt,
            finish_reason=getattr(choice, "finish_reason", None),
            content=message_text(message),
            tool_calls=[
                {"id": getattr(c, "id", None), "name": _fn(c)[0], "arguments": _fn(c)[1]}
                for c in calls
            ],
            attempts=retrying.statistics.get("attempt_number", 1),
            plan=plan,
        )
        if not self.tools_checked and not plan and tool_choice != "none":
            self.tools_checked = True
            self.check_tools_seen(pt, tool_choice)
        return message

    def _retrying(self) -> Any:
        """The retry policy of one request (a tenacity ``Retrying``): transient errors only, at
        most ``max_retries`` more attempts and never past the wall clock, waiting the server's
        Retry-After (capped) or the exponential backoff; each retry logged as ``llm_retry``."""
        from tenacity import (
            RetryCallState,
            Retrying,
            retry_if_exception,
            stop_after_attempt,
            wait_exponential,
        )

        cfg = self.cfg

        def stop_on_deadline(state: RetryCallState) -> bool:
            return self.remaining_s() <= 0

        exponential = (
            wait_exponential(
                multiplier=cfg.retry_backoff_s, min=cfg.retry_backoff_s, max=cfg.retry_backoff_max_s
            )
            if cfg.retry_backoff_s > 0
            else (lambda _s: 0.0)
        )

        def wait(state: RetryCallState) -> float:
            """The server's Retry-After (capped) if it sent one, else the exponential backoff."""
            exc = state.outcome.exception() if state.outcome else None
            asked = retry_after_s(exc) if exc is not None else None
            if asked is None:
                return float(exponential(state))
            return max(0.0, min(asked, cfg.retry_after_max_s, self.remaining_s()))

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            backoff = state.next_action.sleep if state.next_action else 0.0
            self.traj.log(
                "llm_retry",
                attempt=state.attempt_number,
                error=describe_error(exc) if exc else None,
                backoff_s=backoff,
                retry_after_s=retry_after_s(exc) if exc is not None else None,
            )

        return Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(cfg.max_retries + 1) | stop_on_deadline,
            wait=wait,
            sleep=self.agent.sleep,
            before_sleep=before_sleep,
            reraise=True,
        )

    def _request_kwargs(self, tool_choice: str | None) -> dict[str, Any]:
        """The request's body fields: model, messages, tools, temperature, and the seed, tool
        choice and completion-token cap when set."""
        cfg = self.cfg
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "messages": self.messages,
            "tools": self.tools,
            "temperature": cfg.temperature,
        }
        if cfg.seed is not None:
            kwargs["seed"] = cfg.seed
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        if cfg.max_completion_tokens is not None:
            kwargs["max_tokens"] = cfg.max_completion_tokens
        return kwargs

    def _endpoint_error(self, exc: Exception, attempts: int) -> Exception:
        """What a request that failed for good raises: BudgetExceeded("wall_clock") when the
        wall clock ran out on transient errors after a model turn, else an EndpointError naming
        the URL, the cause and the attempts."""
        plural = "s" if attempts != 1 else ""
        bound = f"after {attempts} attempt{plural}"
        if is_transient(exc) and self.remaining_s() <= 0:
            if self.turn > 0:
                return BudgetExceeded("wall_clock")
            # the endpoint failed until the wall clock ran out: no model turn was received
            bound += f", the wall clock of {self.budget.wall_clock_s:g} s spent"
        cause = endpoint_cause(exc, self.last_timeout_s, self.cfg.api_key_env)
        return EndpointError(
            f"POST {self.agent.endpoint_url('chat/completions')}: {cause} ({bound})"
        )

    def _count_usage(self, usage: Any) -> tuple[int | None, int | None, int | None]:
        """Add a response's ``usage`` to the run's tokens; returns its (prompt, completion,
        total) tokens (None: not reported). A total without the split counts as other tokens."""
        pt = token_count(getattr(usage, "prompt_tokens", None)) if usage is not None else None
        ct = token_count(getattr(usage, "completion_tokens", None)) if usage is not None else None
        tt = token_count(getattr(usage, "total_tokens", None)) if usage is not None else None
        self.prompt_tokens += pt or 0
        self.completion_tokens += ct or 0
        self.split_reported = self.split_reported or pt is not None or ct is not None
        if tt is not None and (pt is None or ct is None):
            # an endpoint that reports only the total (or half the split): the total counts
            self.other_tokens += max(0, tt - (pt or 0) - (ct or 0))
        return pt, ct, tt

    def check_tools_seen(self, prompt_tokens: int | None, tool_choice: str | None) -> None:
        """Log ``agent_tools_check`` for the first turn whose tools were callable: whether its
        prompt tokens can hold the messages and the tools (:func:`tools_check`); when they
        cannot, also a warning on this module's logger (the endpoint most likely dropped the
        tools: see ``tool_choice`` in ``docs/llm.md``)."""
        check = tools_check(prompt_tokens, self.messages, self.tools)
        self.traj.log(
            "agent_tools_check",
            turn=self.turn,
            seen=check.seen,
            prompt_tokens=check.prompt_tokens,
            min_tokens=check.min_tokens,
            message_chars=check.message_chars,
            tool_chars=check.tool_chars,
            tool_choice=tool_choice,
        )
        if check.seen is False:
            log.warning(
                "%s: turn %d had %d prompt tokens, fewer than the %d its messages and %d tools "
                "need at least: the endpoint most likely did not give the model the tools "
                "(tool_choice sent: %s; try another agent.tool_choice, see docs/llm.md)",
                self.agent.endpoint_url("chat/completions"), self.turn, prompt_tokens,
                check.min_tokens, len(self.tools), tool_choice or "omitted",
                extra={"ani_event": "agent_tools_check"},  # `ani run` prints its own line
            )

    def act(self, message: Any) -> None:
        """Execute the tool calls of one response, in order (a reply without one: a null action)."""
        content = message_text(message)
        calls = _calls(message)
        if not calls:
            self.take_step()
            self.null("no_tool_call", None, content or "")
            self.messages.append({"role": "assistant", "content": content or ""})
            self.messages.append({"role": "user", "content": TEXT_INSTEAD_OF_CALL})
            return
        parsed = []
        history_calls = []
        seen_ids: set[str] = set()
        for i, call in enumerate(calls):
            name, raw = _fn(call)
            call_id = getattr(call, "id", None) if not isinstance(call, dict) else call.get("id")
            if not isinstance(call_id, str) or not call_id or call_id in seen_ids:
                # no id, or one repeated in this reply: each result must answer its own call
                call_id = f"call_{self.turn}_{i}"
            seen_ids.add(call_id)
            try:
                args = parse_arguments(raw)
                problem = None if isinstance(args, dict) else "not_an_object"
            except (ValueError, RecursionError):
                args, problem = None, "invalid_json"
            parsed.append((call_id, name, raw, args, problem))
            # history keeps only valid JSON arguments: some servers re-parse them and fail
            history_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": raw if problem is None else "{}"},
                }
            )
        # content "" rather than null: the API allows both next to tool_calls, but
        # llama-cpp-python's server refuses null (HTTP 500, a validation error) and a missing
        # content (its chatml-function-calling template reads it)
        self.messages.append(
            {"role": "assistant", "content": content or "", "tool_calls": history_calls}
        )
        for i, (call_id, name, raw, args, problem) in enumerate(parsed):
            self.cut_chars = None
            try:
                observation = self.one_call(name, raw, args, problem)
            except _Submitted:
                # every call of the reply is answered, so the history stays valid (single-turn
                # recovery sends it again); calls after submit are not run
                self.observe(call_id, name, "submitted")
                for later_id, later_name, *_rest in parsed[i + 1 :]:
                    self.observe(later_id, later_name, "not run: after submit")
                raise
            self.observe(call_id, name, observation)

    def observe(self, call_id: str, tool: str, text: str) -> None:
        """Answer tool call ``call_id`` with ``text`` (a ``tool`` message) and log exactly what
        the model is sent as an ``agent_observation`` event (``truncated``: the tool's text was
        longer than ``max_observation_chars`` and was cut; ``full_chars``: its length then)."""
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        cut = self.cut_chars
        self.cut_chars = None
        self.traj.log(
            "agent_observation",
            tool_call_id=call_id,
            tool=tool,
            text=text,
            truncated=cut is not None,
            full_chars=cut,
        )

    def one_call(self, name: str, raw: str, args: Any, problem: str | None) -> str:
        """Run one tool call; returns the observation text (raises _Submitted on submit)."""
        known = name in self.adapter_tools or name in ("wait", "submit")
        if problem is None and not known:
            problem = "unknown_tool"
        if problem is not None:
            self.take_step()
            self.null(problem, name, raw)
            snippet = raw[:RAW_CHARS]
            if problem == "unknown_tool":
                names = ", ".join(sorted(self.adapter_tools | {"wait", "submit"}))
                return f"error: unknown tool {name!r}; tools are: {names}"
            about = f"error: the arguments of your call to {name!r}"
            if problem == "invalid_json":
                return (
                    f"{about} are not valid JSON (NaN, Infinity and out-of-range numbers are "
                    f"not allowed): {snippet}"
                )
            return f"{about} must be a JSON object, got: {snippet}"
        if name == "submit":
            summary = args.get("summary")
            if summary is None:
                summary = ""
            elif not isinstance(summary, str):
                summary = json.dumps(summary, default=str)
            self.summary = summary
            if self.cfg.mode != "single-turn":  # single-turn logs its one submission at the end
                log_agent_action(self.traj, "submit", summary=self.summary)
            raise _Submitted
        if name == "wait":
            return self.wait(args)
        self.check_clock()
        result = self.steps.call(name, args)
        if not result.ok:
            self.failed = True
        # the one observation of every path (integrations, MCP text content, trajectory)
        text, self.cut_chars = cut_text(result.observation(), self.cfg.max_observation_chars)
        return text

    def wait(self, args: dict[str, Any]) -> str:
        self.take_step()
        seconds = args.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            self.failed = True
            log_agent_action(self.traj, "wait", seconds=seconds, waited_s=0.0, ok=False)
            top = f"{self.cfg.wait_max_s:g}"
            return f"error: wait needs 'seconds', a number from 0 to {top}; got {seconds!r}"
        waited = max(0.0, min(float(seconds), self.cfg.wait_max_s, self.remaining_s()))
        self.agent.sleep(waited)
        log_agent_action(self.traj, "wait", seconds=seconds, waited_s=waited, ok=True)
        return f"waited {waited:g} s"

    def null(self, reason: str, tool: str | None, raw: str) -> None:
        self.null_actions += 1
        self.failed = True
        log_agent_action(self.traj, "null", reason=reason, tool=tool, raw=raw[:RAW_CHARS])


def _calls(message: Any) -> list[Any]:
    """The tool calls of a response message (a ``tool_calls`` that is not a list: none)."""
    calls = getattr(message, "tool_calls", None) if message is not None else None
    return list(calls) if isinstance(calls, list) else []


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _fn(call: Any) -> tuple[str, str]:
    """``(name, raw arguments text)`` of a tool call (function or custom).

    The arguments are a JSON text in the API; an endpoint that sends them as a JSON value
    instead (an object, a list, a number) has it serialised here, so an object is used as the
    arguments and any other value is a null action (not_an_object). ``null`` is no arguments.
    """
    fn = _field(call, "function")
    key = "arguments"
    if fn is None:
        fn, key = _field(call, "custom"), "input"
    if fn is None:
        return "", ""
    name = _field(fn, "name")
    raw = _field(fn, key)
    if raw is None:
        raw = ""
    elif not isinstance(raw, str):
        raw = json.dumps(raw, default=str)
    return ("" if name is None else str(name)), raw
