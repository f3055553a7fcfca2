// The game page (#game/ID): the game's card, the box score (batters, the lines below the table,
// pitchers), the scoring summary and the play-by-play, kept up
// to date from the stream (loaded again at most once a second while its game changes). Plays and
// halves are keyed, so a new play is added at the top and the rest stay as they are.
import { api } from './api.js';
import { $, esc, patch } from './dom.js';
import { situation, strikeZone } from './format.js';
import { gameCard } from './scores.js';
import { loadRecords } from './standings.js';
import { delayed, state } from './state.js';

let timer = null;

// The clubs' records arrived: the open game page's card shows them.
document.addEventListener('nohit-records', () => { if (state.gamePage) loadGamePage(); });

/** The game `id` changed (a stream update, a reload): its page, when open, is loaded again shortly. */
export function gameChanged(id) {
  if (state.gamePage !== id || timer) return;
  timer = setTimeout(() => { timer = null; loadGamePage(); }, 1000);
}

function pitchers(lines, team) {
  return `<div class="scroll-x" role="region" tabindex="0" aria-label="${esc(team.name)} pitching"><table class="pitchers"><caption>${esc(team.name)} pitching</caption>
      <thead><tr><th scope="col">Pitcher</th><th scope="col">IP</th><th scope="col">H</th><th scope="col">R</th><th scope="col">ER</th><th scope="col">BB</th><th scope="col">K</th><th scope="col">HR</th><th scope="col">P</th></tr></thead>
      <tbody>${lines.map((p) => `<tr data-key="${esc(p.id || p.name)}"><th scope="row">${esc(p.name)}</th><td>${p.innings_pitched}</td><td>${p.hits}</td><td>${p.runs}</td><td>${p.earned_runs}</td><td>${p.walks}</td><td>${p.strikeouts}</td><td>${p.home_runs}</td><td>${p.pitches ?? '–'}</td></tr>`).join('')}</tbody></table></div>`;
}

// Before the first pitch (its time is the card's, said once): where, the pitchers with their
// W-L and ERA before the day, the batting orders once the lineups are out.
function pregame(game, p) {
  const pitcher = (side) => side.pitcher
    ? `${esc(side.pitcher.name)}${side.pitcher.wins != null ? ` <span class="muted">(${side.pitcher.wins}-${side.pitcher.losses}, ${esc(side.pitcher.era)} ERA)</span>` : ''}`
    : 'TBD';
  const lineup = (side, team) => (side.lineup.length
    ? `<ol class="lineup" aria-label="${esc(team.name)} lineup">${side.lineup.map((b) => `<li>${esc(b.name)} <span class="pos">${esc(b.position)}</span></li>`).join('')}</ol>`
    : '<p class="muted">Lineup not out yet.</p>');
  return `<section class="pregame" data-key="pregame"><h3>Before the first pitch</h3>
    ${p.venue ? `<p>At ${esc(p.venue)}.</p>` : ''}
    <p>${p.confirmed ? 'Starting pitchers' : 'Probable pitchers'}: ${esc(game.away.abbreviation)} ${pitcher(p.away)} vs ${esc(game.home.abbreviation)} ${pitcher(p.home)}</p>
    <div class="lineups"><div><h4>${esc(game.away.name)}</h4>${lineup(p.away, game.away)}</div><div><h4>${esc(game.home.name)}</h4>${lineup(p.home, game.home)}</div></div></section>`;
}

// One side's batters in batting order: substitutes indented under the player they replaced, with
// how and when they came in; totals; the lines below the table (2B, HR, SB, E ...), LOB and RISP.
function batters(side, team) {
  const row = (b) => {
    const entry = b.entered_inning ? ` <span class="muted">${b.entered === 'PH' ? 'pinch-hit' : 'pinch-ran'} in the ${ordinal(b.entered_inning)}</span>` : '';
    return `<tr data-key="${esc(b.id)}-${b.slot}"${b.sequence > 1 ? ' class="sub"' : ''}><th scope="row">${esc(b.name)} <span class="pos">${esc(b.position)}</span>${entry}</th><td>${b.at_bats}</td><td>${b.runs}</td><td>${b.hits}</td><td>${b.runs_batted_in}</td><td>${b.walks}</td><td>${b.strikeouts}</td></tr>`;
  };
  const t = side.totals;
  const notes = side.notes.map((n) => `<li><abbr>${esc(n.label)}</abbr>: ${esc(n.text)}.</li>`).join('');
  return `<section class="batting" data-key="batting-${esc(team.abbreviation)}"><div class="scroll-x" role="region" tabindex="0" aria-label="${esc(team.name)} batting"><table class="batters"><caption>${esc(team.name)} batting</caption>
      <thead><tr><th scope="col">Batter</th><th scope="col">AB</th><th scope="col">R</th><th scope="col">H</th><th scope="col">RBI</th><th scope="col">BB</th><th scope="col">SO</th></tr></thead>
      <tbody>${side.batters.map(row).join('')}</tbody>
      <tfoot><tr><th scope="row">Totals</th><td>${t.at_bats}</td><td>${t.runs}</td><td>${t.hits}</td><td>${t.runs_batted_in}</td><td>${t.walks}</td><td>${t.strikeouts}</td></tr></tfoot></table></div>
    <ul class="box-notes">${notes}<li>LOB: ${side.left_on_base}. With runners in scoring position: ${esc(side.with_runners_in_scoring_position)}.</li></ul></section>`;
}

function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] || 'th';
  return `${n}${suffix}`;
}

// Each scoring play in words, with its half-inning and the score after it.
function scoringSummary(game, plays) {
  if (!plays.length) return '<p class="muted">No runs yet.</p>';
  return `<ol class="scoring-summary">${plays.map((p) => `<li data-key="scoring-${p.number}"><span class="muted">${esc(p.heading)}</span> ${esc(p.text)} <strong>${esc(game.away.abbreviation)} ${p.away_score}, ${esc(game.home.abbreviation)} ${p.home_score}</strong></li>`).join('')}</ol>`;
}

// The ABS challenges: each team's counters as the feed gives them, whether the challenged pitches
// agree with them, and each challenged pitch.
function challenges(game) {
  const c = game.challenges;
  if (!c) return '';
  const tally = (team) => c.pitches.filter((p) => p.team === team.team).reduce((t, p) => {
    t[p.overturned ? 'won' : 'lost'] += 1; return t;
  }, { won: 0, lost: 0 });
  const disagree = [c.away, c.home].filter((t) => { const r = tally(t); return r.won !== t.won || r.lost !== t.lost; });
  const row = (t) => `<tr><th scope="row">${esc(t.team)}</th><td>${t.remaining}</td><td>${t.won}</td><td>${t.lost}</td></tr>`;
  return `<section class="challenges" data-key="challenges"><h3>ABS challenges</h3>
    <table class="abs-counters"><caption class="visually-hidden">ABS challenges by team</caption>
      <thead><tr><th scope="col">Team</th><th scope="col">Left</th><th scope="col">Won</th><th scope="col">Lost</th></tr></thead>
      <tbody>${row(c.away)}${row(c.home)}</tbody></table>
    ${disagree.length ? `<p class="muted">The feed's counters for ${esc(disagree.map((t) => t.team).join(' and '))} differ from its challenged pitches; the counters are shown.</p>` : ''}
    ${c.pitches.length ? `<ol class="abs-pitches">${c.pitches.map((p) => `<li data-key="abs-${p.plate_appearance}-${p.pitch_number}" class="${p.overturned ? 'overturned' : 'upheld'}">${esc(p.text)}</li>`).join('')}</ol>` : '<p class="muted">No challenges yet.</p>'}</section>`;
}

// The plays by half-inning, latest first, each half under the server's heading ("Top of the 5th"),
// with the half's ABS challenges.
function playByPlay(game, plays) {
  const halves = [];
  for (const play of plays) {
    const key = `${play.half}-${play.inning}`;
    if (!halves.length || halves[halves.length - 1].key !== key) halves.push({ key, heading: play.heading, plays: [] });
    halves[halves.length - 1].plays.push(play);
  }
  if (!halves.length) return '<p class="muted">No plays yet.</p>';
  const score = (p) => ` · ${esc(game.away.abbreviation)} ${p.away_score}, ${esc(game.home.abbreviation)} ${p.home_score}`;
  const challenged = (key) => (game.challenges?.pitches ?? []).filter((p) => `${p.half}-${p.inning}` === key);
  const asked = (half) => {
    const list = challenged(half.key);
    return list.length ? `<ul class="abs-pitches" aria-label="ABS challenges, ${esc(half.heading)}">${list.map((p) => `<li class="${p.overturned ? 'overturned' : 'upheld'}"><abbr title="automated ball-strike challenge">ABS</abbr> ${esc(p.text.replace(/^[^:]*: /, ''))}</li>`).join('')}</ul>` : '';
  };
  return halves.reverse().map((half) => `<section class="half" data-key="${esc(half.key)}"><h4>${esc(half.heading)}</h4>${asked(half)}
    <ol reversed>${half.plays.reverse().map((p) => `<li data-key="play-${p.number}" class="${p.scoring ? 'scoring' : ''}">${esc(p.text)} <span class="muted">${esc(p.outs_text)}${p.scoring ? score(p) : ''}</span></li>`).join('')}</ol></section>`).join('');
}

// The home team's chance of winning after each play, from history: a line over the plays, each
// inning's start marked, 50% dashed; its figures in its caption, which labels it.
function winChart(game, plays) {
  const points = plays.filter((p, i) => p.home_win != null && (i === 0 || p.number !== plays[i - 1].number));
  if (points.length < 2) return '';
  const width = 300;
  const height = 100;
  const x = (i) => ((i + 1) / points.length) * width;
  const y = (p) => (1 - p) * height;
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.home_win).toFixed(1)}`).join(' ');
  const innings = [];
  points.forEach((p, i) => {
    if (i > 0 && p.inning !== points[i - 1].inning) innings.push({ at: x(i - 1), inning: p.inning });
  });
  const last = points[points.length - 1].home_win;
  const pct = (p) => `${Math.round(p * 100)}%`;
  const swing = points.reduce((best, p, i) => {
    const change = i === 0 ? 0 : Math.abs(p.home_win - points[i - 1].home_win);
    return change > best.change ? { change, play: p } : best;
  }, { change: 0, play: null });
  const label = `${game.home.abbreviation}'s chance of winning over ${points.length} plays: ${pct(last)} after the last`
    + (swing.play ? `; the biggest swing, ${pct(swing.change)}: ${swing.play.text.replace(/\.$/, '')}` : '');
  return `<figure class="winprob" data-key="winprob"><svg viewBox="-14 -4 ${width + 18} ${height + 14}" role="img" aria-labelledby="winprob-caption">
    <line class="grid" x1="0" x2="${width}" y1="${y(0.5)}" y2="${y(0.5)}"/>
    ${innings.map((m) => `<line class="inning" x1="${m.at.toFixed(1)}" x2="${m.at.toFixed(1)}" y1="0" y2="${height}"/><text x="${(m.at + 1).toFixed(1)}" y="${height + 8}">${m.inning}</text>`).join('')}
    <text x="-13" y="5">${esc(game.home.abbreviation)}</text><text x="-13" y="${height}">${esc(game.away.abbreviation)}</text>
    <polyline class="line" points="${line}"/></svg>
    <figcaption id="winprob-caption">Win probability, from how games in each situation ended (1950-2020): ${esc(label)}.</figcaption></figure>`;
}

export async function loadGamePage() {
  const id = state.gamePage;
  if (!id) return;
  const page = $('#game-page');
  loadRecords();
  try {
    const detail = await api(delayed(`/api/games/${encodeURIComponent(id)}`));
    if (state.gamePage !== id) return;
    const game = detail.game;
    // Opened by its address before the board had it: from now on, by its id.
    state.gamePage = game.id;
    const runs = (team) => (game.status === 'scheduled' ? '' : team.runs);
    // The first pitch is said once: on the card before the game (and in the pre-game section).
    const status = detail.pregame ? '' : situation(game);
    // Where: said here once the game is on (before it, the pre-game section says it).
    const line = [status, game.game_number ? `Game ${game.game_number}` : '', detail.pregame ? '' : game.venue]
      .filter(Boolean).join(' · ');
    if (detail.pregame) {
      patch(page, `<h2>${esc(game.away.name)} at ${esc(game.home.name)}</h2>
        ${line ? `<p class="status-line">${esc(line)}</p>` : ''}
        ${gameCard(game)}
        ${pregame(game, detail.pregame)}`);
      return;
    }
    patch(page, `<h2>${esc(game.away.name)} ${runs(game.away)} at ${esc(game.home.name)} ${runs(game.home)}</h2>
      <p class="status-line">${esc(line)}</p>
      ${gameCard(game, { lineOpen: true })}
      ${game.status === 'live' && game.matchup?.zone?.length ? `<h3>At the plate</h3><p>${esc(game.matchup.batter)} <span class="muted">vs ${esc(game.matchup.pitcher)}</span> · ${game.matchup.balls}-${game.matchup.strikes}</p>${strikeZone(game.matchup, { large: true })}` : ''}
      ${challenges(game)}
      <h3>Win probability</h3>
      ${winChart(game, detail.plays) || `<p class="muted">${!detail.plays.length ? 'No plays yet.'
        : detail.plays.some((p) => p.home_win != null) ? 'After the first play.' : 'Not for this game (its home team bats first, or the service has no table).'}</p>`}
      <h3>Scoring summary</h3>
      ${scoringSummary(game, detail.scoring)}
      <h3>Box score</h3>
      <div class="box-score">${batters(detail.box.away, game.away)}${batters(detail.box.home, game.home)}</div>
      <div class="pitching">${pitchers(detail.pitchers.away, game.away)}${pitchers(detail.pitchers.home, game.home)}</div>
      <h3>Play-by-play</h3>
      ${playByPlay(game, detail.plays)}`);
  } catch (error) {
    patch(page, `<p role="alert">Could not load the game: ${esc(error.message)}</p>`);
  }
}
