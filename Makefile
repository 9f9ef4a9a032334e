# rbuilder's own tasks. `make test` is the one test command: it installs the Python tools
# the generated-project tests use (into target/venv, nothing system-wide), then runs
# `cargo test`, which builds and checks real generated projects (several minutes).

VENV ?= $(CURDIR)/target/venv
export PATH := $(VENV)/bin:$(PATH)

.PHONY: help test e2e tools lint bench install

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

test: tools ## Run every test: unit, CLI, generated projects, and end to end against the emulator
	cargo test
	scripts/e2e-fakeapi.sh

e2e: ## Only the end-to-end part: generated operators against ../shared/fakeapi (skipped if absent)
	scripts/e2e-fakeapi.sh

tools: $(VENV)/.installed ## Install kubernetes-validate and check-jsonschema into target/venv

$(VENV)/.installed:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check kubernetes-validate check-jsonschema
	touch $@

lint: ## rustfmt and clippy, as CI runs them
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

bench: ## Print scaffolding times (needs hyperfine)
	bench/scaffold.sh

install: ## Install the rbuilder binary into ~/.cargo/bin
	cargo install --locked --path .
