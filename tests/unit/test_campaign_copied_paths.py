"""Paths in a copied campaign file (issue 26 §1): every path field resolves against the file's
folder, then the shipped data, so a copy of a shipped campaign placed in another folder finds
what the original finds (before: ``scenario: '../scenarios/brownfield-small.yaml' not found``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ani.campaign.spec import load_spec, resolve_path
from ani.errors import CampaignSpecError
from ani.resources import data_path

SHIPPED = sorted(p.name for p in data_path("campaigns").glob("*.yaml"))
PATH_FIELDS = ("scenario_path", "manifest_path", "tasks_paths")


def _paths(spec):
    return ({k: getattr(spec, k) for k in PATH_FIELDS}, [c.blocklist for c in spec.cells])


@pytest.mark.parametrize("name", SHIPPED)
def test_a_copy_of_every_shipped_campaign_in_another_folder_finds_the_same_files(name, tmp_path, monkeypatch):
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    shutil.copyfile(data_path(f"campaigns/{name}"), elsewhere / name)
    monkeypatch.chdir(tmp_path)  # neither the file's folder nor the source tree
    assert _paths(load_spec(elsewhere / name)) == _paths(load_spec(f"campaigns/{name}"))


def test_the_shipped_campaigns_are_the_ones_with_relative_paths():
    assert "level-sweep-llm.yaml" in SHIPPED and "netconfbench-levels.yaml" in SHIPPED


def test_a_file_beside_the_copy_comes_before_the_shipped_one(tmp_path, monkeypatch):
    (tmp_path / "scenarios").mkdir()
    mine = tmp_path / "scenarios" / "brownfield-small.yaml"
    shutil.copyfile(data_path("scenarios/brownfield-small.yaml"), mine)
    (tmp_path / "c").mkdir()
    monkeypatch.chdir(tmp_path / "c")
    assert resolve_path("../scenarios/brownfield-small.yaml", tmp_path / "c", "scenario",
                        beside="campaigns") == mine.resolve()


def test_a_name_climbing_out_of_the_shipped_data_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CampaignSpecError) as exc:
        resolve_path("../../pyproject.toml", tmp_path, "scenario", beside="campaigns")
    assert str(exc.value).startswith("scenario: file '../../pyproject.toml' not found (looked in the current folder")


def test_without_beside_a_relative_name_is_read_as_a_shipped_data_name_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_path("scenarios/brownfield-small.yaml", tmp_path) == data_path("scenarios/brownfield-small.yaml").resolve()
    with pytest.raises(CampaignSpecError):
        resolve_path("../scenarios/brownfield-small.yaml", tmp_path, "--scenario")
