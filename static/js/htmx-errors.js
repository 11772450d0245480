// One place that turns failed htmx requests into messages where the person is looking.
//
// htmx does not swap error responses by default. Here:
// - a 4xx response that re-renders its own swap target (a form with its validation errors,
//   answered 400 or 429) is swapped in place like a success;
// - any other error (403 page, 404, 500, plain text, JSON) becomes an alert placed at the top of
//   the form (or element) that made the request, with the server's message when it gave one;
// - a request that never reached the server (network down, server gone, timeout) says so.
// The alert goes away on the next successful request from the same element.
(function () {
  "use strict";

  var MAX_MESSAGE = 400;
  var DEFAULTS = {
    400: "The server could not accept this request. Check the values and try again.",
    403: "You do not have permission to do that.",
    404: "Not found: it may have been deleted, or the address is wrong.",
    405: "That action is not allowed here.",
    413: "That request is too large.",
    429: "Too many requests. Wait a moment and try again.",
  };

  function fallback(status) {
    if (DEFAULTS[status]) return DEFAULTS[status];
    if (status >= 500) return "The server hit an error (" + status + "). Try again; if it keeps happening, tell an administrator.";
    return "The request failed (" + status + ").";
  }

  function bounded(text) {
    var clean = String(text || "").replace(/\s+/g, " ").trim();
    return clean.length > MAX_MESSAGE ? clean.slice(0, MAX_MESSAGE - 1) + "…" : clean;
  }

  function parseHTML(text) {
    return new DOMParser().parseFromString(text, "text/html");
  }

  // The message a server put in its error response, or "" when it gave none.
  function serverMessage(xhr) {
    var type = (xhr.getResponseHeader("Content-Type") || "").toLowerCase();
    var body = xhr.responseText || "";
    if (!body) return "";
    if (type.indexOf("application/json") === 0) {
      try {
        var data = JSON.parse(body);
        var value = data.error || data.detail || data.message || "";
        return bounded(typeof value === "string" ? value : JSON.stringify(value));
      } catch (error) {
        return "";
      }
    }
    if (type.indexOf("text/html") === 0) {
      var doc = parseHTML(body);
      var marked = doc.querySelector("[data-error-message]");
      if (marked) return bounded(marked.textContent);
      var alerts = doc.querySelectorAll("[role=alert], .errorlist");
      if (alerts.length) return bounded(Array.prototype.map.call(alerts, function (n) { return n.textContent; }).join(" "));
      return "";
    }
    if (type.indexOf("text/plain") === 0) return bounded(body);
    return "";
  }

  // The form, or the element itself, that owns the message for a request from `elt`.
  function owner(elt) {
    if (!elt || !elt.isConnected) return null;
    return elt.closest("form") || elt;
  }

  function slotFor(container) {
    var existing = container.querySelector(":scope > [data-htmx-error]");
    if (existing) return existing;
    var slot = document.createElement("div");
    slot.className = "alert bad htmx-error";
    slot.setAttribute("role", "alert");
    slot.setAttribute("data-htmx-error", "");
    var inline = ["A", "BUTTON", "SPAN", "INPUT", "SELECT"].indexOf(container.tagName) !== -1;
    if (inline) container.insertAdjacentElement("afterend", slot);
    else container.insertBefore(slot, container.firstChild);
    return slot;
  }

  function show(elt, message) {
    var container = owner(elt);
    if (!container) return;
    slotFor(container).textContent = message;
  }

  function clear(elt) {
    var container = owner(elt);
    if (!container) return;
    var slot = container.querySelector(":scope > [data-htmx-error]");
    if (!slot && container.nextElementSibling && container.nextElementSibling.hasAttribute("data-htmx-error")) {
      slot = container.nextElementSibling;
    }
    if (slot) slot.remove();
  }

  function rerendersTarget(xhr, target) {
    if (!target || !target.id) return false;
    var type = (xhr.getResponseHeader("Content-Type") || "").toLowerCase();
    if (type.indexOf("text/html") !== 0) return false;
    var doc = parseHTML(xhr.responseText || "");
    // A full error page has a <main>; a partial for this target does not.
    return !doc.querySelector("main") && Boolean(doc.getElementById(target.id));
  }

  // The element that made the request (a swap event's own `elt` is its target).
  function requester(detail) {
    return (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var status = detail.xhr.status;
    if (status < 400) return;
    if (status < 500 && rerendersTarget(detail.xhr, detail.target)) {
      detail.shouldSwap = true;
      detail.isError = false;
      return;
    }
    detail.shouldSwap = false;
    show(requester(detail), serverMessage(detail.xhr) || fallback(status));
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.successful) clear(requester(event.detail));
  });

  document.addEventListener("htmx:sendError", function (event) {
    var config = event.detail.requestConfig || {};
    var reading = String(config.verb || "get").toLowerCase() === "get";
    show(requester(event.detail), reading
      ? "Could not reach the server: check your connection. This part of the page updates again once it is back."
      : "Could not reach the server: check your connection. Nothing was saved; try again once it is back.");
  });

  document.addEventListener("htmx:timeout", function (event) {
    show(requester(event.detail), "The server took too long to answer. Try again in a moment.");
  });
})();
