r"""The A0 sandbox's only way to FRR: a vtysh broker outside the sandbox that checks every line.

FRR's daemons run outside the A0 sandbox and see the host's files (``banner motd file PATH``
reads any file, ``log file PATH`` writes one), and a shell string cannot be parsed into the
commands it will send (``X=write; vtysh -c "$X t"``, a base64-decoded pipe). So the sandbox
holds no FRR socket at all (its ``/var/run/frr`` is empty; the daemons listen on no vty TCP
port: they are started with ``-P 0``, :func:`ani.lab.frr.start`), and ``vtysh`` inside it is a
small client (:data:`CLIENT_SOURCE`, bound over ``/usr/bin/vtysh``) that sends its command
lines (``-c`` arguments split at newlines, or stdin lines: after the shell expanded everything)
to this broker's unix socket. The broker (:class:`VtyBroker`, a thread of the harness, one per
A0 call) checks each line against

1. :data:`LINE_CHECKS`, always: the line's form (:func:`line_form`: no control character, no
   line vtysh would cut, at most :data:`MAX_LINE_BYTES`) and the bound on regular expressions
   (:mod:`ani.adapters.regex_bound`), refused as ``not_allowed``;
2. :data:`HOST_RULES`, always: commands that make a daemon or vtysh touch a host file or
   resource outside the router (read a file, write a log or dump file, syslog, a vty line,
   SNMP AgentX, a vtysh.conf-writing mode), refused as ``not_allowed``;
3. the blocklist (:class:`ani.adapters.blocklist.BlockRules`), when the blocklist ablation
   wraps A0, refused as ``blocked``.

The lines checked are exactly the lines vtysh executes: every line of a request is cut at
``\n`` as vtysh cuts its ``-c`` arguments (and ``fgets`` the lines of ``-f`` files), and a line
that vtysh would cut or read otherwise than Python (a control character: ``\r``, ``\x0b``,
``\x1c``; a non-ASCII space; more than 4,095 bytes, where ``fgets`` of a ``-f`` file splits it
into two commands) is refused, never normalised.

The rules are matched after expanding FRR abbreviations (:class:`FrrCommandSet`: each word of
the line is matched against FRR 8.4.4's own command set, ``list permutations`` of vtysh's tree, a keyword word as
a prefix of the keyword, a variable word as any value; a rule is hit if the literal line or
any command the line can abbreviate matches it. Where FRR itself would call the line ambiguous
this refuses too). One refused line refuses the whole vtysh invocation: nothing is sent, the
client prints ``% ani: refused ...`` and exits 1, and the A0 call reports it. Lines that pass
are run by the real ``vtysh -N <pathspace>`` in the router's namespace, outside the sandbox,
bounded by the call's time and output caps and, with the router's FRR daemons, by the router's
memory cgroup (:mod:`ani.lab.memcg`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ani.adapters import regex_bound
from ani.errors import CapabilityMissing
from ani.host.programs import program
from ani.host.threads import thread

#: where the broker's socket appears inside the sandbox
SANDBOX_SOCKET_DIR = "/run/vtysh-broker"
SOCKET_NAME = "broker.sock"

#: (regex on the expanded command, reason): commands that reach outside the router
HOST_RULES: list[tuple[str, str]] = [
    (r"^banner\s+motd\s+file\b", "reads a host file (banner motd file)"),
    (r"^log\s+(?:file|filtered-file)\b", "writes a host file (log file)"),
    (r"^log\s+syslog\b", "writes the host's syslog"),
    (r"^line\s+vty\b", "opens vty access (line vty)"),
    (r"^agentx\b", "talks to the host's SNMP agent (agentx)"),
    (r"^dump\s+bgp\b", "writes a host file (dump bgp)"),
    (r"^output\s+file\b", "writes a host file (output file)"),
    (r"^nhrp\s+event\s+socket\b", "connects to a host socket (nhrp event socket)"),
    (r"^(?:no\s+)?service\s+integrated-vtysh-config\b", "makes vtysh write vtysh.conf"),
    (r"^rpki\s+cache\s+\S+\s+\S+\s+\S+\s+\S+", "reads host key files (rpki cache ... ssh)"),
    (r"^(?:enable\s+)?password\b|^username\b", "changes vty login (password/username)"),
    # FRR 8.4.4's enable node has two `copy` forms: `copy FILENAME running-config` reads any host
    # file as root (each line echoed back as `% Unknown command[N]: <line>`, or applied: another
    # router's frr.conf) and is refused; `copy running-config startup-config` (= `write memory`)
    # writes the router's own /etc/frr/<pathspace>, as `write`, `write file|memory|integrated`
    # do: those name no path and stay allowed (the blocklist refuses them)
    (r"^copy\s+\S+\s+running-config\b", "reads a host file into the running config (copy FILE running-config)"),
]

#: the longest line vtysh executes as one command: ``fgets`` of a ``-f`` file (and of ``-b``'s
#: frr.conf) reads at most 4,095 bytes, and the rest of a longer line runs as its own command
MAX_LINE_BYTES = 4095

#: characters Python and FRR cut differently (FRR's words are separated by ' ' and '\t', its
#: lines by '\n'): every C0 control but '\t', DEL, the C1 controls, every other space
#: (U+0085, U+00A0, U+2028, ...), and lone surrogates (a JSON request can hold them; argv would
#: turn U+DC80..U+DCFF into raw bytes)
_BAD_CHAR_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]|(?![ \t])\s")


def line_form(line: str) -> str | None:
    """None if vtysh runs ``line`` as the one command Python reads in it, else the reason."""
    bad = _BAD_CHAR_RE.search(line)
    if bad is not None:
        return (f"holds the control or space character U+{ord(bad.group()):04X} (FRR cuts words and "
                "lines otherwise than this check: only printable text, spaces and tabs are taken)")
    n = len(line.encode("utf-8", "surrogatepass"))
    if n > MAX_LINE_BYTES:
        return (f"is {n:,} bytes long (at most {MAX_LINE_BYTES:,}: vtysh reads a longer line of a "
                "file as several commands)")
    return None


#: (rule name, check) applied to every line before the rules: ``check(line)`` is None or the
#: reason of a ``not_allowed`` refusal. A hook: other bounds add their check here.
LINE_CHECKS: list[tuple[str, Callable[[str], str | None]]] = [
    ("line form", line_form),
    ("regex bound", regex_bound.check),
]


def split_lines(lines: list[str]) -> list[str]:
    """The lines vtysh executes for ``lines``: each cut at ``\n`` (vtysh's ``-c``; a ``-f`` file's
    ``fgets``), nothing dropped."""
    return [part for line in lines for part in str(line).split("\n")]

#: what vtysh's options may be in the sandbox (client side); -N/-b/-w/-u/-C/--vty_socket/
#: --config_dir are refused there
#: the vtysh dry run listing the command set: it starts in the config node (``-C`` has no
#: ``configure terminal``), visits the usual sub-nodes, and ends in the enable node
_DRYRUN_SCRIPT = (
    "list permutations\n"
    "interface ani0\nlist permutations\nexit\n"
    "router bgp 1\nlist permutations\naddress-family ipv4 unicast\nlist permutations\n"
    "exit-address-family\naddress-family ipv6 unicast\nlist permutations\nexit-address-family\nexit\n"
    "router ospf\nlist permutations\nexit\nrouter ospf6\nlist permutations\nexit\n"
    "route-map ANI permit 10\nlist permutations\nexit\nkey chain ANI\nlist permutations\nexit\n"
    "bfd\nlist permutations\nexit\nvrf ANI\nlist permutations\nexit\n"
)
#: first words of commands left out of the command set: read-only or logging only, and they
#: are most of it (millions of permutations)
SKIPPED_FIRST_WORDS = ("show ", "debug ", "no debug ", "ip route ", "no ip route ", "ipv6 route ",
                       "no ipv6 route ")

_KEYWORD_RE = re.compile(r"^[a-z0-9*][a-z0-9_.:*+-]*$")


def _is_keyword(tok: str) -> bool:
    """FRR keywords are lower case; variables are A.B.C.D, X:X::X:X, (1-10), WORD, ..."""
    return bool(_KEYWORD_RE.match(tok)) and not tok.startswith("(")


def _variadic(tok: str) -> bool:
    return tok.endswith("...")


def _listing(argv: list[str], out: set[str], stream: str) -> None:
    """Add the ``list permutations`` lines vtysh ``argv`` prints on ``stream`` to ``out``."""
    skip = tuple(w.encode() for w in SKIPPED_FIRST_WORDS)
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if stream == "stdout" else subprocess.DEVNULL,
        stderr=subprocess.PIPE if stream == "stderr" else subprocess.DEVNULL,
    ) as proc:
        pipe = proc.stdout if stream == "stdout" else proc.stderr
        assert pipe is not None
        for raw in pipe:
            if raw.startswith(b"  ") and not raw[2:].startswith(skip):
                out.add(" ".join(raw.decode("utf-8", "replace").split()))


_PERMS: list[tuple[str, ...]] = []


def frr_permutations(pathspace: str) -> tuple[str, ...]:
    """FRR 8.4.4's command set (vtysh's tree), one full form per command, without the commands
    of :data:`SKIPPED_FIRST_WORDS`: the config node and its usual sub-nodes from a vtysh ``-C``
    dry run (no daemon involved), the enable node (``write``, ``copy``, ``clear``: vtysh lists
    it only when connected) from ``vtysh -N PATHSPACE -c 'list permutations'`` (vtysh-local, read
    only). ~10 s once per vtysh binary (2 cores; 37,000 commands), then read from a cache file
    (:func:`_cache_path`) once per process. Raises OSError if vtysh cannot run."""
    if _PERMS:  # the same FRR for every router: one listing per process
        return _PERMS[0]
    vtysh = program("vtysh")
    cache = _cache_path(vtysh)
    try:
        _PERMS.append(tuple(cache.read_text().splitlines()))
        return _PERMS[0]
    except OSError:
        pass
    d = tempfile.mkdtemp(prefix="ani-frrcmds-")
    out: set[str] = set()
    try:
        open(os.path.join(d, "vtysh.conf"), "w").close()
        script = os.path.join(d, "list.conf")
        with open(script, "w") as fh:
            fh.write(_DRYRUN_SCRIPT)
        _listing([vtysh, "--config_dir", d, "--vty_socket", d, "-C", "-f", script], out, "stderr")
        _listing([vtysh, "-N", pathspace, "-c", "list permutations"], out, "stdout")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    perms = tuple(sorted(out))
    if len(perms) > 1000:  # a listing that worked: keep it for the next process
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("\n".join(perms) + "\n")
            os.replace(tmp, cache)
        except OSError:
            pass
    _PERMS.append(perms)
    return _PERMS[0]


def _cache_path(vtysh: str) -> Path:
    """Where the listing of this vtysh binary is kept (``$XDG_CACHE_HOME`` or ``~/.cache``,
    ``ani/frr-commands-<key>.txt``; the key changes with the binary and the listing's recipe)."""
    st = os.stat(vtysh)
    key = hashlib.sha256(
        f"{vtysh}|{st.st_size}|{st.st_mtime_ns}|{_DRYRUN_SCRIPT}|{SKIPPED_FIRST_WORDS}".encode()
    ).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ani" / f"frr-commands-{key}.txt"


#: a numeric range variable of FRR's written form, ``(1-4294967295)``: group 1 its lowest value
_RANGE_RE = re.compile(r"\((\d+)-\d+\)")


class FrrCommandSet:
    """Expands a command line to the full commands it can abbreviate, for given rules.

    Args:
        rules: (compiled regex, reason) pairs; only FRR commands whose written form (variables
            as their names, or a range ``(1-4294967295)`` as its lowest value, so that a rule
            naming a number, ``clear bgp 64500``, finds ``clear bgp (1-4294967295)``) matches a
            rule are kept, so the set stays small.
        permutations: the command set (:func:`frr_permutations`).
    """

    def __init__(self, rules: list[tuple[re.Pattern[str], str]], permutations: tuple[str, ...]) -> None:
        self.rules = rules
        perms = permutations
        self.candidates: list[tuple[list[str], list[int]]] = []
        for p in perms:
            sample = _RANGE_RE.sub(r"\1", p)
            hits = [i for i, (rx, _) in enumerate(rules) if rx.search(p) or rx.search(sample)]
            if hits:
                self.candidates.append((p.split(), hits))

    def expansions(self, line: str) -> list[tuple[str, int]]:
        """(expanded command, rule index) for every kept FRR command ``line`` can abbreviate."""
        words = line.split()
        out = []
        for toks, hits in self.candidates:
            if len(words) != len(toks) and not (toks and _variadic(toks[-1]) and len(words) >= len(toks)):
                continue
            full = []
            for i, w in enumerate(words):
                t = toks[min(i, len(toks) - 1)]
                if _is_keyword(t):
                    if not t.startswith(w.lower()):
                        break
                    full.append(t)
                else:
                    full.append(w)
            else:
                out += [(" ".join(full), h) for h in hits]
        return out

    def check(self, line: str) -> tuple[str, int] | None:
        """(what the line means, rule index) of the first rule ``line`` hits, or None."""
        norm = " ".join(line.split())
        while norm.lower().startswith("do "):
            norm = norm[3:].lstrip()
        if not norm or norm[0] in "!#":
            return None
        for full, i in self.expansions(norm):  # first: the meaning names FRR's full command
            if self.rules[i][0].search(full):
                return full, i
        for i, (rx, _) in enumerate(self.rules):
            if rx.search(norm):
                return norm, i
        return None


@dataclass
class Refusal:
    """One refused vtysh line: ``code`` is ``not_allowed`` (host rule) or ``blocked``."""

    line: str
    meaning: str
    rule: str
    reason: str
    code: str

    def message(self) -> str:
        means = "" if self.meaning == " ".join(self.line.split()) else f" (= {_short(self.meaning)!r})"
        return f"vtysh line {_short(self.line)!r}{means} refused: {self.reason} [rule: {self.rule}]"


def _short(text: str, n: int = 200) -> str:
    """``text`` cut to ``n`` characters (a refused 4 kB line is not echoed whole)."""
    return text if len(text) <= n else text[:n] + f"... ({len(text):,} characters)"


class LineChecker:
    """Checks vtysh lines against :data:`HOST_RULES` and an optional blocklist."""

    def __init__(self, block_rules: list[tuple[re.Pattern[str], str]] | None, permutations: tuple[str, ...]) -> None:
        host = [(re.compile(p, re.IGNORECASE), r) for p, r in HOST_RULES]
        self.n_host = len(host)
        self.rules = host + list(block_rules or [])
        self.cmds = FrrCommandSet(self.rules, permutations)

    def check(self, line: str) -> Refusal | None:
        """The refusal of one line vtysh executes (already cut at newlines), or None."""
        for name, fn in LINE_CHECKS:
            reason = fn(line)
            if reason is not None:
                return Refusal(line, " ".join(line.split()), name, reason, "not_allowed")
        hit = self.cmds.check(line)
        if hit is None:
            return None
        meaning, i = hit
        rx, reason = self.rules[i]
        return Refusal(line, meaning, rx.pattern, reason, "not_allowed" if i < self.n_host else "blocked")


_checkers: dict[tuple, LineChecker] = {}
_checkers_lock = threading.Lock()


def checker_for(block_patterns: tuple[tuple[str, str], ...], pathspace: str) -> LineChecker:
    """A cached :class:`LineChecker` for a blocklist (``((pattern, reason), ...)``); the
    command set is listed once per process through ``pathspace``'s FRR."""
    with _checkers_lock:
        if block_patterns not in _checkers:
            rules = [(re.compile(p, re.IGNORECASE), r) for p, r in block_patterns]
            _checkers[block_patterns] = LineChecker(rules, frr_permutations(pathspace))
        return _checkers[block_patterns]


#: the in-sandbox ``vtysh``: sends its lines to the broker, prints the answer (run by the
#: host's python3 in isolated mode; no harness code is visible in the sandbox)
CLIENT_SOURCE = r'''#!/usr/bin/python3 -I
import json, os, socket, struct, sys
USAGE = "usage: vtysh [-c COMMAND]... [-d DAEMON] [-E] [-f FILE] (or commands on stdin)\n"
a = sys.argv[1:]; lines = []; daemon = None; echo = False; mode = "command"; i = 0
while i < len(a):
    o = a[i]
    if o in ("-c", "--command") and i + 1 < len(a):
        lines += a[i + 1].split("\n"); i += 2
    elif o.startswith("-c") and len(o) > 2:
        lines += o[2:].split("\n"); i += 1
    elif o in ("-d", "--daemon") and i + 1 < len(a):
        daemon = a[i + 1]; i += 2
    elif o in ("-E", "--echo"):
        echo = True; i += 1
    elif o in ("-f", "--inputfile") and i + 1 < len(a):
        try:
            lines += open(a[i + 1], errors="replace").read().split("\n"); mode = "file"; i += 2
        except OSError as e:
            sys.stderr.write("vtysh: %s\n" % e); sys.exit(1)
    elif o in ("-h", "--help"):
        sys.stdout.write(USAGE); sys.exit(0)
    else:
        sys.stderr.write("vtysh: option %r is not available here (the router's FRR is reached through the harness)\n%s" % (o, USAGE)); sys.exit(2)
if not any(x in a for x in ("-c", "--command", "-f", "--inputfile")) and not any(x.startswith("-c") and len(x) > 2 for x in a):
    try:
        lines = sys.stdin.read().split("\n")
    except (OSError, ValueError):
        lines = []
lines = [l for l in lines if l.strip()]
if mode == "file" and any(x in a for x in ("-c", "--command")):
    sys.stderr.write("vtysh: -f and -c cannot be combined here\n"); sys.exit(2)
req = json.dumps({"lines": lines, "daemon": daemon, "echo": echo, "mode": mode}).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("@SOCKET@")
except OSError as e:
    sys.stderr.write("vtysh: cannot reach the router's FRR (%s)\n" % e); sys.exit(1)
s.sendall(struct.pack("!I", len(req)) + req); s.shutdown(socket.SHUT_WR)
buf = b""
while True:
    c = s.recv(65536)
    if not c: break
    buf += c
try:
    r = json.loads(buf.decode())
except ValueError:
    sys.stderr.write("vtysh: no answer from the broker\n"); sys.exit(1)
sys.stdout.write(r.get("stdout", "")); sys.stderr.write(r.get("stderr", "")); sys.exit(int(r.get("exit", 1)))
'''.replace("@SOCKET@", SANDBOX_SOCKET_DIR + "/" + SOCKET_NAME)


def _oom_kills(pathspace: str) -> int | None:
    """How many processes the kernel has killed at the router's memory bound so far (None: unknown)."""
    from ani.lab import memcg

    try:
        return memcg.usage(pathspace).oom_kills
    except (OSError, ValueError, CapabilityMissing):
        return None


def _bound_note(pathspace: str, hostname: str, before: int | None) -> str:
    """The line telling the agent that its vtysh run reached the router's memory bound (the
    kernel killed one of the router's processes meanwhile: this vtysh or a daemon), or ''."""
    from ani.lab import memcg

    after = _oom_kills(pathspace)
    if before is None or after is None or after <= before:
        return ""
    try:
        limit = memcg.usage(pathspace).limit
    except (OSError, ValueError, CapabilityMissing):
        limit = 0
    return (f"% ani: router {hostname} reached its memory bound ({limit} bytes, its FRR daemons and vtysh "
            f"together): the kernel killed {after - before} of its processes (this vtysh or an FRR daemon)\n")


class VtyBroker:
    """One A0 call's broker: a unix socket in a fresh host dir, served by a thread.

    Args:
        in_router: ``argv -> host-side argv`` running it inside the router: the lab's
            ``node_argv`` bound to it (:meth:`ani.lab.protocol.Lab.node_argv`: its netns, a UTS
            namespace named after it, its memory cgroup), as the harness's own vtysh runs.
        pathspace, hostname: the router's FRR pathspace (vtysh runs as ``vtysh -N PATHSPACE``)
            and name (for messages).
        checker: the line checker, or a function making it (called at the first vtysh run, so a
            call that runs no vtysh never waits for FRR's command set).
        deadline: ``time.monotonic()`` bound for every vtysh run (the call's timeout).
        max_bytes: cap on each of stdout and stderr passed back, bytes.
        parent_dir: where the socket dir is made (A0: the router's dir in the lab dir, so a
            harness killed mid-call leaves nothing once the lab is removed); None: ``/tmp``.

    ``dir`` is bound at :data:`SANDBOX_SOCKET_DIR` in the sandbox; ``refusals`` lists what was
    refused; ``close()`` stops the thread and removes the dir.
    """

    def __init__(self, in_router: Callable[[list[str]], list[str]], pathspace: str, hostname: str,
                 checker: LineChecker | Callable[[], LineChecker],
                 *, deadline: float, max_bytes: int, parent_dir: str | None = None) -> None:
        self.in_router, self.pathspace, self.hostname = in_router, pathspace, hostname
        self._checker = checker
        self.deadline, self.max_bytes = deadline, max_bytes
        self.refusals: list[Refusal] = []
        self.dir = tempfile.mkdtemp(prefix="ani-vtybroker-", dir=parent_dir)
        os.chmod(self.dir, 0o755)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = os.path.join(self.dir, SOCKET_NAME)
        self.sock.bind(path)
        os.chmod(path, 0o666)  # reachable only through the bind into this call's sandbox
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = thread(self._serve, name="ani-vtybroker")
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            try:
                self._handle(conn)
            except Exception as exc:  # an answer for the client whatever happened
                try:
                    conn.sendall(json.dumps({"stdout": "", "stderr": f"% ani: broker error: {exc}\n", "exit": 1}).encode())
                except OSError:
                    pass
            finally:
                conn.close()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(max(0.1, self.deadline - time.monotonic()))
        buf = b""
        while len(buf) < 4 + 16 * 1024 * 1024:
            c = conn.recv(65536)
            if not c:
                break
            buf += c
        (n,) = struct.unpack("!I", buf[:4])
        req = json.loads(buf[4:4 + n].decode())
        lines = split_lines([str(x) for x in req.get("lines", [])])
        if not isinstance(self._checker, LineChecker):
            self._checker = self._checker()
        refused = [r for r in (self._checker.check(l) for l in lines) if r is not None]
        if refused:
            self.refusals += refused
            err = "".join(f"% ani: {r.message()}\n" for r in refused) + "% ani: nothing was sent to FRR\n"
            conn.sendall(json.dumps({"stdout": "", "stderr": err, "exit": 1}).encode())
            return
        from ani.adapters.sandbox import run_capped  # late: sandbox imports this module

        from ani.lab import memcg
        from ani.lab.frr import NO_HISTORY

        if not lines:
            conn.sendall(json.dumps({"stdout": "", "stderr": "", "exit": 0}).encode())
            return
        if not memcg.path(self.pathspace).is_dir():  # a lab made without the routers' cgroups
            conn.sendall(json.dumps({"stdout": "", "stderr": f"% ani: {self.hostname} has no memory cgroup "
                                     f"({memcg.name(self.pathspace)}), so its vtysh would run unbounded; "
                                     "nothing was sent to FRR (restart the lab with this ani)\n",
                                     "exit": 1}).encode())
            return
        args = [program("vtysh"), "-N", self.pathspace, *NO_HISTORY]  # root's history: not the agent's
        if req.get("daemon"):
            args += ["-d", str(req["daemon"])]
        if req.get("echo"):
            args.append("-E")
        infile = None
        if req.get("mode") == "file":  # vtysh -f: the lines as a config file (config node)
            fd, infile = tempfile.mkstemp(prefix="input-", suffix=".conf", dir=self.dir)
            with os.fdopen(fd, "w") as fh:
                fh.write("\n".join(lines) + "\n")
            args += ["-f", infile]
        else:
            for l in lines:
                args += ["-c", l]
        # inside the router, in its memory cgroup (the lab's node_argv joins it): what a line makes
        # vtysh allocate is bounded with the router's FRR (ani.lab.memcg), not only by the call's time
        argv = self.in_router(args)
        kills = _oom_kills(self.pathspace)
        try:
            res = run_capped(argv, timeout_s=max(0.1, self.deadline - time.monotonic()), max_bytes=self.max_bytes)
        finally:
            if infile:
                os.unlink(infile)
        status = 124 if res.timed_out else res.exit_status
        stderr = res.stderr + _bound_note(self.pathspace, self.hostname, kills)
        conn.sendall(json.dumps({"stdout": res.stdout, "stderr": stderr, "exit": status}).encode())

    def close(self) -> None:
        self._stop.set()
        try:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() at once (Linux)
            except OSError:
                pass
            self.sock.close()
        finally:
            self._thread.join(timeout=5)
            shutil.rmtree(self.dir, ignore_errors=True)
