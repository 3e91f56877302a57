"""Which names nft accepts as a set name (``set NAME {...}`` and ``@NAME`` in a rule).

Measured with nftables 1.0.6 (the lab's ``nft``): ``nft -c -f -`` of the script
:func:`ani.device.firewall.replace_script` writes, with one set NAME and one rule
``ip saddr @NAME drop``, for 1771 candidate words (every word of ``nft(8)`` and every quoted
token of libnftables' parser), in a throwaway network namespace. nft's scanner is case
sensitive and turns keywords into tokens, so a keyword is a syntax error where a name is
expected ("unexpected drop, expecting string"); a name starting with a digit scans as a number
("unexpected number, expecting string"). :data:`NFT_KEYWORDS` is the exact set of refused words
(``ll`` and ``nh`` are refused only after ``@``; ``and``, ``or``, ``not``, ``lt`` are operators).
Accepted, e.g.: ``DROP``, ``Ip`` (other case), ``_x``, ``x.y``, ``x-y``, ``saddr``, ``name``,
``state``. The integration test ``test_nft_refuses_exactly_the_keywords`` re-checks the list on
the lab's nft.
"""

from __future__ import annotations

import re

#: first character a letter or ``_`` (a digit scans as a number), then letters, digits, ``_.-``
SET_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,62}$")

#: the words nft 1.0.6 refuses as a set name (measured, see the module docstring)
NFT_KEYWORDS: frozenset[str] = frozenset("""
accept add ah all and arp auto-merge bridge cgroup chain comment comp constant continue counter
cpu create ct day dccp define delete describe device devices dnat drop dst dup dynamic ecn
element elements esp ether exists expires export exthdr fib flags flow flowtable flush frag fwd
gc-interval get goto handle hbh hook hour ibriport ibrname icmp icmpv6 igmp iif iifgroup iifname
iiftype import include index inet insert interval ip ip6 ipsec jhash jump limit list ll log lt
map mark masquerade meta meter mh missing monitor netdev nftrace nh not notrack numgen obriport
obrname offload oif oifgroup oifname oiftype or osf pkttype policy position priority queue quota
random redefine redirect reject rename replace reset return rt rt0 rt2 rtclassid rule ruleset
sctp secmark set size skgid skuid snat socket srh symhash synproxy table tcp th time timeout
tproxy type typeof udp udplite undefine update vlan vmap xt
""".split())


def check_set_name(name: str | None) -> str | None:
    """``name`` if nft accepts it as a set name (None passes). Raises ValueError saying why not:
    not ``[A-Za-z_][A-Za-z0-9_.-]{0,62}`` (e.g. a leading digit), or an nft keyword."""
    if name is None:
        return None
    if not SET_NAME_RE.match(name):
        raise ValueError(f"invalid set name {name!r}: expected a letter or '_' first, then letters,"
                         " digits, '_', '.', '-' (at most 63 characters); nft reads a leading digit"
                         " as a number")
    if name in NFT_KEYWORDS:
        raise ValueError(f"invalid set name {name!r}: an nft keyword (nft refuses it with a syntax"
                         " error); another case ('" + name.upper() + "') or a prefix works")
    return name
