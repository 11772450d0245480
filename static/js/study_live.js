// The study page's live progress: a websocket tells the page when one of the study's field
// plays ends, and the progress card refreshes then (at most twice a second). The card polls
// too, so nothing depends on the socket; a refused one (4401 signed out, 4404 gone) is not
// opened again, while one closed with 1013 (the database or Redis restarting) is, with a backoff.
(function () {
  "use strict";
  const card = document.getElementById("study-progress");
  if (!card || !card.dataset.liveUrl || !("WebSocket" in window)) {
    return;
  }
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${window.location.host}${card.dataset.liveUrl}`;
  let pending = null;
  let wait = 1000;

  function refresh() {
    if (pending !== null) {
      return;
    }
    pending = window.setTimeout(function () {
      pending = null;
      const current = document.getElementById("study-progress");
      if (current && window.htmx && current.hasAttribute("hx-get")) {
        window.htmx.trigger(current, "play-ended");
      }
    }, 500);
  }

  function open() {
    const socket = new WebSocket(url);
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
      const current = document.getElementById("study-progress");
      if (event.code === 4401 || event.code === 4404 || !current
          || !current.hasAttribute("hx-get")) {
        return;  // refused, or the study has ended and the card stopped following it
      }
      window.setTimeout(open, wait);
      wait = Math.min(wait * 2, 30000);
    });
  }

  open();
})();
