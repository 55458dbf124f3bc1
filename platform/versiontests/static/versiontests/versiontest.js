// The live parts of a version test's page: core/live.js polls the test's JSON and writes its
// texts; on each "live:data" event this redraws the LLR gauge and chart from the geometry the
// JSON carries (versiontests/charts.py computes it, for the first render too).

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attrs, text) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  if (text !== undefined) el.textContent = text;
  return el;
}

function draw(root, data) {
  const marker = root.querySelector("[data-gauge-marker]");
  if (marker && data.gauge) {
    marker.setAttribute("x1", `${data.gauge.marker_x}%`);
    marker.setAttribute("x2", `${data.gauge.marker_x}%`);
  }
  const chart = data.chart;
  const plot = root.querySelector("[data-llr-chart]");
  if (!plot || !chart) return;
  plot.querySelector("[data-llr-line]").setAttribute("points", chart.points);
  const dot = plot.querySelector("[data-llr-dot]");
  dot.setAttribute("cx", chart.last_x);
  dot.setAttribute("cy", chart.last_y);
  for (const [name, y] of [["upper", chart.upper_y], ["lower", chart.lower_y], ["zero", chart.zero_y]]) {
    const line = plot.querySelector(`[data-bound="${name}"]`);
    line.setAttribute("y1", y);
    line.setAttribute("y2", y);
  }
  const ticks = plot.querySelector("[data-ticks]");
  ticks.replaceChildren();
  for (const tick of chart.y_ticks) {
    ticks.append(svg("line", { class: "grid-line", x1: chart.left, x2: chart.right, y1: tick.y, y2: tick.y }));
    ticks.append(svg("text", { class: "axis", x: chart.left - 6, y: tick.y, "text-anchor": "end", "dominant-baseline": "middle" }, tick.label));
  }
  for (const tick of chart.x_ticks) {
    ticks.append(svg("text", { class: "axis", x: tick.x, y: chart.bottom + 16, "text-anchor": "middle" }, tick.label));
  }
}

for (const root of document.querySelectorAll("[data-versiontest]")) {
  root.addEventListener("live:data", (event) => draw(root, event.detail));
}
