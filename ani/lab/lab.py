# size: the Lab contract: namespaces, daemons and NETCONF servers up and down as one object
"""The Lab: real FRR routers and hosts in Linux network namespaces.

CONTRACT (other modules code against these signatures; keep them):

    lab = Lab(topology, lab_id=None, detached=False, netconf=True, prefix=None)
    lab.up()                -> Lab       # returns when routing has converged (and, with netconf,
                                         # the NETCONF server listens); raises ConvergenceTimeout
    lab.down()              -> None      # idempotent; removes only this lab's namespaces, PIDs, files
    with Lab(topology) as lab: ...       # up() on enter, down() on exit (also on exceptions)
    lab.id: str; lab.topology: Topology; lab.dir: Path  (/run/ani/labs/<id>)
    lab.routers / lab.hosts -> list[str]
    lab.netns(node) -> str               # "ani-<id>-<node>"
    lab.pathspace(router) -> str         # FRR -N pathspace (same string as netns)
    lab.exec(node, argv, timeout=10.0, input=None) -> ExecResult
        # runs argv inside the node's netns, under a private UTS namespace whose hostname is
        # the node's name; for routers PATH starts with a dir holding a `vtysh` wrapper bound
        # to the router's pathspace (plain `vtysh` reaches this router's FRR and no other)
    lab.node_argv(node, argv) -> list[str]   # the host-side argv lab.exec() runs (used by
        # scrapli's bin transport and by the A0 sandbox)
    lab.vtysh(router, commands: list[str] | str, timeout=10.0) -> ExecResult   # vtysh -c ... -c ...
    lab.vtysh_json(router, command, timeout=10.0) -> dict | list               # parsed `... json`
    lab.running_config(router) -> str        # `show running-config` text (ani.device.state.read_frr)
    lab.wait_converged(timeout_s=None) -> None   # raises ConvergenceTimeout naming what is pending
    Lab.attach(lab_id) -> Lab                # from the state file of a running lab; LabNotFound;
                                             # its down() never removes the lab (Lab.down_id does)
    Lab.list_labs() -> list[dict]            # id, name, prefix, owner_pid, alive, nodes, created
    Lab.down_stale(prefix=None) -> list[str] # ids of labs removed because their owner is gone

Additions: ``lab.timings`` (seconds of the last up/down phases), ``lab.node_dir(node)`` (the node's directory holding ``enter`` and, for routers,
``bin/vtysh``), ``Lab.down_id(lab_id)`` (remove a lab by id whatever its state),
``lab.netconf_endpoint(router) -> NetconfEndpoint(host, port, username, password)`` (the
per-router NETCONF server, see :mod:`ani.lab.netconf`), ``lab.restart_netconf(sig=SIGTERM)
-> {router: port}`` (stop and start that server: the fault injector's seam),
``lab.netconf_lock(router, target="running") -> NetconfLock | None`` (who holds a NETCONF lock),
``lab.daemon_pids(router)``, ``lab.freeze_netconf(router, frozen=True)``, ``lab.netconf_frozen()``
(a frozen router's management plane: the fault injector's seam, :mod:`ani.faults.kinds.frozen_router`),
``lab.ssh_endpoint(router) -> SshEndpoint(host, port, username, password, private_key, known_hosts)``
(the router's CLI over SSH on 127.0.0.1, see :mod:`ani.lab.ssh`; the ports are also in the state
file, ``ssh_ports``).
"""

from __future__ import annotations

import secrets
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ani.errors import ConvergenceTimeout, LabError, LabGone, LabIdError, LabNotFound, UnknownNode
from ani.names import known_list, unknown
from ani.host import nft, proc
from ani.host.proc import ExecResult
from ani.host.programs import program, read_fault_log, require
from ani.host.threads import ContextPool
from ani.lab import cleanup, converge, frr, memcg, netns, reaper, runconf, vty
from ani.lab import netconf as nc
from ani.lab import ssh as ssh_cli
from ani.lab.capability import check_capabilities
from ani.lab.state import (LAB_ID_RE, LabState, check_prefix, lab_dir, lab_ids, new_state, node_ns, read_state,
                           write_state)
from ani.lab.topology import Topology, load_topology

__all__ = ["Lab", "ExecResult"]

POLL_S = 0.15


class Lab:
    """A running (or to-be-run) lab of one topology. See the module docstring for the contract.

    It satisfies :class:`ani.lab.protocol.Lab` and every capability protocol there
    (``tests/unit/test_lab_protocol.py``).

    Args:
        topology: a :class:`Topology` or the path of a topology / scenario file.
        lab_id: ``[a-z0-9]{1,12}``; default 6 random hex characters.
        detached: the lab survives its creating process (``ani lab up``); otherwise it is removed
            at interpreter exit / SIGTERM and by ``Lab.down_stale()`` once its owner is gone.
        netconf: run the lab's NETCONF server (``python -m ani.lab.netconf_server``, one 127.0.0.1
            port per router, see :meth:`netconf_endpoint`); it starts with the build and runs
            while routing converges.
        ssh: run the lab's SSH server of the routers' CLIs (``python -m ani.lab.ssh_server``, one
            127.0.0.1 port per router, see :meth:`ssh_endpoint` and :mod:`ani.lab.ssh`); it starts
            with the build too.
        prefix: a label for the lab's owner to find it by on a shared machine (``ani lab status
            --prefix P``, ``ani lab down --prefix P``; e.g. a campaign's name), stored
            in the state file; :data:`ani.lab.state.PREFIX_RE`; None: no prefix. Not part of
            any namespace name (those use the id).
        router_memory_bytes: each router's memory bound, bytes: its FRR daemons and every vtysh
            run on it (the harness's, A1's, the A0 broker's) share one memory cgroup
            ``ani-frr-<id>-<router>`` (:mod:`ani.lab.memcg`); default ``$ANI_ROUTER_MEMORY_MAX``,
            else 1 GiB (:data:`ani.lab.memcg.DEFAULT_ROUTER_MEMORY_BYTES`).

    Raises:
        LabError: bad ``lab_id``, ``prefix`` (LabIdError) or ``router_memory_bytes`` (or ``$ANI_ROUTER_MEMORY_MAX``). TopologyError: bad topology file.
    """

    def __init__(self, topology: Topology | str | Path, lab_id: str | None = None, detached: bool = False,
                 netconf: bool = True, ssh: bool = True, router_memory_bytes: int | None = None,
                 prefix: str | None = None):
        if not isinstance(topology, Topology):
            topology = load_topology(topology)
        if lab_id is None:
            lab_id = secrets.token_hex(3)
        if not LAB_ID_RE.match(lab_id):
            raise LabIdError(f"lab id {lab_id!r} must match [a-z0-9]{{1,12}}")
        self.id = lab_id
        self.prefix = check_prefix(prefix)
        self.topology = topology
        self.detached = detached
        self.netconf = netconf
        self.ssh = ssh
        #: each router's memory bound, bytes (its FRR daemons and the vtysh runs on it together)
        self.router_memory_bytes = memcg.configured_bytes(router_memory_bytes)
        self.dir = lab_dir(lab_id)
        self._state: LabState | None = None
        self._lock = threading.Lock()
        self._owned = False  # this object created the lab (and must remove it)
        self._netconf_proc: subprocess.Popen[bytes] | None = None
        self._ssh_proc: subprocess.Popen[bytes] | None = None
        self._reaper_proc: subprocess.Popen[bytes] | None = None
        #: each router's last ``show running-config`` text, with what it was made of (ani.lab.runconf)
        self._running = runconf.RunningConfigs(lambda r: frr.run_dir(self.pathspace(r)),
                                               lambda r: frr.etc_dir(self.pathspace(r)) / "vtysh.conf",
                                               lambda r: self.node_dir(r) / "runconf")
        #: seconds spent in the last up()/down(): ``build_s``, ``converge_s``, ``down_s``, and
        #: ``netconf_wait_s`` / ``ssh_wait_s`` (waiting for the NETCONF / SSH server after convergence)
        self.timings: dict[str, float] = {}
        #: what had not converged when ``up()`` returned (``convergence.required: false`` only)
        self.unconverged: list[str] = []

    def __repr__(self) -> str:
        return f"Lab(id={self.id!r}, name={self.topology.name!r})"

    # -- names -----------------------------------------------------------------------------------

    @property
    def routers(self) -> list[str]:
        return list(self.topology.routers)

    @property
    def hosts(self) -> list[str]:
        return list(self.topology.hosts)

    def _check_node(self, node: str) -> None:
        if node not in self.topology.routers and node not in self.topology.hosts:
            raise UnknownNode(f"lab {self.id}: " + unknown("node", node, self.topology.nodes))

    def netns(self, node: str) -> str:
        """``ani-<id>-<node>``. Raises UnknownNode."""
        self._check_node(node)
        return node_ns(self.id, node)

    def pathspace(self, router: str) -> str:
        """The FRR ``-N`` pathspace of ``router`` (same string as its netns). Raises UnknownNode."""
        if router not in self.topology.routers:
            self._check_node(router)
            raise UnknownNode(f"lab {self.id}: {router!r} is a host, not a router; known routers: "
                              + known_list(self.topology.routers))
        return self.netns(router)

    def startup_config_path(self, router: str) -> Path:
        """The file ``write memory`` on ``router`` writes: ``/etc/frr/<pathspace>/frr.conf``
        (what the device layer checks after writing the startup config, without knowing how
        this lab lays out FRR's files). Raises UnknownNode."""
        return frr.etc_dir(self.pathspace(router)) / "frr.conf"

    def dead_daemons(self, router: str) -> list[str]:
        """The FRR daemons this lab started on ``router`` that are not running now (killed,
        crashed), sorted. Raises UnknownNode."""
        ps = self.pathspace(router)
        pids = self._state.pids.get(router, {}) if self._state is not None else {}
        return sorted(d for d, pid in pids.items() if not frr.owns(pid, ps, d))

    # --- one daemon (issue 14, faults: daemon restart) ---
    def daemon_pid(self, router: str, daemon: str) -> int | None:
        """The pid of ``router``'s FRR ``daemon`` if it runs now (its PID file names a live
        daemon of the router's pathspace), else None. Raises UnknownNode."""
        return frr.read_pids(self.pathspace(router), [daemon]).get(daemon)

    def start_daemon(self, router: str, daemon: str, timeout: float = 15.0) -> int:
        """Start ``router``'s FRR ``daemon`` again (after it stopped) with the lab's own start
        code (:func:`ani.lab.frr.start`: same netns, pathspace, UTS and mount namespaces) and
        record its new pid in the lab's state (so :meth:`dead_daemons` and teardown know it).
        It comes up with no configuration (FRR-NOTES: daemons do not read ``frr.conf``); the
        caller loads one. Returns the pid. Raises UnknownNode, LabError (it did not start, or
        is not one of the router's daemons)."""
        ps = self.pathspace(router)
        if daemon not in self.topology.routers[router].daemons:
            raise LabError(f"{router}: {daemon} is not one of its daemons "
                           f"({', '.join(self.topology.routers[router].daemons)})")
        (frr.run_dir(ps) / f"{daemon}.vty").unlink(missing_ok=True)  # the dead one's socket
        pid = frr.start(self.netns(router), ps, router, [daemon], timeout=timeout)[daemon]
        with self._lock:
            if self._state is not None:
                self._state.pids.setdefault(router, {})[daemon] = pid
                write_state(self._state)
        return pid

    def harness_faults(self) -> list[str]:
        """What went wrong in the lab's own helpers so far, each cause once (not the agent's
        doing): host faults its NETCONF server met (``host-faults.jsonl``: a program missing when
        a commit needed it), and a NETCONF server that is no longer running. [] when all is well."""
        out = read_fault_log(self.dir / nc.FAULTS_FILE)
        st = self._state
        if st is not None and st.netconf_pid is not None and self.dir.is_dir():
            if not nc.server_pids(self.id, self.dir, st.netconf_pid, st.netconf_start):
                out.append(f"lab {self.id}: its NETCONF server (pid {st.netconf_pid}) is not running")
        return out

    def node_dir(self, node: str) -> Path:
        """``<lab dir>/<node>``: holds ``enter`` (and ``bin/vtysh`` for routers)."""
        self._check_node(node)
        return self.dir / node

    # -- lifecycle -------------------------------------------------------------------------------

    def up(self) -> Lab:
        """Create everything and wait for convergence. Returns self.

        On any failure the partial lab is removed before the exception propagates.

        Raises:
            CapabilityMissing: host lacks root / iproute2 / FRR / veth.
            LabError: the id is in use, a namespace, link or daemon could not be created, or the
                NETCONF server did not start (the message ends with its log).
            ConvergenceTimeout: routing did not converge in ``topology.convergence.timeout_s``
                (with ``convergence.required: false``: no error, :attr:`unconverged` says what).
        """
        if self._state is not None and self._state.status == "up":
            return self
        from ani.lab.terminal import hold_controlling_terminal

        hold_controlling_terminal()  # a session leader must not acquire a pty opened below it
        daemons = {d for r in self.topology.routers.values() for d in r.daemons}
        check_capabilities(daemons)
        if self.topology.routers:
            memcg.hierarchy()  # CapabilityMissing: the routers' memory bound needs a memory cgroup
        try:
            self.dir.parent.mkdir(parents=True, exist_ok=True)
            self.dir.mkdir()
        except FileExistsError:
            raise LabIdError(
                f"lab id {self.id!r} is already in use ({self.dir} exists): choose another id "
                f"('ani lab status' lists the labs; 'ani lab down {self.id}' removes that one if "
                "it is yours)"
            ) from None
        self._owned = True
        try:
            t0 = time.monotonic()
            self._build()
            t1 = time.monotonic()
            try:
                self.wait_converged()
            except ConvergenceTimeout as exc:
                if self.topology.convergence.required:
                    raise
                self.unconverged = list(exc.pending or [])
            t2 = time.monotonic()
            self.timings.update(build_s=t1 - t0, converge_s=t2 - t1)
            if self._netconf_proc is not None:
                nc.wait_ready(self.id, self.dir, self._netconf_proc)
                self.timings["netconf_wait_s"] = time.monotonic() - t2
            if self._ssh_proc is not None:
                t3 = time.monotonic()
                assert self._state is not None
                self._state.ssh_ports = ssh_cli.wait_ready(self.id, self.dir, self._ssh_proc)
                self.timings["ssh_wait_s"] = time.monotonic() - t3
            self._write_known_hosts()
            # "up" only now: a detached lab that is up is handed over (its reaper leaves, and
            # down_stale spares it), so a creator killed while the lab converges must not have
            # handed it over yet
            assert self._state is not None
            self._state.status = "up"
            write_state(self._state)
        except BaseException:
            self.down()
            raise
        return self

    def _build(self) -> None:
        topo = self.topology
        nss = [self.netns(n) for n in topo.nodes]
        self._state = new_state(
            self.id,
            name=topo.name,
            prefix=self.prefix,
            detached=self.detached,
            namespaces=nss,
            topology=topo.model_dump(mode="json"),
        )
        write_state(self._state)  # before anything else exists: a crash from here on is cleanable
        if not self.detached:
            cleanup.register(self)
        # the reaper removes the lab if this process dies before handing it over (SIGKILL too)
        self._reaper_proc = reaper.start(self.id, self.dir)
        self._state.reaper_pid = self._reaper_proc.pid
        self._state.reaper_start = proc.start_time(self._reaper_proc.pid)
        nc_info: dict[str, Any] = {}
        if self.netconf:  # first: its start-up (imports, keys) overlaps the build and convergence
            nc_info = nc.write_credentials(self.dir)
            self._netconf_proc = nc.start_server(self.id, self.dir)
            self._state.netconf_pid = self._netconf_proc.pid
            self._state.netconf_start = proc.start_time(self._netconf_proc.pid)
        if self.ssh:  # the same: it reads the routers from the state file, listens meanwhile
            ssh_cli.write_credentials(self.dir, password=nc_info.get("password"))  # one login for both
            self._ssh_proc = ssh_cli.start_server(self.id, self.dir)
            self._state.ssh_pid = self._ssh_proc.pid
            self._state.ssh_start = proc.start_time(self._ssh_proc.pid)
        write_state(self._state)
        for n in topo.nodes:
            self._write_node_scripts(n)

        links = [
            (self.netns(lk.a.node), lk.a.ifname, self.netns(lk.b.node), lk.b.ifname) for lk in topo.links
        ]
        netns.create(nss, links)

        def setup_node(n: str) -> None:
            ifs = [local.ifname for local, _ in topo.links_of(n)]
            addrs = [(local.ifname, str(local.address)) for local, _ in topo.links_of(n) if local.address]
            if n in topo.hosts:
                gw = topo.hosts[n].gateway
                netns.configure(self.netns(n), ifs, addrs, gateway=str(gw) if gw else None)
                return
            netns.configure(self.netns(n), ifs, addrs, forwarding=True)
            spec = topo.routers[n]
            ps = self.pathspace(n)
            frr.prepare(ps, spec.config)
            memcg.create(ps, self.router_memory_bytes)
            pids = frr.start(self.netns(n), ps, n, spec.daemons)
            with self._lock:
                assert self._state is not None
                self._state.pids[n] = pids
                write_state(self._state)
            if spec.nftables.strip():
                res = proc.run(["ip", "netns", "exec", self.netns(n), "nft", "-f", "-"], input=spec.nftables)
                if not res.ok:
                    raise LabError(f"{n}: loading the nftables ruleset failed: {res.stderr.strip()[-2000:]}")
            frr.load_config(self.netns(n), ps, n)

        with ContextPool(max_workers=max(1, min(16, len(topo.nodes)))) as ex:
            for f in [ex.submit(setup_node, n) for n in topo.nodes]:
                f.result()

    def _write_node_scripts(self, node: str) -> None:
        d = self.node_dir(node)
        ns = self.netns(node)
        inner = f"{frr.set_hostname_sh(node)}; VTYSH_HISTFILE=/dev/null; export VTYSH_HISTFILE; "
        if node in self.topology.routers:
            (d / "bin").mkdir(parents=True)
            wrapper = d / "bin" / "vtysh"
            wrapper.write_text(f'#!/bin/sh\nexec {program("vtysh")} -N {self.pathspace(node)} '
                               f'{" ".join(frr.NO_HISTORY)} "$@"\n')
            wrapper.chmod(0o755)
            inner += f"PATH={d}/bin:$PATH; export PATH; "
        else:
            d.mkdir(parents=True)
        inner += 'exec "$@"'
        # what runs in a router (its vtysh: the harness's reads, A1's CLI) is bounded with its FRR;
        # joined before `ip netns exec`, which mounts a /sys of the netns without the cgroup trees
        join = memcg.join_script(self.pathspace(node)) + "\n" if node in self.topology.routers else ""
        enter = d / "enter"
        enter.write_text(
            "#!/bin/sh\n"
            f"# run a command inside node {node} of lab {self.id}\n"
            f"{join}"
            f"exec {program('ip')} netns exec {ns} {program('unshare')} --uts /bin/sh -c "
            f'{shlex.quote(inner)} sh "$@"\n'
        )
        enter.chmod(0o755)

    def down(self) -> None:
        """Remove this lab: its daemons (by verified PID), other processes in its namespaces, the
        namespaces, its FRR directories and its lab dir. Idempotent; never raises for parts
        already gone. A Lab object that did not create its lab (an attached one, see :meth:`attach`,
        or one whose up() failed because the id was in use) does nothing: it never removes
        someone else's lab."""
        if not self._owned:
            return
        t0 = time.monotonic()
        cleanup.destroy(self.id, self._state)
        for child in (self._netconf_proc, self._ssh_proc, self._reaper_proc):
            if child is not None:
                child.poll()  # reap it (destroy() stopped it)
        self._netconf_proc = self._ssh_proc = self._reaper_proc = None
        self.timings["down_s"] = time.monotonic() - t0
        if self._state is not None:
            self._state.status = "down"
        cleanup.unregister(self)

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- running things --------------------------------------------------------------------------

    def node_argv(self, node: str, argv: list[str]) -> list[str]:
        """Host-side argv that runs ``argv`` inside ``node`` (``[<node dir>/enter, *argv]``)."""
        return [str(self.node_dir(node) / "enter"), *argv]

    def exec(self, node: str, argv: list[str], timeout: float = 10.0, input: str | bytes | None = None) -> ExecResult:
        """Run ``argv`` inside ``node``; after ``timeout`` seconds its whole process group is
        killed (``timed_out`` set).

        An ``nft [-s] [-j] [-a] list ...`` read is answered with no process, by libnftables in
        the node's network namespace (:mod:`ani.host.nft`: nft's own output and exit status,
        ~0.5 ms of CPU instead of ~9 ms; ``ANI_NFT_FAST=0`` turns it off); an ``ip`` command
        runs as ``ip -n <netns> ...`` (:func:`ani.lab.netns.ip_argv`: one process, not the
        node's enter chain).

        Raises UnknownNode, LabGone (lab not running), ProgramMissing (``argv[0]`` is a
        registered program that is not installed: ``ani/host/packages.txt``). A failing
        command is *not* an exception: see ``ExecResult.rc``.
        """
        require(argv)
        host_argv = self.node_argv(node, list(argv))
        if not Path(host_argv[0]).exists():
            raise LabGone(self.id, f"no {host_argv[0]}")
        if input is None and (fast := nft.run(netns.path(self.netns(node)), argv)) is not None:
            return fast
        return proc.run(netns.ip_argv(self.netns(node), list(argv)) or host_argv, timeout=timeout, input=input)

    def vtysh(self, router: str, commands: list[str] | str, timeout: float = 10.0) -> ExecResult:
        """``vtysh -c c1 -c c2 ...`` on ``router``'s FRR (and no other), bounded by ``timeout``
        seconds (see :meth:`exec`). When every command is a read-only ``show`` of one of the
        router's daemons (:data:`ani.lab.vty.DAEMON_OF`, JSON or text), the answer is read on the
        daemons' vty sockets with no process (:func:`ani.lab.vty.show`: same output, ~0.3 ms
        of CPU instead of ~37 ms); ``show running-config`` alone is answered with the text vtysh
        printed last when nothing it is made of changed since (:mod:`ani.lab.runconf`); anything
        else, or a daemon that does not answer with success, runs vtysh. Raises UnknownNode, LabError (lab not running), ProgramMissing (no vtysh)."""
        program("vtysh")  # the node's vtysh wrapper execs it
        if isinstance(commands, str):
            commands = [commands]
        ps = self.pathspace(router)  # UnknownNode for hosts and unknown names
        t0 = time.monotonic()
        # read-only `show`s of one daemon each: straight to the vty sockets (no process)
        fast = vty.show(frr.run_dir(ps), self.topology.routers[router].daemons, commands, timeout)
        if fast is not None:
            return fast
        timeout = max(0.0, timeout - (time.monotonic() - t0))
        wrapper = str(self.node_dir(router) / "bin" / "vtysh")
        argv = [wrapper]
        for c in commands:
            argv += ["-c", c]
        if commands == [runconf.COMMAND]:  # unchanged since the last read: no vtysh (ani.lab.runconf)
            return self._running.read(router, timeout, lambda left: self.exec(router, argv, timeout=left))
        return self.exec(router, argv, timeout=timeout)

    def vtysh_json(self, router: str, command: str, timeout: float = 10.0) -> dict | list:
        """Run a ``show ... json`` command (``json`` appended if missing), bounded by ``timeout``
        seconds, and parse it.

        Returns the command's top-level JSON value as parsed (a dict or a list, depending on the
        command). Raises UnknownNode (not a router of this lab), LabError (lab not running, vtysh
        failed or timed out, or the output is not JSON; the message carries vtysh's text).
        """
        from ani.lab.protocol import vtysh_json

        return vtysh_json(self, router, command, timeout)

    def running_config(self, router: str, timeout: float = 10.0) -> str:
        """``show running-config`` of ``router`` (text), read by the device layer's one reader,
        :func:`ani.device.state.read_frr` (``timeout``: seconds). Raises UnknownNode; ReadError
        (``ani.device.outcome``) if the lab is gone, an FRR daemon of the router is not running,
        or vtysh fails; ReadTimeout (an AniTimeout) when the read runs out of ``timeout``."""
        from ani.device.state import read_frr  # loaded on first use (the device layer is below the lab)

        return read_frr(self, router, timeout)

    def netconf_endpoint(self, router: str) -> nc.NetconfEndpoint:
        """Where ``router``'s NETCONF server listens: ``NetconfEndpoint(host, port, username,
        password, host_key)`` (NETCONF over SSH, subsystem ``netconf``, RFC 6242).

        Raises UnknownNode (not a router of this lab), LabError (the lab runs no NETCONF server)."""
        self.pathspace(router)
        return nc.endpoint(self.id, self.dir, router)

    def ssh_endpoint(self, router: str) -> ssh_cli.SshEndpoint:
        """Where ``router``'s CLI (vtysh) listens over SSH: ``SshEndpoint(host, port, username,
        password, private_key, known_hosts, name)`` (see :mod:`ani.lab.ssh`).

        Raises UnknownNode (not a router of this lab), LabGone (the lab is not running), LabError
        (the lab runs no SSH server: ``ssh=False``)."""
        self.pathspace(router)
        return ssh_cli.endpoint(self.id, self.dir, router)

    def restart_netconf(self, sig: int = signal.SIGTERM, timeout_s: float = nc.STOP_TIMEOUT_S) -> dict[str, int]:
        """Stop this lab's NETCONF server and start a new one; returns ``{router: port}``.

        Every NETCONF session ends. ``sig`` says how the server stops: ``SIGTERM`` (default) is
        an orderly stop: it rolls back each pending confirmed commit that was not given
        ``persist`` (its session ends, RFC 6241 §8.4.1) and keeps the persistent ones in its
        journal; ``SIGKILL`` is a crash: nothing runs, and the new server rolls those back when
        it starts. A persistent confirmed commit survives either way: the new server keeps it
        pending with its persist-id and what is left of its timeout (a confirming commit or
        cancel-commit with that persist-id works from a new session; expiry rolls back). A
        server still running ``timeout_s`` seconds after ``sig`` is killed. The new server
        listens on the same ports where it can (a port taken meanwhile is replaced: read
        :meth:`netconf_endpoint` again), and this returns once its datastores are ready (what
        the old one left pending has been honoured). The lab's state file records the new PID.

        Raises LabGone: the lab is not running. LabError: it runs no NETCONF server
        (``netconf=False``), or the new server did not become ready (the message ends with its
        log)."""
        if not self.netconf:
            raise LabError(f"lab {self.id} runs no NETCONF server (started with netconf=False)")
        st = self._state or read_state(self.id)
        if st is None or not self.dir.is_dir():
            raise LabGone(self.id, f"no {self.dir}")
        nc.stop_server(self.id, self.dir, st.netconf_pid, st.netconf_start, sig=sig, timeout_s=timeout_s)
        if self._netconf_proc is not None:
            self._netconf_proc.poll()  # reap the old one if it was ours
        self._netconf_proc = nc.start_server(self.id, self.dir)
        st.netconf_pid = self._netconf_proc.pid
        st.netconf_start = proc.start_time(self._netconf_proc.pid)
        self._state = st
        write_state(st)
        ports = nc.wait_ready(self.id, self.dir, self._netconf_proc)
        nc.wait_devices(self.id, self.dir, self._netconf_proc, timeout_s=nc.READY_TIMEOUT_S + timeout_s)
        self._write_known_hosts()
        return ports

    @property
    def known_hosts(self) -> Path:
        """``<lab dir>/known_hosts``: the host keys of the lab's NETCONF and SSH servers, one line
        per port (``[127.0.0.1]:PORT ssh-ed25519 ...``, OpenSSH format), written once they listen
        (and after :meth:`restart_netconf`): what a client checks them against (an inventory of
        the lab, :func:`ani.inventory.lab_inventory`)."""
        return self.dir / "known_hosts"

    def _write_known_hosts(self) -> None:
        lines = []
        info = nc.read_info(self.dir) or {}
        if info.get("ports") and info.get("host_key") and Path(info["host_key"]).exists():
            pub = nc.ensure_host_key(Path(info["host_key"])).export_public_key().decode().split()
            lines += [f"[{info.get('host', nc.HOST)}]:{p} {pub[0]} {pub[1]}\n" for p in info["ports"].values()]
        ssh_known = self.dir / ssh_cli.KNOWN_HOSTS_FILE
        if ssh_known.exists():
            lines += ssh_known.read_text().splitlines(keepends=True)
        tmp = self.known_hosts.with_suffix(".tmp")
        tmp.write_text("".join(lines))
        tmp.replace(self.known_hosts)

    def netconf_lock(self, router: str, target: str = "running") -> nc.NetconfLock | None:
        """The lock a NETCONF session of this lab's server holds on ``router``'s ``target``
        datastore (``running`` | ``candidate``), as the server publishes it, or None (not
        locked, no server; a dead server's entry is no lock). Raises UnknownNode."""
        self.pathspace(router)
        return nc.lock_holder(self.id, self.dir, router, target)

    # -- a frozen router (issue 14, faults-kinds: ani.faults.kinds.frozen_router) ---------------

    def daemon_pids(self, router: str) -> dict[str, int]:
        """``{daemon: pid}`` of the FRR daemons this lab started on ``router`` that run now (each
        verified to be that daemon's program carrying ``-N <pathspace>``: :func:`ani.lab.frr.owns`).
        Raises UnknownNode."""
        ps = self.pathspace(router)
        st = self._state or read_state(self.id)
        pids = st.pids.get(router, {}) if st is not None else {}
        return {d: pid for d, pid in sorted(pids.items()) if frr.owns(pid, ps, d)}

    def freeze_netconf(self, router: str, frozen: bool = True) -> dict[str, float]:
        """Freeze (``frozen=True``) or resume ``router``'s part of the lab's NETCONF server, as if
        the router's own management process were stopped: its sessions' hellos and RPCs get no
        reply and its confirm timer waits (:meth:`ani.netconf.server.NetconfServer.freeze`); the
        other routers' parts keep running. Returns once the server says so: ``{router: since}``
        of the routers frozen now. Raises UnknownNode; LabError (no NETCONF server, or it did
        not acknowledge in time)."""
        self.pathspace(router)
        if not self.netconf:
            raise LabError(f"lab {self.id} runs no NETCONF server (started with netconf=False)")
        st = self._state or read_state(self.id)
        return nc.request_frozen(self.id, self.dir, st.netconf_pid if st else None,
                                 st.netconf_start if st else None, router, frozen)

    def netconf_frozen(self) -> dict[str, float]:
        """``{router: since}`` (Unix seconds) whose NETCONF part the lab's running server has
        frozen now ({} when none)."""
        return nc.frozen_routers(self.id, self.dir)

    def wait_converged(self, timeout_s: float | None = None) -> None:
        """Poll every ~0.15 s until every expected OSPF adjacency is Full and every BGP session is
        Established (see :mod:`ani.lab.converge`).

        Args:
            timeout_s: bound in seconds; default ``topology.convergence.timeout_s``.
        Raises:
            ConvergenceTimeout: message and ``.pending`` list each missing item.
        """
        bound = self.topology.convergence.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + bound
        while True:
            missing = converge.pending(self)
            if not missing:
                return
            if time.monotonic() >= deadline:
                raise ConvergenceTimeout(
                    f"lab {self.id}: not converged after {bound:g} s: " + "; ".join(missing), pending=missing,
                    seconds=bound,
                )
            time.sleep(POLL_S)

    # -- other labs ------------------------------------------------------------------------------

    @classmethod
    def attach(cls, lab_id: str, own: bool = False) -> Lab:
        """The running lab ``lab_id`` (from its state file), to use, never to remove: the returned
        object's ``down()`` (and ``with Lab.attach(id):``) leaves the lab as it is, whoever
        started it (``ani lab up``, another process, this one). Remove a lab explicitly with
        :meth:`down_id` (``ani lab down ID``).

        Raises LabNotFound; LabError for ``own=True`` (attaching never takes a lab over; the
        keyword stays only so that ``own=False`` keeps working)."""
        if own:
            raise LabError(f"Lab.attach({lab_id!r}, own=True): attaching never takes a lab over; "
                           f"remove it with Lab.down_id({lab_id!r}) (ani lab down {lab_id})")
        st = read_state(lab_id) if LAB_ID_RE.match(lab_id or "") else None
        if st is None or not st.topology:
            raise LabNotFound(f"no lab {lab_id!r} (known: {', '.join(lab_ids()) or 'none'})")
        from ani.lab.topology import parse_topology

        lab = cls(parse_topology(st.topology, source=f"lab {lab_id} state"), lab_id=lab_id,
                  detached=st.detached, netconf=st.netconf_pid is not None, ssh=st.ssh_pid is not None)
        lab.prefix = st.prefix  # as stored (a label: not checked again)
        lab._state = st
        lab._owned = False  # attached: down() does nothing (see the docstring)
        return lab

    @staticmethod
    def list_labs() -> list[dict[str, Any]]:
        """One dict per lab dir, with keys:

        ``id`` (str), ``name`` (str; ``"?"`` if the state file is unreadable), ``prefix`` (str,
        or None: none given, an older state file, or unreadable), ``owner_pid``
        (int, or None if unreadable), ``alive`` (bool: owner runs or lab is detached),
        ``detached`` (bool), ``status`` (str: ``creating``, ``up``, ``down`` or ``unreadable``),
        ``nodes`` (list[str]: routers then hosts), ``created`` (float Unix epoch seconds, or None
        if unreadable), ``daemons`` (dict[str, int]: ``{router: live daemon count}``).
        """
        out = []
        for i in lab_ids():
            st = read_state(i)
            if st is None:
                out.append({"id": i, "name": "?", "prefix": None, "owner_pid": None, "alive": False, "detached": False,
                            "status": "unreadable", "nodes": [], "created": None, "daemons": {}})
                continue
            topo = st.topology or {}
            nodes = list(topo.get("routers", {})) + list(topo.get("hosts", {}))
            daemons = {
                r: sum(1 for d, pid in p.items() if frr.owns(pid, node_ns(i, r), d)) for r, p in st.pids.items()
            }
            out.append({
                "id": i, "name": st.name, "prefix": st.prefix, "owner_pid": st.owner_pid,
                "alive": st.detached or st.owner_alive(), "detached": st.detached, "status": st.status,
                "nodes": nodes, "created": st.created, "daemons": daemons,
            })
        return out

    @staticmethod
    def down_stale(prefix: str | None = None) -> list[str]:
        """Remove labs whose owner is gone (unless detached *and* fully up), labs with an unreadable
        state file older than a few seconds, and orphan ``ani-<id>-*`` namespaces / FRR dirs /
        routers' memory cgroups (``ani-frr-<id>-*``) with no lab dir. With ``prefix``: only the
        labs of that prefix whose owner is gone (nothing whose prefix cannot be read).
        Returns the removed lab ids, sorted."""
        return cleanup.down_stale(prefix)

    @staticmethod
    def down_id(lab_id: str) -> None:
        """Remove lab ``lab_id`` whatever its owner or state. Raises LabNotFound if nothing has that id."""
        if not cleanup.exists(lab_id):
            raise LabNotFound(f"no lab {lab_id!r} (known: {', '.join(lab_ids()) or 'none'})")
        cleanup.destroy(lab_id, read_state(lab_id))
