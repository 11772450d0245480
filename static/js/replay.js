// Replay viewer for one episode: catches up over the websocket, tails live steps, lists the
// whole transcript (virtualised: only the rows in view exist in the DOM, so 10,000 steps cost
// what 100 do) and plays it back. The current step is highlighted in the list, kept in view and
// shown in full beside it; play, scrub, keys and #step-N all move it.
// No dependencies, no inline script (the page's CSP allows only /static/ scripts). Every string
// from the server is untrusted: it is only ever set with textContent.
//
// Extension hook: every websocket message this file does not handle is dispatched as
// `document.dispatchEvent(new CustomEvent("envduels:message", {detail: message}))`, and
// `<div id="live-reply">` under the current step is free for other scripts to fill; after each
// batch of steps `envduels:steps` carries `{maxIndex}`, and `envduels:ended` the final status.

import { el } from "./replay_dom.js";
import { Finder, highlight } from "./replay_find.js";
import { OfflineEpisode } from "./replay_offline.js";
import { Timeline } from "./replay_timeline.js";

const DONE = new Set(["finished", "failed", "cancelled"]);
const MAX_BACKOFF_MS = 10000;
// The close code a stream gets while the database or Redis is away (envduels_site/handshakes.py).
const TRY_AGAIN_LATER = 1013;
const ROW_HEIGHT = 32; // px, must match .transcript-row in app.css
const OVERSCAN = 12;
// Full step payloads (replies can be long) are kept for the most recent FULL_CACHE steps only;
// every step keeps a one-line summary for the list, and a step shown again after its payload
// was dropped is fetched back FETCH_COUNT at a time. Memory stays nearly flat in episode length.
const FULL_CACHE = 300;
const FETCH_COUNT = 50;
const PRESENT = 1;
const DONE_FLAG = 2;
const SUCCESS_FLAG = 4;
const FORMAT_ERROR_FLAG = 8;
// Per-step measures the timeline draws (stored fields of each step), and their sums.
export const MEASURES = ["latency_ms", "sandbox_ms", "tokens", "cost"];

function measureOf(data, name) {
  if (name === "tokens") return Number(data.input_tokens || 0) + Number(data.output_tokens || 0);
  return Number(data[name] || 0);
}


function formatInt(value) {
  return Number(value || 0).toLocaleString("en-US");
}

function formatUsd(value) {
  const number = Number(value || 0);
  return number > 0 && number < 0.01 ? `$${number.toFixed(4)}` : `$${number.toFixed(2)}`;
}

function formatReward(value) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(2);
}

function firstLine(text, limit = 160) {
  const line = String(text || "").split("\n", 1)[0];
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

function stepLabel(index) {
  return index === 0 ? "reset" : `step ${formatInt(index)}`;
}

function stepFromHash() {
  const match = /^#step-(.*)$/.exec(window.location.hash);
  if (!match) return null;
  return /^\d+$/.test(match[1]) ? Number(match[1]) : NaN;
}

export class StepStore {
  constructor(fullCache = FULL_CACHE) {
    this.fullCache = fullCache;
    this.capacity = 0;
    this.flags = new Uint8Array(0);
    this.rewards = new Float64Array(0);
    this.actions = [];
    this.observations = [];
    this.measures = Object.fromEntries(MEASURES.map((name) => [name, new Float64Array(0)]));
    this.totals = Object.fromEntries(MEASURES.map((name) => [name, 0]));
    this.full = new Map(); // insertion order is recency: the first key is dropped first
  }

  grow(index) {
    if (index < this.capacity) return;
    let capacity = Math.max(64, this.capacity * 2);
    while (capacity <= index) capacity *= 2;
    const flags = new Uint8Array(capacity);
    flags.set(this.flags);
    const rewards = new Float64Array(capacity);
    rewards.set(this.rewards);
    this.flags = flags;
    this.rewards = rewards;
    MEASURES.forEach((name) => {
      const grown = new Float64Array(capacity);
      grown.set(this.measures[name]);
      this.measures[name] = grown;
    });
    this.capacity = capacity;
  }

  has(index) {
    return index >= 0 && index < this.capacity && (this.flags[index] & PRESENT) !== 0;
  }

  add(index, data) {
    this.grow(index);
    let flags = PRESENT;
    if (data.done) flags |= DONE_FLAG;
    if (data.success) flags |= SUCCESS_FLAG;
    if (data.format_error) flags |= FORMAT_ERROR_FLAG;
    this.flags[index] = flags;
    this.rewards[index] = data.reward === null || data.reward === undefined ? NaN : Number(data.reward);
    this.actions[index] = firstLine(data.action, 60);
    this.observations[index] = firstLine(data.observation);
    MEASURES.forEach((name) => {
      const value = measureOf(data, name);
      this.measures[name][index] = value;
      this.totals[name] += value;
    });
    this.keep(index, data);
  }

  keep(index, data) {
    this.full.delete(index);
    this.full.set(index, data);
    if (this.full.size > this.fullCache) this.full.delete(this.full.keys().next().value);
  }

  payload(index) {
    const data = this.full.get(index);
    if (data) this.keep(index, data); // recently shown steps stay
    return data;
  }

  summary(index) {
    const flags = this.flags[index];
    const reward = this.rewards[index];
    return {
      index,
      done: (flags & DONE_FLAG) !== 0,
      success: (flags & SUCCESS_FLAG) !== 0,
      formatError: (flags & FORMAT_ERROR_FLAG) !== 0,
      reward: Number.isNaN(reward) ? null : reward,
      action: this.actions[index],
      observation: this.observations[index],
    };
  }
}

export class Replay {
  constructor(root) {
    this.root = root;
    // A downloaded replay holds its episode in the page: no socket, every step kept.
    this.offline = root.dataset.offline ? new OfflineEpisode(root) : null;
    if (this.offline) {
      root.dataset.episode = this.offline.episode.uuid;
      root.dataset.status = this.offline.episode.status;
    }
    this.episode = root.dataset.episode;
    this.status = root.dataset.status;
    this.notesUrl = root.dataset.notesUrl;
    this.stepsUrl = root.dataset.stepsUrl;
    this.searchUrl = root.dataset.searchUrl;
    this.callUrl = root.dataset.callUrl; // ends in "/steps/0/call/": the index is replaced
    this.matches = new Set();
    this.findText = "";
    this.fetching = new Set();
    this.ended = DONE.has(this.status);
    this.steps = new StepStore(this.offline ? Infinity : FULL_CACHE);
    this.maxIndex = -1;
    this.tokensIn = 0;
    this.tokensOut = 0;
    this.current = null;
    this.target = stepFromHash();
    this.playing = false;
    this.timer = null;
    this.speed = 1;
    this.socket = null;
    this.attempts = 0;
    this.renderQueued = false;
    this.stepView = root.querySelector("[data-role=step]");
    this.position = root.querySelector("[data-role=position]");
    this.liveLabel = root.querySelector("[data-role=live]");
    this.hashError = root.querySelector("[data-role=hash-error]");
    this.list = root.querySelector("[data-role=transcript]");
    this.spacer = root.querySelector("[data-role=spacer]");
    this.scrub = root.querySelector("[data-control=scrub]");
    this.follow = root.querySelector("[data-control=follow]");
    this.playButton = root.querySelector("[data-action=play]");
    this.follow.checked = !this.ended && this.target === null;
    const findForm = root.querySelector("[data-role=find]");
    this.finder = findForm ? new Finder(this, findForm) : null;
    const timeline = root.querySelector("[data-role=timeline]");
    this.timeline = timeline ? new Timeline(this, timeline) : null;
  }

  start() {
    document.body.classList.add("js-replay");
    this.root.hidden = false;
    this.bindControls();
    if (this.finder) this.finder.bind();
    if (this.timeline) this.timeline.bind();
    this.renderLive();
    this.renderList();
    this.renderWaiting();
    this.connect();
  }

  renderWaiting() {
    // Until the first step arrives the pane says what is happening instead of staying empty.
    if (this.current !== null) return;
    const text = this.ended
      ? "This episode ended without any step."
      : "Waiting for the first step: the sandbox is starting the environment. Steps appear here as they are played.";
    this.stepView.replaceChildren(el("p", "empty waiting", text));
    this.renderPosition();
  }

  // --- find and jump -----------------------------------------------------------------------

  async searchSteps(text) {
    if (this.offline) return this.offline.search(text);
    const response = await fetch(`${this.searchUrl}?q=${encodeURIComponent(text)}`, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
    return body.indices;
  }

  setMatches(matches, text) {
    this.matches = matches;
    this.findText = text;
    if (this.current !== null) this.renderStep();
    this.queueList();
  }

  jumpTo(index) {
    this.follow.checked = false;
    this.pause();
    this.show(index);
  }

  // --- websocket -------------------------------------------------------------------------

  connect() {
    if (this.offline) {
      this.offline.messages().forEach((message) => this.receive(message));
      return;
    }
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${window.location.host}/ws/episodes/${this.episode}/?since=${this.maxIndex}`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      this.attempts = 0;
      this.receive(JSON.parse(event.data));
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket || this.ended) return;
      // Reconnect with backoff, asking only for steps after the last one we hold; 1013 (try
      // again later) means the server's database or Redis is restarting.
      const delay = Math.min(500 * 2 ** this.attempts, MAX_BACKOFF_MS);
      this.attempts += 1;
      const why = event.code === TRY_AGAIN_LATER ? "the server is restarting" : "connection lost";
      this.liveLabel.textContent = `${why}: reconnecting in ${Math.round(delay / 100) / 10} s…`;
      window.setTimeout(() => this.connect(), delay);
    });
    socket.addEventListener("open", () => this.renderLive());
  }

  receive(message) {
    if (message.type === "steps") {
      message.items.forEach((item) => this.addStep(item));
      this.afterSteps();
    } else if (message.type === "step") {
      this.addStep(message);
      this.afterSteps();
    } else if (message.type === "episode.status") {
      this.finish(message);
    } else {
      document.dispatchEvent(new CustomEvent("envduels:message", { detail: message }));
    }
  }

  addStep(message) {
    const index = message.index;
    if (this.steps.has(index)) return; // duplicates are dropped by index
    const data = message.data;
    this.steps.add(index, data);
    this.tokensIn += Number(data.input_tokens || 0);
    this.tokensOut += Number(data.output_tokens || 0);
    if (index > this.maxIndex) this.maxIndex = index;
  }

  afterSteps() {
    document.dispatchEvent(new CustomEvent("envduels:steps", { detail: { maxIndex: this.maxIndex } }));
    this.scrub.max = String(Math.max(this.maxIndex, 0));
    if (this.timeline) this.timeline.queue();
    this.sizeList(); // before show(): keeping a row in view needs the list's full height
    this.renderCounters();
    if (this.current === null) {
      if (this.target !== null && this.steps.has(this.target)) {
        this.show(this.target);
      } else if (this.target === null) {
        this.show(this.follow.checked ? this.maxIndex : 0);
      } else {
        this.reportTarget();
        if (this.ended || !this.follow.checked) this.show(0, { updateHash: false });
      }
    } else if (this.follow.checked && !this.playing) {
      this.show(this.maxIndex);
    } else {
      if (this.target !== null && this.steps.has(this.target)) this.show(this.target);
      this.renderPosition();
      this.queueList();
    }
  }

  finish(message) {
    document.dispatchEvent(new CustomEvent("envduels:ended", { detail: message }));
    this.ended = true;
    this.status = message.status;
    this.follow.checked = false;
    const badge = document.querySelector("#episode-status .badge");
    if (badge) {
      badge.textContent = message.status;
      badge.className = `badge ${message.status}`;
    }
    this.renderCounters(message);
    this.renderEnd(message.end);
    if (this.current === null) this.show(0, { updateHash: false });
    this.renderWaiting();
    if (this.target !== null) {
      if (this.steps.has(this.target)) this.show(this.target);
      else this.reportTarget();
    }
    this.renderLive();
    if (this.socket) this.socket.close();
  }

  // --- navigation ------------------------------------------------------------------------

  show(index, { updateHash = true } = {}) {
    if (this.maxIndex < 0) return;
    const bounded = Math.max(0, Math.min(index, this.maxIndex));
    this.current = bounded;
    if (this.target !== null && this.steps.has(this.target) && this.target === bounded) {
      this.target = null;
      this.hashError.hidden = true;
    }
    this.renderStep();
    this.keepInView();
    this.queueList();
    const compare = document.querySelector("[data-compare-link]");
    if (compare) compare.hash = `row-${bounded}`; // the comparison opens at this step
    if (this.timeline) this.timeline.queue();
    // While following live the address carries no step, so a reload, a revisit or a copied
    // link follows live too; a step the user chose is in the address.
    const wanted = this.follow.checked && !this.ended ? "" : `#step-${bounded}`;
    if (updateHash && window.location.hash !== wanted) {
      const { pathname, search } = window.location;
      window.history.replaceState(null, "", `${pathname}${search}${wanted}`);
      this.hashError.hidden = true;
      this.target = null;
    }
  }

  move(delta) {
    if (this.current === null) return;
    this.follow.checked = false;
    this.show(this.current + delta);
  }

  play() {
    if (this.maxIndex < 0) return;
    if (this.current >= this.maxIndex) this.show(0);
    this.playing = true;
    this.follow.checked = false;
    this.playButton.textContent = "Pause";
    this.schedule();
  }

  schedule() {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.tick(), 1000 / this.speed);
  }

  tick() {
    if (!this.playing) return;
    if (this.current < this.maxIndex) {
      this.show(this.current + 1);
      this.schedule();
    } else if (!this.ended) {
      this.schedule(); // wait for the next live step
    } else {
      this.pause();
    }
  }

  pause() {
    this.playing = false;
    window.clearTimeout(this.timer);
    this.playButton.textContent = "Play";
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  goToHash() {
    const index = stepFromHash();
    if (index === null || index === this.current) return;
    this.follow.checked = false;
    this.target = index;
    if (this.steps.has(index)) this.show(index, { updateHash: false });
    else this.reportTarget();
  }

  bindControls() {
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest("[data-action]");
      if (button) {
        const action = button.dataset.action;
        if (action === "play") this.toggle();
        else if (action === "back") this.move(-1);
        else if (action === "forward") this.move(1);
        else if (action === "first") this.move(-Infinity);
        else if (action === "last") this.show(this.maxIndex);
        return;
      }
      const row = event.target.closest(".transcript-row");
      if (row && !event.target.closest("a.row-note")) {
        event.preventDefault();
        this.follow.checked = false;
        this.pause();
        this.show(Number(row.dataset.index));
      }
    });
    this.root.querySelector("[data-control=speed]").addEventListener("change", (event) => {
      this.speed = Number(event.target.value) || 1;
      if (this.playing) this.schedule();
    });
    this.scrub.addEventListener("input", () => {
      this.follow.checked = false;
      this.show(Number(this.scrub.value));
    });
    this.follow.addEventListener("change", () => {
      this.show(this.follow.checked ? this.maxIndex : this.current ?? 0);
    });
    this.list.addEventListener("scroll", () => this.queueList(), { passive: true });
    document.addEventListener("keydown", (event) => this.onKey(event));
    window.addEventListener("hashchange", () => this.goToHash());
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const focused = event.target;
    const typing =
      focused.isContentEditable ||
      ["TEXTAREA", "SELECT"].includes(focused.tagName) ||
      (focused.tagName === "INPUT" && !["range", "checkbox", "button"].includes(focused.type));
    if (typing) return;
    // Space on a focused button or link activates it; the page-wide keys leave it alone.
    if (event.key === " " && ["BUTTON", "A", "SUMMARY"].includes(focused.tagName)) return;
    const keys = {
      " ": () => this.toggle(),
      ArrowLeft: () => this.move(-1),
      ArrowRight: () => this.move(1),
      ArrowUp: () => this.move(-1),
      ArrowDown: () => this.move(1),
      Home: () => this.move(-Infinity),
      End: () => this.show(this.maxIndex),
    };
    if (event.key === "/" && this.finder) {
      event.preventDefault();
      this.finder.focus();
      return;
    }
    const handler = keys[event.key];
    if (!handler) return;
    // Up and down move through the steps inside the transcript only; elsewhere they scroll.
    if (event.key.startsWith("Arrow") && ["ArrowUp", "ArrowDown"].includes(event.key) && !this.list.contains(focused)) return;
    if (focused.type === "range" && event.key !== " ") return; // the scrubber moves itself
    event.preventDefault();
    if (event.key !== " ") this.follow.checked = event.key === "End" && !this.ended;
    handler();
  }

  // --- rendering ---------------------------------------------------------------------------

  renderLive() {
    const live = !this.ended;
    this.liveLabel.textContent = live ? "live" : `episode ${this.status}`;
    this.liveLabel.classList.toggle("on", live);
    this.root.classList.toggle("is-live", live);
  }

  renderCounters(status) {
    const set = (name, text) => {
      document.querySelectorAll(`[data-live=${name}]`).forEach((node) => {
        node.textContent = text;
      });
    };
    const steps = status ? status.steps : Math.max(this.maxIndex, 0);
    set("steps", `${formatInt(steps)} step${steps === 1 ? "" : "s"}`);
    set("input_tokens", formatInt(status ? status.input_tokens : this.tokensIn));
    set("output_tokens", formatInt(status ? status.output_tokens : this.tokensOut));
    if (status && status.cost !== undefined) set("cost", formatUsd(status.cost));
  }

  renderEnd(end) {
    const banner = document.getElementById("episode-end");
    if (!banner || !end) return;
    banner.className = `end-banner end-${end.kind}`;
    banner.querySelector("[data-role=end-title]").textContent = end.title;
    banner.querySelector("[data-role=end-detail]").textContent = end.detail;
    banner.hidden = false;
  }

  reportTarget() {
    const index = this.target;
    if (index === null) return;
    let text;
    if (Number.isNaN(index)) {
      text = `“${window.location.hash}” is not a step link; step links look like #step-12.`;
    } else if (this.ended || index <= this.maxIndex) {
      const range = this.maxIndex < 0 ? "has no steps" : `has steps 0–${formatInt(this.maxIndex)}`;
      text = `There is no step ${formatInt(index)}: this episode ${range}.`;
    } else {
      text = `Step ${formatInt(index)} has not been played yet; it opens as soon as it arrives.`;
    }
    this.hashError.textContent = text;
    this.hashError.hidden = false;
  }

  renderPosition() {
    if (this.current === null) {
      this.position.textContent = this.ended ? "no steps" : "waiting for the first step…";
      return;
    }
    this.scrub.value = String(this.current);
    this.position.textContent = `${stepLabel(this.current)} of ${formatInt(this.maxIndex)}`;
  }

  renderStep() {
    this.renderPosition();
    const index = this.current;
    const view = this.stepView;
    view.replaceChildren();
    const data = this.steps.payload(index);
    if (data) {
      view.append(renderStep(data, this.notesUrl));
      if (index > 0 && this.callUrl) view.firstChild.append(this.inspector(index));
      const notes = this.offline && this.offline.stepNotes(index);
      if (notes) view.firstChild.append(notes);
      if (this.findText && this.matches.has(index)) highlight(view, this.findText);
      return;
    }
    if (!this.steps.has(index)) {
      view.append(el("p", "empty", "This step is still loading."));
      return;
    }
    // Only the summary is held: show it and fetch the full step back.
    const summary = this.steps.summary(index);
    const formatError = summary.formatError ? "(details loading…)" : "";
    view.append(renderStep({ ...summary, reply: "", format_error: formatError }, this.notesUrl));
    view.append(el("p", "small muted", "Loading the full step…"));
    this.fetchAround(index);
  }

  inspector(index) {
    // What the model call behind this step received, loaded when opened.
    const details = el("details", "step-call");
    const url = this.callUrl.replace(/\/0\/call\/$/, `/${index}/call/`);
    const summary = el("summary", null, "what the model saw");
    const page = el("a", "small", "open as a page");
    page.href = url;
    details.append(summary, page);
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      const status = el("p", "small muted", "Loading the model call…");
      details.append(status);
      try {
        const response = await fetch(`${url}?partial=1`, { credentials: "same-origin" });
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        // The server escapes every text it puts in this section, as on its own page.
        const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
        status.replaceWith(...parsed.body.childNodes);
      } catch (error) {
        status.textContent = `Could not load the model call (${error.message}).`;
        delete details.dataset.loaded;
      }
    });
    return details;
  }

  async fetchAround(index) {
    const start = Math.max(0, index - Math.floor(FETCH_COUNT / 2));
    if (!this.stepsUrl || this.fetching.has(start)) return;
    this.fetching.add(start);
    try {
      const response = await fetch(`${this.stepsUrl}?from=${start}&count=${FETCH_COUNT}`, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(`the server answered ${response.status}`);
      const body = await response.json();
      body.steps.forEach((data) => this.steps.keep(data.index, data));
      if (this.current !== null && this.steps.payload(this.current)) this.renderStep();
    } catch (error) {
      if (this.current === index) {
        this.stepView.append(el("p", "alert bad small", `Could not load this step (${error.message}); reload the page.`));
      }
    } finally {
      this.fetching.delete(start);
    }
  }

  keepInView() {
    if (this.current === null) return;
    const top = this.current * ROW_HEIGHT;
    const view = this.list;
    const far = Math.abs(top - view.scrollTop) > 2 * view.clientHeight;
    if (far) view.scrollTop = top - view.clientHeight / 2; // a jump: centre the step
    else if (top < view.scrollTop) view.scrollTop = top;
    else if (top + ROW_HEIGHT > view.scrollTop + view.clientHeight) {
      view.scrollTop = top + ROW_HEIGHT - view.clientHeight;
    }
  }

  queueList() {
    if (this.renderQueued) return;
    this.renderQueued = true;
    window.requestAnimationFrame(() => {
      this.renderQueued = false;
      this.renderList();
    });
  }

  sizeList() {
    const total = this.maxIndex + 1;
    this.spacer.style.height = `${Math.max(total, 0) * ROW_HEIGHT}px`;
    this.list.setAttribute("aria-label", `transcript, ${formatInt(total)} rows`);
  }

  renderList() {
    const total = this.maxIndex + 1;
    this.sizeList();
    const first = Math.max(0, Math.floor(this.list.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil((this.list.clientHeight || 480) / ROW_HEIGHT);
    const last = Math.min(total - 1, first + visible + 2 * OVERSCAN);
    const rows = [];
    for (let index = first; index <= last; index += 1) rows.push(this.renderRow(index));
    this.spacer.replaceChildren(...rows);
  }

  renderRow(index) {
    const data = this.steps.has(index) ? this.steps.summary(index) : null;
    const row = el("div", "transcript-row");
    row.dataset.index = String(index);
    row.id = `row-${index}`;
    row.style.top = `${index * ROW_HEIGHT}px`;
    if (index === this.current) {
      row.classList.add("current");
      row.setAttribute("aria-current", "step");
    }
    const link = el("a", "row-index", index === 0 ? "reset" : String(index));
    link.href = `#step-${index}`;
    link.title = `permalink to ${stepLabel(index)}`;
    row.append(link);
    if (!data) {
      row.append(el("span", "row-text muted", "loading…"));
      return row;
    }
    if (data.done) row.classList.add(data.success ? "row-passed" : "row-failed");
    if (data.formatError) row.classList.add("row-format-error");
    if (this.matches.has(index)) row.classList.add("row-match");
    const text = el("span", "row-text");
    if (index > 0) text.append(el("code", "row-action", data.action), document.createTextNode(" → "));
    text.append(document.createTextNode(data.observation));
    row.append(text);
    if (index > 0) row.append(el("span", "row-reward", formatReward(data.reward)));
    if (data.done) row.append(el("span", data.success ? "badge ok" : "badge lost", data.success ? "passed" : "not passed"));
    if (this.offline && this.offline.notesByStep.has(index)) row.append(el("span", "badge tag", "note"));
    if (!this.notesUrl) return row;
    const note = el("a", "row-note", "note");
    note.href = `${this.notesUrl}?step=${index}`;
    note.setAttribute("aria-label", `note on ${stepLabel(index)}`);
    row.append(note);
    return row;
  }
}

export function renderStep(data, notesUrl) {
  const classes = ["step", "current"];
  if (data.format_error) classes.push("has-format-error");
  if (data.done) classes.push(data.success ? "step-ok" : "step-bad");
  const article = el("article", classes.join(" "));
  article.dataset.index = String(data.index);
  const head = el("header", "step-head");
  const permalink = el("a", "step-index", stepLabel(data.index));
  permalink.href = `#step-${data.index}`;
  head.append(permalink);
  if (notesUrl) {
    const note = el("a", "small", "note");
    note.href = `${notesUrl}?step=${data.index}`;
    head.append(note);
  }
  if (data.index > 0) {
    head.append(el("span", "small muted", `reward ${formatReward(data.reward)}`));
    if (data.done) {
      head.append(el("span", data.success ? "badge ok" : "badge lost", data.success ? "passed" : "not passed"));
    }
    if (data.latency_ms !== undefined) {
      head.append(
        el(
          "span",
          "small muted",
          `${formatInt(data.latency_ms)} ms · ${formatInt(data.input_tokens)} in / ${formatInt(data.output_tokens)} out tokens`,
        ),
      );
    }
  }
  article.append(head);
  if (data.format_error) {
    const alert = el("div", "alert bad small");
    alert.append(el("strong", null, "Format error "), document.createTextNode(data.format_error));
    article.append(alert);
  }
  // A reply without a readable action: nothing reached the environment, and the observation
  // is EnvDuels' format reminder (the rule of Step.is_format_reminder).
  const reminder = Boolean(data.format_error) && !data.action;
  if (data.index > 0) {
    const action = el("div", "step-action");
    action.append(el("span", "label", "action"), document.createTextNode(" "));
    if (reminder) {
      action.append(el("span", "muted", "none — the reply had no readable action, so nothing reached the environment"));
    } else {
      action.append(el("code", null, data.action));
    }
    article.append(action);
    if (data.thinking) {
      const thinking = el("details", "step-thinking");
      thinking.append(el("summary", null, "thinking"), el("pre", "wrap", data.thinking));
      article.append(thinking);
    }
    if (data.reply) {
      const details = el("details", "step-reply");
      details.append(el("summary", null, "full reply"), el("pre", "wrap", data.reply));
      article.append(details);
    }
  }
  const observation = el("div", reminder ? "step-observation format-reminder" : "step-observation");
  const label = reminder ? "format reminder from EnvDuels, not the environment" : "observation";
  observation.append(el("span", "label", label), el("pre", "wrap", data.observation));
  article.append(observation);
  return article;
}

const root = document.getElementById("replay");
if (root) {
  const replay = new Replay(root);
  if (replay.offline) replay.offline.render();
  replay.start();
}
