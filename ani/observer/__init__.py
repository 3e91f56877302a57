"""The observer: checks (reach, BGP session, loopback, route, command) and their out-of-band evaluation."""

from ani.observer.checks import (
    BgpSessionCheck,
    Check,
    CommandCheck,
    LoopbackCheck,
    ReachCheck,
    RouteCheck,
    dump_checks,
    parse_checks,
)
from ani.observer.evaluate import CheckResult, Observer, summarize

__all__ = [
    "BgpSessionCheck",
    "Check",
    "CheckResult",
    "CommandCheck",
    "LoopbackCheck",
    "Observer",
    "ReachCheck",
    "RouteCheck",
    "dump_checks",
    "parse_checks",
    "summarize",
]
