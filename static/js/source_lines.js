// A link with ?lines=A-B marks those lines; this brings the first of them into view (a #line-N
// address already scrolls by itself).
const marked = document.querySelector(".source-view tr.marked");
if (marked && !window.location.hash) marked.scrollIntoView({ block: "center" });
