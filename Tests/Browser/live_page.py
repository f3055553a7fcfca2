#!/usr/bin/env python3
"""Loads the web UI in headless Chromium during a fast replay and checks, through the DevTools
protocol (over --remote-debugging-pipe, no extra packages), that an attempt card appears and then
advances through the live stream, with no Content-Security-Policy violation and no uncaught
exception on the page. Saves screenshots. Exit status 0 when it does, 1 with the reason.

usage: live_page.py URL CARD_KEY OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import base64, json, os, shutil, subprocess, sys, tempfile, time

url, card, output = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 120
browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
if not browser:
    print("no chromium on PATH (apt-get install -y chromium)")
    sys.exit(2)
os.makedirs(output, exist_ok=True)

def high(fd):
    """A copy of fd numbered 10 or more, so that 3 and 4 are free to give the browser."""
    copy = os.dup2(fd, os.dup(fd) + 10) if fd < 10 else fd
    if copy != fd:
        os.close(fd)
    return copy


to_browser_r, to_browser_w = map(high, os.pipe())
from_browser_r, from_browser_w = map(high, os.pipe())
profile = tempfile.mkdtemp(prefix="nohit-chromium-")
process = subprocess.Popen(
    [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
     "--remote-debugging-pipe", f"--user-data-dir={profile}", "--window-size=1200,900", "about:blank"],
    # The pipe's ends become fds 3 (commands in) and 4 (replies out), as Chromium expects.
    pass_fds=(3, 4, to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)))
os.close(to_browser_r)
os.close(from_browser_w)
buffer = b""
next_id = 0
events = []  # what the browser said unasked (Log.entryAdded, Runtime.exceptionThrown, ...)


def call(method, params=None, session=None):
    global buffer, next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    os.write(to_browser_w, json.dumps(message).encode() + b"\0")
    while True:
        while b"\0" not in buffer:
            chunk = os.read(from_browser_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            buffer += chunk
        raw, buffer = buffer.split(b"\0", 1)
        reply = json.loads(raw)
        if "method" in reply:
            events.append(reply)
        if reply.get("id") == next_id:
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return reply.get("result", {})


def evaluate(session, expression):
    """The expression's value; None while the page has no execution context yet (it is loading)."""
    try:
        result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
    except RuntimeError as error:
        if "execution context" in str(error).lower():
            return None
        raise
    return result.get("result", {}).get("value")


def screenshot(session, name):
    data = call("Page.captureScreenshot", {"format": "png"}, session)["data"]
    path = os.path.join(output, name)
    with open(path, "wb") as file:
        file.write(base64.b64decode(data))
    return path


def page_problems():
    """CSP violations and uncaught exceptions the page reported so far."""
    problems = []
    for event in events:
        if event["method"] == "Log.entryAdded":
            text = event["params"]["entry"].get("text", "")
            if "Content Security Policy" in text or "Content-Security-Policy" in text:
                problems.append(text)
        elif event["method"] == "Runtime.exceptionThrown":
            details = event["params"]["exceptionDetails"]
            problems.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
    return problems


try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    # Listening before the page loads, so nothing it reports is missed.
    call("Log.enable", session=session)
    call("Runtime.enable", session=session)
    call("Page.navigate", {"url": url}, session)
    probe = f"""(() => {{ const c = document.querySelector('[data-key="{card}"]');
      const bar = c ? c.querySelector('.bar span') : null;
      return {{ card: c ? c.dataset.history : null, text: c ? c.innerText : null,
               bar: bar ? bar.style.width : null,
               updates: Number(document.body.dataset.streamUpdates || 0),
               connection: (document.querySelector('#connection') || {{}}).textContent }}; }})()"""
    deadline = time.time() + timeout
    first = None
    state = None
    while time.time() < deadline:
        state = evaluate(session, probe)
        if state and state["card"]:
            outs = [int(x) for x in state["card"].split(",") if x]
            if first is None:
                first = outs[-1]
                print(f"card {card} appeared at {first} outs: {state['text']!r}")
                print("screenshot:", screenshot(session, "live-card-appeared.png"))
            if state["updates"] > 0 and outs[-1] > first:
                print(f"card advanced through the stream: outs seen {outs}, {state['updates']} stream updates")
                print(f"card text: {state['text']!r}; progress bar width {state['bar']}")
                print("screenshot:", screenshot(session, "live-card-advanced.png"))
                problems = page_problems()
                if problems:
                    print("the page reported problems:", *problems, sep="\n  ")
                    sys.exit(1)
                if not state["bar"]:
                    print("the progress bar has no width (set through the CSSOM, as the CSP requires)")
                    sys.exit(1)
                sys.exit(0)
        time.sleep(0.25)
    print(f"the card did not appear and advance within {timeout} s; last state: {state}")
    screenshot(session, "live-timeout.png")
    sys.exit(1)
finally:
    process.kill()
    shutil.rmtree(profile, ignore_errors=True)
