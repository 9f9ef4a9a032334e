# rbuilder's own tasks. `make test` is the one test command: it installs the Python tools
# the tests use (into target/venv, nothing system-wide), then runs `cargo test` with the tests
# that a plain `cargo test` skips as slow (those that build and check every golden tree against
# crates.io: several minutes), the API emulator's own tests, and the end-to-end tests of
# generated operators against that emulator.

VENV ?= $(CURDIR)/target/venv
export PATH := $(VENV)/bin:$(PATH)

.PHONY: help test emulator-test e2e tools lint bench install

help: ## Show this help
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

test: tools ## Run every test: unit, CLI, generated projects, the emulator, and end to end against it
	KUBEBUILDER_ASSETS="$$(scripts/envtest-assets)" cargo test --workspace --all-features -- --include-ignored
	$(MAKE) emulator-test e2e

emulator-test: tools ## Only the API emulator's own tests (pytest, a few seconds)
	cd emulator && $(VENV)/bin/python -m pytest -q tests

e2e: tools ## Only the end-to-end part: generated operators against the API emulator (emulator/)
	scripts/e2e.sh

tools: $(VENV)/.installed ## Install kubernetes-validate, check-jsonschema, zizmor and the emulator's packages into target/venv

# Remade when the list below or the emulator's requirements change.
$(VENV)/.installed: emulator/requirements.txt Makefile
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check kubernetes-validate check-jsonschema \
	  zizmor -r emulator/requirements.txt
	touch $@

lint: ## rustfmt and clippy, as CI runs them
	cargo fmt --check
	cargo clippy --workspace --all-targets --all-features -- -D warnings

bench: ## Print scaffolding times (needs hyperfine)
	bench/scaffold.sh

install: ## Install the rbuilder binary into ~/.cargo/bin
	cargo install --locked --path .
