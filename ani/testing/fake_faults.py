"""A fault kind and a clock for unit tests of fault logic on a :class:`~ani.testing.FakeLab`
(no root, no FRR): the schedule, the session (placement, hold, exposure) and what explains an
observed violation.

- :class:`FakeFault`: a :class:`~ani.faults.base.FaultKind` whose fault is one configuration line
  ``fault <name>`` on the target router (``target={"router": "r1", "name": "x"}``; ``name``
  defaults to the kind's): injected with ``vtysh``, present while the line is there, removed with
  ``no fault <name>``; while the router's configuration has the line ``fault-blocker`` (the run's
  own state in its way, as an agent's lock is for a held lock) the injection raises
  :class:`~ani.errors.FaultNotApplicable`; a ``gate`` (a :class:`threading.Event`) holds every
  removal of a fault named ``slow`` until it is set (a slow removal, without real time). Not
  registered: pass ``get_kind=lambda n: FakeFault()``
  to the session.
- :class:`TickClock`: a monotonic clock that moves ``tick`` seconds at every read (so a loop
  that waits on the clock ends) and by :meth:`TickClock.advance`.

::

    >>> from ani.faults.base import FaultSpec
    >>> from ani.faults.session import FaultSession
    >>> from ani.testing import FakeLab
    >>> from ani.trajectory import Trajectory
    >>> lab, clock = FakeLab(), TickClock()
    >>> s = FaultSession(lab, [FaultSpec(kind="fake", at_step=0, duration_s=2.0, target={"router": "r1"})],
    ...                  Trajectory(), clock=clock, get_kind=lambda n: FakeFault(), watch=False)
    >>> s.start(); "fault fake" in lab.config("r1")
    True
    >>> s.hold(tick_s=0) >= 2.0, "fault fake" in lab.config("r1")
    (True, False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ani.errors import FaultNotApplicable
from ani.faults.base import FaultKind, FaultSpec

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["FakeFault", "TickClock"]


class FakeFault(FaultKind):
    """See the module doc."""

    name = "fake"

    def __init__(self, gate: Any = None) -> None:
        self.gate = gate

    def draw(self, rng: Any, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        routers = sorted(getattr(getattr(scenario, "topology", scenario), "routers", None) or ["r1"])
        return {"router": rng.choice(routers)}, {}

    @staticmethod
    def _line(spec: FaultSpec) -> str:
        return f"fault {spec.target.get('name', spec.kind)}"

    def inject(self, lab: Lab, spec: FaultSpec) -> str:
        if "fault-blocker" in lab.config(spec.target["router"]):
            raise FaultNotApplicable(f"{spec.target['router']} has fault-blocker")
        lab.vtysh(spec.target["router"], ["configure terminal", self._line(spec)])
        return spec.target["router"]

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        on = self._line(spec) in lab.config(handle)
        return on, f"{self._line(spec)} {'on' if on else 'off'} {handle}"

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        if self.gate is not None and spec.target.get("name") == "slow":
            self.gate.wait(timeout=30)
        lab.vtysh(handle, ["configure terminal", f"no {self._line(spec)}"])

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        ok, detail = self.verify(lab, spec, handle)
        return not ok, detail


class TickClock:
    """Monotonic seconds that move ``tick`` at every read (see the module doc)."""

    def __init__(self, start: float = 100.0, tick: float = 0.01) -> None:
        self.t = float(start)
        self.tick = float(tick)

    def __call__(self) -> float:
        self.t += self.tick
        return self.t

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (the agent thinking, a call running)."""
        self.t += float(seconds)
