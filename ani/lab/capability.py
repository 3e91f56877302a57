"""Up-front check that the host can run a lab; raises CapabilityMissing with what to install.

The checks themselves live in :mod:`ani.host.checks` (one checker, also behind ``ani doctor``
and the host check of ``ani run`` / ``ani campaign run``); this is the lab's entry point.
"""

from __future__ import annotations

from ani.host.checks import check_lab


def check_capabilities(daemons: set[str] | None = None) -> None:
    """Raise CapabilityMissing naming every missing piece a lab needs, each with its fix: root,
    the lab's programs (iproute2, util-linux, FRR's zebra, staticd and vtysh, nft, ...; see
    ``ani/host/packages.txt``), each FRR daemon in ``daemons``, and the kernel features
    (network, mount and UTS namespaces, veth links, nftables; probed in a throw-away netns)."""
    check_lab(daemons or ())
