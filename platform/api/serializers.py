"""Serializers every app's API shares: the error body (and the error answers of the schema), the
user and the tokens. Each app's own resources are serialized in its ``serializers.py``, next to the
``apis.py`` that serves them; this module imports no app but ``api``.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from .models import ApiToken

#: schema types of method fields that may be null
NULLABLE_INT = serializers.IntegerField(allow_null=True)
NULLABLE_STR = serializers.CharField(allow_null=True)


def request_user(context):
    """The user of the request a serializer's context carries, or None."""
    request = context.get("request")
    return getattr(request, "user", None)


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer."""

    detail = serializers.CharField(help_text="what was wrong, in one sentence")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="per field (dotted for nested input), the messages",
    )
    retry_after = serializers.IntegerField(required=False, help_text="429 only: seconds to wait")


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, "invalid input or refused by the rules of the site"),
    401: OpenApiResponse(ErrorSerializer, "not logged in / bad token"),
    403: OpenApiResponse(ErrorSerializer, "not allowed"),
    404: OpenApiResponse(ErrorSerializer, "not found"),
    429: OpenApiResponse(ErrorSerializer, "rate limit reached: retry_after says when to try again"),
}


def error_responses(*codes: int) -> dict:
    """The schema's error answers of an operation, by status code: ``responses={200: ..., **error_responses(404)}``."""
    return {code: ERRORS[code] for code in codes}


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    is_staff = serializers.BooleanField(read_only=True)


class TokenSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at"]
        read_only_fields = ["id", "prefix", "created_at", "last_used_at"]


class NewTokenSerializer(TokenSerializer):
    key = serializers.CharField(read_only=True, help_text="shown only in this answer; store it now")

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "key"]


class LoginSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})
    name = serializers.CharField(max_length=64, help_text="what the token is for, e.g. 'arena CLI on laptop'")
