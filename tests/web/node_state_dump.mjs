// Prints, for each game of a replay file, the viewer's state after every event (JSON lines).
// Used by test_replay_state_js.py to compare platform/web/static/web/replay-state.js with engine.replay.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, replayPath] = process.argv.slice(2);
const { GameTimeline } = await import(pathToFileURL(modulePath).href);
const replay = JSON.parse(readFileSync(replayPath, "utf8"));
replay.games.forEach((game, g) => {
  const timeline = new GameTimeline(game);
  // every index through stateAt (checkpoints), so the seek path is what is checked
  for (let e = 0; e <= timeline.length; e++) {
    process.stdout.write(JSON.stringify({ g, e, state: timeline.stateAt(e) }) + "\n");
  }
  const forfeits = Object.fromEntries(timeline.forfeitAt);
  process.stdout.write(JSON.stringify({ g, stops: timeline.stops, rounds: timeline.rounds, forfeits }) + "\n");
});
