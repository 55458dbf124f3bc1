// Replay state in the browser: applies recorded events the way engine.replay.apply_event does.
// Pure (no DOM), so node can run it in the tests that compare it with engine.replay.state_at.

export function initialState(players) {
  return {
    round: 0,
    dealer: 0,
    hands: Array.from({ length: players }, () => []),
    discard: [],
    draw_pile: 0,
    color: null,
    direction: 1,
    current: 0,
    scores: new Array(players).fill(0),
    uno: new Array(players).fill(false),
    pending_draw: 0,
    over: false,
  };
}

export function cloneState(s) {
  return {
    ...s,
    hands: s.hands.map((h) => h.slice()),
    discard: s.discard.slice(),
    scores: s.scores.slice(),
    uno: s.uno.slice(),
  };
}

// engine.replay.HIDDEN_CARD: a card of a live game's hand that the spectator may not see
export const HIDDEN_CARD = "?";

// Mutates `state`; mirrors engine/replay.py apply_event line by line.
export function applyEvent(state, ev) {
  switch (ev.e) {
    case "turn":
      state.current = ev.seat;
      break;
    case "play": {
      const hand = state.hands[ev.seat];
      // a live game's public events hide hands: the card played is one of its hidden ones
      const at = hand.includes(ev.card) ? hand.indexOf(ev.card) : hand.indexOf(HIDDEN_CARD);
      if (at < 0) throw new Error(`seat ${ev.seat} plays ${ev.card} but does not hold it`);
      hand.splice(at, 1);
      state.discard.push(ev.card);
      state.color = ev.color;
      state.uno[ev.seat] = Boolean(ev.uno);
      break;
    }
    case "draw":
      state.hands[ev.seat].push(...ev.cards);
      state.draw_pile -= ev.cards.length;
      if (ev.cards.length) state.uno[ev.seat] = false;
      if (ev.reason === "penalty") state.pending_draw = 0;
      break;
    case "round_start":
      state.round = ev.round;
      state.dealer = ev.dealer;
      state.hands = ev.hands.map((h) => h.slice());
      state.discard = [ev.top];
      state.draw_pile = ev.draw_pile;
      state.color = ev.color;
      state.direction = 1;
      state.scores = ev.scores.slice();
      state.uno = new Array(ev.hands.length).fill(false);
      state.pending_draw = 0;
      break;
    case "reshuffle":
      state.draw_pile += ev.cards;
      state.discard = state.discard.slice(-1);
      break;
    case "direction":
      state.direction = ev.direction;
      break;
    case "pending":
      state.pending_draw = ev.cards;
      break;
    case "challenge":
      state.pending_draw = 0;
      break;
    case "color":
      state.color = ev.color;
      break;
    case "pass_hands": {
      const n = state.hands.length;
      const old = state.hands;
      state.hands = old.map((_, i) => old[(((i - ev.direction) % n) + n) % n]);
      state.uno = new Array(n).fill(false);
      break;
    }
    case "swap": {
      const h = state.hands;
      [h[ev.seat], h[ev.target]] = [h[ev.target], h[ev.seat]];
      state.uno[ev.seat] = false;
      state.uno[ev.target] = false;
      break;
    }
    case "round_end":
      state.scores = ev.scores.slice();
      state.pending_draw = 0;
      break;
    case "game_end":
      state.over = true;
      break;
    default:
      // skip, pass, uno_caught, fault, forfeit change no state
      break;
  }
}

const CHECKPOINT_EVERY = 64;

// One game of a replay: its events, where each round starts, where a step stops,
// and the state after any number of events (from the nearest checkpoint).
export class GameTimeline {
  constructor(game) {
    this.game = game;
    this.events = game.events;
    this.players = game.seats.length;
    this.checkpoints = [];
    this.rounds = []; // {round, start: index of its round_start event, end: index after its round_end}
    const state = initialState(this.players);
    this.events.forEach((ev, i) => {
      if (i % CHECKPOINT_EVERY === 0) this.checkpoints.push(cloneState(state));
      if (ev.e === "round_start") this.rounds.push({ round: ev.round, start: i, end: this.events.length });
      if (ev.e === "round_end" && this.rounds.length) this.rounds[this.rounds.length - 1].end = i + 1;
      applyEvent(state, ev);
    });
    this.final = state;
    // event index of each seat's forfeit (seats forfeited before the game began: 0)
    this.forfeitAt = new Map((game.forfeited || []).map((seat) => [seat, 0]));
    this.events.forEach((ev, i) => {
      if (ev.e === "forfeit" && !this.forfeitAt.has(ev.seat)) this.forfeitAt.set(ev.seat, i + 1);
    });
    const actions = game.actions || [];
    const points = actionPoints(actions);
    this.stops = stopsOf(this.events, actions, game.points || null);
    // decisions recorded at each event index (the seat was asked after that many events)
    this.actionsAt = new Map();
    actions.forEach((a, i) => {
      const list = this.actionsAt.get(points[i]) || [];
      list.push({ ...a, at: points[i], index: i });
      this.actionsAt.set(points[i], list);
    });
  }

  forfeitedAt(seat, index) {
    return this.forfeitAt.has(seat) && this.forfeitAt.get(seat) <= index;
  }

  get length() {
    return this.events.length;
  }

  stateAt(index) {
    if (!(index >= 0 && index <= this.events.length)) {
      throw new RangeError(`event index ${index} out of range (the game has ${this.events.length} events)`);
    }
    if (index === this.events.length) return cloneState(this.final);
    const base = Math.floor(index / CHECKPOINT_EVERY);
    const state = cloneState(this.checkpoints[base]);
    for (let i = base * CHECKPOINT_EVERY; i < index; i++) applyEvent(state, this.events[i]);
    return state;
  }

  roundAt(index) {
    let found = this.rounds.length ? this.rounds[0] : null;
    for (const r of this.rounds) if (r.start < index) found = r;
    return found;
  }

  nextStop(index) {
    for (const s of this.stops) if (s > index) return s;
    return this.events.length;
  }

  prevStop(index) {
    let best = 0;
    for (const s of this.stops) if (s < index) best = s;
    return best;
  }

  // decisions (replay "actions") taken in the events between two positions
  actionsBetween(from, to) {
    const out = [];
    for (let at = from; at < to; at++) out.push(...(this.actionsAt.get(at) || []));
    return out;
  }
}

// The event index at which each action record's seat was asked (engine.replay.action_points):
// version 1 records carry `at`, version 2 records `since` (events after the previous record's point).
export function actionPoints(actions) {
  let at = 0;
  return actions.map((a) => (at = "at" in a ? a.at : at + a.since));
}

// Positions a step lands on: wherever a bot was asked to decide (the state it saw), the state
// after each round's end (before the next deal), and both ends of the game.
// `points`: the decision points themselves, when there are no action records (a live game's)
export function stopsOf(events, actions, points = null) {
  const stops = new Set([0, events.length]);
  for (const at of points || actionPoints(actions)) if (at <= events.length) stops.add(at);
  events.forEach((ev, i) => {
    if (ev.e === "round_start" && i > 0) stops.add(i);
  });
  return [...stops].sort((a, b) => a - b);
}

// One event in words; `name(seat)` gives "seat 2 (greedy)"; `canSee(seat)` false hides that seat's drawn cards;
// `table` is the page's card table from engine.cards: {cards: code -> {color, name, ...}, color_names: letter -> word}.
const cardName = (table, code) => (table.cards && table.cards[code] && table.cards[code].name) || code;
const colorName = (table, color) => (table.color_names && table.color_names[color]) || color;

export function describeEvent(ev, name, canSee = () => true, table = {}) {
  switch (ev.e) {
    case "round_start":
      return `Round ${ev.round}: seat ${ev.dealer} deals, ${cardName(table, ev.top)} turned up`;
    case "turn":
      return `${name(ev.seat)} to play`;
    case "play": {
      let text = `${name(ev.seat)} ${ev.jump_in ? "jumps in with" : "plays"} ${cardName(table, ev.card)}`;
      const card = table.cards && table.cards[ev.card];
      if (card && card.color === null) text += ` and names ${colorName(table, ev.color)}`;
      if (ev.uno) text += " and says UNO";
      return text;
    }
    case "draw": {
      const n = ev.cards.length;
      const why = { penalty: "", uno: " (forgot UNO)", strike: " (fault)", challenge: " (lost the challenge)", draw: "" }[ev.reason] ?? "";
      if (n === 0) return `${name(ev.seat)} cannot draw: no cards left`;
      const shown = ev.cards.filter((c) => c !== HIDDEN_CARD);
      const what = canSee(ev.seat) && shown.length ? `: ${shown.map((c) => cardName(table, c)).join(", ")}` : "";
      return `${name(ev.seat)} draws ${n}${why}${what}`;
    }
    case "skip":
      return `${name(ev.seat)} is skipped`;
    case "pass":
      return `${name(ev.seat)} passes`;
    case "direction":
      return ev.direction === 1 ? "play goes clockwise" : "play goes counter-clockwise";
    case "pending":
      return `${name(ev.seat)} faces +${ev.cards}`;
    case "challenge":
      return `${name(ev.seat)} challenges ${name(ev.target)}: the Wild Draw Four was ${ev.honest ? "honest" : "not honest"}`;
    case "color":
      return `${name(ev.seat)} names ${colorName(table, ev.color)}`;
    case "uno_caught":
      return `${name(ev.seat)} did not say UNO and is caught`;
    case "reshuffle":
      return `the discard pile is shuffled into a new draw pile (${ev.cards} cards)`;
    case "pass_hands":
      return "every hand passes one seat on";
    case "swap":
      return `${name(ev.seat)} swaps hands with ${name(ev.target)}`;
    case "fault":
      return `${name(ev.seat)} fault (${ev.kind}): ${ev.reason}`;
    case "forfeit":
      return `${name(ev.seat)} forfeits: ${ev.reason}`;
    case "round_end":
      if (ev.winner === null || ev.winner === undefined) return `Round ${ev.round} ends without a winner (turn limit)`;
      return `Round ${ev.round} won by ${name(ev.winner)}: +${ev.points.reduce((a, b) => a + b, 0)} points`;
    case "game_end":
      return `Game over: scores ${ev.scores.join(" / ")}`;
    default:
      return ev.e;
  }
}

// The events of one step in words, "turn" events left out: "seat 2 (greedy) plays G+2; seat 3 draws 2".
export function describeStep(events, name, canSee = () => true, table = {}) {
  const parts = events.filter((ev) => ev.e !== "turn").map((ev) => describeEvent(ev, name, canSee, table));
  if (!parts.length && events.length) return describeEvent(events[events.length - 1], name, canSee, table);
  const text = parts.join("; ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}
