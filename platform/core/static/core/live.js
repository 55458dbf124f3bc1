// Live values without reloads: poll a JSON endpoint with fetch and write its values into the page.
// Loaded on every page by core/base.html. Two ways to use it:
//
// 1. Markup only:
//    <div data-live-url="/live/queue.json" data-live-every="5">
//      <span data-live-key="queued">3</span>            text = JSON value at that dotted path ("kinds.0.queued")
//      <span data-live-key="oldest_wait_seconds" data-live-format="duration">…</span>
//      <span data-live-state></span>                     "updated 12:03:04" / "offline, retrying"
//    </div>
//    data-live-stop-when="final"   stop polling once that key is truthy
//    data-live-reload              and then reload the page (to show the finished result in full)
//
// 2. Regions of a page (tables, counts) kept fresh while something on it is in play:
//    <div data-live-region="ladder-table" data-live-active> ... </div>
//    While any region is marked data-live-active, the page's own address is fetched every
//    REGION_EVERY seconds and each region's content replaced by the fresh page's when it
//    differs; once the fresh page marks none active, the page watches /live/queue.json every
//    WATCH_EVERY seconds and fetches itself again when the queue's counts change.
//
// 3. From a module:  import { poll } from "/static/core/live.js";
//    const handle = poll(url, { every: 5, onData(data) {...}, until: (data) => data.done });  handle.stop();
//
// Polling pauses while the tab is hidden and backs off (up to a minute) while requests fail.

const MAX_BACKOFF_SECONDS = 60;

//: seconds between two fetches of a page whose regions are live
const REGION_EVERY = 5;

export function poll(url, { every = 5, onData = () => {}, until = () => false, onError = () => {}, html = false } = {}) {
  let timer = null;
  let stopped = false;
  let failures = 0;

  const schedule = (seconds) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(tick, seconds * 1000);
  };

  async function tick() {
    if (stopped) return;
    if (document.hidden) return; // resumed by visibilitychange
    try {
      const accept = html ? "text/html" : "application/json";
      const response = await fetch(url, { headers: { Accept: accept }, credentials: "same-origin", cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status} from ${url}`);
      const data = html ? new DOMParser().parseFromString(await response.text(), "text/html") : await response.json();
      failures = 0;
      onData(data);
      if (until(data)) return stop();
      schedule(every);
    } catch (err) {
      failures += 1;
      onError(err, failures);
      schedule(Math.min(MAX_BACKOFF_SECONDS, every * 2 ** failures));
    }
  }

  const onVisible = () => {
    if (!document.hidden && !stopped) schedule(0);
  };
  function stop() {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", onVisible);
  }
  document.addEventListener("visibilitychange", onVisible);
  schedule(every);
  return { stop, now: () => schedule(0) };
}

export function pick(data, path) {
  return path.split(".").reduce((value, key) => (value === null || value === undefined ? undefined : value[key]), data);
}

export function formatValue(value, format) {
  if (value === null || value === undefined) return "—";
  if (format === "duration") {
    const s = Math.max(0, Math.round(Number(value)));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  }
  return String(value);
}

// Write the values of `data` into the [data-live-key] elements inside `root`.
export function fill(root, data) {
  for (const el of root.querySelectorAll("[data-live-key]")) {
    const text = formatValue(pick(data, el.dataset.liveKey), el.dataset.liveFormat);
    if (el.textContent !== text) {
      el.textContent = text;
      el.classList.add("live-changed");
      setTimeout(() => el.classList.remove("live-changed"), 1200);
    }
  }
}

function setState(root, text, state) {
  for (const el of root.querySelectorAll("[data-live-state]")) {
    el.textContent = text;
    el.dataset.liveState = state;
  }
}

export function bind(root) {
  const stopKey = root.dataset.liveStopWhen;
  return poll(root.dataset.liveUrl, {
    every: Number(root.dataset.liveEvery) || 5,
    onData(data) {
      fill(root, data);
      setState(root, `updated ${new Date().toLocaleTimeString()}`, "ok");
      root.dispatchEvent(new CustomEvent("live:data", { detail: data }));
    },
    until(data) {
      const done = Boolean(stopKey && pick(data, stopKey));
      if (done && "liveReload" in root.dataset) location.reload();
      return done;
    },
    onError(err, failures) {
      setState(root, `offline, retrying (${failures})`, "error");
    },
  });
}

// Replace each live region's content by the same region of `fresh` (a parsed page); whether any
// region of `fresh` is still active.
export function refreshRegions(fresh) {
  let active = false;
  for (const region of document.querySelectorAll("[data-live-region]")) {
    const name = region.dataset.liveRegion;
    const next = [...fresh.querySelectorAll("[data-live-region]")].find((el) => el.dataset.liveRegion === name);
    if (!next) continue;
    if (next.innerHTML !== region.innerHTML) {
      region.innerHTML = next.innerHTML;
      region.classList.add("live-changed");
      setTimeout(() => region.classList.remove("live-changed"), 1200);
    }
    if ("liveActive" in next.dataset) active = true;
    else delete region.dataset.liveActive;
  }
  return active;
}

// While a region is active the page is fetched every REGION_EVERY seconds. Otherwise (nothing of
// it in play, or no longer) the page watches the site's queue, a small JSON, every WATCH_EVERY
// seconds, and fetches itself once whenever the queue's counts change: a ladder page opened
// between two matchmaking passes, or a home page opened while the site was idle, picks up what
// starts without a reload.
const WATCH_EVERY = 15;
const QUEUE_URL = "/live/queue.json";

function bindRegions() {
  if (!document.querySelector("[data-live-region]")) return null;
  let handle = null;
  const follow = () => {
    handle = poll(location.href, { every: REGION_EVERY, html: true, until: (fresh) => !refreshRegions(fresh) && (watch(), true) });
  };
  const watch = () => {
    let seen = null;
    handle = poll(QUEUE_URL, {
      every: WATCH_EVERY,
      onData(counts) {
        const now = `${counts.queued}:${counts.running}`;
        // the first look has no baseline: anything queued or running may have started since the
        // page was rendered, so the page is fetched once then too
        const changed = seen === null ? now !== "0:0" : now !== seen;
        seen = now;
        if (!changed) return;
        fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin", cache: "no-store" })
          .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status}`))))
          .then((text) => {
            if (refreshRegions(new DOMParser().parseFromString(text, "text/html"))) {
              handle.stop();
              follow();
            }
          })
          .catch(() => {}); // the next change of the queue tries again
      },
    });
  };
  if (document.querySelector("[data-live-region][data-live-active]")) follow();
  else watch();
  return { stop: () => handle && handle.stop() };
}

for (const root of document.querySelectorAll("[data-live-url]")) bind(root);
bindRegions();
