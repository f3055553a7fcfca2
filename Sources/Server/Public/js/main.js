// No-Hitter Alerts web UI: native ES modules, no build step. Live state comes from /api/games and
// then the Server-Sent Events stream at /api/stream. This module wires the views to the tabs and
// the stream to the state; each view draws itself (only while visible, keyed by id).
import * as analytics from './analytics.js';
import { loadConfig, loadGamesAndMoments } from './api.js';
import { $ } from './dom.js';
import { loadDeals, wireDeals } from './deals.js';
import { gameChanged, loadGamePage } from './game.js';
import { drawSeasons, loadHallOfFame, wireHallOfFame } from './hall.js';
import { announceReached, drawLive, momentArrived, observe } from './live.js';
import { showMetrics, wireMetrics } from './metrics.js';
import { drawFavourites, drawScores, wireScores } from './scores.js';
import { loadStandings } from './standings.js';
import { drawChips, loadDealSubscriptions, restorePreferences, restoreServerPreferences, showUsage, wireSettings } from './settings.js';
import { currentTab, onDelay, state } from './state.js';
import { connect } from './stream.js';
import { invalidate, registerView, showTab, wireTabs } from './tabs.js';

// The browser tests and a curious operator's console read these (metrics_page.py flushes the queue).
Object.assign(window, { state, metrics: { record: analytics.record, flush: analytics.flush } });

registerView('live', { draw: drawLive });
registerView('scores', { draw: drawScores });
registerView('game', { show: loadGamePage });
registerView('standings', { show: loadStandings });
registerView('hall-of-fame', { show: loadHallOfFame });
registerView('deals', { show: loadDeals });
registerView('metrics', { show: showMetrics });

let dealsOffered = false;

// After the configuration first arrives: the data notice for where the games come from (the Hall
// of Fame and past seasons are Retrosheet's), the seasons, and the clubs' names in the lists.
function configured() {
  const statsAPI = state.config.source === 'statsapi';
  $('#notice-mlb').hidden = !statsAPI;
  $('#notice-retrosheet').hidden = statsAPI && !(state.config.seasons || []).length;
  drawSeasons();
  drawFavourites();
  drawChips();
  showUsage();
  if (currentTab() === 'hall-of-fame') loadHallOfFame();
}

// Games and moments from the API; after a reconnect, loaded again (what the stream said while
// the page was cut off is in them).
// How far a game had got, to tell a replay that started its day again from one going on.
const progress = (game) => (game.status === 'scheduled' ? 0 : 1 + (game.inning || 1) * 10 + (game.half === 'bottom' ? 5 : 0))
  + (game.status === 'final' ? 1000 : 0);

async function loadData() {
  try {
    if (await loadConfig()) configured();
    const before = new Map([...state.games.values()].map((game) => [game.id, progress(game)]));
    await loadGamesAndMoments();
    // A replay back at the start of its day (the server began it again): said, not silently emptied.
    // Most of the games that had started are back before their first pitch (not one game
    // postponed, nor an instance a little behind); the notice goes once games are played again.
    const started = [...state.games.values()].filter((game) => (before.get(game.id) ?? 0) > 0);
    const reset = started.filter((game) => game.status === 'scheduled' && (before.get(game.id) ?? 0) > progress(game));
    // (A longer spoiler delay also takes the games back in time: that is not a restart.)
    const restarted = !reloadingForDelay && state.config?.source === 'replay' && started.length > 0
      && reset.length * 2 > started.length;
    if (!restarted && [...state.games.values()].some((game) => game.status !== 'scheduled')) {
      $('#replay-restarted').hidden = true;
    }
    if (restarted) {
      const notice = $('#replay-restarted');
      notice.textContent = `The replay started its day again at ${new Date().toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' })}: `
        + 'the games are back at their first pitch, and the cards and moments come again as they are played.';
      notice.hidden = false;
      document.body.dataset.replayRestarted = '1';
    }
    for (const game of state.games.values()) observe(game);
    if (!dealsOffered) loadDealSubscriptions().then((drawn) => { dealsOffered ||= drawn; });
    state.loaded = true;
    state.loadError = null;
    state.reloads += 1;
    document.body.dataset.reloads = state.reloads;
  } catch (error) {
    state.loadError = error.message;
    setTimeout(loadData, 3000);
  }
  invalidate('live', 'scores');
  if (state.gamePage) gameChanged(state.gamePage);
}

function gameArrived(game) {
  state.games.set(game.id, game);
  state.streamUpdates += 1;
  document.body.dataset.streamUpdates = state.streamUpdates;
  observe(game);
  invalidate('live', 'scores');
  gameChanged(game.id);
  announceReached();
}

function momentFromStream(moment) {
  if (state.moments.some((known) => known.id === moment.id)) return;
  state.moments.unshift(moment);
  invalidate('live');
  momentArrived(moment);
}

// The page says when it is held back, and by how much: nothing on it is newer than that.
function showDelay(asked) {
  const notice = $('#delay-notice');
  notice.hidden = !state.delay;
  const rounded = asked && asked !== state.delay ? ` (your ${asked} s, rounded up to a delay the server keeps)` : '';
  notice.textContent = state.delay
    ? `Spoiler delay: everything on this page is shown ${state.delay} seconds behind the game${rounded}. Settings change it.`
    : '';
  document.body.dataset.delay = state.delay;
}

let stream = null;
// Each change of the delay: only the latest one's load opens a stream.
let delayChanges = 0;
// Set while the games are loaded again for a new delay (not a replay begun again).
let reloadingForDelay = false;

// A new delay: the games, moments and stream again, as they stood that long ago. The stream of the
// old delay is closed first; a change made while the last one loads supersedes it.
onDelay((asked, changed) => {
  showDelay(asked);
  if (!changed || !stream) return;
  const change = ++delayChanges;
  stream.close();
  state.position = null;
  reloadingForDelay = true;
  loadData().then(() => {
    if (change !== delayChanges) return;
    reloadingForDelay = false;
    stream?.close();
    stream = connect({ onGame: gameArrived, onMoment: momentFromStream, onReconnect: loadData });
    if (currentTab() === 'hall-of-fame') loadHallOfFame();
    if (currentTab() === 'deals') loadDeals();
  });
});

async function start() {
  // Opened from a Web Push alert (the service worker adds ?via=push): counted, then the address tidied.
  const opened = new URLSearchParams(location.search);
  if (opened.get('via') === 'push') {
    analytics.record('pushes', { channel: 'web-push', kind: opened.get('kind') || 'unknown' });
    history.replaceState(null, '', location.pathname + location.hash);
  }
  showTab();
  restorePreferences();
  await loadData();
  stream = connect({ onGame: gameArrived, onMoment: momentFromStream, onReconnect: loadData });
  restoreServerPreferences();
}

// The controls answer from the first moment, before anything is loaded.
wireTabs();
analytics.wireAnalytics();
wireScores();
wireSettings();
wireHallOfFame();
wireDeals();
wireMetrics();
loadDealSubscriptions().then((drawn) => { dealsOffered = drawn; start(); });
