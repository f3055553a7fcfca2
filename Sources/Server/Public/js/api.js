// The server's JSON API: errors come back as Errors carrying the server's own message.
import { delayed, state } from './state.js';

export async function api(path, options = {}) {
  const response = await fetch(path, { headers: { 'content-type': 'application/json', ...(options.headers || {}) }, ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error?.message || `HTTP ${response.status}`);
  return body;
}

// The server's configuration: clubs, seasons, where the games come from. Asked again with the
// games when the first try found the service down. True when it was loaded just now.
export async function loadConfig() {
  if (state.config?.teams) return false;
  try { state.config = await api('/api/config'); } catch { state.config = {}; return false; }
  return true;
}

// Games and moments; the stream position the games were read at is kept for the first connect.
export async function loadGamesAndMoments() {
  const response = await fetch(delayed('/api/games'));
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const games = await response.json();
  const position = response.headers.get('X-Stream-Position');
  if (state.position == null && position != null) state.position = Number(position);
  state.games = new Map(games.map((game) => [game.id, game]));
  state.moments = await api(delayed('/api/moments?limit=100'));
}
