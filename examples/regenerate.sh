#!/usr/bin/env bash
# Regenerates examples/demo-microservice: the tutorial's project, exactly as rbuilder makes
# it. The test suite fails when the checked-in copy differs, so run this after changing a
# template. Keeps the example's Cargo.lock (rbuilder does not write one).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin="$PWD/target/debug/rbuilder"
example="$PWD/examples/demo-microservice"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/demo-microservice"
cd "$work/demo-microservice"
# A fixed year for the license headers, so the example does not change on January 1st.
export SOURCE_DATE_EPOCH=1780000000
"$bin" init --domain my.domain >/dev/null
"$bin" create api --group devops --version v1 --kind DemoMicroService \
  --image stefanprodan/podinfo:6.7.1 --image-container-port 9898 --run-as-user 1001 \
  --short-name dms >/dev/null
# The tutorial's webhooks: a defaulter, and a validator refusing images without a tag.
"$bin" create webhook --group devops --version v1 --kind DemoMicroService \
  --defaulting --programmatic-validation >/dev/null
if [ -f "$example/Cargo.lock" ]; then cp "$example/Cargo.lock" .; fi
rm -rf "$example"
cp -r "$work/demo-microservice" "$example"
echo "regenerated $example"
