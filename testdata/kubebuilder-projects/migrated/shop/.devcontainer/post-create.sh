#!/usr/bin/env bash
# Runs once when the dev container is created: the Rust components `make fmt lint` use, and
# kind, for a local cluster to run `make test-e2e` and `make deploy` against (docker runs
# inside the container). kubectl and Go come from the container's features; kind is installed
# with `go install`, which checks it against the Go checksum database, as the e2e workflow does.
set -euo pipefail

rustup component add rustfmt clippy
go install sigs.k8s.io/kind@v0.32.0
install -m 0755 "$(go env GOPATH)/bin/kind" /usr/local/bin/kind

kind version
kubectl version --client
