#!/usr/bin/env bash
# Runs every fuzz target (`cargo fuzz list`) for SECONDS each (default 20), seeding
# each corpus from the inputs in seeds/TARGET/ (hex, one input per file). Zero crashes
# required: exits 1 naming each crash file with the commands to replay and minimise
# it (fuzz/README.md says how a crash becomes a regression test).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Installs cargo-fuzz when missing (`cargo install cargo-fuzz --locked`). cargo-fuzz
# needs nightly-only flags (-Zsanitizer=address, sanitizer coverage): RUSTC_BOOTSTRAP=1
# lets the stable toolchain accept them. Each run must show libFuzzer's coverage
# counters, or the target was not instrumented and the script fails.
#
# Corpora go to fuzz/corpus/, crashes to fuzz/artifacts/, logs to fuzz/logs/: none is
# committed (.gitignore).
set -euo pipefail

cd "$(dirname "$0")"
secs="${1:-20}"
shift || true
case "$secs" in
    '' | *[!0-9]*)
        echo "fuzz/run.sh: SECONDS must be a whole number, not '$secs'" >&2
        exit 2
        ;;
esac

export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz (cargo install cargo-fuzz --locked)"
    cargo install cargo-fuzz --locked
fi
cargo fuzz --version

all=()
while IFS= read -r t; do
    [ -n "$t" ] && all+=("$t")
done < <(cargo fuzz list)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=("${all[@]}")
fi
for t in "${targets[@]}"; do
    if [[ " ${all[*]} " != *" $t "* ]]; then
        echo "fuzz: no target '$t' (cargo fuzz list: ${all[*]})" >&2
        exit 2
    fi
done

# One build for all of them (cargo fuzz run then finds it up to date).
start=$SECONDS
cargo fuzz build
echo "fuzz: build took $((SECONDS - start)) s (${#targets[@]} targets)"

mkdir -p logs
failed=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    for f in seeds/"$t"/*.hex; do
        [ -e "$f" ] || continue
        perl -0777 -ne 's/\s+//g; print pack("H*", $_)' "$f" >"corpus/$t/seed_$(basename "$f" .hex)"
    done
    log="logs/$t.log"
    status=0
    cargo fuzz run "$t" -- -max_total_time="$secs" >"$log" 2>&1 || status=$?
    # libFuzzer's last status line: "#RUNS DONE cov: N ft: N corp: N/Nb ...".
    summary=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    counters=$(grep -Eo 'Loaded [0-9]+ modules +\([0-9]+ inline 8-bit counters\)' "$log" | head -n 1 || true)
    if [ "$status" -ne 0 ]; then
        failed+=("$t")
        echo "fuzz: $t: FAILED (exit $status); from fuzz/$log:"
        grep -E -A1 'panicked at|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|^SUMMARY' "$log" |
            grep -v '^--$' | head -n 12 | sed 's/^/    /'
        # libFuzzer: "Test unit written to ./artifacts/TARGET/crash-SHA1".
        written=$(grep -Eo 'Test unit written to [^ ]+' "$log" | awk '{print $5}' || true)
        if [ -z "$written" ]; then
            echo "fuzz: $t: no crash file written (see fuzz/$log)"
        fi
        for a in $written; do
            a=${a#./}
            case "$a" in
                /*) echo "fuzz: $t: crash file $a" ;;
                *) echo "fuzz: $t: crash file fuzz/$a" ;;
            esac
            echo "    replay:   (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run $t $a)"
            echo "    minimise: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz tmin $t $a)"
        done
        continue
    fi
    if [ -z "$counters" ] || [[ "$counters" == *"(0 inline"* ]] || [[ "$summary" != *"cov: "* ]]; then
        failed+=("$t")
        echo "fuzz: $t: FAILED: not instrumented for coverage (libFuzzer said: '${counters:-no counters}'; '${summary:-no status line}')"
        continue
    fi
    echo "fuzz: $t: ${secs}s, no crash: ${summary#\#}"
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${secs} s each, no crash"
