// Find in one transcript: the server (or, in a downloaded replay, the page itself) lists every
// step containing the text, including steps whose rows are not in the page; Enter / Shift+Enter
// (or the arrows) jump to the next / previous one, "n of m" says where you are, matching rows
// are marked and the text is highlighted in the open step. "/" focuses the box, Escape clears.
// Text is only ever set with textContent; highlights split text nodes, never parse markup.

export function highlight(container, query) {
  if (!query) return 0;
  const needle = query.toLowerCase();
  const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeValue.toLowerCase().includes(needle)) nodes.push(node);
  }
  let count = 0;
  nodes.forEach((node) => {
    const text = node.nodeValue;
    const lower = text.toLowerCase();
    const parts = document.createDocumentFragment();
    let from = 0;
    for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, from)) {
      parts.append(document.createTextNode(text.slice(from, at)));
      const mark = document.createElement("mark");
      mark.className = "find-hit";
      mark.textContent = text.slice(at, at + needle.length);
      parts.append(mark);
      from = at + needle.length;
      count += 1;
    }
    parts.append(document.createTextNode(text.slice(from)));
    node.replaceWith(parts);
  });
  // Folded texts (thinking, full reply) open when they hold a match.
  container.querySelectorAll("details").forEach((details) => {
    if (details.querySelector("mark.find-hit")) details.open = true;
  });
  return count;
}

export class Finder {
  constructor(replay, form) {
    this.replay = replay;
    this.form = form;
    this.input = form.querySelector("input[type=search]");
    this.status = form.querySelector("[data-role=find-status]");
    this.query = "";
    this.indices = [];
    this.position = -1;
    this.pending = null;
  }

  bind() {
    this.form.hidden = false;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.next(1);
    });
    this.form.querySelector("[data-action=find-previous]").addEventListener("click", () => this.next(-1));
    // The "next" button is the form's submit button: Enter and clicks both arrive as submit.
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.shiftKey) {
        event.preventDefault();
        this.next(-1);
      } else if (event.key === "Escape") {
        this.clear();
      }
    });
    const wanted = new URLSearchParams(window.location.search).get("find");
    if (wanted) {
      this.input.value = wanted;
      this.run(wanted, { jump: false });
    }
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  clear() {
    this.input.value = "";
    this.query = "";
    this.indices = [];
    this.position = -1;
    this.status.textContent = "";
    this.replay.setMatches(new Set(), "");
  }

  async next(direction) {
    const text = this.input.value.trim();
    if (!text) {
      this.clear();
      return;
    }
    if (text !== this.query) {
      await this.run(text, { jump: true, direction });
      return;
    }
    if (!this.indices.length) return;
    this.position = (this.position + direction + this.indices.length) % this.indices.length;
    this.go();
  }

  async run(text, { jump, direction = 1 }) {
    this.query = text;
    this.status.textContent = "searching…";
    let indices;
    try {
      indices = await this.replay.searchSteps(text);
    } catch (error) {
      if (this.query === text) this.status.textContent = error.message;
      return;
    }
    if (this.query !== text) return; // a newer search took over
    this.indices = indices;
    this.replay.setMatches(new Set(indices), text);
    if (!indices.length) {
      this.position = -1;
      this.status.textContent = "no match";
      return;
    }
    const current = this.replay.current ?? -1;
    if (direction > 0) {
      const after = indices.findIndex((index) => index > current);
      this.position = after === -1 ? 0 : after;
    } else {
      const before = indices.filter((index) => index < current).length - 1;
      this.position = before < 0 ? indices.length - 1 : before;
    }
    if (jump) this.go();
    else this.renderStatus();
  }

  go() {
    this.replay.jumpTo(this.indices[this.position]);
    this.renderStatus();
  }

  renderStatus() {
    const total = this.indices.length;
    const noun = total === 1 ? "step" : "steps";
    this.status.textContent = this.position < 0
      ? `${total.toLocaleString("en-US")} ${noun}`
      : `${(this.position + 1).toLocaleString("en-US")} of ${total.toLocaleString("en-US")} ${noun}`;
  }
}
