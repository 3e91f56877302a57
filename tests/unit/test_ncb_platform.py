"""Which platform a NetConfBench task is written for (ani.netconfbench.platform)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.netconfbench.platform import PLATFORMS, config_platform, device_platforms, platform_of
from ani.netconfbench.task import load_task, parse_task

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "netconfbench"
ROOT = Path(__file__).resolve().parents[2]

IOS = "!\r\nversion 12.4\r\nservice timestamps debug datetime msec\r\n!\r\nhostname NewYork\r\n"
JUNOS = "version 12.3R12.4;\nsystem {\n    host-name r1;\n}\ninterfaces {\n    ge-0/0/0 {\n    }\n}\n"


@pytest.mark.parametrize(("text", "platform"), [
    ("frr version 8.4.4\nfrr defaults traditional\nhostname r1\n", "frr"),
    ("frr defaults datacenter\n", "frr"),
    ("hostname r1\nservice integrated-vtysh-config\n", "frr"),
    ("hostname r1\ninterface eth0\n ip address 10.0.0.1/24\n", "frr"),  # weak: CIDR addresses
    (IOS, "cisco-ios"),
    ("hostname r1\ninterface Serial0/0\n ip address 192.0.2.1 255.255.255.252\n", "cisco-ios"),  # weak
    ("line vty 0 4\n login\n", "cisco-ios"),
    (JUNOS, "junos"),
    ("set system host-name r1\nset interfaces ge-0/0/0 unit 0\n", "junos"),
    ("hostname r1\n", "unknown"),
    ("", "unknown"),
    # an IOS config with an FRR-looking address line: the strong markers decide
    (IOS + "interface eth0\n ip address 10.0.0.1/24\n", "cisco-ios"),
    # one strong marker of each: undecided
    ("frr defaults traditional\nversion 12.4\n", "unknown"),
])
def test_config_platform(text, platform):
    assert config_platform(text) == platform and platform in PLATFORMS


def _task(configs: dict[str, str]):
    return parse_task({"task_name": "t", "intents": ["x"], "topology": {"nodes": ["a", "b"]},
                       "startup_configs": configs,
                       "testcases": [{"device": "a", "commands": ["show ip route"], "expected_output": "x"}]})


def test_platform_of_a_task():
    assert platform_of(load_task(DATA / "static-backup.json")) == "frr"
    assert platform_of(load_task(DATA / "ios-static.json")) == "cisco-ios"
    assert platform_of(_task({})) == "unknown"
    assert platform_of(_task({"a": "hostname a\n", "b": "frr defaults traditional\n"})) == "frr"
    # a task that is FRR on one router and IOS on the other cannot run here: the other platform wins
    mixed = _task({"a": "frr defaults traditional\n", "b": IOS})
    assert platform_of(mixed) == "cisco-ios"
    assert device_platforms(mixed) == {"a": "frr", "b": "cisco-ios"}


def test_platform_of_is_also_in_the_task_module():
    from ani.netconfbench import task

    assert task.platform_of is platform_of


@pytest.mark.parametrize("path", sorted((ROOT / "intents" / "netconfbench").glob("*.json")),
                         ids=lambda p: p.name)
def test_every_shipped_task_is_for_frr(path):
    assert platform_of(load_task(path)) == "frr"
