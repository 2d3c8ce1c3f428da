// headspace's service worker: the page's own files for when the phone is offline, and the pushes.
//
// It keeps only the page's static files (the page, its script, style, icon
// and manifest): never an agent, a screen or an answer. Offline the page
// opens from them and says "not live"; it shows no agent it did not just
// hear from the service. A push shows its words and opens that agent's
// card; a plain permission's push carries Approve and Deny, which answer
// that one request (its "request", as the page's tap sends it: if the
// dialog changed meanwhile the service sends nothing and says so).
"use strict";

const CACHE = "headspace-static-1";
const STATIC = ["/", "/assets/app.js", "/assets/app.css", "/assets/icon.svg", "/manifest.webmanifest"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(STATIC)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

// The static files from the network first (a new version shows at once), from the cache when offline.
// Everything else (the agents, the stream, the answers) is never touched here: the browser asks the service.
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin || !STATIC.includes(url.pathname) || url.search) return;
  event.respondWith(
    fetch(event.request).then(
      (response) => {
        if (response.ok && response.type === "basic" && !response.redirected) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(url.pathname, copy));
        }
        return response;
      },
      () => caches.match(url.pathname).then((kept) => kept || Response.error()),
    ),
  );
});

function shown(message) {
  const options = {
    body: message.body || "",
    tag: message.tag || "headspace",
    renotify: true,
    icon: "/assets/icon.svg",
    data: { url: message.url || "/", pane: message.pane || "", request: message.request || "" },
  };
  if (message.request && Array.isArray(message.answers)) {
    options.actions = [
      { action: "approve", title: "Approve" },
      { action: "deny", title: "Deny" },
    ];
  }
  return self.registration.showNotification(message.title || "headspace", options);
}

self.addEventListener("push", (event) => {
  let message = {};
  try {
    message = event.data ? event.data.json() : {};
  } catch (error) {
    message = { title: "headspace", body: "An agent needs you." };
  }
  event.waitUntil(shown(message));
});

async function openCard(url) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of windows) {
    if (new URL(client.url).origin === self.location.origin) {
      await client.focus().catch(() => {}); // allowed only in a real tap's handler
      return client.navigate(url).catch(() => client.postMessage({ open: url }));
    }
  }
  return self.clients.openWindow(url);
}

// Approve or Deny from the notification: that request only, through the page's own answer (token cookie, Origin,
// the request check). What the service said is shown in place of the push; a refusal opens nothing by itself.
async function answered(data, action) {
  let words;
  try {
    const response = await fetch("/api/answer", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ pane: data.pane, intent: action, option: "", text: "", expect: data.request }),
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.delivered) words = `Sent: ${body.detail}`;
    else if (response.ok) words = `Not confirmed: ${body.detail}`;
    else words = `Nothing sent: ${body.error || response.statusText}`;
  } catch (error) {
    words = "Nothing known: the service could not be reached. Open the page before answering again.";
  }
  await self.registration.showNotification("headspace", { body: words, tag: `headspace answer ${data.pane}`, icon: "/assets/icon.svg", data: { url: data.url } });
  return words;
}

// What a tap on a notification does (the event handler's, and a test's way in: a page cannot make a trusted click).
self.headspaceClicked = async function (notification, action) {
  const data = notification.data || {};
  notification.close();
  if ((action === "approve" || action === "deny") && data.request) return answered(data, action);
  await openCard(data.url || "/");
  return "opened";
};

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(self.headspaceClicked(event.notification, event.action));
});
