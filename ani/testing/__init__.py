"""Testing tools for adapter authors and agent authors (they ship in the wheel).

- :class:`AdapterConformance` (:mod:`ani.testing.conformance`): the conformance suite, a pytest
  base class a vendor adapter's test subclasses; :class:`FailingChange` describes the change
  the device refuses; :func:`check_result` checks one ToolResult. Needs pytest
  (``pip install 'ani-sdk[testing]'``).
- :class:`FakeLab` (:mod:`ani.testing.fake_lab`): a lab without namespaces (in-memory routers
  with an FRR-like vtysh) for unit tests of agents and adapters; no root, no FRR. Scripted
  vtysh / exec answers, dead daemons, harness faults, a pretend NETCONF server, labs that fail
  to come up or down.
- :mod:`ani.testing.fake_campaign`: a campaign's fake world on FakeLab (labs, a flag observer, a
  scripted agent, the seeds whose lab fails) for unit tests of the runner and the executors.
- :func:`lab_state`, :func:`state_difference` (:mod:`ani.testing.device_state`): a lab's routers
  read out of band, and what differs between two reads.
- :class:`FakeFault`, :class:`TickClock` (:mod:`ani.testing.fake_faults`): a fault kind acting
  on a FakeLab and a clock that moves, for unit tests of fault schedules and sessions.
- :func:`strict_problems` (:mod:`ani.testing.strict`): what keeps a tool from being accepted by
  the strict chat-completions rules.
- :mod:`ani.testing.fake_execute`: a fake run function (``execute``'s signature, no lab) for
  unit tests of campaign executors: ``get_executor("local", jobs=3,
  target="ani.testing.fake_execute:execute")``; the plan's agent block says how long it runs,
  whether it dies, raises or fails.

See docs/vendor-adapter.md.
"""

from __future__ import annotations

from typing import Any

from ani.testing.device_state import lab_state, state_difference
from ani.testing.fake_faults import FakeFault, TickClock
from ani.testing.fake_lab import FakeLab, FakeRouter
from ani.testing.strict import strict_problems

__all__ = ["AdapterConformance", "FailingChange", "FakeFault", "FakeLab", "FakeRouter", "TickClock", "check_result",
           "lab_state", "state_difference", "strict_problems"]

_NEEDS_PYTEST = ("AdapterConformance", "FailingChange", "check_result")


def __getattr__(name: str) -> Any:
    """The suite's names load on first use: only they need pytest."""
    if name in _NEEDS_PYTEST:
        try:
            from ani.testing import conformance
        except ModuleNotFoundError as exc:
            if exc.name != "pytest":
                raise
            raise ImportError(f"ani.testing.{name} needs pytest: pip install 'ani-sdk[testing]'") from None
        return getattr(conformance, name)
    raise AttributeError(f"module 'ani.testing' has no attribute {name!r}")
