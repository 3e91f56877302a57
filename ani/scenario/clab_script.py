"""A scenario's baseline invariants as a bash script over a deployed Containerlab lab.

``check-invariants.sh`` (written by ``ani scenario export --format containerlab``) runs on the
Containerlab host: each invariant is one line calling a function of the script, which looks
into the containers with ``docker exec clab-<lab>-<node> ...`` the way ani's observer looks into
a lab's namespaces (:mod:`ani.observer.evaluate`):

- ``reach`` (``expect: true``): a ping from ``src`` to ``dst`` answered; ``isolated``
  (``expect: false``): ping ran and none of its ``NEG_PINGS`` (default 3) pings was answered
  (read from ping's summary, ``N received``, as the observer reads it: a ping that could not run
  is a failure, not isolation);
- ``loopback``: a ping from the router to the address, sourced from ``source``;
- ``bgp_session``: the neighbor's ``state`` in ``show bgp summary json`` is Established;
- ``route``: ``show ip route PREFIX json`` has exactly the prefix (or not, ``expect: false``),
  with an entry of the protocol / next hop / distance given, and (asked only when a check gives
  them) the best path of ``show bgp ipv4 unicast PREFIX json`` carries the local preference /
  community given;
- ``command``: the output of ``vtysh -c C1 -c C2 ...`` has a match of the regular expression
  (Python's ``re.search`` with ``re.MULTILINE``, as the observer).

The JSON and regular expressions are judged by a short Python program run inside the router's
container (FRR's images ship python3). A positive check (and a route's absence) is retried
``TRIES`` times (default 20) one second apart, as the observer retries within its bound; an
isolation check looks once. Exit 0 when every invariant holds, 1 otherwise; each result is
printed ``ok   NAME`` or ``FAIL NAME``.
"""

from __future__ import annotations

import shlex
from typing import Any

from ani.observer.checks import BgpSessionCheck, CommandCheck, LoopbackCheck, ReachCheck, RouteCheck

_JUDGE = r'''
import json, re, sys
kind, args, text = sys.argv[1], sys.argv[2:], sys.stdin.read()
if kind == "command":
    sys.exit(0 if re.search(args[0], text, re.M) else 1)
docs, dec, i = [], json.JSONDecoder(), 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    try:
        doc, i = dec.raw_decode(text, i)
    except ValueError:
        break
    docs.append(doc if isinstance(doc, dict) else {})
docs += [{}, {}]
if kind == "bgp":
    sys.exit(0 if any(isinstance(af, dict) and isinstance(af.get("peers"), dict)
                      and (af["peers"].get(args[0]) or {}).get("state") == "Established"
                      for af in docs[0].values()) else 1)
prefix, expect, want = args[0], args[1] == "1", dict(a.split("=", 1) for a in args[2:])
entries = [e for e in docs[0].get(prefix, []) if isinstance(e, dict)]
def fits(e):
    hops = [h.get("ip") for h in e.get("nexthops", []) if isinstance(h, dict)]
    return (want.get("protocol") in (None, e.get("protocol"))
            and want.get("distance") in (None, str(e.get("distance")))
            and want.get("next_hop") in (None, *hops))
present = any(fits(e) for e in entries)
if not expect:
    sys.exit(1 if present else 0)
if not present:
    sys.exit(1)
if "local_pref" in want or "community" in want:
    best = [p for p in docs[1].get("paths", []) if isinstance(p, dict) and (p.get("bestpath") or {}).get("overall")]
    if not best:
        sys.exit(1)
    comms = str((best[0].get("community") or {}).get("string", "")).split()
    if "local_pref" in want and str(best[0].get("locPrf")) != want["local_pref"]:
        sys.exit(1)
    if "community" in want and want["community"] not in comms:
        sys.exit(1)
sys.exit(0)
'''

_PRELUDE = r'''set -u
PREFIX=${PREFIX:-clab-@LAB@}   # Containerlab names the containers clab-<lab>-<node>
TRIES=${TRIES:-20}             # attempts of a positive check, one second apart
NEG_PINGS=${NEG_PINGS:-3}      # pings of an isolation check, none may be answered
pass=0; fail=0
JUDGE=$(cat <<'PY'
@JUDGE@
PY
)

attempt() {  # COMMAND...: up to TRIES times until it succeeds
  local i
  for ((i = 1; i <= TRIES; i++)); do
    "$@" && return 0
    [ "$i" -lt "$TRIES" ] && sleep 1
  done
  return 1
}
result() {  # STATUS NAME
  if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi
}
received() {  # NODE COUNT PING-ARGS...: prints how many pings were answered, nothing if ping failed
  local node=$1 count=$2; shift 2
  docker exec "$PREFIX-$node" ping -q -c "$count" -W 1 "$@" 2>/dev/null | sed -nE 's/.* ([0-9]+) (packets )?received.*/\1/p'
}
answered() { local n; n=$(received "$@"); [ -n "$n" ] && [ "$n" -gt 0 ]; }   # some answer
unanswered() { local n; n=$(received "$@"); [ "$n" = 0 ]; }                   # ping ran, no answer
judge() {  # ROUTER KIND COMMAND... -- ARGS...: vtysh's output judged inside the router
  local r=$1 kind=$2 cmds=(); shift 2
  while [ "$1" != -- ]; do cmds+=(-c "$1"); shift; done; shift
  docker exec "$PREFIX-$r" vtysh "${cmds[@]}" 2>/dev/null | docker exec -i "$PREFIX-$r" python3 -c "$JUDGE" "$kind" "$@"
}
reach()    { attempt answered "$2" 1 "$3"; result $? "$1"; }           # NAME SRC DST
isolated() { unanswered "$2" "$NEG_PINGS" "$3"; result $? "$1"; }        # NAME SRC DST
loopback() { attempt answered "$2" 1 -I "$4" "$3"; result $? "$1"; }    # NAME ROUTER ADDRESS SOURCE
bgp()      { attempt judge "$2" bgp "show bgp summary json" -- "$3"; result $? "$1"; }  # NAME ROUTER NEIGHBOR
route() {  # NAME ROUTER PREFIX EXPECT(1|0) [protocol=|next_hop=|distance=|local_pref=|community=VALUE...]
  local name=$1 r=$2 p=$3; shift 3
  local cmds=("show ip route $p json")
  case " $* " in *" local_pref="* | *" community="*) cmds+=("show bgp ipv4 unicast $p json") ;; esac
  attempt judge "$r" route "${cmds[@]}" -- "$p" "$@"; result $? "$name"
}
vtycmd() {  # NAME ROUTER REGEX COMMAND...
  local name=$1 r=$2 re=$3; shift 3
  local cmds=("$@")
  attempt judge "$r" command "${cmds[@]}" -- "$re"; result $? "$name"
}
'''


def check_line(check: Any) -> str:
    """The script line of one check (``reach NAME SRC DST``, ...), every argument shell-quoted."""
    q = shlex.quote
    if isinstance(check, ReachCheck):
        fn = "reach" if check.expect else "isolated"
        args = [check.src, str(check.dst)]
    elif isinstance(check, LoopbackCheck):
        fn, args = "loopback", [check.router, str(check.address)]
        if check.source is not None:
            args.append(str(check.source))
        else:
            fn, args = "reach", [check.router, str(check.address)]
    elif isinstance(check, BgpSessionCheck):
        fn, args = "bgp", [check.router, str(check.neighbor)]
    elif isinstance(check, RouteCheck):
        fn, args = "route", [check.router, str(check.prefix), "1" if check.expect else "0"]
        for key in ("protocol", "next_hop", "distance", "local_pref", "community"):
            value = getattr(check, key)
            if value is not None:
                args.append(f"{key}={value}")
    elif isinstance(check, CommandCheck):
        fn, args = "vtycmd", [check.router, check.expect, *check.commands]
    else:  # pragma: no cover - every kind of ani.observer.checks is above
        raise ValueError(f"unknown check kind {check.kind!r}")
    return " ".join([fn, q(check.name), *(q(a) for a in args)])


def invariants_script(lab: str, scenario_name: str, checks: list[Any]) -> str:
    """``check-invariants.sh`` for Containerlab lab ``lab`` (containers ``clab-<lab>-<node>``)
    checking ``checks`` (the scenario's baseline invariants), one line per check."""
    head = (f"#!/usr/bin/env bash\n"
            f"# Baseline invariants of the ani scenario {scenario_name}: {len(checks)} checks, as ani's observer\n"
            f"# makes them (docs/scenarios.md, Containerlab). Run on the Containerlab host after\n"
            f"#   containerlab deploy -t {lab}.clab.yml\n"
            f"# Exit 0 when every invariant holds, 1 otherwise. Needs docker; python3 in the router image.\n")
    body = _PRELUDE.replace("@LAB@", lab).replace("@JUDGE@", _JUDGE.strip("\n"))
    lines = [check_line(c) for c in checks]
    tail = ('\necho "$pass/$((pass + fail)) invariants hold"\n'
            '[ "$fail" = 0 ]\n')
    return head + body + "\n" + "\n".join(lines) + "\n" + tail
