#!/usr/bin/env bash
# Rewrites every golden tree listed in testdata/variants.txt (examples/demo-microservice is one
# of them) as rbuilder writes it today, keeping each tree's Cargo.lock. The fast test
# tests/golden.rs fails until the trees are current, so run this after changing a template,
# then review the diff: git diff testdata examples
set -euo pipefail
cd "$(dirname "$0")/.."
RBUILDER_GOLDEN=overwrite cargo test --quiet --test golden -- golden_trees_are_what_rbuilder_writes
git status --short testdata examples
