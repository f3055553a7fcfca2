// The tabs (#live, #scores, #game/ID, …): one view per tab. Only the visible view is drawn; a
// change to a hidden one marks it dirty, and it is drawn when shown. A tab opens at its top.
import { $$ } from './dom.js';
import { gameIDOf } from './format.js';
import { record } from './analytics.js';
import { state } from './state.js';

const views = new Map();
let shownTab = null;
let shownHash = null;

/**
 * A tab's view: `show(argument)` runs each time the tab is shown (loads what it asks the server
 * for); `draw()` brings it up to date with the page's state, when visible.
 */
export function registerView(id, { show, draw } = {}) {
  views.set(id, { show, draw, dirty: true });
}

let drawPending = false;

// The visible view drawn once for the changes of a frame: a stream busy with pitches (dozens of
// game events a second in a fast replay) draws the board once per frame, not once per event.
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  const run = () => {
    if (!drawPending) return;
    drawPending = false;
    const view = views.get(shownTab);
    if (view?.dirty && view.draw) draw(view);
  };
  requestAnimationFrame(run);
  setTimeout(run, 250);  // a hidden page gets no frames
}

/** Draws each named view shortly (once per frame) if it is visible, else when it is next shown. */
export function invalidate(...ids) {
  for (const id of ids) {
    const view = views.get(id);
    if (!view?.draw) continue;
    view.dirty = true;
    if (id === shownTab) scheduleDraw();
  }
}

function draw(view) {
  view.dirty = false;
  view.draw();
}

export function showTab() {
  const hash = location.hash || '#live';
  const [tab, argument] = hash.slice(1).split('/');
  $$('.tab').forEach((section) => { section.hidden = section.id !== tab; });
  const nav = tab === 'game' || tab === 'standings' ? 'scores' : tab;
  $$('nav a').forEach((link) => {
    link.classList.toggle('active', link.dataset.tab === nav);
    if (link.dataset.tab === nav) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
  });
  if (tab !== 'metrics') record('views', { tab });  // the operator's own page is not the app's use
  state.gamePage = tab === 'game' ? gameIDOf(decodeURIComponent(argument || '')) : null;
  shownTab = tab;
  const view = views.get(tab);
  view?.show?.(argument);
  if (view?.dirty && view.draw) draw(view);
  if (shownHash !== null && shownHash !== hash) window.scrollTo(0, 0);
  shownHash = hash;
}

// A link to a tab shows it without the browser scrolling to the section (on a phone that scrolled
// the header and its tabs away); focus goes to the tab's heading for keyboard and screen readers.
export function wireTabs() {
  window.addEventListener('hashchange', showTab);
  document.addEventListener('click', (event) => {
    const link = event.target.closest('a[href^="#"]');
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const tab = link.getAttribute('href').slice(1).split('/')[0];
    if (!document.getElementById(tab)?.classList.contains('tab')) return;
    event.preventDefault();
    if (location.hash !== link.getAttribute('href')) history.pushState(null, '', link.getAttribute('href'));
    showTab();
    window.scrollTo(0, 0);
    const heading = document.querySelector(`#${tab} h2, #${tab} h3`);
    if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
  });
}
