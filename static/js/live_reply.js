// The reply being written, live: fills `<div id="live-reply">` under the current step with the
// text a solver is still streaming (`reply.partial` messages, re-dispatched by replay.js as
// `envduels:message`). Nothing here is stored: when the step commits (`envduels:steps` reports
// an index at or past it) or the episode ends, the stored step replaces it and the slot empties.
// Every string is untrusted model output: it is only ever set with textContent.

const slot = document.getElementById("live-reply");

if (slot) {
  let storedMax = -1; // highest stored step the replay holds
  let box = null; // {index, root, label, thinking, thinkingText, reply}

  const clear = () => {
    slot.replaceChildren();
    box = null;
  };

  const build = (index) => {
    const root = document.createElement("article");
    root.className = "step live-reply";
    root.setAttribute("aria-live", "polite");
    const label = document.createElement("header");
    label.className = "step-head small muted";
    const thinking = document.createElement("details"); // collapsed; the viewer may open it
    thinking.className = "step-thinking";
    const summary = document.createElement("summary");
    summary.textContent = "thinking";
    const thinkingText = document.createElement("pre");
    thinkingText.className = "wrap";
    thinking.append(summary, thinkingText);
    thinking.hidden = true;
    const reply = document.createElement("pre");
    reply.className = "wrap live-reply-text";
    root.append(label, thinking, reply);
    slot.replaceChildren(root);
    return { index, root, label, thinking, thinkingText, reply };
  };

  document.addEventListener("envduels:message", (event) => {
    const message = event.detail || {};
    if (message.type !== "reply.partial" || typeof message.index !== "number") return;
    if (message.index <= storedMax) return; // its step is already shown
    if (box === null || box.index !== message.index) box = build(message.index);
    const text = String(message.text || "");
    const thinking = String(message.thinking || "");
    const restarted = !text && !thinking;
    box.label.textContent = restarted
      ? `step ${message.index} · the reply stream broke off; asking again…`
      : `step ${message.index} · being written…`;
    box.thinkingText.textContent = thinking;
    box.thinking.hidden = !thinking;
    box.reply.textContent = text;
  });

  document.addEventListener("envduels:steps", (event) => {
    storedMax = Math.max(storedMax, Number(event.detail?.maxIndex ?? -1));
    if (box !== null && box.index <= storedMax) clear();
  });

  document.addEventListener("envduels:ended", clear);
}
