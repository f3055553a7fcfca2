#!/usr/bin/env python3
"""Keyboard focus and the screen reader on the Live tab during a replay of 2020-08-25 in headless
Chromium (the caller starts `nohit serve --replay 2020-08-25 --speed 300`):

1. Focus survives live updates: the "Game page" link on Giolito's attempt card is focused, then for
   30 s, once a second, the focused element is still that link (recognised by a marker property
   set on it: the page's keyed updates sync attributes to the server's HTML, so an attribute would
   not survive even on the same element), while the stream keeps updating the page.
2. Tab moves through the page in order: each press of Tab (Input.dispatchKeyEvent) focuses the
   next focusable element in document order, from that link to the end of the page, then from the
   top of the page through the tabs into the Live tab. Live updates may add or move elements
   between presses: a press is in order when the element it focused comes right after the one
   before it in the document as it was either just before or just after the press.
3. The screen-reader live region (#announcer, aria-live) announces the no-hitter when Giolito's
   bid completes: its text, recorded by a MutationObserver from the page's first moments, holds
   the server's title and body of the completed moment. The bid may already be complete when the
   script first looks (a loaded machine): that is accepted as long as the page saw it live.

No Content-Security-Policy violation and no uncaught exception. Prints what it saw as JSON lines;
exit status 0 when every check held, 1 with the reason.

usage: keyboard_focus.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 150
chromium = open_browser(output)
GAME = "CHA202008250"
CARD = f"#attempts [data-key=\"{GAME}-home\"]"
FOCUS_SECONDS = 30


def fail(reason):
    chromium.fail(reason, "keyboard-focus-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "keyboard-focus-failure.png")


def press_tab():
    for kind in ("keyDown", "keyUp"):
        chromium.page("Input.dispatchKeyEvent", {"type": kind, "key": "Tab", "code": "Tab",
                                                 "windowsVirtualKeyCode": 9, "nativeVirtualKeyCode": 9})


# The page's focusable elements in document order, as sequential navigation sees them (shown,
# not disabled, not tabindex=-1); `describe` names one for the report.
HELPERS = """
window.__focusables = () => [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]')]
  .filter((e) => !e.disabled && e.tabIndex >= 0 && !e.closest('[hidden], [inert]')
    && e.checkVisibility({ visibilityProperty: true }));
window.__describe = (e) => !e || e === document.body ? 'body' : `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}`
  + ` "${(e.getAttribute('aria-label') || e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 50)}"`
  + (e.closest('article[data-key], li[data-key]') ? ` in [data-key=${e.closest('article[data-key], li[data-key]').dataset.key}]` : '');
true
"""
# Every text the live region was given, from the first moments of the page.
OBSERVE = """(() => { const region = document.querySelector('#announcer'); if (!region) return false;
  if (!window.__announced) { window.__announced = region.textContent ? [region.textContent] : [];
    new MutationObserver(() => { if (region.textContent) window.__announced.push(region.textContent); })
      .observe(region, { childList: true, characterData: true, subtree: true }); }
  return region.getAttribute('aria-live'); })()"""
CARD_STATE = f"""(() => {{ const c = document.querySelector('{CARD}');
  return c ? {{ status: c.dataset.status, outs: Number(c.dataset.outs), text: c.innerText }} : null; }})()"""


try:
    chromium.page("Page.navigate", {"url": url + "#live"})
    live = wait(OBSERVE, "the page with its live region (#announcer)")
    if live not in ("polite", "assertive"):
        fail(f"#announcer is not an aria-live region: aria-live={live!r}")
    chromium.evaluate(HELPERS)
    first = wait(f"document.body.dataset.reloads >= 1 && document.querySelector('#connection').textContent === 'live' && ({CARD_STATE})",
                 "Giolito's attempt card on the Live tab with the stream live")
    print("card at first look:", json.dumps({k: first[k] for k in ("status", "outs")}))
    saw_alive = first["status"] == "alive"

    # 1. A focused link keeps focus for 30 s of live updates.
    chromium.evaluate(f"""(() => {{ const link = document.querySelector('{CARD} a.game-link');
      link.nohitFocusProbe = 'giolito-game-link'; link.focus(); }})()""")
    FOCUSED = f"""(() => {{ const e = document.activeElement; const c = document.querySelector('{CARD}');
      return {{ probe: e?.nohitFocusProbe || null, focused: __describe(e), scrollY: window.scrollY,
               updates: Number(document.body.dataset.streamUpdates || 0),
               card: c ? `${{c.dataset.status}} ${{c.dataset.outs}}` : null }}; }})()"""
    start = chromium.evaluate(FOCUSED)
    if start["probe"] != "giolito-game-link":
        fail(f"the Game page link on Giolito's card did not take focus: {start}")
    cards = [start["card"]]
    began = time.time()
    for second in range(1, FOCUS_SECONDS + 1):
        time.sleep(max(0, began + second - time.time()))
        now = chromium.evaluate(FOCUSED)
        if now["card"] != cards[-1]:
            cards.append(now["card"])
        if now["probe"] != "giolito-game-link":
            fail(f"focus left the Game page link after {second} s of live updates: now on {now['focused']} "
                 f"({now['updates'] - start['updates']} updates; card states {cards})")
        saw_alive = saw_alive or (now["card"] or "").startswith("alive")
    updates = now["updates"] - start["updates"]
    print("focus kept:", json.dumps({"seconds": FOCUS_SECONDS, "focused": now["focused"], "stream_updates": updates,
                                     "card_states": cards, "scroll_y": [start["scrollY"], now["scrollY"]]}))
    if updates < 1:
        fail("no stream update came during the 30 s: the check proved nothing (a replay must be under way)")
    if now["scrollY"] != start["scrollY"]:
        fail(f"the page scrolled under the reader during live updates: {start['scrollY']} -> {now['scrollY']}")
    print("screenshot:", chromium.screenshot("keyboard-focus-kept.png"))

    # 2. Tab moves through the page in document order.
    STEP = """((phase) => { const list = __focusables(); const e = document.activeElement;
      if (phase === 'before') { window.__previous = e; const i = list.indexOf(e);
        window.__expected = list[i + 1] || null; return { index: i, count: list.length }; }
      const i = list.indexOf(window.__previous);
      const inOrder = e === window.__expected || (i >= 0 && list[i + 1] === e);
      return { inOrder, focused: __describe(e), expected: __describe(window.__expected),
               last: list.indexOf(e) === list.length - 1, count: list.length }; })"""
    def tab_through(what, presses, stop_when_last=True):
        walked = []
        for _ in range(presses):
            before = chromium.evaluate(f"{STEP}('before')")
            if before["index"] < 0 or before["index"] == before["count"] - 1:
                break
            press_tab()
            after = chromium.evaluate(f"{STEP}('after')")
            walked.append(after["focused"])
            if not after["inOrder"]:
                fail(f"{what}: Tab went to {after['focused']}, not the next in document order ({after['expected']}); "
                     f"walked {walked}")
            if stop_when_last and after["last"]:
                break
        return walked

    rest = tab_through("from the Game page link to the end of the page", 60)
    print("tab order, from the focused link:", json.dumps(rest))
    if not rest:
        fail("Tab moved nowhere from the Game page link")
    # From the top: a click on the page's title (not focusable) starts sequential navigation there.
    box = chromium.evaluate("(() => { const r = document.querySelector('header h1').getBoundingClientRect(); window.scrollTo(0, 0); return { x: r.left + 5, y: r.top + r.height / 2 }; })()")
    for kind in ("mousePressed", "mouseReleased"):
        chromium.page("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})
    press_tab()
    top = chromium.evaluate("(() => { const list = __focusables(); return { first: list.indexOf(document.activeElement) === 0, focused: __describe(document.activeElement) }; })()")
    if not top["first"]:
        fail(f"Tab from the top of the page did not focus its first focusable element: {top['focused']}")
    head = [top["focused"]] + tab_through("from the top of the page into the Live tab", 8, stop_when_last=False)
    print("tab order, from the top:", json.dumps(head))
    if not any("[data-key=" in step for step in head):
        fail(f"Tab from the top did not go through the tabs into the Live tab's cards: {head}")

    # 3. The live region announces the no-hitter once the bid is complete.
    wait(f"({CARD_STATE})?.status === 'official'", "Giolito's card complete (a celebration card)")
    completed = None
    deadline = time.time() + timeout
    while time.time() < deadline and not completed:
        moments = json.load(urllib.request.urlopen(url + "api/moments?limit=100", timeout=5))
        completed = next((m for m in moments if m["game_id"] == GAME and m["kind"] == "completed"), None)
        if not completed:
            time.sleep(0.5)
    if not completed:
        fail("the server has no completed moment for Giolito's game")
    # Shortly: the moment's title (its whole alert is in the list beside it).
    said = f"{completed['title']}."
    check = (f"(() => {{ const said = {json.dumps(said)};"
             " return (window.__announced || []).some((text) => text.includes(said)) ? window.__announced : null; })()")
    if not saw_alive:
        # Opened after the bid was complete (a very slow start): the completed moment came with the
        # page's first load, as a stored moment, and there was nothing live to announce.
        time.sleep(2)
        if not chromium.evaluate(check):
            fail("the page opened after Giolito's no-hitter was complete, so it had nothing to announce: "
                 "start the script as the server starts (--speed 300)")
    announced = wait(check, f"the live region announcing {said!r}", 20)
    print("announced:", json.dumps(announced[-3:]))
    print("screenshot:", chromium.screenshot("keyboard-focus-announced.png"))

    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("keyboard focus: every check held")
    sys.exit(0)
finally:
    chromium.close()
