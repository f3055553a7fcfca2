// Words and numbers for the page, from what the server sends: its words are shown as they come
// (situations, hitless spans, play headings, club names); nothing here reads baseball notation.
import { esc } from './dom.js';
import { clubs, state } from './state.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Aug 25" for 2020-08-25. */
export const shortDate = (date) => { const [, m, d] = date.split('-').map(Number); return `${MONTHS[m - 1]} ${d}`; };

/** "Aug" for 2020-08 (a month of the deals' history). */
export const monthName = (month) => MONTHS[Number(month.slice(5, 7)) - 1] || month;

/** A time of day in the viewer's own clock. */
export const clockTime = (iso) => new Date(iso).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });

/** "1 out", "2 outs". */
export const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What a board says while it has nothing to show: loading, the service down, or `loadedWords`. */
export const boardNotice = (loadedWords) => (state.loadError ? `The service cannot be reached (${state.loadError}); trying again…`
  : state.loaded ? loadedWords : 'Loading the games…');

/** A club's full name and abbreviation by its code, as the server names them this season. */
export const clubName = (code) => clubs().find((t) => t.code === code)?.name || code;
export const clubAbbreviation = (code) => clubs().find((t) => t.code === code)?.abbreviation || code;

// Where a game stands, in the server's words ("Top 5th, 1 out", "Mid 5th", "Final"); before the
// first pitch, its start in the viewer's own time.
export function situation(game) {
  if (game.status === 'scheduled' && (!game.status_text || game.status_text === 'Scheduled')) {
    return 'Starts ' + clockTime(game.start_time);
  }
  return game.situation || game.status_text;
}

/** "LAA 1, HOU 6". */
export const score = (game) => `${game.away.abbreviation} ${game.away.runs}, ${game.home.abbreviation} ${game.home.runs}`;

/** "Los Angeles Angels at Houston Astros". */
/** A game's address as a fan reads it: `2020-08-25-PIT-CWS` (`-1`, `-2` in a doubleheader). */
export const gameSlug = (game) => `${game.date}-${game.away.abbreviation}-${game.home.abbreviation}${game.game_number ? `-${game.game_number}` : ''}`;

/** The link to a game's page; a game not on the board (an old moment's) by its id. */
export const gameHref = (gameOrID) => {
  const game = typeof gameOrID === 'string' ? state.games.get(gameOrID) : gameOrID;
  return `#game/${encodeURIComponent(game ? gameSlug(game) : gameOrID)}`;
};

/** The game a page address names (by its slug or its id): its id, or the address when unknown. */
export const gameIDOf = (address) => [...state.games.values()].find((g) => gameSlug(g) === address)?.id ?? address;

export const matchupName = (game) => `${game.away.name} at ${game.home.name}`;

// Where to watch (HTML): the broadcasts the source names; MLB.TV with its link.
export function whereToWatch(game) {
  if (!game.broadcasts.length) {
    return state.config?.source === 'statsapi' ? 'Where to watch: not announced for this game' : 'A replay of a past game: no broadcast';
  }
  return 'Watch or listen: ' + game.broadcasts.map((name) =>
    (/^MLB\.?TV$/i.test(name) ? `<a href="https://www.mlb.com/tv" rel="noopener" data-key="mlbtv">${esc(name)}</a>` : esc(name))).join(', ');
}

// A bid's pitching line summed over its pitchers' lines (numbers from the server).
export function pitchingLine(bid) {
  const sum = (key) => bid.lines.reduce((total, line) => total + (line[key] ?? 0), 0);
  const outs = sum('outs');
  const pitches = bid.lines.every((line) => line.pitches != null) ? sum('pitches') : null;
  return `${Math.floor(outs / 3)}.${outs % 3} IP · ${sum('hits')} H · ${sum('walks')} BB · ${sum('strikeouts')} K`
    + (pitches != null ? ` · ${pitches} pitches` : '');
}

/** " (5.2 IP, 0 H, 7 K, 80 P)" for the pitcher on the mound. */
export function pitcherSummary(line) {
  if (!line) return '';
  return ` (${line.innings_pitched} IP, ${line.hits} H, ${line.strikeouts} K${line.pitches != null ? `, ${line.pitches} P` : ''})`;
}

// The outs in the inning as three dots (HTML), named for screen readers.
export function outsDots(outs) {
  return `<span class="outs" role="img" aria-label="${count(outs, 'out')}">${[0, 1, 2].map((i) => `<span class="dot${i < outs ? ' on' : ''}"></span>`).join('')}</span>`;
}

// The bases as a diamond (SVG), named for screen readers.
export function diamond(bases) {
  const [first, second, third] = bases || [false, false, false];
  const label = [first && 'first', second && 'second', third && 'third'].filter(Boolean);
  return `<svg class="diamond" viewBox="0 0 40 30" role="img" aria-label="${label.length ? 'runners on ' + label.join(', ') : 'bases empty'}">
    <rect class="${second ? 'on' : ''}" x="15" y="2" width="10" height="10" transform="rotate(45 20 7)"/>
    <rect class="${third ? 'on' : ''}" x="4" y="13" width="10" height="10" transform="rotate(45 9 18)"/>
    <rect class="${first ? 'on' : ''}" x="26" y="13" width="10" height="10" transform="rotate(45 31 18)"/></svg>`;
}

// A horizontal bar chart (SVG): one row per entry, scaled to the largest; it fits any width.
/**
 * Stacked bars, one per bucket (`{label, parts: [{series, value}]}`), the five largest series in
 * their own colours and the rest as "other", with a legend; the figures in the label for readers.
 */
export function stackedChart(buckets, title, empty) {
  const totals = new Map();
  for (const bucket of buckets) for (const part of bucket.parts) totals.set(part.series, (totals.get(part.series) || 0) + part.value);
  if (!totals.size) return `<p class="muted">${esc(empty)}</p>`;
  const top = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([series]) => series);
  const series = totals.size > top.length ? [...top, 'other'] : top;
  const colour = (name) => `s${top.includes(name) ? top.indexOf(name) : 5}`;
  const rows = buckets.map((bucket) => {
    const byName = new Map();
    for (const part of bucket.parts) {
      const name = top.includes(part.series) ? part.series : 'other';
      byName.set(name, (byName.get(name) || 0) + part.value);
    }
    return { label: bucket.label, parts: series.map((name) => ({ name, value: byName.get(name) || 0 })) };
  });
  const max = Math.max(...rows.map((r) => r.parts.reduce((sum, p) => sum + p.value, 0)), 1);
  const row = 24;
  const height = rows.length * row + 8;
  const bars = rows.map((r, i) => {
    const y = i * row + 4;
    let x = 22;
    const rects = r.parts.filter((p) => p.value > 0).map((p) => {
      const width = (p.value / max) * 70;
      const rect = `<rect x="${x}%" y="${y + 3}" width="${width}%" height="${row - 8}" class="${colour(p.name)}"></rect>`;
      x += width;
      return rect;
    }).join('');
    const total = r.parts.reduce((sum, p) => sum + p.value, 0);
    return `<text x="0" y="${y + 15}" class="label">${esc(r.label)}</text>${rects}<text x="${x + 1}%" y="${y + 15}" class="value">${total}</text>`;
  }).join('');
  // The key as a list above the bars: it wraps on a phone, and long names never overlap.
  const keys = series.map((name) => `<li class="${colour(name)}">${esc(name)}</li>`).join('');
  const said = rows.map((r) => `${r.label}: ${r.parts.filter((p) => p.value).map((p) => `${p.name} ${p.value}`).join(', ') || 'none'}`).join('; ');
  return `<ul class="legend" aria-hidden="true">${keys}</ul><svg role="img" aria-label="${esc(title)}. ${esc(said)}" width="100%" height="${height}">${bars}</svg>`;
}

export function barChart(entries, title, empty = 'No deal days.') {
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

// A pitch's call by its code: a ball, a strike (called or swinging), a foul, or in play.
const callClass = (code) => (['B', '*B', 'I', 'P', 'V', 'H'].includes(code) ? 'ball'
  : ['F', 'L', 'R'].includes(code) ? 'foul'
    : ['X', 'D', 'E'].includes(code) ? 'inplay' : 'strike');

/** The plate appearance's pitches on a strike zone, the catcher's view (SVG; HTML): each numbered,
 * coloured by its call (a ball hollow, so the call is not told by colour alone), at its height
 * scaled to the batter's zone; `large` for the game page, with
 * a list giving each pitch's type, speed and call. Empty where the source does not track pitches. */
export function strikeZone(matchup, { large = false } = {}) {
  const pitches = matchup?.zone;
  if (!pitches?.length) return '';
  // Feet: the plate is 17 inches wide; each pitch's height put on a zone from 1.5 to 3.5 feet.
  const X = 1.6;
  const zx = 17 / 24;
  const height = (p) => 1.5 + ((p.z - p.bottom) / (p.top - p.bottom)) * 2;
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const words = (p) => [p.type, p.speed != null ? `${Math.round(p.speed)} mph` : '', p.call].filter(Boolean).join(', ');
  const label = `Strike zone, the catcher's view: ${pitches.map((p) => `${p.number}: ${words(p)}`).join('; ')}`;
  const dots = pitches.map((p) => {
    const x = clamp(p.x, -X + 0.2, X - 0.2).toFixed(2);
    const y = (5 - clamp(height(p), 0.7, 4.3)).toFixed(2);
    return `<g class="pitch ${callClass(p.code)}"><circle cx="${x}" cy="${y}" r="0.24"/><text x="${x}" y="${y}" dy="0.09">${p.number}</text></g>`;
  }).join('');
  // On the game page the list beside it says each pitch: the figure is not said twice.
  const named = large ? 'aria-hidden="true"' : `role="img" aria-label="${esc(label)}"`;
  const svg = `<svg class="zone${large ? ' large' : ''}" viewBox="${-X} 0.5 ${2 * X} 4" ${named}>
    <rect class="box" x="${-zx}" y="1.5" width="${2 * zx}" height="2"/>
    <line class="third" x1="${-zx / 3}" x2="${-zx / 3}" y1="1.5" y2="3.5"/><line class="third" x1="${zx / 3}" x2="${zx / 3}" y1="1.5" y2="3.5"/>
    <line class="third" x1="${-zx}" x2="${zx}" y1="${1.5 + 2 / 3}" y2="${1.5 + 2 / 3}"/><line class="third" x1="${-zx}" x2="${zx}" y1="${3.5 - 2 / 3}" y2="${3.5 - 2 / 3}"/>
    ${dots}</svg>`;
  if (!large) return svg;
  return `<figure class="zone-plot" data-key="zone" aria-label="Strike zone, the catcher's view">${svg}<figcaption><ol class="pitch-list">${pitches.map((p) => `<li value="${p.number}"><span class="swatch ${callClass(p.code)}" aria-hidden="true"></span>${esc(words(p))}</li>`).join('')}</ol></figcaption></figure>`;
}

/** A game's ABS challenges left, in a line (HTML): `CWS 2 left (1 won) · PIT 1 left (1 lost)`. */
export function challengesLine(game) {
  const c = game.challenges;
  if (!c || game.status === 'scheduled') return '';
  const team = (t) => {
    const used = [t.won ? `${t.won} won` : '', t.lost ? `${t.lost} lost` : ''].filter(Boolean).join(', ');
    return `${esc(t.team)} ${t.remaining} left${used ? ` (${used})` : ''}`;
  };
  return `<div class="abs" data-key="abs"><abbr title="automated ball-strike challenges">ABS</abbr>: ${team(c.away)} · ${team(c.home)}</div>`;
}
