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
  const [tab, argument] = (location.hash || '#live').slice(1).split('/');
  document.querySelectorAll('.tab').forEach((section) => { section.hidden = section.id !== tab; });
  const nav = tab === 'game' ? 'scores' : tab;
  document.querySelectorAll('nav a').forEach((link) => {
    link.classList.toggle('active', link.dataset.tab === nav);
    if (link.dataset.tab === nav) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
  });
  if (tab === 'hall-of-fame') loadHallOfFame();
  if (tab === 'deals') loadDeals();
  if (tab === 'metrics') showMetricsForm();
  if (tab !== 'metrics') metrics.record('views', { tab });
  state.gamePage = tab === 'game' ? decodeURIComponent(argument || '') : null;
  if (state.gamePage) loadGamePage();
}
window.addEventListener('hashchange', showTab);
// A link to a tab shows it without the browser scrolling to the section (on a phone that scrolled
// the header and its tabs away); focus goes to the tab's heading for keyboard and screen readers.
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[href^="#"]');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const tab = link.getAttribute('href').slice(1).split('/')[0];
  if (!document.getElementById(tab)?.classList.contains('tab')) return;
  event.preventDefault();
  if (location.hash !== link.getAttribute('href')) history.pushState(null, '', link.getAttribute('href'));
  showTab();
  window.scrollTo(0, 0);
  const heading = document.querySelector(`#${tab} h2, #${tab} h3`);
  if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
});

// Live: the attempt card is the centrepiece. A bid hitless through the minimum is shown while it
// is alive; a completed no-hitter becomes a celebration card; a broken-up bid stays while its game
// is on (at most BROKEN_UP_SHOWN_MS after this page saw it broken), saying who broke it up and how.
const BROKEN_UP_SHOWN_MS = 15 * 60 * 1000;
state.brokenSeen = new Map();

function attempts() {
  const minimum = state.config?.attempt_outs ?? 12;
  const list = [];
  const now = Date.now();
  for (const game of state.games.values()) {
    for (const bid of game.bids) {
      if (bid.outs < minimum) continue;
      if (bid.hitless && (bid.status === 'alive' || bid.status === 'official')) list.push({ game, bid });
      else if (bid.status === 'broken-up' && game.status === 'live') {
        const key = `${game.id}-${bid.side}`;
        if (!state.brokenSeen.has(key)) state.brokenSeen.set(key, now);
        if (now - state.brokenSeen.get(key) < BROKEN_UP_SHOWN_MS) list.push({ game, bid });
      }
    }
  }
  const rank = ({ bid }) => (bid.status === 'alive' ? 0 : bid.status === 'official' ? 1 : 2);
  return list.sort((a, b) => rank(a) - rank(b) || b.bid.outs - a.bid.outs);
}

// Where a game stands, in the server's words ("Top 5th, 1 out", "Mid 5th", "Final"); before the
// first pitch, its start in the viewer's own time.
function situation(game) {
  if (game.status === 'scheduled' && (!game.status_text || game.status_text === 'Scheduled')) {
    return 'Starts ' + new Date(game.start_time).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
  }
  return game.situation || game.status_text;
}

// Where to watch: the broadcasts the source names; MLB.TV with its link.
function whereToWatch(game) {
  if (!game.broadcasts.length) {
    return state.config?.source === 'statsapi' ? 'Where to watch: not announced for this game' : 'A replay of a past game: no broadcast';
  }
  return 'Watch or listen: ' + game.broadcasts.map((name) =>
    (/^MLB\.?TV$/i.test(name) ? `<a href="https://www.mlb.com/tv" rel="noopener">${esc(name)}</a>` : esc(name))).join(', ');
}

function pitchingLine(bid) {
  const sum = (key) => bid.lines.reduce((total, line) => total + (line[key] ?? 0), 0);
  const outs = sum('outs');
  const pitches = bid.lines.every((line) => line.pitches != null) ? sum('pitches') : null;
  return `${Math.floor(outs / 3)}.${outs % 3} IP · ${sum('hits')} H · ${sum('walks')} BB · ${sum('strikeouts')} K`
    + (pitches != null ? ` · ${pitches} pitches` : '');
}

function attemptCard({ game, bid }) {
  const opponent = bid.side === 'home' ? game.away : game.home;
  const pitching = bid.side === 'home' ? game.home : game.away;
  const scheduledOuts = (game.scheduled_innings || 9) * 3;
  const toGo = Math.max(0, scheduledOuts - bid.outs);
  const fielding = (game.half === 'top') === (bid.side === 'home');
  const marks = [
    bid.perfect && bid.status !== 'broken-up' ? `<span class="badge">${bid.status === 'official' ? 'Perfect game' : 'Perfect game alive'}</span>` : '',
    bid.pitchers.length > 1 ? '<span class="badge combined">Combined</span>' : '',
  ].join('');
  const score = `${esc(game.away.abbreviation)} ${game.away.runs}, ${esc(game.home.abbreviation)} ${game.home.runs}`;
  const bar = `<div class="bar" role="progressbar" aria-label="Outs recorded without a hit" aria-valuemin="0" aria-valuemax="${scheduledOuts}" aria-valuenow="${bid.outs}" aria-valuetext="${bid.outs} of ${scheduledOuts} outs"><span></span></div>`;
  let headline;
  let status;
  if (bid.status === 'official') {
    headline = `<p class="celebrate">${bid.perfect ? 'Perfect game!' : 'No-hitter!'}</p>`;
    status = `<div class="result">${esc(pitching.name)} ${pitching.runs}, ${esc(opponent.name)} ${opponent.runs} · ${esc(situation(game))}</div>`;
  } else if (bid.status === 'broken-up') {
    headline = '<p class="broken">Broken up</p>';
    status = `<div class="progress">Hitless through ${esc(bid.hitless_text)}</div>
      <p class="how">${esc(bid.broken_up_by?.text || 'A hit ended the bid')}.</p>
      <div class="muted">${score} · ${esc(situation(game))}</div>`;
  } else {
    headline = '';
    status = `<div class="progress">Hitless through ${esc(bid.hitless_text)}</div>${bar}
      <div class="togo"><strong>${toGo} out${toGo === 1 ? '' : 's'} to go</strong>${fielding && game.status === 'live' && game.outs < 3 ? ` ${outsDots(game.outs)}` : ''}</div>
      <div class="muted">${score} · ${esc(situation(game))}</div>`;
  }
  return `${headline}
    <h3 class="pitcher">${esc(bid.pitchers.join(', '))}${marks}</h3>
    <div class="muted">${esc(pitching.name)} vs ${esc(opponent.name)}</div>
    ${status}
    ${bid.lines.length ? `<div class="line">${esc(pitchingLine(bid))}</div>` : ''}
    ${bid.pitchers.length > 1 && bid.status === 'alive' ? `<div class="muted">Now pitching: ${esc(bid.current_pitcher)}</div>` : ''}
    <div class="watch">${whereToWatch(game)}</div>
    <a class="game-link" href="#game/${encodeURIComponent(game.id)}">Game page<span class="visually-hidden">: ${esc(game.away.name)} at ${esc(game.home.name)}</span></a>`;
}

function renderAttempts() {
  const list = attempts();
  const empty = $('#no-attempts');
  const minimum = state.config?.attempt_outs ?? 12;
  empty.hidden = list.length > 0 && !state.loadError;
  if (state.loadError) empty.textContent = `The service cannot be reached (${state.loadError}); trying again…`;
  else if (!state.loaded) empty.textContent = 'Loading the games…';
  else empty.textContent = `No pitcher is hitless through ${Math.floor(minimum / 3)} innings right now.`;
  const container = $('#attempts');
  const seen = new Set();
  for (const entry of list) {
    const { game, bid } = entry;
    const key = `${game.id}-${bid.side}`;
    seen.add(key);
    let card = container.querySelector(`[data-key="${key}"]`);
    if (!card) {
      card = document.createElement('article');
      card.dataset.key = key;
      card.dataset.history = '';
      container.appendChild(card);
    }
    card.className = `card attempt ${bid.status}`;
    card.dataset.status = bid.status;
    card.dataset.outs = bid.outs;
    if (!card.dataset.history.split(',').includes(String(bid.outs))) {
      card.dataset.history = card.dataset.history ? `${card.dataset.history},${bid.outs}` : String(bid.outs);
    }
    card.innerHTML = attemptCard(entry);
    // Through the CSSOM: the Content-Security-Policy refuses inline style attributes.
    const fill = card.querySelector('.bar span');
    if (fill) fill.style.width = `${Math.min(100, (bid.outs / ((game.scheduled_innings || 9) * 3)) * 100)}%`;
  }
  container.querySelectorAll('.attempt').forEach((card) => { if (!seen.has(card.dataset.key)) card.remove(); });
  // Cards in order: alive bids first, most outs first (moved only when the order changed).
  const order = list.map(({ game, bid }) => `${game.id}-${bid.side}`);
  if ([...container.children].map((card) => card.dataset.key).join() !== order.join()) {
    order.forEach((key) => container.appendChild(container.querySelector(`[data-key="${key}"]`)));
  }
}

// Recent moments with their time and a link to the game. A moment the game on the board has not
// reached yet (a stored moment of an earlier run of a replay, or of a game followed again) is held
// back: it would spoil the card above it.
function reached(moment) {
  const game = state.games.get(moment.game_id);
  if (!game || game.status === 'final') return true;
  if (moment.kind === 'completed' || moment.kind === 'ended-not-official') return false;
  return moment.inning <= game.inning;
}

function renderMoments() {
  const shown = state.moments.filter(reached).slice(0, 20);
  $('#no-moments').hidden = shown.length > 0 || !state.loaded;
  $('#moments').innerHTML = shown.map((m) => {
    const time = new Date(m.occurred_at).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
    return `<li data-id="${esc(m.id)}"><time datetime="${esc(m.occurred_at)}">${esc(time)}</time> <a href="#game/${encodeURIComponent(m.game_id)}"><strong>${esc(m.title)}</strong></a> — ${esc(m.body)}</li>`;
  }).join('');
}

// Scores: a card per game, favourite teams first.
const clubName = (code) => (state.config?.teams || []).find((t) => t.code === code)?.name || code;
const clubAbbreviation = (code) => (state.config?.teams || []).find((t) => t.code === code)?.abbreviation || code;

function favouriteRank(game) {
  const ranks = [game.away.franchise, game.home.franchise].map((code) => favourites.indexOf(code)).filter((i) => i >= 0);
  return ranks.length ? Math.min(...ranks) : Infinity;
}

function noHitterInProgress(game) {
  const minimum = state.config?.attempt_outs ?? 12;
  return game.bids.find((bid) => bid.hitless && ((game.status === 'live' && bid.status === 'alive' && bid.outs >= minimum) || bid.status === 'official'));
}

function diamond(bases) {
  const [first, second, third] = bases || [false, false, false];
  const label = [first && 'first', second && 'second', third && 'third'].filter(Boolean);
  return `<svg class="diamond" viewBox="0 0 40 30" role="img" aria-label="${label.length ? 'runners on ' + label.join(', ') : 'bases empty'}">
    <rect class="${second ? 'on' : ''}" x="15" y="2" width="10" height="10" transform="rotate(45 20 7)"/>
    <rect class="${third ? 'on' : ''}" x="4" y="13" width="10" height="10" transform="rotate(45 9 18)"/>
    <rect class="${first ? 'on' : ''}" x="26" y="13" width="10" height="10" transform="rotate(45 31 18)"/></svg>`;
}

function outsDots(outs) {
  return `<span class="outs" role="img" aria-label="${outs} out${outs === 1 ? '' : 's'}">${[0, 1, 2].map((i) => `<span class="dot${i < outs ? ' on' : ''}"></span>`).join('')}</span>`;
}

function pitcherSummary(line) {
  if (!line) return '';
  return ` (${line.innings_pitched} IP, ${line.hits} H, ${line.strikeouts} K${line.pitches != null ? `, ${line.pitches} P` : ''})`;
}

function linescoreTable(game) {
  const innings = Math.max(game.away.linescore.length, game.home.linescore.length, game.scheduled_innings || 9);
  const cells = (team) => Array.from({ length: innings }, (_, i) => `<td>${esc(team.linescore[i] ?? '')}</td>`).join('');
  return `<table class="linescore"><caption class="visually-hidden">Runs by inning</caption>
    <thead><tr><th scope="col">Team</th>${Array.from({ length: innings }, (_, i) => `<th scope="col">${i + 1}</th>`).join('')}<th scope="col">R</th><th scope="col">H</th><th scope="col">E</th></tr></thead>
    <tbody>${[game.away, game.home].map((team) => `<tr><th scope="row">${esc(team.abbreviation)}</th>${cells(team)}<td><strong>${team.runs}</strong></td><td>${team.hits}</td><td>${team.errors}</td></tr>`).join('')}</tbody></table>`;
}

function gameCard(game) {
  const bid = noHitterInProgress(game);
  const marks = [
    game.game_number ? `<span class="mark">Game ${game.game_number}</span>` : '',
    bid ? `<span class="mark nohit">${bid.status === 'official' ? 'No-hitter' : 'No-hitter in progress'} · ${esc(bid.team)}</span>` : '',
  ].join('');
  const rows = [game.away, game.home].map((team) => `
      <tr class="${favourites.includes(team.franchise) ? 'favourite' : ''}"><th scope="row" title="${esc(team.name)}">${esc(team.abbreviation)}</th>
        <td class="runs">${game.status === 'scheduled' ? '' : team.runs}</td><td>${game.status === 'scheduled' ? '' : team.hits}</td><td>${game.status === 'scheduled' ? '' : team.errors}</td></tr>`).join('');
  let detail = '';
  if (game.status === 'live' && game.matchup) {
    const count = game.matchup.balls != null ? `<span class="count" aria-label="count ${game.matchup.balls} balls, ${game.matchup.strikes} strikes">${game.matchup.balls}-${game.matchup.strikes}</span>` : '';
    detail = `<div class="situation">${diamond(game.bases)}${outsDots(game.outs)}${count}</div>
      <div class="people"><abbr title="pitching">P</abbr>: ${esc(game.matchup.pitcher)}${esc(pitcherSummary(game.matchup.pitcher_line))}<br><abbr title="at bat">AB</abbr>: ${esc(game.matchup.batter)}</div>`;
  } else if (game.status === 'scheduled' && game.starters) {
    detail = `<div class="people">${game.starters.confirmed ? 'Starting' : 'Probable'}: ${esc(game.starters.away || 'TBD')} vs ${esc(game.starters.home || 'TBD')}</div>`;
  } else if (game.status === 'final' && game.decisions) {
    const d = game.decisions;
    detail = `<div class="people">${d.winning ? `W: ${esc(d.winning)}` : ''}${d.losing ? ` · L: ${esc(d.losing)}` : ''}${d.save ? ` · S: ${esc(d.save)}` : ''}</div>`;
  }
  return `<article class="game${bid ? ' nohit' : ''}" data-game="${esc(game.id)}" aria-label="${esc(game.away.name)} at ${esc(game.home.name)}">
    <div class="game-head"><span class="status">${esc(situation(game))}</span>${marks}</div>
    <table class="teams"><thead><tr><th scope="col"><span class="visually-hidden">Team</span></th><th scope="col">R</th><th scope="col">H</th><th scope="col">E</th></tr></thead><tbody>${rows}</tbody></table>
    ${detail}
    <details class="line"><summary>Line score</summary>${linescoreTable(game)}</details>
    <a class="game-link" href="#game/${encodeURIComponent(game.id)}">Game page<span class="visually-hidden">: ${esc(game.away.name)} at ${esc(game.home.name)}</span></a>
  </article>`;
}

function renderScores() {
  const games = [...state.games.values()].sort((a, b) =>
    (favouriteRank(a) - favouriteRank(b)) || a.start_time.localeCompare(b.start_time) || a.id.localeCompare(b.id));
  // A line score left open stays open through updates.
  const open = new Set([...document.querySelectorAll('#games details[open]')].map((d) => d.closest('.game').dataset.game));
  $('#games').innerHTML = games.map(gameCard).join('');
  for (const id of open) $(`#games [data-game="${CSS.escape(id)}"] details`)?.setAttribute('open', '');
  $('#no-games').hidden = games.length > 0;
  $('#no-games').textContent = state.loadError ? `The service cannot be reached (${state.loadError}); trying again…`
    : state.loaded ? 'No games on the board yet.' : 'Loading the games…';
  $('#board-date').textContent = games.length ? games[0].date : '';
  if (state.gamePage && state.games.has(state.gamePage)) scheduleGamePage();
}

function renderFavourites() {
  $('#favourite-count').textContent = favourites.length;
  $('#favourite-list').innerHTML = favourites.map((code, index) => `<li>
      <span>${esc(clubName(code))} <span class="muted">${esc(clubAbbreviation(code))}</span></span>
      <button type="button" data-move="${index}" data-by="-1" aria-label="move ${esc(clubName(code))} up" ${index === 0 ? 'disabled' : ''}>↑</button>
      <button type="button" data-move="${index}" data-by="1" aria-label="move ${esc(clubName(code))} down" ${index === favourites.length - 1 ? 'disabled' : ''}>↓</button>
      <button type="button" data-unfavourite="${esc(code)}" aria-label="remove ${esc(clubName(code))}">×</button></li>`).join('');
  $('#team-picker').innerHTML = '<option value="">Choose a team…</option>' + (state.config?.teams || [])
    .filter((t) => !favourites.includes(t.code)).map((t) => `<option value="${esc(t.code)}">${esc(t.name)} (${esc(t.abbreviation)})</option>`).join('');
  renderChips();
}

function setFavourites(list) {
  favourites = list;
  localStorage.setItem('nohit-favourites', JSON.stringify(favourites));
  renderFavourites();
  renderScores();
}

// The game page: every pitcher's line and the play-by-play, kept up to date from the stream.
let gamePageTimer = null;
function scheduleGamePage() {
  if (gamePageTimer) return;
  gamePageTimer = setTimeout(() => { gamePageTimer = null; loadGamePage(); }, 1000);
}

async function loadGamePage() {
  const id = state.gamePage;
  const page = $('#game-page');
  try {
    const detail = await api(`/api/games/${encodeURIComponent(id)}`);
    if (state.gamePage !== id) return;
    const game = detail.game;
    const pitchers = (side, team) => `<table class="pitchers"><caption>${esc(team.name)} pitching</caption>
      <thead><tr><th scope="col">Pitcher</th><th scope="col">IP</th><th scope="col">H</th><th scope="col">R</th><th scope="col">ER</th><th scope="col">BB</th><th scope="col">K</th><th scope="col">HR</th><th scope="col">P</th></tr></thead>
      <tbody>${side.map((p) => `<tr><th scope="row">${esc(p.name)}</th><td>${p.innings_pitched}</td><td>${p.hits}</td><td>${p.runs}</td><td>${p.earned_runs}</td><td>${p.walks}</td><td>${p.strikeouts}</td><td>${p.home_runs}</td><td>${p.pitches ?? '–'}</td></tr>`).join('')}</tbody></table>`;
    const halves = [];
    for (const play of detail.plays) {
      const key = `${play.half}-${play.inning}`;
      if (!halves.length || halves[halves.length - 1].key !== key) halves.push({ key, play, plays: [] });
      halves[halves.length - 1].plays.push(play);
    }
    page.innerHTML = `<h2>${esc(game.away.name)} ${game.status === 'scheduled' ? '' : game.away.runs} at ${esc(game.home.name)} ${game.status === 'scheduled' ? '' : game.home.runs}</h2>
      <p class="status-line">${esc(situation(game))}${game.game_number ? ` · Game ${game.game_number}` : ''}</p>
      ${gameCard(game).replace('<details class="line">', '<details class="line" open>')}
      <div class="pitching">${pitchers(detail.pitchers.away, game.away)}${pitchers(detail.pitchers.home, game.home)}</div>
      <h3>Play-by-play</h3>
      ${halves.length ? halves.reverse().map((half) => `<section class="half"><h4>${esc(half.play.heading)}</h4>
        <ol reversed>${half.plays.reverse().map((p) => `<li class="${p.scoring ? 'scoring' : ''}">${esc(p.text)} <span class="muted">${esc(p.outs_text)}${p.scoring ? ` · ${esc(game.away.abbreviation)} ${p.away_score}, ${esc(game.home.abbreviation)} ${p.home_score}` : ''}</span></li>`).join('')}</ol></section>`).join('') : '<p class="muted">No plays yet.</p>'}`;
  } catch (error) {
    page.innerHTML = `<p role="alert">Could not load the game: ${esc(error.message)}</p>`;
  }
}

// Games and moments from the API; after a reconnect, loaded again (what the stream said while
// the page was cut off is in them).
async function loadData() {
  try {
    await loadConfig();
    const response = await fetch('/api/games');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const games = await response.json();
    // Where the stream stood when these games were read: the stream opens after it.
    const position = response.headers.get('X-Stream-Position');
    if (state.position == null && position != null) state.position = Number(position);
    state.games = new Map(games.map((game) => [game.id, game]));
    state.moments = await api('/api/moments?limit=20');
    if (!state.dealsLoaded) loadDealSubscriptions();
    state.loaded = true;
    state.loadError = null;
    state.reloads = (state.reloads || 0) + 1;
    document.body.dataset.reloads = state.reloads;
  } catch (error) {
    state.loadError = error.message;
    setTimeout(loadData, 3000);
  }
  renderAttempts(); renderScores(); renderMoments();
}

function connect() {
  // From where the loaded games stood, so nothing between the load and the stream is lost; a
  // reconnect resumes by Last-Event-ID (and loads the games again).
  const source = new EventSource(state.position != null ? `/api/stream?after=${state.position}` : '/api/stream');
  const banner = $('#connection');
  let cutOff = false;
  source.onopen = () => {
    banner.textContent = 'live';
    banner.classList.remove('down');
    if (cutOff) { cutOff = false; loadData(); }
  };
  source.onerror = () => {
    cutOff = true;
    banner.textContent = navigator.onLine === false ? 'offline: waiting for the network…' : 'cut off: reconnecting…';
    banner.classList.add('down');
  };
  source.addEventListener('game', (event) => {
    const game = JSON.parse(event.data);
    state.games.set(game.id, game);
    state.streamUpdates += 1;
    document.body.dataset.streamUpdates = state.streamUpdates;
    renderAttempts();
    renderScores();
    renderMoments();
  });
  source.addEventListener('moment', (event) => {
    const moment = JSON.parse(event.data);
    if (state.moments.some((known) => known.id === moment.id)) return;
    state.moments.unshift(moment);
    renderMoments();
    // Said once by screen readers (the list itself is not a live region: it is redrawn whole).
    if (reached(moment)) $('#announcer').textContent = `${moment.title}. ${moment.body}`;
  });
}

// Hall of Fame, in fan language: the server's words (clubs as they were that season, the hit
// that ended the bid); dates like "Aug 25".
const shortDate = (date) => { const [, m, d] = date.split('-').map(Number); return `${['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][m - 1]} ${d}`; };

async function loadHallOfFame() {
  const season = $('#season').value;
  if (!season) return;
  const body = $('#hall tbody');
  body.innerHTML = '<tr><td colspan="6">Loading…</td></tr>';
  try {
    const entries = await api(`/api/hall-of-fame/${season}?limit=50`);
    body.innerHTML = entries.map((entry) => {
      return `<tr>
      <td>${entry.rank}</td><td>${esc(shortDate(entry.date))}</td>
      <td>${esc(entry.pitching_team.name)} <span class="muted">vs ${esc(entry.batting_team.name)}</span></td>
      <td>${esc(entry.pitchers.join(', '))}</td><td>${esc(entry.hitless)}</td><td>${esc(entry.ending)}</td></tr>`;
    }).join('');
  } catch (error) {
    body.innerHTML = `<tr><td colspan="6">The Hall of Fame could not be loaded: ${esc(error.message)}</td></tr>`;
  }
}

// Settings
const device = () => JSON.parse(localStorage.getItem('nohit-device') || 'null');
let favourites = JSON.parse(localStorage.getItem('nohit-favourites') || '[]');

function renderChips() {
  $('#chips').innerHTML = favourites.map((team) =>
    `<li class="chip">${esc(clubName(team))}<button type="button" data-remove="${esc(team)}" aria-label="Remove ${esc(clubName(team))}">×</button></li>`).join('')
    || '<li class="muted">None yet.</li>';
  $('#settings-team').innerHTML = '<option value="">Choose a team…</option>' + (state.config?.teams || [])
    .filter((t) => !favourites.includes(t.code)).map((t) => `<option value="${esc(t.code)}">${esc(t.name)}</option>`).join('');
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
    deals: [...document.querySelectorAll('#deal-subscriptions input:checked')].map((box) => box.value),
  };
}

function showPreferences(p) {
  setFavourites(p.favourite_teams || []);
  $('#threshold').value = p.threshold_innings;
  $('#favourite-threshold').value = p.favourite_threshold_innings;
  $('#frequency').value = p.frequency;
  $('#quiet').checked = !!p.quiet_hours;
  if (p.quiet_hours) { $('#quiet-start').value = p.quiet_hours.start; $('#quiet-end').value = p.quiet_hours.end; }
  $('#spoiler').value = p.spoiler_delay_seconds;
  $('#jinx').checked = p.jinx_safe;
  document.querySelectorAll('#deal-subscriptions input').forEach((box) => { box.checked = (p.deals || []).includes(box.value); });
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

// Settings work without push: kept in this browser, and sent with the subscription when
// notifications are turned on; with a device, saved on the server too.
function showPushState() {
  $('#push-state').textContent = device()
    ? 'Notifications are on in this browser: settings are saved on the server with them.'
    : 'Notifications are off in this browser: settings are kept here until you turn them on.';
}

async function savePreferences(event) {
  event.preventDefault();
  const status = $('#settings-status');
  const mine = device();
  localStorage.setItem('nohit-preferences', JSON.stringify(preferencesFromForm()));
  if (!mine) { status.textContent = 'Saved in this browser.'; return; }
  try {
    const saved = await api(`/api/devices/${mine.id}/preferences`, { method: 'PUT', headers: { authorization: `Bearer ${mine.secret}` }, body: JSON.stringify(preferencesFromForm()) });
    showPreferences(saved);
    status.textContent = 'Saved on the server and in this browser.';
  } catch (error) {
    status.textContent = `Kept in this browser, not saved on the server: ${error.message}`;
  }
}

// The server's configuration: clubs, seasons, where the games come from. Asked again with the
// games when the first try found the service down.
async function loadConfig() {
  if (state.config?.teams) return;
  try { state.config = await api('/api/config'); } catch { state.config = {}; return; }
  // The data notice for where the games come from; the Hall of Fame and past seasons are Retrosheet's.
  const statsAPI = state.config.source === 'statsapi';
  $('#notice-mlb').hidden = !statsAPI;
  $('#notice-retrosheet').hidden = statsAPI && !(state.config.seasons || []).length;
  $('#season').innerHTML = (state.config.seasons || []).map((s) => `<option>${esc(s)}</option>`).join('');
  renderFavourites();
  if ((location.hash || '#live') === '#hall-of-fame') loadHallOfFame();
}

async function start() {
  // Opened from a Web Push alert (the service worker adds ?via=push): counted, then the address tidied.
  const opened = new URLSearchParams(location.search);
  if (opened.get('via') === 'push') {
    metrics.record('pushes', { channel: 'web-push', kind: opened.get('kind') || 'unknown' });
    history.replaceState(null, '', location.pathname + location.hash);
  }
  showTab();
  $('#season').addEventListener('change', loadHallOfFame);
  const local = JSON.parse(localStorage.getItem('nohit-preferences') || 'null');
  if (local) showPreferences(local);
  showPushState();
  await loadData();
  connect();
  const mine = device();
  if (mine) api(`/api/devices/${mine.id}/preferences`, { headers: { authorization: `Bearer ${mine.secret}` } }).then(showPreferences).catch(() => {});
}
// Deals: is it on today, and a season's deal days as charts (SVG drawn here).
async function loadDeals() {
  const status = $('#deals-status');
  try {
    const today = await api('/api/deals/today');
    state.deals = today.deals;
    const shown = today.deals.filter((d) => d.in_force || d.on);
    const resting = today.deals.filter((d) => !d.in_force && !d.on).map((d) => d.sponsor);
    status.textContent = (shown.length ? '' : 'No deal is in force today. ')
      + (resting.length ? `Not in force today (past seasons' promotions): ${resting.join(', ')}.` : '');
    $('#deals-today').innerHTML = shown.map((d) => `
      <article class="card deal ${d.on ? 'on' : 'off'}" data-rule="${esc(d.rule)}">
        <div class="answer" aria-label="${d.on ? 'Yes' : 'No'}">${d.on ? 'YES' : 'NO'}</div>
        <h3>${esc(d.sponsor)}</h3>
        <div>${esc(d.reward)}${d.code ? ` · code <strong>${esc(d.code)}</strong>` : ''}</div>
        <div class="muted">When ${esc(d.condition)} · ${esc(d.day)} (${esc(d.time_zone)})</div>
        ${d.because.map((b) => `<p>${esc(b.why)} <span class="muted">Redeem ${esc(b.window)}.</span></p>`).join('')}
        ${d.note ? `<details><summary>What is not confirmed</summary><p class="muted">${esc(d.note)}</p></details>` : ''}
      </article>`).join('');
    const rules = $('#deal-rule');
    if (rules.options.length === 1) {
      rules.innerHTML += today.deals.map((d) => `<option value="${esc(d.rule)}">${esc(d.sponsor)} (${esc(d.team?.name || 'any team')})</option>`).join('');
      const seasons = new Set((state.config?.seasons || []).map(Number));
      seasons.add(Number((today.deals[0]?.day || '').slice(0, 4)) || new Date().getFullYear());
      $('#deal-season').innerHTML = [...seasons].sort((a, b) => b - a).map((y) => `<option>${y}</option>`).join('');
      rules.addEventListener('change', loadDealHistory);
      $('#deal-season').addEventListener('change', loadDealHistory);
    }
    await loadDealHistory();
  } catch (error) {
    status.textContent = `Deals could not be loaded: ${error.message}`;
  }
}

async function loadDealHistory() {
  const season = $('#deal-season').value;
  const rule = $('#deal-rule').value;
  const path = rule ? `/api/deals/${encodeURIComponent(rule)}/history?season=${season}` : `/api/deals/history?season=${season}`;
  try {
    const history = await api(path);
    $('#deal-total').textContent = `${history.total_days} deal day${history.total_days === 1 ? '' : 's'} in ${history.season}.`;
    $('#chart-month').innerHTML = barChart(history.by_month.map((m) => ({ label: monthName(m.month), value: m.days })), 'Deal days by month');
    $('#chart-franchise').innerHTML = barChart(history.by_franchise.map((f) => ({ label: f.name, value: f.days })), 'Deal days by franchise');
  } catch (error) {
    $('#deal-total').textContent = `The history could not be loaded: ${error.message}`;
  }
}

const monthName = (month) => ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][Number(month.slice(5, 7)) - 1] || month;


// The page's own metrics (docs/analytics.md): its views, taps and opened alerts, recorded as Keen
// events into this server's web project (/api/config names it and its public write key), queued
// in localStorage and sent in batches as Keen's clients send them: results by index, a success or
// an invalid event leaves the queue, others are tried again up to three times; sendBeacon when
// the page is hidden. No personal data: the device is a random id made here.
const metrics = (() => {
  const QUEUE = 'nohit-metrics-queue';
  const newID = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`);
  const stored = (storage, key) => { let v = storage.getItem(key); if (!v) { v = newID(); storage.setItem(key, v); } return v; };
  const load = () => { try { return JSON.parse(localStorage.getItem(QUEUE) || '[]'); } catch { return []; } };
  const save = (queue) => { try { localStorage.setItem(QUEUE, JSON.stringify(queue.slice(-500))); } catch { /* full: dropped */ } };
  let timer = null;
  let sending = false;
  function record(collection, properties) {
    const device = stored(localStorage, 'nohit-device-id');
    const firstVisit = !localStorage.getItem('nohit-visited');
    localStorage.setItem('nohit-visited', '1');
    const event = {
      ...properties,
      keen: { timestamp: new Date().toISOString(), uniqueness_token: newID() },
      session_id: stored(sessionStorage, 'nohit-session-id'),
      user: { id_hash: device },
      standard_properties: {
        app: 'web', language: navigator.language, screen_scale: window.devicePixelRatio || 1,
        screen_width: window.screen?.width, first_visit: firstVisit,
        notifications: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
        installed: window.matchMedia?.('(display-mode: standalone)').matches || false,
      },
    };
    const queue = load();
    queue.push({ collection, event, attempts: 0 });
    save(queue);
    clearTimeout(timer);
    timer = setTimeout(flush, 5000);
  }
  const endpoint = () => state.config?.analytics && `/3.0/projects/${encodeURIComponent(state.config.analytics.project_id)}/events`;
  const batch = (entries) => {
    const body = {};
    for (const entry of entries) (body[entry.collection] ||= []).push(entry.event);
    return body;
  };
  async function flush() {
    const url = endpoint();
    if (!url || sending) return;
    const entries = load().slice(0, 100);
    if (!entries.length) return;
    sending = true;
    const done = new Set();
    const failed = new Set();
    try {
      const response = await fetch(url, { method: 'POST', headers: { authorization: state.config.analytics.write_key, 'content-type': 'application/json' }, body: JSON.stringify(batch(entries)) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const results = await response.json();
      const seen = {};
      for (const entry of entries) {
        const index = seen[entry.collection] = (seen[entry.collection] ?? -1) + 1;
        const result = (results[entry.collection] || [])[index];
        const invalid = ['InvalidCollectionNameError', 'InvalidPropertyNameError', 'InvalidPropertyValueError'].includes(result?.error?.name);
        (result?.success || invalid ? done : failed).add(entry.event.keen.uniqueness_token);
      }
    } catch {
      for (const entry of entries) failed.add(entry.event.keen.uniqueness_token);
    } finally {
      sending = false;
    }
    const queue = load().filter((entry) => !done.has(entry.event.keen.uniqueness_token)).map((entry) =>
      failed.has(entry.event.keen.uniqueness_token) ? { ...entry, attempts: entry.attempts + 1 } : entry).filter((entry) => entry.attempts < 3);
    save(queue);
    if (done.size && queue.length) flush();
  }
  // A page being hidden may never run again: what is queued goes by beacon (text/plain, the key
  // in the URL; the uniqueness tokens keep a later resend from counting twice).
  document.addEventListener('visibilitychange', () => {
    const url = endpoint();
    if (document.visibilityState !== 'hidden' || !url || !navigator.sendBeacon) return;
    const entries = load().slice(0, 100);
    if (entries.length) navigator.sendBeacon(`${url}?api_key=${encodeURIComponent(state.config.analytics.write_key)}`, JSON.stringify(batch(entries)));
  });
  return { record, flush };
})();
// Taps on buttons and links: what was tapped and on which tab.
document.addEventListener('click', (event) => {
  const target = event.target.closest('button, a, summary');
  if (!target) return;
  const tab = (location.hash || '#live').slice(1).split('/')[0];
  if (tab === 'metrics') return;  // the operator's own page is not the app's use
  const label = (target.dataset.tab || target.id || target.getAttribute('aria-label') || target.textContent || '').trim().slice(0, 60);
  metrics.record('touches', { target: label, element: target.tagName.toLowerCase(), tab });
}, true);

// The operator's Metrics page (#metrics, with the admin token): how the app is used, from the
// events above and the apps' (NoHitterKit): /api/admin/metrics.
function showMetricsForm() {
  const token = sessionStorage.getItem('nohit-admin-token');
  if (token && !state.metricsShown) loadMetrics();
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
    state.metricsShown = true;
    const groups = (rows, key) => rows.map((row) => ({ label: String(row[key] ?? 'none'), value: row.result })).sort((a, b) => b.value - a.value);
    const daily = usage.daily_active_devices.map((row) => ({ label: row.timeframe.start.slice(5, 10), value: row.value }));
    $('#metrics-active').innerHTML = barChart(daily, 'Devices active each day', 'No visits yet.');
    $('#metrics-pushes').innerHTML = barChart(groups(usage.alerts_opened_by_channel, 'channel'), 'Alerts opened per channel', 'No alert opened yet.');
    $('#metrics-tabs').innerHTML = barChart(groups(usage.views_by_tab, 'tab'), 'Views per tab', 'No views yet.');
    $('#metrics-touches').innerHTML = barChart(groups(usage.touches_by_target, 'target').slice(0, 12), 'Most tapped', 'No taps yet.');
    status.textContent = `Project ${usage.project}, the last ${usage.days} days (${usage.timezone}).`;
  } catch (error) {
    status.textContent = `Metrics could not be loaded: ${error.message}`;
    if (/401|403|token/i.test(error.message)) sessionStorage.removeItem('nohit-admin-token');
  }
}

// A horizontal bar chart: one row per entry, scaled to the largest; it fits any width.
function barChart(entries, title, empty = 'No deal days.') {
  if (!entries.length) return `<p class="muted">${esc(empty)}</p>`;
  const max = Math.max(...entries.map((e) => e.value), 1);
  const row = 28;
  const height = entries.length * row + 8;
  const bars = entries.map((e, i) => {
    const y = i * row + 4;
    const width = (e.value / max) * 50;
    return `<text x="0" y="${y + 17}" class="label">${esc(e.label)}</text>` +
      `<rect x="38%" y="${y + 4}" width="${width}%" height="${row - 10}" rx="3" class="bar"></rect>` +
      `<text x="${38 + width + 1}%" y="${y + 17}" class="value">${e.value}</text>`;
  }).join('');
  return `<svg role="img" aria-label="${esc(title)}: ${esc(entries.map((e) => `${e.label} ${e.value}`).join(', '))}" width="100%" height="${height}">${bars}</svg>`;
}

async function loadDealSubscriptions() {
  const box = $('#deal-subscriptions');
  try {
    const today = await api('/api/deals/today');
    const chosen = JSON.parse(localStorage.getItem('nohit-preferences') || 'null')?.deals || [];
    box.innerHTML = '<legend>Tell me when a deal is on</legend>' + today.deals.filter((d) => d.in_force).map((d) =>
      `<label class="check"><input type="checkbox" value="${esc(d.rule)}"${chosen.includes(d.rule) ? ' checked' : ''}> ${esc(d.sponsor)}: ${esc(d.reward)} <span class="muted">(when ${esc(d.condition)})</span></label>`).join('')
      + (today.deals.some((d) => d.in_force) ? '' : '<p class="muted">No deal is in force today.</p>');
    state.dealsLoaded = true;
  } catch (error) {
    box.innerHTML = `<legend>Tell me when a deal is on</legend><p class="muted">Deals could not be loaded: ${esc(error.message)}</p>`;
  }
}

// The controls answer from the first moment, before anything is loaded (Save never submits the
// form and reloads the page).
function wire() {
  $('#chips').addEventListener('click', (event) => {
    const team = event.target.dataset.remove;
    if (!team) return;
    setFavourites(favourites.filter((t) => t !== team));
    ($('#chips button') || $('#settings-team')).focus();
  });
  for (const picker of ['#team-picker', '#settings-team']) {
    $(picker).addEventListener('change', (event) => {
      const code = event.target.value;
      if (code && !favourites.includes(code)) setFavourites([...favourites, code]);
      $(picker).focus();
    });
  }
  $('#favourite-list').addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.dataset.unfavourite) { setFavourites(favourites.filter((t) => t !== button.dataset.unfavourite)); return; }
    const index = Number(button.dataset.move);
    const to = index + Number(button.dataset.by);
    if (to < 0 || to >= favourites.length) return;
    const list = [...favourites];
    [list[index], list[to]] = [list[to], list[index]];
    setFavourites(list);
    $(`#favourite-list button[data-move="${to}"][data-by="${button.dataset.by}"]`)?.focus();
  });
  $('#notify').addEventListener('click', enableNotifications);
  $('#metrics-form').addEventListener('submit', loadMetrics);
  $('#preferences').addEventListener('submit', savePreferences);
}

wire();
loadDealSubscriptions().then(start);
