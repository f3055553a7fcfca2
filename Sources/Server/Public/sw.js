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
  event.waitUntil(clients.openWindow('/#live'));
});
