"""The fault schedule of one task variant: drawn from the variant's seed and a rate, never from
the level, so every cell of a campaign meets the same faults at the same points.

Points are agent steps (see ``docs/faults.md``): the fault points are a Poisson process in steps
at ``rate`` faults per step: inter-arrival times are Exp(rate) draws, a point is the floor of
their cumulative sum, kept while it is below ``horizon_steps``. At each point one kind is chosen
uniformly among ``kinds`` that have a target in the scenario (``FaultKind.draw`` returns None
for a kind that has none), then its target and parameters; the duration is uniform in
``duration_s`` (seconds, rounded to 0.1 s)::

    >>> from ani.faults.schedule import draw_schedule
    >>> draw_schedule(seed=1, rate=0.0, scenario=None, variant=None)
    []

Placement in time (``faults.placement: time``, :func:`place_in_time`): the same draw, with each
point ``k`` put at ``k * step_s`` seconds of the agent's time (``FaultSpec.at_s``), so every level
meets each fault at the same second whatever its number of steps::

    >>> from ani.faults.base import FaultSpec
    >>> place_in_time([FaultSpec(kind="link_down", at_step=4, duration_s=5.0)], step_s=2.0)[0].at_s
    8.0

Determinism: one :class:`random.Random` seeded with ``"ani-faults:<seed>"`` feeds every draw in a
fixed order (points first, then per point the kind, its target/params, the duration), and the
kinds are taken in sorted order, so the same seed, rate, scenario and kinds give the same list on
every machine and at every level.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any, Sequence

from ani.errors import ConfigError
from ani.faults.base import FaultSpec, fault_kinds, get_fault_kind

#: default range of a fault's duration, seconds
DEFAULT_DURATION_S = (3.0, 8.0)
#: default number of agent steps over which faults are drawn
DEFAULT_HORIZON_STEPS = 20
#: default seconds of agent time per step point in time placement (:func:`place_in_time`)
DEFAULT_STEP_S = 2.0
PLACEMENTS = ("steps", "time")


def place_in_time(schedule: list[FaultSpec], step_s: float = DEFAULT_STEP_S) -> list[FaultSpec]:
    """``schedule`` with each fault's point in seconds of the agent's time: ``at_s = at_step *
    step_s`` (``at_step`` kept, for the record). Raises ConfigError for ``step_s <= 0``."""
    if not (isinstance(step_s, (int, float)) and math.isfinite(step_s) and step_s > 0):
        raise ConfigError(f"faults.step_s must be seconds > 0, got {step_s!r}")
    return [dataclasses.replace(f, at_s=round(f.at_step * float(step_s), 3)) for f in schedule]


def fault_points(rng: random.Random, rate: float, horizon_steps: int) -> list[int]:
    """The points (agent steps, ascending, repeats allowed) of a Poisson process at ``rate``
    faults per step, below ``horizon_steps``."""
    if rate <= 0:
        return []
    points: list[int] = []
    t = 0.0
    while True:
        t += rng.expovariate(rate)
        point = math.floor(t)
        if point >= horizon_steps:
            return points
        points.append(point)


def draw_schedule(
    *,
    seed: int,
    rate: float,
    scenario: Any,
    variant: Any,
    kinds: Sequence[str] | None = None,
    horizon_steps: int = DEFAULT_HORIZON_STEPS,
    duration_s: tuple[float, float] = DEFAULT_DURATION_S,
) -> list[FaultSpec]:
    """The faults of one task variant, in injection order.

    Args:
        seed: the variant seed (the campaign's seed of the run).
        rate: faults per agent step (lambda), >= 0; 0 gives ``[]``.
        scenario: the scenario the kinds pick their targets from (routers, links).
        variant: the task variant (a kind may avoid or prefer the task's own objects).
        kinds: kind names to draw from; None: every registered kind (:func:`fault_kinds`).
        horizon_steps: points are drawn below this many agent steps.
        duration_s: ``(lo, hi)`` seconds each fault stays.

    Raises ConfigError for a negative rate, a bad range or an unknown kind (listing the known).
    """
    if rate < 0 or not math.isfinite(rate):
        raise ConfigError(f"fault_rate must be a finite number >= 0, got {rate!r}")
    lo, hi = (float(duration_s[0]), float(duration_s[1]))
    if not 0 < lo <= hi:
        raise ConfigError(f"faults.duration_s must be [lo, hi] seconds with 0 < lo <= hi, got {list(duration_s)}")
    if horizon_steps < 1:
        raise ConfigError(f"faults.horizon_steps must be >= 1, got {horizon_steps}")
    names = sorted(set(kinds)) if kinds is not None else fault_kinds()
    instances = {n: get_fault_kind(n) for n in names}  # raises on an unknown name
    rng = random.Random(f"ani-faults:{seed}")
    points = fault_points(rng, rate, horizon_steps)
    schedule: list[FaultSpec] = []
    for point in points:
        order = list(names)
        rng.shuffle(order)
        for name in order:
            drawn = instances[name].draw(rng, scenario, variant)
            if drawn is None:
                continue
            target, params = drawn
            dur = round(rng.uniform(lo, hi), 1)
            schedule.append(FaultSpec(kind=name, at_step=point, duration_s=dur,
                                      target=dict(target), params=dict(params)))
            break
    return schedule
