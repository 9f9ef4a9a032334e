// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The webhooks of the kinds of version v1.

pub mod demo_micro_service;
// +rbuilder:scaffold:kind-modules
