// The operator's Metrics tab (#metrics, with the admin token): how the app is used, from the
// page's own events (analytics.js) and the apps' (NoHitterKit), through /api/admin/metrics; and
// the deliveries that failed, with the providers' reasons (/api/admin/deliveries/failed).
import { api } from './api.js';
import { $ } from './dom.js';
import { barChart } from './format.js';

let shown = false;

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
  try {
    const days = $('#metrics-days').value;
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    const usage = await api(`/api/admin/metrics?days=${encodeURIComponent(days)}&timezone=${encodeURIComponent(zone)}`, { headers: { authorization: `Bearer ${token}` } });
    shown = true;
    const groups = (rows, key) => rows.map((row) => ({ label: String(row[key] ?? 'none'), value: row.result })).sort((a, b) => b.value - a.value);
    const daily = usage.daily_active_devices.map((row) => ({ label: row.timeframe.start.slice(5, 10), value: row.value }));
    $('#metrics-active').innerHTML = barChart(daily, 'Devices active each day', 'No visits yet.');
    $('#metrics-pushes').innerHTML = barChart(groups(usage.alerts_opened_by_channel, 'channel'), 'Alerts opened per channel', 'No alert opened yet.');
    $('#metrics-tabs').innerHTML = barChart(groups(usage.views_by_tab, 'tab'), 'Views per tab', 'No views yet.');
    $('#metrics-touches').innerHTML = barChart(groups(usage.touches_by_target, 'target').slice(0, 12), 'Most tapped', 'No taps yet.');
    status.textContent = `Project ${usage.project}, the last ${usage.days} days (${usage.timezone}).`;
    showFailed(await api('/api/admin/deliveries/failed?limit=50', { headers: { authorization: `Bearer ${token}` } }));
  } catch (error) {
    status.textContent = `Metrics could not be loaded: ${error.message}`;
    if (/401|403|token/i.test(error.message)) sessionStorage.removeItem('nohit-admin-token');
  }
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
}
