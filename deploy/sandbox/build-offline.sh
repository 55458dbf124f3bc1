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
SUITE="${DEBIAN_SUITE:-bookworm}"
BOT_UID=10001
FORCE=0

die() {
    echo "build-offline.sh: error: $*" >&2
    exit 1
}

for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) die "unknown argument: '$arg' (allowed: --force)" ;;
    esac
done

command -v docker >/dev/null 2>&1 || die "docker CLI not found"
docker info >/dev/null 2>&1 || die "Docker engine not reachable (is dockerd running?)"

if [ "$FORCE" -eq 0 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "image $IMAGE exists; nothing to do (use --force to rebuild)"
    exit 0
fi

[ "$(id -u)" -eq 0 ] || die "debootstrap needs root (running as uid $(id -u))"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (apt-get install debootstrap)"

# Same mirror as apt uses here, so the build works wherever apt works.
find_mirror() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/ && $i !~ /security/) { print $i; exit } }' "$f"
    done
}
MIRROR="${DEBIAN_MIRROR:-$(find_mirror | head -n 1)}"
[ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"

WORK="$(mktemp -d /tmp/uno-sandbox-build.XXXXXX)"
ROOT="$WORK/rootfs"
LOG="$WORK/debootstrap.log"
cleanup() {
    # A failed debootstrap may leave /proc or /dev mounted inside the rootfs:
    # unmount them, and never let rm cross into another file system.
    if [ -d "$ROOT" ]; then
        awk -v root="$ROOT" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r |
            while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done
    fi
    rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building $IMAGE from $MIRROR ($SUITE, minbase + python3)"
if ! debootstrap --variant=minbase --include=python3 "$SUITE" "$ROOT" "$MIRROR" >"$LOG" 2>&1; then
    tail -n 20 "$LOG" >&2
    die "debootstrap failed (mirror $MIRROR, suite $SUITE); log tail above"
fi
[ -x "$ROOT/usr/bin/python3" ] || die "python3 missing from the rootfs after debootstrap"

# Strip: a bot needs python3 and its stdlib, nothing to install or read about.
rm -rf \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/usr/share/lintian "$ROOT"/usr/share/common-licenses \
    "$ROOT"/var/cache/apt "$ROOT"/var/lib/apt "$ROOT"/etc/apt "$ROOT"/usr/lib/apt \
    "$ROOT"/usr/bin/apt* "$ROOT"/var/cache/debconf/*-old "$ROOT"/var/log/* \
    "$ROOT"/var/cache/ldconfig/* "$ROOT"/usr/share/perl* "$ROOT"/usr/lib/x86_64-linux-gnu/perl* \
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
