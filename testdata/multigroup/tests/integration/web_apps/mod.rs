// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The integration tests of the `web-apps.example.com` API group:
//! one module per controller, and per version's webhooks.

mod site;
mod site_v1beta1_webhooks;
// +rbuilder:scaffold:integration-tests
