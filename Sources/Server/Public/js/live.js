// The Live tab: the attempt cards (the centrepiece) and the recent moments, each keyed, so a live
// update changes the card or row that changed. A bid hitless through the minimum is shown while it
// is alive; a completed no-hitter becomes a celebration card; a broken-up bid stays while its game
// is on (at most BROKEN_UP_SHOWN_MS after this page saw it broken), saying who broke it up and how.
// The announcer (a polite live region outside the tabs) reads each moment from the stream once.
import { $, esc, patch, setText } from './dom.js';
import { boardNotice, clockTime, count, matchupName, outsDots, pitchingLine, score, situation, whereToWatch } from './format.js';
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
  return list.sort((a, b) => rank(a) - rank(b) || b.bid.outs - a.bid.outs);
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
    // How often bids like this one finished, in the server's words (by outs, 27 and more as 27).
    const odds = state.config?.odds?.[String(Math.min(bid.outs, 27))];
    status = `<div class="progress">Hitless through ${esc(bid.hitless_text)}</div>${bar}
      ${odds ? `<div class="odds muted">History: ${esc(odds)}.</div>` : ''}
      <div class="togo"><strong>${count(toGo, 'out')} to go</strong>${fielding && game.status === 'live' && game.outs < 3 ? ` ${outsDots(game.outs)}` : ''}</div>${where}`;
  }
  const key = keyOf(game, bid);
  return `<article class="card attempt ${bid.status}" data-key="${esc(key)}" data-status="${bid.status}" data-outs="${bid.outs}" data-history="${(outsSeen.get(key) || [bid.outs]).join(',')}">${headline}
    <h3 class="pitcher">${esc(bid.pitchers.join(', '))}${marks}</h3>
    <div class="muted">${esc(pitching.name)} vs ${esc(opponent.name)}</div>
    ${status}
    ${bid.lines.length ? `<div class="line">${esc(pitchingLine(bid))}</div>` : ''}
    ${bid.pitchers.length > 1 && bid.status === 'alive' ? `<div class="muted">Now pitching: ${esc(bid.current_pitcher)}</div>` : ''}
    <div class="watch">${whereToWatch(game)}</div>
    <a class="game-link" data-key="game-link" href="#game/${encodeURIComponent(game.id)}">Game page<span class="visually-hidden">: ${esc(matchupName(game))}</span></a></article>`;
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
  return `<li data-key="${esc(m.id)}" data-id="${esc(m.id)}"><time datetime="${esc(m.occurred_at)}">${esc(clockTime(m.occurred_at))}</time> <a href="#game/${encodeURIComponent(m.game_id)}"><strong>${esc(m.title)}</strong></a> — ${esc(m.body)}</li>`;
}

export function drawLive() {
  const list = attempts();
  const empty = $('#no-attempts');
  empty.hidden = list.length > 0 && !state.loadError;
  setText(empty, boardNotice(`No pitcher is hitless through ${Math.floor(attemptOuts() / 3)} innings right now.`));
  const container = $('#attempts');
  patch(container, list.map(attemptCard).join(''));
  // Through the CSSOM: the Content-Security-Policy refuses inline style attributes.
  for (const { game, bid } of list) {
    const fill = container.querySelector(`[data-key="${CSS.escape(keyOf(game, bid))}"] .bar span`);
    if (fill) fill.style.width = `${Math.min(100, (bid.outs / ((game.scheduled_innings || 9) * 3)) * 100)}%`;
  }
  const shown = state.moments.filter(reached).slice(0, 20);
  $('#no-moments').hidden = shown.length > 0 || !state.loaded;
  patch($('#moments'), shown.map(momentRow).join(''));
}

/** A moment from the stream: read out once its game has reached it (now, or on a later update). */
export function momentArrived(moment) {
  unannounced = [...unannounced, moment].slice(-50);
  announceReached();
}

/** Reads out the moments from the stream that their games have now reached. */
export function announceReached() {
  const ready = unannounced.filter(reached);
  if (!ready.length) return;
  unannounced = unannounced.filter((m) => !ready.includes(m));
  // Said once by screen readers (the list itself is not a live region).
  $('#announcer').textContent = ready.map((m) => `${m.title}. ${m.body}`).join(' ');
  // A no-hitter completed: the tab says so (seen from another tab) for a while.
  const done = ready.find((m) => m.kind === 'completed');
  if (done) {
    document.title = `${done.title} · No-Hitter Alerts`;
    clearTimeout(titleTimer);
    titleTimer = setTimeout(() => { document.title = 'No-Hitter Alerts'; }, TITLE_SHOWN_MS);
  }
}
