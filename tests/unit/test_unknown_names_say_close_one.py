"""Every name a user writes (a level, a fault kind, a service class of a manifest) that no
registry knows is refused in the registry's one shape: the known names, the close one ("did you
mean"), how to get another; one line, exit 2 from the CLI. These were parallel messages that
listed the known names only (issue 28's verification: `ani run --level a11`, a campaign's
`faults.kinds: [link-down]`, a manifest's `service: tenant-firewal`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ani.campaign.spec import load_spec
from ani.cli import app
from ani.errors import CampaignSpecError, GeneratorError, LevelError
from ani.registry import unknown_level
from ani.scenario.generate import load_manifest

ROOT = Path(__file__).resolve().parents[2]

CAMPAIGN = {
    "name": "sweep", "scenario": "scen.yaml", "task": "onboard-site", "variants": 1, "seed": 1,
    "factor": "level", "agent": {"kind": "scripted"}, "budget": {"max_steps": 10, "wall_clock_s": 60},
    "cells": [{"name": "a0", "level": "a0"}, {"name": "a2", "level": "a2"}],
}


def _campaign(tmp_path: Path, **over) -> Path:
    (tmp_path / "scen.yaml").write_text("x: 1\n")
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({**CAMPAIGN, **over}))
    return p


def test_unknown_level_is_the_registry_shape_worded_as_a_level():
    err = unknown_level("a11")
    assert isinstance(err, LevelError)
    # (an installed vendor adapter is listed after the built-ins)
    assert re.match(r"unknown level 'a11'; known: a0, a1, a2, a3r, a3t, a4[^;]*; did you mean 'a1'\?; pip install", str(err))
    assert "did you mean" not in str(unknown_level("zz"))


def test_campaign_cell_level_says_the_close_one(tmp_path):
    p = _campaign(tmp_path, cells=[{"name": "a0", "level": "a0"}, {"name": "a2", "level": "a22"}])
    with pytest.raises(CampaignSpecError, match=r"cells\[1\]\(a2\)\.level: unknown level 'a22'; known: a0, a1.*"
                                                r"; did you mean 'a2'\?"):
        load_spec(p)


def test_campaign_fault_kind_says_the_close_one(tmp_path):
    p = _campaign(tmp_path, faults={"kinds": ["link-down"]})
    with pytest.raises(CampaignSpecError) as exc:
        load_spec(p)
    msg = str(exc.value)
    assert "faults.kinds: unknown fault kind 'link-down'; known: " in msg and "link_down" in msg
    assert "did you mean 'link_down'?" in msg and "entry-point group ani.faults" in msg


def test_manifest_service_class_says_the_close_one(tmp_path):
    data = yaml.safe_load((ROOT / "scenarios" / "default.yaml").read_text())
    data["layers"][1]["service"] = "tenant-firewal"
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(GeneratorError) as exc:
        load_manifest(p)
    msg = str(exc.value)
    assert "service: unknown service class 'tenant-firewal'; known: tenant-site, tenant-firewall" in msg
    assert "did you mean 'tenant-firewall'?" in msg and "\"" not in msg


@pytest.mark.parametrize("argv", [["run", "--level", "a11"], ["doctor", "--level", "a11"]])
def test_cli_level_is_one_line_exit_2_with_the_close_one(argv):
    res = CliRunner().invoke(app, argv, env={"COLUMNS": "400"})
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0].startswith("error: --level")
    assert re.search(r"unknown level 'a11'; known: a0, a1, a2, a3[rt], a3[rt], a4[^;]*; did you mean 'a1'\?", lines[0])
