// No-Hitter Alerts web UI: plain JavaScript, no build step. Live state comes from /api/games and
// then the Server-Sent Events stream at /api/stream (EventSource resumes with Last-Event-ID).
'use strict';

const state = { games: new Map(), moments: [], config: null, streamUpdates: 0 };
const $ = (selector) => document.querySelector(selector);
const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

async function api(path, options = {}) {
  const response = await fetch(path, { headers: { 'content-type': 'application/json', ...(options.headers || {}) }, ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error?.message || `HTTP ${response.status}`);
  return body;
}

// Tabs
function showTab() {
  const tab = (location.hash || '#live').slice(1);
  document.querySelectorAll('.tab').forEach((section) => { section.hidden = section.id !== tab; });
  document.querySelectorAll('nav a').forEach((link) => link.classList.toggle('active', link.dataset.tab === tab));
  if (tab === 'hall-of-fame') loadHallOfFame();
}
window.addEventListener('hashchange', showTab);

// Live
function attempts() {
  const minimum = state.config?.attempt_outs ?? 12;
  const list = [];
  for (const game of state.games.values()) {
    for (const bid of game.bids) {
      if (bid.hitless && bid.outs >= minimum && (bid.status === 'alive' || bid.status === 'official')) list.push({ game, bid });
    }
  }
  return list.sort((a, b) => b.bid.outs - a.bid.outs);
}

function situation(game) {
  if (game.status === 'final') return game.status_text || 'Final';
  if (game.status === 'scheduled' && game.status_text && game.status_text !== 'Scheduled') return game.status_text;
  if (game.status === 'scheduled') return 'Starts ' + new Date(game.start_time).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
  const half = game.outs === 3 ? (game.half === 'top' ? 'Mid' : 'End') : (game.half === 'top' ? 'Top' : 'Bottom');
  return `${half} ${game.inning}` + (game.outs < 3 ? `, ${game.outs} out${game.outs === 1 ? '' : 's'}` : '');
}

function renderAttempts() {
  const list = attempts();
  $('#no-attempts').hidden = list.length > 0;
  const container = $('#attempts');
  const seen = new Set();
  for (const { game, bid } of list) {
    const key = `${game.id}-${bid.team}`;
    seen.add(key);
    let card = container.querySelector(`[data-key="${key}"]`);
    if (!card) {
      card = document.createElement('article');
      card.className = 'card attempt';
      card.dataset.key = key;
      card.dataset.history = '';
      container.appendChild(card);
    }
    const opponent = bid.team === game.home.code ? game.away : game.home;
    const pitching = bid.team === game.home.code ? game.home : game.away;
    const innings = Math.floor(bid.outs / 3);
    const thirds = bid.outs % 3;
    const badge = bid.status === 'official' ? '<span class="badge official">No-hitter!</span>' : (bid.perfect ? '<span class="badge">Perfect game alive</span>' : '');
    card.dataset.outs = bid.outs;
    if (!card.dataset.history.split(',').includes(String(bid.outs))) {
      card.dataset.history = card.dataset.history ? `${card.dataset.history},${bid.outs}` : String(bid.outs);
    }
    card.innerHTML = `
      <h3>${esc(bid.pitchers.join(', '))}${badge}</h3>
      <div class="muted">${esc(pitching.name)} vs ${esc(opponent.name)}</div>
      <div class="progress">Hitless through ${innings}${thirds ? ` ${thirds}/3` : ''} inning${innings === 1 && !thirds ? '' : 's'}</div>
      <div class="bar"><span></span></div>
      <div>${esc(bid.outs)} outs · ${esc(game.away.code)} ${game.away.runs}, ${esc(game.home.code)} ${game.home.runs} · ${esc(situation(game))}</div>
      ${bid.pitchers.length > 1 ? `<div class="muted">Combined; now pitching: ${esc(bid.current_pitcher)}</div>` : ''}
      <div class="muted">${game.broadcasts.length ? 'Watch or listen: ' + esc(game.broadcasts.join(', ')) : 'Broadcasts: not known for this game'}</div>`;
    // Through the CSSOM: the Content-Security-Policy refuses inline style attributes.
    card.querySelector('.bar span').style.width = `${Math.min(100, (bid.outs / 27) * 100)}%`;
  }
  container.querySelectorAll('.attempt').forEach((card) => { if (!seen.has(card.dataset.key)) card.remove(); });
}

function renderMoments() {
  $('#moments').innerHTML = state.moments.slice(0, 20).map((m) =>
    `<li><strong>${esc(m.title)}</strong> — ${esc(m.body)}</li>`).join('');
}

function renderScores() {
  const games = [...state.games.values()].sort((a, b) => a.start_time.localeCompare(b.start_time));
  $('#games').innerHTML = games.map((game) => `
    <div class="game" data-game="${esc(game.id)}">
      ${[game.away, game.home].map((team) => `
      <div title="${esc(team.name)}">${esc(team.abbreviation || team.code)} <strong>${team.runs}</strong>
        <span class="rhe" aria-label="hits ${team.hits ?? 0}, errors ${team.errors ?? 0}">${team.hits ?? 0} H ${team.errors ?? 0} E</span></div>`).join('')}
      <div class="state">${esc(situation(game))}</div>
    </div>`).join('');
  $('#teams').innerHTML = [...new Set(games.flatMap((g) => [g.away.code, g.home.code]))].sort()
    .map((code) => `<option value="${esc(code)}">`).join('');
}

function connect() {
  const source = new EventSource('/api/stream');
  source.onopen = () => { $('#connection').textContent = 'live'; };
  source.onerror = () => { $('#connection').textContent = 'reconnecting…'; };
  source.addEventListener('game', (event) => {
    const game = JSON.parse(event.data);
    state.games.set(game.id, game);
    state.streamUpdates += 1;
    document.body.dataset.streamUpdates = state.streamUpdates;
    renderAttempts();
    renderScores();
  });
  source.addEventListener('moment', (event) => {
    state.moments.unshift(JSON.parse(event.data));
    renderMoments();
  });
}

// Hall of Fame
async function loadHallOfFame() {
  const season = $('#season').value;
  if (!season) return;
  const body = $('#hall tbody');
  body.innerHTML = '<tr><td colspan="7">Loading…</td></tr>';
  try {
    const entries = await api(`/api/hall-of-fame/${season}?limit=50`);
    body.innerHTML = entries.map(({ rank, side }) => `<tr>
      <td>${rank}</td><td>${esc(side.date)}</td><td>${esc(side.pitching_team)}</td><td>${esc(side.batting_team)}</td>
      <td>${esc(side.pitcher_names.join(', '))}</td><td>${side.outs_before_first_hit}${side.official ? ' — no-hitter' : ''}</td>
      <td>${side.first_hit ? esc(`${side.first_hit.batter_name} (${side.first_hit.event}), inning ${side.first_hit.inning}`) : '—'}</td></tr>`).join('');
  } catch (error) {
    body.innerHTML = `<tr><td colspan="7">${esc(error.message)}</td></tr>`;
  }
}

// Settings
const device = () => JSON.parse(localStorage.getItem('nohit-device') || 'null');
let favourites = [];

function renderChips() {
  $('#chips').innerHTML = favourites.map((team) =>
    `<span class="chip">${esc(team)}<button type="button" data-remove="${esc(team)}" aria-label="remove ${esc(team)}">×</button></span>`).join('');
}

function preferencesFromForm() {
  return {
    favourite_teams: favourites,
    threshold_innings: Number($('#threshold').value),
    favourite_threshold_innings: Number($('#favourite-threshold').value),
    frequency: $('#frequency').value,
    quiet_hours: $('#quiet').checked ? { start: $('#quiet-start').value, end: $('#quiet-end').value, time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone } : null,
    spoiler_delay_seconds: Number($('#spoiler').value),
    jinx_safe: $('#jinx').checked,
  };
}

function showPreferences(p) {
  favourites = p.favourite_teams || [];
  renderChips();
  $('#threshold').value = p.threshold_innings;
  $('#favourite-threshold').value = p.favourite_threshold_innings;
  $('#frequency').value = p.frequency;
  $('#quiet').checked = !!p.quiet_hours;
  if (p.quiet_hours) { $('#quiet-start').value = p.quiet_hours.start; $('#quiet-end').value = p.quiet_hours.end; }
  $('#spoiler').value = p.spoiler_delay_seconds;
  $('#jinx').checked = p.jinx_safe;
}

function base64url(buffer) {
  return btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
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
    const registration = await navigator.serviceWorker.register('/sw.js');
    const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(state.config.vapid_public_key) });
    const json = subscription.toJSON();
    const answer = await api('/api/devices', { method: 'POST', body: JSON.stringify({
      channel: 'web-push', endpoint: json.endpoint, p256dh: json.keys.p256dh, auth: json.keys.auth, preferences: preferencesFromForm() }) });
    localStorage.setItem('nohit-device', JSON.stringify(answer));
    status.textContent = 'Notifications are on for this browser.';
  } catch (error) {
    status.textContent = `Could not turn on notifications: ${error.message}`;
  }
}

async function savePreferences(event) {
  event.preventDefault();
  const status = $('#settings-status');
  const mine = device();
  if (!mine) { status.textContent = 'Turn on notifications in this browser first; your settings are saved with it.'; return; }
  try {
    const saved = await api(`/api/devices/${mine.id}/preferences`, { method: 'PUT', headers: { authorization: `Bearer ${mine.secret}` }, body: JSON.stringify(preferencesFromForm()) });
    showPreferences(saved);
    status.textContent = 'Saved.';
  } catch (error) {
    status.textContent = `Not saved: ${error.message}`;
  }
}

async function start() {
  showTab();
  state.config = await api('/api/config').catch(() => ({}));
  $('#season').innerHTML = (state.config.seasons || []).map((s) => `<option>${esc(s)}</option>`).join('');
  $('#season').addEventListener('change', loadHallOfFame);
  for (const game of await api('/api/games')) state.games.set(game.id, game);
  state.moments = await api('/api/moments?limit=20');
  renderAttempts(); renderScores(); renderMoments();
  connect();
  $('#team-input').addEventListener('change', (event) => {
    const team = event.target.value.trim().toUpperCase();
    if (/^[A-Z0-9]{2,3}$/.test(team) && !favourites.includes(team)) { favourites.push(team); renderChips(); }
    event.target.value = '';
  });
  $('#chips').addEventListener('click', (event) => {
    const team = event.target.dataset.remove;
    if (team) { favourites = favourites.filter((t) => t !== team); renderChips(); }
  });
  $('#notify').addEventListener('click', enableNotifications);
  $('#preferences').addEventListener('submit', savePreferences);
  const mine = device();
  if (mine) api(`/api/devices/${mine.id}/preferences`, { headers: { authorization: `Bearer ${mine.secret}` } }).then(showPreferences).catch(() => {});
  if ((location.hash || '#live') === '#hall-of-fame') loadHallOfFame();
}
start();
