// The operator's Metrics tab (#metrics, with the admin token): how the app is used, from the
// page's own events (analytics.js) and the apps' (NoHitterKit), through /api/admin/metrics; and
// the deliveries that failed, with the providers' reasons (/api/admin/deliveries/failed).
import { api } from './api.js';
import { $, esc } from './dom.js';
import { barChart, stackedChart } from './format.js';

let shown = false;
let requests = 0;

/** Shown: the charts come at once when this session already has the token. */
export function showMetrics() {
  if (sessionStorage.getItem('nohit-admin-token') && !shown) loadMetrics();
}

async function loadMetrics(event) {
  event?.preventDefault();
  const input = $('#metrics-token');
  if (input.value) sessionStorage.setItem('nohit-admin-token', input.value);
  const token = sessionStorage.getItem('nohit-admin-token');
  const status = $('#metrics-status');
  if (!token) { status.textContent = 'The admin token is needed (nohit serve --admin-token).'; return; }
  status.textContent = 'Loading…';
  // Only the latest request's answer is shown (another project may be picked while one loads).
  const request = ++requests;
  try {
    await loadProjects(token);
    const project = $('#metrics-project').value;
    const days = $('#metrics-days').value;
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    const compare = $('#metrics-compare').value;
    const usage = await api(`/api/admin/metrics?${project ? `project=${encodeURIComponent(project)}&` : ''}days=${encodeURIComponent(days)}&timezone=${encodeURIComponent(zone)}${compare ? `&compare=${encodeURIComponent(compare)}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
    if (request !== requests) return;
    shown = true;
    showUsage(usage);
    const name = projectNames.get(usage.project);
    status.textContent = `Project ${name && name !== usage.project ? `${name} (${usage.project})` : usage.project}, the last ${usage.days} days (${usage.timezone}).`;
    showFailed(await api('/api/admin/deliveries/failed?limit=50', { headers: { authorization: `Bearer ${token}` } }));
  } catch (error) {
    status.textContent = `Metrics could not be loaded: ${error.message}`;
    if (/401|403|token/i.test(error.message)) sessionStorage.removeItem('nohit-admin-token');
  }
}

// Each project's name by id, once listed.
const projectNames = new Map();

/** The projects to pick from (asked once per page): the web app's first, then the others by name. */
async function loadProjects(token) {
  if (projectNames.size) return;
  const answer = await api('/api/admin/projects', { headers: { authorization: `Bearer ${token}` } });
  for (const project of answer.projects) projectNames.set(project.id, project.name);
  const others = answer.projects.filter((p) => p.id !== answer.default).sort((a, b) => a.name.localeCompare(b.name));
  const own = answer.projects.find((p) => p.id === answer.default);
  const select = $('#metrics-project');
  const chosen = select.value;
  select.innerHTML = (own ? `<option value="">This web app (${esc(own.name)})</option>` : '<option value="">This web app</option>')
    + others.map((p) => `<option value="${esc(p.id)}">${esc(p.name)} (${esc(p.id)})</option>`).join('');
  select.value = chosen;
}

const percent = (share) => (share == null ? '–' : `${Math.round(share * 1000) / 10}%`);
const day = (bucket) => bucket.timeframe.start.slice(5, 10);

/** The change from the period before, in words a screen reader reads as they are. */
function change(now, before, asShare) {
  if (now == null || before == null) return 'no figure for the other period';
  if (asShare) {
    const points = Math.round((now - before) * 1000) / 10;
    return points === 0 ? 'as in the other period' : `${points > 0 ? 'up' : 'down'} ${Math.abs(points)} points from ${percent(before)}`;
  }
  if (before === 0) return now === 0 ? 'as in the other period' : `up from 0`;
  const ratio = Math.round(((now - before) / before) * 100);
  return ratio === 0 ? `as in the other period (${before})` : `${ratio > 0 ? 'up' : 'down'} ${Math.abs(ratio)}% from ${before}`;
}

function showUsage(usage) {
  const groups = (rows, key) => rows.map((row) => ({ label: String(row[key] ?? 'none'), value: row.result })).sort((a, b) => b.value - a.value);
  const series = (buckets, key) => buckets.map((bucket) => ({
    label: day(bucket), parts: bucket.value.map((row) => ({ series: String(row[key] ?? 'web'), value: row.result })),
  }));
  const { totals, previous } = usage;
  const from = (frame) => new Date(frame.start).toLocaleDateString();
  $('#metrics-compared').textContent = `This period (from ${from(usage.period)}) and the one from ${from(usage.previous_period)}`;
  const tiles = [
    ['Active devices', totals.active_devices, previous.active_devices],
    ['New devices', totals.new_devices, previous.new_devices],
    ['Sessions', totals.sessions, previous.sessions],
    ['Crash-free sessions', totals.crash_free_sessions, previous.crash_free_sessions, true],
    ['Crash-free devices', totals.crash_free_devices, previous.crash_free_devices, true],
    ['Errors and crashes', totals.errors, previous.errors],
  ];
  $('#metrics-totals').innerHTML = tiles.map(([name, now, before, share]) =>
    `<div><dt>${esc(name)}</dt><dd>${share ? percent(now) : esc(String(now ?? 0))}<small>${esc(change(now, before, share))}</small></dd></div>`).join('');
  $('#metrics-active').innerHTML = barChart(usage.daily_active_devices.map((b) => ({ label: day(b), value: b.value })), 'Devices active each day', 'No visits yet.');
  $('#metrics-new').innerHTML = barChart(usage.new_devices_by_day.map((b) => ({ label: day(b), value: b.value })), 'New devices each day', 'No new device yet.');
  $('#metrics-weekly').innerHTML = barChart(usage.weekly_active_devices.map((b) => ({ label: `from ${day(b)}`, value: b.value })), 'Devices active each week', 'No visits yet.');
  showRetention($('#metrics-retention-daily'), usage.retention.daily, 7);
  showRetention($('#metrics-retention-weekly'), usage.retention.weekly, 3);
  $('#metrics-retention-none').hidden = usage.retention.daily.length > 0;
  showRetentionByVersion($('#metrics-retention-version'), usage.retention_by_version);
  $('#metrics-crash-free').textContent = totals.sessions
    ? `${percent(totals.crash_free_sessions)} of ${totals.sessions} sessions and ${percent(totals.crash_free_devices)} of ${totals.session_devices} devices crash-free`
    : 'No app session recorded in this period (crash-free figures come from the apps’ sessions).';
  $('#metrics-errors').innerHTML = barChart(groups(usage.errors_by_kind, 'kind'), 'Errors and crashes, by kind', 'No error or crash reported.');
  $('#metrics-errors-version').innerHTML = barChart(usage.errors_by_version.map((row) => ({
    label: `${row.kind} ${row['standard_properties.app_version'] ?? 'web'}`, value: row.result })).sort((a, b) => b.value - a.value).slice(0, 12),
  'Errors and crashes, by kind and app version', 'No error or crash reported.');
  const length = usage.session_length;
  // The tile counts sessions begun; a length comes only from the sessions that ended and said so.
  $('#metrics-session-length').textContent = length.average != null
    ? `A session lasts ${Math.round(length.average)} s on average, ${Math.round(length.median)} s at the median.`
    : totals.sessions
      ? `${totals.sessions} sessions recorded in this period; none has reported its length yet (an app’s session end carries it).`
      : 'No app session recorded in this period.';
  $('#metrics-sessions').innerHTML = barChart(usage.sessions_by_day.map((b) => ({ label: day(b), value: b.value })), 'Sessions each day', 'No app session yet.');
  $('#metrics-versions').innerHTML = stackedChart(series(usage.versions_by_day, 'standard_properties.app_version'), 'Devices each day, by app version', 'No visits yet.');
  $('#metrics-os').innerHTML = stackedChart(series(usage.os_versions_by_day, 'standard_properties.system_version'), 'Devices each day, by OS version', 'No visits yet.');
  $('#metrics-models').innerHTML = barChart(groups(usage.devices_by_model, 'standard_properties.model').slice(0, 12), 'Devices, by model', 'No model reported (the web page has none).');
  $('#metrics-languages').innerHTML = barChart(groups(usage.languages, 'standard_properties.language').slice(0, 12), 'Devices, by language', 'No visits yet.');
  $('#metrics-pushes').innerHTML = barChart(groups(usage.alerts_opened_by_channel, 'channel'), 'Alerts opened per channel', 'No alert opened yet.');
  $('#metrics-tabs').innerHTML = barChart(groups(usage.views_by_tab, 'tab'), 'Views per tab', 'No views yet.');
  $('#metrics-touches').innerHTML = barChart(groups(usage.touches_by_target, 'target').slice(0, 12), 'Most tapped', 'No taps yet.');
  $('#metrics-deals').innerHTML = barChart(groups(usage.deal_taps, 'target').slice(0, 12), 'Deal taps', 'No deal tapped yet.');
}

/** A retention table: a row per cohort, its size, and the share seen again after each step. */
function showRetention(table, cohorts, steps) {
  fillRows(table, cohorts.map((cohort) => [
    cohort.cohort.slice(5, 10), String(cohort.size),
    ...Array.from({ length: steps }, (_, i) => (i < cohort.retained.length ? percent(cohort.retained[i]) : '')),
  ]));
}

/** Retention by app version: a row per version of this period, each share beside the other
 * period's for the same version ("was"), "–" where no cohort reaches that far. */
function showRetentionByVersion(table, byVersion) {
  const before = new Map((byVersion?.previous || []).map((row) => [row.value, row]));
  const cell = (now, then) => {
    const figure = now == null ? '–' : percent(now);
    return then == null ? figure : `${figure} (was ${percent(then)})`;
  };
  fillRows(table, (byVersion?.current || []).map((row) => {
    const other = before.get(row.value);
    return [
      row.value === 'none' ? 'no version' : row.value, other ? `${row.devices} (was ${other.devices})` : String(row.devices),
      ...row.days.map((share, i) => cell(share, other?.days[i])),
      ...row.weeks.map((share, i) => cell(share, other?.weeks[i])),
    ];
  }));
}

/** A table body of rows of cells, as text (the reasons are the providers' words). */
function fillRows(table, rows) {
  const body = table.querySelector('tbody');
  body.replaceChildren(...rows.map((cells) => {
    const row = document.createElement('tr');
    row.append(...cells.map((text) => {
      const cell = document.createElement('td');
      cell.textContent = text;
      return cell;
    }));
    return row;
  }));
  table.hidden = rows.length === 0;
  // Its scrolling region (a focus stop, for keyboards on a phone) goes with it.
  const region = table.closest('.table-scroll');
  if (region) region.hidden = table.hidden;
}

function showFailed(failed) {
  $('#metrics-failed-status').textContent = failed.failed === 0
    ? 'No delivery has failed.'
    : `${failed.failed} deliveries failed in all; a device a provider said is gone was pruned (disabled).`;
  fillRows($('#metrics-failed-counts'), failed.counts.map((count) => [count.channel, count.reason, String(count.count)]));
  fillRows($('#metrics-failed-recent'), failed.recent.map((delivery) => [
    new Date(delivery.failed_at).toLocaleString(), delivery.channel, delivery.device_id.slice(0, 8), delivery.reason,
    delivery.device,
  ]));
}

export function wireMetrics() {
  $('#metrics-form').addEventListener('submit', loadMetrics);
  // Another project: its figures at once (the token is already known).
  $('#metrics-project').addEventListener('change', () => { if (shown) loadMetrics(); });
}
