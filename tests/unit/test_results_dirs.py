"""ani.host.results_dirs: the registry of results folders the A0 sandbox hides (logic only; the
sandbox on a real lab is tests/integration/test_a0_results_hidden.py)."""

from __future__ import annotations

from pathlib import Path

from ani.adapters.sandbox import hidden_dirs
from ani.host import results_dirs


def test_a_registered_folder_is_known_and_hidden_once_it_exists(tmp_path, monkeypatch):
    monkeypatch.setenv("ANI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(results_dirs, "_THIS_PROCESS", set())
    folder = Path("/srv") / f"ani-unit-{tmp_path.name}"  # not created: registering is harmless
    assert results_dirs.register(folder) == folder
    results_dirs.register(folder)
    assert results_dirs.registry_file().read_text() == f"{folder}\n"  # once
    assert folder not in results_dirs.known()  # does not exist: nothing to hide
    real = tmp_path / "out"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert results_dirs.register(link) == real  # symlinks resolved
    monkeypatch.setattr(results_dirs, "_THIS_PROCESS", set())  # a later process: the file alone
    assert results_dirs.known() == sorted([real, (tmp_path / "state").resolve()])


def test_hidden_dirs_takes_every_known_results_folder_inside_the_visible_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(results_dirs, "known", lambda: [Path("/usr/local/some/results"), Path("/usr"),
                                                        Path("/srv/some/results"), Path("/etc/frr/x")])
    monkeypatch.setattr(Path, "is_dir", lambda self: True)
    out = hidden_dirs()
    assert Path("/usr/local/some/results") in out
    assert Path("/usr") not in out  # a visible root never is
    # outside the allowlist a folder is not in the sandbox at all: a tmpfs would show its name
    assert Path("/srv/some/results") not in out
    assert Path("/etc/frr/x") not in out  # the sandbox's /etc/frr is its own tmpfs


def test_the_sandbox_root_is_an_allowlist():
    from ani.adapters import sandbox

    args = sandbox.root_binds()
    shown = {args[i + 2] for i, a in enumerate(args) if a in ("--ro-bind", "--symlink")}
    assert shown <= {*sandbox.VISIBLE_ROOTS, "/var/run", "/var/lock"}, shown
    assert {"/usr", "/etc"} <= shown and not shown & {"/", "/work", "/root", "/home", "/srv", "/opt", "/mnt", "/tmp"}
    assert args[args.index("/var") - 1] == "--tmpfs"  # an empty /var, not the host's
    # the ani package is hidden wherever it is installed, if it lies in the visible tree
    assert all(d.is_relative_to("/usr") or d.is_relative_to("/etc") for d in sandbox.hidden_dirs())
