"""Each of the 15 shipped instances of the 3 parameterized templates
(``intents/netconfbench/templates/instances/``) is its template rendered for its seed, byte for
byte, and passes NetConfArena's validation on real FRR (:func:`ani.netconfbench.lab.validate_task`:
a fresh lab, the testcases at the start, the expert solution applied out of band on that lab,
which the testcases only read, every testcase passing). The shipped templates are written so that *every* testcase
fails at the start (stronger than validate_task's rule of at least one): a template whose
testcase already holds before the solution would grade nothing for some seeds."""

from __future__ import annotations

import secrets
from functools import partial
from pathlib import Path

import pytest
from side_by_side import outcome, side_by_side

from ani.lab.lab import Lab
from ani.netconfbench.lab import validate_task
from ani.netconfbench.task import load_task
from ani.netconfbench.templates import load_template, render

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
TEMPLATES = ROOT / "intents" / "netconfbench" / "templates"
INSTANCES = sorted((TEMPLATES / "instances").glob("*.json"))


def test_fifteen_instances_of_three_templates():
    assert len(sorted(TEMPLATES.glob("*.yaml"))) == 3
    assert len(INSTANCES) == 15


@pytest.fixture(scope="module")
def validated(request):  # noqa: ANN001
    """``{instance file: (its validate_task report, the ids of the labs it made)}``, or the
    exception its validation raised in place of the report; the instances validated three at a
    time (issue 28 §4: each holds two labs one after the other for about 25 s, mostly waiting on
    FRR; one after the other they took almost five minutes of a worker). Labs have ids of this
    module (``nct`` + 6 hex digits) and neither NETCONF nor SSH server (validation reads the
    routers with vtysh only); each is taken down by validate_task, any left up is downed here.
    Only the instances whose test is selected (``-k``)."""
    from conftest import _require_lab_host

    _require_lab_host()
    made: list[Lab] = []

    def one(path: Path):  # noqa: ANN202
        labs: list[str] = []

        def make_lab(topology):  # noqa: ANN001, ANN202 - a Lab with an id of this test's own
            lab = Lab(topology, lab_id="nct" + secrets.token_hex(3), netconf=False, ssh=False)
            labs.append(lab.id)
            made.append(lab)
            return lab

        return validate_task(load_task(path), path, make_lab=make_lab), labs

    try:
        selected = {item.name for item in request.session.items}
        todo = [p for p in INSTANCES if f"test_instance_validates_on_a_real_lab[{p.stem}]" in selected]
        yield side_by_side({p: partial(one, p) for p in todo})
    finally:
        for lab in made:
            lab.down()


@pytest.mark.timeout(1200)  # the module's instances, three at a time, in the first test's setup
@pytest.mark.parametrize("path", INSTANCES, ids=lambda p: p.stem)
def test_instance_validates_on_a_real_lab(path: Path, validated) -> None:  # noqa: ANN001
    task = load_task(path)
    origin = (task.model_extra or {})["template_instance"]
    assert render(load_template(TEMPLATES / origin["template"]), origin["seed"]) == path.read_text(encoding="utf-8")

    report, labs = outcome(validated, path)
    assert report.ok, report.problems
    assert report.passing_at_start == [], report.initial
    assert [s.solution_id for s in report.solutions] == ["expert-0001"]
    assert all(r["status"] == "pass" for r in report.solutions[0].results)
    assert len(labs) == 1  # the start's lab, which its testcases only read, carries the one solution; taken down
    assert not any(lab["id"] in labs for lab in Lab.list_labs())
