#!/usr/bin/env python3
"""The scripted agent's push, computed locally: the FRR remediation lines
(``ani.device.remediation.frr_commands``: hier-config with the FRR driver), the nft commands
(``ani.agents.nft_changes.nft_commands``) and the A2 edit-config (``ani.agents.yang_edit``) of
one router's change, pure (no lab).

Usage::

    .venv/bin/python benchmarks/push_diff.py [-n 50] [--entries 0 500]

The router is brownfield-small's ``e1`` with ``--entries`` extra prefix-list entries (and as
many set elements), a dense router; the change is one new site (prefix-list entry, interface
address, set element) and one removed entry. Figures: median / min / max milliseconds per
computation over ``-n`` runs, for each density.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ani.device.remediation import frr_commands  # noqa: E402
from ani.agents.nft_changes import nft_commands  # noqa: E402
from ani.agents.yang_edit import edit_config_xml  # noqa: E402
from ani.device.model import Firewall, FirewallSet, PrefixListEntry  # noqa: E402
from ani.device.parse import parse  # noqa: E402
from ani.scenario.manifest import load_scenario  # noqa: E402


def _router(extra: int):  # type: ignore[no-untyped-def]
    sc = load_scenario(str(ROOT / "scenarios/brownfield-small.yaml"))
    cfg = parse(sc.topology.routers["e1"].config)
    pl = cfg.prefix_lists["PL-TENANTS"]
    nets = [IPv4Network(f"198.{20 + i // 256}.{i % 256}.0/24") for i in range(extra)]
    pl.entries += [PrefixListEntry(seq=1000 + 10 * i, action="permit", prefix=n) for i, n in enumerate(nets)]
    cfg = cfg.model_copy(update={"firewall": Firewall(sets={"tenant_blue": FirewallSet(elements=nets)})})
    return cfg.canonical()


def _change(cfg):  # type: ignore[no-untyped-def]
    want = cfg.model_copy(deep=True)
    pl = want.prefix_lists["PL-TENANTS"]
    pl.entries = pl.entries[1:] + [PrefixListEntry(seq=999999, action="permit", prefix="198.19.4.0/24")]
    want.interfaces["to-blue1"].addresses.append(IPv4Interface("198.19.4.1/24"))
    want.firewall.sets["tenant_blue"].elements.append(IPv4Network("198.19.4.0/24"))
    return want.canonical()


def _size(out) -> str:  # type: ignore[no-untyped-def]
    return f"{len(out)} lines" if isinstance(out, list) else f"{len(out or '')} characters of XML"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--entries", type=int, nargs="+", default=[0, 500])
    args = ap.parse_args()
    for extra in args.entries:
        before = _router(extra)
        after = _change(before)
        for name, fn in (("frr_commands", lambda: frr_commands(before, after)),
                         ("nft_commands", lambda: nft_commands(before.firewall, after.firewall)),
                         ("edit_config_xml", lambda: edit_config_xml(before, after))):
            fn()  # warm (hier-config driver, YANG schema)
            ms = []
            for _ in range(args.n):
                t0 = time.perf_counter()
                fn()
                ms.append((time.perf_counter() - t0) * 1000)
            print(f"entries={extra:5d} {name:16s} median {statistics.median(ms):7.2f} ms  "
                  f"min {min(ms):7.2f}  max {max(ms):7.2f}  (n={args.n}; output: {_size(fn())})")


if __name__ == "__main__":
    main()
