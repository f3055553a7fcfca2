// The Scores tab: a card per game (keyed by game), favourite teams first, and the fan's list of
// favourite teams with a picker. The game card is also the head of the game page.
import { $, esc, patch, setText } from './dom.js';
import { boardNotice, challengesLine, clubAbbreviation, clubName, diamond, gameHref, matchupName, outsDots, pitcherSummary, situation, strikeZone } from './format.js';
import { attemptOuts, clubs, onFavourites, setFavourites, state } from './state.js';
import { loadRecords, record } from './standings.js';
import { invalidate } from './tabs.js';

function favouriteRank(game) {
  const ranks = [game.away.franchise, game.home.franchise].map((code) => state.favourites.indexOf(code)).filter((i) => i >= 0);
  return ranks.length ? Math.min(...ranks) : Infinity;
}

function noHitterInProgress(game) {
  return game.bids.find((bid) => bid.hitless && ((game.status === 'live' && bid.status === 'alive' && bid.outs >= attemptOuts()) || bid.status === 'official'));
}

function linescoreTable(game) {
  const innings = Math.max(game.away.linescore.length, game.home.linescore.length, game.scheduled_innings || 9);
  const cells = (team) => Array.from({ length: innings }, (_, i) => `<td>${esc(team.linescore[i] ?? '')}</td>`).join('');
  return `<table class="linescore"><caption class="visually-hidden">Runs by inning</caption>
    <thead><tr><th scope="col">Team</th>${Array.from({ length: innings }, (_, i) => `<th scope="col">${i + 1}</th>`).join('')}<th scope="col">R</th><th scope="col">H</th><th scope="col">E</th></tr></thead>
    <tbody>${[game.away, game.home].map((team) => `<tr><th scope="row">${esc(team.abbreviation)}</th>${cells(team)}<td><strong>${team.runs}</strong></td><td>${team.hits}</td><td>${team.errors}</td></tr>`).join('')}</tbody></table>`;
}

// The state of play beside the teams: bases, outs, count, the last pitch; then the plate
// appearance's pitches on the zone, where the source tracks them.
function situationOf(game) {
  if (game.status !== 'live' || !game.matchup) return '';
  const m = game.matchup;
  const count = m.balls != null ? `<span class="count" aria-label="count ${m.balls} balls, ${m.strikes} strikes">${m.balls}-${m.strikes}</span>` : '';
  const pitch = m.last_pitch ? `<span class="last-pitch muted">${esc(m.last_pitch)}</span>` : '';
  return `<div class="situation">${diamond(game.bases)}${outsDots(game.outs)}${count}${pitch}</div>${strikeZone(m)}`;
}

// Who is pitching and batting, who is due up, the probables, the pitchers of record.
function peopleOf(game) {
  if (game.status === 'live' && game.matchup) {
    const m = game.matchup;
    return `<div class="people"><abbr title="pitching">P</abbr>: ${esc(m.pitcher)}${esc(pitcherSummary(m.pitcher_line))}<br><abbr title="at bat">AB</abbr>: ${esc(m.batter)}${m.batter_line ? ` <span class="muted">(${esc(m.batter_line)})</span>` : ''}</div>`;
  }
  if (game.status === 'live' && game.due_up) {
    return `<div class="people">Due up for ${esc(game.due_up.team)}: ${esc(game.due_up.batters.join(', '))}</div>`;
  }
  if (game.status === 'scheduled' && game.starters) {
    return `<div class="people">${game.starters.confirmed ? 'Starting' : 'Probable'}: ${esc(game.starters.away || 'TBD')} vs ${esc(game.starters.home || 'TBD')}</div>`;
  }
  if (game.status === 'final' && game.decisions) {
    const d = game.decisions;
    return `<div class="people">${d.winning ? `W: ${esc(d.winning)}` : ''}${d.losing ? ` · L: ${esc(d.losing)}` : ''}${d.save ? ` · S: ${esc(d.save)}` : ''}</div>`;
  }
  return '';
}

/** The side history favours in a game under way, and by how much: `HOU 97% to win`, with the
 * leverage when the moment weighs more than an average play. */
export function chanceOf(game) {
  if (game.status !== 'live' || game.home_win == null) return '';
  const home = game.home_win >= 0.5;
  const share = Math.round((home ? game.home_win : 1 - game.home_win) * 100);
  const team = home ? game.home : game.away;
  const shown = share >= 100 ? '>99' : share;
  const pressure = game.leverage >= 1.5 ? ` · <abbr title="leverage: how much this moment weighs against an average play">LI</abbr> ${game.leverage.toFixed(1)}` : '';
  return `<span class="chance" data-key="chance"><abbr title="win probability from how games in this situation ended, 1950-2020">Win</abbr>: ${esc(team.abbreviation)} ${shown}%${pressure}</span>`;
}

/** A game's card (HTML); `lineOpen` opens its line score when the card is first shown. */
export function gameCard(game, { lineOpen = false } = {}) {
  const bid = noHitterInProgress(game);
  const marks = [
    game.game_number ? `<span class="mark">Game ${game.game_number}</span>` : '',
    bid ? `<span class="mark nohit">${bid.status === 'official' ? 'No-hitter' : 'No-hitter in progress'} · ${esc(bid.team)}</span>` : '',
  ].join('');
  const blank = game.status === 'scheduled';
  const rows = [game.away, game.home].map((team) => `
      <tr class="${state.favourites.includes(team.franchise) ? 'favourite' : ''}"><th scope="row" title="${esc(team.name)}">${esc(team.abbreviation)}${record(team.abbreviation) ? ` <span class="record" aria-label="record ${esc(record(team.abbreviation))}">${esc(record(team.abbreviation))}</span>` : ''}</th>
        <td class="runs">${blank ? '' : team.runs}</td><td>${blank ? '' : team.hits}</td><td>${blank ? '' : team.errors}</td></tr>`).join('');
  return `<article class="game${bid ? ' nohit' : ''}" data-key="${esc(game.id)}" data-game="${esc(game.id)}" data-status="${esc(game.status)}" aria-label="${esc(matchupName(game))}">
    <div class="game-head"><span class="status">${esc(situation(game))}</span>${marks}</div>
    <div class="game-body"><table class="teams"><thead><tr><th scope="col"><span class="visually-hidden">Team</span></th><th scope="col">R</th><th scope="col">H</th><th scope="col">E</th></tr></thead><tbody>${rows}</tbody></table>${situationOf(game)}</div>
    ${peopleOf(game)}${challengesLine(game)}
    <div class="game-foot"><details class="line" data-key="line"${lineOpen ? ' open' : ''}><summary>Line score</summary><div class="scroll-x" role="region" tabindex="0" aria-label="${esc(matchupName(game))}: runs by inning">${linescoreTable(game)}</div></details>${chanceOf(game)}
    <a class="game-link" data-key="game-link" href="${gameHref(game)}">Game page<span class="visually-hidden">: ${esc(matchupName(game))}</span></a></div>
  </article>`;
}

// Games in progress first (the nearest its end first), then those to come by first pitch, then
// the finished ones; a favourite team's games before all.
const phase = (game) => ({ live: 0, scheduled: 1, final: 2 }[game.status] ?? 1);
// Outs left in a game under way, were it to end at its scheduled length (0 in extra innings).
const outsLeft = (game) => (game.status !== 'live' ? 0
  : Math.max(0, (game.scheduled_innings || 9) - game.inning) * 6 + (game.half === 'bottom' ? 0 : 3) + (3 - game.outs));

export function drawScores() {
  loadRecords();
  const games = [...state.games.values()].sort((a, b) => (favouriteRank(a) - favouriteRank(b))
    || (phase(a) - phase(b)) || (outsLeft(a) - outsLeft(b))
    || a.start_time.localeCompare(b.start_time) || a.id.localeCompare(b.id));
  patch($('#games'), games.map((game) => gameCard(game)).join(''));
  $('#no-games').hidden = games.length > 0;
  setText($('#no-games'), boardNotice('No games on the board yet.'));
  setText($('#board-date'), games.length ? games[0].date : '');
}

// The fan's teams on this tab: reordered with ↑ and ↓, removed with ×, added with the picker
// (drawn again once the configuration brings the clubs' names).
export function drawFavourites() {
  const favourites = state.favourites;
  setText($('#favourite-count'), favourites.length);
  patch($('#favourite-list'), favourites.map((code, index) => `<li data-key="${esc(code)}">
      <span>${esc(clubName(code))} <span class="muted">${esc(clubAbbreviation(code))}</span></span>
      <button type="button" data-move="${index}" data-by="-1" aria-label="move ${esc(clubName(code))} up" ${index === 0 ? 'disabled' : ''}>↑</button>
      <button type="button" data-move="${index}" data-by="1" aria-label="move ${esc(clubName(code))} down" ${index === favourites.length - 1 ? 'disabled' : ''}>↓</button>
      <button type="button" data-unfavourite="${esc(code)}" aria-label="remove ${esc(clubName(code))}">×</button></li>`).join(''));
  $('#team-picker').innerHTML = '<option value="">Choose a team…</option>' + clubs()
    .filter((t) => !favourites.includes(t.code)).map((t) => `<option value="${esc(t.code)}">${esc(t.name)} (${esc(t.abbreviation)})</option>`).join('');
}

export function wireScores() {
  onFavourites(() => { drawFavourites(); invalidate('scores'); });
  $('#team-picker').addEventListener('change', (event) => {
    const code = event.target.value;
    if (code && !state.favourites.includes(code)) setFavourites([...state.favourites, code]);
    $('#team-picker').focus();
  });
  $('#favourite-list').addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (!button) return;
    const favourites = state.favourites;
    if (button.dataset.unfavourite) { setFavourites(favourites.filter((t) => t !== button.dataset.unfavourite)); return; }
    const index = Number(button.dataset.move);
    const to = index + Number(button.dataset.by);
    if (to < 0 || to >= favourites.length) return;
    const list = [...favourites];
    [list[index], list[to]] = [list[to], list[index]];
    setFavourites(list);
    $(`#favourite-list button[data-move="${to}"][data-by="${button.dataset.by}"]`)?.focus();
  });
}
