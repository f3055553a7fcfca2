// The Standings view (#standings, under the Scores tab): each division before the board's day's
// games, as the server counts them from the results it knows; and each club's record on the
// Scores cards (loaded once per board day).
import { api } from './api.js';
import { $, esc, patch, setText } from './dom.js';
import { shortDate } from './format.js';
import { state } from './state.js';
import { invalidate } from './tabs.js';

const loaded = new Map();  // day → a promise of the standings ('' for the server's own day)

function standings(day) {
  if (!loaded.has(day)) {
    const asked = api(`/api/standings${day ? `?date=${encodeURIComponent(day)}` : ''}`);
    asked.catch(() => loaded.delete(day));  // asked again next time
    loaded.set(day, asked);
  }
  return loaded.get(day);
}

/** The board's day (its games' date), or '' before the games are in. */
const boardDay = () => [...state.games.values()].map((g) => g.date).sort().pop() || '';

/** `17-12` for a club (by MLB's abbreviation) before the board's day, once known; else ''. */
export function record(abbreviation) {
  return state.records.get(abbreviation) || '';
}

/** Loads the records of the board's day for the Scores cards (drawn again when they arrive). */
export function loadRecords() {
  const day = boardDay();
  if (!day || state.recordsDay === day) return;
  state.recordsDay = day;
  // Asked once per board day: a day without standings (no results of its season) is not asked
  // again at every draw.
  standings(day).then((answer) => {
    state.records = new Map(answer.divisions.flatMap((d) => d.teams).map((t) => [t.club.abbreviation, `${t.wins}-${t.losses}`]));
    invalidate('scores');
    document.dispatchEvent(new Event('nohit-records'));
  }).catch(() => {});
}

export async function loadStandings() {
  const page = $('#standings-page');
  try {
    const answer = await standings(boardDay());
    setText($('#standings-date'), `before the games of ${shortDate(answer.date)}`);
    patch(page, answer.divisions.map((division) => `<div class="scroll-x" role="region" tabindex="0" aria-label="${esc(division.name)} standings" data-key="${esc(division.name)}">
      <table class="standings"><caption>${esc(division.name)}</caption>
      <thead><tr><th scope="col">Team</th><th scope="col">W</th><th scope="col">L</th><th scope="col">PCT</th><th scope="col">GB</th><th scope="col"><abbr title="streak">STRK</abbr></th><th scope="col"><abbr title="last ten games">L10</abbr></th><th scope="col">Home</th><th scope="col">Away</th></tr></thead>
      <tbody>${division.teams.map((t) => `<tr data-key="${esc(t.club.abbreviation)}"><th scope="row"><span class="wide">${esc(t.club.name)}</span><span class="narrow">${esc(t.club.abbreviation)}</span></th><td>${t.wins}</td><td>${t.losses}</td><td>${esc(t.percentage)}</td><td>${esc(t.games_behind)}</td><td>${esc(t.streak || '–')}</td><td>${esc(t.last_ten)}</td><td>${esc(t.home)}</td><td>${esc(t.away)}</td></tr>`).join('')}</tbody></table></div>`).join('')
      + `<p class="muted">From ${esc(answer.source)}.</p>`);
  } catch (error) {
    patch(page, `<p role="alert">The standings could not be loaded: ${esc(error.message)}</p>`);
  }
}
