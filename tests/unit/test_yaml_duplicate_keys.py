"""A key written twice in a mapping of any project file is an error naming the key and both lines.

YAML parsers keep the last value silently: a router written twice in a topology, or a cell key
repeated in a campaign, would lose the first one without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.errors import CampaignSpecError, ConfigError, TopologyError
from ani.validation import load_yaml


def test_duplicate_key_is_named_with_both_lines(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text("name: x\nrouters:\n  r1: {daemons: [bgpd]}\n  r1: {daemons: [ospfd]}\n")
    with pytest.raises(ConfigError) as exc:
        load_yaml(p)
    msg = str(exc.value)
    assert str(p) in msg and "'r1'" in msg and "line 3" in msg and "line 4" in msg
    assert "\n" not in msg


def test_topology_and_campaign_files_refuse_duplicate_keys(tmp_path: Path) -> None:
    from ani.campaign.spec import load_spec
    from ani.lab.topology import load_topology

    t = tmp_path / "topo.yaml"
    t.write_text("name: x\nrouters:\n  r1: {}\nname: y\n")
    with pytest.raises(TopologyError, match="'name'"):
        load_topology(t)
    c = tmp_path / "camp.yaml"
    c.write_text("name: c\nscenario: s.yaml\ntask: onboard-site\ncells:\n- {name: a0, level: a0, level: a1}\n")
    with pytest.raises(CampaignSpecError, match="'level'"):
        load_spec(c)


def test_merge_keys_and_equal_keys_in_different_mappings_are_fine(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nthird: {x: 1}\n")
    assert load_yaml(p) == {"base": {"x": 1, "y": 2}, "other": {"x": 1, "y": 3}, "third": {"x": 1}}
