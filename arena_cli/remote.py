"""``arena login``, ``logout``, ``submit``, ``matches`` and ``replay``: the commands that talk to a server
(and ``arena replay view``, which writes a replay's self-contained page and talks to nobody).

The server is ``--server``, else ``$ARENA_SERVER``, else the server of the last ``arena login``,
else http://127.0.0.1:8000.
Network and HTTP errors end as one line and exit code 2 (``CommandError``);
a version rejected by validation exits 1 after printing the reason and its log.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

from arena_cli import config
from arena_cli.client import ApiClient
from arena_cli.errors import CommandError, FailureError
from arena_cli.progress import Progress

EXIT_REJECTED = 1


def add_parsers(commands) -> None:
    """Register the server commands on ``arena``'s subparsers."""

    def server_option(parser):
        parser.add_argument(
            "--server", metavar="URL",
            help="the Uno Arena server (default: $ARENA_SERVER, else the server of your last arena login, "
            f"else {config.DEFAULT_SERVER})",
        )

    login = commands.add_parser(
        "login", help="store an API token for a server, and use that server from now on",
        description="Log in with username and password (asked for) or --token, and store the token in "
        "~/.config/uno-arena/config.json (mode 0600). The server becomes the default of later "
        "commands (until another login or arena logout).",
    )
    server_option(login)
    login.add_argument("--token", metavar="KEY", help="a token made on your profile page, instead of a password")
    login.add_argument("--username", metavar="NAME", help="your username (asked for when missing)")

    logout = commands.add_parser(
        "logout", help="revoke and forget the stored token of a server",
        description="Revoke the stored token on the server (DELETE /api/tokens/<id>/) and remove it from "
        "~/.config/uno-arena/config.json, with the server as the default. The token is forgotten "
        "here even when the server cannot be reached (revoke it on your profile page then).",
    )
    server_option(logout)

    submit = commands.add_parser(
        "submit", help="upload a new version of a bot and wait for its validation",
        description="Check BOT_FILE locally, upload it as the next version of your bot NAME, and wait "
        "for its validation match. Exit code 1 when the version is rejected.",
    )
    server_option(submit)
    submit.add_argument("file", metavar="BOT_FILE", help="a .py file or a .zip with main.py at its root")
    submit.add_argument("--bot", required=True, metavar="NAME", help="the name (or id) of your bot")
    submit.add_argument("--create", action="store_true", help="create the bot NAME when you have none by that name")
    submit.add_argument("--no-wait", action="store_true", help="do not wait for the validation result")
    submit.add_argument(
        "--timeout", type=float, default=600.0, metavar="SECONDS",
        help="give up waiting for validation after this long (default 600)",
    )

    matches = commands.add_parser("matches", help="list matches", description="Recent matches, newest first.")
    server_option(matches)
    matches.add_argument("--bot", metavar="NAME_OR_ID", help="only matches of this bot (a name of yours, or an id)")
    matches.add_argument(
        "--status", choices=("queued", "running", "done", "failed", "cancelled"), help="only matches in this status"
    )
    matches.add_argument("--limit", type=int, default=20, metavar="N", help="at most N matches (default 20)")
    matches.add_argument("--json", action="store_true", help="print the matches as one JSON list")

    replay = commands.add_parser(
        "replay", help="download a match's replay, or view a replay file in the browser",
        usage="arena replay [--server URL] MATCH_ID -o FILE\n       arena replay view FILE [--no-browser]",
        description="arena replay MATCH_ID -o FILE saves a match's replay JSON. arena replay view FILE "
        "writes FILE.html beside FILE (a replay from arena play --replay or a download): one "
        "self-contained page that plays the replay when opened from disk, with no network, "
        "and opens it in your browser.",
    )
    server_option(replay)
    replay.add_argument("target", nargs="+", metavar="MATCH_ID | view FILE")
    replay.add_argument("-o", "--output", metavar="FILE", help="where to write the download ('-': stdout)")
    replay.add_argument("--no-browser", action="store_true", help="with view: write the page, do not open it")


def run(args: argparse.Namespace) -> int:
    if args.command == "replay" and args.target[0] == "view":
        return run_replay_view(args)  # a file on this machine: no server, no config
    server = config.resolve_server(args.server)
    commands = {"login": run_login, "logout": run_logout, "submit": run_submit, "matches": run_matches}
    return {**commands, "replay": run_replay}[args.command](args, server)


def _client(server: str, *, need_token: bool) -> ApiClient:
    token = config.stored_token(server)
    if need_token and not token:
        raise CommandError(f"not logged in to {server}; run: arena login --server {server}")
    return ApiClient(server, token)


# --- login ---------------------------------------------------------------------------------------


def run_login(args, server: str) -> int:
    if args.token:
        token = args.token.strip()
    else:
        username = args.username or _ask("Username: ")
        password = getpass.getpass("Password: ")
        name = f"arena CLI on {socket.gethostname()}"[:64]
        answer = ApiClient(server).post(
            "/api/auth/token/", {"username": username, "password": password, "name": name}
        )
        token = answer.json()["key"]
    me = ApiClient(server, token).get("/api/me/").json()
    path = config.store_token(server, me["username"], token)
    print(f"logged in to {server} as {me['username']}; token stored in {path}")
    print(f"later arena commands use {server} (until another arena login, or arena logout)")
    return 0


# --- logout --------------------------------------------------------------------------------------


def run_logout(args, server: str) -> int:
    entry = config.forget(server)
    if entry is None:
        print(f"not logged in to {server}: no token stored for it")
    else:
        token = entry.get("token") or ""
        try:
            revoked = _revoke(ApiClient(server, token), token)
        except CommandError as exc:
            revoked = False
            print(f"arena: warning: the token could not be revoked on the server ({exc}); revoke it on your "
                  "profile page", file=sys.stderr)
        print(f"logged out of {server}: token {'revoked and ' if revoked else ''}removed from {config.config_path()}")
    if os.environ.get("ARENA_TOKEN"):
        print("note: $ARENA_TOKEN is set and is still used by arena commands")
    return 0


def _revoke(client: ApiClient, token: str) -> bool:
    """Revoke ``token`` on the server (the one of your tokens whose prefix it starts with).

    False when the server no longer knows it (already revoked); CommandError when it cannot be asked.
    """
    from arena_cli.client import ApiError

    try:
        mine = list(client.pages("/api/tokens/"))
    except ApiError as exc:
        if exc.status == 401:  # revoked already (on the profile page, or another logout)
            return False
        raise
    matches = [t for t in mine if t.get("prefix") and token.startswith(t["prefix"])]
    if len(matches) != 1:
        return False
    try:
        client.request("DELETE", f"/api/tokens/{matches[0]['id']}/")
    except ApiError as exc:
        if exc.status in (401, 404):
            return False
        raise
    return True


def _ask(prompt: str) -> str:
    try:
        value = input(prompt).strip()
    except EOFError:
        value = ""
    if not value:
        raise CommandError("a username is needed (or use --token)")
    return value


# --- submit --------------------------------------------------------------------------------------


def run_submit(args, server: str) -> int:
    from sandbox.package import BotPackage, PackageError

    path = Path(args.file)
    try:
        package = BotPackage.from_path(path)
    except PackageError as exc:
        raise CommandError(f"{path}: {exc}") from None
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    client = _client(server, need_token=True)
    bot = _find_own_bot(client, args.bot, create=args.create)
    answer = client.request(
        "POST", f"/api/bots/{bot['id']}/versions/", files={"file": (path.name, package.data)}
    )
    version = answer.json()
    label = f"{bot['owner']}/{bot['name']} v{version['number']}"
    print(f"uploaded {label} (sha256 {version['sha256'][:12]}, {version['size']} bytes)", flush=True)
    if args.no_wait and version["status"] == "validating":
        print(f"validation queued; see {server}{version['page']}")
        return 0
    version = _wait_for_validation(client, version, args.timeout)
    return _report(version, label, server)


def _find_own_bot(client: ApiClient, name: str, *, create: bool) -> dict:
    mine = list(client.pages("/api/bots/"))
    for bot in mine:
        if bot["name"] == name or str(bot["id"]) == name:
            return bot
    if create:
        bot = client.post("/api/bots/", {"name": name}).json()
        print(f"created bot {bot['owner']}/{bot['name']}", flush=True)
        return bot
    names = ", ".join(sorted(b["name"] for b in mine)) or "none yet"
    raise CommandError(f"you have no bot named {name!r} (your bots: {names}); add --create to create it")


def _wait_for_validation(client: ApiClient, version: dict, timeout: float) -> dict:
    path = f"/api/bots/{version['bot']}/versions/{version['number']}/"
    progress = Progress(None, label="validating ")
    deadline = time.monotonic() + timeout
    delay = 0.5
    try:
        while version["status"] == "validating":
            if time.monotonic() >= deadline:
                raise FailureError(
                    f"version {version['number']} is still validating after {timeout:g} s; "
                    f"check later: arena matches --bot {version['bot']}"
                )
            _sleep_ticking(progress, min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 5.0)
            version = client.get(path).json()
    finally:
        progress.close()
    return version


def _sleep_ticking(progress: Progress, seconds: float) -> None:
    end = time.monotonic() + seconds
    while True:
        progress.tick()
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(0.2, left))


def _report(version: dict, label: str, server: str) -> int:
    if version["status"] == "active":
        print(f"{label} passed validation and is active")
        return 0
    print(f"{label} was rejected: {version['rejection_reason']}")
    log = version.get("validation_log")
    if log:
        print("--- validation log ---")
        print(log.rstrip("\n"))
        print("--- end of log ---")
    if version.get("validation_match"):
        print(f"validation match: {server}/matches/{version['validation_match']}/")
    return EXIT_REJECTED


# --- matches -------------------------------------------------------------------------------------


def run_matches(args, server: str) -> int:
    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    client = _client(server, need_token=False)
    bot_id = None
    if args.bot is not None:
        bot_id = int(args.bot) if args.bot.isdigit() else _find_own_bot(
            _client(server, need_token=True), args.bot, create=False
        )["id"]
    matches = list(
        client.pages("/api/matches/", limit=args.limit, bot=bot_id, status=args.status, page_size=min(args.limit, 200))
    )
    if args.json:
        print(json.dumps(matches, indent=2))
        return 0
    print(format_matches(matches))
    return 0


def format_matches(matches: list[dict]) -> str:
    """A plain table: id, kind, status, when, and each seat with its rank once done."""
    if not matches:
        return "no matches"
    rows = [("ID", "KIND", "STATUS", "QUEUED (UTC)", "SEATS")]
    for match in matches:
        seats = ", ".join(
            f"{seat['label']}" + (f" #{seat['rank']}" if seat.get("rank") else "")
            + (" (forfeit)" if seat.get("forfeited") else "")
            for seat in match["seats"]
        )
        queued = (match.get("queued_at") or "")[:19].replace("T", " ")
        rows.append((str(match["id"]), match["kind"], match["status"], queued, seats))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    )


# --- replay --------------------------------------------------------------------------------------


def run_replay(args, server: str) -> int:
    if len(args.target) != 1 or not args.target[0].isdigit():
        raise CommandError(
            f"expected MATCH_ID (a number) or view FILE, got {' '.join(args.target)!r}"
        )
    if args.output is None:
        raise CommandError("arena replay MATCH_ID needs -o FILE (or -o - for standard output)")
    if args.no_browser:
        raise CommandError("--no-browser goes with arena replay view FILE")
    args.match = int(args.target[0])
    answer = _client(server, need_token=False).get(f"/api/matches/{args.match}/replay/")
    document = answer.json()  # refuse to save something that is not a replay document
    if args.output == "-":
        sys.stdout.write(answer.body.decode())
        sys.stdout.flush()
        return 0
    target = Path(args.output)
    _write_atomically(target, answer.body)
    games = len(document.get("games", [])) if isinstance(document, dict) else 0
    print(f"wrote the replay of match {args.match} to {target} ({len(answer.body)} bytes, {games} game{'' if games == 1 else 's'})")
    return 0


def _write_atomically(target: Path, data: bytes) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=folder)
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None


# --- replay view ---------------------------------------------------------------------------------


def run_replay_view(args) -> int:
    """Write FILE.html beside FILE: the viewer, its styles and the replay in one page; open it."""
    from arena_cli.replay_page import replay_problem, replay_title, standalone_html

    if len(args.target) != 2:
        raise CommandError("usage: arena replay view FILE [--no-browser] (one replay file)")
    if args.output is not None or args.server is not None:
        raise CommandError("arena replay view FILE takes no -o or --server: it writes FILE.html beside FILE")
    source = Path(args.target[1])
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {source}: {exc.strerror or exc}") from None
    try:
        replay = json.loads(data)
    except ValueError as exc:
        raise CommandError(f"{source} is not JSON ({exc}); expected a replay from arena play --replay") from None
    problem = replay_problem(replay)
    if problem:
        raise CommandError(f"{source} is not a replay the viewer can play: {problem}")
    target = source.with_name(source.name + ".html")
    page = standalone_html(replay, title=replay_title(replay, source.name)).encode("utf-8")
    _write_atomically(target, page)
    print(f"wrote {target} ({len(page) // 1024} KB): the replay plays from this one file, offline")
    if not args.no_browser:
        import webbrowser

        url = target.resolve().as_uri()
        if not webbrowser.open(url):
            print(f"no browser could be started here; open {url}")
    return 0
