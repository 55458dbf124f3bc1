"""The site-wide check page of the bottom app (the home page is web's: web.views.home)."""

from django.http import HttpResponse
from django.views.decorators.cache import never_cache


@never_cache
def healthz(request):
    """The trivial view: no database, no template; what load_bench compares every page with."""
    return HttpResponse("ok", content_type="text/plain")
