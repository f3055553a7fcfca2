#!/usr/bin/env python3
"""The Deals page in headless Chromium while `nohit serve` replays 2020-08-24, the day after the
Nationals beat the Marlins 9-3: Papa John's card answers a big YES with the game that did it and the
redemption window, other rules NO; the charts of deal days by month and by franchise are SVG, and
follow the chosen rule (Papa John's: 5 days of 2020 so far). Desktop light, then phone dark, with no
horizontal scrolling; the Settings page offers the deals in force to subscribe to. No
Content-Security-Policy violation and no uncaught exception. Saves screenshots. Exit status 0 when
all holds, 1 with the reason.

usage: deals_page.py URL OUTPUT_DIR [TIMEOUT_SECONDS]
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60
chromium = open_browser(output)
RULE = "papa-johns-dc-nationals"


def fail(reason):
    chromium.fail(reason, "deals-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "deals-failure.png")


card = f"document.querySelector('#deals-today [data-rule=\"{RULE}\"]')"
try:
    chromium.page("Page.navigate", {"url": url + "#deals"})
    today = wait(f"""(() => {{ const c = {card}; if (!c) return null;
      return {{ answer: c.querySelector('.answer').textContent, on: c.classList.contains('on'), text: c.innerText,
               others: [...document.querySelectorAll('#deals-today .deal.off .answer')].map(a => a.textContent) }}; }})()""",
                 "Papa John's answer for today")
    print("today:", json.dumps(today))
    if today["answer"] != "YES" or not today["on"]:
        fail(f"Papa John's is not YES on Aug 24 2020: {today}")
    if "Nationals 9, Marlins 3" not in today["text"] or "Monday, Aug 24, all day" not in today["text"]:
        fail(f"the card does not name the game and the window: {today['text']}")
    chart = wait("""(() => { const bars = document.querySelectorAll('#chart-month svg rect').length;
      return bars ? { bars, total: document.querySelector('#deal-total').textContent } : null; })()""",
                 "the chart of deal days by month")
    print("every deal:", json.dumps(chart))
    chromium.evaluate(f"(() => {{ const s = document.querySelector('#deal-rule'); s.value = '{RULE}'; s.dispatchEvent(new Event('change')); }})()")
    one = wait("""(() => { const t = document.querySelector('#deal-total').textContent;
      if (!t.startsWith('5 ')) return null;
      return { total: t, months: document.querySelector('#chart-month svg').getAttribute('aria-label'),
               franchises: document.querySelector('#chart-franchise svg').getAttribute('aria-label') }; })()""",
               "Papa John's five deal days of 2020 so far")
    print("papa john's:", json.dumps(one))
    if "Jul 1" not in one["months"] or "Aug 4" not in one["months"] or "Washington Nationals 5" not in one["franchises"]:
        fail(f"the charts do not show July 1, August 4 and the Nationals 5: {one}")
    print("screenshot:", chromium.screenshot("deals-desktop-light.png"))

    chromium.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    chromium.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    phone = wait("""(() => ({ width: document.documentElement.scrollWidth,
      background: getComputedStyle(document.body).backgroundColor }))()""", "the Deals page on a phone")
    print("phone:", json.dumps(phone))
    if phone["width"] > 390:
        fail(f"the page scrolls sideways on a 390-pixel phone ({phone['width']} px)")
    if phone["background"] in ("rgb(246, 247, 249)", "rgb(255, 255, 255)"):
        fail(f"dark mode did not apply (background {phone['background']})")
    print("screenshot:", chromium.screenshot("deals-phone-dark.png"))

    chromium.evaluate("location.hash = '#settings'")
    offered = wait("""(() => { const boxes = [...document.querySelectorAll('#deal-subscriptions input[type=checkbox]')].map(b => b.value);
      return boxes.length ? boxes : null; })()""", "the deals offered in Settings")
    print("settings offers:", json.dumps(offered))
    if RULE not in offered:
        fail(f"Settings does not offer {RULE}: {offered}")
    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("deals page: every check held")
    sys.exit(0)
finally:
    chromium.close()
