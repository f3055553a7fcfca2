#!/usr/bin/env python3
"""Loads the web UI in headless Chromium during a fast replay and checks, through the DevTools
protocol (over --remote-debugging-pipe, no extra packages), that an attempt card appears and then
advances through the live stream, with no Content-Security-Policy violation and no uncaught
exception on the page. Saves screenshots. Exit status 0 when it does, 1 with the reason.

usage: live_page.py URL CARD_KEY OUTPUT_DIR [TIMEOUT_SECONDS [MEANING]]
(MEANING: what the celebration card must say the no-hitter means, from the seasons the server has)
"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, card, output = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 120
meaning = sys.argv[5] if len(sys.argv) > 5 else "the 1st of 2020"
chromium = open_browser(output, size=(1200, 900))
screenshot = chromium.screenshot
page_problems = chromium.problems


def celebrate():
    """The completed no-hitter: the card says its last out and what it means from the seasons
    known, and the tab's title says it."""
    probe = f"""(() => {{ const c = document.querySelector('[data-key="{card}"]');
      return {{ status: c ? c.dataset.status : null, text: c ? c.innerText : null, title: document.title }}; }})()"""
    seen = None
    while time.time() < deadline:
        seen = chromium.evaluate(probe)
        if seen and seen["status"] == "official" and "The last out:" in (seen["text"] or "") and "No-hitter" in seen["title"]:
            print(f"celebration card: {seen['text']!r}; tab title {seen['title']!r}")
            print("screenshot:", screenshot("live-card-celebration.png"))
            if meaning not in seen["text"]:
                # A completed alert waits at most 15 s for its history: on a machine too loaded to
                # read the seasons by then, the moment has none, and the card rightly says nothing.
                stored = chromium.evaluate("""(async () => (await (await fetch('/api/moments?limit=200')).json())
                    .find(m => m.kind === 'completed' && m.game_id === 'CHA202008250')?.meaning ?? null)()""")
                if stored is not None:
                    print(f"the celebration card does not say what the no-hitter means: {stored!r} (expected {meaning!r})")
                    sys.exit(1)
                print("the server had not read the seasons within the 15 s a completed alert waits (a loaded machine):"
                      " the moment has no meaning, and the card says none")
            return
        time.sleep(0.25)
    print(f"no celebration card with its last out and tab title within the time; last state: {seen}")
    screenshot("live-celebration-timeout.png")
    sys.exit(1)


try:
    chromium.page("Page.navigate", {"url": url})
    probe = f"""(() => {{ const c = document.querySelector('[data-key="{card}"]');
      const bar = c ? c.querySelector('.bar span') : null;
      return {{ card: c ? c.dataset.history : null, text: c ? c.innerText : null,
               bar: bar ? bar.style.width : null,
               updates: Number(document.body.dataset.streamUpdates || 0),
               connection: (document.querySelector('#connection') || {{}}).textContent }}; }})()"""
    deadline = time.time() + timeout
    first = None
    state = None
    # The bar as last seen on the card while the bid was alive: on a loaded machine the poll may
    # see the card appear and next see it already complete (a celebration card has no bar), so
    # the bar is checked on the alive states the poll did see.
    alive_bar = None
    # The card's text while alive, which says how often such bids finished (a celebration card does not).
    alive_text = None
    while time.time() < deadline:
        state = chromium.evaluate(probe)
        if state and state["card"] and state["bar"]:
            alive_bar = state["bar"]
            alive_text = state["text"]
        if state and state["card"]:
            outs = [int(x) for x in state["card"].split(",") if x]
            if first is None:
                first = outs[-1]
                print(f"card {card} appeared at {first} outs: {state['text']!r}")
                print("screenshot:", screenshot("live-card-appeared.png"))
            if state["updates"] > 0 and outs[-1] > first:
                print(f"card advanced through the stream: outs seen {outs}, {state['updates']} stream updates")
                print(f"card text: {state['text']!r}; progress bar width while alive {alive_bar}")
                print("screenshot:", screenshot("live-card-advanced.png"))
                problems = page_problems()
                if problems:
                    print("the page reported problems:", *problems, sep="\n  ")
                    sys.exit(1)
                if not alive_bar:
                    print("the progress bar had no width while the bid was alive (set through the CSSOM, as the CSP requires)")
                    sys.exit(1)
                # One figure, and what it rests on ("21% chance · 4 of 19 bids since 1988 through 4
                # innings on fewer than 60 pitches", "3% chance · 2 of 60 bids in the 2020s"): never two.
                if "% chance" not in alive_text or " bids " not in alive_text or not ("since " in alive_text or " in the " in alive_text):
                    print(f"the alive card does not give the bid's chance and what it rests on: {alive_text!r}")
                    sys.exit(1)
                if alive_text.count("% chance") != 1 or "History:" in alive_text:
                    print(f"the alive card gives more than one figure: {alive_text!r}")
                    sys.exit(1)
                # Recent moments: each with its time and a link to its game; Giolito's 4th is there.
                moments = chromium.evaluate("""[...document.querySelectorAll('#moments li')].map(li => ({
                    text: li.innerText, time: !!li.querySelector('time[datetime]'),
                    link: li.querySelector('a')?.getAttribute('href') }))""")
                print("moments:", moments)
                giolito = [m for m in moments if "Lucas Giolito" in m["text"]]
                if not giolito or giolito[0]["link"] != "#game/2020-08-25-PIT-CWS" or not all(m["time"] for m in moments):
                    print("the recent moments lack Giolito's with its time and a link to #game/2020-08-25-PIT-CWS")
                    sys.exit(1)
                celebrate()
                sys.exit(0)
        time.sleep(0.25)
    print(f"the card did not appear and advance within {timeout} s; last state: {state}")
    screenshot("live-timeout.png")
    sys.exit(1)
finally:
    chromium.close()
