"""What a NETCONF server said it can do in its ``<hello>`` (RFC 6241 §8.1): its capabilities and
the YANG modules it announces (``<namespace>?module=<name>&revision=<date>``, RFC 6020 §5.6.4).

A client checks the hello once per session, at connect, and refuses an operation the server
did not announce before sending anything (:meth:`ServerHello.missing`), instead of sending it
and reading a transport failure or an empty answer. The protocol features named here:

==================== ============================================================ ==============
feature              capability URI(s) (any one)                                  RFC 6241
==================== ============================================================ ==============
``candidate``        ``urn:ietf:params:netconf:capability:candidate:1.0``         §8.3
``confirmed-commit`` ``urn:ietf:params:netconf:capability:confirmed-commit:1.1``  §8.4
                     (1.0 has no ``cancel-commit`` nor ``persist``: not enough)
``validate``         ``...:capability:validate:1.1`` or ``:1.0``                  §8.6
``monitoring``       the ``ietf-netconf-monitoring`` module (``get-schema``)      RFC 6022
==================== ============================================================ ==============
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

CAP = "urn:ietf:params:netconf:capability:"
#: a server announcing this lists its YANG 1.1 modules in the YANG library (``/modules-state``,
#: RFC 7895), not in its hello (RFC 7950 §5.6.4): its hello alone cannot say a module is missing
YANG_LIBRARY = f"{CAP}yang-library:"
YANG_LIBRARY_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
#: feature -> the capability URIs that provide it (any one)
FEATURES: dict[str, tuple[str, ...]] = {
    "candidate": (f"{CAP}candidate:1.0",),
    "confirmed-commit": (f"{CAP}confirmed-commit:1.1",),
    "validate": (f"{CAP}validate:1.1", f"{CAP}validate:1.0"),
}
#: feature -> the module that provides it
MODULE_FEATURES = {"monitoring": "ietf-netconf-monitoring"}


@dataclass(frozen=True)
class ServerHello:
    """A server's hello, parsed.

    Attributes:
        capabilities: every capability URI, as sent.
        modules: ``{module name: revision or ""}`` of the ``?module=`` URIs.
    """

    capabilities: frozenset[str]
    modules: dict[str, str]

    @classmethod
    def parse(cls, capabilities: Iterable[str]) -> ServerHello:
        """From the capability URIs of a hello (e.g. ncclient's ``server_capabilities``)."""
        caps = frozenset(str(c).strip() for c in capabilities)
        modules: dict[str, str] = {}
        for c in sorted(caps):
            q = parse_qs(urlsplit(c).query)
            if "module" in q:
                modules[q["module"][0]] = (q.get("revision") or [""])[0]
        return cls(caps, modules)

    @property
    def lists_modules(self) -> bool:
        """False when the server has a YANG library, where its YANG 1.1 modules are listed
        instead of in the hello."""
        return not any(c.startswith(YANG_LIBRARY) for c in self.capabilities)

    def serves(self, module: str) -> bool | None:
        """Whether the server serves YANG module ``module``: True if the hello announces it,
        False if not and the hello lists every module, None if not and the server has a YANG
        library (ask it: ``/modules-state``)."""
        if module in self.modules:
            return True
        return False if self.lists_modules else None

    def has(self, feature: str) -> bool:
        """Whether the server announced ``feature`` (a key of :data:`FEATURES` or
        :data:`MODULE_FEATURES`, else KeyError)."""
        if feature in MODULE_FEATURES:  # unknown (a YANG library): not refused here
            return self.serves(MODULE_FEATURES[feature]) is not False
        uris = {c.split("?", 1)[0] for c in self.capabilities}
        return any(u in uris for u in FEATURES[feature])

    @property
    def commit_bound_s(self) -> float | None:
        """Seconds after which the server stops (and rolls back) a commit still applying: the
        ``?seconds=`` of ani's commit-bound capability (:data:`ani.netconf.rpc.COMMIT_BOUND_CAPABILITY`),
        None when the server does not announce one (any other NETCONF server)."""
        from ani.netconf.rpc import COMMIT_BOUND_CAPABILITY

        for c in self.capabilities:
            if c.split("?", 1)[0] == COMMIT_BOUND_CAPABILITY:
                try:
                    return float((parse_qs(urlsplit(c).query).get("seconds") or [""])[0])
                except ValueError:
                    return None
        return None

    def missing(self, features: Iterable[str]) -> list[str]:
        """The ``features`` the server did not announce, in the order given."""
        return [f for f in features if not self.has(f)]

    @staticmethod
    def needs(feature: str) -> str:
        """What announces ``feature``: ``"capability urn:...:candidate:1.0"`` or ``"module
        ietf-netconf-monitoring"``."""
        if feature in MODULE_FEATURES:
            return f"module {MODULE_FEATURES[feature]}"
        return "capability " + " or ".join(FEATURES[feature])

    def module_list(self, limit: int | None = None) -> str:
        """``"ietf-interfaces@2014-05-08, yuma-proc@..."`` (``none`` for no module); with
        ``limit``, at most that many named and the rest counted: ``"a@1, b@2, c@3 and 21 more
        (24 modules)"``."""
        names = [f"{m}@{r}" if r else m for m, r in sorted(self.modules.items())]
        if limit is not None and len(names) > limit:
            return f"{', '.join(names[:limit])} and {len(names) - limit} more ({len(names)} modules)"
        return ", ".join(names) or "none"
