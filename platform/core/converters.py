"""URL converters of the whole site; importing this module registers them.

``<id:pk>``: a database id of at most 18 digits, so it always fits a 64-bit
column: a longer one is a 404, never a 500 from the database.
"""

import re

from django.http import Http404
from django.urls import register_converter

#: the largest id a database row can have (a signed 64-bit column; SQLite raises OverflowError beyond
#: it): the bound of every id the site reads outside a path (API fields, cursors); in a path ``<id:...>``
#: takes at most 18 digits, always below it
MAX_ID = 2**63 - 1


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)


register_converter(IdConverter, "id")


def id_or_404(text: str) -> int:
    """An id given in a query string (``?bot=12``), checked as ``<id:...>`` checks one in a path."""
    if not re.fullmatch(IdConverter.regex, text):
        raise Http404(f"no such id: {text[:40]!r}")
    return int(text)


def id_or_none(text) -> int | None:
    """``text`` as an id (``<id:...>``'s digits: ASCII only, at most 18), else None: for ids and
    whole numbers posted in forms, which a bad value must never turn into a 500."""
    return int(text) if isinstance(text, str) and re.fullmatch(IdConverter.regex, text) else None
