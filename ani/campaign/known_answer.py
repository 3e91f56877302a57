"""The known answer (issue 25 §3): what each level did with a mistake made on purpose, and
whether the observer saw what it had to.

An agent with a known error profile (``agent: {kind: scripted, mistakes: {...}}``,
:mod:`ani.agents.mistakes`) writes the mistake it made into its run (``AgentRun.mistake``, the
:class:`ani.agents.mistakes.base.Made` dumped). After grading, the campaign's extension
``KnownAnswer`` (:mod:`ani.campaign.extensions`) adds to it, with :func:`annotate`:

    expected_breaks  [invariant name]   get_mistake(kind).expected_breaks(made, the run's baseline
                                        invariants, the initial configurations); None: it could
                                        not be computed (said in a ``harness`` event)
    reached          bool | None        every ``+ <line>`` of the footprint is in the router's final
                                        configuration (the observation's read after grading) and no
                                        ``- <line>`` is (and, for a footprint of left-out lines only,
                                        the rest of the change is there: below); None: not
                                        expressed, no final read (or not of every router of the
                                        footprint), or an empty footprint
    flagged          [invariant name]   the baseline invariants failed at grading that no fault
                                        explains (``fault_damage`` left out): the observer's verdict
    prevented        bool               expressed and ``reached`` is False (refused, rolled back, or
                                        validation failed before the change reached a router)

None of it is shown to the observer or the grader: it is computed after both.

:func:`known_answer` measures a campaign's records (valid runs only) per (row, kind), a row being
a cell (``cell @ stress`` at a swept stress point, as the report's rows): runs, expressed,
prevented, reached; on reached runs the observer's *sensitivity* (expected ⊆ flagged, over the
reached runs expected to break something) and *exactness* (flagged == expected); on runs
without an expressed mistake its *specificity* (damage-free and nothing flagged). Every share
comes with its exact 95% Clopper-Pearson interval (:func:`ani.stats.clopper_pearson`).
:func:`explain_pair` says, for two paired rows, on which variants one was damage-free and the
other not, by mistake kind.

A footprint made only of ``- <line>`` lines the initial configuration lacks too (a partial
application: the lines the mistake left out) holds also in a network the level kept unchanged:
such a mistake counts as reached only when the rest of the mistaken change is in the network
too (:func:`reached`, against the variant's reference end state,
:func:`ani.observer.changes.reference_configs`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from ani.campaign.results import INVALID_LABELS, CheckOutcome, RunRecord
from ani.stats import clopper_pearson, mcnemar_exact

__all__ = ["KindRow", "KnownAnswerTable", "PairKinds", "RowSpecificity", "Share", "annotate", "expected_breaks",
           "explain_pair", "flagged", "known_answer", "made_of", "mistake_of", "reached"]

#: the keys the campaign adds to the agent's ``Made`` (never seen by the observer or grader)
ADDED_KEYS = ("expected_breaks", "reached", "flagged", "prevented")


# --- the record -------------------------------------------------------------------------------


def reached(footprint: dict[str, list[str]], final: dict[str, Any] | None, initial: dict[str, Any] | None = None,
            correct: Callable[[], dict[str, Any] | None] | None = None) -> bool | None:
    """Whether the mistake is in the network: every ``"+ <line>"`` of ``footprint`` (``{router:
    [line]}``) is a line of that router's final configuration (``final``: ``{router:
    DeviceConfig}``) and no ``"- <line>"`` is (:func:`ani.agents.mistakes.base.reached`). None
    when ``final`` is None (not read), a router of the footprint was not read, or it is empty.

    A footprint that says nothing the initial configuration (``initial``) does not already say
    (only ``-`` lines it lacks too: the correct change's lines the mistake left out, as in a
    partial application) holds in a network the level kept unchanged as well: then the rest of
    the mistaken change must be there too, the correct intended configurations (``correct()``,
    ``{router: DeviceConfig}``, called only then; None: unknown, the rule above stands) with the
    footprint applied: some line it adds is in a router's final configuration, or some line it
    removes is gone."""
    if final is None:
        return None
    from ani.agents.mistakes.base import reached as in_network

    got = in_network(footprint, final)
    if not got or initial is None or _says_something(footprint, initial):
        return got
    ref = correct() if correct is not None else None
    return got if ref is None else _rest_reached(footprint, initial, ref, final)


def _lines(cfg: Any) -> set[str]:
    from ani.agents.mistakes.base import config_lines

    return set(config_lines(cfg)) if cfg is not None else set()


def _signed(lines: list[str], sign: str) -> set[str]:
    return {str(ln)[2:] for ln in lines if str(ln)[:1] == sign}


def _says_something(footprint: dict[str, list[str]], initial: dict[str, Any]) -> bool:
    """A ``+`` line the initial configuration lacks, or a ``-`` line it has."""
    for router, lines in footprint.items():
        have = _lines(initial.get(router))
        if _signed(lines, "+") - have or _signed(lines, "-") & have:
            return True
    return False


def _rest_reached(footprint: dict[str, list[str]], initial: dict[str, Any], correct: dict[str, Any],
                  final: dict[str, Any]) -> bool:
    """Some change of the mistaken configurations (``correct`` with ``footprint`` applied) over
    ``initial`` is in ``final`` (routers not read left out)."""
    for router in sorted((set(correct) | set(footprint)) & set(final)):
        init = _lines(initial.get(router))
        fp = footprint.get(router, [])
        mistaken = (_lines(correct.get(router, initial.get(router))) - _signed(fp, "-")) | _signed(fp, "+")
        fin = _lines(final[router])
        if (mistaken - init) & fin or (init - mistaken) - fin:
            return True
    return False


def flagged(invariants: list[CheckOutcome], fault_damage: list[str] | None = None) -> list[str]:
    """The names of the baseline invariants failed at grading, in their order, less those the
    observer put down to a fault (``fault_damage``): what it counted against the run."""
    own = set(fault_damage or ())
    return [i.name for i in invariants if not i.passed and i.name not in own]


def made_of(mistake: dict[str, Any]) -> dict[str, Any]:
    """The agent's part of a record's ``mistake`` (its ``Made`` dump, as the trajectory's
    ``agent_mistake`` event holds it): the keys :data:`ADDED_KEYS` left out."""
    return {k: v for k, v in mistake.items() if k not in ADDED_KEYS}


def expected_breaks(made: dict[str, Any], invariants: list[Any], initial: dict[str, Any] | None) -> list[str]:
    """``get_mistake(kind).expected_breaks(Made, invariants, initial)`` of ``made`` (the agent's
    ``Made`` dump; keys :data:`ADDED_KEYS` ignored): names of the baseline invariants (``Check``)
    it is expected to break. [] when not expressed. Raises ConfigError (unknown kind),
    ValidationError (not a ``Made``) or what the kind raises."""
    from ani.agents.mistakes.base import Made, get_mistake

    m = Made.model_validate(made_of(made))
    if not m.expressed:
        return []
    return [str(n) for n in get_mistake(m.kind).expected_breaks(m, list(invariants), dict(initial or {}))]


def annotate(made: dict[str, Any], *, expected: list[str] | None, final: dict[str, Any] | None,
             invariants: list[CheckOutcome], fault_damage: list[str] | None = None,
             initial: dict[str, Any] | None = None,
             correct: Callable[[], dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """``made`` with :data:`ADDED_KEYS` (module doc): ``expected`` from :func:`expected_breaks`
    (None: not computed), ``final`` the routers' final configurations (None: not read),
    ``invariants`` the graded baseline invariants; ``initial`` and ``correct`` as
    :func:`reached` takes them. ``made`` itself is not changed."""
    expressed = bool(made.get("expressed"))
    got = reached(dict(made.get("footprint") or {}), final, initial, correct) if expressed else None
    return {**made, "expected_breaks": expected, "reached": got,
            "flagged": flagged(invariants, fault_damage), "prevented": expressed and got is False}


def mistake_of(r: RunRecord) -> dict[str, Any] | None:
    """The run's mistake (``RunRecord.mistake`` with a ``kind``), or None (none drawn, or a
    record written before mistakes existed)."""
    m = getattr(r, "mistake", None)
    return m if isinstance(m, dict) and m.get("kind") else None


# --- the measures -----------------------------------------------------------------------------


class Share(BaseModel):
    """``k`` of ``n`` with its exact 95% Clopper-Pearson interval (``lo``, ``hi``; ``(0, 1)`` at
    ``n == 0``) and ``value`` (None at ``n == 0``)."""

    model_config = ConfigDict(frozen=True)

    k: int
    n: int
    lo: float
    hi: float
    value: float | None

    @classmethod
    def of(cls, k: int, n: int) -> Share:
        ci = clopper_pearson(k, n)
        return cls(k=k, n=n, lo=ci.lo, hi=ci.hi, value=k / n if n else None)

    def text(self) -> str:
        """``2/3 [0.09, 0.99]``; ``-`` at ``n == 0``."""
        return "-" if not self.n else f"{self.k}/{self.n} [{self.lo:.2f}, {self.hi:.2f}]"


class KindRow(BaseModel):
    """One (row, mistake kind) of a campaign, over its valid runs carrying that kind.

    Attributes:
        row: the cell (``cell @ stress`` at a swept stress point); level: its level.
        kind: the mistake kind.
        runs: valid runs whose agent drew this kind; expressed: those where the level could
            express it (the rest made the correct change).
        prevented / reached / undetermined: expressed runs whose mistake never reached the
            network / reached it / of which it cannot be said (``reached`` None: no final read,
            or an empty footprint).
        prevented_share / reached_share: of the expressed runs whose outcome is known
            (``prevented + reached``; the undetermined ones left out).
        sensitivity: reached runs expected to break an invariant whose flagged invariants
            include every expected one; exactness: reached runs (expected breaks known) whose
            flagged invariants are exactly the expected ones.
    """

    row: str
    level: str
    kind: str
    runs: int
    expressed: int
    prevented: int
    reached: int
    undetermined: int
    prevented_share: Share
    reached_share: Share
    sensitivity: Share
    exactness: Share


class RowSpecificity(BaseModel):
    """The observer on one row's valid runs without an expressed mistake: ``clean`` of ``runs``
    were damage-free with no invariant flagged."""

    row: str
    level: str
    runs: int
    clean: int
    specificity: Share


class KnownAnswerTable(BaseModel):
    """The known-answer measures of a campaign (:func:`known_answer`).

    Attributes:
        mistake_runs: valid runs whose agent drew a mistake (expressed or not).
        rows: per (row, kind), rows in the report's order, kinds sorted.
        specificity: per row; sensitivity / exactness / overall_specificity: pooled over rows.
    """

    mistake_runs: int
    rows: list[KindRow]
    specificity: list[RowSpecificity]
    sensitivity: Share
    exactness: Share
    overall_specificity: Share

    @property
    def kinds(self) -> list[str]:
        return sorted({r.kind for r in self.rows})


def _row_of(r: RunRecord) -> str:
    from ani.campaign.report import stress_label

    label = stress_label(r.stress)
    return f"{r.cell} @ {label}" if label else r.cell


def _sens(ms: list[dict[str, Any]]) -> tuple[Share, Share]:
    """(sensitivity, exactness) over the reached mistakes ``ms``."""
    known = [m for m in ms if m.get("expected_breaks") is not None]
    expecting = [m for m in known if m["expected_breaks"]]
    hit = sum(1 for m in expecting if set(m["expected_breaks"]) <= set(m.get("flagged") or []))
    exact = sum(1 for m in known if set(m["expected_breaks"]) == set(m.get("flagged") or []))
    return Share.of(hit, len(expecting)), Share.of(exact, len(known))


def _clean(r: RunRecord) -> bool:
    return bool(r.damage_free) and not flagged(r.invariants, r.fault_damage)


def known_answer(records: list[RunRecord], order: list[str] | None = None) -> KnownAnswerTable:
    """The measures of ``records`` (module doc), valid runs only. ``order``: the rows' order
    (the report's row names); rows not in it follow in order of appearance. Rows without a
    mistake run have no :class:`KindRow`; every row with a run without an expressed mistake has
    a :class:`RowSpecificity`."""
    valid = [r for r in records if r.label not in INVALID_LABELS]
    rows = list(dict.fromkeys([*(order or []), *(_row_of(r) for r in valid)]))
    by_row: dict[str, list[RunRecord]] = {name: [] for name in rows}
    for r in valid:
        by_row[_row_of(r)].append(r)
    kinds = sorted({m["kind"] for r in valid if (m := mistake_of(r))})
    out, spec = [], []
    for name in rows:
        runs = by_row[name]
        level = runs[0].level if runs else ""
        for kind in kinds:
            ms = [m for r in runs if (m := mistake_of(r)) and m["kind"] == kind]
            if ms:
                out.append(_kind_row(name, level, kind, ms))
        free = [r for r in runs if not ((m := mistake_of(r)) and m.get("expressed"))]
        if free:
            k = sum(1 for r in free if _clean(r))
            spec.append(RowSpecificity(row=name, level=level, runs=len(free), clean=k, specificity=Share.of(k, len(free))))
    reached_all = [m for r in valid if (m := mistake_of(r)) and m.get("reached") is True]
    sens, exact = _sens(reached_all)
    return KnownAnswerTable(mistake_runs=sum(1 for r in valid if mistake_of(r)), rows=out, specificity=spec,
                       sensitivity=sens, exactness=exact,
                       overall_specificity=Share.of(sum(s.clean for s in spec), sum(s.runs for s in spec)))


def _kind_row(row: str, level: str, kind: str, ms: list[dict[str, Any]]) -> KindRow:
    expressed = [m for m in ms if m.get("expressed")]
    prevented = sum(1 for m in expressed if m.get("prevented") is True)
    hit = [m for m in expressed if m.get("reached") is True]
    sens, exact = _sens(hit)
    return KindRow(row=row, level=level, kind=kind, runs=len(ms), expressed=len(expressed), prevented=prevented,
                   reached=len(hit), undetermined=sum(1 for m in expressed if m.get("reached") is None),
                   prevented_share=Share.of(prevented, prevented + len(hit)),
                   reached_share=Share.of(len(hit), prevented + len(hit)),
                   sensitivity=sens, exactness=exact)


# --- a paired comparison, by mistake kind -----------------------------------------------------


class PairKinds(BaseModel):
    """Two rows' damage-free verdicts on their paired variants (same seed, both valid), by the
    variants' mistake kind.

    Attributes:
        cell / reference: the rows; pairs: paired variants; b: the reference damage-free and
            the cell not; c: the reverse; p: the exact McNemar p of (b, c).
        reference_only / cell_only: ``{kind: {why: pairs}}`` of the b / c pairs, ``why`` being
            what the damage-free side did with the mistake: ``prevented``, ``not expressible``
            (the level could not express it: the correct change), ``reached, no damage``,
            ``undetermined``; kind ``no mistake`` for a variant without one.
    """

    cell: str
    reference: str
    pairs: int
    b: int
    c: int
    p: float
    reference_only: dict[str, dict[str, int]]
    cell_only: dict[str, dict[str, int]]


def _why(m: dict[str, Any] | None) -> str:
    if m is None:
        return "no mistake"
    if not m.get("expressed"):
        return "not expressible"
    if m.get("prevented"):
        return "prevented"
    return "reached, no damage" if m.get("reached") else "undetermined"


def _by_kind(pairs: list[tuple[RunRecord, RunRecord]]) -> dict[str, dict[str, int]]:
    """``{kind: {why: n}}`` of ``(damage-free run, damaged run)`` pairs."""
    counts: dict[str, Counter[str]] = {}
    for good, bad in pairs:
        m = mistake_of(good) or mistake_of(bad)
        kind = m["kind"] if m else "no mistake"
        counts.setdefault(kind, Counter())[_why(mistake_of(good)) if m else "no mistake"] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(counts.items())}


def explain_pair(reference_runs: list[RunRecord], cell_runs: list[RunRecord], *, cell: str,
                 reference: str) -> PairKinds:
    """The discordant damage-free pairs of two rows (their runs; invalid ones left out, paired
    by seed as the report's McNemar comparisons are) by mistake kind (:class:`PairKinds`)."""
    ref = {r.seed: r for r in reference_runs if r.label not in INVALID_LABELS}
    pairs = [(ref[r.seed], r) for r in cell_runs if r.label not in INVALID_LABELS and r.seed in ref]
    b = [(x, y) for x, y in pairs if x.damage_free and not y.damage_free]
    c = [(y, x) for x, y in pairs if not x.damage_free and y.damage_free]
    return PairKinds(cell=cell, reference=reference, pairs=len(pairs), b=len(b), c=len(c),
                     p=mcnemar_exact(len(b), len(c)).p_value, reference_only=_by_kind(b), cell_only=_by_kind(c))
