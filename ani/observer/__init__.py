"""The observer: checks (reach, BGP session, loopback, route) and their out-of-band evaluation."""

from ani.observer.checks import (
    BgpSessionCheck,
    Check,
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
    "LoopbackCheck",
    "Observer",
    "ReachCheck",
    "RouteCheck",
    "dump_checks",
    "parse_checks",
    "summarize",
]
