"""ICMP echo (ping) from inside a network namespace, with no process: raw sockets opened in the
namespace by a short-lived thread.

The observer's batched look pings every reach and loopback check of a node at once. Through
``lab.exec`` that was a process chain per node and look (the node's ``enter`` script: ``ip netns
exec``, ``unshare --uts``, two shells and ``hostname``) plus a subshell and a ``ping`` per
check: ~7 ms of CPU for the chain and ~2.4 ms per ping, some 67 000 pings in one ``make test``.
Here a look is a few ``sendto``/``recv`` calls (docs/performance.md, "In-process pings").

::

    probes = [Probe("10.0.0.2"), Probe("192.0.2.1", source="10.0.0.1", count=5, interval_s=0.05,
                                       wait_s=0.25)]
    echo("/run/netns/ani-ab12cd-r1", probes)
    # -> [Echo(replies=1), Echo(replies=0, unrouted=True, error="connect: Network is unreachable")]

An :class:`Echo` is what ``ping -n -q -c COUNT -i INTERVAL -W WAIT [-I SOURCE] DST`` (iputils
20221126) says of the same probe: the echo replies it counted, or that it could not ping at
all (``error``: ping's own words, exit status 2), ``unrouted`` when that is because the
namespace has no route to ``dst`` (``ENETUNREACH``, "Network is unreachable"). As ping does,
a request the kernel refuses once the first went out (an nftables drop: ``EPERM``) counts as
sent and unanswered. ``tests/integration/test_icmp_echo.py`` runs ping and :func:`echo` side
by side on one lab, a case for each kind of answer (a reply, none, no route, a blackhole,
unreachable and prohibit route, a broadcast address, a dropped request, a foreign source,
IPv6).

Why a socket opened in the namespace stays there: a socket belongs to the network namespace of
the thread that created it, for life (``setns(2)`` of ``CLONE_NEWNET`` changes only the calling
thread, so the thread that enters is one made for it, and it ends there). Raw sockets need
``CAP_NET_RAW`` (labs run as root).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import select
import socket
import struct
import time
from dataclasses import dataclass

from ani.host.threads import in_netns

__all__ = ["Echo", "Probe", "echo", "socket_in"]

#: ICMP echo request / reply types: IPv4 (RFC 792), IPv6 (RFC 4443 §4)
ECHO = {socket.AF_INET: (8, 0), socket.AF_INET6: (128, 129)}
#: errors of a later request that ping counts as a request sent and not answered (EPERM: an
#: nftables drop; EAGAIN: a full socket buffer); any error of the first request is ping's
#: "connect:" error (iputils connects a UDP socket to learn the route before it pings)
SENT_ERRNOS = (errno.EPERM, errno.EAGAIN, errno.ENOBUFS)

#: ping's own words for a first request refused with this errno, where they are not ``connect:
#: <strerror>`` (iputils 20221126, ping/ping.c: a prohibit route or a broadcast address)
PING_WORDS = {errno.EACCES: "Do you want to ping broadcast? Then -b. If not, check your local firewall rules"}


@dataclass(frozen=True)
class Echo:
    """What one :class:`Probe` got: ``replies`` (0 to its count); ``error``: ping could not ping
    (its words, e.g. ``connect: No route to host``, ``bind: Cannot assign requested address``);
    ``unrouted``: because there is no route (``ENETUNREACH``)."""

    replies: int = 0
    error: str = ""
    unrouted: bool = False


@dataclass(frozen=True)
class Probe:
    """One ``ping``: ``count`` echo requests to ``dst`` ``interval_s`` seconds apart (from
    ``source`` if given: ping's ``-I ADDRESS``), then up to ``wait_s`` seconds for replies after
    the last one (ping's ``-W``). Seconds."""

    dst: str
    source: str | None = None
    count: int = 1
    interval_s: float = 1.0
    wait_s: float = 1.0


def socket_in(netns_path: str, family: int, proto: int) -> socket.socket:
    """A ``SOCK_RAW`` socket of ``family``/``proto`` in the network namespace at ``netns_path``
    (``/run/netns/<name>``). Raises OSError (no such namespace, no ``CAP_NET_RAW``)."""
    return in_netns(netns_path, lambda: socket.socket(family, socket.SOCK_RAW, proto))


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def _request(family: int, ident: int, seq: int) -> bytes:
    kind = ECHO[family][0]
    payload = b"ani-icmp" + struct.pack("!d", time.time())
    head = struct.pack("!BBHHH", kind, 0, 0, ident, seq)
    if family == socket.AF_INET6:  # the kernel fills in ICMPv6's checksum (RFC 3542 §3.1)
        return head + payload
    return struct.pack("!BBHHH", kind, 0, _checksum(head + payload), ident, seq) + payload


def _reply(family: int, data: bytes) -> tuple[int, int] | None:
    """(ident, seq) of an echo reply, else None (IPv4 raw sockets get the IP header too)."""
    if family == socket.AF_INET:
        if len(data) < 20:
            return None
        data = data[(data[0] & 0x0F) * 4:]
    if len(data) < 8 or data[0] != ECHO[family][1] or data[1] != 0:
        return None
    _, _, _, ident, seq = struct.unpack("!BBHHH", data[:8])
    return ident, seq


class _Ping:
    """One probe's state: its socket, when each request goes, which replies came."""

    def __init__(self, netns_path: str, probe: Probe, start: float):
        self.probe = probe
        self.dst = ipaddress.ip_address(probe.dst)  # ValueError: not an address
        self.family = socket.AF_INET6 if self.dst.version == 6 else socket.AF_INET
        proto = socket.IPPROTO_ICMPV6 if self.family == socket.AF_INET6 else socket.IPPROTO_ICMP
        self.sock = socket_in(netns_path, self.family, proto)
        self.sock.setblocking(False)
        self.ident = secrets.randbits(16)
        self.sent = 0
        self.replies: set[int] = set()
        self.next_at = start
        self.done_at: float | None = None  # when the last request's wait ends
        self.result: Echo | None = None
        if probe.source:
            try:
                self.sock.bind((probe.source, 0))
            except OSError as exc:
                self.result = Echo(error=f"bind: {os.strerror(exc.errno or 0)}")

    def send_due(self, now: float) -> None:
        while self.result is None and self.sent < self.probe.count and now >= self.next_at:
            self.sent += 1
            try:
                self.sock.sendto(_request(self.family, self.ident, self.sent), (self.probe.dst, 0))
            except OSError as exc:
                if self.sent == 1 and exc.errno not in SENT_ERRNOS:
                    words = PING_WORDS.get(exc.errno or 0, f"connect: {os.strerror(exc.errno or 0)}")
                    self.result = Echo(error=words,
                                       unrouted=exc.errno == errno.ENETUNREACH)
                    return
            self.next_at += self.probe.interval_s
            if self.sent == self.probe.count:
                self.done_at = now + self.probe.wait_s

    def receive(self) -> None:
        """Take every echo reply waiting: this probe's (its ident, a sequence number it sent,
        from ``dst``: a raw socket gets a copy of every ICMP packet of the namespace)."""
        while True:
            try:
                data, addr = self.sock.recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                return
            got = _reply(self.family, data)
            if (got is not None and got[0] == self.ident and 1 <= got[1] <= self.sent
                    and ipaddress.ip_address(addr[0].split("%")[0]) == self.dst):
                self.replies.add(got[1])

    def finish(self, now: float) -> bool:
        if self.result is None and self.sent == self.probe.count and (
                len(self.replies) == self.probe.count or (self.done_at is not None and now >= self.done_at)):
            self.result = Echo(replies=len(self.replies))
        return self.result is not None

    def wake_at(self) -> float:
        return self.next_at if self.sent < self.probe.count else (self.done_at or self.next_at)


def echo(netns_path: str, probes: list[Probe]) -> list[Echo]:
    """Run ``probes`` at once from the network namespace at ``netns_path`` (``/run/netns/<name>``);
    an :class:`Echo` for each, in order. Blocks until every probe is done (at most ``count *
    interval_s + wait_s`` seconds each). Raises OSError (the namespace is gone, no
    ``CAP_NET_RAW``)."""
    start = time.monotonic()
    pings: list[_Ping] = []
    try:
        for p in probes:
            pings.append(_Ping(netns_path, p, start))
        while True:
            now = time.monotonic()
            for p in pings:
                p.send_due(now)
            live = [p for p in pings if not p.finish(now)]
            if not live:
                break
            timeout = max(0.0, min(p.wake_at() for p in live) - time.monotonic())
            ready, _, _ = select.select([p.sock for p in live], [], [], timeout)
            for p in live:
                if p.sock in ready:
                    p.receive()
        return [p.result for p in pings]  # type: ignore[misc]
    finally:
        for p in pings:
            p.sock.close()
