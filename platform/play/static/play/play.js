// The table of a human game (play/game.html): polls the game's state, shows the person's hand, their
// legal actions as clickable cards and buttons and the clock of the decision asked now, and posts the
// action chosen. The table itself is the replay viewer following the game live (web/replay.js,
// imported here so it runs once). Leaving and coming back resumes: the question waits on the server.
import { cardHtml, escapeHtml } from "../web/replay.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 700;
const root = $("play");
const meta = JSON.parse($("play-meta").textContent);
const csrf = () => (document.querySelector("#play input[name=csrfmiddlewaretoken]") || {}).value || "";
const loadedStatus = root.dataset.state;

let shown = null; // the seq of the question drawn
let deadline = 0; // ms (performance.now) when the clock of the question shown runs out
let clock = 1;
let sending = false;

function say(text) {
  $("play-message").textContent = text;
}

function drawQuestion(q) {
  shown = q.seq;
  root.dataset.seq = String(q.seq);
  root.dataset.state = "asked";
  clock = q.clock || 1;
  deadline = performance.now() + q.seconds_left * 1000;
  const byCard = new Map();
  for (const a of q.actions) if (a.type === "play") byCard.set(a.card, [...(byCard.get(a.card) || []), a]);
  // the hand: playable cards are buttons (a wild's button offers its colours below)
  $("play-hand").innerHTML = q.hand
    .map((code) => {
      const plays = byCard.get(code);
      if (!plays) return cardHtml(code, "unplayable");
      // named by its content ("Play" + the card's own name), so the name holds what is drawn on it
      const after = plays.length === 1 ? (plays[0].label.endsWith("call UNO") ? " and call UNO" : "") : ": choose its colour";
      return `<button type="button" class="card-button" data-card="${escapeHtml(code)}"${plays.length === 1 ? ` data-index="${plays[0].index}"` : ""}>` +
        `<span class="visually-hidden">Play </span>${cardHtml(code, "playable")}<span class="visually-hidden">${after}</span></button>`;
    })
    .join("");
  $("play-actions").innerHTML = q.actions
    .map((a) => `<button type="button" class="${a.type === "play" ? "btn-secondary" : ""}" data-index="${a.index}"${a.card ? ` data-card="${escapeHtml(a.card)}"` : ""}>${escapeHtml(a.label)}</button>`)
    .join("");
  const waiting = q.pending_draw ? ` (${q.pending_draw} cards to draw unless you answer)` : "";
  const asked = { play: "Play a card or draw", play_drawn: "Play the card you drew, or keep it", choose_color: "Name the colour", challenge: "Challenge the Wild Draw Four, or take it", stack: "Stack a draw card, or take the penalty", jump_in: "Jump in with the same card, or pass", swap_target: "Choose whose hand to take" }[q.decision] || q.decision;
  say(`${asked}${waiting}.`);
  $("play-heading").textContent = "Your turn";
  $("play-clock").hidden = false;
  tickClock();
  const first = $("play-hand").querySelector("button") || $("play-actions").querySelector("button");
  if (first && (document.activeElement === document.body || root.contains(document.activeElement))) first.focus({ preventScroll: true });
}

function clearQuestion(text) {
  shown = null;
  root.dataset.state = "waiting";
  $("play-hand").innerHTML = "";
  $("play-actions").innerHTML = "";
  $("play-clock").hidden = true;
  $("play-heading").textContent = "Waiting";
  say(text);
}

function tickClock() {
  if (shown === null) return;
  const left = Math.max(0, (deadline - performance.now()) / 1000);
  $("play-seconds").textContent = left.toFixed(0);
  $("play-clock-fill").style.width = `${Math.min(100, (100 * left) / clock)}%`;
  $("play-clock").classList.toggle("play-clock-low", left < Math.min(10, clock / 4));
}

function drawResult(state) {
  root.dataset.state = "over";
  $("play-clock").hidden = true;
  $("play-hand").innerHTML = "";
  $("play-actions").innerHTML = "";
  $("play-heading").textContent = "Result";
  const mine = (state.results || []).find((r) => r.seat === state.seat);
  if (state.status === "done" && mine) {
    say(mine.rank === 1 ? "You won!" : `You finished ${mine.rank}${["th", "st", "nd", "rd"][mine.rank] || "th"}.`);
  } else {
    say(state.status === "failed" ? `The platform could not finish this game: ${state.error}` : `The game ended ${state.status}.`);
  }
  const rows = (state.results || [])
    .slice()
    .sort((a, b) => (a.rank ?? 99) - (b.rank ?? 99))
    .map((r) => `<li>${escapeHtml(r.name)}${r.seat === state.seat ? " (you)" : ""}: rank ${r.rank ?? "—"}, ${r.score ?? 0} points${r.forfeited ? ` — forfeited: ${escapeHtml(r.fault)}` : ""}</li>`)
    .join("");
  $("play-result").innerHTML = `<ol class="play-results">${rows}</ol>${state.replay_url ? `<p><a class="btn" href="${escapeHtml(state.replay_url)}">Watch the replay</a></p>` : ""}`;
  $("play-result").hidden = false;
}

async function act(index) {
  if (sending || shown === null) return;
  sending = true;
  for (const b of root.querySelectorAll("button")) b.disabled = true;
  try {
    const response = await fetch(meta.act_url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify({ seq: shown, index }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) say(`Not taken: ${body.detail || `HTTP ${response.status}`}`);
    else clearQuestion("Played. The bots are thinking…");
  } catch (err) {
    say(`Your action could not be sent (${err.message}); try again.`);
    for (const b of root.querySelectorAll("button")) b.disabled = false;
  } finally {
    sending = false;
  }
  refresh();
}

root.addEventListener("click", (e) => {
  const button = e.target.closest("button[data-index], button.card-button");
  if (!button || button.disabled) return;
  if (button.dataset.index !== undefined) return act(Number(button.dataset.index));
  // a wild in the hand: its colours are the actions of that card; show them first
  for (const b of $("play-actions").querySelectorAll("button")) b.classList.toggle("chosen", b.dataset.card === button.dataset.card);
  const colour = $("play-actions").querySelector(`button[data-card="${CSS.escape(button.dataset.card)}"]`);
  if (colour) colour.focus();
  say("Choose the colour to name.");
});

let timer = null;
async function refresh() {
  clearTimeout(timer);
  try {
    const response = await fetch(meta.state_url, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const state = await response.json();
    $("play-status").textContent = state.status;
    $("play-status").className = `badge badge-${state.status}`;
    if (state.status !== loadedStatus && (loadedStatus === "queued" || state.status !== "running")) {
      return location.reload(); // dealt (the table starts following) or ended (its result and replay)
    }
    if (state.status === "running") {
      if (state.question && state.question.seq !== shown) drawQuestion(state.question);
      else if (!state.question && shown !== null && !sending) clearQuestion("The bots are thinking…");
    } else if (state.status !== "queued") {
      return drawResult(state);
    }
  } catch (err) {
    say(`Lost contact with the server (${err.message}); retrying…`);
  }
  timer = setTimeout(refresh, POLL_MS);
}

setInterval(tickClock, 250);
refresh();
