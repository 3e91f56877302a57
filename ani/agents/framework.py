"""Framework agents: an agent built with LangChain / LangGraph, pydantic-ai, openai-agents or
smolagents, run as an ani :class:`~ani.agents.base.Agent` (issue 26).

::

    def build(tools, task):                       # the framework's own tools, the task
        return pydantic_ai.Agent(model, tools=tools, system_prompt="...")

    agent = FrameworkAgent("pydantic_ai", build)   # or ani.integrations.pydantic_ai_agent.agent(build)
    run = agent.run(task, adapter, Budget(max_steps=10))

``build(tools, task)`` gets the tools of ``ani.integrations.<framework>.tools(adapter)`` (bound to
a guarded adapter, below) and the :class:`~ani.agents.base.AgentTask` (its ``request`` and
``files``; never the oracle), and returns the framework's agent. The framework's own loop runs it
with the first user message of the shipped LLM agent (:func:`ani.agents.llm_config.user_message`:
the request, then each attached file). The per-framework runners live in
``ani.integrations.<framework>_agent`` (they import the framework; this module does not).

What ani does around the framework's loop, the same for the four:

- **Steps and the budget at ani's tool boundary** (:class:`GuardedAdapter`): every tool call is
  one step. A call made when ``budget.max_steps`` steps were made, or when the wall clock is
  spent, is not run: it is answered with a refusal (``ok=False``, code ``not_allowed``, message
  ``budget spent: max_steps (10 of 10 tool calls made); this call was not run and the run
  stops``) through the framework's own error channel, logged as an ``agent_refused`` event, and
  the run stops with the stop reason ``max_steps`` / ``wall_clock`` at the framework's next step
  boundary. ``max_tokens`` is checked after each model turn. The async frameworks' loops
  (pydantic-ai, LangGraph, openai-agents) are also cancelled when the wall clock runs out
  mid-request; smolagents' (sync) loop is stopped between steps.
- **Model turns** (:meth:`FrameworkSession.turn`): each model response the framework exposes is
  an ``agent_turn`` event, as the LLM agent writes it (turn, prompt_tokens, completion_tokens,
  total_tokens, finish_reason, content, tool_calls [{id, name, arguments}]), tokens from the
  framework's own usage report. A framework that reports no usage reports zeros: a turn with 0
  prompt and 0 completion tokens is logged as None / None (unknown, as the process metrics
  read it), never as free.
- **Submitted**: the framework's run ended with an answer (its final output), logged as
  ``agent_action`` submit with that answer as the summary. A run the framework itself ended
  without one (its own turn limit, an exception) stops with ``error`` naming it; one that failed
  on the model endpoint before any turn was received is an infrastructure error
  (``AgentRun.infra_error``), as the LLM agent's.
- ``agent_start`` (agent, framework, request, files, tools) and ``agent_stop`` (stop_reason,
  steps, null_actions, prompt_tokens, completion_tokens, total_tokens, error) as the LLM agent's.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ani.agents.base import AgentRun, AgentTask, Budget, StopReason
from ani.agents.llm_config import user_message
from ani.errors import ConfigError, ErrorCode
from ani.host.threads import ContextPool
from ani.llm_endpoint import token_count
from ani.protocol import ToolResult
from ani.trajectory import Trajectory, log_agent_action, log_agent_turn

__all__ = ["FRAMEWORKS", "FrameworkAgent", "FrameworkRunner", "FrameworkSession", "GuardedAdapter"]

#: framework name -> the module of its runner (``RUNNER``)
FRAMEWORKS = {
    "langchain": "ani.integrations.langchain_agent",
    "pydantic_ai": "ani.integrations.pydantic_ai_agent",
    "openai_agents": "ani.integrations.openai_agents_agent",
    "smolagents": "ani.integrations.smolagents_agent",
}

#: characters of the final answer kept in the ``submit`` event's summary
SUMMARY_CHARS = 2000


class FrameworkRunner(Protocol):
    """What a framework contributes: its tools and one run of its own loop.

    ``run`` returns the final answer (text) or None when the loop ended without one; it may
    stop early when ``session.stopped()``; its exceptions are the run's error.
    """

    framework: str

    def tools(self, adapter: Any, **options: Any) -> list[Any]: ...

    def run(self, agent: Any, prompt: str, session: FrameworkSession) -> str | None: ...


class GuardedAdapter:
    """The adapter as the framework's tools see it: ``call`` counts steps and refuses a call
    past the budget (module doc); everything else is the adapter's. Thread-safe (frameworks
    run a turn's calls in threads)."""

    def __init__(self, adapter: Any, session: FrameworkSession) -> None:
        self._adapter = adapter
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    def tools(self) -> list[Any]:
        return self._adapter.tools()

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        refusal = self._session.take_step(name)
        if refusal is not None:
            return refusal
        return self._adapter.call(name, arguments)


class FrameworkSession:
    """One run's accounting: steps, tokens, turns, the stop reason (module doc).

    Attributes:
        budget: the run's budget.
        traj: the trajectory events go to (the adapter's).
        steps: tool calls made (refused ones are not counted).
        turns: model turns logged.
        stop: the budget's stop reason once one was hit, else None.
    """

    def __init__(self, budget: Budget, traj: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.traj = traj
        self.clock = clock
        self.t0 = clock()
        self.steps = 0
        self.turns = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.other_tokens = 0
        self.split_reported = False
        self.stop: StopReason | None = None
        self._lock = threading.Lock()

    def remaining_s(self) -> float:
        """Seconds of the wall clock left (may be negative)."""
        return self.budget.wall_clock_s - (self.clock() - self.t0)

    def tokens(self) -> int:
        """prompt + completion tokens, plus the totals of turns that reported no split."""
        return self.prompt_tokens + self.completion_tokens + self.other_tokens

    def stopped(self) -> bool:
        """A budget was hit (the wall clock is checked here too): the loop must end."""
        with self._lock:
            if self.stop is None and self.remaining_s() <= 0:
                self.stop = "wall_clock"
            return self.stop is not None

    def take_step(self, tool: str) -> ToolResult | None:
        """Count one tool call; None: it may run; else the refusal it is answered with."""
        with self._lock:
            if self.stop is None and self.remaining_s() <= 0:
                self.stop = "wall_clock"
            if self.stop is None and self.steps >= self.budget.max_steps:
                self.stop = "max_steps"
            if self.stop is None:
                self.steps += 1
                return None
            reason = self.stop
        what = {"max_steps": f"{self.steps} of {self.budget.max_steps} tool calls made",
                "wall_clock": f"the wall clock of {self.budget.wall_clock_s:g} s spent",
                "max_tokens": f"{self.tokens()} of {self.budget.max_tokens} tokens used"}.get(reason, reason)
        message = f"budget spent: {reason} ({what}); this call was not run and the run stops"
        self.traj.log("agent_refused", tool=tool, reason=reason, message=message)
        return ToolResult.failure(ErrorCode.NOT_ALLOWED, message)

    def turn(self, prompt_tokens: Any, completion_tokens: Any, total_tokens: Any = None, **fields: Any) -> None:
        """Log one model turn (``agent_turn``) with the framework's usage and count its tokens;
        a turn that reports 0 / 0 reported nothing (None / None); one with a split and no
        total gets their sum as its ``total_tokens``. Sets ``stop`` to
        ``max_tokens`` when the token budget is spent."""
        pt, ct, tt = token_count(prompt_tokens), token_count(completion_tokens), token_count(total_tokens)
        if not pt and not ct:
            pt = ct = None
            tt = tt or None
        elif tt is None and pt is not None and ct is not None:
            tt = pt + ct  # a split without a total (pydantic-ai): the total the LLM agent's turns carry
        with self._lock:
            self.turns += 1
            self.prompt_tokens += pt or 0
            self.completion_tokens += ct or 0
            self.split_reported = self.split_reported or pt is not None or ct is not None
            if tt is not None and (pt is None or ct is None):
                self.other_tokens += max(0, tt - (pt or 0) - (ct or 0))
            turn = self.turns
            if self.budget.max_tokens is not None and self.tokens() >= self.budget.max_tokens:
                self.stop = self.stop or "max_tokens"
        log_agent_turn(self.traj, turn, prompt_tokens=pt, completion_tokens=ct, total_tokens=tt, **fields)

    def run_async(self, make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """``asyncio.run`` of ``make()`` cancelled when the wall clock runs out (``stop`` is
        then ``wall_clock`` and the result None); from a thread whose event loop is running
        (a notebook), in a thread of its own."""

        async def bounded() -> Any:
            try:
                return await asyncio.wait_for(make(), timeout=max(0.001, self.remaining_s()))
            except TimeoutError:
                self.stop = self.stop or "wall_clock"
                return None

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: the usual case (ani run, campaign workers)
            return asyncio.run(bounded())
        # called from a running event loop (a notebook): the loop runs in a thread of its own
        with ContextPool(max_workers=1) as pool:
            return pool.submit(asyncio.run, bounded()).result()


def runner_for(framework: str) -> FrameworkRunner:
    """The runner of ``framework`` (a key of :data:`FRAMEWORKS`; ConfigError naming the known
    ones otherwise; ImportError naming the extra when the framework is not installed)."""
    module = FRAMEWORKS.get(framework) if isinstance(framework, str) else None
    if module is None:
        raise ConfigError(f"agent framework must be one of {', '.join(FRAMEWORKS)}; got {framework!r}")
    return importlib.import_module(module).RUNNER


def _endpoint_failure(exc: BaseException) -> bool:
    """An HTTP client error of the model endpoint (openai / httpx) in ``exc``'s chain."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__module__.split(".")[0] in ("openai", "httpx", "httpcore"):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


class FrameworkAgent:
    """An ani agent that runs a framework's agent (module doc).

    Args:
        framework: ``langchain`` (LangChain 1.x ``create_agent`` / a LangGraph graph),
            ``pydantic_ai``, ``openai_agents`` or ``smolagents``; or a :class:`FrameworkRunner`.
        build: ``build(tools, task) -> the framework's agent`` (tools: the framework's own).
        name: the agent's name in records (default ``framework:<framework>``).
        tool_options: passed to ``ani.integrations.<framework>.tools(adapter, **tool_options)``.

    Raises:
        ConfigError: an unknown framework, or ``build`` is not callable.
    """

    def __init__(self, framework: str | FrameworkRunner, build: Callable[[list[Any], AgentTask], Any],
                 name: str | None = None, **tool_options: Any) -> None:
        self.runner = runner_for(framework) if isinstance(framework, str) else framework
        if not callable(build):
            raise ConfigError(f"agent build must be a function (tools, task) -> agent; got {type(build).__name__}")
        self.build = build
        self.framework = self.runner.framework
        self.name = name or f"framework:{self.framework}"
        self.tool_options = tool_options

    def __repr__(self) -> str:
        return f"FrameworkAgent({self.framework!r}, {getattr(self.build, '__qualname__', self.build)!r})"

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Run the framework's loop on ``task`` within ``budget``; never raises."""
        traj = getattr(adapter, "trajectory", None)
        if traj is None:
            traj = Trajectory(level=str(getattr(adapter, "level", "")))
        session = FrameworkSession(budget, traj)
        prompt = user_message(task.request, task.files)
        answer, error, infra = None, None, None
        try:
            tools = self.runner.tools(GuardedAdapter(adapter, session), **self.tool_options)
            traj.log("agent_start", agent=self.name, framework=self.framework, request=prompt,
                     files=dict(task.files), tools=[getattr(t, "name", str(t)) for t in tools])
            answer = self.runner.run(self.build(tools, task), prompt, session)
        except Exception as exc:  # noqa: BLE001 - the agent's own failure is data
            if not session.stopped():
                error = f"{self.framework}: {type(exc).__name__}: {exc}"
                if session.turns == 0 and _endpoint_failure(exc):
                    infra = error
        reason: StopReason
        if session.stop is not None:
            reason = session.stop
        elif error is not None:
            reason = "error"
        elif answer is None:
            reason, error = "error", f"{self.framework}: the run ended without an answer"
        else:
            reason = "submitted"
            log_agent_action(traj, "submit", summary=str(answer)[:SUMMARY_CHARS])
        return self._finish(traj, session, reason, error, infra)

    @staticmethod
    def _finish(traj: Any, s: FrameworkSession, reason: StopReason, error: str | None,
                infra: str | None) -> AgentRun:
        traj.log("agent_stop", stop_reason=reason, steps=s.steps, null_actions=0,
                 prompt_tokens=s.prompt_tokens if s.split_reported else None,
                 completion_tokens=s.completion_tokens if s.split_reported else None,
                 total_tokens=s.tokens(), error=error)
        return AgentRun(stop_reason=reason, steps=s.steps, submitted=reason == "submitted", error=error,
                        trajectory=traj, tokens=s.tokens(), prompt_tokens=s.prompt_tokens,
                        completion_tokens=s.completion_tokens, infra_error=infra)
