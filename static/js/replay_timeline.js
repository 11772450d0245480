// The episode's timeline: one bar per step of model latency, sandbox time, tokens or cost, from
// the steps' stored fields. Drawn on a canvas in one pass (steps sharing a pixel column show
// their largest value), so 10,000 steps draw as fast as 100; a click opens that step.

const LABELS = {
  latency_ms: "model latency",
  sandbox_ms: "sandbox time",
  tokens: "tokens",
  cost: "cost",
};

function formatTotal(name, value) {
  if (name === "cost") return value > 0 && value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
  if (name === "tokens") return `${Math.round(value).toLocaleString("en-US")} tokens`;
  if (value < 10000) return `${Math.round(value).toLocaleString("en-US")} ms`;
  return `${(value / 1000).toLocaleString("en-US", { maximumFractionDigits: 1 })} s`;
}

export class Timeline {
  constructor(replay, root) {
    this.replay = replay;
    this.root = root;
    this.canvas = root.querySelector("canvas");
    this.select = root.querySelector("[data-control=measure]");
    this.totals = root.querySelector("[data-role=timeline-totals]");
    this.queued = false;
  }

  bind() {
    this.root.hidden = false;
    this.select.addEventListener("change", () => this.queue());
    this.canvas.addEventListener("click", (event) => {
      const box = this.canvas.getBoundingClientRect();
      const total = this.replay.maxIndex + 1;
      if (total <= 0 || box.width <= 0) return;
      const index = Math.floor(((event.clientX - box.left) / box.width) * total);
      this.replay.jumpTo(Math.max(0, Math.min(index, total - 1)));
    });
    window.addEventListener("resize", () => this.queue());
  }

  queue() {
    if (this.queued) return;
    this.queued = true;
    window.requestAnimationFrame(() => {
      this.queued = false;
      this.draw();
    });
  }

  draw() {
    const store = this.replay.steps;
    const name = this.select.value;
    const total = this.replay.maxIndex + 1;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.floor(this.canvas.clientWidth * ratio));
    const height = Math.max(1, Math.floor(this.canvas.clientHeight * ratio));
    if (this.canvas.width !== width) this.canvas.width = width;
    if (this.canvas.height !== height) this.canvas.height = height;
    const context = this.canvas.getContext("2d");
    context.clearRect(0, 0, width, height);
    // The measures offered (a published copy without costs offers no cost), summed.
    const shown = Array.from(this.select.options, (option) => option.value);
    const sums = shown.map((measure) => `${LABELS[measure]} ${formatTotal(measure, store.totals[measure])}`);
    // Row 0 is the reset, not a step: the sums cover it and the solver's steps after it.
    const steps = Math.max(total - 1, 0);
    const over = total > 0 ? `the reset and ${steps.toLocaleString("en-US")} step${steps === 1 ? "" : "s"}` : "no steps";
    this.totals.textContent = `Sum over ${over}: ${sums.join(" · ")}`;
    if (total <= 0) return;
    const values = store.measures[name];
    const columns = Math.min(width, total);
    const peaks = new Float64Array(columns);
    let peak = 0;
    for (let index = 0; index < total; index += 1) {
      const column = Math.floor((index * columns) / total);
      const value = values[index] || 0;
      if (value > peaks[column]) peaks[column] = value;
      if (value > peak) peak = value;
    }
    const barWidth = width / columns;
    context.fillStyle = "#2b4fc7";
    if (peak > 0) {
      for (let column = 0; column < columns; column += 1) {
        const barHeight = (peaks[column] / peak) * (height - 2);
        if (barHeight > 0) {
          context.fillRect(column * barWidth, height - barHeight, Math.max(barWidth - (barWidth > 3 ? 1 : 0), 1), barHeight);
        }
      }
    }
    const current = this.replay.current;
    if (current !== null) {
      context.fillStyle = "#b02a20";
      context.fillRect(Math.floor(((current + 0.5) / total) * width) - ratio, 0, 2 * ratio, height);
    }
    const label = `${LABELS[name]} per step, peak ${formatTotal(name, peak)}${current !== null ? `; ${current === 0 ? "reset" : `step ${current.toLocaleString("en-US")}`}: ${formatTotal(name, values[current] || 0)}` : ""}`;
    this.canvas.setAttribute("aria-label", label);
    this.canvas.title = label;
  }
}

