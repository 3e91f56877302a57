"""Interop with a third-party NETCONF client: Debian's yangcli (yuma123 2.13) against the lab's
server on real FRR (issue 23 §4), driven in batch mode (tests/yangcli.py).

yangcli 2.13 cannot parse YANG 1.1's ``modifier invert-match`` (a yuma123 limit): it is given a
copy of ani-frr without those five patterns (``tests.yangcli.module_copy``). The server still
enforces them, so the error-reply test sends a value the copy allows and the server refuses.

What yangcli does here: the hello (capabilities, base:1.1 framing), get-config, lock,
edit-config, validate, commit, a confirmed commit cancelled by cancel-commit, a confirmed commit
reverted by its timeout, unlock, close-session, and error replies with an ``error-path`` it must
parse (before issue 23 it refused each of them: "invalid XPath expression syntax", because the
``frr`` prefix was not declared). One a1_pair lab for the module; each test its own prefixes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests import yangcli as yc

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(yc.yangcli() is None, reason="yangcli is not installed (apt-get install yangcli)"),
]

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "a1_pair.yaml", "ycli"  # conftest's module_lab
FRR_NS = "urn:ani:yang:ani-frr"
BAD_REPLY = ("invalid XPath", "got invalid reply", "invalid reply")


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(scope="module")
def modpath(tmp_path_factory) -> Path:
    return yc.module_copy(tmp_path_factory.mktemp("yangcli-modules"))


def run(lab, router: str, script: list[str], tmp_path: Path, modpath: Path, **kw) -> str:
    out = yc.run(lab.netconf_endpoint(router), script, tmp_path / "home", modpath, **kw)
    assert "NETCONF session established" in out, out[-3000:]
    assert not any(b in out for b in BAD_REPLY), out[-3000:]
    return out


def frr_xml(tmp_path: Path, name: str, inner: str, nc: bool = False) -> str:
    """Write the content of an edit-config's <config> to a file; ``@file`` for yangcli."""
    decl = ' xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"' if nc else ""
    f = tmp_path / f"{name}.xml"
    f.write_text(f'<frr xmlns="{FRR_NS}"{decl}>{inner}</frr>\n')
    return f"@{f}"


def route(prefix: str) -> str:
    return f"<static-route><prefix>{prefix}</prefix><next-hop>blackhole</next-hop></static-route>"


def running(lab, router: str) -> str:
    return lab.vtysh(router, "show running-config").stdout


def test_hello_and_get_config(lab, tmp_path, modpath):
    out = run(lab, "r1", ["get-config source=running"], tmp_path, modpath)
    hello = out.split("Checking Server Modules")[0]
    for cap in ("base:1.0", "base:1.1", "candidate:1.0", "confirmed-commit:1.1", "validate:1.1",
                "ietf-netconf-monitoring@2010-10-04", "ani-frr@2026-11-29"):
        assert f"\n   {cap}\n" in hello, hello
    assert "Protocol version set to: RFC 6241 (base:1.1)" in hello
    assert "Default target set to: <candidate>" in hello
    ((kind, body),) = yc.replies(out)
    assert kind == "Data"
    assert "router-id 10.255.0.1" in body and "prefix-list PL-TENANTS" in body, body


def test_lock_edit_validate_commit_confirmed_cancel_close(lab, tmp_path, modpath):
    a, b = "192.0.2.17/32", "192.0.2.18/32"
    cfg_a, cfg_b = frr_xml(tmp_path, "a", route(a)), frr_xml(tmp_path, "b", route(b))
    out = run(lab, "r1", [
        "lock target=candidate",
        f"edit-config target=candidate config={cfg_a}",
        "validate source=candidate",
        "commit",
        f"edit-config target=candidate config={cfg_b}",
        "commit --confirmed confirm-timeout=120 persist=yc-cancel",
        "get-config source=running",
        "cancel-commit persist-id=yc-cancel",
        "get-config source=running",
        "unlock target=candidate",
        "close-session",
    ], tmp_path, modpath)
    kinds = [k for k, _ in yc.replies(out)]
    assert kinds == ["OK"] * 6 + ["Data", "OK", "Data", "OK", "OK"], out[-3000:]
    during, after = yc.replies(out)[6][1], yc.replies(out)[8][1]
    assert f"prefix {b}" in during and f"prefix {a}" in during
    assert f"prefix {b}" not in after and f"prefix {a}" in after  # cancel-commit reverted b only
    conf = running(lab, "r1")
    assert f"ip route {a.split('/')[0]}/32 blackhole" in conf and b.split("/")[0] not in conf, conf
    # the candidate lock went with the session: another session can take it
    run(lab, "r1", ["lock target=candidate", "unlock target=candidate"], tmp_path, modpath)


def test_confirmed_commit_reverts_at_its_timeout(lab, tmp_path, modpath):
    c = "192.0.2.33/32"
    out = run(lab, "r2", [
        f"edit-config target=candidate config={frr_xml(tmp_path, 'c', route(c))}",
        # persist: the session's end does not revert it (RFC 6241 §8.4.1), the timeout does
        "commit --confirmed confirm-timeout=3 persist=yc-timeout",
        "get-config source=running",
    ], tmp_path, modpath)
    (k1, _), (k2, _), (k3, body) = yc.replies(out)
    assert (k1, k2, k3) == ("OK", "OK", "Data") and f"prefix {c}" in body
    deadline = time.monotonic() + 60  # 3 s timer; a loaded machine applies the rollback slowly
    while c.split("/")[0] in running(lab, "r2") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert c.split("/")[0] not in running(lab, "r2")


def test_error_replies_with_a_path_are_parsed(lab, tmp_path, modpath):
    """Two refusals with an error-path: a YANG pattern (invert-match: the copy yangcli loaded
    lacks it, the server enforces it) and edit-config's data-exists on a keyed list entry."""
    out = run(lab, "r1", [
        "edit-config target=candidate config="
        + frr_xml(tmp_path, "rid", "<ospf><router-id>0.0.0.0</router-id></ospf>"),
    ], tmp_path / "1", modpath)
    ((kind, body),) = yc.replies(out)
    assert kind == "Error", out[-3000:]
    assert "error-path /frr:frr/frr:ospf/frr:router-id\n" in body
    assert "error-tag invalid-value" in body and "0.0.0.0 is not a router id" in body

    entry = ('<prefix-list><name>PL-TENANTS</name><entry nc:operation="create"><seq>10</seq>'
             "<action>permit</action><prefix>198.18.1.0/24</prefix></entry></prefix-list>")
    out = run(lab, "r1", [
        f"edit-config target=candidate config={frr_xml(tmp_path, 'dup', entry, nc=True)}",
    ], tmp_path / "2", modpath, display="xml")
    ((kind, body),) = yc.replies(out)
    assert kind == "Error", out[-3000:]
    assert "<error-tag>data-exists</error-tag>" in body
    assert ("/frr:frr/frr:prefix-list[frr:name='PL-TENANTS']/frr:entry[frr:seq='10']</error-path>"
            in body), body
    assert "prefix-list PL-TENANTS seq 10 permit 198.18.1.0/24" in running(lab, "r1")


def test_an_error_path_whose_key_holds_both_quote_kinds_is_parsed(lab, tmp_path, modpath):
    """A key value holding ' and " is an XPath 1.0 concat() in the path (yangcli refused
    ``[frr:name="A'B"C]"]``: "unended quoted string")."""
    inner = "<prefix-list><name>A'B\"C]</name></prefix-list>"
    out = run(lab, "r1", [
        f"edit-config target=candidate config={frr_xml(tmp_path, 'quotes', inner)}",
    ], tmp_path, modpath, display="xml")
    assert "unended" not in out, out[-3000:]
    ((kind, body),) = yc.replies(out)
    assert kind == "Error" and "<error-tag>invalid-value</error-tag>" in body, out[-3000:]
    assert ("/frr:frr/frr:prefix-list[frr:name=concat('A', \"'\", 'B\"C]')]/frr:name</error-path>"
            in body), body
