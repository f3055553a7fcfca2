// The Deals tab: is it on today (a big YES or NO per deal in force), and a season's deal days as
// charts by month and by franchise (SVG drawn here), for every deal or one.
import { api } from './api.js';
import { $, esc, patch } from './dom.js';
import { barChart, monthName } from './format.js';
import { delayed, state } from './state.js';

function dealCard(d) {
  return `<article class="card deal ${d.on ? 'on' : 'off'}" data-key="${esc(d.rule)}" data-rule="${esc(d.rule)}">
    <div class="answer" aria-label="${d.on ? 'Yes' : 'No'}">${d.on ? 'YES' : 'NO'}</div>
    <h3>${esc(d.sponsor)}</h3>
    <div>${esc(d.reward)}${d.code ? ` · code <strong>${esc(d.code)}</strong>` : ''}</div>
    <div class="muted">When ${esc(d.condition)} · ${esc(d.day)} (${esc(d.time_zone)})</div>
    ${d.because.map((b) => `<p>${esc(b.why)} <span class="muted">Redeem ${esc(b.window)}.</span></p>`).join('')}
    ${!d.on && d.why_not ? `<p class="why-not" data-key="why-not">Not today: ${esc(d.why_not)}.</p>` : ''}
    ${d.note ? `<details><summary>What is not confirmed</summary><p class="muted">${esc(d.note)}</p></details>` : ''}
  </article>`;
}

export async function loadDeals() {
  const status = $('#deals-status');
  try {
    const today = await api(delayed('/api/deals/today'));
    const shown = today.deals.filter((d) => d.in_force || d.on);
    const resting = today.deals.filter((d) => !d.in_force && !d.on).map((d) => d.sponsor);
    status.textContent = (shown.length ? '' : 'No deal is in force today. ')
      + (resting.length ? `Not in force today (past seasons' promotions): ${resting.join(', ')}.` : '');
    patch($('#deals-today'), shown.map(dealCard).join(''));
    const rules = $('#deal-rule');
    if (rules.options.length === 1) {
      rules.insertAdjacentHTML('beforeend', today.deals.map((d) => `<option value="${esc(d.rule)}">${esc(d.sponsor)} (${esc(d.team?.name || 'any team')})</option>`).join(''));
      const seasons = new Set((state.config?.seasons || []).map(Number));
      seasons.add(Number((today.deals[0]?.day || '').slice(0, 4)) || new Date().getFullYear());
      $('#deal-season').innerHTML = [...seasons].sort((a, b) => b - a).map((y) => `<option>${y}</option>`).join('');
    }
    await loadDealHistory();
  } catch (error) {
    status.textContent = `Deals could not be loaded: ${error.message}`;
  }
}

async function loadDealHistory() {
  const season = $('#deal-season').value;
  const rule = $('#deal-rule').value;
  const path = rule ? `/api/deals/${encodeURIComponent(rule)}/history?season=${season}` : `/api/deals/history?season=${season}`;
  try {
    const history = await api(path);
    $('#deal-total').textContent = `${history.total_days} deal day${history.total_days === 1 ? '' : 's'} in ${history.season}.`;
    $('#chart-month').innerHTML = barChart(history.by_month.map((m) => ({ label: monthName(m.month), value: m.days })), 'Deal days by month');
    $('#chart-franchise').innerHTML = barChart(history.by_franchise.map((f) => ({ label: f.name, value: f.days })), 'Deal days by franchise');
  } catch (error) {
    $('#deal-total').textContent = `The history could not be loaded: ${error.message}`;
  }
}

export function wireDeals() {
  $('#deal-rule').addEventListener('change', loadDealHistory);
  $('#deal-season').addEventListener('change', loadDealHistory);
}
