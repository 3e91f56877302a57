"""Service files of the A4 source of truth and the desired state they make (issue 4, section 4).

A4 keeps A3-R's repository (``devices/<router>.json``: the brownfield state of each router) and
adds ``services/<name>.json``: each file holds ONE service change object of ``ani.intents``
(``docs/intents.md``) with a *creating* action::

    tenant-site onboard | tenant-firewall apply | static-route, floating-address, bgp-peering,
    prefix-list-entry, route-map-entry add

    {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite",
     "edge": "e2", "prefix": "198.19.7.0/24", "gateway": "198.19.7.1"}

The desired state is declarative: the routers' files at a revision with every service file of
that revision compiled on top, in sorted path order (``ani.intents.compile_changes``; pools
built from those device configs). Deleting a service file, or reverting the commit that added
it, removes the service from the desired state (and, once reconciled, from the routers).

::

    desired = desired_with_services(repo)            # {router: DeviceConfig} at HEAD
    errors = check_services(repo)                    # the working tree: [] or [ServiceFileError]
    result = compile_repo(repo, revision="HEAD")     # ServicesCompile: .configs, .files, .pins

Errors name the file and the field: :class:`ServiceFileError` (``file``, ``field``, ``intent_code``: an
``IntentError`` code such as ``schema`` or ``unknown-reference``, ``message``), e.g.
``services/peer.json: route_map_in: unknown-reference: route-map RM-UNDEF does not exist on e1``.

Known limit: values allocated at compile time that the file does not hold (a site's prefix and
gateway, a prefix-list entry's seq) depend on the files compiled before it; :attr:`ServicesCompile.pins`
gives them per file, so a writer (the A4 adapter) can store them in the file and the service
keeps them when other services come and go. The sequence number of a tenant site's entry in the
edge's shared prefix-list is not a field of the change and is always allocated at compile time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ani.device.model import DeviceConfig
from ani.intents.compile import CompileResult, compile_changes
from ani.intents.errors import IntentError
from ani.intents.models import parse_change
from ani.intents.pools import Pools
from ani.intents.services import RegistryView, get_service_class, service_classes
from ani.intents.validate import yang_errors
from ani.sot.errors import DocError, SotError
from ani.sot.format import from_doc, loads

__all__ = [
    "CREATING_ACTIONS", "ServiceFileError", "ServicesCompile", "check_services", "compile_repo",
    "compile_services", "desired_with_services", "device_configs", "parse_service", "service_files",
]  # fmt: skip


def _creating_actions() -> dict[str, str]:
    return {c.name: a for c in service_classes() if (a := c.creating_action()) is not None}


#: the creating action of each service type (the only action a service file may hold): each
#: service class's ``creating_action()`` (a live view of the registry)
CREATING_ACTIONS: Mapping[str, str] = RegistryView(_creating_actions, "CREATING_ACTIONS")

#: ``configs -> Pools``: how the pools of a compile are built (default ``Pools.from_configs``)
PoolsFactory = Callable[[dict[str, DeviceConfig]], Pools]


class ServiceFileError(DocError):
    """A service file is refused: ``file`` (``services/<name>.json``), ``field`` (dotted path
    inside the change, ``""`` for the whole file), ``intent_code`` (an ``IntentError`` code:
    ``schema``, ``unknown-reference``, ``service-exists``, ``yang`` ...), ``message``. A
    :class:`DocError` (``pointer`` is the field as a JSON Pointer), so whatever refuses an
    invalid document refuses it too."""

    code = "invalid-service"

    def __init__(self, file: str, field: str, intent_code: str, message: str) -> None:
        super().__init__("/" + field.replace(".", "/") if field else "", message)
        self.file = file
        self.field = field
        self.intent_code = intent_code
        # DocError cut the message (an agent's long value is never echoed whole)
        self.args = (f"{file}: {field[:300] + ': ' if field else ''}{intent_code}: {self.message}",)

    def __str__(self) -> str:
        return self.args[0]

    def to_dict(self) -> dict[str, Any]:
        """``{code, path, file, field, message}`` (``code`` the intent error code; ``path`` is
        ``<file>:<field>``, as the A3-T tools name a field ``changes.<i>.<field>``)."""
        return {"code": self.intent_code, "path": f"{self.file}:{self.field}" if self.field else self.file,
                "file": self.file, "field": self.field, "message": self.message}


@dataclass
class ServicesCompile:
    """The compile of a set of service files on top of the routers' files.

    ``base``: ``{router: DeviceConfig}`` of the device files; ``configs``: every router's
    desired config (``base`` with the services applied); ``result``: the ``CompileResult``
    (``.configs`` only the routers the services change; ``.changes`` the models, allocations
    filled in, in file order); ``files``: the service files in compile order; ``pins``:
    ``{file: {field: value}}`` the values the pools chose for fields the file leaves out."""

    base: dict[str, DeviceConfig]
    configs: dict[str, DeviceConfig]
    result: CompileResult
    files: list[str] = field(default_factory=list)
    pins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def file_of(self, service_id: str) -> str | None:
        """The service file that creates ``service_id`` (None: not a service of a file)."""
        for f, ch in zip(self.files, self.result.changes, strict=False):
            if ch.service_id() == service_id:
                return f
        return None


def parse_service(doc: Any, file: str) -> Any:
    """The change model of one service file's document. Raises ServiceFileError naming the
    file and the field: not an object, a schema error, or an action that does not create."""
    if not isinstance(doc, dict):
        raise ServiceFileError(file, "", "schema", "a service file holds one change object (a JSON object)")
    try:
        model = parse_change(doc)
    except IntentError as exc:
        raise ServiceFileError(file, _field(exc.path), exc.code, exc.message) from None
    want = CREATING_ACTIONS[model.type]
    if model.action != want:
        raise ServiceFileError(
            file, "action", "schema",
            f"a service file creates a service: action of {model.type} must be {want!r}, not {model.action!r} "
            "(to remove a service, delete its file)",
        )
    return model


def _field(path: str) -> str:
    """``changes.0.route_map_in`` -> ``route_map_in``; ``changes.0`` -> ``""``."""
    parts = path.split(".")
    if len(parts) >= 2 and parts[0] == "changes" and parts[1].isdigit():
        return ".".join(parts[2:])
    return path


def service_files(repo: Any, revision: str | None = "HEAD") -> list[tuple[str, Any]]:
    """``[(path, document)]`` of the service files at ``revision`` (None: the working tree),
    sorted by path. A file that is not JSON raises ServiceFileError naming it."""
    if revision is None:
        paths = [p for p in repo.list() if p.startswith("services/")]
        texts = {p: (repo.path / p).read_text() for p in paths}
    else:
        texts = {}
        tree = repo.commit_of(revision).tree
        for b in tree.traverse():
            if b.type == "blob" and b.path.startswith("services/") and b.path.endswith(".json") and b.path.count("/") == 1:
                texts[b.path] = b.data_stream.read().decode()
    out = []
    for p in sorted(texts):
        try:
            out.append((p, loads(texts[p], "")))
        except SotError as exc:
            raise ServiceFileError(p, "", "schema", f"not a JSON document: {exc}") from None
    return out


def device_configs(repo: Any, revision: str | None = "HEAD") -> dict[str, DeviceConfig]:
    """``{router: DeviceConfig}`` of the ``devices/`` files at ``revision`` (None: the working
    tree). Raises DocError for an invalid device file."""
    if revision is None:
        paths = [p for p in repo.list() if p.startswith("devices/")]
        return {Path(p).stem: from_doc(repo.read(p), Path(p).stem) for p in paths}
    if revision == "HEAD" and hasattr(repo, "desired"):
        return {r: repo.desired(r) for r in _routers_at(repo, revision)}
    return {r: from_doc(repo.read(f"devices/{r}.json", revision), r) for r in _routers_at(repo, revision)}


def _routers_at(repo: Any, revision: str) -> list[str]:
    tree = repo.commit_of(revision).tree
    return sorted(Path(b.path).stem for b in tree.traverse()
                  if b.type == "blob" and b.path.startswith("devices/") and b.path.endswith(".json"))


def compile_services(
    base: dict[str, DeviceConfig], files: list[tuple[str, Any]], *, pools: PoolsFactory | None = None
) -> ServicesCompile:
    """Compile the service files ``files`` (``[(path, document)]``, in that order) on top of
    ``base``. Raises the first ServiceFileError (schema of each file first, then references /
    conflicts / allocation in file order, then the YANG checks of the intended configs, an error
    there attributed to the first file whose service brings it in)."""
    models = [parse_service(doc, f) for f, doc in files]
    names = [f for f, _ in files]
    make = pools or Pools.from_configs

    def run(n: int) -> CompileResult:
        try:
            return compile_changes(models[:n], base, pools=make(base))
        except IntentError as exc:
            i, rest = _index(exc.path)
            raise ServiceFileError(names[i] if i is not None and i < n else "services/", rest, exc.code, exc.message) from None

    result = run(len(models))
    errors = yang_errors(result.configs)
    if errors:
        culprit = next((k for k in range(1, len(models) + 1) if yang_errors(run(k).configs)), len(models))
        e = errors[0] if culprit == len(models) else yang_errors(run(culprit).configs)[0]
        raise ServiceFileError(names[culprit - 1], "", "yang", e.message + (f" ({e.path})" if e.path else ""))
    pins: dict[str, dict[str, Any]] = {}
    for f, (_, doc), ch in zip(names, files, result.changes, strict=True):
        # fields a compile may allocate (the class's ``pinned``): stored in the file by a writer
        got = {k: _json(getattr(ch, k)) for k in get_service_class(ch.type).pinned.get(ch.action, ())
               if doc.get(k) is None and getattr(ch, k) is not None}
        if got:
            pins[f] = got
    configs = {r: result.configs.get(r, c) for r, c in base.items()}
    return ServicesCompile(base=base, configs=configs, result=result, files=names, pins=pins)


def _json(v: Any) -> Any:
    return v if isinstance(v, (int, str, bool)) or v is None else str(v)


def _index(path: str) -> tuple[int | None, str]:
    parts = path.split(".")
    if len(parts) >= 2 and parts[0] == "changes" and parts[1].isdigit():
        return int(parts[1]), ".".join(parts[2:])
    return None, path


def compile_repo(repo: Any, revision: str | None = "HEAD", *, pools: PoolsFactory | None = None) -> ServicesCompile:
    """:func:`compile_services` of the repository's files at ``revision`` (None: the working
    tree). Raises ServiceFileError (or DocError for a device file)."""
    return compile_services(device_configs(repo, revision), service_files(repo, revision), pools=pools)


def desired_with_services(repo: Any, revision: str | None = "HEAD", *, pools: PoolsFactory | None = None) -> dict[str, DeviceConfig]:
    """The desired state at ``revision``: ``{router: DeviceConfig}`` for every router of
    ``devices/``, with every service file compiled on top in sorted path order. Declarative: a
    service whose file is gone is not in it. Raises ServiceFileError if a service file of that
    revision does not compile (a commit through the A4 adapter never stores one)."""
    return compile_repo(repo, revision, pools=pools).configs


def check_services(repo: Any, revision: str | None = None, *, pools: PoolsFactory | None = None) -> list[ServiceFileError]:
    """The errors of the service files at ``revision`` (None: the working tree, what a commit
    would store): ``[]`` when they all compile on the device files. Schema errors of every file
    are listed; otherwise the first compile error."""
    try:
        files = service_files(repo, revision)
    except ServiceFileError as exc:
        return [exc]
    errors = []
    for f, doc in files:
        try:
            parse_service(doc, f)
        except ServiceFileError as exc:
            errors.append(exc)
    if errors:
        return errors
    try:
        compile_services(device_configs(repo, revision), files, pools=pools)
    except ServiceFileError as exc:
        return [exc]
    return []
