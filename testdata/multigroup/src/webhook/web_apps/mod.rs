// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The webhooks of the `web-apps.example.com` API group:
//! one module per version.

pub mod v1beta1;
// +rbuilder:scaffold:webhook-modules
