"""``ani.device.state``, the one reader and restorer of router state, on fake labs: the order
of the read checks, the one normalisation, the one restore loop and its notes, and frr-reload's
error lines. The real routers are in tests/integration/test_frr_reload_errors.py and the
integration tests of every level."""

from __future__ import annotations

from pathlib import Path

import pytest

import ani.device.state as state
from ani.device.frr_reload import ReloadResult, error_lines
from ani.device.outcome import ApplyError, ReadError, ReadTimeout
from ani.device.state import RouterState, Target, converge, frr_lines, lab_gone, nft_lines, read_frr, read_nft
from ani.errors import AniTimeout, LabGone
from ani.lab.proc import ExecResult

RUNNING = """Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults traditional
hostname r1
!
interface eth0
 description uplink   
 ip address 10.0.0.1/30
exit
!
end
"""


class FakeLab:
    """A router ``r1`` whose entry script is ``<root>/r1/enter``; ``frr`` / ``nft`` are what
    vtysh / nft print; ``results`` overrides the next results by command.

    Hand-written on purpose (issue 28: one of the few lab fakes not on ``ani.testing.FakeLab``):
    the reader under test checks the lab's ``node_argv`` entry script on disk before reading;
    FakeLab has no ``node_argv`` (with one, A1 would start real vtysh sessions through it)."""

    id = "ab12"

    def __init__(self, root: Path, frr: str = RUNNING, nft: str = "table inet fw {\n}\n") -> None:
        self.root = root
        (root / "r1").mkdir(exist_ok=True)
        (root / "r1" / "enter").write_text("#!/bin/sh\n")
        self.frr, self.nft = frr, nft
        self.dead: list[str] = []
        self.calls: list[str] = []
        self.results: dict[str, ExecResult] = {}

    def node_argv(self, node: str, argv: list[str]) -> list[str]:
        return [str(self.root / node / "enter"), *argv]

    def dead_daemons(self, router: str) -> list[str]:
        return list(self.dead)

    def vtysh(self, router: str, command: str, timeout: float = 10.0) -> ExecResult:
        self.calls.append(f"vtysh {command}")
        return self.results.pop("vtysh", None) or ExecResult(0, self.frr, "", False, 0.01)

    def exec(self, router: str, argv: list[str], timeout: float = 10.0, input: str | None = None) -> ExecResult:
        self.calls.append(" ".join(argv))
        if argv[:2] == ["nft", "-f"]:
            self.nft = input or ""
            return self.results.pop("nft -f", None) or ExecResult(0, "", "", False, 0.01)
        return self.results.pop("nft", None) or ExecResult(0, self.nft, "", False, 0.01)


# -- normalising -----------------------------------------------------------------------------


def test_frr_lines_drop_the_header_comments_blanks_and_end_only():
    assert frr_lines(RUNNING) == ["hostname r1", "interface eth0", " description uplink", " ip address 10.0.0.1/30", "exit"]
    other_version = RUNNING.replace("frr version 8.4.4", "frr version 8.4.5").replace("!\nend", "end")
    assert frr_lines(other_version) == frr_lines(RUNNING)
    assert frr_lines(RUNNING.replace(" description uplink", " description downlink")) != frr_lines(RUNNING)


def test_nft_lines_drop_blank_lines_and_trailing_spaces():
    assert nft_lines("table inet fw {  \n\n  set a {\n  }\n}\n") == ["table inet fw {", "  set a {", "  }", "}"]


# -- the gone check and reading --------------------------------------------------------------


def test_a_gone_lab_is_said_first_and_nothing_runs(tmp_path):
    lab = FakeLab(tmp_path)
    lab.dead = ["bgpd", "zebra"]  # what a removed lab also looks like: every daemon gone
    (tmp_path / "r1" / "enter").unlink()
    assert lab_gone(lab, "r1") == f"lab ab12 is not running (no {tmp_path}/r1/enter)"
    with pytest.raises(ReadError, match=r"^r1: lab ab12 is not running \(no .*/r1/enter\)$") as exc:
        read_frr(lab, "r1")
    assert exc.value.restored is True and exc.value.gone is True and isinstance(exc.value, ApplyError)
    with pytest.raises(ReadError, match="is not running"):
        read_nft(lab, "r1")
    assert lab.calls == []


def test_a_gone_namespace_is_named(tmp_path):
    lab = FakeLab(tmp_path)
    lab.netns = lambda node: "ani-nosuchlab-r1"  # type: ignore[attr-defined]
    assert lab_gone(lab, "r1") == "network namespace ani-nosuchlab-r1 is gone"
    (tmp_path / "r1" / "enter").unlink()
    assert lab_gone(lab, "r1") == "lab ab12 is not running (network namespace ani-nosuchlab-r1 is gone)"
    assert lab_gone(object(), "r1") is None  # cannot tell: not gone


def test_a_dead_daemon_refuses_the_read_before_vtysh_runs(tmp_path):
    lab = FakeLab(tmp_path)
    lab.dead = ["bgpd"]
    with pytest.raises(ReadError, match=r"^r1: FRR daemon bgpd is not running; its running config cannot be read"):
        read_frr(lab, "r1")
    assert lab.calls == []
    assert read_frr(lab, "r1", checked=False) == RUNNING  # the caller made the checks itself


def test_a_read_that_runs_out_of_its_bound_is_a_read_timeout(tmp_path):
    lab = FakeLab(tmp_path)
    lab.results["vtysh"] = ExecResult(-9, "Building configuration...\n", "", True, 3.0)
    with pytest.raises(ReadTimeout) as exc:
        read_frr(lab, "r1", timeout=3)
    assert str(exc.value) == "r1: timeout after 3 s (reading the running config)"
    assert isinstance(exc.value, AniTimeout) and exc.value.seconds == 3.0 and exc.value.restored
    lab.results["nft"] = ExecResult(-9, "", "", True, 2.0)
    with pytest.raises(ReadTimeout, match=r"^r1: timeout after 2 s \(reading the nftables ruleset\)$"):
        read_nft(lab, "r1", timeout=2)


@pytest.mark.parametrize(("result", "says"), [
    (ExecResult(1, "", "% Connection refused", False, 0.0), "r1: cannot read the running config (exit 1): % Connection refused"),
    (ExecResult(0, "hostname r1\n", "", False, 0.0), "r1: cannot read the running config (no 'Current configuration:')"),
])
def test_a_failed_or_partial_read_is_a_read_error(tmp_path, result, says):
    lab = FakeLab(tmp_path)
    lab.results["vtysh"] = result
    with pytest.raises(ReadError) as exc:
        read_frr(lab, "r1")
    assert str(exc.value).startswith(says) and not isinstance(exc.value, AniTimeout)


def test_a_lab_removed_between_the_check_and_the_read_is_a_read_error(tmp_path):
    lab = FakeLab(tmp_path)

    def vtysh(*a, **k):  # type: ignore[no-untyped-def]
        raise LabGone("ab12", "no /run/ani/labs/ab12/r1/enter")

    lab.vtysh = vtysh  # type: ignore[method-assign]
    with pytest.raises(ReadError, match=r"^r1: lab ab12 is not running \(no /run/ani/labs/ab12/r1/enter\)$"):
        read_frr(lab, "r1")


# -- the restore loop ------------------------------------------------------------------------


def target_for(text: str, nft: str | None = None) -> Target:
    want = frr_lines(text)
    want_nft = nft_lines(nft or "")
    return Target(frr=text, frr_done=lambda t: frr_lines(t) == want,
                  nft=nft, nft_done=lambda t: nft_lines(t) == want_nft)


bounds: list[float] = []  # the timeout each fake frr-reload run was given


@pytest.fixture
def reloads(monkeypatch):
    """``runs``: what each frr-reload does, in order: (applies the target?, ReloadResult)."""
    runs: list[tuple[bool, ReloadResult]] = []
    seen: list[str] = []
    bounds.clear()

    def fake(lab, router, config, timeout=30.0, argv=None):  # type: ignore[no-untyped-def]
        applies, res = runs.pop(0)
        seen.append(config)
        bounds.append(timeout)
        if applies:
            lab.frr = config
        return res

    monkeypatch.setattr(state, "frr_reload", fake)
    return runs


def test_nothing_runs_when_the_router_already_runs_the_target(tmp_path, reloads):
    lab = FakeLab(tmp_path)
    res = converge(lab, "r1", target_for(RUNNING, lab.nft), RouterState(RUNNING, lab.nft))
    assert res.ok and res.reloads == 0 and res.notes == [] and lab.calls == []


def test_a_second_pass_when_the_first_falls_short_and_every_error_line_is_kept_once(tmp_path, reloads):
    lab = FakeLab(tmp_path)
    want = RUNNING.replace("uplink", "core")
    failed = ReloadResult(0, False, ["Failed to execute interface eth0  no description uplink"])
    reloads += [(False, failed), (True, failed)]
    res = converge(lab, "r1", target_for(want), RouterState(RUNNING, lab.nft), passes=2)
    assert res.ok and res.reloads == 2 and res.state.frr == want
    assert res.notes == ["frr-reload: Failed to execute interface eth0  no description uplink"]


def test_the_passes_bound_the_reloads_and_a_part_left_different_is_reported_not_raised(tmp_path, reloads):
    lab = FakeLab(tmp_path)
    reloads += [(False, ReloadResult(1, False, [])), (False, ReloadResult(-9, True, [], elapsed_s=30.0))]
    res = converge(lab, "r1", target_for(RUNNING.replace("uplink", "core")), RouterState(RUNNING, lab.nft), passes=2)
    assert (res.ok, res.frr_ok, res.nft_ok, res.reloads) == (False, False, True, 2)
    assert res.notes == ["frr-reload: exit 1", "frr-reload: timed out after 30 s"]


def test_a_deadline_cuts_each_run_and_no_run_starts_after_it(tmp_path, reloads):
    """Issue 23: a change stops at its caller's deadline: every run ends by it (its bound is
    what is left, not the whole timeout) and, once it has passed, no run or nft load starts."""
    import time

    lab = FakeLab(tmp_path, nft="table inet fw {\n\tset a {\n\t}\n}\n")
    killed = ReloadResult(-9, True, [], elapsed_s=2.0)
    reloads += [(False, killed), (False, killed)]
    deadline = time.monotonic() + 2.0
    res = converge(lab, "r1", target_for(RUNNING.replace("uplink", "core"), "table inet fw {\n}\n"),
                   RouterState(RUNNING, lab.nft), passes=2, timeout=30.0, deadline=deadline)
    assert res.reloads == 2 and all(0 < b <= 2.0 for b in bounds)  # cut to the deadline, not 30 s
    lab.calls.clear()
    res = converge(lab, "r1", target_for(RUNNING.replace("uplink", "core"), "table inet fw {\n}\n"),
                   RouterState(RUNNING, "table inet fw {\n\tset a {\n\t}\n}\n"), passes=2, timeout=30.0,
                   deadline=time.monotonic() - 0.1)  # passed already
    assert res.reloads == 0 and not res.ok and lab.calls == []  # nothing ran
    assert res.notes == ["frr-reload: not run, the bound of the change had passed"]


def test_nft_is_loaded_once_when_it_differs_and_its_error_is_a_note(tmp_path, reloads):
    lab = FakeLab(tmp_path, nft="table inet fw {\n\tset a {\n\t}\n}\n")
    want_nft = "table inet fw {\n}\n"
    res = converge(lab, "r1", target_for(RUNNING, want_nft), RouterState(RUNNING, lab.nft))
    assert res.ok and res.reloads == 0 and lab.calls == ["nft -f -", "nft -s list ruleset"]
    lab.nft = "table ip nat {\n}\n"
    lab.results["nft -f"] = ExecResult(1, "", "Error: syntax error,\n  unexpected junk", False, 0.0)
    lab.calls.clear()
    before = lab.nft
    lab.exec = _no_apply(lab)  # type: ignore[method-assign]
    res = converge(lab, "r1", target_for(RUNNING, want_nft), RouterState(RUNNING, before))
    assert not res.nft_ok and res.notes == ["nft -f (exit 1): Error: syntax error, unexpected junk"]


def _no_apply(lab: FakeLab):  # type: ignore[no-untyped-def]
    real = lab.exec

    def exec_(router, argv, timeout=10.0, input=None):  # type: ignore[no-untyped-def]
        if argv[:2] == ["nft", "-f"]:
            return lab.results.pop("nft -f")
        return real(router, argv, timeout, input)

    return exec_


# -- frr-reload's error lines ----------------------------------------------------------------

#: frr-reload 8.4.4 output, measured on a lab router (trimmed): a deletion vtysh refused three
#: times before a shorter ``no`` form took, a line it never removes, a refused addition
OUTPUT = """\
2026-12-01 08:50:58,900  INFO: Called via "Namespace(input=None, reload=True, test=False)"
2026-12-01 08:50:58,901  INFO: Loading Config object from file /tmp/ani-frr-reload-x/frr.conf
2026-12-01 08:50:58,947  INFO: "frr version 8.4.4" cannot be removed
2026-12-01 08:50:58,947  INFO: "password zebra" cannot be removed
2026-12-01 08:50:58,947  INFO: Failed to execute interface eth-r2  no description some text here
2026-12-01 08:50:58,975  INFO: Failed to execute interface eth-r2  no description some text
2026-12-01 08:50:59,031  INFO: Executed "interface eth-r2  no description"
2026-12-01 08:50:59,032  INFO: /tmp/ani-frr-reload-x/reload-GA32WE.txt content
['interface eth-r2\\n ip ospf area 0\\n']
line 2: Failure to communicate[13] to ospfd, line:  ip ospf area 0

2026-12-01 08:50:59,495 WARNING: frr-reload.py failed due to
vtysh (exec file) exited with status 13
2026-12-01 08:50:59,496   ERROR: "router ospf -- no router-info area" we failed to remove this command
"""


def test_error_lines_keep_failed_deletions_unremovable_lines_warnings_and_frr_words():
    assert error_lines(OUTPUT) == [
        '"password zebra" cannot be removed',
        "Failed to execute interface eth-r2  no description some text here",
        "Failed to execute interface eth-r2  no description some text",
        "line 2: Failure to communicate[13] to ospfd, line:  ip ospf area 0",
        "frr-reload.py failed due to",
        "vtysh (exec file) exited with status 13",
        '"router ospf -- no router-info area" we failed to remove this command',
    ]
    assert error_lines(OUTPUT + OUTPUT) == error_lines(OUTPUT)  # each once
    assert error_lines('2026-12-01 08:50:58,947  INFO: "frr defaults traditional" cannot be removed\n') == []
