#!/bin/sh
# Build the platform image (web, Celery workers and beat): deploy/Dockerfile.
#
# Usage: deploy/build-image.sh [--offline]
#   --offline  no container registry: debootstrap the base image (Debian
#              bookworm with python3-venv, imported as $BASE_IMAGE, built once)
#              and build the Python dependencies as wheels on this machine
#              (deploy/wheels/), which the image installs with no index.
# Env: PLATFORM_IMAGE (default uno-arena:latest), BASE_IMAGE (default
#      uno-arena-base:bookworm), DEBIAN_MIRROR, DEBIAN_SUITE (deploy/rootfs.sh).
# Needs docker; --offline also root and debootstrap (the first time), and a
# package index reachable from a container (PyPI or a mirror pip is set up for).
set -eu

cd "$(dirname "$0")/.."
IMAGE="${PLATFORM_IMAGE:-uno-arena:latest}"
BASE_IMAGE="${BASE_IMAGE:-uno-arena-base:bookworm}"
OFFLINE=0
SCRIPT=build-image.sh
. deploy/rootfs.sh

for arg in "$@"; do
    case "$arg" in
        --offline) OFFLINE=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) die "unknown argument: '$arg' (allowed: --offline)" ;;
    esac
done

docker_ready

if [ "$OFFLINE" -eq 0 ]; then
    docker build --file deploy/Dockerfile --tag "$IMAGE" .
    exit 0
fi

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    echo "building the base image $BASE_IMAGE"
    rootfs_create python3,python3-venv,passwd
    rootfs_strip
    tar -C "$ROOT" --numeric-owner -c . | docker import \
        --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8" \
        --change 'CMD ["/usr/bin/python3"]' \
        --message "uno-arena platform base (debootstrap $SUITE minbase + python3-venv, passwd)" \
        - "$BASE_IMAGE" >/dev/null || die "docker import of $BASE_IMAGE failed"
    rootfs_cleanup
fi

# The wheels are built by the base image's own pip and Python, so they and
# their environment markers fit it exactly; the container uses this machine's
# CA bundle and proxy settings to reach the package index.
CA="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
[ -f "$CA" ] || die "no CA bundle at $CA (set PIP_CERT)"
echo "building wheels of the dependencies in $BASE_IMAGE"
docker run --rm --network host \
    --volume "$CA:/run/host-ca.crt:ro" --volume "$PWD/pyproject.toml:/run/pyproject.toml:ro" \
    --volume "$PWD/deploy/requirements.py:/run/requirements.py:ro" \
    --volume "$PWD/deploy/wheels:/wheels" \
    --env PIP_CERT=/run/host-ca.crt --env PIP_DISABLE_PIP_VERSION_CHECK=1 --env PIP_NO_CACHE_DIR=1 \
    --env HTTP_PROXY --env HTTPS_PROXY --env NO_PROXY --env http_proxy --env https_proxy --env no_proxy \
    "$BASE_IMAGE" sh -c '
        python3 /run/requirements.py /run/pyproject.toml >/tmp/requirements.txt &&
        python3 -m venv /tmp/venv && /tmp/venv/bin/pip wheel --quiet --wheel-dir /wheels -r /tmp/requirements.txt
    ' || die "could not build the dependencies' wheels in $BASE_IMAGE"
docker build --file deploy/Dockerfile --tag "$IMAGE" \
    --build-arg BASE="$BASE_IMAGE" --build-arg OFFLINE=1 .
