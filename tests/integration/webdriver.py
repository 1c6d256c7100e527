#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A minimal W3C WebDriver client for headless Chromium, standard library only.

    with WebDriver() as wd:
        wd.get("file:///tmp/page.html")
        el = wd.find(".frame")
        wd.click(el)
        print(wd.text(el), wd.execute("return document.title"))

Elements are the WebDriver element ids (strings). To pass one to a script,
wrap it: wd.execute("return arguments[0].id", WebDriver.ref(el)); elements a
script returns come back as ids. Any WebDriver error raises WebDriverError
with the driver's message."""
import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

# The W3C key of an element reference in JSON.
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    """A WebDriver command failed; the text is the driver's error and message."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """A chromedriver process with one headless Chromium session."""

    DEFAULT_ARGS = [
        "--headless=new", "--disable-gpu", "--window-size=1400,900",
        "--no-sandbox",             # Chromium will not start its sandbox as root
        "--disable-dev-shm-usage",  # a small /dev/shm (containers) crashes tabs
        # Quiet: no first-run pages, no background requests of its own.
        "--no-first-run", "--no-default-browser-check", "--disable-extensions",
        "--disable-background-networking", "--disable-sync", "--disable-component-update",
        "--metrics-recording-only", "--mute-audio",
    ]

    def __init__(self, extra_args=(), chromium="/usr/bin/chromium",
                 chromedriver="/usr/bin/chromedriver", timeout=30):
        self.session = self.proc = None
        self.timeout = timeout
        # No proxy from the environment for our talk with chromedriver.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        # Profile, log and Chromium's own temporary files all go here, so
        # close() leaves nothing behind.
        self.tmp = tempfile.mkdtemp(prefix="webdriver-")
        self.log_path = os.path.join(self.tmp, "chromedriver.log")
        try:
            self.proc = subprocess.Popen(
                [chromedriver, "--port=%d" % self.port, "--log-path=" + self.log_path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                env=dict(os.environ, TMPDIR=self.tmp))
            self._wait_ready()
            args = self.DEFAULT_ARGS + ["--user-data-dir=" + os.path.join(self.tmp, "profile")]
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": chromium, "args": args + list(extra_args)},
                "goog:loggingPrefs": {"browser": "ALL"},
            }}}
            value = self._call("POST", "/session", caps)
            self.session = value["sessionId"]
        except WebDriverError as e:
            tail = self._log_tail()
            self.close()
            raise WebDriverError("%s\nchromedriver log:\n%s" % (e, tail)) from None
        except BaseException:
            self.close()
            raise

    # -- plumbing

    def _wait_ready(self):
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise WebDriverError("chromedriver exited with %d: %s"
                                     % (self.proc.returncode, self._log_tail()))
            try:
                if self._call("GET", "/status").get("ready"):
                    return
            except (OSError, WebDriverError):
                pass
            time.sleep(0.1)
        raise WebDriverError("chromedriver not ready after %d s: %s" % (self.timeout, self._log_tail()))

    def _log_tail(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return "(no log)"

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with self._opener.open(req, timeout=self.timeout + 30) as res:
                answer = json.loads(res.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                value = json.loads(e.read()).get("value", {})
                msg = "%s: %s" % (value.get("error", e.code), value.get("message", ""))
            except ValueError:
                msg = "HTTP %d" % e.code
            raise WebDriverError("%s %s: %s" % (method, path, msg.strip())) from None
        return answer.get("value")

    def _s(self, method, path, body=None):
        """A command within the session."""
        if method == "POST" and body is None:
            body = {}
        return self._call(method, "/session/%s%s" % (self.session, path), body)

    @staticmethod
    def ref(element):
        """An element id as a script argument."""
        return {ELEMENT_KEY: element}

    @classmethod
    def _decode(cls, value):
        """Element references in a script's result become ids."""
        if isinstance(value, list):
            return [cls._decode(v) for v in value]
        if isinstance(value, dict):
            if ELEMENT_KEY in value and len(value) == 1:
                return value[ELEMENT_KEY]
            return {k: cls._decode(v) for k, v in value.items()}
        return value

    # -- commands

    def get(self, url):
        self._s("POST", "/url", {"url": url})

    def current_url(self):
        return self._s("GET", "/url")

    def find(self, css):
        return self._s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT_KEY]

    def find_all(self, css):
        found = self._s("POST", "/elements", {"using": "css selector", "value": css})
        return [e[ELEMENT_KEY] for e in found]

    def click(self, element):
        self._s("POST", "/element/%s/click" % element)

    def send_keys(self, element, text):
        self._s("POST", "/element/%s/value" % element, {"text": text})

    def clear(self, element):
        self._s("POST", "/element/%s/clear" % element)

    def text(self, element):
        return self._s("GET", "/element/%s/text" % element)

    def text_of(self, css):
        """The rendered text of the first element matching css, or None: found
        and read in one script, so a page that re-renders in between (a live
        view refreshing) cannot leave a stale element reference."""
        return self.execute("const e = document.querySelector(arguments[0]);"
                            " return e ? e.innerText : null;", css)

    def attribute(self, element, name):
        return self._s("GET", "/element/%s/attribute/%s" % (element, name))

    def rect(self, element):
        return self._s("GET", "/element/%s/rect" % element)

    def execute(self, script, *args):
        """Runs a script's body (use `return`); arguments are arguments[i]."""
        return self._decode(self._s("POST", "/execute/sync", {"script": script, "args": list(args)}))

    def execute_async(self, script, *args):
        """Runs a script that ends by calling arguments[arguments.length - 1](result)."""
        return self._decode(self._s("POST", "/execute/async", {"script": script, "args": list(args)}))

    def move_to(self, element, x=0, y=0):
        """Moves the pointer to the element's centre (plus x, y) with real mouse events."""
        self.actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                       "actions": [{"type": "pointerMove", "duration": 0, "x": x, "y": y,
                                    "origin": self.ref(element)}]}])

    def press_keys(self, *keys):
        """Presses keys together, e.g. press_keys(CONTROL, "f"), to the focused element."""
        down = [{"type": "keyDown", "value": k} for k in keys]
        up = [{"type": "keyUp", "value": k} for k in reversed(keys)]
        self.actions([{"type": "key", "id": "keyboard", "actions": down + up}])

    def actions(self, sources):
        self._s("POST", "/actions", {"actions": sources})
        self._s("DELETE", "/actions")

    def screenshot(self, path):
        png = base64.b64decode(self._s("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)
        return path

    def console_log(self):
        """The browser's console messages since the last call, as dicts with
        level, message and timestamp; [] if the driver cannot tell."""
        for path in ("/se/log", "/log"):
            try:
                return self._s("POST", path, {"type": "browser"}) or []
            except WebDriverError:
                continue
        return []

    def close(self):
        if self.session:
            try:
                self._s("DELETE", "")
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# WebDriver key codes for press_keys and send_keys.
NULL, BACKSPACE, ENTER, ESCAPE, CONTROL = "\ue000", "\ue003", "\ue007", "\ue00c", "\ue009"
