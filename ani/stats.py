"""Interval estimates for proportions and the exact McNemar test (scipy, no home-made distributions).

The target regime of a safety benchmark is a damage probability near zero, so
proportions are reported with intervals that stay valid at 0/n and n/n
(Wilson, Clopper-Pearson), and paired cells are compared with an exact test on
discordant pairs (McNemar), the paired difference of their rates with Newcombe's (1998)
method 10 interval, and Holm's correction across the comparisons of one report. See
``docs/campaigns.md``. Pure arithmetic, below every package (docs/architecture.md, "Layers"):
campaigns and NetConfBench's per-cell scores both use it; ``ani.campaign.stats`` is the same module.

    >>> wilson(0, 20)[0]
    0.0
    >>> mcnemar_exact(0, 5).p_value
    0.0625
    >>> d = newcombe_paired(36, 12, 2, 0)
    >>> round(d.diff, 4), round(d.lo, 4), round(d.hi, 4)
    (0.2, 0.0569, 0.3404)
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


__all__ = [
    "Interval",
    "McNemarResult",
    "PairedDifference",
    "holm",
    "newcombe_paired",
    "wilson",
    "clopper_pearson",
    "interval",
    "mcnemar_exact",
    "rule_of_three",
    "runs_for_bound",
]


class Interval(tuple):
    """A ``(lo, hi)`` tuple of floats in [0, 1] with an optional ``note``.

    Behaves as a plain 2-tuple (unpacking, indexing, equality), so callers can
    write ``lo, hi = wilson(k, n)``; ``note`` explains degenerate inputs
    (``n == 0``), else it is ``""``.
    """

    note: str

    def __new__(cls, lo: float, hi: float, note: str = "") -> Interval:
        obj = super().__new__(cls, (float(lo), float(hi)))
        obj.note = note
        return obj

    @property
    def lo(self) -> float:
        return self[0]

    @property
    def hi(self) -> float:
        return self[1]


@dataclass(frozen=True)
class McNemarResult:
    """Exact (binomial) McNemar test on discordant pairs.

    Attributes:
        b: pairs where the reference cell succeeded and the other failed.
        c: pairs where the reference cell failed and the other succeeded.
        p_value: two-sided exact p-value in [0, 1].
        note: why the test is degenerate (``"no discordant pairs"``), else ``""``.
    """

    b: int
    c: int
    p_value: float
    note: str = ""


def _binomtest(k: int, n: int, p: float = 0.5, alternative: str = "two-sided") -> Any:
    """``scipy.stats.binomtest(k, n, p, alternative)`` (its ``BinomTestResult``), imported on
    first use: loading ``scipy.stats`` costs about 1.1 s of CPU, and every campaign run imports
    this module (its known answer) without computing an interval; only the reports do."""
    from scipy.stats import binomtest

    return binomtest(k, n, p, alternative=alternative)


def _check(k: int, n: int, conf: float) -> None:
    if isinstance(k, bool) or isinstance(n, bool) or int(k) != k or int(n) != n:
        raise ValueError(f"k and n must be integers, got k={k!r}, n={n!r}")
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")


def _ci(k: int, n: int, conf: float, method: str) -> Interval:
    _check(k, n, conf)
    if n == 0:
        return Interval(0.0, 1.0, "n = 0: no valid runs, the interval is uninformative")
    ci = _binomtest(int(k), int(n)).proportion_ci(confidence_level=conf, method=method)
    lo = max(0.0, min(1.0, float(ci.low)))
    hi = max(0.0, min(1.0, float(ci.high)))
    # Clamp the boundary cases exactly: 0 successes cannot have a positive lower
    # bound, all successes cannot have an upper bound below 1.
    if k == 0:
        lo = 0.0
    if k == n:
        hi = 1.0
    return Interval(lo, hi)


def wilson(k: int, n: int, conf: float = 0.95) -> Interval:
    """Wilson score interval for ``k`` successes out of ``n`` trials.

    Args:
        k: successes, ``0 <= k <= n``.
        n: trials; ``n == 0`` gives ``(0.0, 1.0)`` with a note (no crash).
        conf: two-sided confidence level in (0, 1).

    Returns:
        ``(lo, hi)`` as an :class:`Interval`; ``lo`` is exactly 0.0 when ``k == 0``
        and ``hi`` exactly 1.0 when ``k == n``.

    Raises:
        ValueError: ``k``/``n`` are not integers with ``0 <= k <= n``, or ``conf`` is out of range.
    """
    return _ci(k, n, conf, "wilson")


def clopper_pearson(k: int, n: int, conf: float = 0.95) -> Interval:
    """Clopper-Pearson ("exact") interval for ``k`` successes out of ``n``.

    Same arguments, return value and errors as :func:`wilson`. Conservative:
    coverage is at least ``conf`` for every true proportion.
    """
    return _ci(k, n, conf, "exact")


def interval(k: int, n: int, method: str = "wilson", conf: float = 0.95) -> Interval:
    """Dispatch by name: ``method`` is ``"wilson"`` or ``"cp"``/``"clopper-pearson"``/``"exact"``."""
    m = method.lower()
    if m == "wilson":
        return wilson(k, n, conf)
    if m in ("cp", "clopper-pearson", "clopper_pearson", "exact"):
        return clopper_pearson(k, n, conf)
    raise ValueError(f"unknown interval method {method!r} (wilson, cp)")


def rule_of_three(n: int) -> float | None:
    """Approximate 95% upper bound ``3/n`` on a proportion after 0 events in ``n`` trials.

    Returns None for ``n == 0``. The bound is capped at 1.0.
    """
    if n <= 0:
        return None
    return min(1.0, 3.0 / n)


def runs_for_bound(bound: float) -> int:
    """The runs that bound a proportion below ``bound`` by the rule of three when none of them
    shows the event: ``ceil(3 / bound)`` (``0.05`` -> 60, ``0.1`` -> 30, ``0.01`` -> 300).

    Raises:
        ValueError: ``bound`` is not a number in (0, 1).
    """
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0.0 < bound < 1.0:
        raise ValueError(f"bound must be a number in (0, 1), got {bound!r}")
    # 3 / 0.1 is 30.000000000000004 in binary floating point: round before the ceiling
    return max(1, math.ceil(round(3.0 / bound, 9)))


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Two-sided exact McNemar test: ``binomtest(b, b + c, 0.5)`` on the discordant pairs.

    Args:
        b: discordant pairs of one direction (reference yes, other no), ``>= 0``.
        c: discordant pairs of the other direction, ``>= 0``.

    Returns:
        :class:`McNemarResult`; with ``b == c == 0`` the p-value is 1.0 and the
        note says "no discordant pairs" (the cells cannot be told apart).

    Raises:
        ValueError: a count is negative or not an integer.
    """
    for name, v in (("b", b), ("c", c)):
        if isinstance(v, bool) or int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    b, c = int(b), int(c)
    if b + c == 0:
        return McNemarResult(b, c, 1.0, "no discordant pairs")
    p = float(_binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemarResult(b, c, min(1.0, p))


#: the name of the paired-difference interval, as the reports print it
PAIRED_METHOD = "Newcombe (1998) method 10"
#: its source, as the reports and docs cite it
PAIRED_SOURCE = ("R. G. Newcombe, Improved confidence intervals for the difference between binomial "
                 "proportions based on paired data, Statistics in Medicine 17:2635-2650 (1998), method 10")


@dataclass(frozen=True)
class PairedDifference:
    """The difference ``p1 - p2`` of two paired proportions with its interval.

    Attributes:
        n: pairs.
        p1: the first member's rate, ``(e + f) / n`` (None: no pairs).
        p2: the second member's rate, ``(e + g) / n`` (None: no pairs).
        diff: ``p1 - p2 = (f - g) / n`` in [-1, 1] (None: no pairs).
        lo, hi: the interval's limits in [-1, 1] (``-1, 1`` without pairs).
        note: why the interval is uninformative (``"no pairs"``), else ``""``.
    """

    n: int
    p1: float | None
    p2: float | None
    diff: float | None
    lo: float
    hi: float
    note: str = ""


def _phi(e: int, f: int, g: int, h: int) -> float:
    """Newcombe's correlation estimate: ``C / sqrt(A)`` with ``A`` the product of the four
    margins, ``B = e h - f g`` and ``C = B - n/2`` if ``B > n/2``, ``0`` if ``0 <= B <= n/2``,
    ``B`` if ``B < 0``; 0 when a margin is empty (A = 0)."""
    n = e + f + g + h
    a = (e + f) * (g + h) * (e + g) * (f + h)
    if a == 0:
        return 0.0
    b = e * h - f * g
    c = b - n / 2 if b > n / 2 else (b if b < 0 else 0.0)
    return c / math.sqrt(a)


def newcombe_paired(e: int, f: int, g: int, h: int, conf: float = 0.95) -> PairedDifference:
    """Newcombe's (1998) method 10 interval for the difference of two paired proportions.

    Of ``n = e + f + g + h`` pairs: ``e`` both yes, ``f`` the first yes and the second no, ``g``
    the first no and the second yes, ``h`` both no. The difference is ``p1 - p2 = (f - g) / n``;
    its limits combine the Wilson score intervals ``(l1, u1)``, ``(l2, u2)`` of the two margins
    (:func:`wilson`, scipy) with the correlation correction ``phi`` (:func:`_phi`)::

        lo = d - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
        hi = d + sqrt((p2 - l2)^2 - 2 phi (p2 - l2)(u1 - p1) + (u1 - p1)^2)

    A hybrid score interval: it stays inside [-1, 1] and keeps its coverage near 0 and 1 where
    the Wald interval collapses (no discordant pairs: Wald gives a zero-width interval). Source:
    :data:`PAIRED_SOURCE`; the unit tests reproduce the paper's Table III to four decimals.

    Args:
        e, f, g, h: non-negative integer counts.
        conf: two-sided confidence level in (0, 1).

    Returns:
        :class:`PairedDifference`; with no pairs ``diff`` is None and the interval ``(-1, 1)``.

    Raises:
        ValueError: a count is negative or not an integer, or ``conf`` is out of range.
    """
    for name, v in (("e", e), ("f", f), ("g", g), ("h", h)):
        if isinstance(v, bool) or int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")
    e, f, g, h = int(e), int(f), int(g), int(h)
    n = e + f + g + h
    if n == 0:
        return PairedDifference(0, None, None, None, -1.0, 1.0, "no pairs")
    p1, p2 = (e + f) / n, (e + g) / n
    l1, u1 = wilson(e + f, n, conf)
    l2, u2 = wilson(e + g, n, conf)
    phi = _phi(e, f, g, h)
    d = p1 - p2
    lo = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = d + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return PairedDifference(n, p1, p2, d, max(-1.0, lo), min(1.0, hi))


def holm(pvalues: list[float]) -> list[float]:
    """Holm's (1979) step-down adjustment of ``pvalues`` (one family), in their order.

    The i-th smallest of m p-values becomes ``max over j <= i of min(1, (m - j + 1) p_(j))``:
    it controls the family-wise error rate at any level without assuming independence.
    Source: S. Holm, A simple sequentially rejective multiple test procedure, Scandinavian
    Journal of Statistics 6:65-70 (1979).

    Raises:
        ValueError: a p-value is not a number in [0, 1].
    """
    for p in pvalues:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must be numbers in [0, 1], got {p!r}")
    m = len(pvalues)
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: pvalues[k])):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out
