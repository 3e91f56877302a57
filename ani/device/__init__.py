"""The device model: a structured, validated model of a router's FRR configuration.

``parse(text) -> DeviceConfig`` reads FRR's ``show running-config`` (or a startup config);
``render(model) -> str`` writes it back in the form FRR prints it. See :mod:`ani.device.model`
for the shape and the canonical form, :mod:`ani.device.render` for the text form and
``frr_body`` / ``normalise`` (what is compared with FRR's output).
"""

from ani.device.model import (
    Bgp,
    BgpAf,
    BgpAfPeer,
    DeviceConfig,
    Interface,
    InterfaceOspf,
    Ospf,
    OspfNetwork,
    Peer,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.device.parse import parse
from ani.device.render import frr_body, normalise, render

__all__ = [
    "Bgp",
    "BgpAf",
    "BgpAfPeer",
    "DeviceConfig",
    "Interface",
    "InterfaceOspf",
    "Ospf",
    "OspfNetwork",
    "Peer",
    "PrefixList",
    "PrefixListEntry",
    "RouteMap",
    "RouteMapEntry",
    "StaticRoute",
    "frr_body",
    "normalise",
    "parse",
    "render",
]
