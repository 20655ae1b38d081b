"""Drive a headless Chromium over the DevTools protocol: open a report, collect JavaScript errors, run checks in
the page, type into it, and take a screenshot. Used by the HTML report's browser test and by
bench/migrate_scale.py --screenshot. Needs Debian's `chromium` and the `websocket-client` package."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-allow-origins=*", "--remote-debugging-port=0"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One tab of a headless Chromium started for it (a context manager)."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60.0):
        self.width, self.height, self.timeout = width, height, timeout
        self.errors: list[str] = []  # uncaught exceptions, console.error and error log entries
        self._ids = itertools.count(1)

    def __enter__(self) -> Page:
        import websocket  # websocket-client

        exe = find_chromium()
        if exe is None:
            raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
        self._profile = tempfile.mkdtemp(prefix="xlate-chromium-")
        self._proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self._profile}",
                                       f"--window-size={self.width},{self.height}", "about:blank"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port = self._port()
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("chromium opened no page")
            time.sleep(0.1)
        self._ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=self.timeout,
                                               suppress_origin=True)
        for method in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(method)
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height, deviceScaleFactor=1,
                  mobile=False)
        return self

    def _port(self) -> int:
        # Chromium writes the port it picked for --remote-debugging-port=0 into the profile folder.
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if marker.exists():
                text = marker.read_text().split()
                if text:
                    return int(text[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._proc.returncode}")
            time.sleep(0.05)
        raise TimeoutError("chromium did not start its DevTools server")

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):
            self._ws.close()
        self._proc.kill()
        self._proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _event(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url', '')})")
        self._last_event = method

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        mid = next(self._ids)
        self._ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def wait_event(self, method: str) -> None:
        deadline = time.monotonic() + self.timeout
        self._last_event = None
        while time.monotonic() < deadline:
            self._event(json.loads(self._ws.recv()))
            if self._last_event == method:
                return
        raise TimeoutError(f"no {method}")

    def open(self, path: str | os.PathLike[str]) -> None:
        self.call("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element and type, as a user would (input events fire per insertion)."""
        self.eval(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: str | os.PathLike[str], full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        Path(path).write_bytes(data)
        return data
