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
      Plotly.newPlot(element, figure.data || [], figure.layout || {}, {
        responsive: true,
        displaylogo: false,
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
