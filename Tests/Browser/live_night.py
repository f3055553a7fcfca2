#!/usr/bin/env python3
"""Live all night, in headless Chromium during a fast replay of 2020-08-25: while games are under
way and others are still to come (the evening, before Giolito's first pitch), the Live tab lists
every game in progress (closest to a no-hitter first: games with a hitless side still on before
those without) and every game coming up with its first pitch and probable pitchers, and the Hall of
Fame of 2020 does not yet have Giolito's no-hitter; after the night's last out it says the night's
longest bid (Giolito's); and when the server starts the day again (an operator's restart), the page
says the replay started again instead of silently emptying. No Content-Security-Policy violation,
no uncaught exception. Exit status 0 when all holds, 1 with the reason.

usage: live_night.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, signal, subprocess, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 150
chromium = open_browser(output, size=(1200, 1400))


def fail(reason):
    chromium.fail(reason, "live-night-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "live-night-failure.png")


# One snapshot of the page and of what it knows, in one evaluation: the lists are compared with the
# page's own games at the same instant, whatever state the replay has reached.
SNAPSHOT = """(() => {
  const games = [...window.state.games.values()];
  const ids = (selector) => [...document.querySelectorAll(selector + ' li')].map(li => li.dataset.id);
  const text = (selector) => [...document.querySelectorAll(selector + ' li')].map(li => li.innerText);
  return {
    live: games.filter(g => g.status === 'live').map(g => g.id).sort(),
    scheduled: games.filter(g => g.status === 'scheduled').map(g => g.id).sort(),
    final: games.filter(g => g.status === 'final').length, total: games.length,
    clock: games.map(g => g.updated_at || '').sort().pop() || '',
    inProgress: ids('#in-progress'), inProgressText: text('#in-progress'),
    comingUp: ids('#coming-up'), comingUpText: text('#coming-up'),
    longest: document.querySelector('#longest-bid').hidden ? null : document.querySelector('#longest-bid').innerText,
    restarted: document.querySelector('#replay-restarted').hidden ? null : document.querySelector('#replay-restarted').innerText,
  }; })()"""

try:
    chromium.page("Page.navigate", {"url": url})
    wait("document.querySelector('#connection').textContent === 'live' && document.body.dataset.reloads === '1'",
         "the page loaded and the stream live")

    # The evening: games under way and Giolito's still to come.
    evening = None
    deadline = time.time() + timeout
    while time.time() < deadline:
        snap = chromium.evaluate(SNAPSHOT)
        # About 19:00 in New York (22:50 UTC on): five games under way or done, ten to come.
        if snap["live"] and "CHA202008250" in snap["scheduled"] and snap["clock"] >= "2020-08-25T22:50:00Z":
            if sorted(snap["inProgress"]) == snap["live"] and sorted(snap["comingUp"]) == snap["scheduled"]:
                evening = snap
                break
        elif snap["live"] == [] and snap["scheduled"] == [] and snap["total"]:
            fail("the night ended before the page saw the evening (games under way, Giolito's to come)")
        time.sleep(0.25)
    if not evening:
        fail(f"no evening state with every game in progress and coming up listed; last: {json.dumps(snap)[:2000]}")
    print(f"evening at {evening['clock']}: {len(evening['live'])} in progress, {len(evening['scheduled'])} coming up,"
          f" {evening['final']} over")
    print("in progress:", *evening["inProgressText"], sep="\n  ")
    print("coming up:", *evening["comingUpText"], sep="\n  ")
    print("screenshot:", chromium.screenshot("live-night-evening.png"))
    # Closest first: the games with a hitless side still on come before those with hits on both sides.
    with_hits = [i for i, t in enumerate(evening["inProgressText"]) if "Both sides have hits" in t]
    without = [i for i, t in enumerate(evening["inProgressText"]) if "Both sides have hits" not in t]
    if with_hits and without and max(without) > min(with_hits):
        fail(f"a game with a hitless side is listed after one with hits on both sides: {evening['inProgressText']}")
    giolito = next(t for i, t in zip(evening["comingUp"], evening["comingUpText"]) if i == "CHA202008250")
    if "Lucas Giolito" not in giolito or "PIT at CWS" not in giolito:
        fail(f"Giolito's game coming up does not say its matchup and probable pitchers: {giolito!r}")

    # The Hall of Fame of 2020 before Giolito's first pitch: his no-hitter is not there yet.
    chromium.evaluate("location.hash = '#hall-of-fame'")
    seen = wait("""(() => { const rows = [...document.querySelectorAll('#hall tbody tr')].map(r => r.innerText);
        return rows.length && !rows.some(r => r.includes('Loading'))
          ? { rows, status: window.state.games.get('CHA202008250').status } : null; })()""", "the Hall of Fame table")
    rows, still = seen["rows"], seen["status"]
    print(f"hall of fame while Giolito's game is {still}: {rows[:3]}")
    if still == "scheduled" and any("Lucas Giolito" in row for row in rows):
        fail(f"the Hall of Fame shows Giolito's no-hitter before its first pitch: {rows[:3]}")
    print("screenshot:", chromium.screenshot("live-night-hall-of-fame.png"))
    chromium.evaluate("location.hash = '#live'")

    # After the night's last out: the longest bid of the night.
    longest = wait("""(() => { const p = document.querySelector('#longest-bid');
        return !p.hidden && p.innerText ? p.innerText : null; })()""", "the night's longest bid after the last out")
    print("longest:", longest)
    print("screenshot:", chromium.screenshot("live-night-over.png"))
    if "Lucas Giolito" not in longest or "no-hitter" not in longest:
        fail(f"the night's longest bid is not Giolito's no-hitter: {longest!r}")

    # The server starts the day again (an operator's restart): the page says so.
    pid = int(os.environ["NOHIT_SERVER_PID"])
    command = json.loads(os.environ["NOHIT_SERVER_COMMAND"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "healthz", timeout=1)
            time.sleep(0.2)
        except Exception:
            break
    restarted = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        notice = wait("""(() => { const p = document.querySelector('#replay-restarted');
            return !p.hidden ? p.innerText : null; })()""", "the notice that the replay started its day again", 60)
        print("restarted:", notice)
        print("screenshot:", chromium.screenshot("live-night-restarted.png"))
    finally:
        restarted.terminate()
        restarted.wait(timeout=30)
    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("live night: every check held")
    sys.exit(0)
finally:
    chromium.close()
