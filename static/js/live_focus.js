// Keyboard focus survives the live refreshes (htmx swaps that redraw a part of the page every
// few seconds): before a swap the focused element inside the swapped part is remembered by what
// it is (tag, link, name, button text) and its place among its likes; after the swap the
// equivalent element gets the focus back, so a keyboard user is not thrown to the page's top.

function signature(node) {
  return [node.tagName, node.getAttribute("href") || "", node.getAttribute("name") || "",
    node.dataset.action || "", node.tagName === "BUTTON" ? node.textContent.trim() : ""].join("|");
}

const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";
let remembered = null;

document.addEventListener("htmx:beforeSwap", (event) => {
  const target = event.detail.target;
  const active = document.activeElement;
  remembered = null;
  if (!target || !target.id || !active || active === document.body || !target.contains(active)) return;
  const key = signature(active);
  const likes = [...target.querySelectorAll(FOCUSABLE)].filter((node) => signature(node) === key);
  remembered = { targetId: target.id, key, place: likes.indexOf(active) };
});

document.addEventListener("htmx:afterSettle", () => {
  if (!remembered) return;
  const { targetId, key, place } = remembered;
  remembered = null;
  const target = document.getElementById(targetId);
  if (!target || (document.activeElement && target.contains(document.activeElement))) return;
  const likes = [...target.querySelectorAll(FOCUSABLE)].filter((node) => signature(node) === key);
  const again = likes[Math.min(Math.max(place, 0), likes.length - 1)];
  if (again) again.focus({ preventScroll: true });
});
