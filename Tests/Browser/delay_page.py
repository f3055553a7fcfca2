#!/usr/bin/env python3
"""A spoiler delay on the web app, set as a fan sets it, on a 390-pixel phone during a replay at 60x
(a minute of the game a second): Settings' delay of 45 s, saved, makes the page say it is 60 s
behind (45 rounded up to a delay the server keeps) and load the games, the moments and the live
stream with `delay=60`; the stream still brings the games on; over ten seconds no game on the page
is ever further on than the API held back a minute says, while the live API is; and a delay of 0
makes the page live again. No Content-Security-Policy violation or uncaught exception. Saves
screenshots. Exit status 0 when all holds, 1 with the reason.

usage: delay_page.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 90
chromium = open_browser(output, size=(390, 844))


def fail(reason):
    chromium.fail(reason, "delay-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "delay-failure.png")


def set_delay(seconds):
    chromium.evaluate("location.hash = '#settings'")
    wait("!document.querySelector('#settings').hidden", "the Settings tab")
    chromium.evaluate(f"""(() => {{ const input = document.querySelector('#spoiler');
      input.value = '{seconds}'; input.dispatchEvent(new Event('input')); document.querySelector('#save').click(); }})()""")


chromium.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
chromium.page("Page.navigate", {"url": url + "#live"})
wait("document.body.dataset.streamUpdates > 0", "the live stream's first game")
set_delay(45)
notice = wait("""(() => { const n = document.querySelector('#delay-notice');
  return !n.hidden && document.querySelector('#connection').textContent === '60 s behind' && n.textContent; })()""",
              "the page saying it is 60 s behind")
if "60 seconds behind" not in notice or "your 45 s" not in notice:
    fail(f"the notice says {notice!r}")
print("notice:", notice)
# The games, the moments and the stream, asked with the delay (the stream from where the games were).
asked = wait("""(() => { const names = performance.getEntriesByType('resource').map(e => e.name);
  const games = names.some(n => n.includes('/api/games?delay=60'));
  const moments = names.some(n => n.includes('/api/moments?limit=100&delay=60'));
  const stream = document.body.dataset.stream;
  if (!/^\\/api\\/stream\\?after=\\d+&delay=60$/.test(stream || '')) return null;
  return games && moments && stream; })()""", "the games, the moments and the stream asked with delay=60")
print("stream:", asked)
updates = chromium.evaluate("state.streamUpdates")
wait(f"state.streamUpdates > {updates} + 3", "the delayed stream bringing the games on")
# Over ten seconds (ten minutes of the day), the page is never further on than the API held back a
# minute says, asked after the page was read (a page that took the live games would be, within a
# few samples). And the live API is, at least once, further on than the delayed one: there was a
# difference to see.
script = """(async () => {
  const progress = (g) => g.status === 'final' ? 1e6 : g.status === 'scheduled' ? 0
    : (g.inning || 0) * 100 + (g.half === 'bottom' ? 50 : 0) + (g.outs || 0);
  const page = new Map([...state.games.values()].map(g => [g.id, progress(g)]));
  const delayed = await (await fetch('/api/games?delay=60')).json();
  const live = await (await fetch('/api/games')).json();
  const then = new Map(delayed.map(g => [g.id, progress(g)]));
  return {
    ahead: [...page].filter(([id, p]) => then.has(id) && p > then.get(id)).map(([id, p]) => `${id}: page ${p} > a minute ago ${then.get(id)}`),
    behind: live.filter(g => then.has(g.id) && progress(g) > then.get(g.id)).length,
  };
})()"""
samples = 0
differences = 0
started = time.time()
# Ten seconds at least, and on until one sample has seen the live games further on (40 s at most).
while time.time() - started < 10 or (differences == 0 and time.time() - started < 40):
    sample = chromium.evaluate(script)
    if sample is None:
        continue
    if sample["ahead"]:
        fail(f"the page shows games further on than a minute ago: {sample['ahead'][:3]}")
    differences += 1 if sample["behind"] else 0
    samples += 1
    time.sleep(0.25)
if differences == 0:
    fail(f"in {samples} samples the live games were never further on than a minute before: nothing was checked")
print(f"{samples} samples over {time.time() - started:.0f} s ({differences} with live games further on): the page never ahead of a minute ago")
chromium.evaluate("location.hash = '#live'; window.scrollTo(0, 0)")
wait("!document.querySelector('#live').hidden", "the Live tab")
print("screenshot:", chromium.screenshot("delay-live-phone.png"))
set_delay(0)
wait("""document.querySelector('#delay-notice').hidden && document.querySelector('#connection').textContent === 'live'
  && /^\\/api\\/stream\\?after=\\d+$/.test(document.body.dataset.stream)""",
     "the page live again after a delay of 0")
problems = chromium.problems()
if problems:
    print("the page reported problems:", *problems, sep="\n  ")
    sys.exit(1)
chromium.close()
print("delay page: every check held")
