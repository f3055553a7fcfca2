#!/usr/bin/env python3
"""The Scores page in headless Chromium during a fast replay of 2020-08-25: a favourite team picked
by name goes first; Giolito's game shows the state of play (diamond, outs, count, pitcher and
batter) and a visible no-hitter mark while it is on; the line score opens on a tap; the game page
gives the scoring summary, both sides' batting box score (totals, the lines below the table, LOB),
every pitcher's line and the play-by-play; the day's last game before its first pitch gives its probables with their
W-L and ERA; the final card reads Final with the pitchers of
record. Desktop light, then phone dark, with no horizontal scrolling. No Content-Security-Policy
violation and no uncaught exception. Saves screenshots. Exit status 0 when all holds, 1 with the
reason. Then, on the phone: four games a screen, one header height on every tab, the Standings.

usage: scores_page.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 150
chromium = open_browser(output)
GAME = "CHA202008250"


def fail(reason):
    chromium.fail(reason, "scores-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "scores-failure.png")


card = f"document.querySelector('#games [data-game=\"{GAME}\"]')"
try:
    # The day's last game before its first pitch: its page says where, the probable pitchers with
    # their W-L and ERA before the day, and that the lineups are not out yet.
    chromium.page("Page.navigate", {"url": url + "#game/SFN202008250"})
    pre = wait("""(() => { const p = document.querySelector('#game-page .pregame');
      return p && p.innerText.includes('ERA') ? p.innerText : null; })()""", "the last game's pre-game section")
    print("pre-game:", pre.replace("\n", " | ")[:300])
    if "Probable pitchers: LAD" not in pre or "Lineup not out yet." not in pre:
        fail(f"the pre-game section lacks the probables with their records or the lineups' state: {pre}")
    if chromium.evaluate("document.querySelector('#game-page').innerText.split('Starts ').length - 1") != 1:
        fail("the first pitch is said more than once on the game page before the game")
    chromium.page("Page.navigate", {"url": url + "#scores"})
    wait("document.querySelectorAll('#team-picker option').length > 25", "the team picker lists the clubs by name")
    names = chromium.evaluate("[...document.querySelectorAll('#team-picker option')].map(o => o.textContent)")
    if "Chicago White Sox (CWS)" not in names:
        fail(f"no 'Chicago White Sox (CWS)' among the picker's options: {names[:5]}")
    # The window of Giolito's game under way is short at replay speed: it is caught first.
    # Giolito's no-hitter under way: the mark, the diamond, the outs, the count, the matchup.
    live = wait(f"""(() => {{ const c = {card}; if (!c || !c.querySelector('.mark.nohit') || !c.querySelector('.situation')) return null;
      return {{ text: c.innerText, diamond: !!c.querySelector('svg.diamond'), dots: c.querySelectorAll('.outs .dot').length,
               count: c.querySelector('.count')?.textContent, people: c.querySelector('.people')?.innerText }}; }})()""",
                "Giolito's game under way with its no-hitter mark")
    print("live card:", json.dumps(live))
    if not live["diamond"] or live["dots"] != 3 or "P:" not in live["people"] or "AB:" not in live["people"]:
        fail(f"the live card lacks the diamond, the outs or the matchup: {live}")
    if "No-hitter in progress" not in live["text"]:
        fail("no 'No-hitter in progress' mark on the card")
    print("screenshot:", chromium.screenshot("scores-desktop-light-live.png"))
    # Pick the White Sox: their game goes first.
    chromium.evaluate("""(() => { const p = document.querySelector('#team-picker'); p.value = 'CHA';
      p.dispatchEvent(new Event('change')); })()""")
    wait(f"document.querySelector('#games .game')?.dataset.game === '{GAME}'", "the favourite's game first")
    # Add the Astros and move them above: their games (a doubleheader) come first.
    chromium.evaluate("""(() => { const p = document.querySelector('#team-picker'); p.value = 'HOU';
      p.dispatchEvent(new Event('change')); document.querySelector('#favourite-list button[data-move="1"][data-by="-1"]').click(); })()""")
    order = wait("""(() => { const ids = [...document.querySelectorAll('#games .game')].map(g => g.dataset.game);
      return ids.length > 3 && ids[0].startsWith('HOU') ? ids : null; })()""", "the reordered favourite first")
    if order[2] != GAME:
        fail(f"the second favourite's game is not after the first's two: {order[:4]}")
    print("favourites first:", order[:3])
    # Back to the White Sox alone.
    chromium.evaluate("document.querySelector('#favourite-list button[data-unfavourite=\"HOU\"]').click()")
    # After the favourite's game: games in progress, then those to come, then the finished ones.
    phases = wait("""(() => { const cards = [...document.querySelectorAll('#games .game')];
      if (cards.length < 10 || cards[0].dataset.game !== '""" + GAME + """') return null;
      return cards.slice(1).map(c => ({ live: 0, scheduled: 1, final: 2 })[c.dataset.status]); })()""",
                  "the board with the favourite's game first")
    print("phases after the favourite's game (0 live, 1 to come, 2 final):", phases)
    if phases != sorted(phases):
        fail(f"the board is not in progress, to come, then final: {phases}")

    chromium.evaluate(f"{card}.querySelector('details.line summary').click()")
    line = wait(f"""(() => {{ const d = {card}.querySelector('details.line'); return d.open &&
      d.querySelectorAll('thead th').length >= 13 ? d.innerText : null; }})()""", "the line score opened on a tap")
    print("line score:", line.replace("\n", " | ")[:160])
    print("screenshot:", chromium.screenshot("scores-desktop-light-line-score.png"))

    # The game page: pitchers' lines and the play-by-play.
    chromium.evaluate(f"{card}.querySelector('a.game-link').click()")
    page = wait("""(() => { const p = document.querySelector('#game-page'); if (document.querySelector('#game').hidden) return null;
      const pitchers = [...p.querySelectorAll('table.pitchers tbody th')].map(t => t.textContent);
      const plays = p.querySelectorAll('.half li').length;
      return pitchers.includes('Lucas Giolito') && plays > 10 ? { pitchers, plays, first: p.querySelector('.half li')?.textContent } : null; })()""",
                "the game page with Giolito's line and the play-by-play")
    print("game page:", json.dumps(page))
    print("screenshot:", chromium.screenshot("game-page-desktop-light.png"))

    # The end: Final, the pitchers of record, the no-hitter mark kept.
    final = wait("""(() => { const p = document.querySelector('#game-page'); const t = p.innerText;
      return t.includes('Final') && t.includes('W: Lucas Giolito') && t.includes('No-hitter · CWS') ? t.slice(0, 200) : null; })()""",
                 "the final game page (Final, W: Lucas Giolito, the no-hitter mark)")
    print("final:", final.replace("\n", " | "))
    chart = chromium.evaluate("""(() => { const f = document.querySelector('#game-page figure.winprob');
      return f ? { caption: f.querySelector('figcaption').textContent, label: f.querySelector('svg').getAttribute('aria-label'),
                   points: f.querySelector('polyline').getAttribute('points').split(' ').length,
                   labelledBy: document.getElementById(f.querySelector('svg').getAttribute('aria-labelledby'))?.textContent } : null; })()""")
    print("win probability:", json.dumps(chart))
    if not chart or "CWS's chance of winning over" not in (chart["labelledBy"] or "") or "100% after the last" not in chart["caption"] or chart["points"] < 60:
        fail(f"the game page lacks the win probability chart of Giolito's game, ending at 100%: {chart}")
    chromium.evaluate("document.querySelector('#game-page figure.winprob').scrollIntoView()")
    print("screenshot:", chromium.screenshot("game-page-win-probability.png"))
    where = chromium.evaluate("document.querySelector('#game-page .status-line')?.textContent")
    print("status line:", where)
    if where != "Final · Guaranteed Rate Field":
        fail(f"the game page's status line does not name the park (Retrosheet's park file, info,site CHI12): {where}")
    giolito = chromium.evaluate("""[...document.querySelectorAll('#game-page table.pitchers tbody tr')]
      .map(r => r.innerText.split('\\t')).find(c => c[0] === 'Lucas Giolito')""")
    print("Giolito's line:", giolito)
    if giolito[1:8] != ["9.0", "0", "0", "0", "1", "13", "0"] or giolito[8] != "101":
        fail(f"Giolito's line is not 9.0 IP 0 H 0 R 0 ER 1 BB 13 K 0 HR 101 P: {giolito}")
    box = chromium.evaluate("""(() => { const p = document.querySelector('#game-page');
      const tables = [...p.querySelectorAll('table.batters')];
      return { captions: tables.map(t => t.caption.textContent), totals: tables.map(t => t.tFoot.innerText.split('\\t')),
               rows: tables.map(t => t.tBodies[0].rows.length), notes: [...p.querySelectorAll('.box-notes li')].map(l => l.textContent),
               scoring: [...p.querySelectorAll('.scoring-summary li')].map(l => l.innerText) }; })()""")
    print("box score:", json.dumps(box)[:700])
    if box["captions"] != ["Pittsburgh Pirates batting", "Chicago White Sox batting"] or min(box["rows"]) < 9:
        fail(f"the game page lacks both sides' batting tables: {box}")
    if box["totals"][0][:4] != ["Totals", "27", "0", "0"] or box["totals"][1][2:4] != ["4", "9"]:
        fail(f"the batting totals are not PIT 27 AB 0 R 0 H and CWS 4 R 9 H: {box['totals']}")
    if "LOB: 1. With runners in scoring position: 0-for-0." not in box["notes"]:
        fail(f"no 'LOB: 1' line under Pittsburgh's batters: {box['notes']}")
    if not box["scoring"] or "CWS 4" not in box["scoring"][-1]:
        fail(f"the scoring summary does not end at CWS 4: {box['scoring']}")
    print("screenshot:", chromium.screenshot("game-page-final.png"))

    # A phone in dark mode: the board fits the width.
    chromium.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    chromium.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    chromium.evaluate("location.hash = '#scores'")
    phone = wait(f"""(() => {{ const c = {card}; if (!c || document.querySelector('#scores').hidden) return null;
      return {{ width: document.documentElement.scrollWidth, background: getComputedStyle(document.body).backgroundColor,
               status: c.querySelector('.status').textContent, people: c.querySelector('.people')?.innerText }}; }})()""",
                 "the Scores page on a phone")
    print("phone:", json.dumps(phone))
    if phone["width"] > 390:
        fail(f"the page scrolls sideways on a 390-pixel phone ({phone['width']} px)")
    if phone["background"] in ("rgb(246, 247, 249)", "rgb(255, 255, 255)"):
        fail(f"dark mode did not apply (background {phone['background']})")
    if phone["status"] != "Final" or "W: Lucas Giolito" not in (phone["people"] or ""):
        fail(f"the final card does not read Final with the winning pitcher: {phone}")
    print("screenshot:", chromium.screenshot("scores-phone-dark-final.png"))
    # The game page on the phone: the box score's tables scroll inside their own regions at most,
    # the page never sideways.
    chromium.evaluate(f"location.hash = '#game/{GAME}'")
    fit = wait("""(() => { if (document.querySelector('#game').hidden || !document.querySelector('#game-page table.batters')) return null;
      return { width: document.documentElement.scrollWidth,
               regions: [...document.querySelectorAll('#game-page .scroll-x')].map(r => r.getBoundingClientRect().right) }; })()""",
               "the game page on a phone")
    print("phone game page:", json.dumps(fit))
    if fit["width"] > 390 or any(right > 390 for right in fit["regions"]):
        fail(f"the game page is wider than a 390-pixel phone: {fit}")
    print("screenshot:", chromium.screenshot("game-page-phone-dark.png"))
    # The board a fan reads on a phone: four games a screen at least; the header one height on
    # every tab; the standings' six divisions without the page scrolling sideways.
    chromium.evaluate("location.hash = '#scores'")
    board = wait("""(() => { const cards = [...document.querySelectorAll('#games .game')].map(g => g.getBoundingClientRect());
      if (document.querySelector('#scores').hidden || cards.length < 8) return null;
      return { fit: cards.filter(r => r.bottom <= cards[0].top + 844).length, heights: cards.map(r => Math.round(r.height)) }; })()""",
                 "the board on a phone")
    print("phone board:", json.dumps(board))
    if board["fit"] < 4:
        fail(f"fewer than four games a 844-pixel phone screen: {board}")
    heights = {}
    for tab in ["live", "scores", "standings", "hall-of-fame", "deals", "settings"]:
        chromium.evaluate(f"location.hash = '#{tab}'")
        wait(f"!document.querySelector('#{tab}').hidden || null", f"the {tab} tab")
        heights[tab] = chromium.evaluate("Math.round(document.querySelector('header').getBoundingClientRect().height)")
    print("header heights:", heights)
    if len(set(heights.values())) != 1:
        fail(f"the phone header changes height across tabs: {heights}")
    chromium.evaluate("location.hash = '#standings'")
    standings = wait("""(() => { const t = document.querySelectorAll('#standings table.standings:not(.race)');
      const races = [...document.querySelectorAll('#standings table.race')];
      return t.length === 6 && races.length === 2 ? { width: document.documentElement.scrollWidth, first: t[0].tBodies[0].rows[0].innerText.split('\\t').slice(0, 3),
        races: races.map(r => r.caption.textContent), wildCards: races.map(r => [...r.tBodies[0].rows].filter(row => row.innerText.includes('WC')).length) } : null; })()""",
                     "the standings' six divisions and the two leagues' postseason races")
    print("standings:", json.dumps(standings))
    if standings["races"] != ["AL postseason race", "NL postseason race"] or standings["wildCards"] != [2, 2]:
        fail(f"the standings lack each league's race with 2020's two wild cards: {standings}")
    if standings["width"] > 390:
        fail(f"the standings page scrolls sideways on a phone: {standings}")
    print("screenshot:", chromium.screenshot("standings-phone-dark.png"))
    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("scores page: every check held")
    sys.exit(0)
finally:
    chromium.close()
