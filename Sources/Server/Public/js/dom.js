// The page's DOM helpers: escaping, and patching a region to new HTML by changing only what
// changed, so a live update keeps focus, scroll and a screen reader's place (STYLE.md: keyed
// updates, no re-rendering a view).

export const $ = (selector) => document.querySelector(selector);
export const $$ = (selector) => [...document.querySelectorAll(selector)];
export const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

/** Sets an element's text only when it changed (a status region would read the same words again). */
export function setText(element, text) {
  if (element.textContent !== String(text)) element.textContent = text;
}

// Attributes the page or the reader owns once an element exists: a width set through the CSSOM
// (the Content-Security-Policy refuses inline style attributes), a <details> opened or closed by
// hand, the tabindex given to a heading that took focus. New HTML sets them only on new elements.
const OWNED = new Set(['style', 'open', 'tabindex']);

const keyOf = (node) => (node.nodeType === Node.ELEMENT_NODE ? node.getAttribute('data-key') : null);

function parse(html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  return template.content;
}

function syncAttributes(old, fresh) {
  for (const { name } of [...old.attributes]) {
    if (!fresh.hasAttribute(name) && !OWNED.has(name)) old.removeAttribute(name);
  }
  for (const { name, value } of fresh.attributes) {
    if (old.getAttribute(name) !== value && !(OWNED.has(name) && old.hasAttribute(name))) old.setAttribute(name, value);
  }
}

function morph(old, fresh) {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue;
    return;
  }
  syncAttributes(old, fresh);
  morphChildren(old, fresh);
}

// Children are matched by data-key where the new HTML gives one (cards, rows, moments, and the
// links in them), else by position and tag name. A keyed child is moved only when the order
// really changed; unkeyed leftovers in its way are dropped (the new HTML makes them again).
function morphChildren(parent, freshParent) {
  const fresh = [...freshParent.childNodes];
  const wanted = new Set(fresh.map(keyOf).filter(Boolean));
  const keyed = new Map();
  for (const child of parent.children) if (keyOf(child)) keyed.set(keyOf(child), child);
  let cursor = parent.firstChild;
  const skipStale = () => {
    while (cursor && keyOf(cursor) && !wanted.has(keyOf(cursor))) { const next = cursor.nextSibling; cursor.remove(); cursor = next; }
  };
  for (const node of fresh) {
    skipStale();
    const key = keyOf(node);
    let match = null;
    if (key) {
      match = keyed.get(key) || null;
      keyed.delete(key);
      if (match && match.nodeName !== node.nodeName) {
        if (match === cursor) cursor = cursor.nextSibling;
        match.remove();
        match = null;
      }
      if (match && match !== cursor) {
        while (cursor && cursor !== match && !keyOf(cursor)) { const next = cursor.nextSibling; cursor.remove(); cursor = next; }
        skipStale();
        if (match !== cursor) parent.insertBefore(match, cursor);
      }
    } else if (cursor && !keyOf(cursor) && cursor.nodeType === node.nodeType && cursor.nodeName === node.nodeName) {
      match = cursor;
    }
    if (!match) { parent.insertBefore(node, cursor); continue; }
    if (match === cursor) cursor = cursor.nextSibling;
    morph(match, node);
  }
  while (cursor) { const next = cursor.nextSibling; cursor.remove(); cursor = next; }
}

// Focus that a move took away (a card whose place in the order changed) is given back.
function keepingFocus(change) {
  const focused = document.activeElement;
  change();
  if (focused && focused !== document.body && focused.isConnected && document.activeElement !== focused) {
    focused.focus({ preventScroll: true });
  }
}

/** Makes `container`'s content match `html`, changing only the nodes that differ. */
export function patch(container, html) {
  keepingFocus(() => morphChildren(container, parse(html)));
}
