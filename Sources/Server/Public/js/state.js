// What the page knows: the games and moments from the server (loaded, then kept up to date by the
// stream), the server's configuration, and the fan's favourite teams. No DOM here.

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
};

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
