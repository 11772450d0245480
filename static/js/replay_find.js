// Find in one transcript: the server (or, in a downloaded replay or a published copy, the page
// itself) lists every step containing the text, including steps whose rows are not in the page.
// It finds as you type (a pause of TYPING_PAUSE_MS after the last key, the last word matching
// the start of a word), jumping to the first match from the open step on; Enter / Shift+Enter
// (or the arrows) jump to the next / previous one. "match 2 of 5 (in 27 steps)" says where you
// are among the matching steps and how many steps were searched; matching rows are marked and the
// text is highlighted in the open step. "/" focuses the box, Escape clears. Answers already
// fetched are kept, so retyping asks the server nothing. Text is only ever set with textContent;
// highlights split text nodes, never parse markup.

const TYPING_PAUSE_MS = 250;
const TYPED_MINIMUM = 2; // characters before a search starts while typing (Enter searches any)
const REMEMBERED = 50; // answers kept per page

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
    this.typing = null;
    this.answers = new Map();
  }

  bind() {
    this.form.hidden = false;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.next(1);
    });
    this.form.querySelector("[data-action=find-previous]").addEventListener("click", () => this.next(-1));
    // The "next" button is the form's submit button: Enter and clicks both arrive as submit.
    this.input.addEventListener("input", () => this.typed());
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

  typed() {
    clearTimeout(this.typing);
    const text = this.input.value.trim();
    if (!text) {
      this.clear();
      return;
    }
    if (text === this.query) return;
    // The last answer no longer describes the box: say so at once, not after the pause.
    this.status.textContent = text.length < TYPED_MINIMUM ? "" : "searching…";
    if (text.length < TYPED_MINIMUM) return;
    this.typing = setTimeout(() => {
      if (this.input.value.trim() === text && text !== this.query) {
        this.run(text, { jump: true, direction: 1, fromCurrent: true });
      }
    }, TYPING_PAUSE_MS);
  }

  async search(text) {
    if (this.answers.has(text)) return this.answers.get(text);
    const indices = await this.replay.searchSteps(text);
    if (this.answers.size >= REMEMBERED) this.answers.delete(this.answers.keys().next().value);
    this.answers.set(text, indices);
    return indices;
  }

  clear() {
    clearTimeout(this.typing);
    this.input.value = "";
    this.query = "";
    this.indices = [];
    this.position = -1;
    this.status.textContent = "";
    this.replay.setMatches(new Set(), "");
  }

  async next(direction) {
    clearTimeout(this.typing);
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

  async run(text, { jump, direction = 1, fromCurrent = false }) {
    this.query = text;
    this.status.textContent = "searching…";
    let indices;
    try {
      indices = await this.search(text);
    } catch (error) {
      if (this.query === text) this.status.textContent = error.message;
      return;
    }
    if (this.query !== text) return; // a newer search took over
    this.indices = indices;
    this.replay.setMatches(new Set(indices), text);
    if (!indices.length) {
      this.position = -1;
      this.status.textContent = `no match ${this.searched()}`;
      return;
    }
    const current = this.replay.current ?? -1;
    if (direction > 0) {
      // While typing, a match on the open step stays the current one.
      const after = indices.findIndex((index) => (fromCurrent ? index >= current : index > current));
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

  searched() {
    const steps = Math.max(this.replay.maxIndex, 0);
    return `(in ${steps.toLocaleString("en-US")} step${steps === 1 ? "" : "s"})`;
  }

  renderStatus() {
    const total = this.indices.length.toLocaleString("en-US");
    this.status.textContent = this.position < 0
      ? `${total} match${this.indices.length === 1 ? "" : "es"} ${this.searched()}`
      : `match ${(this.position + 1).toLocaleString("en-US")} of ${total} ${this.searched()}`;
  }
}
