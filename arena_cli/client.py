"""A small client of the Uno Arena REST API on urllib (standard library only).

Every failure is a ``CommandError`` with one line saying what went wrong:
the server cannot be reached, or it answered an error (its JSON ``detail``).

>>> ApiClient("http://127.0.0.1:8000").url("/api/matches/", {"status": "done"})
'http://127.0.0.1:8000/api/matches/?status=done'
"""

from __future__ import annotations

import http.client
import json
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode

from arena_cli.errors import CommandError

USER_AGENT = "arena-cli/1 (uno-arena command line)"
#: never read more than this from one answer (a replay is well below it)
MAX_BODY = 64 * 1024 * 1024


class ApiError(CommandError):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            raise CommandError(f"the server answered {self.status} with something that is not JSON") from None


class ApiClient:
    """Talks to one server, with an optional token."""

    def __init__(self, server: str, token: str | None = None, timeout: float = 30.0):
        self.server = server
        self.token = token
        self.timeout = timeout

    def url(self, path: str, query: dict | None = None) -> str:
        query = {k: v for k, v in (query or {}).items() if v is not None}
        return self.server + path + (f"?{urlencode(query)}" if query else "")

    def request(self, method: str, path: str, *, query=None, json_body=None, files=None, fields=None) -> Answer:
        """Send one request; an error status or a network failure raises CommandError."""
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = None
        if json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        elif files is not None:
            data, headers["Content-Type"] = encode_multipart(fields or {}, files)
        request = urllib.request.Request(self.url(path, query), data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Answer(response.status, response.headers.get("Content-Type", ""), response.read(MAX_BODY))
        except urllib.error.HTTPError as exc:
            raise ApiError(exc.code, self._error_line(method, path, exc)) from None
        except urllib.error.URLError as exc:
            raise CommandError(f"cannot reach {self.server}: {_reason(exc.reason)}") from None
        except TimeoutError:
            raise CommandError(f"{self.server} did not answer within {self.timeout:g} s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise CommandError(f"connection to {self.server} failed: {_reason(exc)}") from None

    def get(self, path: str, **query) -> Answer:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: dict) -> Answer:
        return self.request("POST", path, json_body=body)

    def pages(self, path: str, *, limit: int | None = None, **query):
        """The results of a paginated list, page after page, up to ``limit`` items."""
        page, seen = 1, 0
        while True:
            body = self.get(path, page=page, **query).json()
            for item in body.get("results", []):
                yield item
                seen += 1
                if limit is not None and seen >= limit:
                    return
            if not body.get("next"):
                return
            page += 1

    def _error_line(self, method: str, path: str, exc: urllib.error.HTTPError) -> str:
        try:
            body = json.loads(exc.read(MAX_BODY))
            detail = body.get("detail") if isinstance(body, dict) else None
        except (ValueError, OSError):
            detail = None
        if exc.code == 401 and not self.token:
            detail = f"{detail or 'not logged in'}; run: arena login --server {self.server}"
        where = f"{method} {path}"
        return f"{where}: {exc.code} {detail or exc.reason}"


def _reason(reason) -> str:
    if isinstance(reason, BaseException):
        text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return " ".join(str(text).split())
    return " ".join(str(reason).split())


def encode_multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its Content-Type; ``files`` maps field -> (filename, bytes)."""
    boundary = "arena-" + secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'.encode()
            + str(value).encode()
            + b"\r\n"
        )
    for name, (filename, content) in files.items():
        parts.append(
            (
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"{_quote(name)}\"; "
                f"filename=\"{_quote(filename)}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + content
            + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quote(text: str) -> str:
    # Quotes and line breaks would end the header value early.
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
