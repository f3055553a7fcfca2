// The page's own metrics (docs/analytics.md): its views, taps and opened alerts, recorded as Keen
// events into this server's web project (/api/config names it and its public write key), queued
// in localStorage and sent in batches as Keen's clients send them: results by index, a success or
// an invalid event leaves the queue, others are tried again up to three times; sendBeacon when
// the page is hidden. No personal data: the device is a random id made here. Settings says so,
// and its switch stops it (the queue and the id are deleted then; nothing is recorded or sent).
import { currentTab, state } from './state.js';

const QUEUE = 'nohit-metrics-queue';
const INVALID = ['InvalidCollectionNameError', 'InvalidPropertyNameError', 'InvalidPropertyValueError'];
const newID = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`);
const stored = (storage, key) => { let v = storage.getItem(key); if (!v) { v = newID(); storage.setItem(key, v); } return v; };
const load = () => { try { return JSON.parse(localStorage.getItem(QUEUE) || '[]'); } catch { return []; } };
const save = (queue) => { try { localStorage.setItem(QUEUE, JSON.stringify(queue.slice(-500))); } catch { /* full: dropped */ } };
const OFF = 'nohit-metrics-off';
/** Whether this browser records its use of the page (Settings' switch). */
export const recording = () => localStorage.getItem(OFF) !== '1';
const endpoint = () => recording() && state.config?.analytics && `/3.0/projects/${encodeURIComponent(state.config.analytics.project_id)}/events`;

/** Turns the page's recording on or off; off deletes what is queued and the device's random id. */
export function setRecording(on) {
  if (on) {
    localStorage.removeItem(OFF);
    return;
  }
  localStorage.setItem(OFF, '1');
  localStorage.removeItem(QUEUE);
  localStorage.removeItem('nohit-device-id');
  clearTimeout(timer);
}
let timer = null;
let sending = false;

export function record(collection, properties) {
  if (!recording()) return;
  const device = stored(localStorage, 'nohit-device-id');
  const firstVisit = !localStorage.getItem('nohit-visited');
  localStorage.setItem('nohit-visited', '1');
  const event = {
    ...properties,
    keen: { timestamp: new Date().toISOString(), uniqueness_token: newID() },
    session_id: stored(sessionStorage, 'nohit-session-id'),
    user: { id_hash: device },
    standard_properties: {
      app: 'web', language: navigator.language, screen_scale: window.devicePixelRatio || 1,
      screen_width: window.screen?.width, first_visit: firstVisit,
      notifications: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
      installed: window.matchMedia?.('(display-mode: standalone)').matches || false,
    },
  };
  const queue = load();
  queue.push({ collection, event, attempts: 0 });
  save(queue);
  clearTimeout(timer);
  timer = setTimeout(flush, 5000);
}

function batch(entries) {
  const body = {};
  for (const entry of entries) (body[entry.collection] ||= []).push(entry.event);
  return body;
}

export async function flush() {
  const url = endpoint();
  if (!url || sending) return;
  const entries = load().slice(0, 100);
  if (!entries.length) return;
  sending = true;
  const done = new Set();
  const failed = new Set();
  try {
    const response = await fetch(url, { method: 'POST', headers: { authorization: state.config.analytics.write_key, 'content-type': 'application/json' }, body: JSON.stringify(batch(entries)) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const results = await response.json();
    const seen = {};
    for (const entry of entries) {
      const index = seen[entry.collection] = (seen[entry.collection] ?? -1) + 1;
      const result = (results[entry.collection] || [])[index];
      (result?.success || INVALID.includes(result?.error?.name) ? done : failed).add(entry.event.keen.uniqueness_token);
    }
  } catch {
    for (const entry of entries) failed.add(entry.event.keen.uniqueness_token);
  } finally {
    sending = false;
  }
  const queue = load().filter((entry) => !done.has(entry.event.keen.uniqueness_token)).map((entry) =>
    failed.has(entry.event.keen.uniqueness_token) ? { ...entry, attempts: entry.attempts + 1 } : entry).filter((entry) => entry.attempts < 3);
  save(queue);
  if (done.size && queue.length) flush();
}

export function wireAnalytics() {
  // A page being hidden may never run again: what is queued goes by beacon (text/plain, the key
  // in the URL; the uniqueness tokens keep a later resend from counting twice).
  document.addEventListener('visibilitychange', () => {
    const url = endpoint();
    if (document.visibilityState !== 'hidden' || !url || !navigator.sendBeacon) return;
    const entries = load().slice(0, 100);
    if (entries.length) navigator.sendBeacon(`${url}?api_key=${encodeURIComponent(state.config.analytics.write_key)}`, JSON.stringify(batch(entries)));
  });
  // Taps on buttons and links: what was tapped and on which tab.
  document.addEventListener('click', (event) => {
    const target = event.target.closest('button, a, summary');
    if (!target) return;
    const tab = currentTab();
    if (tab === 'metrics') return;  // the operator's own page is not the app's use
    const label = (target.dataset.tab || target.id || target.getAttribute('aria-label') || target.textContent || '').trim().slice(0, 60);
    record('touches', { target: label, element: target.tagName.toLowerCase(), tab });
  }, true);
}
