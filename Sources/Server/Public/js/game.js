// The game page (#game/ID): the game's card, every pitcher's line and the play-by-play, kept up
// to date from the stream (loaded again at most once a second while its game changes). Plays and
// halves are keyed, so a new play is added at the top and the rest stay as they are.
import { api } from './api.js';
import { $, esc, patch } from './dom.js';
import { situation } from './format.js';
import { gameCard } from './scores.js';
import { state } from './state.js';

let timer = null;

/** The game `id` changed (a stream update, a reload): its page, when open, is loaded again shortly. */
export function gameChanged(id) {
  if (state.gamePage !== id || timer) return;
  timer = setTimeout(() => { timer = null; loadGamePage(); }, 1000);
}

function pitchers(lines, team) {
  return `<table class="pitchers"><caption>${esc(team.name)} pitching</caption>
      <thead><tr><th scope="col">Pitcher</th><th scope="col">IP</th><th scope="col">H</th><th scope="col">R</th><th scope="col">ER</th><th scope="col">BB</th><th scope="col">K</th><th scope="col">HR</th><th scope="col">P</th></tr></thead>
      <tbody>${lines.map((p) => `<tr data-key="${esc(p.id || p.name)}"><th scope="row">${esc(p.name)}</th><td>${p.innings_pitched}</td><td>${p.hits}</td><td>${p.runs}</td><td>${p.earned_runs}</td><td>${p.walks}</td><td>${p.strikeouts}</td><td>${p.home_runs}</td><td>${p.pitches ?? '–'}</td></tr>`).join('')}</tbody></table>`;
}

// The plays by half-inning, latest first, each half under the server's heading ("Top of the 5th").
function playByPlay(game, plays) {
  const halves = [];
  for (const play of plays) {
    const key = `${play.half}-${play.inning}`;
    if (!halves.length || halves[halves.length - 1].key !== key) halves.push({ key, heading: play.heading, plays: [] });
    halves[halves.length - 1].plays.push(play);
  }
  if (!halves.length) return '<p class="muted">No plays yet.</p>';
  const score = (p) => ` · ${esc(game.away.abbreviation)} ${p.away_score}, ${esc(game.home.abbreviation)} ${p.home_score}`;
  return halves.reverse().map((half) => `<section class="half" data-key="${esc(half.key)}"><h4>${esc(half.heading)}</h4>
    <ol reversed>${half.plays.reverse().map((p) => `<li data-key="play-${p.number}" class="${p.scoring ? 'scoring' : ''}">${esc(p.text)} <span class="muted">${esc(p.outs_text)}${p.scoring ? score(p) : ''}</span></li>`).join('')}</ol></section>`).join('');
}

export async function loadGamePage() {
  const id = state.gamePage;
  if (!id) return;
  const page = $('#game-page');
  try {
    const detail = await api(`/api/games/${encodeURIComponent(id)}`);
    if (state.gamePage !== id) return;
    const game = detail.game;
    const runs = (team) => (game.status === 'scheduled' ? '' : team.runs);
    patch(page, `<h2>${esc(game.away.name)} ${runs(game.away)} at ${esc(game.home.name)} ${runs(game.home)}</h2>
      <p class="status-line">${esc(situation(game))}${game.game_number ? ` · Game ${game.game_number}` : ''}</p>
      ${gameCard(game, { lineOpen: true })}
      <div class="pitching">${pitchers(detail.pitchers.away, game.away)}${pitchers(detail.pitchers.home, game.home)}</div>
      <h3>Play-by-play</h3>
      ${playByPlay(game, detail.plays)}`);
  } catch (error) {
    patch(page, `<p role="alert">Could not load the game: ${esc(error.message)}</p>`);
  }
}
