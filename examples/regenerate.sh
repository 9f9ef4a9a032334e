#!/usr/bin/env bash
# The example is one of the golden trees: testdata/regenerate.sh rewrites them all.
exec "$(dirname "$0")/../testdata/regenerate.sh"
