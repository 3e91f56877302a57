"""Running FRR's own ``frr-reload.py`` on a lab router, without ever writing its startup config.

``frr-reload.py --reload`` compares the given configuration with the running one and applies
the difference (deletions as ``vtysh -c 'configure' -c 'no ...'``, additions as one
``vtysh -f``; it does this in two passes). It then runs ``vtysh write`` (overwriting
``frr.conf``) unless the file it was given IS ``<confdir>/frr.conf``: so it is always run with
``--confdir`` and ``--rundir`` pointing at a fresh temporary directory holding the target as
``frr.conf`` (and an empty ``<pathspace>/vtysh.conf``, which keeps vtysh quiet and means
"integrated config", which frr-reload requires).

With ``ANI_VTYSH_CACHE`` set (:mod:`ani.host.vtysh_cache`), frr-reload runs a small ``vtysh``
of this module (``--bindir``, :data:`MARK_SHIM`): every run is FRR's vtysh but its three *mark*
runs (``vtysh -m -f``: vtysh parses a text and prints it with each context's end marked,
connecting to no daemon), which are answered from the ``marks-*`` subdirectory by the SHA-256 of
the text marked when vtysh marked that text before with exit status 0 and nothing on stderr. Of
the nine vtysh runs of a reload (~37 ms of CPU each), the marks of the target and of the running
configuration before and after the first pass are mostly texts marked before: the same targets,
a router back where it was, the next lab of the topology.

Its exit code is not a verdict (vtysh exit codes are unreliable in FRR 8.4, and a line FRR
refuses can still leave rc 0): callers must compare the running config with the target
afterwards, and may need a second run (e.g. after ``no neighbor X remote-as``, which also drops
the neighbor's other lines).
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ani.device.render import BANNER_PREFIXES, HEADER_PREFIXES
from ani.host import vtysh_cache
from ani.host.programs import program

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

FRR_RELOAD = "/usr/lib/frr/frr-reload.py"

#: argv run inside the router; ``{pathspace}``: the router's FRR pathspace, ``{rundir}``: the
#: temporary directory, ``{config}``: ``{rundir}/frr.conf`` (the target). ``--stdout`` keeps its
#: log out of /var/log/frr.
DEFAULT_ARGV: tuple[str, ...] = (
    FRR_RELOAD, "--reload", "--stdout", "--pathspace", "{pathspace}",
    "--confdir", "{rundir}", "--rundir", "{rundir}", "--bindir", "{bindir}", "{config}",
)
#: ``{bindir}``: the directory of the vtysh frr-reload runs: FRR's own, or {rundir} holding
#: :data:`MARK_SHIM` when ``ANI_VTYSH_CACHE`` is set (module doc)

#: files kept in the ``marks`` directory (beyond it, the oldest quarter goes)
MARKS_KEEP = 2048

#: frr-reload's vtysh when marks are cached (module doc). Its mark runs are the last three
#: arguments ``-m -f FILE`` (``-`` for stdin: frr-reload pipes ``show running-config`` in);
#: scratch files go in the reload's own temporary directory, a kept text is renamed into place.
MARK_SHIM = r"""#!/bin/sh
# frr-reload's vtysh (--bindir): written by ani.device.frr_reload for one reload
vtysh={vtysh} cache={cache} run={rundir} keep={keep}
m= n= f=
for a; do m=$n n=$f f=$a; done
[ "$m" = -m ] && [ "$n" = -f ] || exec "$vtysh" "$@"
in=$f
if [ "$f" = - ]; then in=$run/mark-in.$$; cat > "$in" || exec "$vtysh" "$@"; fi
sum=$(sha256sum < "$in") && key=${{sum%% *}} && [ -n "$key" ] || exec "$vtysh" "$@" < "$in"
if [ -f "$cache/$key" ]; then cat "$cache/$key"; exit; fi
out=$run/mark-out.$$ err=$run/mark-err.$$
"$vtysh" "$@" < "$in" > "$out" 2> "$err"
rc=$?
cat "$out"; cat "$err" >&2
if [ $rc -eq 0 ] && [ ! -s "$err" ] && mkdir -p -m 0700 "$cache" && cp "$out" "$cache/.$key.$$"; then
  mv -f "$cache/.$key.$$" "$cache/$key"
  set -- "$cache"/*
  if [ $# -gt $keep ]; then ls -t "$cache" | tail -n +$((keep * 3 / 4 + 1)) | (cd "$cache" && xargs rm -f); fi
fi
exit $rc
"""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: frr-reload's own log lines: ``2026-11-29 17:59:53,176  INFO: ...``
_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s+([A-Z]+):\s*")
#: frr-reload's INFO lines that report a failure: a deletion vtysh refused (it then tries a
#: shorter ``no`` form, which may or may not remove the line), a line it never removes
_INFO_FAILURE = re.compile(r'^Failed to execute |^"(?P<line>.*)" cannot be removed$')


@dataclass
class ReloadResult:
    """One frr-reload run.

    Attributes:
        rc: its exit status (not a verdict, see the module docstring).
        timed_out: it was killed after ``timeout`` seconds.
        errors: what went wrong, in FRR's and frr-reload's words (:func:`error_lines`).
        output: its whole stdout + stderr.
        elapsed_s: wall time, seconds.
    """

    rc: int
    timed_out: bool
    errors: list[str] = field(default_factory=list)
    output: str = ""
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and not self.errors


def frr_reload(
    lab: Lab,
    router: str,
    config: str,
    timeout: float = 30.0,
    argv: list[str] | tuple[str, ...] = DEFAULT_ARGV,
) -> ReloadResult:
    """Run frr-reload.py inside ``router`` of ``lab`` towards ``config`` (FRR configuration text,
    e.g. ``show running-config`` output or ``"frr defaults traditional\\n" + render(model)``).

    ``timeout``: seconds, after which the run is killed (``timed_out``). Raises what
    ``lab.exec`` raises (UnknownNode, LabGone when the lab is not running); a failing reload
    is reported in the result, not raised.
    """
    ps = lab.pathspace(router)
    with tempfile.TemporaryDirectory(prefix="ani-frr-reload-") as rundir:
        target = Path(rundir) / "frr.conf"
        (Path(rundir) / ps).mkdir()
        (Path(rundir) / ps / "vtysh.conf").write_text("")
        body = [ln for ln in config.splitlines() if not ln.strip().startswith(BANNER_PREFIXES)]
        target.write_text("\n".join(body) + "\n", encoding="utf-8")
        bindir = vtysh_bindir(Path(rundir))
        cmd = [a.format(pathspace=ps, rundir=rundir, config=str(target), bindir=bindir) for a in argv]
        res = lab.exec(router, cmd, timeout=timeout)
    output = _ANSI.sub("", res.stdout + res.stderr)
    return ReloadResult(rc=res.rc, timed_out=res.timed_out, errors=error_lines(output), output=output,
                        elapsed_s=res.elapsed_s)


def vtysh_bindir(rundir: Path) -> str:
    """The ``--bindir`` of a reload whose temporary directory is ``rundir``: ``rundir`` with
    :data:`MARK_SHIM` written in it as ``vtysh`` when ``ANI_VTYSH_CACHE`` is set, else the
    directory of FRR's vtysh. Raises ProgramMissing (no vtysh)."""
    vtysh = program("vtysh")
    cache = vtysh_cache.subdir("marks")
    if cache is None:
        return os.path.dirname(vtysh)
    shim = rundir / "vtysh"
    shim.write_text(MARK_SHIM.format(vtysh=shlex.quote(vtysh), cache=shlex.quote(str(cache)),
                                     rundir=shlex.quote(str(rundir)), keep=MARKS_KEEP))
    shim.chmod(0o700)
    return str(rundir)


def error_lines(output: str) -> list[str]:
    """What went wrong in frr-reload's output, each line once, in order:

    - its ``ERROR`` / ``CRITICAL`` and ``WARNING`` log lines (``frr-reload.py failed due to``);
    - its ``INFO`` lines that report a failure: ``Failed to execute <context>  no <line>`` (a
      deletion vtysh refused; frr-reload then tries shorter ``no`` forms, so the line may be
      gone or not: the caller compares) and ``"<line>" cannot be removed`` (``line vty``,
      ``password ...``: never deleted), except for the header lines ``frr version`` / ``frr
      defaults``, which are not configuration;
    - every line that is not its log: FRR's and vtysh's own words (``line 2: Failure to
      communicate[13] to ospfd, line:  network ..``, ``Please remove all ip ospf area x.x.x.x
      commands first.``, ``% ...``), a Python traceback.

    Its dumps of the lines it sends (``['router ospf\\n ...']``) are left out."""
    out: list[str] = []
    for raw in output.splitlines():
        ln = raw.strip()
        if not ln or ln.startswith(("[", "'")):
            continue
        if m := _LOG.match(ln):
            ln = ln[m.end():]
            if m.group(1) not in ("ERROR", "CRITICAL", "WARNING"):
                f = _INFO_FAILURE.match(ln)
                if f is None or (f.group("line") or "").startswith(HEADER_PREFIXES):
                    continue
        if ln and ln not in out:
            out.append(ln)
    return out
