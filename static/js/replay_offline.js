// A downloaded replay (one .html file, no server): the episodes travel inside the page as JSON
// (<script type="application/json">, escaped by the server); this picks the one named by
// ?episode=<uuid> (the first otherwise), fills the header, the episode picker and the notes, and
// answers the replay's searches from the steps it holds. Every text is set with textContent.

import { el } from "./replay_dom.js";

const SEARCHED = ["reply", "action", "observation", "thinking"];

export class OfflineEpisode {
  constructor(root) {
    const bundle = JSON.parse(document.getElementById(root.dataset.offline).textContent);
    const wanted = new URLSearchParams(window.location.search).get("episode");
    this.bundle = bundle;
    this.episode = bundle.episodes.find((item) => item.uuid === wanted) || bundle.episodes[0];
    this.notesByStep = new Map();
    this.episode.notes.forEach((note) => {
      if (note.index === null) return;
      if (!this.notesByStep.has(note.index)) this.notesByStep.set(note.index, []);
      this.notesByStep.get(note.index).push(note);
    });
  }

  render() {
    const episode = this.episode;
    document.querySelector("[data-offline=title]").textContent = episode.title;
    document.querySelector("[data-offline=facts]").textContent = episode.facts;
    const hint = document.querySelector("[data-offline=hint]");
    hint.hidden = !episode.hint;
    hint.querySelector("pre").textContent = episode.hint || "";
    const picker = document.querySelector("[data-offline=picker]");
    if (this.bundle.episodes.length > 1) {
      const select = picker.querySelector("select");
      this.bundle.episodes.forEach((item) => {
        const option = el("option", null, item.label);
        option.value = item.uuid;
        option.selected = item.uuid === episode.uuid;
        select.append(option);
      });
      select.addEventListener("change", () => {
        window.location.search = `?episode=${encodeURIComponent(select.value)}`;
      });
      picker.hidden = false;
    }
    const notes = document.querySelector("[data-offline=notes]");
    if (episode.notes.length) notes.replaceChildren();
    episode.notes.forEach((note) => {
      const item = el("li", "note");
      const where = note.index === null ? "episode" : note.index === 0 ? "reset" : `step ${note.index}`;
      const head = el("div", "small muted", `${note.author} on ${where}${note.tags.length ? ` · ${note.tags.join(", ")}` : ""}`);
      if (note.index !== null) {
        const link = el("a", "small", " open");
        link.href = `#step-${note.index}`;
        head.append(link);
      }
      item.append(head, el("p", "note-text", note.text));
      notes.append(item);
    });
  }

  messages() {
    return [{ type: "steps", items: this.episode.steps.map((data) => ({ index: data.index, data })) },
      this.episode.status_message];
  }

  search(text) {
    const needle = text.toLowerCase();
    return this.episode.steps
      .filter((data) => SEARCHED.some((name) => String(data[name] || "").toLowerCase().includes(needle)))
      .map((data) => data.index);
  }

  stepNotes(index) {
    const notes = this.notesByStep.get(index) || [];
    if (!notes.length) return null;
    const box = el("div", "step-notes");
    box.append(el("span", "label", notes.length === 1 ? "note" : `${notes.length} notes`));
    notes.forEach((note) => box.append(el("p", "small", `${note.author}: ${note.text}`)));
    return box;
  }
}
