"""The viewer's markup has one source: the page ``arena replay view`` writes (arena_cli.replay_page,
no Django) carries what the site's matches/_replay_viewer.html renders for a local, embedded viewer."""

from __future__ import annotations

import re

from django.template.loader import render_to_string

from arena_cli.replay_page import viewer_markup


def _squeezed(text: str) -> str:
    return re.sub(r">\s+<", "><", text).strip()


def test_the_offline_page_has_the_markup_the_site_renders_for_a_local_embedded_viewer():
    site = render_to_string("matches/_replay_viewer.html", {"local": True, "embedded": True})
    assert _squeezed(viewer_markup()) == _squeezed(site)


def test_the_site_variants_differ_from_the_offline_one_only_where_they_should():
    waiting = _squeezed(render_to_string("matches/_replay_viewer.html", {"local": True}))
    match_page = _squeezed(render_to_string("matches/_replay_viewer.html", {"placeholder_seats": range(3)}))
    assert 'data-state="waiting"' in waiting and "No replay open yet" in waiting and 'id="rv-open"' in waiting
    assert 'data-state="loading"' in match_page and 'id="rv-open"' not in match_page
    assert match_page.count("seat-placeholder") == 3 and "players-3" in match_page
    for markup in (waiting, match_page, _squeezed(viewer_markup())):
        assert 'id="rv-slider"' in markup and 'id="rv-log-panel"' in markup and markup.endswith("</div>")
