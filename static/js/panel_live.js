// A panel page follows its running evaluations: one websocket per running evaluation (listed in
// #panel-live's data-live-urls) says when one of its plays ends, and the ranking and the
// evaluations refresh then (at most twice a second). The block also polls while anything runs,
// so nothing depends on a socket; a refused one (4401 signed out, 4404 gone) is not reopened,
// and a socket whose evaluation has ended is closed.
(function () {
  "use strict";
  if (!("WebSocket" in window)) {
    return;
  }
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const sockets = new Map();
  let pending = null;

  function block() {
    return document.getElementById("panel-live");
  }

  function refresh() {
    if (pending !== null) {
      return;
    }
    pending = window.setTimeout(function () {
      pending = null;
      const current = block();
      if (current && window.htmx) {
        window.htmx.trigger(current, "play-ended");
      }
    }, 500);
  }

  function wanted() {
    const current = block();
    const urls = current ? (current.dataset.liveUrls || "").split(/\s+/) : [];
    return new Set(urls.filter(function (url) { return url.startsWith("/ws/evaluations/"); }));
  }

  function open(path, wait) {
    const socket = new WebSocket(`${scheme}://${window.location.host}${path}`);
    sockets.set(path, socket);
    socket.addEventListener("message", function (event) {
      try {
        if (JSON.parse(event.data).type === "episode.ended") {
          refresh();
        }
      } catch (error) {
        // Not a message of ours: ignore it.
      }
    });
    socket.addEventListener("close", function (event) {
      if (sockets.get(path) !== socket) {
        return;
      }
      sockets.delete(path);
      if (event.code === 4401 || event.code === 4404 || !wanted().has(path)) {
        return;
      }
      window.setTimeout(function () {
        if (!sockets.has(path) && wanted().has(path)) {
          open(path, Math.min(wait * 2, 30000));
        }
      }, wait);
    });
  }

  function follow() {
    const urls = wanted();
    urls.forEach(function (path) {
      if (!sockets.has(path)) {
        open(path, 1000);
      }
    });
    sockets.forEach(function (socket, path) {
      if (!urls.has(path)) {
        sockets.delete(path);
        socket.close();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", follow);
  document.body.addEventListener("htmx:afterSettle", follow);
})();
