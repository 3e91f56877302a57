"""What the runner (:mod:`ani.campaign.runner`) and the phases of a run
(:mod:`ani.campaign.execute`, :mod:`ani.campaign.extensions`, :mod:`ani.campaign.run_record`)
share, in one place both import:

    trajectory = TeeTrajectory(path, hook=print_event)   # each event also to the display hook
    announce(hook, {"event": "run_phase", ...})          # a runner event (not stored)
    with sigint_deferred(): lab.down()                   # Ctrl-C held until teardown ends
    check_outcomes(observer_results) -> [CheckOutcome]    # the record's tests / invariants
    error_text(exc) -> "LabError: ..."                   # an exception as a record states it

Nothing here starts a lab or imports one.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from ani.campaign.results import CheckOutcome
from ani.trajectory import TOOL_CALL_EVENT, Trajectory

EventHook = Callable[[dict[str, Any]], None]


class GradingObserver(Protocol):
    """What a run needs of the observer :attr:`RunnerDeps.make_observer
    <ani.campaign.runner.RunnerDeps.make_observer>` returns (:class:`ani.observer.Observer` is
    one; a test's fake declares both).

    Attributes:
        on_negatives: None, or called (no arguments, on the evaluating thread, once per
            :meth:`evaluate`) when the negative checks start; the grading phase sets it to the
            run observation's final reads (issue 24 §3), which then run beside the negative
            pings. An observer that never calls it leaves those reads to the observation's own
            ``finish`` (same records, taken after grading).
    """

    on_negatives: Callable[[], None] | None

    def evaluate(self, checks: list[Any], bound_s: float = ...) -> list[Any]:
        """Each check's result (``.name``, ``.passed``, ``.detail``), in the order given;
        ``bound_s``: seconds a failing check is retried."""
        ...


class TeeTrajectory(Trajectory):
    """A trajectory that also hands each event to ``hook`` (live printing in ``ani run``)."""

    def __init__(self, *args: Any, hook: EventHook | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hook = hook
        # faults (issue 14): called with the step (tool calls so far) and the event after each tool_call
        self.on_tool_call: Callable[[int, dict[str, Any]], None] | None = None
        self._steps = 0

    def log(self, event: str, **fields: Any) -> dict[str, Any]:
        rec = super().log(event, **fields)
        if event == TOOL_CALL_EVENT and self.on_tool_call is not None:  # faults (issue 14)
            self._steps += 1
            try:
                self.on_tool_call(self._steps, rec)
            except Exception:  # noqa: BLE001 - the session records its own failures
                pass
        if self._hook is not None:
            try:
                self._hook(rec)
            except Exception:  # noqa: BLE001 - a display hook never breaks a run
                pass
        return rec


def announce(hook: EventHook | None, event: dict[str, Any]) -> None:
    """Hand a runner event (not a trajectory event: it is not stored) to the display hook.

    Runner events: ``{"event": "run_phase", "phase": "grading", "hidden_tests": N,
    "invariants": M}`` when grading starts (it can take tens of seconds)."""
    if hook is None:
        return
    try:
        hook(event)
    except Exception:  # noqa: BLE001 - a display hook never breaks a run
        pass


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block ends (so teardown is not interrupted); main thread only.

    A process that ignores SIGINT (started with ``&`` from a script, or ``nohup``) keeps
    ignoring it here: a SIGINT during teardown must not stop it when one at any other moment
    does not."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda s, f: received.append(s))
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt


def check_outcomes(results: Any) -> list[CheckOutcome]:
    """The observer's check results as the record's :class:`CheckOutcome` list (name, passed,
    detail, service)."""
    out = []
    for r in results or []:
        out.append(
            CheckOutcome(
                name=str(r.name),
                passed=bool(r.passed),
                detail=str(getattr(r, "detail", "") or ""),
                service=getattr(r, "service", None) or None,
            )
        )
    return out


def error_text(exc: BaseException) -> str:
    """``exc`` as a record states it: ``"<type>: <message>"`` (its repr when the message is
    empty), with the operations it left ``pending`` if it carries them."""
    text = str(exc).strip() or repr(exc)
    pending = getattr(exc, "pending", None)
    if pending:
        text += " [pending: " + "; ".join(map(str, pending)) + "]"
    return f"{type(exc).__name__}: {text}"


def evaluate_checks(observer: Any, checks: Any, bound_s: float | None) -> Any:
    """``observer.evaluate(checks)``, with ``bound_s`` (seconds a check may take) when given."""
    if bound_s is None:
        return observer.evaluate(list(checks))
    return observer.evaluate(list(checks), bound_s=bound_s)


def as_steps(value: Any) -> int | None:
    """An agent's steps as a count: an int as is, a sequence's length, else None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return len(value)
    except TypeError:
        return None


def now_utc() -> datetime:
    """The time now, UTC (a record's ``started`` / ``ended``)."""
    return datetime.now(UTC)



def ncb_param(variant: Any, key: str) -> Any:
    """netconfbench: ``variant.params[key]`` of a netconfbench variant, else None."""
    if getattr(variant, "task_class", None) != "netconfbench":
        return None
    return (getattr(variant, "params", None) or {}).get(key)


