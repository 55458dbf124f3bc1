// A running tournament's page: poll its small progress document and update the bar, the
// counts, the round and the status in place (the page itself is not reloaded).
// Loaded by tournaments/tournament_detail.html as a classic deferred script whose data-*
// attributes say where to poll and what the page showed when it was made.
(function () {
  "use strict";
  var script = document.currentScript;
  var url = script.dataset.url;
  var seen = Number(script.dataset.done), round = Number(script.dataset.round);
  var box = document.querySelector("[data-progress]");
  function update(p) {
    box.querySelector("progress").value = p.percent;
    box.querySelector("[data-done]").textContent = p.done;
    box.querySelector("[data-total]").textContent = p.total;
    document.querySelector("[data-round]").textContent = p.current_round;
    var badge = document.querySelector("[data-status]");
    badge.textContent = p.status;
    badge.className = "badge badge-" + p.status;
    if (p.done !== seen || p.current_round !== round) {
      document.querySelector("[data-live-note]").hidden = false;
    }
    return p.status === "running" || p.status === "paused";
  }
  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) { if (!p || update(p)) { setTimeout(poll, 4000); } })
      .catch(function () { setTimeout(poll, 8000); });
  }
  setTimeout(poll, 4000);
})();
