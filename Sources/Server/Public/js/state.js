// What the page knows: the games and moments from the server (loaded, then kept up to date by the
// stream), the server's configuration, and the fan's favourite teams. No DOM here.

// (readJSON and spoilerDelay, used below, are function declarations: hoisted.)
export const state = {
  games: new Map(),
  moments: [],
  config: null,
  loaded: false,
  loadError: null,
  // Where the stream stood when the games were read: it opens after that.
  position: null,
  reloads: 0,
  streamUpdates: 0,
  // The game whose page is open (#game/ID), or null.
  gamePage: null,
  favourites: readJSON('nohit-favourites', []),
  // Each club's W-L before the board's day (by MLB's abbreviation), and that day.
  records: new Map(),
  recordsDay: null,
  // The fan's spoiler delay as every surface of the page shows it (seconds, rounded up as the
  // server keeps its delayed stream): 0 is live.
  delay: spoilerDelay(readJSON('nohit-preferences', null)?.spoiler_delay_seconds),
};

/** The delays the server keeps its stream behind by: the fan's is rounded up to one of them. */
export function spoilerDelay(seconds) {
  const asked = Math.max(0, Math.min(300, Number(seconds) || 0));
  return asked === 0 ? 0 : [30, 60, 120, 300].find((delay) => delay >= asked);
}

const delayListeners = [];

/** `listener` runs when the fan's spoiler delay changes (with the delay asked, before rounding). */
export function onDelay(listener) { delayListeners.push(listener); }

/** The fan's spoiler delay, from the settings: every surface is loaded again when it changes. */
export function setDelay(seconds) {
  const delay = spoilerDelay(seconds);
  const changed = delay !== state.delay;
  state.delay = delay;
  for (const listener of delayListeners) listener(Number(seconds) || 0, changed);
}

/** `path` held back by the fan's spoiler delay (`?delay=` added when there is one). */
export function delayed(path) {
  if (!state.delay) return path;
  return `${path}${path.includes('?') ? '&' : '?'}delay=${state.delay}`;
}

/** A stored JSON value, or `fallback` when there is none or it does not parse. */
export function readJSON(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key) || 'null') ?? fallback; } catch { return fallback; }
}

/** The tab in the address ("live" when none); #game/ID is the "game" tab. */
export const currentTab = () => (location.hash || '#live').slice(1).split('/')[0];

/** The outs a bid needs before the page shows it as an attempt (the server says how many). */
export const attemptOuts = () => state.config?.attempt_outs ?? 12;

/** The clubs of the season, as the server names them. */
export const clubs = () => state.config?.teams || [];

const favouriteListeners = [];

/** `listener` runs whenever the favourite teams change (added, removed, reordered). */
export function onFavourites(listener) { favouriteListeners.push(listener); }

/** The fan's favourite teams, in their order; kept in this browser. */
export function setFavourites(list) {
  state.favourites = list;
  localStorage.setItem('nohit-favourites', JSON.stringify(list));
  for (const listener of favouriteListeners) listener(list);
}

/** The push registration this browser has with the server, or null. */
export const device = () => readJSON('nohit-device', null);
