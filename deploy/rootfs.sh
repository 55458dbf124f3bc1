# Shared by the offline image builds (sourced, not run): a Debian rootfs made
# with debootstrap from the apt mirror this machine already uses, so the build
# works wherever apt works, with no container registry.
#
# The caller sets SCRIPT (its name, for messages) and may set DEBIAN_MIRROR
# and DEBIAN_SUITE (default bookworm). rootfs_create sets WORK (a temporary
# folder, removed on exit) and ROOT (the rootfs inside it).

SUITE="${DEBIAN_SUITE:-bookworm}"

die() {
    echo "$SCRIPT: error: $*" >&2
    exit 1
}

# docker_ready: fail unless the docker CLI reaches a running engine.
docker_ready() {
    command -v docker >/dev/null 2>&1 || die "docker CLI not found"
    docker info >/dev/null 2>&1 || die "Docker engine not reachable (is dockerd running?)"
}

# The first non-security Debian URI of /etc/apt/sources.list*.
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

rootfs_cleanup() {
    # A failed debootstrap may leave /proc or /dev mounted inside the rootfs:
    # unmount them, and never let rm cross into another file system.
    if [ -n "${ROOT:-}" ] && [ -d "$ROOT" ]; then
        awk -v root="$ROOT" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r |
            while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done
    fi
    [ -z "${WORK:-}" ] || rm -rf --one-file-system "$WORK"
}

# rootfs_create PACKAGES: debootstrap a minbase $SUITE with PACKAGES (comma-separated) into $ROOT.
rootfs_create() {
    [ "$(id -u)" -eq 0 ] || die "debootstrap needs root (running as uid $(id -u))"
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (apt-get install debootstrap)"
    MIRROR="${DEBIAN_MIRROR:-$(find_mirror | head -n 1)}"
    [ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"
    WORK="$(mktemp -d /tmp/uno-rootfs.XXXXXX)"
    ROOT="$WORK/rootfs"
    trap rootfs_cleanup EXIT
    trap 'exit 130' INT TERM
    echo "debootstrap $SUITE (minbase + $1) from $MIRROR"
    if ! debootstrap --variant=minbase --include="$1" "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
        tail -n 20 "$WORK/debootstrap.log" >&2
        die "debootstrap failed (mirror $MIRROR, suite $SUITE); log tail above"
    fi
    [ -x "$ROOT/usr/bin/python3" ] || die "python3 missing from the rootfs after debootstrap"
}

# rootfs_strip: remove what nothing at run time reads (docs, man pages, locales, apt's lists).
rootfs_strip() {
    rm -rf \
        "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
        "$ROOT"/usr/share/locale/* "$ROOT"/usr/share/lintian "$ROOT"/usr/share/common-licenses \
        "$ROOT"/var/cache/apt "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/debconf/*-old \
        "$ROOT"/var/log/* "$ROOT"/var/cache/ldconfig/*
}
