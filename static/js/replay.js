// Replay viewer for one episode: catches up over the websocket, tails live steps, and plays
// them back. No dependencies, no inline script (the page's CSP allows only /static/ scripts).
// Every string from the server is untrusted: it is only ever set with textContent.

const DONE = new Set(["finished", "failed", "cancelled"]);
const MAX_BACKOFF_MS = 10000;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function formatInt(value) {
  return Number(value || 0).toLocaleString("en-US");
}

function stepFromHash() {
  const match = /^#step-(\d+)$/.exec(window.location.hash);
  return match ? Number(match[1]) : null;
}

export class Replay {
  constructor(root) {
    this.root = root;
    this.episode = root.dataset.episode;
    this.status = root.dataset.status;
    this.ended = DONE.has(this.status);
    this.steps = new Map();
    this.maxIndex = -1;
    this.current = null;
    this.target = stepFromHash();
    this.playing = false;
    this.timer = null;
    this.speed = 1;
    this.socket = null;
    this.attempts = 0;
    this.stepView = root.querySelector("[data-role=step]");
    this.position = root.querySelector("[data-role=position]");
    this.liveLabel = root.querySelector("[data-role=live]");
    this.scrub = root.querySelector("[data-control=scrub]");
    this.follow = root.querySelector("[data-control=follow]");
    this.playButton = root.querySelector("[data-action=play]");
    this.follow.checked = !this.ended && this.target === null;
  }

  start() {
    document.body.classList.add("js-replay");
    this.root.hidden = false;
    this.bindControls();
    this.renderLive();
    this.connect();
  }

  // --- websocket -------------------------------------------------------------------------

  connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${window.location.host}/ws/episodes/${this.episode}/?since=${this.maxIndex}`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      this.attempts = 0;
      this.receive(JSON.parse(event.data));
    });
    socket.addEventListener("close", () => {
      if (this.socket !== socket || this.ended) return;
      // Reconnect with backoff, asking only for steps after the last one we hold.
      const delay = Math.min(500 * 2 ** this.attempts, MAX_BACKOFF_MS);
      this.attempts += 1;
      this.liveLabel.textContent = `reconnecting in ${Math.round(delay / 100) / 10} s…`;
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
    }
  }

  addStep(message) {
    const index = message.index;
    if (this.steps.has(index)) return; // duplicates are dropped by index
    this.steps.set(index, message.data);
    if (index > this.maxIndex) this.maxIndex = index;
  }

  afterSteps() {
    this.scrub.max = String(Math.max(this.maxIndex, 0));
    if (this.current === null) {
      if (this.target !== null && this.steps.has(this.target)) {
        this.show(this.target);
      } else if (this.target === null) {
        this.show(this.follow.checked ? this.maxIndex : 0);
      }
    } else if (this.follow.checked && !this.playing) {
      this.show(this.maxIndex);
    } else {
      this.renderPosition();
    }
  }

  finish(message) {
    this.ended = true;
    this.status = message.status;
    const badge = document.querySelector("#episode-status .badge");
    if (badge) {
      badge.textContent = message.status;
      badge.className = `badge ${message.status}`;
    }
    if (message.error) {
      const box = document.getElementById("episode-error");
      if (box) {
        box.querySelector("pre").textContent = message.error;
        box.classList.remove("hidden");
      }
    }
    if (this.current === null) this.show(this.target ?? 0);
    if (this.target !== null && this.current !== this.target && this.steps.has(this.target)) {
      this.show(this.target);
    }
    this.renderLive();
    if (this.socket) this.socket.close();
  }

  // --- navigation ------------------------------------------------------------------------

  show(index, { updateHash = true } = {}) {
    if (this.maxIndex < 0) return;
    const bounded = Math.max(0, Math.min(index, this.maxIndex));
    this.current = bounded;
    if (this.target !== null && this.steps.has(this.target)) this.target = null;
    this.renderStep();
    if (updateHash && window.location.hash !== `#step-${bounded}`) {
      window.history.replaceState(null, "", `#step-${bounded}`);
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

  bindControls() {
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest("[data-action]");
      if (!button) return;
      const action = button.dataset.action;
      if (action === "play") this.toggle();
      else if (action === "back") this.move(-1);
      else if (action === "forward") this.move(1);
      else if (action === "first") this.move(-Infinity);
      else if (action === "last") this.show(this.maxIndex);
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
      if (this.follow.checked) this.show(this.maxIndex);
    });
    document.addEventListener("keydown", (event) => this.onKey(event));
    window.addEventListener("hashchange", () => {
      const index = stepFromHash();
      if (index !== null && index !== this.current) {
        this.follow.checked = false;
        if (this.steps.has(index)) this.show(index, { updateHash: false });
        else this.target = index;
      }
    });
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const focused = event.target;
    const typing =
      focused.isContentEditable ||
      ["TEXTAREA", "SELECT"].includes(focused.tagName) ||
      (focused.tagName === "INPUT" && !["range", "checkbox", "button"].includes(focused.type));
    if (typing) return;
    const keys = {
      " ": () => this.toggle(),
      ArrowLeft: () => this.move(-1),
      ArrowRight: () => this.move(1),
      Home: () => this.move(-Infinity),
      End: () => this.show(this.maxIndex),
    };
    const handler = keys[event.key];
    if (!handler) return;
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

  renderPosition() {
    if (this.current === null) {
      this.position.textContent = this.ended ? "no steps" : "waiting for the first step…";
      return;
    }
    this.scrub.value = String(this.current);
    const label = this.current === 0 ? "reset" : `step ${formatInt(this.current)}`;
    this.position.textContent = `${label} of ${formatInt(this.maxIndex)}`;
  }

  renderStep() {
    this.renderPosition();
    const data = this.steps.get(this.current);
    const view = this.stepView;
    view.replaceChildren();
    if (!data) {
      view.append(el("p", "empty", "This step is still loading."));
      return;
    }
    view.append(renderStep(data));
  }
}

export function renderStep(data) {
  const classes = ["step", "current"];
  if (data.format_error) classes.push("has-format-error");
  if (data.done) classes.push(data.success ? "step-ok" : "step-bad");
  const article = el("article", classes.join(" "));
  article.dataset.index = String(data.index);
  const head = el("header", "step-head");
  head.append(el("span", "step-index", data.index === 0 ? "reset" : `step ${data.index}`));
  if (data.index > 0) {
    const reward = data.reward === null || data.reward === undefined ? "—" : Number(data.reward).toFixed(2);
    head.append(el("span", "small muted", `reward ${reward}`));
    if (data.done) {
      head.append(el("span", data.success ? "badge ok" : "badge bad", data.success ? "passed" : "failed"));
    }
    head.append(
      el(
        "span",
        "small muted",
        `${formatInt(data.latency_ms)} ms · ${formatInt(data.input_tokens)} in / ${formatInt(data.output_tokens)} out tokens`,
      ),
    );
  }
  article.append(head);
  if (data.format_error) {
    const alert = el("div", "alert bad small");
    alert.append(el("strong", null, "Format error "), document.createTextNode(data.format_error));
    article.append(alert);
  }
  if (data.index > 0) {
    const action = el("div", "step-action");
    action.append(el("span", "label", "action"), document.createTextNode(" "), el("code", null, data.action));
    article.append(action);
    if (data.reply) {
      const details = el("details", "step-reply");
      details.append(el("summary", null, "full reply"), el("pre", "wrap", data.reply));
      article.append(details);
    }
  }
  const observation = el("div", "step-observation");
  observation.append(el("span", "label", "observation"), el("pre", "wrap", data.observation));
  article.append(observation);
  return article;
}

const root = document.getElementById("replay");
if (root) new Replay(root).start();
