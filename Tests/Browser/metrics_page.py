#!/usr/bin/env python3
"""The web app's own metrics in headless Chromium against `nohit serve --admin-token`: the page
learns its analytics project from /api/config, records its views (one per tab shown), taps and an
alert opened from a Web Push notification (?via=push, as the service worker opens it), and sends
them as Keen batches; then the operator's Metrics page (#metrics, the admin token typed in) charts
devices active today, alerts opened per channel and views per tab from those very events, and
says no delivery has failed. Settings says what the page records, and its switch stops it (kept
across a reload). No
Content-Security-Policy violation and no uncaught exception. Exit status 0 when all holds, 1 with
the reason.

usage: metrics_page.py URL OUTPUT_DIR ADMIN_TOKEN [TIMEOUT_SECONDS]
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import open_browser

url, output, token = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 60
chromium = open_browser(output)


def fail(reason):
    chromium.fail(reason, "metrics-failure.png")


def wait(expression, what, seconds=None):
    return chromium.wait(expression, what, seconds or timeout, "metrics-failure.png")


QUEUE = "JSON.parse(localStorage.getItem('nohit-metrics-queue') || '[]')"
try:
    chromium.page("Page.navigate", {"url": url + "#live"})
    project = wait("state.config && state.config.analytics ? state.config.analytics.project_id : null",
                   "the web project in /api/config")
    print("web analytics project:", project)
    for tab in ["scores", "deals", "hall-of-fame", "scores", "live"]:
        chromium.evaluate(f"document.querySelector('nav a[data-tab=\"{tab}\"]').click()")
        wait(f"!document.getElementById('{tab}').hidden", f"the {tab} tab shown")
    queued = chromium.evaluate(QUEUE)
    print("queued:", json.dumps([(e["collection"], e["event"].get("tab") or e["event"].get("target")) for e in queued]))
    chromium.evaluate("metrics.flush()")
    wait(f"{QUEUE}.length === 0", "the queue sent")

    # Opened from an alert, as the service worker opens it.
    chromium.page("Page.navigate", {"url": url + "?via=push&kind=completed#live"})
    wait("location.search === '' && state.config && state.config.analytics", "the page opened from a push, its address tidied")
    chromium.evaluate("metrics.flush()")
    wait(f"{QUEUE}.length === 0", "the push's events sent")

    chromium.evaluate("location.hash = '#metrics'")
    wait("!document.getElementById('metrics').hidden", "the Metrics page")
    chromium.evaluate(f"document.querySelector('#metrics-token').value = {json.dumps(token)}")
    chromium.evaluate("document.querySelector('#metrics-form button[type=submit]').click()")
    charts = wait("""(() => { const label = (id) => document.querySelector(`#${id} svg`)?.getAttribute('aria-label');
      const tabs = label('metrics-tabs'); if (!tabs) return null;
      return { status: document.querySelector('#metrics-status').textContent, active: label('metrics-active'),
               pushes: label('metrics-pushes'), tabs, touches: label('metrics-touches') }; })()""",
                  "the charts from the page's own events")
    print("metrics:", json.dumps(charts))
    # Views: live (load), scores, deals, hall-of-fame, scores, live, live (opened from the push).
    for expected in ["live 3", "scores 2", "deals 1", "hall-of-fame 1"]:
        if expected not in charts["tabs"]:
            fail(f"views per tab do not say {expected}: {charts['tabs']}")
    if "web-push 1" not in charts["pushes"]:
        fail(f"alerts opened do not count the one from the push: {charts['pushes']}")
    days = charts["active"].split(": ", 1)[1].split(", ")
    if not days or not days[-1].endswith(" 1"):
        fail(f"today does not show one active device: {charts['active']}")
    if "scores" not in charts["touches"]:
        fail(f"the taps on the tabs are not counted: {charts['touches']}")
    # The deliveries that failed: none on this server (its only channels cannot fail here).
    failed = wait("(() => { const t = document.querySelector('#metrics-failed-status').textContent; return t ? t : null; })()",
                  "the failed deliveries")
    print("failed deliveries:", failed)
    if failed != "No delivery has failed." or not chromium.evaluate("document.querySelector('#metrics-failed-recent').hidden"):
        fail(f"the failed deliveries do not say none: {failed}")
    print("screenshot:", chromium.screenshot("metrics-page.png"))

    # A project the server does not have: 404, saying which.
    unknown = wait(f"""(async () => {{ const r = await fetch('/api/admin/metrics?project=no-such-project',
      {{ headers: {{ authorization: 'Bearer ' + {json.dumps(token)} }} }}); return {{ status: r.status, body: await r.text() }}; }})()""",
                   "the answer for an unknown project")
    print("unknown project:", json.dumps(unknown))
    if unknown["status"] != 404 or "no-such-project" not in unknown["body"]:
        fail(f"an unknown project is not a 404 naming it: {unknown}")

    # A wrong token is refused, and said.
    chromium.evaluate("sessionStorage.removeItem('nohit-admin-token'); document.querySelector('#metrics-token').value = 'wrong'")
    chromium.evaluate("document.querySelector('#metrics-form button[type=submit]').click()")
    refused = wait("(() => { const t = document.querySelector('#metrics-status').textContent; return t.includes('could not') ? t : null; })()",
                   "the wrong token refused")
    print("wrong token:", refused)
    # Settings says what the page records, and its switch stops it: nothing queued, the id gone.
    chromium.evaluate("location.hash = '#settings'")
    disclosure = wait("""(() => { const s = document.querySelector('#usage-switch');
      return s && !s.hidden ? document.querySelector('#usage-what').textContent : null; })()""",
                      "the usage statistics in Settings")
    print("usage statistics:", disclosure)
    if "random id made in this browser" not in disclosure or not chromium.evaluate("document.querySelector('#usage-record').checked"):
        fail(f"Settings does not say what is recorded, switched on: {disclosure}")
    chromium.evaluate("document.querySelector('#usage-record').click()")
    wait("document.querySelector('#usage-status').textContent.includes('Nothing more is recorded')", "the switch's answer")
    for tab in ["scores", "deals", "settings"]:
        chromium.evaluate(f"document.querySelector('nav a[data-tab=\"{tab}\"]').click()")
        wait(f"!document.getElementById('{tab}').hidden", f"the {tab} tab shown")
    after = chromium.evaluate(f"({{ queued: {QUEUE}.length, id: localStorage.getItem('nohit-device-id') }})")
    if after != {"queued": 0, "id": None}:
        fail(f"with the switch off the page still records: {after}")
    chromium.page("Page.reload", {})
    wait("state.config && !document.querySelector('#usage-switch').hidden", "Settings after a reload")
    if chromium.evaluate("document.querySelector('#usage-record').checked"):
        fail("the switch is on again after a reload")
    chromium.evaluate("document.querySelector('#usage-record').click()")
    chromium.evaluate("document.querySelector('nav a[data-tab=\"scores\"]').click()")
    wait(f"{QUEUE}.length > 0", "recording again once switched back on")
    print("usage switch: off records nothing and survives a reload; on records again")

    problems = chromium.problems()
    if problems:
        print("the page reported problems:", *problems, sep="\n  ")
        sys.exit(1)
    print("metrics page: every check held")
    sys.exit(0)
finally:
    chromium.close()
