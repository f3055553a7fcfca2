#!/usr/bin/env python3
"""The bid a fan trusts, in headless Chromium through a fast 2020-08-25 (a replay, or the fake
Stats API followed by `serve --source statsapi`), first at 390 px, then at 1280 px:
- every alive card shows who is batting, the count and the pitcher's pitch count, and they move
  pitch by pitch (within one plate appearance the count and the pitch count both change);
- each alive card gives one odds figure at most;
- Live orders the alive bids by their chance of finishing (the figure on each card), at five
  moments of the night at least, and never says "through 0 inning";
- Cristian Javier's card (game 1 of a 7-inning doubleheader) says it won't count;
- the live region reads each moment once, in a few words.
Then the Hall of Fame and Deals at 390 px: no column cut off, every NO with its reason. Saves
screenshots (the card in the 9th, Live with no bid, the Hall of Fame at 390 px, Deals). Exit
status 0 when all holds, 1 with the reason.

In `statsapi` mode (a slower day: MLB's feed is polled and pushed, not played) it stops once the
counts have moved at both widths, before Giolito's game.

usage: bid_card.py URL OUTPUT_DIR [TIMEOUT_SECONDS] [MODE]
"""
import json, os, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 240
mode = sys.argv[4] if len(sys.argv) > 4 else "replay"
chromium = open_browser(output)
JAVIER = "HOU202008251-home"
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
DESKTOP = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}


def fail(reason):
    chromium.fail(f"[{mode}] {reason}", f"bid-card-{mode}-failure.png")


def shot(name):
    print("screenshot:", chromium.screenshot(f"bid-card-{mode}-{name}.png"))


CARDS = """[...document.querySelectorAll('#attempts article.attempt')].map(c => ({
  key: c.dataset.key, status: c.dataset.status, outs: Number(c.dataset.outs), chance: Number(c.dataset.chance),
  text: c.innerText,
  batter: c.querySelector('[data-key=batter]')?.textContent ?? null,
  count: c.querySelector('[data-key=count]')?.textContent ?? null,
  pitching: c.querySelector('[data-key=pitching]')?.textContent ?? null,
  due: c.querySelector('.gameday')?.innerText ?? null }))"""

ROWS = """[...document.querySelectorAll('#in-progress li')].map(li => ({
  id: li.dataset.id, chance: li.dataset.chance, words: li.querySelector('.bid-words')?.textContent }))"""

# Every change of an alive card's batter, count or pitch count, as the page renders it (a poll
# from here would miss the pitches between two looks on a loaded machine), with the page's width.
RECORD_COUNTS = """(() => { window.__counts = []; const last = {}; const box = document.querySelector('#attempts');
  const look = () => { for (const c of box.querySelectorAll('article.attempt[data-status=alive]')) {
      const batter = c.querySelector('[data-key=batter]')?.textContent; if (!batter) continue;
      const now = [batter, c.querySelector('[data-key=count]')?.textContent ?? '',
                   c.querySelector('[data-key=pitching]')?.textContent ?? ''];
      const before = last[c.dataset.key];
      if (!before || before.join('|') !== now.join('|')) {
        window.__counts.push({ key: c.dataset.key, now, before: before ?? null, width: innerWidth });
        last[c.dataset.key] = now; } } };
  new MutationObserver(look).observe(box, { childList: true, characterData: true, subtree: true, attributes: true });
  look(); return true; })()"""

# Every text the live region is given, in order.
RECORD_ANNOUNCER = """(() => { window.__said = []; const box = document.querySelector('#announcer');
  new MutationObserver(() => { if (box.textContent) window.__said.push(box.textContent); })
    .observe(box, { childList: true, characterData: true, subtree: true }); return true; })()"""

try:
    chromium.page("Emulation.setDeviceMetricsOverride", PHONE)
    chromium.page("Page.navigate", {"url": url})
    chromium.wait("document.querySelector('#announcer') !== null", "the page", 60, f"bid-card-{mode}-load.png")
    chromium.evaluate(RECORD_ANNOUNCER)
    chromium.wait("document.querySelector('#attempts') !== null", "the cards", 60, f"bid-card-{mode}-load.png")
    chromium.evaluate(RECORD_COUNTS)
    width = "390"
    moved = {"390": set(), "1280": set()}   # (card, batter) whose count and pitch count moved
    orders = []                             # alive cards' order, where two or more
    javier = None
    no_bid_shot = ninth_shot = False
    deadline = time.time() + timeout
    over = False
    while time.time() < deadline:
        cards = chromium.evaluate(CARDS) or []
        body = chromium.evaluate("document.querySelector('#live')?.innerText || ''")
        if "through 0 inning" in body:
            fail(f"Live says 'through 0 inning': {body[:400]!r}")
        alive = [c for c in cards if c["status"] == "alive"]
        if not alive and not no_bid_shot and chromium.evaluate("!document.querySelector('#no-attempts').hidden"):
            no_bid_shot = True
            print("no bid:", chromium.evaluate("document.querySelector('#no-attempts').innerText"))
            shot("live-no-bid")
        for card in alive:
            if card["text"].count("% chance") > 1 or "History:" in card["text"] or re.search(r"\b1 in \d", card["text"]):
                fail(f"a card gives more than one odds figure: {card['text']!r}")
            if card["key"] == JAVIER and javier is None:
                javier = card
                print("javier:", json.dumps(card))
            if card["batter"] is not None:
                if not card["count"] or "pitches" not in (card["pitching"] or ""):
                    fail(f"a card with a batter has no count or pitch count: {json.dumps(card)}")
            if card["outs"] >= 24 and not ninth_shot and card["batter"] and "Giolito" in (card["pitching"] or ""):
                ninth_shot = True
                print("card in the 9th:", json.dumps(card))
                shot(f"card-ninth-{width}")
        for change in chromium.evaluate("window.__counts.splice(0)") or []:
            before, now = change["before"], change["now"]
            if before and before[0] == now[0] and before[1] != now[1] and before[2] != now[2]:
                moved["390" if change["width"] < 800 else "1280"].add((change["key"], now[0]))
        if len(alive) >= 2:
            chances = [c["chance"] for c in alive]
            if chances != sorted(chances, reverse=True):
                fail(f"the cards are not ordered by chance: {[(c['key'], c['chance'], c['outs']) for c in alive]}")
        # The games in progress, closest to a no-hitter first: by the chance of their likeliest bid.
        rows = chromium.evaluate(ROWS) or []
        ranked = [r for r in rows if r["chance"] != ""]
        if len(ranked) >= 2:
            chances = [float(r["chance"]) for r in ranked]
            if chances != sorted(chances, reverse=True) or rows[:len(ranked)] != ranked:
                fail(f"Live is not ordered by chance: {[(r['id'], r['chance'], r['words']) for r in rows]}")
            order = [r["id"] for r in ranked]
            if not orders or orders[-1][0] != order:
                orders.append((order, [r["words"] for r in ranked]))
        # Once the phone has seen counts move, the desktop's turn.
        if width == "390" and len(moved["390"]) >= 3:
            width = "1280"
            chromium.page("Emulation.setDeviceMetricsOverride", DESKTOP)
            print("phone: counts moved pitch by pitch for", sorted(moved["390"]))
        finished = chromium.evaluate("[...document.querySelectorAll('#attempts article.attempt')].some(c => c.dataset.status === 'official')")
        # The replay goes on to Giolito's last out; MLB's feed (slower here, as its polls and pushes
        # are) until the counts have moved at both widths.
        if (finished or mode == "statsapi") and width == "1280" and len(moved["1280"]) >= 2 and len(orders) >= 5:
            over = True
            break
        time.sleep(0.15)
    if not over:
        fail(f"within {timeout} s: counts moved {dict((k, len(v)) for k, v in moved.items())}, "
             f"{len(orders)} orders of two or more bids, a no-hitter finished: {finished}")
    print("desktop: counts moved pitch by pitch for", sorted(moved["1280"]))
    print(f"orders by chance ({len(orders)}):")
    for order, words in orders:
        print("  ", " | ".join(words))
    # Giolito's bid, hitless (not perfect) from the 4th, goes above every perfect side beside it.
    later = [words for _, words in orders if any("Lucas Giolito (CWS): hitless" in w for w in words)]
    if mode == "replay" and not any(any("perfect" in w for w in words[1:]) for words in later):
        fail("Giolito's bid was never seen beside a perfect side")
    if any("Lucas Giolito" not in words[0] for words in later):
        fail(f"a side ranked above Giolito's bid: {[w for w in later if 'Lucas Giolito' not in w[0]][:1]}")
    if javier is None:
        fail("Javier's bid never had a card")
    if "Won't count" not in javier["text"] or "% chance" in javier["text"]:
        fail(f"Javier's 7-inning card does not say it won't count (or gives odds): {javier['text']!r}")
    said = chromium.evaluate("window.__said") or []
    print(f"the live region said {len(said)} things:", *said, sep="\n   ")
    if not said:
        fail("the live region said nothing")
    parts = [p for text in said for p in text.split(". ") if p]
    titles = [t for text in said for t in text.split(".") if ": no-hitter through" in t or "No-hitter!" in t]
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    if repeated:
        fail(f"the live region said a moment more than once: {repeated}")
    if any(len(text.split()) > 40 for text in said):
        fail(f"the live region read a long text: {max(said, key=len)!r}")
    if mode == "replay" and not ninth_shot:
        fail("no card was seen in the 9th with its batter")

    # The Hall of Fame on a phone: every entry's columns readable, nothing wider than the screen.
    chromium.page("Emulation.setDeviceMetricsOverride", PHONE)
    chromium.evaluate("location.hash = '#hall-of-fame'")
    chromium.wait("document.querySelectorAll('#hall tbody tr td[data-label]').length > 5", "the Hall of Fame", 60,
                  f"bid-card-{mode}-hall-failure.png")
    hall = chromium.evaluate("""(() => { const t = document.querySelector('#hall');
      const rows = [...t.querySelectorAll('tbody tr')];
      const cut = rows.flatMap(r => [...r.cells]).filter(c => c.getBoundingClientRect().right > innerWidth + 1 || c.scrollWidth > c.clientWidth + 1).length;
      const labels = rows[0] ? [...rows[0].cells].map(c => getComputedStyle(c, '::before').content).join(' ') : '';
      return { width: t.getBoundingClientRect().width, page: document.documentElement.scrollWidth, cut,
               first: rows[0]?.innerText, labels, wont: rows.map(r => r.innerText).filter(x => x.includes("Won't count")).slice(0, 2) }; })()""")
    print("hall of fame at 390 px:", json.dumps(hall))
    shot("hall-of-fame-390")
    if hall["cut"] or hall["page"] > 391 or "Hitless" not in hall["labels"] or "How it ended" not in hall["labels"]:
        fail(f"the Hall of Fame is cut off or unlabelled at 390 px: {hall}")
    if not hall["wont"]:
        fail("no Hall of Fame entry of a 7-inning game says it won't count")

    # Deals: a NO says why.
    chromium.evaluate("location.hash = '#deals'")
    chromium.wait("document.querySelectorAll('#deals article.deal').length > 0", "the deals", 60,
                  f"bid-card-{mode}-deals-failure.png")
    deals = chromium.evaluate("""[...document.querySelectorAll('#deals article.deal')].map(d => ({
        on: d.classList.contains('on'), text: d.innerText }))""")
    shot("deals-390")
    noes = [d for d in deals if not d["on"]]
    print("deals NO:", [d["text"].replace("\n", " | ")[:200] for d in noes[:2]])
    if any("Not today:" not in d["text"] for d in noes):
        fail(f"a NO without its reason: {[d['text'] for d in noes if 'Not today:' not in d['text']][:1]}")

    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print(f"bid card ({mode}): every check held")
    sys.exit(0)
finally:
    chromium.close()
