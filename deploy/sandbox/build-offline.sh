#!/bin/sh
# Build the bots' sandbox image without a container registry.
#
# debootstrap a minimal Debian bookworm with python3 from the apt mirror this
# machine already uses, strip what a bot never needs (apt, dpkg data, perl,
# docs, man pages, locales), add the non-root user `bot` (uid 10001) and
# `docker import` it as $SANDBOX_IMAGE (default uno-arena-sandbox:latest).
#
# Usage: deploy/sandbox/build-offline.sh [--force]
#   --force   rebuild even when the image exists
# Env: SANDBOX_IMAGE, DEBIAN_MIRROR (default: the first Debian URI in
#      /etc/apt/sources.list*), DEBIAN_SUITE (default bookworm).
set -eu

IMAGE="${SANDBOX_IMAGE:-uno-arena-sandbox:latest}"
BOT_UID=10001
FORCE=0
SCRIPT=build-offline.sh
. "$(dirname "$0")/../rootfs.sh"

for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) die "unknown argument: '$arg' (allowed: --force)" ;;
    esac
done

docker_ready

if [ "$FORCE" -eq 0 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "image $IMAGE exists; nothing to do (use --force to rebuild)"
    exit 0
fi

echo "building $IMAGE"
rootfs_create python3

# Strip: a bot needs python3 and its stdlib, nothing to install or read about.
rootfs_strip
rm -rf \
    "$ROOT"/var/lib/apt "$ROOT"/etc/apt "$ROOT"/usr/lib/apt "$ROOT"/usr/bin/apt* \
    "$ROOT"/usr/share/perl* "$ROOT"/usr/lib/x86_64-linux-gnu/perl* \
    "$ROOT"/usr/bin/perl* "$ROOT"/usr/lib/python3.11/idlelib "$ROOT"/usr/lib/python3.11/turtledemo \
    "$ROOT"/usr/lib/python3.11/ensurepip "$ROOT"/usr/lib/python3.11/lib2to3/tests \
    "$ROOT"/var/lib/dpkg/info/*.md5sums
# Keep (and complete) the bytecode: the root is read-only at run time, and
# compiling the stdlib at every start would triple a seat's start time.
chroot "$ROOT" /usr/bin/python3 -m compileall -q -j 0 /usr/lib/python3.11 >/dev/null 2>&1 \
    || die "could not byte-compile the standard library in the rootfs"

# The unprivileged user bots run as (the Docker backend also passes --user).
echo "bot:x:$BOT_UID:$BOT_UID:uno arena bot:/home/bot:/usr/sbin/nologin" >>"$ROOT/etc/passwd"
echo "bot:x:$BOT_UID:" >>"$ROOT/etc/group"
echo "bot:!:19000::::::" >>"$ROOT/etc/shadow"
mkdir -p "$ROOT/home/bot" "$ROOT/sandbox"
chown "$BOT_UID:$BOT_UID" "$ROOT/home/bot"
chmod 700 "$ROOT/home/bot"

# Sanity check the interpreter the bot host needs before publishing the image.
chroot "$ROOT" /usr/bin/python3 -c "import argparse, codecs, errno, fcntl, importlib.util, json, select, socket, struct, termios, threading" \
    || die "python3 in the rootfs cannot import the bot host's modules"

if ! tar -C "$ROOT" --numeric-owner -c . | docker import \
        --change "USER $BOT_UID:$BOT_UID" \
        --change "WORKDIR /home/bot" \
        --change "ENV PATH=/usr/local/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8" \
        --change 'CMD ["/usr/bin/python3"]' \
        --message "uno-arena sandbox (debootstrap $SUITE minbase + python3)" \
        - "$IMAGE" >/dev/null; then
    die "docker import of $IMAGE failed"
fi

SIZE="$(docker image inspect --format '{{.Size}}' "$IMAGE")"
echo "built $IMAGE ($((SIZE / 1024 / 1024)) MiB)"
