"""The blocklist ablation only where it inspects something (issue 23 §6): at a2, a3t, a3r and a4 a
call carries no CLI command line, so the ablation used to be accepted there, inspect nothing, and
a report labelled the cell blocklisted. Refused at every entry (campaign spec, ``ani run``,
``create_adapter``, ``ani.connect``, ``ani mcp serve``), offered at a0 / a1 by each of them;
old records of such cells are labelled as inspecting nothing. Logic only (no lab: every refusal
comes before one is looked up); the real servers are tests/integration/test_mcp_adversarial.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.errors import CampaignSpecError, ConfigError
from ani.registry import blocklist_levels, check_blocklist, create_adapter
from ani.testing import FakeLab

ROOT = Path(__file__).resolve().parents[2]
NOT_INSPECTED = ["a2", "a3t", "a3r", "a4"]


def test_the_levels_whose_calls_carry_cli_lines_are_a0_and_a1():
    assert blocklist_levels() == ["a0", "a1"]
    for level in ("a0", "a1"):
        check_blocklist(level)


@pytest.mark.parametrize("level", NOT_INSPECTED)
def test_create_adapter_refuses_the_blocklist_where_it_inspects_nothing(level):
    with pytest.raises(ConfigError, match=rf"level {level}'s tools send no CLI command lines.*it applies at: a0, a1"):
        create_adapter(level, FakeLab(), blocklist=True)


def test_create_adapter_wraps_a1_in_the_blocklist():
    adapter = create_adapter("a1", FakeLab(), blocklist=True)
    assert type(adapter).__name__ == "BlocklistAdapter" and str(adapter.level) == "a1"


def _campaign(tmp_path: Path, cells: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(f"name: c\nscenario: {ROOT / 'scenarios' / 'brownfield-small.yaml'}\ntask: onboard-site\n"
                 f"factor: level\ncells:\n{cells}")
    return p


def test_a_campaign_cell_with_the_blocklist_at_a2_is_refused_naming_the_cell(tmp_path):
    from ani.campaign.spec import load_spec

    path = _campaign(tmp_path, "  - {name: a1b, level: a1, blocklist: true}\n"
                               "  - {name: a2b, level: a2, blocklist: true}\n"
                               "  - {name: a4b, level: a4, blocklist: true}\n")
    with pytest.raises(CampaignSpecError) as err:
        load_spec(path)
    said = str(err.value)
    assert "cells[1](a2b).blocklist: level a2's tools send no CLI command lines" in said
    assert "cells[2](a4b).blocklist: level a4's" in said and "cells[0]" not in said


def test_a_campaign_level_inherited_by_a_blocklisted_cell_is_checked(tmp_path):
    from ani.campaign.spec import load_spec

    p = tmp_path / "c.yaml"
    p.write_text(f"name: c\nscenario: {ROOT / 'scenarios' / 'brownfield-small.yaml'}\ntask: onboard-site\n"
                 "level: a3r\nfactor: blocklist\ncells:\n  - {name: plain}\n  - {name: b, blocklist: true}\n")
    with pytest.raises(CampaignSpecError, match=r"cells\[1\]\(b\)\.blocklist: level a3r's"):
        load_spec(p)


def test_ani_run_blocklist_at_a3t_is_exit_2_naming_the_option():
    from ani.cli import app

    res = CliRunner().invoke(app, ["run", "--level", "a3t", "--blocklist"], env={"COLUMNS": "300"})
    assert res.exit_code == 2
    assert res.stderr.strip().startswith("error: --blocklist: level a3t's tools send no CLI command lines")


def test_ani_connect_refuses_the_blocklist_at_a2_before_looking_for_the_lab():
    import ani

    with pytest.raises(ConfigError, match="level a2's tools send no CLI command lines"):
        ani.connect("nosuchlab", "a2", blocklist=True)  # no such lab: LabNotFound if it looked


@pytest.mark.parametrize("where", [["--lab", "nosuchlab"], ["--inventory", "/nonexistent/inv.yaml"]])
def test_ani_mcp_serve_blocklist_at_a2_is_exit_2_before_the_lab_or_inventory(where):
    res = subprocess.run([sys.executable, "-m", "ani.cli", "mcp", "serve", *where, "--level", "a2", "--blocklist"],
                         cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: level a2's tools send no CLI command lines"), res.stderr
    assert res.stdout == ""


def test_a_report_of_an_old_record_says_the_blocklist_inspected_nothing():
    from ani.campaign.report import _blk

    assert _blk(True, "a2") == "none (inspects nothing at a2)"
    assert _blk("/x/my-rules.yaml", "a4") == "none (inspects nothing at a4)"
    assert (_blk(True, "a1"), _blk("/x/my-rules.yaml", "a0"), _blk(False, "a2")) == ("default", "my-rules.yaml", "-")
