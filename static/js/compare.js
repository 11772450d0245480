// Compare page keys: ↓/j and ↑/k move the current step, Enter opens it in the left run's
// replay; #row-N (what a replay's "compare" link carries) opens the page at step N.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#compare-table .compare-row"));
  if (!rows.length) return;
  var current = -1;

  function select(position, scroll) {
    if (position < 0 || position >= rows.length) return;
    if (current >= 0) rows[current].classList.remove("current");
    current = position;
    var row = rows[current];
    row.classList.add("current");
    if (scroll) row.scrollIntoView({ block: "center" });
    history.replaceState(null, "", "#row-" + row.dataset.index);
  }

  function fromHash() {
    var match = /^#(?:row|step)-(\d+)$/.exec(window.location.hash);
    if (!match) return;
    for (var i = 0; i < rows.length; i += 1) {
      if (rows[i].dataset.index === match[1]) { select(i, true); return; }
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var target = event.target;
    if (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].indexOf(target.tagName) !== -1) return;
    if (event.key === "ArrowDown" || event.key === "j") {
      event.preventDefault();
      select(current + 1, true);
    } else if (event.key === "ArrowUp" || event.key === "k") {
      event.preventDefault();
      select(Math.max(current - 1, 0), true);
    } else if (event.key === "Enter" && current >= 0 && target.tagName !== "A" && target.tagName !== "BUTTON") {
      var link = rows[current].querySelector("[data-replay-link]");
      if (link) { event.preventDefault(); window.location.assign(link.href); }
    }
  });
  rows.forEach(function (row, position) {
    row.addEventListener("click", function (event) {
      if (!event.target.closest("a")) select(position, false);
    });
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
