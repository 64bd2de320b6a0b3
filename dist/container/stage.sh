#!/bin/sh
# Lays the root filesystem of the lossless container image: the two binaries, the
# shared libraries they link (what ldd lists, the dynamic loader included) and the
# directories the daemon uses, nothing else. dist/container/Containerfile copies it
# onto an empty base. docs/operations.md, "Fleet".
#
#   dist/container/stage.sh [--bin-dir DIR] [--no-strip] ROOTFS
#
# --bin-dir DIR   the prebuilt binaries in DIR (losslessd, lossless); without it the
#                 release binaries are built first (cargo build --release --locked)
# --no-strip      keep the debug information (stripped with strip(1) when it is here)
#
# ROOTFS is emptied first. What it holds:
#   /usr/sbin/losslessd, /usr/bin/lossless, their libraries at the paths ldd names
#   /etc/lossless/          the configuration is mounted here (losslessd.toml)
#   /var/lib/lossless/      the state directory (mount a host path)
#   /run/lossless/          the control socket
#   /host/sys/              where the host's /sys is mounted (--sysfs /host/sys)
#   /tmp/
#   /usr/share/doc/lossless/examples/losslessd.toml   the commented example
set -eu

die() {
    echo "stage.sh: $*" >&2
    exit 2
}

BIN_SRC=
STRIP=yes
ROOTFS=
while [ $# -gt 0 ]; do
    case "$1" in
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a directory"; BIN_SRC=$2; shift 2 ;;
    --bin-dir=*) BIN_SRC=${1#--bin-dir=}; shift ;;
    --no-strip) STRIP=no; shift ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$ROOTFS" ] || die "one ROOTFS only (see --help)"; ROOTFS=$1; shift ;;
    esac
done
[ -n "$ROOTFS" ] || die "no ROOTFS given (see --help)"
case "$ROOTFS" in
/ | "") die "refusing to lay the image over '$ROOTFS'" ;;
esac
command -v ldd >/dev/null 2>&1 || die "ldd not found (Debian package libc-bin)"

SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "$BIN_SRC" ]; then
    command -v cargo >/dev/null 2>&1 ||
        die "cargo not found: build first (cargo build --release -p losslessd -p lossless) and pass --bin-dir target/release"
    (cd "$SRC" && cargo build --release --locked -p losslessd -p lossless)
    BIN_SRC=$SRC/target/release
fi
for b in losslessd lossless; do
    [ -x "$BIN_SRC/$b" ] || die "$BIN_SRC/$b: not found or not executable"
done

rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"
ROOTFS=$(cd "$ROOTFS" && pwd)

# The libraries a binary loads: every absolute path ldd prints (its "=> /path" and
# the loader's own line), copied to the same path, links resolved.
libs() {
    ldd "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'
}

put() { # MODE SRC DEST
    install -D -m "$1" "$2" "$ROOTFS$3"
    if [ "$STRIP" = yes ] && [ "$1" = 0755 ] && command -v strip >/dev/null 2>&1; then
        strip --strip-debug "$ROOTFS$3"
    fi
    echo "staged $3"
}

put 0755 "$BIN_SRC/losslessd" /usr/sbin/losslessd
put 0755 "$BIN_SRC/lossless" /usr/bin/lossless
for lib in $( (libs "$BIN_SRC/losslessd"; libs "$BIN_SRC/lossless") | sort -u); do
    [ -e "$lib" ] || die "$lib (from ldd) does not exist"
    install -D -m 0755 "$(readlink -f "$lib")" "$ROOTFS$lib"
    echo "staged $lib"
done
put 0644 "$SRC/examples/losslessd.toml" /usr/share/doc/lossless/examples/losslessd.toml
for d in etc/lossless var/lib/lossless run/lossless host/sys; do
    install -d -m 0755 "$ROOTFS/$d"
done
chmod 0700 "$ROOTFS/var/lib/lossless"
install -d -m 1777 "$ROOTFS/tmp"
echo "staged the directories /etc/lossless /var/lib/lossless /run/lossless /host/sys /tmp"
