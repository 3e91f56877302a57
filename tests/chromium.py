"""Open an HTML file in headless Chromium (Debian's ``chromium``), for the HTML report's tests:
collect every console error, check that every plot rendered, take a screenshot.

Talks the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (the browser reads
NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), so no port, no
websocket library and no browser download is needed::

    page = open_page(Path("results/x/report.html"), screenshot=Path("/tmp/report.png"))
    page.console_errors   # ["console.error: ...", "exception: ...", "log network: Failed to load ..."]
    page.plots            # [PlotCheck(id="plot-rates", width=..., height=..., ...), ...]
    page.problems()       # [] when every plot rendered and nothing went wrong

A plot is a ``<figure class="plot">`` of the report (:mod:`ani.campaign.html_report`). It
counts as rendered when it holds an ``<svg>`` with a non-empty layout box and drawn content
(``getBBox`` of its shapes), no ``<img>`` in it is broken, and the screenshot shows it: at
least :data:`MIN_INK` of the pixels of its box differ from the page's white background.

Run as a script to write the screenshot of a report (a 256-colour PNG; how docs/report.png is
made)::

    .venv/bin/python tests/chromium.py results/<folder>/report.html docs/report.png

Importable from any test module (``tests/`` is on ``sys.path`` through the rootdir conftest).
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the share of a plot's pixels that must differ from white for it to count as drawn
MIN_INK = 0.01
#: the viewport, CSS pixels
WIDTH, HEIGHT = 1600, 1000

CHECK_JS = r"""
(() => {
  const plots = [...document.querySelectorAll('figure.plot')].map(f => {
    const svg = f.querySelector('svg');
    const r = (svg || f).getBoundingClientRect();
    let bbox = 0;
    try { if (svg) { const b = svg.getBBox(); bbox = b.width * b.height; } } catch (e) {}
    const broken = [...f.querySelectorAll('img')].filter(i => !i.complete || i.naturalWidth === 0)
      .map(i => i.getAttribute('src'));
    return {id: f.id, svg: !!svg, x: r.left + window.scrollX, y: r.top + window.scrollY,
            width: r.width, height: r.height, bbox: bbox,
            shapes: svg ? svg.querySelectorAll('path, use, rect, line, polyline, text').length : 0,
            broken: broken};
  });
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
    .map(i => i.getAttribute('src'));
  return JSON.stringify({plots: plots, broken: broken, width: document.documentElement.scrollWidth,
                         height: document.documentElement.scrollHeight});
})()
"""


def chromium() -> str | None:
    """The path of Debian's chromium, None when it is not installed."""
    return shutil.which("chromium")


@dataclass
class PlotCheck:
    """What the browser saw of one ``<figure class="plot">`` (CSS pixels; ``ink``: the share
    of its screenshot pixels that are not white, None without a screenshot)."""

    id: str
    svg: bool
    x: float
    y: float
    width: float
    height: float
    bbox: float
    shapes: int
    broken: list[str]
    ink: float | None = None

    def problem(self) -> str | None:
        if not self.svg:
            return f"{self.id}: no <svg>"
        if self.broken:
            return f"{self.id}: broken image {self.broken}"
        if self.width < 50 or self.height < 50:
            return f"{self.id}: laid out {self.width:.0f}x{self.height:.0f} px"
        if self.bbox <= 0 or self.shapes == 0:
            return f"{self.id}: nothing drawn ({self.shapes} shapes, bbox {self.bbox:.0f})"
        if self.ink is not None and self.ink < MIN_INK:
            return f"{self.id}: blank in the screenshot ({100 * self.ink:.2f}% ink)"
        return None


@dataclass
class Page:
    """The outcome of :func:`open_page`."""

    plots: list[PlotCheck]
    broken_images: list[str]
    console_errors: list[str]
    width: int
    height: int
    screenshot: Path | None = None
    log: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Every console error, broken image and plot that did not render ([] when all is well)."""
        out = list(self.console_errors)
        out += [f"broken image: {src}" for src in self.broken_images]
        out += [p for p in (pl.problem() for pl in self.plots) if p]
        return out


class DevTools:
    """One headless Chromium and its DevTools pipe. Use as a context manager."""

    def __init__(self, exe: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="ani-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child's fd 3 / 4, moved out of the way first (fcntl F_DUPFD >= 10) so that neither
        # dup2 can overwrite the other pipe end
        # (the low originals stay open until the browser started: subprocess's own error pipe
        # cannot then take fd 3 or 4)
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)

        def child_fds() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
                "--mute-audio", "--disable-dev-shm-usage", "--force-device-scale-factor=1",
                f"--window-size={WIDTH},{HEIGHT}", "about:blank"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                     preexec_fn=child_fds)  # noqa: PLW1509 - fd set-up only
        for fd in (hi_r, hi_w, to_child_r, from_child_w):
            os.close(fd)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("Browser.close")
            except (OSError, TimeoutError, RuntimeError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # our own child, by its pid
                self.proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the DevTools pipe (exit {self.proc.poll()})")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and return its ``result``; events that arrive meanwhile are kept in
        :attr:`events`. Raises RuntimeError with the protocol's error message."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, session: str | None = None, since: int = 0) -> dict[str, Any]:
        """The first event ``method`` (of ``session``) among :attr:`events` from index ``since``
        on, read from the pipe until it comes."""
        deadline = time.monotonic() + self.timeout_s
        seen = since
        while True:
            for ev in self.events[seen:]:
                if ev.get("method") == method and (session is None or ev.get("sessionId") == session):
                    return ev
            seen = len(self.events)
            self.events.append(self._read_message(deadline))


def _errors(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(errors, every console/log line) of the collected events."""
    errors: list[str] = []
    lines: list[str] = []
    for ev in events:
        m, p = ev.get("method"), ev.get("params", {})
        if m == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            lines.append(f"console.{p.get('type')}: {text}")
            if p.get("type") in ("error", "assert"):
                errors.append(f"console.{p.get('type')}: {text}")
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text", "")
            errors.append(f"exception: {text}")
            lines.append(f"exception: {text}")
        elif m == "Log.entryAdded":
            e = p.get("entry", {})
            line = f"log {e.get('source')} {e.get('level')}: {e.get('text')} {e.get('url', '')}".rstrip()
            lines.append(line)
            if e.get("level") == "error":
                errors.append(line)
    return errors, lines


def _ink(png: bytes, plots: list[PlotCheck]) -> None:
    """Set each plot's ``ink``: the share of its box's pixels in the screenshot that are not white."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    for p in plots:
        box = (int(p.x), int(p.y), int(p.x + p.width), int(p.y + p.height))
        if box[2] <= box[0] or box[3] <= box[1]:
            p.ink = 0.0
            continue
        hist = img.crop(box).histogram()
        total = sum(hist)
        p.ink = (total - sum(hist[245:])) / total if total else 0.0


def open_page(html: Path, screenshot: Path | None = None, *, max_height: int = 16000,
              exe: str | None = None, browser: DevTools | None = None) -> Page:
    """Load ``html`` (a file) in headless Chromium, check it and (optionally) write a PNG of the
    whole page (at most ``max_height`` CSS pixels tall) to ``screenshot``.

    ``browser``: a running :class:`DevTools` to open the page in (a browser context of its own,
    closed afterwards: no cache, storage or console shared with another page), instead of
    starting and closing a browser for this one page (about half a second of CPU each).

    Raises RuntimeError when chromium is not installed or the DevTools protocol fails,
    TimeoutError when the page does not load within a minute.
    """
    if browser is not None:
        return _open_in(browser, html, screenshot, max_height)
    exe = exe or chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    with DevTools(exe) as dt:
        return _open_in(dt, html, screenshot, max_height)


def _open_in(dt: DevTools, html: Path, screenshot: Path | None, max_height: int) -> Page:
    """:func:`open_page` in the running browser ``dt``: a new browser context and tab, disposed of
    at the end; only that tab's events count."""
    context = dt.send("Target.createBrowserContext")["browserContextId"]
    try:
        target = dt.send("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
        sid = dt.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        first = len(dt.events)
        for domain in ("Page", "Runtime", "Log"):
            dt.send(f"{domain}.enable", session=sid)
        dt.send("Emulation.setDeviceMetricsOverride",
                {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}, sid)
        dt.send("Page.navigate", {"url": html.resolve().as_uri()}, sid)
        dt.wait_event("Page.loadEventFired", sid, since=first)
        # two animation frames: layout and paint done before anything is measured
        dt.send("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame(() => "
                                     "requestAnimationFrame(r)))", "awaitPromise": True}, sid)
        res = dt.send("Runtime.evaluate", {"expression": CHECK_JS, "returnByValue": True}, sid)
        data = json.loads(res["result"]["value"])
        plots = [PlotCheck(**p) for p in data["plots"]]
        width, height = int(data["width"]), int(data["height"])
        shot = dt.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1},
        }, sid)
        png = base64.b64decode(shot["data"])
        _ink(png, plots)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(png)
        errors, lines = _errors([ev for ev in dt.events[first:] if ev.get("sessionId") == sid])
    finally:
        dt.send("Target.disposeBrowserContext", {"browserContextId": context})
    return Page(plots=plots, broken_images=data["broken"], console_errors=errors, width=width,
                height=height, screenshot=screenshot, log=lines)


if __name__ == "__main__":  # pragma: no cover - the docs screenshot
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: tests/chromium.py REPORT.html OUT.png [MAX_HEIGHT]")
    page = open_page(Path(sys.argv[1]), Path(sys.argv[2]),
                     max_height=int(sys.argv[3]) if len(sys.argv) == 4 else 16000)
    from PIL import Image

    with Image.open(sys.argv[2]) as im:  # 256 colours: a third of the size, the same to the eye
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(sys.argv[2], optimize=True)
    for line in page.problems():
        print("problem:", line)
    print(f"{len(page.plots)} plots; page {page.width}x{page.height} px; wrote {sys.argv[2]}")
    sys.exit(1 if page.problems() else 0)
