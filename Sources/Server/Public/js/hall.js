// The Hall of Fame tab, in fan language: every pitching side of a season ranked by outs before the
// first hit, in the server's words (clubs as they were that season, the hit that ended the bid);
// dates like "Aug 25". Loaded each time it is shown, and when the season changes.
import { api } from './api.js';
import { $, esc, patch } from './dom.js';
import { shortDate } from './format.js';
import { delayed, state } from './state.js';

export async function loadHallOfFame() {
  const season = $('#season').value;
  if (!season) return;
  const body = $('#hall tbody');
  if (!body.rows.length) body.innerHTML = '<tr><td colspan="6">Loading…</td></tr>';
  try {
    const entries = await api(delayed(`/api/hall-of-fame/${season}?limit=50`));
    patch(body, entries.map((entry) => `<tr data-key="${esc(`${entry.game_id}-${entry.pitching_team.abbreviation}`)}">
      <td class="rank">${entry.rank}</td><td data-label="Date">${esc(shortDate(entry.date))}</td>
      <td data-label="Team">${esc(entry.pitching_team.name)} <span class="muted">vs ${esc(entry.batting_team.name)}</span></td>
      <td data-label="Pitchers">${esc(entry.pitchers.join(', '))}</td><td data-label="Hitless">${esc(entry.hitless)}</td>
      <td data-label="How it ended">${esc(entry.ending)}${entry.wont_count ? `<div class="unofficial">Won't count: ${esc(entry.wont_count)}.</div>` : ''}</td></tr>`).join(''));
  } catch (error) {
    patch(body, `<tr><td colspan="6">The Hall of Fame could not be loaded: ${esc(error.message)}</td></tr>`);
  }
}

/** The seasons the server has, newest as it lists them. */
export function drawSeasons() {
  $('#season').innerHTML = (state.config.seasons || []).map((s) => `<option>${esc(s)}</option>`).join('');
}

export function wireHallOfFame() {
  $('#season').addEventListener('change', loadHallOfFame);
}
