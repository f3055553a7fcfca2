// The live stream (Server-Sent Events at /api/stream) and the banner that tells its truth.
// EventSource resumes by itself with Last-Event-ID; after a cut the page loads its games again
// (`onReconnect`), since what the stream said meanwhile is in them.
import { $ } from './dom.js';
import { delayed, state } from './state.js';

export function connect({ onGame, onMoment, onReconnect }) {
  // From where the loaded games stood, so nothing between the load and the stream is lost.
  // Held back by the fan's spoiler delay, as the games were loaded.
  const address = delayed(state.position != null ? `/api/stream?after=${state.position}` : '/api/stream');
  const source = new EventSource(address);
  document.body.dataset.stream = address;
  const banner = $('#connection');
  let cutOff = false;
  source.onopen = () => {
    banner.textContent = state.delay ? `${state.delay} s behind` : 'live';
    banner.classList.remove('down');
    if (cutOff) { cutOff = false; onReconnect(); }
  };
  source.onerror = () => {
    cutOff = true;
    banner.textContent = navigator.onLine === false ? 'offline: waiting for the network…' : 'cut off: reconnecting…';
    banner.classList.add('down');
  };
  source.addEventListener('game', (event) => onGame(JSON.parse(event.data)));
  source.addEventListener('moment', (event) => onMoment(JSON.parse(event.data)));
  return source;
}
