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

An app's events are sent into the same project too (two devices over four days: versions, sessions
that ended cleanly or not, a crash), and the dashboard shows them: the period compared with the one
before, the retention table (and by version), the versions chart, the crash-free figure; axe-core finds no serious or
critical violation on it, light and dark, desktop and phone.

usage: metrics_page.py URL OUTPUT_DIR ADMIN_TOKEN [TIMEOUT_SECONDS] [AXE_JS]
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import each_view, open_browser

url, output, token = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 60
axe_path = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else None
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

    # An app's events (as NoHitterKit records them) in the same project: devices A (1.4.0) and B
    # (1.3.9) first launched three days ago at noon UTC; A back two days ago; B's first session did
    # not end cleanly (a crash), its second did.
    app = chromium.evaluate("""(async () => {
      const day = (n) => { const d = new Date(); d.setUTCHours(12, 0, 0, 0); d.setUTCDate(d.getUTCDate() - n); return d.toISOString(); };
      const std = (version, first) => ({ app_version: version, system_version: version === '1.4.0' ? '18.1' : '17.6',
        model: 'iPhone15,2', language: 'en-US', first_time_app_launch: first });
      const ev = (device, version, n, first, extra) => ({ ...extra, keen: { timestamp: day(n) }, user: { id_hash: device },
        standard_properties: std(version, first) });
      const body = {
        views: [ev('dev-a', '1.4.0', 3, true, { class_name: 'Live' }), ev('dev-b', '1.3.9', 3, true, { class_name: 'Live' }),
                ev('dev-a', '1.4.0', 2, false, { class_name: 'Scores' }), ev('dev-b', '1.3.9', 1, false, { class_name: 'Live' })],
        app_launch: [ev('dev-a', '1.4.0', 3, true, { session_duration: 60, clean_exit: true }),
                     ev('dev-b', '1.3.9', 3, true, { session_duration: 20, clean_exit: false }),
                     ev('dev-a', '1.4.0', 2, false, { session_duration: 100, clean_exit: true }),
                     ev('dev-b', '1.3.9', 1, false, { session_duration: 40, clean_exit: true })],
        errors: [ev('dev-b', '1.3.9', 3, false, { kind: 'crash', fatal: true, signal: 11 }),
                 ev('dev-a', '1.4.0', 2, false, { kind: 'error', domain: 'NSURLErrorDomain', code: -1009, fatal: false })],
      };
      const r = await fetch(`/3.0/projects/${state.config.analytics.project_id}/events`, { method: 'POST',
        headers: { authorization: state.config.analytics.write_key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return r.status; })()""")
    if app != 200:
        fail(f"the app's events were not taken: {app}")

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
    # The project picker: the web app's own first, by its name, as /api/admin/projects lists them.
    picker = chromium.evaluate("[...document.querySelectorAll('#metrics-project option')].map(o => [o.value, o.textContent])")
    print("projects offered:", json.dumps(picker))
    if not picker or picker[0][0] != "" or not picker[0][1].startswith("This web app ("):
        fail(f"the project picker does not offer the web app's own project by name first: {picker}")
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
    # The dashboard from the app's events: the period and the one before, retention, versions,
    # stability.
    board = wait("""(() => { const crash = document.querySelector('#metrics-crash-free').textContent;
      if (!crash) return null;
      const rows = [...document.querySelectorAll('#metrics-retention-daily tbody tr')].map((r) => [...r.cells].map((c) => c.textContent));
      return { crash, rows, tiles: [...document.querySelectorAll('#metrics-totals div')].map((d) => d.textContent),
        versions: document.querySelector('#metrics-versions svg')?.getAttribute('aria-label'),
        errors: document.querySelector('#metrics-errors svg')?.getAttribute('aria-label'),
        length: document.querySelector('#metrics-session-length').textContent }; })()""", "the dashboard")
    print("dashboard:", json.dumps(board))
    if "75% of 4 sessions" not in board["crash"] or "50% of 2 devices" not in board["crash"]:
        fail(f"the crash-free figure is not 3 of 4 sessions and 1 of 2 devices: {board['crash']}")
    cohort = [row for row in board["rows"] if row[1] == "2"]
    if not cohort or cohort[0][2] != "50%":
        fail(f"the retention table does not show the app's two devices, half back the next day: {board['rows']}")
    if not board["versions"] or "1.4.0" not in board["versions"] or "1.3.9" not in board["versions"]:
        fail(f"the versions chart does not show both versions: {board['versions']}")
    if "crash 1" not in (board["errors"] or ""):
        fail(f"the errors chart does not count the crash: {board['errors']}")
    if not any(tile.startswith("Sessions4") for tile in board["tiles"]):
        fail(f"the tiles do not count 4 sessions: {board['tiles']}")
    if "55 s on average" not in board["length"]:
        fail(f"the session length is not 55 s on average: {board['length']}")
    # Retention by app version: A (1.4.0) back the day after its first, B (1.3.9) not.
    by_version = chromium.evaluate("""[...document.querySelectorAll('#metrics-retention-version tbody tr')]
      .map((r) => [...r.cells].map((c) => c.textContent))""")
    print("retention by version:", json.dumps(by_version))
    rows = {row[0]: row for row in by_version or []}
    if rows.get("1.4.0", [None] * 3)[1:3] != ["1", "100%"] or rows.get("1.3.9", [None] * 3)[1:3] != ["1", "0%"]:
        fail(f"retention by version does not show 1.4.0's device back on day 1 and 1.3.9's not: {by_version}")
    print("screenshot:", chromium.screenshot("metrics-dashboard.png"))
    if axe_path:
        chromium.evaluate(open(axe_path, encoding="utf-8").read() + "\n;true")
        serious = []
        for device, scheme in each_view(chromium):
            violations = chromium.evaluate("""(async () => (await axe.run(document, { resultTypes: ['violations'] }))
              .violations.map(v => ({ id: v.id, impact: v.impact, first: v.nodes[0]?.target?.join(' ') })))()""")
            counted = [v for v in violations if v["impact"] in ("serious", "critical")]
            print(f"axe dashboard {device:7} {scheme:5}: {len(violations)} violation(s), {len(counted)} serious or critical",
                  *[f"{v['impact']}: {v['id']} ({v['first']})" for v in violations], sep="\n    ")
            chromium.screenshot(f"metrics-dashboard-{device}-{scheme}.png")
            # The retention table and the versions chart, as they look there.
            for part in ("retention", "versions"):
                chromium.evaluate(f"document.querySelector('#metrics-{part}' + ('{part}' === 'retention' ? '-daily' : '')).scrollIntoView()")
                chromium.screenshot(f"metrics-{part}-{device}-{scheme}.png")
            chromium.evaluate("window.scrollTo(0, 0)")
            serious += counted
        chromium.page("Emulation.clearDeviceMetricsOverride", {})
        chromium.page("Emulation.setEmulatedMedia", {"features": []})
        if serious:
            fail(f"axe found serious or critical violations on the dashboard: {serious}")
    else:
        print("axe: skipped on the dashboard (no axe-core given: Tests/Browser/get-axe)")

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
