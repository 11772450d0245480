// Annotation work page, keyboard first. s saves and moves on, → skips, ← goes back to your last
// answer; j/k move between questions; 1–9 pick (or tick) an option of the current question,
// y/n answer yes/no; in a pairwise queue a, b and t choose. Keys typed into text stay text
// (Ctrl/Cmd+Enter saves from anywhere).
(function () {
  "use strict";
  var form = document.getElementById("answer-form");
  if (!form) { return; }
  var questions = Array.prototype.slice.call(form.querySelectorAll("fieldset.question"));
  var current = 0;
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && !["checkbox", "radio"].includes(target.type)) ||
      target.isContentEditable);
  }
  function focusQuestion(index) {
    if (!questions.length) { return; }
    current = Math.max(0, Math.min(questions.length - 1, index));
    questions.forEach(function (q, i) { q.classList.toggle("current", i === current); });
    var input = questions[current].querySelector("input:checked") ||
      questions[current].querySelector("input, textarea");
    if (input) { input.focus({ preventScroll: false }); }
  }
  form.addEventListener("focusin", function (event) {
    var index = questions.indexOf(event.target.closest("fieldset.question"));
    if (index >= 0) {
      current = index;
      questions.forEach(function (q, i) { q.classList.toggle("current", i === current); });
    }
  });
  function pick(question, number) {
    var inputs = question.querySelectorAll("input[type=radio], input[type=checkbox]");
    var input = inputs[number - 1];
    if (!input) { return false; }
    if (input.type === "checkbox") { input.checked = !input.checked; } else { input.checked = true; }
    input.focus();
    return true;
  }
  function choose(value) {
    var input = form.querySelector('input[name="choice"][value="' + value + '"]');
    if (input) { input.checked = true; input.focus(); return true; }
    return false;
  }
  function go(id) {
    var link = document.getElementById(id);
    if (link) { window.location.assign(link.href); return true; }
    return false;
  }
  document.addEventListener("keydown", function (event) {
    if (event.altKey) { return; }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault(); form.requestSubmit(); return;
    }
    if (event.key === "Escape" && typing(event.target)) { event.target.blur(); return; }
    if (event.ctrlKey || event.metaKey || typing(event.target)) { return; }
    var question = questions[current];
    var done = false;
    if (event.key === "s") { form.requestSubmit(); done = true; }
    else if (event.key === "ArrowRight") { done = go("answer-skip"); }
    else if (event.key === "ArrowLeft") { done = go("answer-back"); }
    else if (event.key === "j") { focusQuestion(current + 1); done = true; }
    else if (event.key === "k") { focusQuestion(current - 1); done = true; }
    else if (/^[1-9]$/.test(event.key) && question) {
      done = pick(question, Number(event.key));
    } else if ((event.key === "y" || event.key === "n") && question &&
               question.dataset.kind === "yesno") {
      done = pick(question, event.key === "y" ? 1 : 2);
    } else if (event.key === "a" || event.key === "b" || event.key === "t") {
      done = choose(event.key === "t" ? "tie" : event.key);
    }
    if (done) { event.preventDefault(); }
  });
  focusQuestion(0);
})();
