#!/bin/sh
# Builds the lossless container image with buildah (Debian package buildah): stages
# the root filesystem (dist/container/stage.sh: the release binaries and what they
# link) into a context directory, then builds dist/container/Containerfile on it.
# No registry is contacted: the base is `scratch`. docs/operations.md, "Fleet".
#
#   dist/container/build.sh [--bin-dir DIR] [--context DIR] [--tag NAME]
#
# --bin-dir DIR   prebuilt binaries (losslessd, lossless) in DIR [build the release ones]
# --context DIR   where to stage                          [target/container]
# --tag NAME      the image's name                        [localhost/lossless:VERSION]
#
# Then: podman save localhost/lossless:VERSION -o lossless.tar, or buildah push to a
# registry of yours.
set -eu

die() {
    echo "build.sh: $*" >&2
    exit 2
}

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN_ARGS=
CONTEXT=$SRC/target/container
TAG=
while [ $# -gt 0 ]; do
    case "$1" in
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a directory"; BIN_ARGS="--bin-dir=$2"; shift 2 ;;
    --context) [ $# -ge 2 ] || die "--context needs a directory"; CONTEXT=$2; shift 2 ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; TAG=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
command -v buildah >/dev/null 2>&1 || die "buildah not found (Debian package buildah)"

# shellcheck disable=SC2086 # BIN_ARGS is one word or none
"$SRC/dist/container/stage.sh" $BIN_ARGS "$CONTEXT/rootfs"
if [ -z "$TAG" ]; then
    # "losslessd 0.1.0": the binary staged (it runs here: its libraries are this host's).
    version=$("$CONTEXT/rootfs/usr/sbin/losslessd" --version | awk '{ print $2 }')
    TAG=localhost/lossless:${version:-latest}
fi
buildah bud --layers=false -f "$SRC/dist/container/Containerfile" -t "$TAG" "$CONTEXT"
echo "built $TAG"
