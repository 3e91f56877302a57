"""The known-answer section of the campaign report (issue 25 §3), for ``summary.md``
(:func:`known_answer_markdown`) and ``report.html`` (:func:`known_answer_context`); shown only
when the campaign has runs whose agent drew a mistake (:mod:`ani.campaign.known_answer`).

It holds: per row (cell, or cell @ stress point) and mistake kind, the runs, how many the level
could express, prevented, let reach the network, with the shares' exact 95% intervals and the
observer's sensitivity and exactness on the reached runs; the observer's specificity per row on
the runs without an expressed mistake; pooled sensitivity, exactness and specificity; and, for
each of the report's paired comparisons whose damage-free verdicts differ on some variant
(discordant pairs), a line saying by mistake kind which variants one row kept damage-free and
the other did not, and what the damage-free row did with the mistake. :func:`mistake_line`:
one run's mistake in a line, for ``ani run``.
"""

from __future__ import annotations

from typing import Any

from ani.campaign.known_answer import KindRow, KnownAnswerTable, PairKinds, Share, explain_pair, known_answer

__all__ = ["COLUMNS", "SPEC_COLUMNS", "known_answer_context", "known_answer_markdown", "mistake_line",
           "pair_explanations", "pair_line", "section"]

#: the columns of the known-answer table (summary.md and report.html)
COLUMNS = ("cell", "level", "mistake kind", "runs", "expressed", "prevented", "reached", "undetermined",
           "prevented share [CP 95%]", "reached share [CP 95%]", "observer sensitivity [CP 95%]",
           "observer exact [CP 95%]")
#: the columns of the specificity table
SPEC_COLUMNS = ("cell", "level", "runs without a mistake", "clean", "specificity [CP 95%]")
#: what the table says (summary.md and report.html)
NOTE = ("An agent with a known error profile drew, per variant, whether and which mistake to make "
        "(the same at every level). *Expressed*: the level could take the mistake (else the agent made "
        "the correct change); *prevented*: expressed, and its footprint is not in the routers' final "
        "configurations (refused, rolled back, validation failed first); *reached*: it is; "
        "*undetermined*: the final configurations were not read, or the footprint is empty (a mistake that "
        "leaves the configuration as the correct change does). Shares are of the expressed runs whose outcome "
        "is known (prevented + reached). "
        "*Sensitivity*: reached runs expected to break an invariant whose every expected invariant the "
        "observer flagged; *exact*: reached runs where it flagged exactly the expected ones; "
        "*specificity*: runs without an expressed mistake that are damage-free with nothing flagged. "
        "Intervals: exact Clopper-Pearson 95%. See docs/campaigns.md, \"Known answer\".")


def section(s: Any) -> KnownAnswerTable | None:
    """The measures of the summary ``s`` (its rows' order), or None when no valid run drew a
    mistake (the section is left out)."""
    ka = known_answer(list(s.records), [c.name for c in s.cells])
    return ka if ka.mistake_runs else None


def pair_explanations(s: Any) -> list[PairKinds]:
    """For each paired comparison of ``s`` with a discordant damage-free pair, its pairs by
    mistake kind (:func:`ani.campaign.known_answer.explain_pair`)."""
    cells = {c.name: c for c in s.cells}
    out = []
    for p in s.paired:
        if not (p.damage_free.b or p.damage_free.c) or p.cell not in cells or p.reference not in cells:
            continue
        out.append(explain_pair(cells[p.reference].runs, cells[p.cell].runs, cell=p.cell, reference=p.reference))
    return out


def _kinds_text(by_kind: dict[str, dict[str, int]]) -> str:
    """``near-miss-object 3 (prevented 2, not expressible 1); no mistake 1``."""
    return "; ".join(f"{kind} {sum(why.values())}" + ("" if kind == "no mistake" else
                     f" ({', '.join(f'{w} {n}' for w, n in why.items())})") for kind, why in by_kind.items())


def pair_line(pk: PairKinds, code: str = "`") -> str:
    """One comparison in words: ``a3t vs a0 (6 paired variants; damage-free b = 0, c = 6, exact
    McNemar p = 0.0312): a3t damage-free where a0 was not on 6: near-miss-object 6 (prevented 6)``;
    names quoted with ``code`` (Markdown's backtick, or '' for HTML)."""
    def q(name: str) -> str:
        return f"{code}{name}{code}"

    head = (f"{q(pk.cell)} vs {q(pk.reference)} ({pk.pairs} paired variant{'' if pk.pairs == 1 else 's'}; damage-free b = {pk.b}, "
            f"c = {pk.c}, exact McNemar p = {pk.p:.3g})")
    parts = []
    if pk.b:
        parts.append(f"{q(pk.reference)} damage-free where {q(pk.cell)} was not on {pk.b}: "
                     + _kinds_text(pk.reference_only))
    if pk.c:
        parts.append(f"{q(pk.cell)} damage-free where {q(pk.reference)} was not on {pk.c}: "
                     + _kinds_text(pk.cell_only))
    return head + ": " + "; and ".join(parts)


def _share(sh: Share, expressed: int | None = None) -> str:
    if expressed == 0:
        return "- (not expressible)"
    return sh.text()


def _row(r: KindRow) -> list[str]:
    return [r.row, r.level, r.kind, str(r.runs), str(r.expressed), str(r.prevented), str(r.reached),
            str(r.undetermined), _share(r.prevented_share, r.expressed), _share(r.reached_share, r.expressed),
            r.sensitivity.text(), r.exactness.text()]


def pooled_lines(ka: KnownAnswerTable) -> list[str]:
    """The observer's pooled sensitivity, exactness and specificity, one sentence each."""
    return [f"observer sensitivity (reached runs expected to break an invariant, every expected one "
            f"flagged): {ka.sensitivity.text()}",
            f"observer exactness (reached runs, flagged exactly the expected invariants): {ka.exactness.text()}",
            f"observer specificity (runs without an expressed mistake, damage-free and nothing flagged): "
            f"{ka.overall_specificity.text()}"]


def known_answer_markdown(s: Any) -> list[str]:
    """``## Known answer`` of summary.md (module doc); [] without mistake runs."""
    ka = section(s)
    if ka is None:
        return []
    lines = ["", "## Known answer: prevention by level and mistake kind, the observer's sensitivity", "",
             NOTE, "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_row(r)) + " |" for r in ka.rows]
    lines += ["", *(f"- {x}" for x in pooled_lines(ka)), "",
              "| " + " | ".join(SPEC_COLUMNS) + " |", "|" + "---|" * len(SPEC_COLUMNS)]
    lines += [f"| {x.row} | {x.level} | {x.runs} | {x.clean} | {x.specificity.text()} |" for x in ka.specificity]
    explained = pair_explanations(s)
    if explained:
        lines += ["", "Why the damage-free rates differ, by mistake kind (paired variants):", ""]
        lines += [f"- {pair_line(pk)}" for pk in explained]
    return lines


def mistake_line(rec: Any) -> str | None:
    """``near-miss-object: reached the network; expected to break: a, b; flagged: a, b`` for a run
    whose agent drew a mistake (``ani run``'s output), else None."""
    from ani.campaign.known_answer import mistake_of

    m = mistake_of(rec)
    if m is None:
        return None
    if not m.get("expressed"):
        return f"{m['kind']}: not expressible at this level (the correct change was made)"
    what = {True: "reached the network", False: "prevented"}.get(m.get("reached"), "undetermined")
    out = f"{m['kind']}: {what}"
    if "expected_breaks" in m:
        exp = m["expected_breaks"]
        out += "; expected to break: " + ("unknown" if exp is None else ", ".join(exp) or "nothing")
        out += "; flagged: " + (", ".join(m.get("flagged") or []) or "nothing")
    return out


def known_answer_context(s: Any) -> dict[str, Any] | None:
    """What report.html's known-answer section shows (tables as rows of strings), or None
    without mistake runs."""
    ka = section(s)
    if ka is None:
        return None
    return {"columns": COLUMNS, "rows": [_row(r) for r in ka.rows], "note": NOTE.replace("*", ""),
            "pooled": pooled_lines(ka), "spec_columns": SPEC_COLUMNS,
            "specificity": [[x.row, x.level, str(x.runs), str(x.clean), x.specificity.text()] for x in ka.specificity],
            "pairs": [pair_line(pk, "") for pk in pair_explanations(s)]}
