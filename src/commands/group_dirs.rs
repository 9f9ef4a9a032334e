//! The group folders of a multigroup project: as kubebuilder keeps a group's controllers in
//! `internal/controller/<group>/` and its webhooks in `internal/webhook/<group>/<version>/`,
//! rbuilder keeps them in `src/controller/<group>/` and `src/webhook/<group>/<version>/`, and
//! their tests in `tests/integration/<group>/` and `tests/e2e/<group>/`; so one kind name can
//! be used in two groups. Each folder is a module (`mod.rs`, with a marker that lists what goes
//! in it), listed in the module above it. A single-group project has none: its files are named
//! by kind alone, where these modules would be.

use crate::model::Resource;
use crate::scaffold::{Additions, Entry, IfExists, paths};

/// One of the trees that a multigroup project divides by group.
pub struct GroupDirs {
    /// The tree's folder: `src/controller`.
    base: &'static str,
    /// The module file that lists the tree's modules (its `mod.rs`, or a test crate's
    /// `main.rs`), and the marker there, which a group's own `mod.rs` has too.
    root: &'static str,
    marker: &'static str,
    /// What a group's module holds (`controllers`), and how (`one module per controller`).
    holds: &'static str,
    layout: &'static str,
    /// Whether a group's module is `pub` (the crate's own modules, which tests name).
    public: bool,
}

/// `src/controller/<group>/`: one module per controller.
pub const CONTROLLERS: GroupDirs = GroupDirs {
    base: "src/controller",
    root: "src/controller/mod.rs",
    marker: "controller-modules",
    holds: "controllers",
    layout: "one module per controller",
    public: true,
};

/// `src/webhook/<group>/`: one module per version, one file per kind there.
pub const WEBHOOKS: GroupDirs = GroupDirs {
    base: "src/webhook",
    root: "src/webhook/mod.rs",
    marker: "webhook-modules",
    holds: "webhooks",
    layout: "one module per version",
    public: true,
};

/// `tests/integration/<group>/`: one module per controller, and per version's webhooks.
pub const INTEGRATION_TESTS: GroupDirs = GroupDirs {
    base: "tests/integration",
    root: paths::INTEGRATION_TESTS,
    marker: "integration-tests",
    holds: "integration tests",
    layout: "one module per controller, and per version's webhooks",
    public: false,
};

/// `tests/e2e/<group>/`: one module per kind.
pub const E2E_TESTS: GroupDirs = GroupDirs {
    base: "tests/e2e",
    root: "tests/e2e/main.rs",
    marker: "e2e-kinds",
    holds: "end-to-end tests",
    layout: "one module per kind",
    public: false,
};

impl GroupDirs {
    /// The module file that lists `r`'s modules in this tree: its group's `mod.rs`, or in a
    /// single-group project the tree's root.
    pub fn listing(&self, r: &Resource) -> String {
        r.group_dir_mod_file(self.base)
            .unwrap_or_else(|| self.root.to_owned())
    }

    /// The marker of [`GroupDirs::listing`], which a module of `r`'s goes before.
    pub fn marker(&self) -> &'static str {
        self.marker
    }

    /// Adds the module of `r`'s group in this tree, made by the group's first file there and
    /// listed in the tree's root; nothing in a single-group project.
    pub fn add_group_module(&self, add: &mut Additions, r: &Resource) {
        let Some(file) = r.group_dir_mod_file(self.base) else {
            return;
        };
        let group = if r.api_group.is_empty() {
            "Kubernetes' core API group".to_owned()
        } else {
            format!("the `{}` API group", r.api_group)
        };
        let insert = if self.public {
            "inserts/mod_group.rs"
        } else {
            "inserts/tests_mod_group.rs"
        };
        add.add(
            Entry::template(file, "layout/group_mod.rs", IfExists::Keep)
                .with("holds", &self.holds)
                .with("group", &group)
                .with("layout", &self.layout)
                .with("marker", &self.marker)
                .insert(self.root, self.marker, insert),
        );
    }
}
