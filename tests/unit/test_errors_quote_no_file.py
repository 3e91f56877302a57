"""An error never quotes a file's content (issue 23 §1): a file of another kind named where a
platform, known_hosts, inventory, campaign or agent-config file is wanted (``/etc/shadow``) used
to have its lines quoted back, as the unknown keys of a YAML mapping or as asyncssh's parse
error, which reached an agent's tool result. A key is named only when it looks like a name; a
misspelt field is named with the close match. Logic only (the real SSH / NETCONF sessions:
tests/integration/test_inventory_lab.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from ani.errors import AniError, ConfigError
from ani.validation import HIDDEN_KEY, format_validation_error, validate_mapping

#: an /etc/shadow: every line parses as a YAML key (``name:hash:...``)
SHADOW = ("zzroot:$6$SeCrEtHaSh.abc/xyz:20228:0:99999:7:::\nzzdaemon:*:20228:0:99999:7:::\n"
          "zzbin:*:20228:0:99999:7:::\n")
MARKS = ("zzroot", "zzdaemon", "zzbin", "SeCrEtHaSh", "20228")


def no_content(text: str) -> bool:
    return not any(m in text for m in MARKS)


@pytest.fixture
def shadow(tmp_path: Path) -> Path:
    p = tmp_path / "shadow"
    p.write_text(SHADOW)
    return p


def test_a_platform_file_of_another_kind_is_refused_without_a_line_of_it(shadow):
    from ani.adapters.platform import load_platform

    with pytest.raises(ConfigError) as err:
        load_platform(shadow)
    said = str(err.value)
    assert said.startswith(f"{shadow}: invalid platform file: platform: Field required")
    assert said.endswith("3 unknown keys that are not names (not shown: is it a file of another kind?)")
    assert no_content(said)


@pytest.mark.parametrize("loader", ["inventory", "campaign", "agent"])
def test_other_loaders_given_that_file_name_no_line_of_it(shadow, loader):
    with pytest.raises(AniError) as err:
        if loader == "inventory":
            from ani.inventory import load_inventory

            load_inventory(shadow)
        elif loader == "campaign":
            from ani.campaign.spec import load_spec

            load_spec(shadow)
        else:
            from ani.agents.llm_config import LLMConfig
            from ani.validation import load_yaml

            LLMConfig.parse(load_yaml(shadow))
    assert no_content(str(err.value)), str(err.value)
    assert "not names" in str(err.value)


def test_a_known_hosts_file_of_another_kind_is_named_by_line_never_quoted(shadow, tmp_path):
    from ani.ssh_errors import classify_ssh_open, known_hosts_problem

    assert known_hosts_problem(shadow).startswith("line 1 is not a known_hosts entry")
    good = tmp_path / "kh"
    good.write_text("# a comment\n\n[127.0.0.1]:2222 ssh-ed25519 "
                    "AAAAC3NzaC1lZDI1NTE5AAAAIBwqf1RcNSUBSm8ZGlJ+SBrOHLqdp9hXpXlMbdIB1upx\n" + SHADOW)
    assert known_hosts_problem(good).startswith("line 4 is not a known_hosts entry")
    # scrapli's words at A1: the same cause and wording as A2, not retriable
    ep = {"host": "127.0.0.1", "port": 2222, "username": "u", "known_hosts": str(shadow)}
    found = classify_ssh_open(RuntimeError("Transport: ssh2.Transport initKnownHost: failed to read known "
                                           "hosts file"), ep)
    assert (found.cause, found.retriable) == ("host_key_unknown", False)
    assert found.message == f"cannot read the known_hosts file {shadow}: line 1 is not a known_hosts entry " \
                            "(OpenSSH's 'host[,host...] key-type base64-key')"


def test_a2s_known_hosts_reader_says_the_same(shadow):
    from ani.netconf.client import SessionLost, known_host_b64

    with pytest.raises(SessionLost) as err:
        known_host_b64(shadow, "127.0.0.1", 830)
    assert str(err.value).startswith(f"cannot read the known_hosts file {shadow}: line 1 is not a known_hosts entry")
    assert no_content(str(err.value))


class _Cell(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    level: str = "a1"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    testcases: list[int]
    cells: dict[str, _Cell] = {}
    budget: int = 0


def test_a_misspelt_key_is_named_with_its_close_match():
    with pytest.raises(ConfigError) as err:
        validate_mapping(_Doc, {"testcase": [1], "budjet": 3}, source="f.yaml", what="doc")
    said = str(err.value)
    assert "testcase: Extra inputs are not permitted (did you mean 'testcases'?)" in said
    assert "budjet: Extra inputs are not permitted (did you mean 'budget'?)" in said  # optional field: known
    assert "testcases: Field required" in said


def test_a_key_that_is_no_name_stands_hidden_in_a_path_and_a_name_is_kept():
    with pytest.raises(Exception) as err:
        _Doc.model_validate({"testcases": [], "cells": {"c1": {"nme": "x"}, "zzroot:$6$SeCrEt:1::": {}}})
    said = format_validation_error(err.value, unknown="unknown key")
    assert "cells.c1.nme: unknown key (did you mean 'name'?)" in said
    assert f"cells.{HIDDEN_KEY}.name: Field required" in said and no_content(said)


@pytest.mark.parametrize("text, said", [
    ("zzroot:$6$SeCrEt:1: y\nzzroot:$6$SeCrEt:1: z\n", "key <key not shown> is written twice in one mapping (line 1"),
    ("k: 1\nk: 2\n", "key 'k' is written twice in one mapping"),
    ("a: !!python/object:zz.SeCrEt x\n", "could not determine a constructor for the tag <not shown>"),
    ("a: [b\n", "expected ',' or ']', but got '<stream end>'"),
    ('a: "\\q"\n', "found unknown escape character 'q'"),
])
def test_a_yaml_problem_names_a_name_or_a_character_never_a_line(tmp_path, text, said):
    from ani.validation import load_yaml

    p = tmp_path / "f.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_yaml(p)
    assert said in str(err.value) and no_content(str(err.value)) and "SeCrEt" not in str(err.value)
