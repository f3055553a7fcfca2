#!/usr/bin/env python3
"""The page as an app a fan keeps open, during a replay of 2020-08-25 in headless Chromium:
installable (a manifest Chromium reads without errors, with 192 and 512 px icons; an SVG and PNG
favicon; an Apple touch icon; /favicon.ico), the right data notice for the source (Retrosheet's for a
replay), and honest states when the network goes: the page loads through a proxy that cuts every
connection while the server goes on; the banner says the page is cut off, and once the network is
back every moment the server stored meanwhile is shown (none lost). Then the server itself stops
(SIGTERM) and starts again on its port, as an operator's restart: the stream reconnects, the banner
says live and the games are loaded again. No
Content-Security-Policy violation and no uncaught exception. Exit status 0 when all holds, 1 with
the reason.

usage: app_shell.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, signal, subprocess, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import CuttableProxy, open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60
chromium = open_browser(output)
# The page goes through a proxy that can cut the network while the server goes on.
proxy = CuttableProxy(url)


def fail(reason):
    chromium.fail(reason, "app-shell-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "app-shell-failure.png")


try:
    chromium.page("Page.navigate", {"url": proxy.url})
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
        return { first: rows[0].innerText, text: rows.map(r => r.innerText).join('\\n'), width: document.documentElement.scrollWidth,
                 giolito: window.state.games.get('CHA202008250')?.status }; })()""",
                "the Hall of Fame rows")
    print("hall of fame first row:", json.dumps(hall["first"]), "while Giolito's game is", hall["giolito"])
    # Nothing from the future of the replay: Giolito's no-hitter may lead 2020 only once it is over
    # (the table read then); before, the longest bid before Aug 25 does (Kenta Maeda's 8 hitless
    # innings on Aug 18, broken up, in words).
    giolito_first = "Aug 25" in hall["first"] and "Lucas Giolito" in hall["first"] and "No-hitter" in hall["first"]
    maeda_first = "Aug 18" in hall["first"] and "Kenta Maeda" in hall["first"] and "singles to center field" in hall["first"]
    if giolito_first and hall["giolito"] != "final":
        fail(f"the Hall of Fame crowns Giolito's no-hitter before it is over: {hall['first']!r}")
    if not giolito_first and not maeda_first:
        fail(f"the first row is neither Giolito's no-hitter (once over) nor Maeda's 8 innings, in words: {hall['first']!r}")
    if "Eric Sogard singles to center field off Kenta Maeda with nobody out in the top of the 9th" not in hall["text"] or "S8/L8" in hall["text"]:
        fail("the broken-up bids are not told in words (Eric Sogard singles to center field ...)")
    if hall["width"] > 390:
        fail(f"the Hall of Fame scrolls the page sideways on a phone ({hall['width']} px)")
    print("screenshot:", chromium.screenshot("hall-of-fame-phone.png"))
    chromium.page("Emulation.clearDeviceMetricsOverride")
    chromium.evaluate("location.hash = '#live'")

    # The network goes while moments keep coming: the banner says so, and when it is back the page
    # shows every moment the server stored meanwhile (none lost between the cut and the resume).
    # (An out's odds moment, `hitless-out`, is for devices that chose odds alerts: the list leaves it out.)
    def stored():
        moments = json.load(urllib.request.urlopen(url + "api/moments?limit=100", timeout=5))
        return [m for m in moments if m["kind"] != "hitless-out"][:20]
    deadline = time.time() + timeout
    while not stored() and time.time() < deadline:
        time.sleep(0.25)
    before = {m["id"] for m in stored()}
    proxy.cut()
    wait("document.querySelector('#connection').classList.contains('down')", "the banner saying the network is gone")
    while len({m["id"] for m in stored()} - before) < 2 and time.time() < deadline:
        time.sleep(0.25)
    meanwhile = [m["id"] for m in stored() if m["id"] not in before]
    print("moments stored while offline:", meanwhile)
    if len(meanwhile) < 2:
        fail("no moments came while the page was offline: the check would prove nothing")
    proxy.restore()
    check = """(() => { const shown = new Set([...document.querySelectorAll('#moments li')].map(li => li.dataset.id));
        const ids = %s; const missing = ids.filter(id => !shown.has(id));
        return document.querySelector('#connection').textContent === 'live' && !missing.length ? ids.length : null; })()"""
    # A moment the page's games have not reached is held back (no spoilers): the check waits for
    # the games too, which the reload brings.
    wait(check % json.dumps(meanwhile), "every moment stored while offline shown once back online")
    print("back online: every moment stored while offline is shown")

    # The server goes (a graceful stop, as a restart does): the banner tells the truth.
    pid = int(os.environ["NOHIT_SERVER_PID"])
    command = json.loads(os.environ["NOHIT_SERVER_COMMAND"])
    reloads = int(chromium.evaluate("document.body.dataset.reloads"))
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
        return b.textContent === 'live' && !b.classList.contains('down') && Number(document.body.dataset.reloads) > %d
          ? { reloads: document.body.dataset.reloads } : null; })()""" % reloads, "live again with the games reloaded", 45)
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
    proxy.close()
