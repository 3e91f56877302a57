"""An A0 shell cannot act on another router's links through netlink namespace ids (issue 12, 1.1).

One lab of scenarios/brownfield-small.yaml for the module; every command runs as
``a0.call("shell", {"device": "e1", ...})``. e1's network namespace holds nsids for its veth
peers (c1, c2, blue1, red1), and a dump naming a peer by nsid used to make the kernel hand it
nsids for further namespaces. The mechanism that stops every form: each router's network
namespace is owned by a user namespace of its own (``ani.lab.netns.create``), the A0 shell
enters e1's (``nsenter --user``, ``ani.adapters.sandbox``), so its CAP_NET_ADMIN holds in that
user namespace only, and the kernel's ``ns_capable(net->user_ns, CAP_NET_ADMIN)`` check
(``rtnl_get_net_ns_capable`` for IFLA_TARGET_NETNSID, ``rtnl_link_get_net_capable`` /
``netlink_ns_capable`` for IFLA_LINK_NETNSID and moves) refuses every other router's namespace
with EPERM. Each test checks the other routers byte for byte before and after.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from ani.lab import netns as lab_netns
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "brownfield-small.yaml"
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = SCENARIO, "a0ns", False  # conftest's module_lab

#: raw rtnetlink requests (python's socket.AF_NETLINK), run inside the sandbox and, as a control
#: that the requests are well formed, by host root; prints {"<op> <nsid>": errno or 0, ...} and
#: the number of links a target-nsid dump returned
RAW = r'''
import json, os, socket, struct, sys
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK = 16, 17, 18, 19
F_REQ, F_ACK, F_DUMP = 1, 4, 0x300
IFLA_IFNAME, IFLA_TARGET_NETNSID = 3, 46
def attr(t, data):
    a = struct.pack("=HH", 4 + len(data), t) + data
    return a + b"\0" * (-len(a) % 4)
def request(mtype, flags, index=0, attrs=b""):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    try:
        body = struct.pack("=BxHiII", 0, 0, index, 0, 0) + attrs
        s.send(struct.pack("=IHHII", 16 + len(body), mtype, flags, 1, 0) + body)
        links = 0
        while True:
            buf = s.recv(1 << 20)
            off = 0
            while off < len(buf):
                ln, t = struct.unpack_from("=IH", buf, off)
                if t == 2:  # NLMSG_ERROR
                    return -struct.unpack_from("=i", buf, off + 16)[0], links
                if t == 3:  # NLMSG_DONE: a dump's error travels in it
                    return -struct.unpack_from("=i", buf, off + 16)[0], links
                if t == RTM_NEWLINK:
                    links += 1
                off += (ln + 3) & ~3
            if not flags & F_DUMP:
                return 0, links
    finally:
        s.close()
nsids, own_if, victim = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
own = socket.if_nametoindex(own_if) if own_if else 0
out = {}
for n in nsids:
    tgt = attr(IFLA_TARGET_NETNSID, struct.pack("=i", n))
    out[f"getlink {n}"], out[f"dumped {n}"] = request(RTM_GETLINK, F_REQ | F_DUMP, attrs=tgt)
    out[f"dellink {n}"] = request(RTM_DELLINK, F_REQ | F_ACK, attrs=tgt + attr(IFLA_IFNAME, victim.encode() + b"\0"))[0]
    out[f"setlink {n}"] = request(RTM_SETLINK, F_REQ | F_ACK, index=own,
                                  attrs=tgt + (b"" if own else attr(IFLA_IFNAME, b"ani-nonexist0\0")))[0]
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def lab(module_lab):  # noqa: ANN001, ANN201
    return module_lab


@pytest.fixture(scope="module")
def a0(lab):  # noqa: ANN001, ANN201
    return create_adapter("a0", lab)


def nsids(lab, node: str) -> dict[int, str]:  # noqa: ANN001
    """``{nsid: node}``: the nsids ``node``'s namespace holds, read by host root."""
    names = {lab.netns(n): n for n in lab.topology.nodes}
    out = subprocess.run(["ip", "-n", lab.netns(node), "-j", "netns", "list-id"],
                         capture_output=True, text=True, check=True).stdout
    return {e["nsid"]: names.get(e.get("name", ""), "?") for e in json.loads(out or "[]")}


def peer_address(lab, node: str, ifname: str) -> str:  # noqa: ANN001
    out = subprocess.run(["ip", "-n", lab.netns(node), "-4", "-j", "addr", "show", "dev", ifname],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]["addr_info"][0]["local"]


def fingerprint(lab, skip: str = "e1") -> dict[str, str]:  # noqa: ANN001
    """Every other node's links as ``ip -d link`` prints them, and for each other router its
    state as A0 compares it (FRR running config, ruleset, addresses, routes, rules, forwarding
    sysctls, without what changes by itself: ``A0Adapter.state_of``): compared byte for byte."""
    a0 = create_adapter("a0", lab)
    fp = {}
    for n in lab.topology.nodes:
        if n == skip:
            continue
        fp[n] = subprocess.run(["ip", "-n", lab.netns(n), "-d", "link"], capture_output=True,
                               text=True, check=True).stdout
        if n in lab.routers:
            st = a0.state_of(n)
            assert st is not None, n
            fp[n] += json.dumps(st, sort_keys=True)
    return fp


def e1_links(lab) -> str:  # noqa: ANN001
    return subprocess.run(["ip", "-n", lab.netns("e1"), "-br", "link"], capture_output=True,
                          text=True, check=True).stdout


def test_each_router_netns_is_owned_by_its_own_user_namespace(lab) -> None:  # noqa: ANN001
    """The mechanism itself: no two nodes' namespaces share an owning user namespace, and none is
    owned by the host's (so no node's CAP_NET_ADMIN covers another's)."""
    inos = {}
    for n in lab.topology.nodes:
        fd = lab_netns.owner_userns_fd(lab.netns(n))
        try:
            assert not lab_netns.is_own_userns(fd), n
            inos[n] = os.fstat(fd).st_ino
        finally:
            os.close(fd)
    assert len(set(inos.values())) == len(inos), inos


def test_link_netnsid_veth_peer_is_refused(lab, a0) -> None:  # noqa: ANN001
    """``ip link add sec0 link-netnsid N type veth peer name sec1`` for every nsid e1 holds:
    EPERM from ``netlink_ns_capable(skb, link_net->user_ns, CAP_NET_ADMIN)`` (rtnl_newlink)."""
    ids = nsids(lab, "e1")
    assert {"c1", "c2", "blue1", "red1"} <= set(ids.values()), ids
    before, own_before = fingerprint(lab), e1_links(lab)
    cmd = "; ".join(f"ip link add sec{n} link-netnsid {n} type veth peer name sek{n}" for n in ids)
    r = a0.call("shell", {"device": "e1", "command": cmd})
    assert r.ok is False, r.text
    assert r.data["stderr"].count("Operation not permitted") == len(ids), r.text
    assert fingerprint(lab) == before
    assert e1_links(lab) == own_before  # not even the e1 half was made
    assert r.changed is False


def test_raw_rtnetlink_with_target_nsid_is_refused(lab, a0) -> None:  # noqa: ANN001
    """Raw RTM_GETLINK dumps, RTM_DELLINK (c1's ``to-e2``) and RTM_SETLINK (move e1's ``to-red1``)
    with IFLA_TARGET_NETNSID, for every nsid 0..15 and after a dump that could allocate more:
    EACCES from ``rtnl_get_net_ns_capable``, EPERM from ``rtnl_link_get_net_capable``
    (``ns_capable(net->user_ns, CAP_NET_ADMIN)``), every other router byte-identical."""
    before, own_before = fingerprint(lab), e1_links(lab)
    ids_before = nsids(lab, "e1")
    probe = list(range(16))
    cmd = (f"ip -d link show >/dev/null; python3 - '{json.dumps(probe)}' to-red1 to-e2 <<'EOF'\n{RAW}\nEOF")
    r = a0.call("shell", {"device": "e1", "command": cmd})
    assert r.ok, r.text
    got = json.loads(r.data["stdout"])
    ids_after = nsids(lab, "e1")
    assert set(ids_after) <= set(ids_before) | set(probe)
    for n in probe:
        # rtnl_get_net_ns_capable answers EACCES, rtnl_link_get_net_capable EPERM; an nsid that
        # names no namespace EINVAL
        for op, refused in (("getlink", errno.EACCES), ("dellink", errno.EACCES), ("setlink", errno.EPERM)):
            want = refused if n in ids_after else errno.EINVAL
            assert got[f"{op} {n}"] == want, (op, n, got)
        assert got[f"dumped {n}"] == 0, got  # no other router's link was listed
    # a dump of another namespace made the kernel hand e1 no new nsids
    assert ids_after == ids_before
    assert fingerprint(lab) == before
    assert e1_links(lab) == own_before
    assert "to-red1" in e1_links(lab)

    # control: the same requests from host root (CAP_NET_ADMIN in the initial user namespace,
    # an ancestor of c1's) pass the capability check: the dump lists c1's links, the delete and
    # the move name an interface that does not exist (ENODEV), so nothing changes
    c1 = next(n for n, node in ids_before.items() if node == "c1")
    ctl = subprocess.run(["ip", "netns", "exec", lab.netns("e1"), "python3", "-c", RAW,
                          json.dumps([c1]), "", "ani-nonexist0"],
                         capture_output=True, text=True, check=True)
    got = json.loads(ctl.stdout)
    assert got[f"getlink {c1}"] == 0 and got[f"dumped {c1}"] >= 3, got
    assert got[f"dellink {c1}"] == errno.ENODEV and got[f"setlink {c1}"] == errno.ENODEV, got
    assert fingerprint(lab) == before


def test_own_router_still_fully_configurable(lab, a0) -> None:  # noqa: ANN001
    """What A0 may do on its own router still works inside e1's user namespace: links, addresses,
    routes, nftables, /proc/sys/net, ping over a link, vtysh."""
    before = fingerprint(lab)
    c1_addr = peer_address(lab, "c1", "to-e1")
    cmd = (
        "ip link add sec0 type veth peer name sec1 && ip addr add 198.51.100.1/30 dev sec0 && "
        "ip link set sec0 up && ip route add 198.51.100.128/25 dev sec0 && "
        "nft add table inet a0ns && sysctl -qw net.ipv4.conf.sec0.forwarding=0 && "
        f"ping -c1 -W2 {c1_addr} >/dev/null && vtysh -c 'show version' | grep -q FRRouting && "
        "ip link del sec0 && nft delete table inet a0ns && echo ALL-OK"
    )
    r = a0.call("shell", {"device": "e1", "command": cmd})
    assert r.ok and "ALL-OK" in r.data["stdout"], r.text
    assert fingerprint(lab) == before
