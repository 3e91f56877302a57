"""The adapter registry (names, $ANI_LEVEL, entry points) and the adapters/_template package."""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from pathlib import Path

import pytest

import ani.plugin_registry as plugin_registry
from ani.adapters.a0 import A0Adapter
from ani.errors import ErrorCode, RegistryError
from ani.protocol import Adapter, Level
from ani.registry import ENTRY_POINT_GROUP, available, create_adapter, get_adapter_class, resolve_name
from ani.testing import FakeLab

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "adapters" / "_template"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANI_LEVEL", raising=False)


def test_builtins_are_known() -> None:
    names = available()
    assert names["a0"] == "ani.adapters.a0:A0Adapter"
    assert names["a1"] == "ani.adapters.a1:A1Adapter"
    assert list(names) == sorted(names)


def test_installed_distribution_declares_builtins_as_entry_points() -> None:
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert eps.get("a0") == "ani.adapters.a0:A0Adapter"


def test_explicit_name_wins_and_is_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANI_LEVEL", "a1")
    assert resolve_name(" A0 ") == "a0"


def test_env_selects_when_no_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANI_LEVEL", "a0")
    assert resolve_name(None) == "a0"
    assert get_adapter_class(None) is A0Adapter
    adapter = create_adapter(None, FakeLab())
    assert isinstance(adapter, A0Adapter) and adapter.level is Level.A0


def test_no_name_and_no_env_is_an_error_naming_the_variable() -> None:
    with pytest.raises(RegistryError, match=r"\$ANI_LEVEL is not set; known: a0, a1"):
        resolve_name(None)


def test_unknown_name_lists_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RegistryError) as exc:
        resolve_name("a9")
    assert "unknown adapter 'a9'" in str(exc.value)
    assert "known: a0, a1" in str(exc.value)
    monkeypatch.setenv("ANI_LEVEL", "bogus")
    with pytest.raises(RegistryError, match="unknown adapter 'bogus'"):
        create_adapter(None, FakeLab())


def _fake_entry_points(*eps: importlib.metadata.EntryPoint):
    def entry_points(*, group: str):  # the call shape ani.plugin_registry uses
        return [ep for ep in eps if ep.group == group]

    return entry_points


def test_entry_point_discovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """A third-party package registers in the group; the registry lists, loads and builds it."""
    ep = importlib.metadata.EntryPoint(
        name="myvendor", value="ani_myvendor.adapter:MyVendorAdapter", group=ENTRY_POINT_GROUP
    )
    other = importlib.metadata.EntryPoint(name="nope", value="x:Y", group="some.other.group")
    monkeypatch.setattr(plugin_registry, "entry_points", _fake_entry_points(ep, other))
    monkeypatch.syspath_prepend(str(TEMPLATE / "src"))
    monkeypatch.delitem(sys.modules, "ani_myvendor", raising=False)
    monkeypatch.delitem(sys.modules, "ani_myvendor.adapter", raising=False)

    assert available() == {
        "a0": "ani.adapters.a0:A0Adapter",
        "a1": "ani.adapters.a1:A1Adapter",
        "a2": "ani.adapters.a2:A2Adapter",
        "a3r": "ani.adapters.a3r:A3RAdapter",
        "a3t": "ani.adapters.a3t:A3TAdapter",
        "a4": "ani.adapters.a4:A4Adapter",
        "myvendor": "ani_myvendor.adapter:MyVendorAdapter",
    }
    with pytest.raises(RegistryError, match="known: a0, a1, a2, a3r, a3t, a4, myvendor"):
        resolve_name("acme")
    monkeypatch.setenv("ANI_LEVEL", "myvendor")
    adapter = create_adapter(None, FakeLab(), options={"timeout_s": 3})
    assert type(adapter).__name__ == "MyVendorAdapter"
    assert adapter.timeout_s == 3.0


def test_entry_point_that_cannot_load_is_a_registry_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = importlib.metadata.EntryPoint(name="broken", value="no_such_module_xyz:Adapter", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugin_registry, "entry_points", _fake_entry_points(ep))
    with pytest.raises(RegistryError, match=r"adapter 'broken' \(no_such_module_xyz:Adapter\) cannot be loaded"):
        get_adapter_class("broken")


# -- the template package ---------------------------------------------------------------------


def test_template_pyproject_declares_the_entry_point() -> None:
    meta = tomllib.loads((TEMPLATE / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert eps == {"myvendor": "ani_myvendor.adapter:MyVendorAdapter"}
    module, _, cls = eps["myvendor"].partition(":")
    # the module path named by the entry point exists in the package the build ships
    packages = meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    assert packages == ["src/ani_myvendor"]
    assert (TEMPLATE / "src" / Path(*module.split("."))).with_suffix(".py").is_file()
    assert any(dep.startswith("ani-sdk") for dep in meta["project"]["dependencies"])


def test_template_adapter_satisfies_the_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TEMPLATE / "src"))
    monkeypatch.delitem(sys.modules, "ani_myvendor", raising=False)
    monkeypatch.delitem(sys.modules, "ani_myvendor.adapter", raising=False)
    from ani_myvendor.adapter import MyVendorAdapter

    lab = FakeLab()
    adapter = MyVendorAdapter(lab)
    assert isinstance(adapter, Adapter)
    specs = {s.name: s for s in adapter.tools()}
    assert set(specs) == {"get_topology", "show_version", "get_config", "configure"}
    assert specs["show_version"].read_only is True
    assert specs["show_version"].input_schema["required"] == ["device"]
    with adapter:
        ok = adapter.call("show_version", {"device": "r2"})
        bad = adapter.call("show_version", {"device": "h1"})
    assert ok.ok and ok.text == "FRRouting 8.4.4-fake (r2)."
    assert lab.calls == [("r2", ["vtysh", "-c", "show version"])]
    assert bad.error is not None and bad.error.code is ErrorCode.UNKNOWN_DEVICE
    assert [e["tool"] for e in adapter.trajectory.calls] == ["show_version", "show_version"]


def test_an_entry_point_with_a_builtins_name_is_ignored_as_the_template_readme_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A package declaring ``a1`` does not replace ani's A1 (the registry keeps the built-in);
    the template's README said the later entry point replaced it."""
    ep = importlib.metadata.EntryPoint(name="a1", value="ani_myvendor.adapter:MyVendorAdapter", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugin_registry, "entry_points", _fake_entry_points(ep))
    assert available()["a1"] == "ani.adapters.a1:A1Adapter"
    assert get_adapter_class("a1").__name__ == "A1Adapter"
    readme = " ".join((TEMPLATE / "README.md").read_text().split())
    assert "replaces the earlier one" not in readme
    assert "an entry point with a built-in's name is ignored" in readme
