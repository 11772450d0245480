// A classic script (loaded with `defer`), not a module: a module script does not load from
// file://, and a published copy's environment pages open from disk. Its own scope keeps its
// names out of the page's.
(() => {
  // A link with ?lines=A-B marks those lines; this brings the first of them into view (a #line-N
  // address already scrolls by itself).
  const marked = document.querySelector(".source-view tr.marked");
  if (marked && !window.location.hash) marked.scrollIntoView({ block: "center" });

  // Choosing lines for a note: click a line number for one line, shift-click another to extend
  // the range, or press on a line number and drag over the lines. The range fills the page's
  // "from line" / "to line" fields (the notes form or the review form) and stays highlighted.
  let anchor = null;
  let dragging = false;

  function lineOf(element) {
    const row = element && element.closest ? element.closest(".source-view tr[id^='line-']") : null;
    return row ? { view: row.closest(".source-view"), number: Number(row.id.slice(5)) } : null;
  }

  function show(view, first, last) {
    const [start, end] = first <= last ? [first, last] : [last, first];
    view.querySelectorAll("tr.selected").forEach((row) => row.classList.remove("selected"));
    for (let number = start; number <= end; number += 1) {
      const row = view.querySelector(`#line-${number}`);
      if (row) row.classList.add("selected");
    }
    const from = document.querySelector("input[name=line_start]");
    const to = document.querySelector("input[name=line_end]");
    if (from && to) {
      from.value = String(start);
      to.value = String(end);
      from.dispatchEvent(new Event("change", { bubbles: true }));
    }
    view.dataset.selection = `${start}-${end}`;
  }

  document.addEventListener("mousedown", (event) => {
    if (event.button !== 0 || !event.target.closest(".source-view td.ln")) return;
    const line = lineOf(event.target);
    if (!line) return;
    event.preventDefault(); // no text selection, no jump to #line-N while choosing lines
    if (event.shiftKey && anchor && anchor.view === line.view) {
      show(line.view, anchor.number, line.number);
      return;
    }
    anchor = line;
    dragging = true;
    show(line.view, line.number, line.number);
  });

  document.addEventListener("mouseover", (event) => {
    if (!dragging || !anchor) return;
    const line = lineOf(event.target);
    if (line && line.view === anchor.view) show(line.view, anchor.number, line.number);
  });

  document.addEventListener("mouseup", () => { dragging = false; });

  // The line-number links still work from the keyboard (Enter), selecting that line.
  document.addEventListener("click", (event) => {
    const link = event.target.closest(".source-view td.ln a");
    if (!link || event.detail !== 0) {
      if (link) event.preventDefault();
      return;
    }
    const line = lineOf(link);
    if (line) { anchor = line; show(line.view, line.number, line.number); }
  });
})();
