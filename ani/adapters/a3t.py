"""A3-T: typed service intents applied as cross-device transactions (NMAA level A3-T).

The agent names *services* (``ani.intents``: a tenant site, a firewall policy, a static route,
a BGP peering, ...), never device lines. The adapter compiles the changes against the live
configuration of every router (``ani.device.apply.read``: FRR + nftables, read at each call),
validates them, and applies the result as ONE transaction over the routers' NETCONF servers
(``ani.intents.transaction.run_transaction``: lock, edit, validate, confirmed commit, active
validation, confirm; or roll back all, and check that every router is back).

Tools (``data`` keys in brackets):

- ``get_topology(devices=[])`` (inherited)
- read-only, from :class:`ani.adapters.service_tools.ServiceReadTools`: ``list_service_types()``,
  ``get_service_schema(type)``, ``list_services(type=None)``, ``get_service(id)``,
  ``plan(changes)`` (dry run: per-router diff, allocations, the checks apply would run),
  ``get_state(device, what)``
- ``apply(changes, confirm_timeout_s=None)`` the transaction [transaction
  (``TransactionResult.to_dict()``: ok, phase, error, restored_verified, checks, routers),
  allocations, services (ids touched), routers, changes]:

  - refused before anything reaches a router: ``invalid_intent`` (``data.errors``
    [{code, message, path}]) or ``resource_exhausted`` (an empty pool, named), exactly as ``plan``;
  - nothing to change (every router already as intended): ok, ``changed=False``, no transaction;
  - the transaction failed and every router was verified back to its prior config:
    ``rolled_back`` (``data.transaction.restored_verified`` True); the message names the phase
    and the router or the failed checks;
  - it failed and a router could not be verified back: ``rollback_failed`` (names the routers);
  - ok: ``changed=True``.

  Active validation (:func:`ani.intents.checks.active_checks`): the service's own checks and the
  baseline invariants of the services it touches, evaluated by the observer bounded by
  ``check_bound_s``.

Options (checked at construction; unknown keys, wrong types or values out of range raise
ConfigError naming the option):

- ``confirm_timeout_s`` (int, 60): confirm timeout of the transaction's confirmed commits;
- ``site_network`` (str | None, None): the network new site prefixes are allocated from when a
  ``tenant-site`` onboard gives no prefix (None: the prefix must be given; without it the change
  is refused with ``invalid_intent`` naming this option);
- ``site_prefixlen`` (int, 24): their length;
- ``seq_limit`` (int | None, None = 2**32-1): the largest sequence number the ``seq/<router>/<list>``
  pools hand out (a small value exhausts them: the pool-exhaustion fault);
- ``check_bound_s`` (float, 20): bound on the active validation's retry-until-converged, seconds;
- ``busy_timeout_s`` (float, 120): how long a call waits for the adapter's other calls, seconds;
- bounds of one change set (issue 23): ``max_changes`` (int, 200) changes and ``max_router_lines``
  (int, 1000, the lab's NETCONF commit bound) changed configuration lines per router, more is
  ``invalid_intent`` (code ``too-large``) before anything is read or sent; ``plan_bound_s``
  (float, 60): compiling stops with ``timeout``; ``apply_bound_s`` (float, 300): the transaction
  starts no step after it and rolls back what it committed (``rolled_back``).

Concurrency: the adapter's calls run one at a time (an ``apply`` is a transaction over every
router it touches, and the read-only tools read every router's live config, which must not be
caught half-way through one); ``get_topology`` runs at any time. A call that waited
``busy_timeout_s`` answers ``timeout`` (retriable) naming the call it waited for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ani.adapters.a3t_args import A3TOptions, ApplyArgs
from ani.adapters.base import BaseAdapter, tool
from ani.adapters.options import parse_options
from ani.adapters.service_tools import ServiceReadTools
from ani.errors import ErrorCode
from ani.protocol import Level, ToolResult

from ani.lab.protocol import NetconfCapable

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["A3TAdapter"]


class A3TAdapter(ServiceReadTools, BaseAdapter):
    """Typed service intents + transactions (see the module doc).

    Args:
        lab: a running :class:`ani.lab.Lab` with NETCONF servers.
        trajectory: where calls are logged.
        options: see the module doc. Raises ConfigError for a bad one.
    """

    level: ClassVar[Level] = Level.A3T
    needs: ClassVar[tuple[type, ...] | None] = (NetconfCapable,)  # its transactions (ani.intents.transaction)

    def __init__(self, lab: Lab, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.settings = parse_options(A3TOptions, self.options, str(self.level))
        self.__dict__.update(self.settings)  # each option is an attribute: self.confirm_timeout_s, ...

    def call_bound_s(self, name: str, args: Any) -> float:
        return self.busy_timeout_s

    def _service_configs(self) -> dict[str, Any]:
        """The live config of every router (FRR + nftables), read now (side by side:
        :func:`ani.device.apply.read_many`)."""
        from ani.device.apply import read_many

        return read_many(self.lab, list(self.lab.topology.routers))

    @tool(args=ApplyArgs, destructive=True,
          description=("Apply service changes as one transaction across every router they touch: validate "
                       "(as plan), lock, write and validate the candidates, confirmed commit on all, run the "
                       "active validation checks (the service's own and the baseline invariants of what it "
                       "touches), then confirm on all, or roll all back (the result says which phase failed and "
                       "that every router is back to its prior config). Run plan first to review the diff."))
    def apply(self, args: ApplyArgs) -> ToolResult:
        from ani.intents.transaction import run_transaction

        got = self._service_plan(args.changes)
        if isinstance(got, ToolResult):
            return got
        _before, result, checks = got
        services = sorted({c.service_id() for c in result.changes})
        data: dict[str, Any] = {"allocations": dict(result.allocations), "services": services,
                                "routers": result.routers,
                                "changes": [c.model_dump(mode="json", exclude_none=True) for c in result.changes]}
        if not result.configs:
            data["transaction"] = None
            return ToolResult.success("nothing to change: every router already runs the intended config", data)
        timeout = args.confirm_timeout_s or self.confirm_timeout_s
        tx = run_transaction(self.lab, result.configs, checks=checks, confirm_timeout_s=timeout,
                             check_bound_s=self.check_bound_s, bound_s=self.apply_bound_s)
        data["transaction"] = tx.to_dict()
        if tx.ok:
            alloc = ", ".join(f"{k}={v}" for k, v in result.allocations.items())
            text = (f"applied {', '.join(services)} on {', '.join(result.routers)}; "
                    f"{len(tx.checks)} active validation checks passed" + (f"; allocated {alloc}" if alloc else ""))
            return ToolResult.success(text, data, changed=True)
        failed_checks = [c["name"] for c in tx.checks if not c["passed"]]
        hint = "".join(f"; note: {w}" for w in self._topology_warnings(result.changes)) if tx.phase == "active-validation" else ""
        if tx.restored_verified:
            msg = (f"transaction failed in phase {tx.phase}: {tx.error}; rolled back, every router "
                   f"({', '.join(result.routers)}) verified back to its prior config{hint}")
            return ToolResult.failure(ErrorCode.ROLLED_BACK, msg,
                                      data={**data, "failed_checks": failed_checks})
        bad = [r for r, d in tx.routers.items() if not d.restored]
        msg = (f"transaction failed in phase {tx.phase}: {tx.error}; rollback could not be verified on "
               f"{', '.join(bad)} (their running config differs from before)")
        return ToolResult.failure(ErrorCode.ROLLBACK_FAILED, msg, changed=True,
                                  data={**data, "failed_checks": failed_checks, "not_restored": bad})
