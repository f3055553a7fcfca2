#!/usr/bin/env python3
"""The attempt card, the Live tab's centrepiece, in headless Chromium during a fast replay of
2020-08-25: Giolito's card while alive (his name large, his line, outs to go, a progress bar with
its role and values), then the same card as a celebration once the no-hitter is complete, with his
final line (9.0 IP, 0 H, 1 BB, 13 K, 101 pitches); Cristian Javier's bid in the Astros' first game,
broken up by Jason Castro's single with one out in the 5th, stays on the page saying so in words.
No Content-Security-Policy violation and no uncaught exception. Saves screenshots. Exit status 0
when all holds, 1 with the reason.

usage: attempt_card.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 150
chromium = open_browser(output)
GIOLITO = "CHA202008250-home"
JAVIER = "HOU202008251-home"


def fail(reason):
    chromium.fail(reason, "attempt-card-failure.png")


def card(key):
    return f"""(() => {{ const c = document.querySelector('#attempts [data-key="{key}"]'); if (!c) return null;
      const bar = c.querySelector('[role=progressbar]');
      return {{ status: c.dataset.status, outs: Number(c.dataset.outs), text: c.innerText,
               pitcher: c.querySelector('h3.pitcher')?.textContent,
               pitcherSize: parseFloat(getComputedStyle(c.querySelector('h3.pitcher')).fontSize),
               line: c.querySelector('.line')?.textContent, togo: c.querySelector('.togo')?.textContent,
               bar: bar ? {{ now: bar.getAttribute('aria-valuenow'), max: bar.getAttribute('aria-valuemax'),
                             label: bar.getAttribute('aria-label'), width: bar.querySelector('span').style.width }} : null,
               link: c.querySelector('a.game-link')?.getAttribute('href') }}; }})()"""


try:
    chromium.page("Page.navigate", {"url": url})
    seen = {}
    deadline = time.time() + timeout
    # Both games are under way at once at replay speed: each state is caught when it shows.
    while time.time() < deadline and not {"official", "broken-up", "alive", "stays"} <= set(seen):
        giolito = chromium.evaluate(card(GIOLITO))
        if giolito and giolito["status"] == "alive" and "alive" not in seen and giolito["outs"] >= 15:
            seen["alive"] = giolito
            print("alive:", json.dumps(giolito))
            print("screenshot:", chromium.screenshot("attempt-card-alive.png"))
        if giolito and giolito["status"] == "official" and "official" not in seen:
            seen["official"] = giolito
            print("celebration:", json.dumps(giolito))
            print("screenshot:", chromium.screenshot("attempt-card-celebration.png"))
        javier = chromium.evaluate(card(JAVIER))
        if javier and javier["status"] == "broken-up" and "broken-up" not in seen:
            seen["broken-up"] = javier
            broken_at = (time.time(), chromium.evaluate("Number(document.body.dataset.streamUpdates)"))
            print("broken up:", json.dumps(javier))
            print("screenshot:", chromium.screenshot("attempt-card-broken-up.png"))
        # It stays: still there 30 stream updates (plays of any game) after the hit.
        if "broken-up" in seen and "stays" not in seen:
            updates = chromium.evaluate("Number(document.body.dataset.streamUpdates)")
            if updates >= broken_at[1] + 30:
                seen["stays"] = javier
                game = chromium.evaluate("(() => { const c = [...document.querySelectorAll('#games .game')].find(g => g.dataset.game === 'HOU202008251'); return c ? c.innerText : ''; })()")
                if not javier or javier["status"] != "broken-up":
                    fail(f"the broken-up card vanished within 30 plays of the hit (the game: {game!r})")
                print(f"still there {updates - broken_at[1]} stream updates later")
        time.sleep(0.2)
    missing = [state for state in ("alive", "official", "broken-up", "stays") if state not in seen]
    if missing:
        fail(f"the cards did not show {missing} within {timeout} s")

    alive = seen["alive"]
    if alive["pitcher"] != "Lucas Giolito" or alive["pitcherSize"] < 24:
        fail(f"the pitcher is not the card's large heading: {alive['pitcher']!r} at {alive['pitcherSize']} px")
    if not alive["line"] or " IP · 0 H · " not in alive["line"] or " K" not in alive["line"]:
        fail(f"the card lacks the pitcher's line: {alive['line']!r}")
    if f"{27 - alive['outs']} outs to go" not in (alive["togo"] or ""):
        fail(f"the card does not count the outs to go: {alive['togo']!r} at {alive['outs']} outs")
    bar = alive["bar"]
    if not bar or bar["max"] != "27" or bar["now"] != str(alive["outs"]) or not bar["label"] or not bar["width"]:
        fail(f"the progress bar lacks its role, values or width: {bar}")
    if alive["link"] != "#game/2020-08-25-PIT-CWS":
        fail(f"the card does not link to its game: {alive['link']!r}")

    official = seen["official"]
    if "No-hitter!" not in official["text"] or official["bar"]:
        fail(f"the completed no-hitter is not a celebration card: {official['text']!r}")
    if official["line"] != "9.0 IP · 0 H · 1 BB · 13 K · 101 pitches":
        fail(f"Giolito's final line is not 9.0 IP, 0 H, 1 BB, 13 K, 101 pitches: {official['line']!r}")

    broken = seen["broken-up"]
    if "Jason Castro singles to center field off Cristian Javier with 1 out in the top of the 5th" not in broken["text"] or "broken up" not in broken["text"].lower():
        fail(f"the broken-up card does not say who broke it up and how: {broken['text']!r}")
    if "stays" not in seen:
        fail("fewer than 30 stream updates after the broken-up bid: its staying was not checked")

    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("attempt card: every check held")
    sys.exit(0)
finally:
    chromium.close()
