"""``ping`` and ``traceroute`` of a ``command`` check: bounded, read-only argv for the node.

FRR's vtysh runs ``ping WORD`` / ``traceroute WORD`` as the system's ``ping`` / ``traceroute``
without a count, so they never stop; a testcase's ``ping`` is therefore run here as the system
program in the router's network namespace (what vtysh would print), bounded::

    probe_argv("ping 203.0.113.1")            -> Probe(argv=["ping", "-n", "-c", "5", "-i", "0.2",
                                                             "-W", "1", "203.0.113.1"], timeout_s=6.8)
    probe_argv("ping 203.0.113.1 repeat 3 source 10.0.0.1")   # IOS keywords: -c 3 -I 10.0.0.1
    probe_argv("traceroute 203.0.113.1")      -> ["traceroute", "-n", "-m", "8", "-q", "1", "-w", "1", ...]

Accepted: ``ping [ip|ipv6] [-c N] [-W S] [-w S] [-I SRC] [-s BYTES] [-t TTL] [-n] [-q] [-4|-6]
DEST [repeat N] [source SRC] [size BYTES] [timeout S]`` and ``traceroute [ip|ipv6] [-m HOPS]
[-q N] [-w S] [-s SRC] [-I] [-n] [-4|-6] DEST``; ``DEST`` an IP address (no name lookups). Bounds
(a larger value is clamped, not refused): :data:`PING_MAX_COUNT` probes (default
:data:`PING_COUNT`) :data:`PING_INTERVAL_S` apart, the last reply waited for at most
:data:`PING_MAX_WAIT_S` (so a ping ends within 3.8 s); ``-w`` is accepted and not passed (with
a deadline iputils' ``-c`` counts replies, and ping sends on until the deadline); a traceroute at
most :data:`TRACE_MAX_HOPS` hops of :data:`TRACE_MAX_QUERIES` probes waited for
:data:`TRACE_MAX_WAIT_S` each. Refused (``ValueError`` saying why): flooding and its
relatives (``-f``, ``-i``, ``-l``, ``-b``), any other option, a missing or non-address
destination, a value that is not a number. Neither program changes the router.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import ip_address

__all__ = ["PROBE_VERBS", "Probe", "probe_argv"]

PROBE_VERBS = ("ping", "traceroute")
PING_COUNT = 5
PING_MAX_COUNT = 10
PING_INTERVAL_S = 0.2
PING_WAIT_S = 1.0
PING_MAX_WAIT_S = 2.0
PING_MAX_SIZE = 1472
TRACE_HOPS, TRACE_MAX_HOPS = 8, 10
TRACE_QUERIES, TRACE_MAX_QUERIES = 1, 2
TRACE_WAIT_S, TRACE_MAX_WAIT_S = 1.0, 1.0

_REFUSED = {"-f": "flood ping", "-i": "the interval is fixed (0.2 s)", "-l": "preload (a burst)",
            "-b": "broadcast ping", "-F": "flow label", "-r": "bypasses routing"}
_PING_VALUED = {"-c": "count", "-W": "wait", "-w": "deadline", "-I": "source", "-s": "size", "-t": "ttl"}
_PING_IOS = {"repeat": "count", "source": "source", "size": "size", "timeout": "wait"}
_TRACE_VALUED = {"-m": "hops", "-q": "queries", "-w": "wait", "-s": "source"}
_FLAGS = ("-n", "-q", "-4", "-6")


@dataclass(frozen=True)
class Probe:
    """A bounded probe: the argv to run in the node and the seconds to give it at most."""

    argv: list[str]
    timeout_s: float


def _number(word: str, value: str, kind: type = float) -> float:
    try:
        n = kind(value)
    except ValueError:
        raise ValueError(f"{word} {value!r}: not a number") from None
    if n < 0 or (kind is int and n < 1):
        raise ValueError(f"{word} {value!r}: must be positive")
    return n


def _split(command: str, valued: dict[str, str], ios: dict[str, str], flags: tuple[str, ...]) -> tuple[dict[str, str], list[str], str]:
    """``(options by name, flags, destination)`` of a probe command (module doc)."""
    words = command.split()
    verb, rest = words[0].lower(), words[1:]
    if rest and rest[0].lower() in ("ip", "ipv6"):
        rest = rest[1:]
    opts: dict[str, str] = {}
    seen_flags: list[str] = []
    dest = None
    i = 0
    while i < len(rest):
        w = rest[i]
        key = valued.get(w) or (ios.get(w.lower()) if dest is not None else None)
        if key is not None:
            if i + 1 >= len(rest):
                raise ValueError(f"{w}: a value is missing")
            opts[key] = rest[i + 1]
            i += 2
            continue
        if w in flags:
            seen_flags.append(w)
        elif w in _REFUSED:
            raise ValueError(f"{w}: refused ({_REFUSED[w]}): a testcase's {verb} is bounded and never floods")
        elif w.startswith("-"):
            allowed = " ".join([*valued, *flags])
            raise ValueError(f"{w}: not an option a testcase's {verb} may use (allowed: {allowed})")
        elif dest is None:
            dest = w
        else:
            raise ValueError(f"{w!r}: one destination only (after it: {', '.join(ios) or 'nothing'})")
        i += 1
    if dest is None:
        raise ValueError(f"{verb}: no destination")
    try:
        ip_address(dest)
    except ValueError:
        raise ValueError(f"{dest!r}: not an IP address (a testcase's {verb} looks up no names)") from None
    return opts, seen_flags, dest


def _ping(command: str) -> Probe:
    opts, flags, dest = _split(command, _PING_VALUED, _PING_IOS, _FLAGS)
    count = min(int(_number("count", opts.get("count", str(PING_COUNT)), int)), PING_MAX_COUNT)
    wait = min(_number("wait", opts.get("wait", str(PING_WAIT_S))), PING_MAX_WAIT_S)
    if "deadline" in opts:  # accepted, not passed: with -w, -c counts replies and ping sends on
        _number("deadline", opts["deadline"])
    argv = ["ping", "-n", *[f for f in flags if f != "-n"], "-c", str(count), "-i", str(PING_INTERVAL_S),
            "-W", f"{wait:g}"]
    if "size" in opts:
        argv += ["-s", str(min(int(_number("size", opts["size"], int)), PING_MAX_SIZE))]
    if "ttl" in opts:
        argv += ["-t", str(min(int(_number("ttl", opts["ttl"], int)), 255))]
    if "source" in opts:
        argv += ["-I", opts["source"]]
    return Probe(argv=[*argv, dest], timeout_s=round((count - 1) * PING_INTERVAL_S + wait + 5, 1))  # + entering the namespace, under load


def _traceroute(command: str) -> Probe:
    opts, flags, dest = _split(command, _TRACE_VALUED, {}, (*_FLAGS[:1], "-I", *_FLAGS[2:]))
    hops = min(int(_number("hops", opts.get("hops", str(TRACE_HOPS)), int)), TRACE_MAX_HOPS)
    queries = min(int(_number("queries", opts.get("queries", str(TRACE_QUERIES)), int)), TRACE_MAX_QUERIES)
    wait = min(_number("wait", opts.get("wait", str(TRACE_WAIT_S))), TRACE_MAX_WAIT_S)
    argv = ["traceroute", "-n", *[f for f in flags if f != "-n"], "-m", str(hops), "-q", str(queries),
            "-w", f"{wait:g}"]
    if "source" in opts:
        argv += ["-s", opts["source"]]
    return Probe(argv=[*argv, dest], timeout_s=hops * queries * wait + 3)


def probe_argv(command: str) -> Probe:
    """The bounded :class:`Probe` of a ``ping`` / ``traceroute`` command (module doc). Raises
    ``ValueError`` for another verb, a refused or unknown option, or a bad destination."""
    words = command.split()
    verb = words[0].lower() if words else ""
    if verb == "ping":
        return _ping(command)
    if verb == "traceroute":
        return _traceroute(command)
    raise ValueError(f"{command!r}: not a ping or traceroute")
