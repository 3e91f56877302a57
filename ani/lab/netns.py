"""Network namespaces and veth links, driven through batched iproute2 calls.

All names come from the caller (``ani-<lab>-<node>``); this module never touches a namespace it was
not given.
"""

from __future__ import annotations

import os

from ani.lab.proc import check, run

NETNS_DIR = "/run/netns"


def list_netns() -> list[str]:
    """Names of every named network namespace on the host (``ip netns list``), sorted."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def ip_batch(lines: list[str], netns: str | None = None, force: bool = False, timeout: float = 20.0) -> None:
    """Run iproute2 commands (``ip`` lines without the leading ``ip``) as one ``ip -batch``.

    Raises LabError naming the failing line unless ``force`` (then errors are ignored).
    """
    if not lines:
        return
    argv = ["ip"] + (["-n", netns] if netns else []) + (["-force"] if force else []) + ["-batch", "-"]
    text = "\n".join(lines) + "\n"
    if force:
        run(argv, timeout=timeout, input=text)
    else:
        check(argv, timeout=timeout, input=text)


def create(namespaces: list[str], links: list[tuple[str, str, str, str]]) -> None:
    """Create ``namespaces`` and veth pairs ``(ns_a, if_a, ns_b, if_b)`` directly inside them.

    Interface names therefore never meet in the root namespace. Raises LabError.
    """
    lines = [f"netns add {ns}" for ns in namespaces]
    lines += [f"link add {ia} netns {na} type veth peer name {ib} netns {nb}" for na, ia, nb, ib in links]
    ip_batch(lines)


def configure(
    netns: str,
    ifnames: list[str],
    addresses: list[tuple[str, str]] | None = None,
    gateway: str | None = None,
    forwarding: bool = False,
) -> None:
    """Bring ``lo`` and ``ifnames`` up, add ``(ifname, cidr)`` addresses, a default route, forwarding.

    One ``ip netns exec`` per namespace. Raises LabError.
    """
    lines = ["link set lo up"] + [f"link set {i} up" for i in ifnames]
    lines += [f"addr add {cidr} dev {i}" for i, cidr in (addresses or [])]
    if gateway:
        lines.append(f"route add default via {gateway}")
    script = "ip -batch - "
    if forwarding:
        script = (
            "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 >/dev/null && " + script
        )
    check(["ip", "netns", "exec", netns, "sh", "-c", script], input="\n".join(lines) + "\n")


def delete(namespaces: list[str]) -> None:
    """Delete ``namespaces`` (ignores those already gone). Their veths go with them."""
    present = set(list_netns())
    ip_batch([f"netns del {ns}" for ns in namespaces if ns in present], force=True)
