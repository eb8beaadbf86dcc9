#!/usr/bin/env bash
# Runs every test of flowboost: the README's test command, and what CI runs (.ci/run).
# Installs what it needs. Tests that read ../shared/data skip (and say so) when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, profile ci: optimized, no LTO) =="
cargo test --workspace --profile ci --no-fail-fast
