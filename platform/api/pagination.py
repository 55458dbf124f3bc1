from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination, PageNumberPagination

#: the most rows one page of any API list holds
MAX_PAGE_SIZE = 200


class Pagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200 a page)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class MatchCursorPagination(CursorPagination):
    """The match list by keyset: ``?cursor=`` from ``next``/``previous``, ``?page_size=M`` (at most 200).

    Newest first on ``(queued_at, id)``, the ``(queued_at DESC, id DESC)`` index: every page costs
    what the first does, however deep, and nothing counts the whole history (no ``count``). A page
    number other than 1 is refused with a 404 that says to follow ``next``.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    ordering = ("-queued_at", "-pk")

    def get_ordering(self, request, queryset, view):
        # a bot's list pages over its seats (api.selectors.match_seats_query): the same key, the
        # match's queued_at copied on the seat, on the seats' (bot, queued_at, match) index
        if queryset.model._meta.label == "matches.MatchSeat":
            return ("-queued_at", "-match_id")
        return self.ordering

    def paginate_queryset(self, queryset, request, view=None):
        page = request.query_params.get("page")
        if page not in (None, "", "1"):
            raise NotFound("the match list pages by cursor: follow the links in next and previous, not ?page=")
        return super().paginate_queryset(queryset, request, view)
