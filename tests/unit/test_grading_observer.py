"""The observer a run grades with declares what the grading phase uses of it
(:class:`ani.campaign.run_support.GradingObserver`: ``on_negatives`` and ``evaluate(checks,
bound_s)``), so the phase sets ``on_negatives`` without probing for it."""

from __future__ import annotations

import inspect

from ani.campaign.run_support import GradingObserver
from ani.observer import Observer
from ani.testing import FakeLab


def test_the_observer_is_a_grading_observer() -> None:
    observer = Observer(FakeLab())
    assert list(GradingObserver.__annotations__) == ["on_negatives"]
    assert observer.on_negatives is None  # declared, unset until a run's grading sets it
    wanted = inspect.signature(GradingObserver.evaluate).parameters
    have = inspect.signature(observer.evaluate).parameters
    assert list(wanted)[1:] == list(have)[: len(wanted) - 1] == ["checks", "bound_s"]
    assert have["bound_s"].default is not inspect.Parameter.empty
