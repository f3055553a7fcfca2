// The Live tab: the attempt cards (the centrepiece) and the recent moments, each keyed, so a live
// update changes the card or row that changed. A bid hitless through the minimum is shown while it
// is alive; a completed no-hitter becomes a celebration card; a broken-up bid stays while its game
// is on (at most BROKEN_UP_SHOWN_MS after this page saw it broken), saying who broke it up and how.
// The announcer (a polite live region outside the tabs) reads each moment from the stream once.
import { $, esc, patch, setText } from './dom.js';
import { boardNotice, clockTime, count, diamond, gameHref, matchupName, outsDots, pitchingLine, score, situation, strikeZone, whereToWatch } from './format.js';
import { attemptOuts, state } from './state.js';

const BROKEN_UP_SHOWN_MS = 15 * 60 * 1000;
const TITLE_SHOWN_MS = 15 * 60 * 1000;
let titleTimer;
const brokenSeen = new Map();
// The outs this page saw on each card, in order (the card's data-history, which the browser tests read).
const outsSeen = new Map();
// Moments from the stream not yet read out: one the game has not reached yet waits for it.
let unannounced = [];

const keyOf = (game, bid) => `${game.id}-${bid.side}`;

/** Notes what a game update says about its bids (seen broken up, outs seen), drawn or not. */
export function observe(game) {
  const now = Date.now();
  for (const bid of game.bids) {
    if (bid.outs < attemptOuts()) continue;
    const key = keyOf(game, bid);
    if (bid.status === 'broken-up' && game.status === 'live' && !brokenSeen.has(key)) brokenSeen.set(key, now);
    const seen = outsSeen.get(key) || [];
    if (!seen.includes(bid.outs)) outsSeen.set(key, [...seen, bid.outs]);
  }
}

function attempts() {
  const list = [];
  const now = Date.now();
  for (const game of state.games.values()) {
    for (const bid of game.bids) {
      if (bid.outs < attemptOuts()) continue;
      if (bid.hitless && (bid.status === 'alive' || bid.status === 'official')) list.push({ game, bid });
      else if (bid.status === 'broken-up' && game.status === 'live' && now - (brokenSeen.get(keyOf(game, bid)) ?? now) < BROKEN_UP_SHOWN_MS) {
        list.push({ game, bid });
      }
    }
  }
  const rank = ({ bid }) => (bid.status === 'alive' ? 0 : bid.status === 'official' ? 1 : 2);
  return list.sort((a, b) => rank(a) - rank(b) || chanceOf(b.game, b.bid) - chanceOf(a.game, a.bid) || b.bid.outs - a.bid.outs);
}

// A bid's chance of finishing, as the server gives it (the figure its alerts give); without one (no
// odds, or a bid that cannot count), how far through its game it is, below every figure.
function chanceOf(game, bid) {
  if (bid.chance) return bid.chance.share;
  return bid.unofficial ? -1 : bid.outs / ((game.scheduled_innings || 9) * 3) / 100;
}

// The game as it stands, for a bid under way: who is up and the count (or who is due up between
// halves), the last pitch, the runners and the outs, the pitcher's count with the plate appearance
// under way, and its pitches on the zone where the source tracks them. The board's own snapshot:
// nothing worked out here.
function gameday(game, bid) {
  if (game.status !== 'live') return '';
  const m = game.matchup;
  if (m) {
    const count = m.balls != null && m.strikes != null ? `${m.balls}-${m.strikes}` : '';
    const pitches = m.pitcher_line?.pitches != null ? `, ${m.pitcher_line.pitches} pitches` : '';
    return `<div class="gameday">${diamond(game.bases)}<div class="gd-text">
      <div><span class="muted">At bat</span> <strong data-key="batter">${esc(m.batter)}</strong>${m.batter_line ? ` <span class="muted">${esc(m.batter_line)}</span>` : ''}</div>
      <div><span class="count" data-key="count">${esc(count)}</span>${m.last_pitch ? ` · <span data-key="last-pitch">${esc(m.last_pitch)}</span>` : ''} ${outsDots(game.outs)}</div>
      <div class="muted" data-key="pitching">Pitching: ${esc(m.pitcher)}${esc(pitches)}</div></div>${strikeZone(m)}</div>`;
  }
  if (game.due_up) {
    return `<div class="gameday"><div class="gd-text"><span class="muted">Due up for ${esc(game.due_up.team)}:</span> ${esc(game.due_up.batters.join(', '))}</div></div>`;
  }
  return '';
}

function attemptCard({ game, bid }) {
  const opponent = bid.side === 'home' ? game.away : game.home;
  const pitching = bid.side === 'home' ? game.home : game.away;
  const scheduledOuts = (game.scheduled_innings || 9) * 3;
  const toGo = Math.max(0, scheduledOuts - bid.outs);
  const marks = [
    bid.perfect && bid.status !== 'broken-up' ? `<span class="badge">${bid.status === 'official' ? 'Perfect game' : 'Perfect game alive'}</span>` : '',
    bid.pitchers.length > 1 ? '<span class="badge combined">Combined</span>' : '',
  ].join('');
  const where = `<div class="muted">${esc(score(game))} · ${esc(situation(game))}</div>`;
  let headline = '';
  let status;
  if (bid.status === 'official') {
    headline = `<p class="celebrate">${bid.perfect ? 'Perfect game!' : 'No-hitter!'}</p>`;
    // The last out and what it means, from the completed moment (the server's words).
    const done = state.moments.find((m) => m.kind === 'completed' && m.id.startsWith(`${game.id}-${bid.side}-`));
    status = `<div class="result">${esc(pitching.name)} ${pitching.runs}, ${esc(opponent.name)} ${opponent.runs} · ${esc(situation(game))}</div>
      ${done?.last_play ? `<p class="last-out">The last out: ${esc(done.last_play)}.</p>` : ''}
      ${done?.meaning ? `<p class="meaning">${esc(done.meaning)}</p>` : ''}`;
  } else if (bid.status === 'broken-up') {
    headline = '<p class="broken">Broken up</p>';
    status = `<div class="progress">Hitless through ${esc(bid.hitless_text)}</div>
      <p class="how">${esc(bid.broken_up_by?.text || 'A hit ended the bid')}.</p>${where}`;
  } else {
    const bar = `<div class="bar" role="progressbar" aria-label="Outs recorded without a hit" aria-valuemin="0" aria-valuemax="${scheduledOuts}" aria-valuenow="${bid.outs}" aria-valuetext="${bid.outs} of ${scheduledOuts} outs"><span></span></div>`;
    // One figure, the one its alerts give; a bid that cannot count says why instead.
    const chance = bid.unofficial
      ? `<p class="unofficial" data-key="unofficial">Won't count as an official no-hitter: ${esc(bid.unofficial)}.</p>`
      : bid.chance ? `<div class="chance" data-key="chance"><strong>${esc(bid.chance.text)}</strong> chance <span class="muted">· ${esc(bid.chance.base)}</span></div>` : '';
    status = `<div class="progress">Hitless through ${esc(bid.hitless_text)}</div>${bar}${chance}
      <div class="togo"><strong>${count(toGo, 'out')} to go</strong></div>${where}${gameday(game, bid)}`;
  }
  const key = keyOf(game, bid);
  return `<article class="card attempt ${bid.status}" data-key="${esc(key)}" data-status="${bid.status}" data-outs="${bid.outs}" data-chance="${chanceOf(game, bid)}" data-history="${(outsSeen.get(key) || [bid.outs]).join(',')}">${headline}
    <h3 class="pitcher">${esc(bid.pitchers.join(', '))}${marks}</h3>
    <div class="muted">${esc(pitching.name)} vs ${esc(opponent.name)}</div>
    ${status}
    ${bid.lines.length ? `<div class="line">${esc(pitchingLine(bid))}</div>` : ''}
    ${bid.pitchers.length > 1 && bid.status === 'alive' ? `<div class="muted">Combined: ${esc(bid.pitchers.join(', '))}; now pitching: ${esc(bid.current_pitcher)}</div>` : ''}
    <div class="watch">${whereToWatch(game)}</div>
    <a class="game-link" data-key="game-link" href="${gameHref(game)}">Game page<span class="visually-hidden">: ${esc(matchupName(game))}</span></a></article>`;
}

// A moment the game on the board has not reached yet (a stored moment of an earlier run of a
// replay, or of a game followed again; a completed no-hitter the stream told before the final
// game) is held back: it would spoil the card above it.
function reached(moment) {
  const game = state.games.get(moment.game_id);
  if (!game || game.status === 'final') return true;
  if (moment.kind === 'completed' || moment.kind === 'ended-not-official') return false;
  return moment.inning <= game.inning;
}

function momentRow(m) {
  return `<li data-key="${esc(m.id)}" data-id="${esc(m.id)}"><time datetime="${esc(m.occurred_at)}">${esc(clockTime(m.occurred_at))}</time> <a href="${gameHref(m.game_id)}"><strong>${esc(m.title)}</strong></a> — ${esc(m.body)}</li>`;
}

// How close a game in progress is to a no-hitter: its live bid (a hitless side with an out at
// least) most likely to finish, by its chance. Games without one come after, by first pitch.
function closest(game) {
  const alive = game.bids.filter((bid) => bid.hitless && bid.status === 'alive' && bid.outs > 0);
  if (!alive.length) return { bid: null, rank: [1, 0] };
  const best = alive.reduce((a, b) => (chanceOf(game, b) > chanceOf(game, a) ? b : a));
  return { bid: best, rank: [0, -chanceOf(game, best)] };
}

function compareRanks(a, b) {
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

function inProgressRow(game) {
  const { bid } = closest(game);
  const pitching = bid ? (bid.side === 'home' ? game.home : game.away) : null;
  const words = bid
    ? `${bid.current_pitcher || bid.pitchers.join(', ')} (${pitching.abbreviation}): ${bid.perfect ? 'perfect' : 'hitless'} through ${bid.hitless_text}`
      + ` · ${count((game.scheduled_innings || 9) * 3 - bid.outs, 'out')} to go`
      + (bid.unofficial ? ' · won\'t count' : bid.chance ? ` · ${bid.chance.text} chance` : '')
    : 'No side is hitless';
  return `<li data-key="${esc(game.id)}" data-id="${esc(game.id)}" data-chance="${bid ? chanceOf(game, bid) : ''}"><a href="${gameHref(game)}"><strong>${esc(score(game))}</strong></a>`
    + ` · ${esc(situation(game))} · <span class="bid-words">${esc(words)}</span></li>`;
}

function comingUpRow(game) {
  const starters = game.starters;
  const probable = starters && (starters.away || starters.home)
    ? ` · ${starters.confirmed ? 'Starting' : 'Probable'}: ${esc(starters.away || 'TBD')} vs ${esc(starters.home || 'TBD')}` : '';
  return `<li data-key="${esc(game.id)}" data-id="${esc(game.id)}"><time datetime="${esc(game.start_time)}">${esc(clockTime(game.start_time))}</time>`
    + ` · <a href="${gameHref(game)}">${esc(game.away.abbreviation)} at ${esc(game.home.abbreviation)}</a>${probable}</li>`;
}

// After the night's last out: its longest bid (the most outs before a first hit; a no-hitter is
// the whole game).
function longestBid(games) {
  let best = null;
  for (const game of games) {
    for (const bid of game.bids) {
      const outs = bid.status === 'official' ? Infinity : bid.outs;
      if (!best || outs > best.outs) best = { game, bid, outs };
    }
  }
  if (!best) return null;
  const { game, bid } = best;
  const pitching = bid.side === 'home' ? game.home : game.away;
  const who = `${bid.pitchers.join(', ')} (${pitching.name})`;
  if (bid.status === 'official') return `Tonight's longest bid: ${who} finished ${bid.perfect ? 'a perfect game' : 'a no-hitter'}.`;
  const how = bid.broken_up_by?.text ? `: ${bid.broken_up_by.text}` : '';
  return `Tonight's longest bid: ${who}, hitless through ${bid.hitless_text}${how}.`;
}

export function drawLive() {
  // Tonight: the games of the board's latest day (a long-running server keeps earlier days).
  const all = [...state.games.values()];
  const day = all.map((g) => g.date).sort().pop();
  const games = all.filter((g) => g.date === day);
  const live = games.filter((g) => g.status === 'live').map((g) => ({ game: g, rank: closest(g).rank }))
    .sort((a, b) => compareRanks(a.rank, b.rank) || a.game.start_time.localeCompare(b.game.start_time) || a.game.id.localeCompare(b.game.id))
    .map((entry) => entry.game);
  const upcoming = games.filter((g) => g.status === 'scheduled')
    .sort((a, b) => a.start_time.localeCompare(b.start_time) || a.id.localeCompare(b.id));
  $('#in-progress-heading').hidden = !live.length;
  patch($('#in-progress'), live.map(inProgressRow).join(''));
  $('#coming-up-heading').hidden = !upcoming.length;
  patch($('#coming-up'), upcoming.map(comingUpRow).join(''));
  const nightOver = games.length > 0 && !live.length && !upcoming.length;
  const longest = nightOver ? longestBid(games) : null;
  $('#longest-bid').hidden = !longest;
  setText($('#longest-bid'), longest || '');
  const list = attempts();
  const empty = $('#no-attempts');
  empty.hidden = list.length > 0 && !state.loadError;
  const none = !games.length ? 'No games today.'
    : nightOver ? 'Every game tonight is over.'
      : `No pitcher is hitless through ${Math.floor(attemptOuts() / 3)} innings right now: the games in progress and coming up are below.`;
  setText(empty, boardNotice(none));
  const container = $('#attempts');
  patch(container, list.map(attemptCard).join(''));
  // Through the CSSOM: the Content-Security-Policy refuses inline style attributes.
  for (const { game, bid } of list) {
    const fill = container.querySelector(`[data-key="${CSS.escape(keyOf(game, bid))}"] .bar span`);
    if (fill) fill.style.width = `${Math.min(100, (bid.outs / ((game.scheduled_innings || 9) * 3)) * 100)}%`;
  }
  // An out's odds moment is for the devices that chose odds alerts: the list keeps the innings.
  const shown = state.moments.filter((m) => m.kind !== 'hitless-out' && reached(m)).slice(0, 20);
  $('#no-moments').hidden = shown.length > 0 || !state.loaded;
  patch($('#moments'), shown.map(momentRow).join(''));
}

/** A moment from the stream: read out once its game has reached it (now, or on a later update). */
export function momentArrived(moment) {
  if (moment.kind === 'hitless-out') return;
  unannounced = [...unannounced, moment].slice(-50);
  announceReached();
}

/** What a screen reader says of a moment: its title and, for a bid still on, its chance. */
export function announcement(m) {
  const figure = m.chance ? ` ${m.chance.text} chance.` : '';
  const counts = m.reason && !['completed', 'broken-up', 'ended-not-official'].includes(m.kind) ? " Won't count." : '';
  // Whose bid ended and how: the body's first sentence ("Jason Castro broke it up with a single off
  // Cristian Javier, 1 out in the top of the 5th").
  const how = m.kind === 'broken-up' && m.body ? ` ${m.body.split('. ')[0].replace(/\.$/, '')}.` : '';
  return `${m.title}.${how}${figure}${counts}`;
}

/** Reads out the moments from the stream that their games have now reached. */
export function announceReached() {
  const ready = unannounced.filter(reached);
  if (!ready.length) return;
  unannounced = unannounced.filter((m) => !ready.includes(m));
  // Said once by screen readers (the list itself is not a live region), shortly: what happened and
  // its one figure (the whole alert is in the list).
  $('#announcer').textContent = ready.map(announcement).join(' ');
  // A no-hitter completed: the tab says so (seen from another tab) for a while.
  const done = ready.find((m) => m.kind === 'completed');
  if (done) {
    document.title = `${done.title} · No-Hitter Alerts`;
    clearTimeout(titleTimer);
    titleTimer = setTimeout(() => { document.title = 'No-Hitter Alerts'; }, TITLE_SHOWN_MS);
  }
}
