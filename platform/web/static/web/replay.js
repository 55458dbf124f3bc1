// The replay viewer: loads a match's replay JSON, applies its events (replay-state.js) and draws the table.
// No build step: a plain ES module. The page gives the viewer its metadata in <script id="replay-meta">.
import { GameTimeline, HIDDEN_CARD, describeStep } from "./replay-state.js";

// A shape per colour as well as the colour itself, for colour-blind players.
const COLOR_MARKS = { R: "▲", Y: "●", G: "■", B: "◆" };
const SPEEDS = [0.5, 1, 2, 4, 8];
const STEP_MS = 900;

const $ = (id) => document.getElementById(id);

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// The card table comes from the server (engine.cards, through replay-meta): the viewer parses no codes
// and names no card itself. TABLE: {cards: code -> {color, rank, name, order}, color_names: letter -> word}.
let CARDS = {};
let TABLE = { cards: {}, color_names: {} };
const FACES = { skip: "⊘", reverse: "⇄", draw_two: "+2", wild: "W", wild_draw_four: "+4" };

function cardInfo(code) {
  const info = CARDS[code];
  if (!info) throw new Error(`unknown card code ${JSON.stringify(code)} in the replay`);
  return info;
}

// also drawn by the play page's hand (play/play.js)
export function cardHtml(code, extra = "") {
  if (code === HIDDEN_CARD) return `<span class="card card-back ${extra}" role="img" aria-label="hidden card"></span>`;
  const info = cardInfo(code);
  const face = FACES[info.rank] ?? String(info.rank);
  const mark = info.color ? `${info.color}${COLOR_MARKS[info.color] || ""}` : "★";
  const name = escapeHtml(info.name);
  // read as its name ("green 6"), not as the letters and shapes drawn on it
  return (
    `<span class="card c-${info.color || "W"} ${extra}" data-card="${escapeHtml(code)}" role="img" aria-label="${name}" title="${name}">` +
    `<span class="card-corner" aria-hidden="true">${escapeHtml(mark)}</span><span class="card-face" aria-hidden="true">${escapeHtml(face)}</span>` +
    `<span class="card-corner card-corner-end" aria-hidden="true">${escapeHtml(mark)}</span></span>`
  );
}

// colours in engine order, then wilds; within a colour by rank (deck order)
function sortHand(hand) {
  const order = (c) => (c === HIDDEN_CARD ? Infinity : cardInfo(c).order); // hidden cards of a live game last
  return hand.slice().sort((a, b) => order(a) - order(b));
}

function readHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const int = (k) => (params.has(k) && /^\d+$/.test(params.get(k)) ? Number(params.get(k)) : null);
  return { g: int("g"), r: int("r"), e: int("e"), v: params.get("v") };
}

function seconds(value) {
  if (value === null || value === undefined) return "—";
  if (value < 0.0001) return "under 0.1 ms";
  return value < 0.1 ? `${(value * 1000).toFixed(1)} ms` : `${value.toFixed(2)} s`;
}

class Viewer {
  constructor(root, meta, replay) {
    this.root = root;
    this.meta = meta;
    this.replay = replay;
    this.timelines = replay.games.map((g) => new GameTimeline(g));
    this.game = 0;
    this.pos = 0;
    this.view = "full"; // or a seat number
    this.playing = null;
    this.speed = 1;
    this.abort = new AbortController();
    // what a readable bot printed during each of its decisions: "bot:game:action index" -> text
    this.decisionLogs = new Map();
    for (const [bot, entries] of Object.entries(meta.decision_logs || {})) {
      for (const [g, i, text] of entries) this.decisionLogs.set(`${bot}:${g}:${i}`, text);
    }
  }

  // the recorded time of action record `index` of the current game in ms, or null
  decisionMs(index) {
    const times = (this.meta.decision_ms || [])[this.game];
    const ms = times ? times[index] : null;
    return typeof ms === "number" ? ms : null;
  }

  get timeline() {
    return this.timelines[this.game];
  }

  // the bot sitting at `seat` in the current game
  bot(seat) {
    const index = this.timeline.game.seats[seat];
    return { index, ...(this.meta.bots[index] || { label: this.timeline.game.names[seat], url: "", reference: false }) };
  }

  seatName(seat) {
    return `seat ${seat} (${this.bot(seat).label})`;
  }

  renderGames() {
    const games = $("rv-game");
    games.innerHTML = this.replay.games
      .map((g, i) => {
        const extra = this.replay.duplicate ? ` · deal ${g.deal + 1}, rotation ${g.rotation + 1}` : "";
        return `<option value="${i}">Game ${i + 1}${extra}</option>`;
      })
      .join("");
    games.disabled = this.replay.games.length < 2;
  }

  // a live match's replay grew (more events, perhaps another game): the spectator stays where they
  // are, or moves on with the newest event when they were at it
  update(replay) {
    const following = this.game === this.timelines.length - 1 && this.pos >= this.timeline.length;
    this.replay = replay;
    this.timelines = replay.games.map((g) => new GameTimeline(g));
    this.renderGames();
    if (following) {
      this.game = this.timelines.length - 1;
      this.pos = this.timeline.length;
    }
    this.render();
  }

  setup() {
    const signal = this.abort.signal; // every listener ends with this viewer (destroy)
    const games = $("rv-game");
    this.renderGames();
    games.addEventListener("change", () => this.go(Number(games.value), null), { signal });
    $("rv-round").addEventListener("change", (e) => this.goRound(Number(e.target.value)), { signal });
    $("rv-view").addEventListener("change", (e) => {
      this.view = e.target.value === "full" ? "full" : Number(e.target.value);
      this.render();
    }, { signal });
    $("rv-speed").innerHTML = SPEEDS.map((s) => `<option value="${s}"${s === 1 ? " selected" : ""}>${s}×</option>`).join("");
    $("rv-speed").addEventListener("change", (e) => {
      this.speed = Number(e.target.value);
      if (this.playing) this.play();
    }, { signal });
    $("rv-slider").addEventListener("input", (e) => this.go(this.game, Number(e.target.value)), { signal });
    $("rv-start").addEventListener("click", () => this.go(this.game, 0), { signal });
    $("rv-back").addEventListener("click", () => this.step(-1), { signal });
    $("rv-play").addEventListener("click", () => this.toggle(), { signal });
    $("rv-forward").addEventListener("click", () => this.step(1), { signal });
    $("rv-end").addEventListener("click", () => this.go(this.game, this.timeline.length), { signal });
    $("rv-history").addEventListener("click", (e) => {
      const item = e.target.closest("[data-pos]");
      if (!item) return;
      e.preventDefault(); // the link's own "#" would reset the position through hashchange
      this.go(this.game, Number(item.dataset.pos));
      // the list was drawn again: keep the focus on the step the user chose (now the newest entry)
      const chosen = $("rv-history").querySelector(`a[data-pos="${this.pos}"]`);
      if (chosen) chosen.focus();
    }, { signal });
    // a choice made in a menu hands the keys back to the player (they would change the menu's value)
    for (const id of ["rv-game", "rv-round", "rv-view", "rv-speed"]) $(id).addEventListener("change", (e) => e.target.blur(), { signal });
    document.addEventListener("keydown", (e) => this.key(e), { signal });
    window.addEventListener("hashchange", () => this.fromHash(), { signal });
    this.fromHash();
  }

  // stop playing and drop every listener: another replay is being opened in this page
  destroy() {
    this.stop();
    this.abort.abort();
  }

  fromHash() {
    const h = readHash();
    const game = h.g !== null && h.g >= 1 && h.g <= this.timelines.length ? h.g - 1 : 0;
    if (h.v !== null) this.view = h.v === "full" || !/^\d+$/.test(h.v) ? "full" : Number(h.v);
    const t = this.timelines[game];
    if (this.view !== "full" && !(this.view < t.players)) this.view = "full";
    if (h.e !== null) return this.go(game, Math.min(h.e, t.length));
    if (h.r !== null) {
      this.game = game;
      return this.goRound(h.r);
    }
    return this.go(game, null);
  }

  key(e) {
    const field = e.target.closest ? e.target.closest("input, select, textarea") : null;
    // the slider moves itself with the arrows, Home and End; Space and Up/Down stay the player's
    if (field && !(field.type === "range" && [" ", "ArrowUp", "ArrowDown"].includes(e.key))) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const actions = {
      " ": () => this.toggle(),
      ArrowRight: () => this.step(1),
      ArrowLeft: () => this.step(-1),
      Home: () => this.go(this.game, 0),
      End: () => this.go(this.game, this.timeline.length),
      ArrowUp: () => this.roundStep(-1),
      ArrowDown: () => this.roundStep(1),
    };
    if (actions[e.key]) {
      e.preventDefault();
      actions[e.key]();
    }
  }

  // go to a game and an event index (null: just after the first deal)
  go(game, pos) {
    if (game !== this.game) this.stop();
    this.game = game;
    const t = this.timeline;
    if (pos === null) pos = t.rounds.length ? t.nextStop(t.rounds[0].start) : 0;
    this.pos = Math.max(0, Math.min(pos, t.length));
    if (this.pos >= t.length) this.stop();
    this.render();
  }

  goRound(round) {
    const t = this.timeline;
    const r = t.rounds.find((x) => x.round === round) || t.rounds[0];
    this.go(this.game, r ? t.nextStop(r.start) : 0);
  }

  roundStep(delta) {
    const t = this.timeline;
    const current = t.roundAt(this.pos);
    if (!current) return;
    const next = t.rounds[t.rounds.indexOf(current) + delta];
    if (next) this.goRound(next.round);
    else if (delta < 0) this.go(this.game, 0);
  }

  step(delta) {
    const t = this.timeline;
    this.go(this.game, delta > 0 ? t.nextStop(this.pos) : t.prevStop(this.pos));
  }

  toggle() {
    if (this.playing) this.stop();
    else this.play();
    this.renderPlayButton();
  }

  play() {
    clearTimeout(this.playing);
    if (this.pos >= this.timeline.length) this.go(this.game, 0);
    const tick = () => {
      this.step(1);
      this.playing = this.pos < this.timeline.length ? setTimeout(tick, STEP_MS / this.speed) : null;
      this.renderPlayButton();
    };
    this.playing = setTimeout(tick, STEP_MS / this.speed);
    this.renderPlayButton();
  }

  stop() {
    clearTimeout(this.playing);
    this.playing = null;
    this.renderPlayButton();
  }

  renderPlayButton() {
    const b = $("rv-play");
    b.innerHTML = this.playing ? '<span aria-hidden="true">❚❚</span> Pause' : '<span aria-hidden="true">▶</span> Play';
    b.setAttribute("aria-pressed", this.playing ? "true" : "false");
  }

  canSee(seat) {
    return this.view === "full" || this.view === seat;
  }

  render() {
    const t = this.timeline;
    const state = t.stateAt(this.pos);
    const from = t.prevStop(this.pos);
    const stepEvents = t.events.slice(from, this.pos);
    const round = t.roundAt(this.pos);

    this.renderSelectors(t, round);
    this.renderTable(t, state, stepEvents);

    const text = this.pos === 0 ? "Before the first deal." : describeStep(stepEvents, (s) => this.seatName(s), (s) => this.canSee(s), TABLE);
    $("rv-event").textContent = text;
    $("rv-slider").max = String(t.length);
    $("rv-slider").value = String(this.pos);
    $("rv-position").textContent = `event ${this.pos} of ${t.length}`;
    // what a screen reader says for the slider: the position and what happened there, not a bare number
    $("rv-slider").setAttribute("aria-valuetext", `event ${this.pos} of ${t.length}: ${text}`);
    this.renderDecisions(t.actionsBetween(from, this.pos));
    this.renderHistory(t);
    this.renderLog();
    this.root.dataset.game = String(this.game);
    this.root.dataset.pos = String(this.pos);
    const hash = `#g=${this.game + 1}&r=${round ? round.round : 0}&e=${this.pos}${this.view === "full" ? "" : `&v=${this.view}`}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  renderSelectors(t, round) {
    $("rv-game").value = String(this.game);
    const rounds = $("rv-round");
    const key = `${this.game}:${t.rounds.length}`;
    if (rounds.dataset.key !== key) {
      rounds.innerHTML = t.rounds.map((r) => `<option value="${r.round}">Round ${r.round}</option>`).join("");
      rounds.dataset.key = key;
      // a live game's hands are hidden from all but staff until the match ends: say so
      const hidden = (t.events || []).some((e) => e.e === "round_start" && e.hands.some((h) => h.includes(HIDDEN_CARD)));
      $("rv-view").innerHTML =
        `<option value="full">${hidden ? "Every seat (hands hidden until the match ends)" : "Full view (every hand)"}</option>` +
        t.game.seats.map((_, s) => `<option value="${s}">As ${escapeHtml(this.seatName(s))} saw it</option>`).join("");
    }
    if (round) rounds.value = String(round.round);
    $("rv-view").value = String(this.view);
  }

  renderTable(t, state, stepEvents) {
    const n = t.players;
    const asked = (t.actionsAt.get(this.pos) || [])[0];
    const acted = new Set(stepEvents.filter((e) => "seat" in e && e.e !== "turn").map((e) => e.seat));
    const seats = [];
    for (let s = 0; s < n; s++) {
      const bot = this.bot(s);
      const hand = state.hands[s];
      const visible = this.canSee(s);
      const cards = visible
        ? sortHand(hand).map((c) => cardHtml(c, "card-small")).join("")
        : hand.map(() => '<span class="card card-back card-small" aria-hidden="true"></span>').join("");
      const botLink = bot.url ? `<a href="${escapeHtml(bot.url)}">${escapeHtml(bot.label)}</a>` : escapeHtml(bot.label);
      const badges = [
        asked && asked.seat === s ? `<span class="badge badge-turn">deciding: ${escapeHtml(asked.decision)}</span>` : "",
        state.dealer === s && state.round ? '<span class="badge">dealer</span>' : "",
        state.uno[s] ? '<span class="badge badge-uno">UNO</span>' : "",
        t.forfeitedAt(s, this.pos) ? '<span class="badge badge-bad" title="played on by the fallback policy">forfeited</span>' : "",
        state.over ? `<span class="badge ${t.game.ranks[s] === 1 ? "badge-ok" : ""}">rank ${t.game.ranks[s]}</span>` : "",
        this.view === s ? '<span class="badge badge-ok">you</span>' : "",
      ].join(" ");
      seats.push(
        `<section class="seat${asked && asked.seat === s ? " seat-current" : ""}${acted.has(s) ? " seat-acted" : ""}" ` +
          `data-seat="${s}" data-hand-size="${hand.length}" data-visible="${visible}">` +
          `<header class="seat-head"><span class="seat-name">Seat ${s} · ${botLink}${bot.reference ? ' <span class="muted">(reference)</span>' : ""}</span>` +
          `<span class="seat-score" title="game points">${state.scores[s]} pts</span></header>` +
          `<div class="seat-badges">${badges}</div>` +
          `<div class="hand ${visible ? "hand-open" : "hand-hidden"}" role="group" aria-label="${hand.length} card${hand.length === 1 ? "" : "s"}${visible ? "" : ", face down"}">${cards || '<span class="muted">no cards</span>'}</div>` +
          `<div class="seat-count">${hand.length} card${hand.length === 1 ? "" : "s"}</div>` +
          `</section>`,
      );
    }
    const top = state.discard[state.discard.length - 1];
    const under = state.discard.slice(-4, -1).map((c) => cardHtml(c, "card-under")).join("");
    const color = state.color;
    const center =
      `<section class="pile" aria-label="table">` +
      `<div class="pile-cards"><div class="discard" title="discard pile (${state.discard.length} cards)">${under}${top ? cardHtml(top, `card-top${cardInfo(top).color === null && color ? ` named-${color}` : ""}`) : '<span class="card card-empty"></span>'}</div>` +
      `<div class="drawpile"><span class="card card-back" aria-hidden="true"></span><span class="drawpile-count" data-draw-pile="${state.draw_pile}">${state.draw_pile}</span><span class="muted">draw pile</span></div></div>` +
      `<dl class="pile-facts">` +
      `<dt>Colour</dt><dd><span class="swatch c-${color || "W"}" data-color="${color || ""}">${color ? `${color}${COLOR_MARKS[color]}` : "?"}</span> ${color ? TABLE.color_names[color] || color : "not named yet"}</dd>` +
      `<dt>Direction</dt><dd data-direction="${state.direction}">${state.direction === 1 ? "↻ clockwise (seat numbers up)" : "↺ counter-clockwise"}</dd>` +
      `<dt>Round</dt><dd>${state.round || "—"}${state.pending_draw ? ` · <strong>+${state.pending_draw} pending</strong>` : ""}</dd>` +
      `</dl></section>`;
    $("rv-table").className = `replay-table players-${n}`;
    $("rv-table").innerHTML = center + seats.join("");
  }

  renderDecisions(actions) {
    const box = $("rv-decision");
    if (!actions.length) {
      box.innerHTML = '<p class="muted">No bot decided anything in this step.</p>';
      return;
    }
    const seatsTimings = (this.meta.timings && this.meta.timings.seats) || [];
    box.innerHTML = actions
      .map((a) => {
        const bot = this.bot(a.seat);
        const timing = seatsTimings[bot.index] || {};
        const did = a.fault
          ? `<span class="reason">fault ${escapeHtml(a.fault.kind)}: ${escapeHtml(a.fault.reason)}</span>`
          : `<code>${escapeHtml(JSON.stringify(a.action))}</code>`;
        const ms = this.decisionMs(a.index);
        const took = ms === null ? "" : `<span class="decision-time" data-ms="${ms}">took ${seconds(ms / 1000)}</span> `;
        const times = timing.decisions
          ? `<span class="muted">this bot: mean ${seconds(timing.mean)}, max ${seconds(timing.max)} per decision over the match</span>`
          : "";
        const printed = this.decisionLogs.get(`${bot.index}:${this.game}:${a.index}`);
        const log = printed === undefined ? "" : `<p class="muted decision-log-label">printed during this decision:</p><pre class="decision-log">${escapeHtml(printed)}</pre>`;
        return `<div class="decision" data-action="${a.index}"><p><strong>${escapeHtml(this.seatName(a.seat))}</strong> asked <em>${escapeHtml(a.decision)}</em> → ${did}<br>${took}${times}</p>${log}</div>`;
      })
      .join("");
  }

  renderHistory(t) {
    // the last few steps up to here, newest first; a click jumps there
    const items = [];
    let to = this.pos;
    for (let i = 0; i < 8 && to > 0; i++) {
      const from = t.prevStop(to);
      const text = describeStep(t.events.slice(from, to), (s) => this.seatName(s), (s) => this.canSee(s), TABLE);
      items.push(`<li><a href="#" data-pos="${to}">${escapeHtml(text)}</a></li>`);
      to = from;
    }
    $("rv-history").innerHTML = items.join("") || '<li class="muted">Nothing yet.</li>';
  }

  renderLog() {
    const panel = $("rv-log-panel");
    const logs = this.meta.logs || {};
    const seats = this.timeline.game.seats.map((bot, seat) => ({ seat, bot })).filter((x) => String(x.bot) in logs);
    const shown = this.view === "full" ? seats : seats.filter((x) => x.seat === this.view);
    panel.hidden = !shown.length;
    if (!shown.length) return;
    const key = `${this.game}:${this.view}`;
    if (panel.dataset.key === key) return;
    panel.dataset.key = key;
    $("rv-log").innerHTML = shown
      .map((x) => `<h3>${escapeHtml(this.seatName(x.seat))}</h3><pre>${escapeHtml(logs[String(x.bot)] || "(printed nothing)")}</pre>`)
      .join("");
  }
}

// the replay document is one the viewer plays: a supported version with at least one game
function checkReplay(replay, meta) {
  if (!replay || typeof replay !== "object" || !meta.replay_versions.includes(replay.version) || !Array.isArray(replay.games) || !replay.games.length) {
    throw new Error(`unsupported replay (version ${JSON.stringify(replay && replay.version)})`);
  }
}

// a replay from a file names its bots only by the replay's names (no pages, logs or timings)
function localMeta(meta, replay) {
  const names = Array.isArray(replay.names) ? replay.names : [];
  const reference = new Set(meta.reference_bots || []);
  return { ...meta, bots: names.map((label) => ({ label: String(label), url: "", owner: "", reference: reference.has(label) })) };
}

let current = null; // the viewer of the replay shown

function show(root, meta, replay) {
  checkReplay(replay, meta);
  CARDS = meta.cards;
  TABLE = { cards: meta.cards, color_names: meta.color_names || {} };
  if (current) current.destroy();
  current = new Viewer(root, meta, replay);
  current.setup();
  window.replayViewer = current;
  $("rv-error").hidden = true;
  root.dataset.state = "ready";
  performance.mark("replay-ready");
}

// A match being played: poll its live events (matches.live) and show them with the replay's
// rendering; the spectator may move back and forth in what has been played. When the match has
// ended the page reloads and shows its replay.
const LIVE_POLL_MS = 1000;

async function followLive(root, meta) {
  const events = []; // per game index: the events received so far
  const points = []; // per game index: its decision points, as of the last poll of that game
  let heads = [];
  const poll = async (game, after) => {
    const response = await fetch(`${meta.live_url}?game=${game}&after=${after}`, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) throw new Error(`the live match could not be loaded (HTTP ${response.status})`);
    return response.json();
  };
  // a poll's events go where they start (its `after`): one answered twice or late adds nothing twice
  const take = (data) => {
    const list = (events[data.game] ||= []);
    if (data.after !== list.length) return false;
    list.push(...data.events);
    points[data.game] = data.points || [];
    return data.events.length > 0;
  };
  const tick = async () => {
    try {
      const newest = Math.max(0, heads.length - 1);
      let data = await poll(newest, events[newest]?.length || 0);
      if (data.status !== "running") return location.reload(); // ended: its replay is the record now
      if (data.games.length >= heads.length) heads = data.games; // an empty answer (a store hiccup) forgets nothing
      take(data);
      for (let g = 0; g < heads.length; g++) {
        // a game that ended between two polls, or the next one begun: fetch what is missing
        while ((events[g] || []).length < heads[g].events) {
          data = await poll(g, (events[g] || []).length);
          if (data.status !== "running") return location.reload();
          if (!take(data)) break;
        }
      }
      const games = heads.map((h, g) => ({ ...h, events: events[g] || [], points: points[g] || [] }))
        .filter((g) => g.events.length);
      if (games.length) {
        const replay = { version: meta.replay_versions[meta.replay_versions.length - 1], names: meta.bots.map((b) => b.label),
          duplicate: meta.duplicate, games };
        if (!current) {
          show(root, meta, replay);
          current.go(games.length - 1, games[games.length - 1].events.length); // live: at the newest event
          root.dataset.live = "true";
        } else {
          current.update(replay);
        }
        root.dataset.liveEvents = String(games.reduce((n, g) => n + g.events.length, 0));
      }
    } catch (err) {
      showError(root, err);
    }
    setTimeout(tick, LIVE_POLL_MS);
  };
  tick();
}

function showError(root, err) {
  if (!current) root.dataset.state = "error";
  $("rv-error").hidden = false;
  $("rv-error").textContent = `This replay cannot be shown: ${err.message}`;
}

// a file chosen or dropped: read by the browser (File.text), never sent anywhere
async function openFile(root, meta, file) {
  try {
    let replay;
    try {
      replay = JSON.parse(await file.text());
    } catch (err) {
      throw new Error(`${file.name} is not a JSON file (${err.message})`);
    }
    checkReplay(replay, meta);
    history.replaceState(null, "", location.pathname + location.search); // a new replay starts at its beginning
    show(root, localMeta(meta, replay), replay);
    root.dataset.file = file.name;
  } catch (err) {
    showError(root, err);
  }
}

function acceptFiles(root, meta) {
  const input = $("rv-file");
  if (!input) return;
  input.addEventListener("change", () => {
    if (input.files.length) openFile(root, meta, input.files[0]);
  });
  // dropped anywhere on the page; the browser must be told not to open the file itself
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
  document.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    root.classList.add("replay-dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (e.relatedTarget === null) root.classList.remove("replay-dropping");
  });
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    root.classList.remove("replay-dropping");
    input.value = ""; // the chooser no longer names the file shown
    if (e.dataTransfer.files.length) openFile(root, meta, e.dataTransfer.files[0]);
  });
}

async function main() {
  const root = $("replay");
  if (!root) return; // a page that only draws cards (play/play.js before the game is dealt)
  const meta = JSON.parse($("replay-meta").textContent);
  CARDS = meta.cards; // cards are drawn from here on, before any replay is in (the play page's hand)
  acceptFiles(root, meta); // the page for local files, and the page arena replay view writes
  try {
    const embedded = $("replay-data"); // arena replay view: the replay is inside the page
    if (embedded) {
      const replay = JSON.parse(embedded.textContent);
      checkReplay(replay, meta);
      return show(root, localMeta(meta, replay), replay);
    }
    if (meta.live_url) return followLive(root, meta);
    if (!meta.replay_url) return; // waiting for a file
    // same URL, mode and credentials as the page's <link rel=preload>, so the preloaded response is used
    const response = await fetch(meta.replay_url, { credentials: "include", mode: "cors" });
    if (!response.ok) throw new Error(`the replay could not be loaded (HTTP ${response.status})`);
    show(root, meta, await response.json());
  } catch (err) {
    showError(root, err);
  }
}

main();
