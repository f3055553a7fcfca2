"""Headless Chromium driven through the DevTools protocol over --remote-debugging-pipe (no extra
packages): what the browser tests share."""
import base64, json, os, select, shutil, signal, subprocess, sys, tempfile, time

# No DevTools command waits longer than this for its answer (a renderer that hangs or crashed
# answers nothing): the call raises `Unanswered`, and the script fails saying which command, not
# hangs. axe-core on a big page under a loaded machine takes seconds, not minutes.
CALL_SECONDS = float(os.environ.get("NOHIT_BROWSER_CALL_SECONDS", "180"))


class Unanswered(RuntimeError):
    """Chromium did not answer a command within its time."""


def find_browser():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _high(fd):
    """A copy of fd numbered 10 or more, so that 3 and 4 are free to give the browser."""
    copy = os.dup2(fd, os.dup(fd) + 10) if fd < 10 else fd
    if copy != fd:
        os.close(fd)
    return copy


def open_browser(output, size=(1280, 900)):
    """Chromium for a test script, or exit 2 (the test then says it was skipped) without one."""
    browser = find_browser()
    if not browser:
        print("no chromium on PATH (apt-get install -y chromium)")
        sys.exit(2)
    return Browser(browser, output, size=size)


class Browser:
    """One headless Chromium with one page (`session`); `events` holds what it said unasked."""

    def __init__(self, browser, output, size=(1200, 900)):
        self.output = output
        os.makedirs(output, exist_ok=True)
        to_browser_r, self.to_browser = map(_high, os.pipe())
        self.from_browser, from_browser_w = map(_high, os.pipe())
        self.profile = tempfile.mkdtemp(prefix="nohit-chromium-")
        self.process = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", f"--window-size={size[0]},{size[1]}",
             "about:blank"],
            # The pipe's ends become fds 3 (commands in) and 4 (replies out), as Chromium expects.
            pass_fds=(3, 4, to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)))
        os.close(to_browser_r)
        os.close(from_browser_w)
        # Stopped from outside (the test's watchdog): the browser goes too, and what was printed
        # so far is flushed with a line saying so.
        def stopped(number, frame):
            print(f"stopped by signal {number} from outside", flush=True)
            self.close()
            raise SystemExit(3)  # through the script's own `finally` (a server it restarted)
        signal.signal(signal.SIGTERM, stopped)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.target = None
        self.new_page()

    def new_page(self):
        """A fresh page in place of the current one (closed): for a page that stopped answering."""
        if self.target:
            try:
                self.call("Target.closeTarget", {"targetId": self.target}, seconds=30)
            except Unanswered:
                pass
        self.target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        # Listening before the page loads, so nothing it reports is missed.
        self.call("Log.enable", session=self.session)
        self.call("Runtime.enable", session=self.session)

    def call(self, method, params=None, session=None, seconds=None):
        """The answer to `method`, within `seconds` (CALL_SECONDS) or `Unanswered`; what Chromium
        says unasked meanwhile goes to `events`."""
        deadline = time.monotonic() + (seconds or CALL_SECONDS)
        told = len(self.events)
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                    crashed = [e["method"] for e in self.events[told:] if e["method"] in
                               ("Inspector.targetCrashed", "Target.targetCrashed", "Inspector.detached")]
                    raise Unanswered(f"chromium did not answer {method} within {seconds or CALL_SECONDS:.0f} s"
                                     + (f" (it said {', '.join(crashed)})" if crashed else ""))
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if "method" in reply:
                self.events.append(reply)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def page(self, method, params=None):
        """A command to the page's session."""
        return self.call(method, params, self.session)

    def evaluate(self, expression):
        """The expression's value; None while the page has no execution context yet (it is loading)."""
        try:
            result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                    "awaitPromise": True})
        except RuntimeError as error:
            if "execution context" in str(error).lower():
                return None
            raise
        return result.get("result", {}).get("value")

    def screenshot(self, name):
        data = self.page("Page.captureScreenshot", {"format": "png"})["data"]
        path = os.path.join(self.output, name)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        return path

    def fail(self, reason, screenshot):
        """Says why, keeps a screenshot named `screenshot`, and ends the script with status 1."""
        print("FAILED:", reason, flush=True)
        try:
            print("screenshot:", self.screenshot(screenshot))
        except Unanswered as error:
            print("no screenshot:", error)
        sys.exit(1)

    def wait(self, expression, what, seconds, screenshot):
        """The expression's first truthy value within `seconds`, polled every quarter second; else
        `fail` saying what did not happen (with the last value)."""
        deadline = time.time() + seconds
        value = None
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        self.fail(f"{what} within {seconds} s (last: {value!r})", screenshot)

    def problems(self):
        """CSP violations and uncaught exceptions the page reported so far."""
        problems = []
        for event in self.events:
            if event["method"] == "Log.entryAdded":
                text = event["params"]["entry"].get("text", "")
                if "Content Security Policy" in text or "Content-Security-Policy" in text:
                    problems.append(text)
            elif event["method"] == "Runtime.exceptionThrown":
                details = event["params"]["exceptionDetails"]
                problems.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        return problems

    def close(self):
        self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


# The views axe-core is run in: a desktop and a phone, each in light and dark.
VIEWS = [(device, metrics, scheme)
         for device, metrics in [("desktop", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}),
                                 ("phone", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})]
         for scheme in ("light", "dark")]


def each_view(browser):
    """Sets the page to each of VIEWS in turn; yields (device, scheme)."""
    for device, metrics, scheme in VIEWS:
        browser.page("Emulation.setDeviceMetricsOverride", metrics)
        browser.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        yield device, scheme


class CuttableProxy:
    """A TCP proxy on loopback in front of the server, for a network that goes and comes back:
    `cut()` closes every open connection and turns new ones away (closed at once), `restore()`
    lets them through again. The page is loaded through `url`."""

    def __init__(self, target_url):
        import socket, threading, urllib.parse
        self._socket, self._threading = socket, threading
        parsed = urllib.parse.urlparse(target_url)
        self.target = (parsed.hostname, parsed.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/"
        self.lock = threading.Lock()
        self.open = []
        self.down = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.down:
                    client.close()
                    continue
                try:
                    server = self._socket.create_connection(self.target)
                except OSError:
                    client.close()
                    continue
                self.open += [client, server]
            for source, sink in ((client, server), (server, client)):
                self._threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(self._socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            self.down = True
            for end in self.open:
                try:
                    end.shutdown(self._socket.SHUT_RDWR)
                except OSError:
                    pass
            self.open = []

    def restore(self):
        with self.lock:
            self.down = False

    def close(self):
        self.cut()
        self.listener.close()
