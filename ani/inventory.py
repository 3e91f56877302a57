"""An inventory of real devices (YAML): what A1 reaches over SSH and A2 over NETCONF when there is
no lab.

    inv = load_inventory("inventory.yaml")          # InventoryError naming the file and the field
    inv.devices                                     # ["r1", "r2"]
    inv.ssh_endpoint("r1")                          # ani.lab.ssh.SshEndpoint (secrets read now)
    inv.netconf_endpoint("r1")                      # ani.lab.netconf.NetconfEndpoint
    with inv.connect("a2") as a2:                   # an opened adapter acting on the devices
        a2.call("get_config", {"device": "r1"})

The file::

    defaults:                        # optional: what every device has unless it says otherwise
      username: netops               # (platform, host, username, ports, credentials, known_hosts_file)
      credentials: {password_env: NETOPS_PASSWORD}
    devices:
      - name: r1                     # the name agents use: ^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$
        platform: frr                # A1's platform definition (adapters/<name>.yaml, or a path)
        host: 192.0.2.11
        hostname: r1                 # optional: the name the CLI prompt starts with (default: name)
        ports: {ssh: 22, netconf: 830}    # a port left out: that path is not offered
        username: netops
        credentials:                 # exactly one way to the secret, never the secret itself:
          password_env: R1_PASSWORD  #   an environment variable holding the password,
          # password_file: /etc/ani/r1.password   # a file whose first line is the password,
          # private_key_file: ~/.ssh/id_ed25519   # or a private key file (SSH and NETCONF)
        known_hosts_file: ~/.ssh/known_hosts      # optional: check the devices' host keys

Rules (each a :class:`~ani.errors.InventoryError` naming the file and the field, e.g.
``inv.yaml: devices[1].credentials.password: a secret is never written in the inventory: use
password_env, password_file or private_key_file``): unknown keys; a secret written inline
(``password``, ``secret``, ``private_key``, ...); not exactly one credential source; a device
name twice; a platform whose definition does not load; a device with no port. Relative paths
are relative to the inventory file; ``~`` is expanded. Secrets are read when an endpoint is
asked for (:meth:`Inventory.check` reads them all at once), never stored in the inventory
object's ``repr``, logged or recorded; an unset variable or an unreadable file is an
InventoryError naming the field.

The inventory is what adapters act on instead of a lab (``adapter = create_adapter("a2", inv)``):
it offers ``topology`` (the devices as routers, no links), ``ssh_endpoint`` (A1, ``transport:
ssh``) and ``netconf_endpoint`` (A2). Source: the fields are those of a NetConfBench device entry
(name, platform, address, credential) with the credential held outside the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ani.errors import ConfigError, InventoryError
from ani.lab.netconf import NetconfEndpoint
from ani.lab.ssh import SshEndpoint
from ani.names import unknown
from ani.validation import format_validation_error, load_yaml

if TYPE_CHECKING:
    from ani.lab.lab import Lab as NamespacesLab

__all__ = ["Credentials", "Device", "Inventory", "InventoryFile", "lab_inventory", "load_inventory"]

DEVICE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
#: keys that would hold a secret inline: refused wherever they appear in a device
SECRET_KEYS = ("password", "secret", "passphrase", "private_key", "key", "token", "enable_password")
_SOURCES = ("password_env", "password_file", "private_key_file")
_UNKNOWN = "unknown key (see the inventory format: docs/real-devices.md)"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _refuse_inline(data: Any) -> Any:
    if isinstance(data, dict):
        for k in data:
            if k in SECRET_KEYS:
                raise ValueError(f"{k}: a secret is never written in the inventory: use "
                                 + ", ".join(_SOURCES))
    return data


class Credentials(_Strict):
    """Where the secret is: exactly one of ``password_env`` (an environment variable's name),
    ``password_file`` (a file whose first line is the password) or ``private_key_file`` (an
    OpenSSH / PEM private key, unencrypted)."""

    password_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    password_file: Path | None = None
    private_key_file: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_secret(cls, data: Any) -> Any:
        return _refuse_inline(data)

    @model_validator(mode="after")
    def _exactly_one(self) -> Credentials:
        given = [k for k in _SOURCES if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(_SOURCES)}"
                             + (f" (got {', '.join(given)})" if given else ""))
        return self


class Ports(_Strict):
    """The TCP ports of the device's management paths (1..65535); one left out is not offered."""

    ssh: int | None = Field(None, ge=1, le=65535)
    netconf: int | None = Field(None, ge=1, le=65535)


class Device(_Strict):
    """One device of the inventory (see the module doc)."""

    name: str
    platform: str = "frr"
    host: str = Field(min_length=1)
    hostname: str | None = None
    ports: Ports = Field(default_factory=Ports)
    username: str = Field(min_length=1)
    credentials: Credentials
    known_hosts_file: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_secret(cls, data: Any) -> Any:
        return _refuse_inline(data)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not DEVICE_NAME_RE.match(v):
            raise ValueError(f"{v!r} is not a device name (^[A-Za-z0-9][A-Za-z0-9_.-]{{0,62}}$)")
        return v

    @model_validator(mode="after")
    def _a_port(self) -> Device:
        if self.ports.ssh is None and self.ports.netconf is None:
            raise ValueError("ports: give ssh, netconf or both")
        return self


class _Defaults(_Strict):
    platform: str | None = None
    host: str | None = None
    username: str | None = None
    ports: Ports | None = None
    credentials: Credentials | None = None
    known_hosts_file: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_secret(cls, data: Any) -> Any:
        return _refuse_inline(data)


class InventoryFile(_Strict):
    """The file's shape: ``defaults`` (optional) and ``devices`` (a list, at least one)."""

    defaults: _Defaults = Field(default_factory=_Defaults)
    devices: list[dict[str, Any]] = Field(min_length=1)


def _where(loc: tuple[Any, ...]) -> str:
    """``devices[1].credentials.password_env`` from pydantic's ``("devices", 1, "credentials", ...)``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass
class InventoryTopology:
    """The devices as the routers of a topology without links or hosts (what ``get_topology``
    and the adapters' device checks read)."""

    name: str
    routers: dict[str, Device]
    hosts: dict[str, Any] = field(default_factory=dict)
    links: list[Any] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def nodes(self) -> list[str]:
        return list(self.routers)

    def is_router(self, node: str) -> bool:
        return node in self.routers


class Inventory:
    """A loaded inventory (:func:`load_inventory`): the devices, their endpoints, and what adapters
    act on instead of a lab."""

    def __init__(self, devices: list[Device], *, source: str) -> None:
        self.source = source
        self._devices = {d.name: d for d in devices}
        self.topology = InventoryTopology(Path(source).stem, dict(self._devices))
        #: an id for records and messages (an inventory is no lab: no lab id)
        self.id = f"inventory:{Path(source).name}"

    def __repr__(self) -> str:
        return f"Inventory({self.source!r}, devices={self.devices!r})"

    @property
    def devices(self) -> list[str]:
        return list(self._devices)

    @property
    def routers(self) -> list[str]:
        return self.devices

    @property
    def platforms(self) -> dict[str, str]:
        """``{device: platform}`` of the devices with an SSH port (A1's devices)."""
        return {n: d.platform for n, d in self._devices.items() if d.ports.ssh is not None}

    def device(self, name: str) -> Device:
        """The device ``name``. Raises InventoryError naming the known ones."""
        try:
            return self._devices[name]
        except KeyError:
            raise InventoryError(f"{self.source}: " + unknown("device", name, self.devices)) from None

    def _field(self, name: str, what: str) -> str:
        return f"{self.source}: devices[{self.devices.index(name)}].{what}"

    def _secret(self, d: Device) -> tuple[str | None, Path | None]:
        """(password, private key path) of ``d``, read now. Raises InventoryError."""
        c = d.credentials
        if c.password_env is not None:
            pw = os.environ.get(c.password_env)
            if not pw:
                raise InventoryError(f"{self._field(d.name, 'credentials.password_env')}: the environment "
                                     f"variable {c.password_env} is not set (or empty)")
            return pw, None
        if c.password_file is not None:
            try:
                lines = c.password_file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise InventoryError(f"{self._field(d.name, 'credentials.password_file')}: cannot read "
                                     f"{c.password_file}: {getattr(exc, 'strerror', None) or exc}") from None
            if not lines or not lines[0]:
                raise InventoryError(f"{self._field(d.name, 'credentials.password_file')}: "
                                     f"{c.password_file} is empty")
            return lines[0], None
        assert c.private_key_file is not None
        if not os.access(c.private_key_file, os.R_OK):
            raise InventoryError(f"{self._field(d.name, 'credentials.private_key_file')}: cannot read "
                                 f"{c.private_key_file}")
        return None, c.private_key_file

    def _credential(self, d: Device) -> str:
        """Where ``d``'s secret comes from, for messages (never the secret)."""
        c = d.credentials
        if c.password_env is not None:
            return f"the password in ${c.password_env}, {self._field(d.name, 'credentials.password_env')}"
        if c.password_file is not None:
            return f"the password in {c.password_file}, {self._field(d.name, 'credentials.password_file')}"
        return f"the key file {c.private_key_file}, {self._field(d.name, 'credentials.private_key_file')}"

    def _port(self, d: Device, kind: str) -> int:
        port = getattr(d.ports, kind)
        if port is None:
            raise InventoryError(f"{self._field(d.name, 'ports')}: {d.name} has no {kind} port")
        return int(port)

    def ssh_endpoint(self, router: str) -> SshEndpoint:
        """How to reach device ``router``'s CLI over SSH (:class:`ani.lab.protocol.SshCapable`).
        Raises InventoryError (unknown device, no ssh port, a secret that cannot be read)."""
        d = self.device(router)
        port = self._port(d, "ssh")
        pw, key = self._secret(d)
        return SshEndpoint(d.host, port, d.username, pw, key, d.known_hosts_file, name=d.hostname or d.name,
                           credential=self._credential(d))

    def netconf_endpoint(self, router: str) -> NetconfEndpoint:
        """How to reach device ``router``'s NETCONF server (SSH, subsystem ``netconf``;
        :class:`ani.lab.protocol.NetconfCapable`). Raises InventoryError (unknown device, no
        netconf port, a secret that cannot be read)."""
        d = self.device(router)
        port = self._port(d, "netconf")
        pw, key = self._secret(d)
        return NetconfEndpoint(d.host, port, d.username, pw, private_key=key, known_hosts=d.known_hosts_file,
                               credential=self._credential(d))

    def vtysh(self, router: str, commands: list[str] | str, timeout: float = 10.0) -> Any:
        """One CLI command on device ``router`` through an SSH exec channel of its own (what the
        adapters read devices with, out of band: e.g. ``show running-config`` for A1's snapshots;
        the device's login must run its CLI, see :func:`ani.lab.ssh.ssh_exec`). ``timeout``:
        seconds. Returns an ExecResult. Raises InventoryError (unknown device, no ssh port, a
        secret that cannot be read), ValueError for more than one command."""
        from ani.lab.ssh import ssh_exec

        cmds = [commands] if isinstance(commands, str) else list(commands)
        if len(cmds) != 1:
            raise ValueError(f"{router}: one command per exec channel, got {len(cmds)}")
        return ssh_exec(self.ssh_endpoint(router), cmds[0], timeout=timeout)

    def check(self) -> None:
        """Read every device's secret now (an unset variable, an unreadable file: InventoryError)."""
        for d in self._devices.values():
            self._secret(d)

    def _ports_for(self, level: str) -> None:
        """Raise InventoryError naming the device and the field when a device lacks the port the
        level reaches it by (A1: ``ports.ssh``, A2: ``ports.netconf``) and no device has it: refused
        now, not at each call. In a mixed inventory a call on such a device is refused, not retriable."""
        kind = "ssh" if level.startswith("a1") else "netconf" if level.startswith("a2") else None
        if kind is None:
            return
        lacking = [d for d in self._devices.values() if getattr(d.ports, kind) is None]
        if len(lacking) == len(self._devices):  # a mixed inventory stays usable (its other devices)
            how = "its CLI over SSH" if kind == "ssh" else "NETCONF"
            raise InventoryError("; ".join(
                f"{self._field(d.name, 'ports')}: {d.name} has no {kind} port, and {level[:2]} reaches a device "
                f"through {how}: add ports.{kind}, or leave {d.name} out of this inventory" for d in lacking))

    def connect(self, level: str, *, trajectory: Any = None, blocklist: bool | str = False,
                **options: Any) -> Any:
        """An opened adapter of ``level`` (``a1``: over SSH; ``a2``: over NETCONF) acting on the
        devices; ``options`` are the adapter's (as a campaign cell's). At A1 the devices' platform
        is the adapter's ``platform`` unless the options name one (one A1 adapter speaks one
        platform). Every secret is read first. Raises InventoryError (also: the devices have
        different platforms, a device without the level's port: ``ports.ssh`` at A1,
        ``ports.netconf`` at A2), ConfigError (a level or option the adapter refuses).
        ``trajectory``: an :class:`ani.trajectory.Trajectory` the adapter logs its calls to.
        ``blocklist``: the blocklist ablation (True: the platform's default; a path: a YAML
        blocklist file), at ``a1`` only here (ConfigError at a level whose calls it cannot
        inspect)."""
        from ani.registry import create_adapter

        self.check()
        self._ports_for(str(level).lower())
        if str(level).lower().startswith("a1") and "platform" not in options and self.platforms:
            kinds = sorted(set(self.platforms.values()))
            if len(kinds) > 1:
                each = "; ".join(f"{k}: {', '.join(n for n, v in self.platforms.items() if v == k)}" for k in kinds)
                raise InventoryError(f"{self.source}: the devices have different platforms ({each}); one A1 "
                                     "adapter speaks one platform: use an inventory per platform")
            options = {**options, "platform": kinds[0]}
        kwargs: dict[str, Any] = {"options": options}
        if trajectory is not None:
            kwargs["trajectory"] = trajectory
        adapter = create_adapter(level, self, blocklist=blocklist, **kwargs)
        adapter.open()
        return adapter


def load_inventory(path: str | Path) -> Inventory:
    """The inventory in the YAML file ``path`` (see the module doc). Raises InventoryError naming
    the file and the field."""
    from ani.adapters.platform import load_platform

    p = Path(path)
    data = load_yaml(p, InventoryError)
    if not isinstance(data, dict):
        raise InventoryError(f"{p}: an inventory must be a mapping with 'devices', got {type(data).__name__}")
    try:
        shape = InventoryFile.model_validate(data)
    except ValidationError as exc:
        raise InventoryError(f"{p}: {format_validation_error(exc, format_loc=_where, split_nested=True, unknown=_UNKNOWN)}") from None
    base = shape.defaults.model_dump(exclude_none=True)
    devices: list[Device] = []
    for i, raw in enumerate(shape.devices):
        try:
            d = Device.model_validate({**base, **raw})
        except ValidationError as exc:
            raise InventoryError(f"{p}: " + format_validation_error(
                exc, format_loc=lambda loc, i=i: _where(("devices", i, *loc)), split_nested=True, unknown=_UNKNOWN)) from None
        if d.name in (o.name for o in devices):
            raise InventoryError(f"{p}: devices[{i}].name: {d.name!r} is written twice")
        updates: dict[str, Any] = {"credentials": d.credentials.model_copy(update={
            k: _resolve(p, v) for k in ("password_file", "private_key_file") if (v := getattr(d.credentials, k))})}
        if d.known_hosts_file is not None:
            updates["known_hosts_file"] = _resolve(p, d.known_hosts_file)
        if d.platform and ("/" in d.platform or d.platform.endswith((".yaml", ".yml"))):
            updates["platform"] = str(_resolve(p, Path(d.platform)))
        d = d.model_copy(update=updates)
        if d.ports.ssh is not None:
            try:
                load_platform(d.platform)
            except (FileNotFoundError, ConfigError) as exc:
                raise InventoryError(f"{p}: devices[{i}].platform: {exc}") from None
        devices.append(d)
    return Inventory(devices, source=str(p))


def lab_inventory(lab: NamespacesLab, password_env: str = "ANI_LAB_PASSWORD", key: bool = False) -> str:
    """The YAML text of an inventory of ``lab``'s routers (``ani lab inventory``): each router's SSH
    port (and NETCONF port), the lab's host keys (``known_hosts_file``: ``lab.known_hosts``), and the secret named, never
    written: the environment variable ``password_env`` (which must hold the ``password`` of the
    lab's ``ssh.json``, also its NETCONF password), or with ``key=True`` the lab's client key file
    (then SSH only: the lab's NETCONF server takes the password only). So the path to real
    devices can be tried on a lab. Raises LabError (the lab runs no SSH server)."""
    import yaml

    devices = []
    for r in lab.routers:
        ssh = lab.ssh_endpoint(r)
        ports: dict[str, int] = {"ssh": ssh.port}
        if not key and lab.netconf:
            ports["netconf"] = lab.netconf_endpoint(r).port
        devices.append({"name": r, "host": ssh.host, "ports": ports})
    ssh = lab.ssh_endpoint(lab.routers[0])
    creds = {"private_key_file": str(ssh.private_key)} if key else {"password_env": password_env}
    known = Path(lab.known_hosts) if Path(lab.known_hosts).exists() else ssh.known_hosts
    doc = {"defaults": {"platform": "frr", "username": ssh.username, "credentials": creds,
                        "known_hosts_file": str(known)}, "devices": devices}
    return (f"# inventory of lab {lab.id}'s routers (ani lab inventory); the password is in "
            f"{Path(lab.dir) / 'ssh.json'}\n" if not key else f"# inventory of lab {lab.id}'s routers (ani lab inventory)\n") \
        + yaml.safe_dump(doc, sort_keys=False)


def _resolve(inventory: Path, path: Path) -> Path:
    q = Path(os.path.expanduser(str(path)))
    return q if q.is_absolute() else (inventory.parent / q)
