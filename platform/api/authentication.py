"""Token authentication: ``Authorization: Token <key>`` (``Bearer`` works too)."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from . import services


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("token", "bearer")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower().decode(errors="replace") not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "malformed Authorization header: expected 'Token <key>' with the key and no spaces in it"
            )
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the token key holds characters that no key has") from None
        token = services.token_authenticate(key)
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("invalid or revoked token; create a new one on your profile page")
        return token.user, token

    def authenticate_header(self, request):
        return 'Token realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`: create a key on your profile page or with `arena login`.",
        }
