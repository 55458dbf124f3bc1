// A box that scrolls sideways (a wide table or code block on a phone) can be reached and scrolled
// by keyboard: while its content overflows it takes the focus (tabindex 0) and is named as a region.
// (the admin's too: its inline groups and change lists, admin/base_site.html loads this script)
const BOXES = ".table-wrap, pre, .inline-group, #changelist .results";

function mark() {
  for (const box of document.querySelectorAll(BOXES)) {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.dataset.scrollRegion = "";
      if (!box.hasAttribute("aria-label") && !box.hasAttribute("role")) {
        const heading = box.closest("section")?.querySelector("h2, h3") || box.querySelector("h2, h3");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", `${heading ? heading.textContent.trim() : "Table"} (scrolls sideways)`);
        box.dataset.scrollRegion = "named";
      }
    } else if (!scrolls && box.dataset.scrollRegion !== undefined) {
      box.removeAttribute("tabindex");
      if (box.dataset.scrollRegion === "named") {
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
      delete box.dataset.scrollRegion;
    }
  }
}

mark();
let pending = 0;
window.addEventListener("resize", () => {
  cancelAnimationFrame(pending);
  pending = requestAnimationFrame(mark);
});
// content that pages load later (live updates, the replay viewer) is checked when it changes
new MutationObserver(() => {
  cancelAnimationFrame(pending);
  pending = requestAnimationFrame(mark);
}).observe(document.querySelector("main") || document.body, { childList: true, subtree: true });
