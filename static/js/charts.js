// Draw the analytics figures with Plotly from the JSON data island (no inline script: CSP).
(function () {
  "use strict";

  function draw() {
    var island = document.getElementById("analytics-figures");
    if (!island || typeof Plotly === "undefined") {
      return;
    }
    var figures = JSON.parse(island.textContent);
    document.querySelectorAll(".js-chart[data-figure]").forEach(function (element) {
      var figure = figures[element.dataset.figure];
      if (!figure) {
        return;
      }
      Plotly.newPlot(element, figure.data || [], figure.layout || {}, {
        responsive: true,
        displaylogo: false,
        modeBarButtonsToRemove: ["sendDataToCloud"],
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
