"""A2 against a real third-party NETCONF server that does not serve ani-frr (issue 23 §4):
Debian's netconfd (yuma123 2.13) serving ietf-interfaces, reached through an inventory like a
real device (tests/netconfd.py: netconfd and its SSH front in a temporary folder, 127.0.0.1).

Before issue 23: ``compare`` said "no difference" when the candidate differed outside ``<frr>``,
reads answered "(no data ...)" without a word about the model, ``ani mcp serve --inventory``
started silently, and a server without :candidate or :confirmed-commit:1.1 was
``device_unreachable``, retriable, for every tool, reads included. Now the hello is checked at
connect and each RPC against it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ani.errors import ErrorCode
from ani.inventory import load_inventory
from tests import netconfd as nd

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(nd.netconfd() is None, reason="netconfd is not installed (apt-get install netconfd)"),
]

ROOT = Path(__file__).parent.parent.parent
PW_ENV = "ANI_TEST_NETCONFD_PASSWORD"
IFACE = (f'<interfaces xmlns="{nd.IF_NS}" xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">'
         "<interface><name>ani-test0</name><description>{}</description>"
         "<type>ianaift:ethernetCsmacd</type></interface></interfaces>")


def inventory(peer: nd.NetconfdPeer, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv(PW_ENV, peer.password)
    p = tmp_path / "inventory.yaml"
    p.write_text(f"devices:\n  - name: yuma\n    host: 127.0.0.1\n    ports: {{netconf: {peer.port}}}\n"
                 f"    username: {peer.username}\n    credentials: {{password_env: {PW_ENV}}}\n")
    return p


@pytest.fixture
def candidate_peer():
    with nd.NetconfdPeer(target="candidate") as peer:
        yield peer


def test_hello_checked_reads_say_what_the_device_serves_and_compare_sees_everything(
        candidate_peer, tmp_path, monkeypatch):
    a2 = load_inventory(inventory(candidate_peer, tmp_path, monkeypatch)).connect("a2")
    try:
        (note,) = a2.support_notes()
        assert note.startswith("yuma does not serve ani-frr (its modules: ") and "ietf-interfaces@2014-05-08" in note
        assert "not on yuma:" not in note and "works on yuma: get_config, get_state" in note  # :candidate etc.
        res = a2.call("get_config", {"device": "yuma"})
        assert res.ok and "note: yuma does not serve the YANG module ani-frr" in res.text
        state = a2.call("get_state", {"device": "yuma"})  # no frr-state filter: everything
        assert state.ok and "<netconf-state" in state.text, state.text[:500]

        assert a2.call("lock", {"device": "yuma", "target": "candidate"}).ok
        edit = a2.call("edit_config", {"device": "yuma", "config": IFACE.format("uplink")})
        assert edit.ok, edit
        # the probe: the candidate differs only outside <frr>
        for fmt in ("cli", "xml"):
            cmp = a2.call("compare", {"device": "yuma", "format": fmt})
            assert cmp.ok and cmp.data["format"] == "xml" and cmp.data["changes"] >= 3, cmp.text
            assert "+    <name>ani-test0</name>" in cmp.text and "+    <description>uplink</description>" in cmp.text
            assert cmp.text.startswith("(shown as XML: yuma does not serve ani-frr") == (fmt == "cli")
        # validate is tried last: netconfd 2.13 answers a commit that follows a <validate> of the
        # candidate with <ok/> and commits nothing (a yuma123 quirk; A2's measured ``changed``
        # then says "running unchanged")
        commit = a2.call("commit", {"devices": ["yuma"], "confirm_timeout_s": 120})
        assert commit.ok and commit.changed, commit
        assert "ani-test0" in a2.call("get_config", {"device": "yuma"}).text
        assert a2.call("cancel_commit", {"devices": ["yuma"]}).ok
        assert "ani-test0" not in a2.call("get_config", {"device": "yuma"}).text
        assert "no difference" in a2.call("compare", {"device": "yuma"}).text
        assert a2.call("edit_config", {"device": "yuma", "config": IFACE.format("again")}).ok
        assert a2.call("validate", {"device": "yuma"}).ok
        assert a2.call("discard_changes", {"device": "yuma"}).ok
        assert "no difference" in a2.call("compare", {"device": "yuma"}).text
        assert a2.call("unlock", {"device": "yuma", "target": "candidate"}).ok
    finally:
        a2.close()


def test_a_server_without_candidate_refuses_edits_plainly_and_keeps_reads(tmp_path, monkeypatch):
    with nd.NetconfdPeer(target="running") as peer:
        a2 = load_inventory(inventory(peer, tmp_path, monkeypatch)).connect("a2")
        try:
            res = a2.call("get_config", {"device": "yuma"})
            assert res.ok and "<nacm" in res.text  # netconfd's running: its NACM defaults
            assert a2.call("get_state", {"device": "yuma"}).ok
            assert a2.call("lock", {"device": "yuma", "target": "running"}).ok
            assert a2.call("unlock", {"device": "yuma", "target": "running"}).ok
            for name, args in (("edit_config", {"device": "yuma", "config": IFACE.format("x")}),
                               ("compare", {"device": "yuma"}), ("commit", {"devices": ["yuma"]}),
                               ("cancel_commit", {"devices": ["yuma"]})):
                r = a2.call(name, args)
                assert not r.ok and r.error.code == ErrorCode.UNSUPPORTED and not r.error.retriable, (name, r)
                assert "which its NETCONF hello does not announce; nothing was sent" in r.error.message
                assert "works on yuma: get_config, get_state, lock, unlock, get_schema" in r.error.message
            assert "ani-test0" not in a2.call("get_config", {"device": "yuma"}).text
            (note,) = a2.support_notes()
            assert "not on yuma: edit_config (needs candidate)" in note
        finally:
            a2.close()


def test_ani_mcp_serve_on_the_inventory_says_what_works(candidate_peer, tmp_path, monkeypatch):
    """``ani mcp serve --inventory`` prints, before serving, what A2 cannot do on each device."""
    path = inventory(candidate_peer, tmp_path, monkeypatch)
    proc = subprocess.Popen([sys.executable, "-m", "ani.cli", "mcp", "serve", "--inventory", str(path),
                             "--level", "a2"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ})
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "ani mcp: serving" in line:
                break
    finally:
        proc.stdin.close()  # end of stdio: the server exits
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    out = "".join(lines)
    assert "ani mcp: yuma does not serve ani-frr (its modules: " in out, out
    assert "ani mcp: serving level a2 of inventory" in out
