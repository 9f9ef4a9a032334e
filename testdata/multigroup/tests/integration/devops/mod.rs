// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The integration tests of the `devops.example.com` API group:
//! one module per controller, and per version's webhooks.

mod demo_micro_service;
mod demo_micro_service_v1_webhooks;
mod dms_backup;
// +rbuilder:scaffold:integration-tests
