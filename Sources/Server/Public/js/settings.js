// The Settings tab: favourite teams as chips, alert thresholds, how often, quiet hours, spoiler
// delay, jinx-safe wording and the deals to be told of. Settings work without push: kept in this
// browser, and sent with the subscription when notifications are turned on; with a device, saved
// on the server too. The controls answer from the first moment, before anything is loaded (Save
// never submits the form and reloads the page).
import { recording, setRecording } from './analytics.js';
import { api } from './api.js';
import { $, $$, esc, patch } from './dom.js';
import { clubName } from './format.js';
import { clubs, device, onFavourites, readJSON, setDelay, setFavourites, state } from './state.js';

/** The chips of the favourite teams and the picker of the others. */
export function drawChips() {
  const favourites = state.favourites;
  patch($('#chips'), favourites.map((team) =>
    `<li class="chip" data-key="${esc(team)}">${esc(clubName(team))}<button type="button" data-remove="${esc(team)}" aria-label="Remove ${esc(clubName(team))}">×</button></li>`).join('')
    || '<li class="muted">None yet.</li>');
  $('#settings-team').innerHTML = '<option value="">Choose a team…</option>' + clubs()
    .filter((t) => !favourites.includes(t.code)).map((t) => `<option value="${esc(t.code)}">${esc(t.name)}</option>`).join('');
}

// Quiet hours as the server takes them: both times given, and not the same (from a time to the
// same time is no quiet time at all). The words for what is wrong, or '' when nothing is.
function quietHoursProblem() {
  if (!$('#quiet').checked) return '';
  const start = $('#quiet-start').value;
  const end = $('#quiet-end').value;
  if (!start || !end) return `Quiet hours need ${!start && !end ? 'a start and an end time' : !start ? 'a start time ("From")' : 'an end time ("to")'}, such as 23:00 to 08:00.`;
  if (start === end) return `Quiet hours from ${start} to ${end} would be no quiet time at all: choose two different times, or untick quiet hours.`;
  return '';
}

function showQuietHoursProblem() {
  const problem = quietHoursProblem();
  const box = $('#quiet-error');
  box.textContent = problem;
  box.hidden = !problem;
  for (const id of ['#quiet-start', '#quiet-end']) {
    if (problem) { $(id).setAttribute('aria-invalid', 'true'); $(id).setAttribute('aria-describedby', 'quiet-error'); }
    else { $(id).removeAttribute('aria-invalid'); $(id).removeAttribute('aria-describedby'); }
  }
  return problem;
}

function preferencesFromForm() {
  return {
    favourite_teams: state.favourites,
    threshold_innings: Number($('#threshold').value),
    favourite_threshold_innings: Number($('#favourite-threshold').value),
    frequency: $('#frequency').value,
    quiet_hours: $('#quiet').checked ? { start: $('#quiet-start').value, end: $('#quiet-end').value, time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone } : null,
    spoiler_delay_seconds: Number($('#spoiler').value),
    jinx_safe: $('#jinx').checked,
    unofficial_bids: $('#unofficial-bids').checked,
    deals: $$('#deal-subscriptions input:checked').map((box) => box.value),
    min_odds: $('#min-odds').value === '' ? null : Number($('#min-odds').value),
  };
}

export function showPreferences(p) {
  // The server answers in MLB's abbreviations; the pickers hold each club by its code.
  setFavourites((p.favourite_teams || []).map((a) => clubs().find((t) => t.abbreviation === a || t.code === a)?.code || a));
  $('#threshold').value = p.threshold_innings;
  $('#favourite-threshold').value = p.favourite_threshold_innings;
  $('#frequency').value = p.frequency;
  $('#quiet').checked = !!p.quiet_hours;
  if (p.quiet_hours) { $('#quiet-start').value = p.quiet_hours.start; $('#quiet-end').value = p.quiet_hours.end; }
  $('#spoiler').value = p.spoiler_delay_seconds;
  setDelay(p.spoiler_delay_seconds);
  $('#jinx').checked = p.jinx_safe;
  $('#unofficial-bids').checked = p.unofficial_bids !== false;
  // A share the list does not offer (set through the API) is offered as it is, so saving keeps it.
  const select = $('#min-odds');
  const value = p.min_odds == null ? '' : String(p.min_odds);
  if (![...select.options].some((o) => o.value === value)) {
    const option = document.createElement('option');
    option.value = value;
    option.textContent = `${Math.round(p.min_odds * 1000) / 10} in 100`;
    select.append(option);
  }
  select.value = value;
  $$('#deal-subscriptions input').forEach((box) => { box.checked = (p.deals || []).includes(box.value); });
}

function keyBytes(text) {
  const raw = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function enableNotifications() {
  const status = $('#settings-status');
  try {
    if (!('serviceWorker' in navigator) || !('PushManager' in window)) throw new Error('this browser cannot receive Web Push');
    if (!state.config?.vapid_public_key) throw new Error('the server has no VAPID key');
    const problem = showQuietHoursProblem();
    if (problem) throw new Error(problem);
    await navigator.serviceWorker.register('/sw.js');
    // Subscribing needs an active worker: `ready` waits for it.
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(state.config.vapid_public_key) });
    const json = subscription.toJSON();
    const answer = await api('/api/devices', { method: 'POST', body: JSON.stringify({
      channel: 'web-push', endpoint: json.endpoint, p256dh: json.keys.p256dh, auth: json.keys.auth, preferences: preferencesFromForm() }) });
    localStorage.setItem('nohit-device', JSON.stringify(answer));
    status.textContent = 'Notifications are on for this browser.';
    showPushState();
  } catch (error) {
    status.textContent = `Could not turn on notifications: ${error.message}`;
  }
}

export function showPushState() {
  $('#push-state').textContent = device()
    ? 'Notifications are on in this browser: settings are saved on the server with them.'
    : 'Notifications are off in this browser: settings are kept here until you turn them on.';
}

async function savePreferences(event) {
  event.preventDefault();
  const status = $('#settings-status');
  const problem = showQuietHoursProblem();
  if (problem) {
    status.textContent = `Not saved: ${problem}`;
    return;
  }
  const mine = device();
  localStorage.setItem('nohit-preferences', JSON.stringify(preferencesFromForm()));
  setDelay(Number($('#spoiler').value));
  if (!mine) { status.textContent = 'Saved in this browser.'; return; }
  try {
    const saved = await api(`/api/devices/${mine.id}/preferences`, { method: 'PUT', headers: { authorization: `Bearer ${mine.secret}` }, body: JSON.stringify(preferencesFromForm()) });
    showPreferences(saved);
    status.textContent = 'Saved on the server and in this browser.';
  } catch (error) {
    status.textContent = `Kept in this browser, not saved on the server: ${error.message}`;
  }
}

/** The deals in force, offered to subscribe to. True once they are drawn. */
export async function loadDealSubscriptions() {
  const box = $('#deal-subscriptions');
  try {
    const today = await api('/api/deals/today');
    const chosen = readJSON('nohit-preferences', null)?.deals || [];
    box.innerHTML = '<legend>Tell me when a deal is on</legend>' + today.deals.filter((d) => d.in_force).map((d) =>
      `<label class="check"><input type="checkbox" value="${esc(d.rule)}"${chosen.includes(d.rule) ? ' checked' : ''}> ${esc(d.sponsor)}: ${esc(d.reward)} <span class="muted">(when ${esc(d.condition)})</span></label>`).join('')
      + (today.deals.some((d) => d.in_force) ? '' : '<p class="muted">No deal is in force today.</p>');
    return true;
  } catch (error) {
    box.innerHTML = `<legend>Tell me when a deal is on</legend><p class="muted">Deals could not be loaded: ${esc(error.message)}</p>`;
    return false;
  }
}

/** The preferences the fan kept, from this browser and then (with a device) from the server. */
export function restorePreferences() {
  const local = readJSON('nohit-preferences', null);
  if (local) showPreferences(local);
  showPushState();
}

export function restoreServerPreferences() {
  const mine = device();
  if (mine) api(`/api/devices/${mine.id}/preferences`, { headers: { authorization: `Bearer ${mine.secret}` } }).then(showPreferences).catch(() => {});
}

/** Settings' disclosure of the page's own statistics, once /api/config says whether there are any. */
export function showUsage() {
  if (!state.config?.analytics) return;
  $('#usage-what').textContent = 'This page records which tabs you open, what you tap and which alerts you open, '
    + 'with a random id made in this browser (no name, no location, no IP address kept with them), '
    + 'into this server\'s own statistics.';
  $('#usage-switch').hidden = false;
  $('#usage-record').checked = recording();
}

export function wireSettings() {
  onFavourites(drawChips);
  $('#usage-record').addEventListener('change', (event) => {
    setRecording(event.target.checked);
    $('#usage-status').textContent = event.target.checked
      ? 'Recording again from now on.'
      : 'Nothing more is recorded; what was waiting to be sent is deleted.';
  });
  $('#chips').addEventListener('click', (event) => {
    const team = event.target.dataset.remove;
    if (!team) return;
    setFavourites(state.favourites.filter((t) => t !== team));
    ($('#chips button') || $('#settings-team')).focus();
  });
  $('#settings-team').addEventListener('change', (event) => {
    const code = event.target.value;
    if (code && !state.favourites.includes(code)) setFavourites([...state.favourites, code]);
    $('#settings-team').focus();
  });
  $('#notify').addEventListener('click', enableNotifications);
  $('#preferences').addEventListener('submit', savePreferences);
  for (const id of ['#quiet', '#quiet-start', '#quiet-end']) {
    $(id).addEventListener('change', () => { if (!$('#quiet-error').hidden || quietHoursProblem()) showQuietHoursProblem(); });
  }
}
