#!/usr/bin/env python3
"""The page as an app a fan keeps open, during a replay of 2020-08-25 in headless Chromium:
installable (a manifest Chromium reads without errors, with 192 and 512 px icons; an SVG and PNG
favicon; an Apple touch icon; /favicon.ico), the right data notice for the source (Retrosheet's for a
replay), and honest states when the network goes: the banner says the page is cut off, and when it
comes back (the server stopped with SIGTERM and started again on its port, as an operator's
restart) the stream reconnects, the banner says live and the games are loaded again. No
Content-Security-Policy violation and no uncaught exception. Exit status 0 when all holds, 1 with
the reason.

usage: app_shell.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, signal, subprocess, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, find_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60
browser = find_browser()
if not browser:
    print("no chromium on PATH (apt-get install -y chromium)")
    sys.exit(2)
chromium = Browser(browser, output, size=(1280, 900))


def fail(reason):
    chromium.fail(reason, "app-shell-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "app-shell-failure.png")


try:
    chromium.page("Page.navigate", {"url": url})
    wait("document.querySelector('#connection').textContent === 'live' && document.body.dataset.reloads === '1'",
         "the page loaded and the stream live")
    manifest = chromium.page("Page.getAppManifest")
    print("manifest:", json.dumps({"url": manifest.get("url"), "errors": manifest.get("errors")}))
    if not manifest.get("url", "").endswith("/manifest.json") or manifest.get("errors"):
        fail(f"the manifest is missing or has errors: {manifest}")
    parsed = json.loads(manifest.get("data") or "{}")
    sizes = {icon.get("sizes") for icon in parsed.get("icons", [])}
    if not {"192x192", "512x512"} <= sizes or parsed.get("display") != "standalone":
        fail(f"the manifest lacks 192 and 512 px icons or standalone display: {parsed}")
    fetched = wait("""(async () => {
        const paths = ['/icon.svg', '/icon-192.png', '/icon-512.png', '/apple-touch-icon.png', '/favicon.ico'];
        const answers = await Promise.all(paths.map(p => fetch(p).then(r => `${p} ${r.status} ${r.headers.get('content-type')}`)));
        return answers; })()""", "the icons")
    print("icons:", json.dumps(fetched))
    if any(" 200 " not in line for line in fetched):
        fail(f"an icon is not served: {fetched}")
    notice = chromium.evaluate("""({ retrosheet: !document.querySelector('#notice-retrosheet').hidden,
        mlb: !document.querySelector('#notice-mlb').hidden })""")
    print("notice:", json.dumps(notice))
    if not notice["retrosheet"] or notice["mlb"]:
        fail(f"a replay shows Retrosheet's notice and not MLB's: {notice}")

    # The Hall of Fame on a phone, in fan language: names, "Aug 25", the hit in words, no codes.
    chromium.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    chromium.evaluate("location.hash = '#hall-of-fame'")
    hall = wait("""(() => { const rows = [...document.querySelectorAll('#hall tbody tr')];
        if (rows.length < 10) return null;
        return { first: rows[0].innerText, text: rows.map(r => r.innerText).join('\\n'), width: document.documentElement.scrollWidth }; })()""",
                "the Hall of Fame rows")
    print("hall of fame first row:", json.dumps(hall["first"]))
    if "Aug 25" not in hall["first"] or "Lucas Giolito" not in hall["first"] or "No-hitter" not in hall["first"]:
        fail(f"the first row is not Giolito's no-hitter on Aug 25 in words: {hall['first']!r}")
    if "Eric Sogard's single to center off Kenta Maeda, 0 outs in the 9th" not in hall["text"] or "S8/L8" in hall["text"]:
        fail("the broken-up bids are not told in words (Eric Sogard's single to center ...)")
    if hall["width"] > 390:
        fail(f"the Hall of Fame scrolls the page sideways on a phone ({hall['width']} px)")
    print("screenshot:", chromium.screenshot("hall-of-fame-phone.png"))
    chromium.page("Emulation.clearDeviceMetricsOverride")
    chromium.evaluate("location.hash = '#live'")

    # The server goes (a graceful stop, as a restart does): the banner tells the truth.
    pid = int(os.environ["NOHIT_SERVER_PID"])
    command = json.loads(os.environ["NOHIT_SERVER_COMMAND"])
    os.kill(pid, signal.SIGTERM)
    down = wait("""(() => { const b = document.querySelector('#connection');
        return b.classList.contains('down') ? b.textContent : null; })()""", "the banner saying the page is cut off")
    print("cut off:", down)
    print("screenshot:", chromium.screenshot("app-shell-cut-off.png"))
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "healthz", timeout=1)
            time.sleep(0.2)
        except Exception:
            break
    restarted = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    back = wait("""(() => { const b = document.querySelector('#connection');
        return b.textContent === 'live' && !b.classList.contains('down') && Number(document.body.dataset.reloads) >= 2
          ? { reloads: document.body.dataset.reloads } : null; })()""", "live again with the games reloaded", 45)
    print("back:", json.dumps(back))
    restarted.terminate()
    restarted.wait(timeout=30)
    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("app shell: every check held")
    sys.exit(0)
finally:
    chromium.close()
