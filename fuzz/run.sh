#!/usr/bin/env bash
# Runs every fuzz target for N seconds (default 20), seeding each corpus from
# the golden frames in seeds/ (hex, one input per file).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# cargo-fuzz needs nightly-only sanitizer flags; RUSTC_BOOTSTRAP=1 lets the
# stable toolchain accept them. Crashes land in fuzz/artifacts/TARGET/.
set -euo pipefail

cd "$(dirname "$0")"
secs="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(frame lldpdu cee_dcbx ieee_dcbx mac_control policy_parse policy_xml headroom_units netlink_link netlink_addr dcbnl_reply dcbnl_ieee daemon_config control_request tunnel relay capture)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz
fi

status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    for f in seeds/"$t"/*.hex; do
        [ -e "$f" ] || continue
        xxd -r -p "$f" > "corpus/$t/seed_$(basename "$f" .hex)"
    done
    echo "=== $t: ${secs}s"
    if ! RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time="$secs"; then
        echo "=== $t: FAILED (see artifacts/$t/)"
        status=1
    fi
done
exit $status
