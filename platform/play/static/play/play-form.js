// The play form: show as many seat choices as the game has bots (the form works without it too).
const seats = document.getElementById("play-seats");
function update() {
  const bots = Number(seats.value) - 1;
  for (const row of document.querySelectorAll(".play-opponent")) {
    const shown = Number(row.dataset.seat) <= bots;
    row.hidden = !shown;
    row.querySelector("select").disabled = !shown;
  }
}
if (seats) {
  seats.addEventListener("change", update);
  update();
}
