#!/usr/bin/env python3
"""Accessibility of the web UI in headless Chromium during a replay of 2020-08-25.

1. axe-core (axe.min.js, injected over the DevTools pipe) on every page: Live, Hall of Fame,
   Scores, a game page, Deals and Settings, each in light and dark, desktop (1280x900) and phone
   (390x844): no serious or critical violation (every violation found is printed, with its impact).
2. Keyboard only: Tab reaches the tabs with a visible focus ring on everything focused, Enter on
   Settings shows it and puts focus on its heading (no scrolling the header away), a team is picked
   with the arrow keys, the threshold changed, Save pressed with Enter — all without push
   (notifications off). After a reload the settings are still there.

No Content-Security-Policy violation and no uncaught exception. Saves screenshots. Exit status 0
when all holds, 1 with the reason.

usage: accessibility.py URL OUTPUT_DIR AXE_JS [TIMEOUT_SECONDS]
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import VIEWS, Unanswered, each_view, open_browser

url, output, axe_path = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 60
axe_source = open(axe_path, encoding="utf-8").read()
chromium = open_browser(output)


def fail(reason):
    chromium.fail(reason, "accessibility-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "accessibility-failure.png")


def key(name, code, vk, text=None):
    down = {"type": "keyDown", "key": name, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
    if text:
        down["text"] = text
    chromium.page("Input.dispatchKeyEvent", down)
    chromium.page("Input.dispatchKeyEvent", {"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": vk,
                                             "nativeVirtualKeyCode": vk})


def tab():
    key("Tab", "Tab", 9)


FOCUSED = """(() => { const e = document.activeElement; if (!e || e === document.body) return null;
  const style = getComputedStyle(e);
  return { tag: e.tagName, id: e.id, text: (e.innerText || e.getAttribute('aria-label') || '').slice(0, 40),
           tab: e.dataset?.tab || null, ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 }; })()"""


def tab_until(predicate, what, presses=25):
    """Presses Tab until the focused element satisfies `predicate`; every element focused on the
    way must show a focus ring."""
    for _ in range(presses):
        tab()
        focused = chromium.evaluate(FOCUSED)
        if not focused:
            continue
        if not focused["ring"]:
            fail(f"no visible focus ring on {focused}")
        if predicate(focused):
            return focused
    fail(f"{what}: not reached with {presses} presses of Tab")


PAGES = [
    ("live", "document.body.dataset.reloads >= 1 && document.querySelector('#connection').textContent === 'live'"),
    ("hall-of-fame", "document.querySelectorAll('#hall tbody tr').length >= 10"),
    ("scores", "document.querySelectorAll('#games .game').length > 0"),
    # Before its first pitch the pre-game section, after it the box score: either, as the replay
    # stands when the page is checked.
    ("game/CHA202008250", "!!document.querySelector('#game-page .pregame') || (!!document.querySelector('#game-page table.pitchers') && !!document.querySelector('#game-page table.batters'))"),
    # The day's first game, under way from the start: its box score and scoring summary.
    ("game/HOU202008251", "!!document.querySelector('#game-page table.batters') && !!document.querySelector('#game-page .scoring-summary, #game-page h3 + p.muted')"),
    ("standings", "document.querySelectorAll('#standings table.standings:not(.race)').length === 6 && document.querySelectorAll('#standings table.race').length === 2"),
    ("deals", "document.querySelector('#deal-total').textContent !== '' && !document.querySelector('#chart-month').textContent.includes('Loading')"),
    ("metrics", "!!document.querySelector('#metrics-form')"),
    ("settings", "document.querySelectorAll('#settings-team option').length > 25 && !document.querySelector('#deal-subscriptions').textContent.includes('Loading')"),
]
AXE = """(async () => {
  const result = await axe.run(document, { resultTypes: ['violations'] });
  return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
    first: v.nodes[0]?.target?.join(' '), summary: (v.nodes[0]?.failureSummary || '').slice(0, 200) }));
})()"""

try:
    chromium.page("Page.navigate", {"url": url})
    wait(PAGES[0][1], "the page loaded and live")
    chromium.evaluate(axe_source + "\n;true")
    if not chromium.evaluate("typeof axe === 'object' && axe.version"):
        fail("axe-core did not load into the page")
    print("axe-core", chromium.evaluate("axe.version"))
    # The check can fail: an input without a name is found (then taken away again).
    probe = chromium.evaluate("""(async () => { const input = document.createElement('input'); input.id = 'axe-probe';
      document.querySelector('main').append(input);
      const result = await axe.run('#axe-probe', { runOnly: ['label'] }); input.remove();
      return result.violations.map(v => `${v.impact}: ${v.id}`); })()""")
    print("axe finds an unnamed input:", probe)
    if probe != ["critical: label"]:
        fail(f"axe did not report an input without a label: {probe}")

    def axe_on(page, ready, device, scheme):
        """axe's violations on the page shown; a page that stops answering (seen once, under load,
        with nothing printed to say where) is said and replaced by a fresh one, once."""
        try:
            return chromium.evaluate(AXE)
        except Unanswered as error:
            print(f"axe on {page} ({device}, {scheme}): {error}; trying once more in a fresh page", flush=True)
        chromium.new_page()
        metrics, _ = [(m, s) for d, m, s in VIEWS if d == device and s == scheme][0]
        chromium.page("Emulation.setDeviceMetricsOverride", metrics)
        chromium.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        chromium.page("Page.navigate", {"url": url + "#" + page})
        wait(ready, f"{page} ready again ({device}, {scheme})")
        chromium.evaluate(axe_source + "\n;true")
        return chromium.evaluate(AXE)

    serious = []
    for device, scheme in each_view(chromium):
        for page, ready in PAGES:
            chromium.evaluate(f"location.hash = '#{page}'")
            wait(ready, f"{page} ready ({device}, {scheme})")
            violations = axe_on(page, ready, device, scheme)
            if violations is None:
                fail(f"axe did not answer on {page} ({device}, {scheme})")
            name = f"a11y-{page.replace('/', '-')}-{device}-{scheme}.png"
            chromium.screenshot(name)
            counted = [v for v in violations if v["impact"] in ("serious", "critical")]
            print(f"axe {page:18} {device:7} {scheme:5}: {len(violations)} violation(s), "
                  f"{len(counted)} serious or critical")
            for v in violations:
                print(f"    {v['impact']}: {v['id']} ({v['nodes']} node(s), first {v['first']}): {v['summary']}")
            serious += [(page, device, scheme, v["id"]) for v in counted]
    if serious:
        fail(f"serious or critical violations: {serious}")
    chromium.page("Emulation.clearDeviceMetricsOverride")
    chromium.page("Emulation.setEmulatedMedia", {"features": []})

    # Keyboard only, from a fresh load with nothing saved.
    chromium.evaluate("localStorage.clear()")
    chromium.page("Page.navigate", {"url": url})
    wait(PAGES[0][1], "the page loaded again")
    time.sleep(0.5)
    tab_until(lambda f: f["tab"] == "settings", "the Settings tab")
    key("Enter", "Enter", 13, "\r")
    wait("location.hash === '#settings' && !document.querySelector('#settings').hidden", "Settings shown by Enter")
    where = chromium.evaluate("({ focus: document.activeElement.textContent, scroll: window.scrollY })")
    if where["focus"] != "Settings" or where["scroll"] != 0:
        fail(f"Enter on the tab did not put focus on the Settings heading at the top: {where}")
    wait(PAGES[-1][1], "Settings' teams and deals")
    tab_until(lambda f: f["id"] == "settings-team", "the team picker")
    key("ArrowDown", "ArrowDown", 40)
    picked = wait("document.querySelector('#chips .chip')?.firstChild.textContent", "a team picked with the arrow key")
    print("picked by keyboard:", picked)
    tab_until(lambda f: f["id"] == "threshold", "the threshold")
    key("ArrowDown", "ArrowDown", 40)
    threshold = chromium.evaluate("document.querySelector('#threshold').value")
    tab_until(lambda f: f["id"] == "save", "the Save button")
    key("Enter", "Enter", 13, "\r")
    status = wait("document.querySelector('#settings-status').textContent", "Save's answer")
    print("saved without push:", status)
    if status != "Saved in this browser." or chromium.evaluate("location.hash") != "#settings":
        fail(f"Save without notifications did not keep the settings here: {status!r}")
    print("screenshot:", chromium.screenshot("settings-keyboard-saved.png"))
    chromium.page("Page.reload")
    wait("document.querySelectorAll('#settings-team option').length > 25", "Settings after the reload")
    kept = chromium.evaluate("({ team: document.querySelector('#chips .chip')?.firstChild.textContent, threshold: document.querySelector('#threshold').value })")
    print("after a reload:", json.dumps(kept))
    if kept != {"team": picked, "threshold": threshold} or threshold == "6":
        fail(f"the settings saved without push were not kept: {kept}, expected {picked} and {threshold} (not 6)")

    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("accessibility: every check held")
    sys.exit(0)
finally:
    chromium.close()
