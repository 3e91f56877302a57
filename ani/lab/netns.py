"""Network namespaces and veth links, driven through batched iproute2 calls.

All names come from the caller (``ani-<lab>-<node>``); this module never touches a namespace it was
not given.

Each namespace :func:`create` makes is owned by a user namespace of its own (made with it, the
identity map of every uid and gid: files, users and groups look the same as on the host). Root of
the host (the harness, FRR's daemons, ``ip netns exec``) keeps every capability over it, as the
initial user namespace is an ancestor of each. A process that enters a node's user namespace
(the A0 sandbox, :mod:`ani.adapters.sandbox`) holds its capabilities over that node's network
namespace only: the kernel checks ``ns_capable(net->user_ns, CAP_NET_ADMIN)`` for every rtnetlink
request that names another namespace (``IFLA_LINK_NETNSID``, ``IFLA_TARGET_NETNSID``,
``IFLA_NET_NS_FD/PID``: ``rtnl_get_net_ns_capable``, ``rtnl_link_get_net_capable``), and a
sibling user namespace is not an ancestor of another node's. :func:`owner_userns_fd` opens a
node's user namespace (``ioctl(NS_GET_USERNS)``: nothing else is kept on disk).

The price: the kernel does not show 14 of ``/proc/sys/net``'s files in a namespace owned by a
non-initial user namespace (``net.core.xfrm_*`` and ``net.ipv6.route.*``, measured on 6.18).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time

from ani.errors import LabError
from ani.host.programs import program
from ani.host.proc import check, run

NETNS_DIR = "/run/netns"
#: ``ioctl`` on a namespace fd returning an fd of its owning user namespace (linux/nsfs.h)
NS_GET_USERNS = 0xB701
#: uid_map / gid_map of each node's user namespace: the identity of the whole id range
IDENTITY_MAP = "0 0 4294967295\n"


def path(name: str) -> str:
    """The handle of the named network namespace ``name``: ``/run/netns/<name>`` (what
    ``setns(2)``, ``ip -n`` and ``ip netns exec`` open)."""
    return os.path.join(NETNS_DIR, name)


def list_netns() -> list[str]:
    """Names of every named network namespace on the host (``ip netns list``), sorted."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def ip_batch(lines: list[str], netns: str | None = None, force: bool = False, timeout: float = 20.0) -> None:
    """Run iproute2 commands (``ip`` lines without the leading ``ip``) as one ``ip -batch``.

    Raises LabError naming the failing line unless ``force`` (then errors are ignored).
    """
    if not lines:
        return
    argv = ["ip"] + (["-n", netns] if netns else []) + (["-force"] if force else []) + ["-batch", "-"]
    text = "\n".join(lines) + "\n"
    if force:
        run(argv, timeout=timeout, input=text)
    else:
        check(argv, timeout=timeout, input=text)


#: ``ip`` options that choose a namespace or read commands from elsewhere (iproute2 takes any
#: prefix of an option, and ``--x`` as ``-x``): such an argv runs as given
_IP_OWN_OPTIONS = ("-netns", "-batch", "-force")


def ip_argv(netns: str, argv: list[str]) -> list[str] | None:
    """``argv``, an ``ip`` command meant to run inside ``netns``, as one host-side ``ip -n
    <netns> ...`` process (iproute2's ``-n`` enters the namespace and mounts its ``/sys`` as
    ``ip netns exec`` does: the same output and exit status, without a node's enter chain), or
    None when ``argv`` is not such a command (another program, or an option that could be one of
    ``-netns``, ``-batch``, ``-force``, as iproute2 reads a prefix)."""
    if not argv or argv[0] != "ip":
        return None
    for a in argv[1:]:
        opt = a[1:] if a.startswith("--") else a
        if len(opt) >= 2 and opt.startswith("-") and any(full.startswith(opt) for full in _IP_OWN_OPTIONS):
            return None
    return [program("ip"), "-n", netns, *argv[1:]]


def create(namespaces: list[str], links: list[tuple[str, str, str, str]]) -> None:
    """Create ``namespaces`` and veth pairs ``(ns_a, if_a, ns_b, if_b)`` directly inside them.

    Interface names therefore never meet in the root namespace. Each namespace is owned by a
    user namespace of its own (see the module docstring). Raises LabError.
    """
    create_owned(namespaces)
    lines = [f"link add {ia} netns {na} type veth peer name {ib} netns {nb}" for na, ia, nb, ib in links]
    ip_batch(lines)


def create_owned(namespaces: list[str], timeout: float = 10.0) -> None:
    """Create the named network namespaces ``namespaces``, each owned by a new user namespace.

    One ``unshare --user --net`` child per name (they run in parallel): once it has unshared, its
    uid_map and gid_map are written from here (root in the parent user namespace: the identity
    map, and ``setgroups`` stays allowed) and ``ip netns attach`` binds its network namespace to
    ``/run/netns/<name>``; then the child exits (its user namespace lives on, held by the
    network namespace). Raises LabError naming the namespace that failed within ``timeout``
    seconds; the children are gone on return in every case.
    """
    if not namespaces:
        return
    own = os.stat("/proc/self/ns/user").st_ino
    children: list[tuple[str, subprocess.Popen]] = []
    try:
        for ns in namespaces:
            children.append((ns, subprocess.Popen(
                [program("unshare"), "--user", "--net", "--", "/bin/sh", "-c", "read _"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )))
        deadline = time.monotonic() + timeout
        for ns, child in children:
            while True:
                try:
                    if os.stat(f"/proc/{child.pid}/ns/user").st_ino != own:
                        break
                except FileNotFoundError:
                    pass
                if child.poll() is not None or time.monotonic() > deadline:
                    err = child.stderr.read().decode(errors="replace").strip() if child.stderr else ""
                    raise LabError(f"netns {ns}: could not make its user namespace (unshare --user --net): {err or 'timed out'}")
                time.sleep(0.001)
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{child.pid}/{name}", "w") as fh:
                    fh.write(IDENTITY_MAP)
        ip_batch([f"netns attach {ns} {child.pid}" for ns, child in children])
    finally:
        for _, child in children:
            if child.poll() is None:
                try:
                    child.stdin.close()  # type: ignore[union-attr]
                    child.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    child.kill()
                    child.wait()
            if child.stderr:
                child.stderr.close()


def owner_userns_fd(netns: str) -> int:
    """An fd (O_CLOEXEC; the caller closes it) of the user namespace owning named netns ``netns``.

    Raises FileNotFoundError if there is no such namespace, OSError if the kernel lacks
    ``NS_GET_USERNS`` (Linux < 4.9).
    """
    fd = os.open(path(netns), os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fcntl.ioctl(fd, NS_GET_USERNS)
    finally:
        os.close(fd)


def is_own_userns(fd: int) -> bool:
    """Whether user-namespace fd ``fd`` is this process's own user namespace."""
    return os.fstat(fd).st_ino == os.stat("/proc/self/ns/user").st_ino


#: multicast group memberships per socket in a router's namespace (the kernel's default is 20)
IGMP_MAX_MEMBERSHIPS = 1024


def configure(
    netns: str,
    ifnames: list[str],
    addresses: list[tuple[str, str]] | None = None,
    gateway: str | None = None,
    forwarding: bool = False,
) -> None:
    """Bring ``lo`` and ``ifnames`` up, add ``(ifname, cidr)`` addresses, a default route, forwarding.

    With ``forwarding`` (a router) the namespace's ``net.ipv4.igmp_max_memberships`` is raised
    from the kernel's 20 to :data:`IGMP_MAX_MEMBERSHIPS`: ospfd joins AllSPFRouters (224.0.0.5)
    on every OSPF interface through one socket, and past 20 memberships the joins fail, so a
    router with more than 20 OSPF links never hears its other neighbours' hellos (measured: a
    route reflector linked to 24 routers, adjacencies beyond the 20th stuck in Down / Init).

    One ``ip netns exec`` per namespace. Raises LabError.
    """
    lines = ["link set lo up"] + [f"link set {i} up" for i in ifnames]
    lines += [f"addr add {cidr} dev {i}" for i, cidr in (addresses or [])]
    if gateway:
        lines.append(f"route add default via {gateway}")
    script = "ip -batch - "
    if forwarding:
        script = (
            "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 "
            f"net.ipv4.igmp_max_memberships={IGMP_MAX_MEMBERSHIPS} >/dev/null && " + script
        )
    check(["ip", "netns", "exec", netns, "sh", "-c", script], input="\n".join(lines) + "\n")


def delete(namespaces: list[str]) -> None:
    """Delete ``namespaces`` (ignores those already gone). Their veths go with them."""
    present = set(list_netns())
    ip_batch([f"netns del {ns}" for ns in namespaces if ns in present], force=True)
