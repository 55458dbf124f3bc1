from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200 a page)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
