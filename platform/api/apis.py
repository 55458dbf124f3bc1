"""The API's own endpoints: who the credentials belong to, and personal access tokens.

Every other endpoint lives in the app that owns its data (``bots/apis.py``, ``matches/apis.py``,
``ladders/apis.py``, ``tournaments_app/apis.py``); ``api.urls`` includes them all.
"""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import generics, permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors, services
from . import serializers as s
from .serializers import error_responses
from .throttles import LoginThrottle


class MeView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: s.UserSerializer, **error_responses(401)})
    def get(self, request):
        """The user these credentials belong to."""
        return Response(s.UserSerializer(request.user).data)


class TokenListView(generics.ListCreateAPIView):
    """Your personal access tokens; creating one answers with its key, once."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.TokenSerializer

    def get_queryset(self):
        return selectors.token_list(self.request.user)

    @extend_schema(request=s.TokenSerializer, responses={201: s.NewTokenSerializer, **error_responses(400, 401)})
    def post(self, request):
        incoming = s.TokenSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        token, key = services.token_create(user=request.user, name=incoming.validated_data["name"])
        token.key = key
        return Response(s.NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenObtainView(APIView):
    """Exchange a username and password for a new token (what ``arena login`` does)."""

    authentication_classes: list = []  # the password is the credential; no session, so no CSRF
    throttle_classes = [LoginThrottle]

    @extend_schema(request=s.LoginSerializer, responses={201: s.NewTokenSerializer, **error_responses(400, 429)})
    def post(self, request):
        incoming = s.LoginSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        user = authenticate(request._request, username=data["username"], password=data["password"])
        if user is None:
            raise services.ApiRefusal("wrong username or password")
        token, key = services.token_create(user=user, name=data["name"])
        token.key = key
        return Response(s.NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenDetailView(generics.RetrieveDestroyAPIView):
    """One of your tokens; DELETE revokes it."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.TokenSerializer

    def get_queryset(self):
        return selectors.token_list(self.request.user)

    def perform_destroy(self, instance):
        services.token_revoke(instance)
