// Review queue shortcuts: 1–7 toggle the starter tags, n skips, s saves.
// Keys typed into a text field stay text (except Ctrl/Cmd+Enter, which saves).
(function () {
  "use strict";
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" ||
      (target.tagName === "INPUT" && !["checkbox", "radio"].includes(target.type)) ||
      target.tagName === "SELECT" || target.isContentEditable);
  }
  document.addEventListener("keydown", function (event) {
    var form = document.getElementById("review-form");
    if (!form || event.altKey) { return; }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (event.ctrlKey || event.metaKey || typing(event.target)) { return; }
    if (/^[1-7]$/.test(event.key)) {
      var box = form.querySelector('[data-shortcut="' + event.key + '"] input[type="checkbox"]');
      if (box) { event.preventDefault(); box.checked = !box.checked; }
    } else if (event.key === "n") {
      var next = document.getElementById("review-next");
      if (next) { event.preventDefault(); window.location.assign(next.href); }
    } else if (event.key === "s") {
      event.preventDefault();
      form.requestSubmit();
    }
  });
})();
