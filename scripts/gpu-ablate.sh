#!/usr/bin/env bash
# Trace `all`'s cost on NVIDIA taken apart (issue #59, docs/PERFORMANCE.md "Where trace `all`
# spends"): HEAD with scripts/gpu-ablate.patch applied, a build whose parts the CLXFER_ABL
# switches turn off run by run, packed as .gpu/libclxfer-abl.so beside scripts/gpu-cost.sh's
# build and run as `trace-all~SWITCH@abl` (scripts/gpu-storm.sh), in the same rounds as the rest.
# Switches (comma-separated): nowrite (the writer drops the trace's records, keeps the report),
# nocount (no counters), nice (the writer at nice 19), pin (the writer on the last CPU),
# sumfinish (a completion handled as summary mode's: START and END, no device record), sumenq
# (an enqueue as summary mode's), nocallrec (no call record for an enqueue), nomems (no memory
# objects or counters from the classification), noevery (no record of a call that enqueues
# nothing), two (trace mode asks START and END only, QUEUED and SUBMIT taken as START). The fourth visit's `tight` (every time asked before any release) is how clxfer
# collects now.
#   scripts/gpu-cost.sh pack && scripts/gpu-ablate.sh     here: build and pack
# The patch is against the commit that added it; `git apply` says where it no longer fits.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
git worktree add --quiet --detach "$dir" HEAD
trap 'git worktree remove --force "$dir"' EXIT
git -C "$dir" apply "$PWD/scripts/gpu-ablate.patch"
# Its own target directory, kept: the next pack rebuilds only what changed.
CARGO_TARGET_DIR="$PWD/target/ablate" cargo build --release --quiet --manifest-path "$dir/Cargo.toml"
mkdir -p .gpu
strip -o .gpu/libclxfer-abl.so target/ablate/release/libclxfer.so
ls -l .gpu/libclxfer-abl.so
