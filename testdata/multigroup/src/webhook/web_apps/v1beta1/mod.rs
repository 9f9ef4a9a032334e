// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The webhooks of the kinds of version v1beta1.

pub mod site;
// +rbuilder:scaffold:kind-modules
