// Draw the analytics figures with Plotly from the JSON data island (no inline script: CSP).
// plotly.js (1.5 MB) is fetched only after the page has loaded, so the tables, findings and
// navigation are usable at once; charts then draw one per frame, those in view first.
(function () {
  "use strict";

  var script = document.currentScript;
  var plotlyUrl = script && script.dataset.plotly;

  function loadPlotly() {
    return new Promise(function (resolve, reject) {
      if (typeof Plotly !== "undefined") { resolve(); return; }
      var tag = document.createElement("script");
      tag.src = plotlyUrl;
      tag.onload = function () { resolve(); };
      tag.onerror = function () { reject(new Error("could not load " + plotlyUrl)); };
      document.head.appendChild(tag);
    });
  }

  function nextFrame() {
    return new Promise(function (resolve) { window.requestAnimationFrame(function () { resolve(); }); });
  }

  // Below this width a figure uses its narrow layout (layout.meta.narrow: axis domains, height)
  // and draws without Plotly's toolbar, which would cover its top on a phone.
  var NARROW_PX = 640;

  function layoutFor(element, layout) {
    var narrow = layout && layout.meta && layout.meta.narrow;
    if (!narrow || element.clientWidth >= NARROW_PX) return layout || {};
    var merged = Object.assign({}, layout);
    Object.keys(narrow).forEach(function (key) {
      var value = narrow[key];
      merged[key] = value && typeof value === "object" && !Array.isArray(value)
        ? Object.assign({}, layout[key] || {}, value) : value;
    });
    return merged;
  }

  function inView(element) {
    var box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight;
  }

  async function draw() {
    var island = document.getElementById("analytics-figures");
    if (!island) return;
    var figures = JSON.parse(island.textContent);
    var charts = Array.prototype.slice.call(document.querySelectorAll(".js-chart[data-figure]"));
    if (!charts.length) return;
    try {
      await loadPlotly();
    } catch (error) {
      charts.forEach(function (element) {
        element.textContent = "The chart library did not load (" + error.message + "); reload the page.";
        element.classList.add("alert", "bad");
      });
      return;
    }
    charts.sort(function (a, b) { return Number(inView(b)) - Number(inView(a)); });
    for (var i = 0; i < charts.length; i += 1) {
      var element = charts[i];
      var figure = figures[element.dataset.figure];
      if (!figure) continue;
      var narrow = element.clientWidth < NARROW_PX;
      Plotly.newPlot(element, figure.data || [], layoutFor(element, figure.layout), {
        responsive: true,
        displaylogo: false,
        displayModeBar: narrow ? false : "hover",
        modeBarButtonsToRemove: ["sendDataToCloud"],
      });
      await nextFrame();
    }
  }

  if (document.readyState === "complete") {
    draw();
  } else {
    window.addEventListener("load", function () { draw(); });
  }
})();
