// The tournament admin page: an action form with data-confirm (cancel) asks before it is sent.
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form.matches && form.matches("form.tournament-action[data-confirm]") && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
