#!/usr/bin/env python3
"""ABS challenges on a 390-pixel phone, from `nohit fake-statsapi --abs` (synthetic challenges on
2020-08-25, every game over) through `serve --source statsapi`: every card with challenges says
each team's challenges left (and won, lost) as the API gives them; the widget gives the same left;
a game page gives the counters' table and every challenged pitch (who asked, the calls before and
after), in its list and in its half-inning of the play-by-play, and each team's won and lost
counters agree with its challenged pitches. Light, then dark, no sideways scrolling, no
Content-Security-Policy violation or uncaught exception. Saves screenshots. Exit status 0 when all
holds, 1 with the reason.

usage: abs_page.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 120
chromium = open_browser(output, size=(390, 844))


def fail(reason):
    chromium.fail(reason, "abs-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "abs-failure.png")


def line(counters):
    used = ", ".join(part for part in [f"{counters['won']} won" if counters["won"] else "",
                                       f"{counters['lost']} lost" if counters["lost"] else ""] if part)
    return f"{counters['team']} {counters['remaining']} left" + (f" ({used})" if used else "")


chromium.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
chromium.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
chromium.page("Page.navigate", {"url": url + "#scores"})
# Every game over with its challenges: the board and the API, read together.
board = wait("""(async () => {
  const cards = [...document.querySelectorAll('#games .game')];
  if (document.querySelector('#scores').hidden || cards.length < 16) return null;
  const api = await (await fetch('/api/games')).json();
  const games = api.games || api;
  if (games.length < 16 || games.some(g => g.status !== 'final' || !g.challenges)) return null;
  const widget = await (await fetch('/api/widget')).json();
  return { cards: cards.map(c => ({ id: c.dataset.game, abs: c.querySelector('.abs')?.innerText ?? null })),
           games: games.map(g => ({ id: g.id, challenges: g.challenges })),
           widget: widget.games.map(g => ({ id: g.id, abs: g.abs })),
           width: document.documentElement.scrollWidth }; })()""", "the day's 16 final games with their ABS challenges")
games = {g["id"]: g["challenges"] for g in board["games"]}
widget = {g["id"]: g["abs"] for g in board["widget"]}
total = sum(len(c["pitches"]) for c in games.values())
print(f"board: {len(board['cards'])} cards, {total} challenged pitches")
for card in board["cards"]:
    challenges = games[card["id"]]
    expected = f"ABS: {line(challenges['away'])} · {line(challenges['home'])}"
    if card["abs"] != expected:
        fail(f"{card['id']}'s card says {card['abs']!r}, the API {expected!r}")
    if widget.get(card["id"]) != [challenges["away"]["remaining"], challenges["home"]["remaining"]]:
        fail(f"{card['id']}: the widget gives {widget.get(card['id'])} challenges left, the API {challenges}")
    for side in ("away", "home"):
        team = challenges[side]
        won = sum(1 for p in challenges["pitches"] if p["team"] == team["team"] and p["overturned"])
        lost = sum(1 for p in challenges["pitches"] if p["team"] == team["team"] and not p["overturned"])
        if (won, lost) != (team["won"], team["lost"]):
            fail(f"{card['id']}: {team['team']}'s counters {team} disagree with its pitches ({won} won, {lost} lost)")
if total < 2 * len(games):
    fail(f"only {total} challenges in {len(games)} games")
if board["width"] > 390:
    fail(f"the board scrolls sideways on a 390-pixel phone ({board['width']} px)")
print("example card:", board["cards"][0])
print("screenshot:", chromium.screenshot("abs-board-phone-light.png"))
# The game with the most challenges: its page.
game = max(games, key=lambda g: len(games[g]["pitches"]))
chromium.evaluate(f"location.hash = '#game/{game}'")
page = wait("""(() => { const s = document.querySelector('#game-page section.challenges');
  if (document.querySelector('#game').hidden || !s || !document.querySelector('#game-page .half')) return null;
  return { rows: [...s.querySelectorAll('tbody tr')].map(r => r.innerText.split('\\t')),
           items: [...s.querySelectorAll('ol.abs-pitches li')].map(li => li.innerText),
           halves: [...document.querySelectorAll('#game-page .half ul.abs-pitches li')].map(li => li.innerText),
           note: s.querySelector('p')?.innerText ?? null,
           width: document.documentElement.scrollWidth }; })()""", f"{game}'s page with its ABS challenges")
challenges = games[game]
print("game page:", json.dumps({k: page[k] for k in ("rows", "note", "width")}))
for item in page["items"][:3]:
    print("  ", item)
expected_rows = [[c["team"], str(c["remaining"]), str(c["won"]), str(c["lost"])]
                 for c in (challenges["away"], challenges["home"])]
if page["rows"] != expected_rows:
    fail(f"the counters' table {page['rows']} is not the API's {expected_rows}")
if page["items"] != [p["text"] for p in challenges["pitches"]]:
    fail(f"the page lists {len(page['items'])} challenged pitches, the API {len(challenges['pitches'])}")
if len(page["halves"]) != len(challenges["pitches"]):
    fail(f"the play-by-play shows {len(page['halves'])} challenges, the API {len(challenges['pitches'])}")
for pitch in challenges["pitches"]:
    words = "overturned" if pitch["overturned"] else "upheld"
    if pitch["role"] not in pitch["text"] or words not in pitch["text"] or pitch["challenger"] not in pitch["text"]:
        fail(f"a challenged pitch does not say who asked and what came of it: {pitch}")
if page["note"]:
    fail(f"the page says the counters disagree: {page['note']}")
if page["width"] > 390:
    fail(f"the game page scrolls sideways on a 390-pixel phone ({page['width']} px)")
chromium.evaluate("document.querySelector('#game-page section.challenges').scrollIntoView()")
print("screenshot:", chromium.screenshot("abs-game-page-phone-light.png"))
chromium.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
dark = chromium.evaluate("getComputedStyle(document.body).backgroundColor")
if dark in ("rgb(246, 247, 249)", "rgb(255, 255, 255)"):
    fail(f"dark mode did not apply (background {dark})")
print("screenshot:", chromium.screenshot("abs-game-page-phone-dark.png"))
problems = chromium.problems()
if problems:
    print("the page reported problems:", *problems, sep="\n  ")
    sys.exit(1)
chromium.close()
print("abs page: every check held")
