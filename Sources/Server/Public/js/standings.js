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

// Each league's race for the postseason in the season's format: the division leaders (and 2020's
// second places), then the rest by record, a line under the last wild card, and each club's
// magic number (M#: its wins or the club below's losses that clinch) or elimination number (E#).
function race(answer) {
  const race = answer.wild_cards;
  if (!race) return '';
  const number = (t) => {
    if (t.clinch_number === 0) return 'Clinched';
    if (t.clinch_number != null) return `M# ${t.clinch_number}`;
    if (t.elimination_number === 0) return 'Out';
    return t.elimination_number != null ? `E# ${t.elimination_number}` : '';
  };
  const place = { 'division leader': 'Division', 'second place': '2nd', 'wild card': 'WC', out: '' };
  const row = (t, cut) => `<tr data-key="${esc(t.club.abbreviation)}"${cut ? ' class="cut"' : ''}><th scope="row"><span class="wide">${esc(t.club.name)}</span><span class="narrow">${esc(t.club.abbreviation)}</span></th><td>${t.wins}</td><td>${t.losses}</td><td>${esc(t.games_behind || '')}</td><td>${esc(place[t.place] ?? '')}</td><td>${esc(number(t))}</td></tr>`;
  return `<h3 data-key="race-heading">The race for the postseason</h3><p class="muted" data-key="race-format">${esc(race.format.description[0].toUpperCase() + race.format.description.slice(1))}.</p>`
    + race.leagues.map((league) => {
      const cut = league.wild_card.filter((t) => t.place === 'wild card').length - 1;
      return `<div class="scroll-x" role="region" tabindex="0" aria-label="${esc(league.name)} postseason race" data-key="race-${esc(league.name)}">
      <table class="standings race"><caption>${esc(league.name)} postseason race</caption>
      <thead><tr><th scope="col">Team</th><th scope="col">W</th><th scope="col">L</th><th scope="col"><abbr title="games ahead of the first club out, or behind the last wild card">WCGB</abbr></th><th scope="col">In as</th><th scope="col"><abbr title="magic number to clinch (M#) or elimination number (E#)">Number</abbr></th></tr></thead>
      <tbody>${league.leaders.map((t, i) => row(t, i === league.leaders.length - 1)).join('')}${league.wild_card.map((t, i) => row(t, i === cut)).join('')}</tbody></table></div>`;
    }).join('');
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
      + race(answer)
      + `<p class="muted" data-key="source">From ${esc(answer.source)}.</p>`);
  } catch (error) {
    patch(page, `<p role="alert">The standings could not be loaded: ${esc(error.message)}</p>`);
  }
}
