"""``ani tasks harvest``: a results folder's validated runs become new solutions of their tasks
(NetConfBench draft §3.2 step 7; the rule is :func:`ani.netconfbench.harvest.harvest_records`).

    decisions = harvest("results/ncb-levels")                 # the task files updated in place
    decisions = harvest("results/ncb-levels", out="harvested")  # or copies written to out/

Here, not in ``ani.netconfbench``, because it reads run records (:mod:`ani.campaign.results`),
a layer above the task files (docs/architecture.md, "Layers"); the command joins ``ani tasks``
(:data:`ani.netconfbench.cli.app`) when ``ani.cli`` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ani.campaign.results import read_results
from ani.errors import AniError
from ani.netconfbench.cli import _fail, app, console
from ani.netconfbench.harvest import HARVEST_F1_THRESHOLD, HarvestDecision, harvest_records

__all__ = ["harvest"]


def harvest(results_dir: str | Path, out: str | Path | None = None,
            threshold: float = HARVEST_F1_THRESHOLD) -> list[HarvestDecision]:
    """Harvest the runs of a results folder: its ``runs.jsonl`` (``ani campaign run``), else
    its ``run.json`` (``ani run --out``); see :func:`ani.netconfbench.harvest.harvest_records`.
    Raises ConfigError if the folder has neither, or its ``run.json`` is not a run record."""
    return harvest_records(read_results(results_dir), out, threshold)


@app.command("harvest")
def harvest_cmd(
    results: Annotated[Path, typer.Argument(help="a results folder (runs.jsonl) of ani campaign run / ani run")],
    out: Annotated[Path | None, typer.Option("--out", help="write the updated task files here "
                                             "(default: update the task files in place)")] = None,
    threshold: Annotated[float, typer.Option("--threshold", min=0.0, max=1.0, help="harvest a run when its "
                                             "command F1 against every known solution is below this")] = HARVEST_F1_THRESHOLD,
) -> None:
    """Add validated runs unlike every known solution to their tasks' ground_truth_configs."""
    try:
        decisions = harvest(results, out, threshold)
    except AniError as exc:
        raise _fail(exc) from None
    for d in decisions:
        console.print(escape(d.line()))
    n = sum(1 for d in decisions if d.harvested)
    console.print(f"{n} solution(s) harvested from {len(decisions)} validated run(s)")
