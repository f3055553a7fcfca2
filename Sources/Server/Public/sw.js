// No-Hitter Alerts service worker: shows each Web Push alert; a bid's alerts replace each other.
self.addEventListener('push', (event) => {
  let alert = { title: 'No-Hitter Alerts', body: '' };
  try { alert = event.data.json(); } catch (e) { if (event.data) alert.body = event.data.text(); }
  event.waitUntil(self.registration.showNotification(alert.title, {
    body: alert.body, tag: alert.tag, renotify: true, data: alert,
  }));
});
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  // The page counts an alert opened (its own metrics) from ?via=push.
  const kind = event.notification.data?.moment?.kind || '';
  event.waitUntil(clients.openWindow(`/?via=push&kind=${encodeURIComponent(kind)}#live`));
});
