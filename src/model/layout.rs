//! Where a resource's controllers, webhooks and tests go, and how its controllers and roles are
//! named: after the kind alone in a single-group project, and, in a multigroup project, under
//! its group as kubebuilder does it (`internal/controller/<group>/`, `Named("<group>-<kind>")`,
//! `<group>-<kind>-admin-role`), so that one kind name can be used in two groups. Every path
//! and name that depends on the layout is made here, or by `Resource` from this.

use anyhow::Result;
use serde::Serialize;

use super::names::{ControllerName, Group, Kind};
use crate::project::Project;

/// The layout of one group's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupLayout {
    /// In a multigroup project, the group's module under `src/controller/`, `src/webhook/`,
    /// `tests/integration/` and `tests/e2e/` (`web_apps`); `None` in a single-group project.
    pub group_dir: Option<String>,
    /// `../` in a multigroup project, else empty: what a relative path (`include_str!`) from a
    /// file in a group folder adds to go where the same file of a single-group project goes.
    pub group_dir_up: &'static str,
    /// What names start with in a multigroup project: the group, lower-case (`web-apps`).
    #[serde(skip)]
    prefix: Option<String>,
    /// The group laid out.
    #[serde(skip)]
    group: Group,
}

impl GroupLayout {
    /// The layout of `group`'s files in a project that is `multigroup` or not.
    pub fn of(multigroup: bool, group: &Group) -> Result<Self> {
        if !multigroup {
            return Ok(Self {
                group_dir: None,
                group_dir_up: "",
                prefix: None,
                group: group.clone(),
            });
        }
        Ok(Self {
            group_dir: Some(group.dir_module()?),
            group_dir_up: "../",
            prefix: Some(group.display_name().to_lowercase()),
            group: group.clone(),
        })
    }

    /// `name`, or in a multigroup project `<group>-name`: a controller's name (kubebuilder's
    /// `GetControllerName`), the start of a role's.
    pub fn name(&self, name: &str) -> String {
        match &self.prefix {
            Some(group) => format!("{group}-{name}"),
            None => name.to_owned(),
        }
    }

    /// `name`, or in a multigroup project `<group>_name`: the start of a role's file name.
    pub fn file_name(&self, name: &str) -> String {
        match &self.prefix {
            Some(group) => format!("{group}_{name}"),
            None => name.to_owned(),
        }
    }

    /// `base/<group>` in a multigroup project, else `base`: the folder of the group's
    /// controllers, webhooks or tests.
    pub fn dir(&self, base: &str) -> String {
        match &self.group_dir {
            Some(group) => format!("{base}/{group}"),
            None => base.to_owned(),
        }
    }

    /// `<group>::module` in a multigroup project, else `module`: a module path under
    /// `crate::controller`, `crate::webhook` or a test crate's root.
    pub fn module_path(&self, module: &str) -> String {
        match &self.group_dir {
            Some(group) => format!("{group}::{module}"),
            None => module.to_owned(),
        }
    }

    /// The group's module file under `base` (`src/controller/web_apps/mod.rs`) in a
    /// multigroup project.
    pub fn mod_file(&self, base: &str) -> Option<String> {
        self.group_dir
            .as_ref()
            .map(|group| format!("{base}/{group}/mod.rs"))
    }
}

/// A controller of a project, as the manager knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// The group and kind it reconciles.
    pub group: Group,
    pub kind: Kind,
    /// Its name given by `--controller-name`; `None` for the kind's own controller.
    pub second: Option<ControllerName>,
    /// Its file: `src/controller/web_apps/site.rs`.
    pub file: String,
    /// Its `Reconciler::NAME`, unique in the manager: `web-apps-site`.
    pub name: String,
}

impl Controller {
    /// The kind's own controller of `kind` in `layout`.
    pub fn own(layout: &GroupLayout, kind: &Kind) -> Self {
        let module = kind.module();
        Self {
            group: layout.group.clone(),
            kind: kind.clone(),
            second: None,
            file: format!("{}/{}.rs", layout.dir("src/controller"), module.file),
            name: layout.name(&kind.lower()),
        }
    }

    /// The second controller `name` of `kind` in `layout`.
    pub fn second(layout: &GroupLayout, kind: &Kind, name: &ControllerName) -> Self {
        Self {
            group: layout.group.clone(),
            kind: kind.clone(),
            second: Some(name.clone()),
            file: format!("{}/{}.rs", layout.dir("src/controller"), name.module().file),
            name: layout.name(name.as_ref()),
        }
    }

    /// What this controller would take from `other` if both were in one project: its file,
    /// or its name (controller-runtime refuses two controllers of one name too: the name
    /// labels their metrics and logs). `None` if both can be.
    pub fn clash(&self, other: &Controller) -> Option<String> {
        let whose = match &other.second {
            Some(_) => format!("{}'s second controller", other.kind),
            None => format!("{}'s controller", other.kind),
        };
        if self.file == other.file {
            Some(format!(
                "the file {} of {whose} '{}'",
                self.file, other.name
            ))
        } else if self.name == other.name {
            Some(format!(
                "the name '{}' of {whose} ({}), and a controller's name labels its metrics and \
                 logs",
                self.name, other.file
            ))
        } else {
            None
        }
    }
}

/// Every controller of `project`: each kind's own, then its second ones.
pub fn controllers(project: &Project) -> Result<Vec<Controller>> {
    let mut out = Vec::new();
    for entry in &project.resources {
        let layout = GroupLayout::of(project.multigroup, &entry.group)?;
        if entry.controller || !entry.controllers.is_empty() {
            out.push(Controller::own(&layout, &entry.kind));
        }
        for name in entry.named_controllers() {
            out.push(Controller::second(&layout, &entry.kind, name));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multigroup_project_puts_files_under_the_group_and_names_after_it() {
        let group = Group::parse("web-apps").unwrap();
        let kind = Kind::parse("Site").unwrap();
        let multi = GroupLayout::of(true, &group).unwrap();
        let own = Controller::own(&multi, &kind);
        assert_eq!(own.file, "src/controller/web_apps/site.rs");
        assert_eq!(own.name, "web-apps-site");
        assert_eq!(multi.file_name("site"), "web-apps_site");
        assert_eq!(multi.module_path("site"), "web_apps::site");
        let single = GroupLayout::of(false, &group).unwrap();
        let own = Controller::own(&single, &kind);
        assert_eq!(own.file, "src/controller/site.rs");
        assert_eq!(own.name, "site");
        assert_eq!(single.mod_file("src/controller"), None);
        // The core group's module is `core`, as k8s-openapi's.
        let core = GroupLayout::of(true, &Group::core()).unwrap();
        assert_eq!(core.dir("src/webhook"), "src/webhook/core");
        assert_eq!(core.name("pod"), "core-pod");
    }

    #[test]
    fn controllers_clash_by_file_or_by_name() {
        let layout = |group: &str| GroupLayout::of(true, &Group::parse(group).unwrap()).unwrap();
        let kind = |k: &str| Kind::parse(k).unwrap();
        let name = |n: &str| ControllerName::parse(n).unwrap();
        let foo = Controller::own(&layout("foo"), &kind("Bar"));
        let fiz = Controller::own(&layout("fiz"), &kind("Bar"));
        assert_eq!(foo.clash(&fiz), None, "one kind name in two groups");
        // `a-b` + `c` and `a` + `b-c` make one name.
        let one = Controller::own(&layout("a-b"), &kind("C"));
        let two = Controller::second(&layout("a"), &kind("X"), &name("b-c"));
        let clash = one.clash(&two).expect("one name");
        assert!(
            clash
                .starts_with("the name 'a-b-c' of X's second controller (src/controller/a/b_c.rs)"),
            "{clash}"
        );
        let three = Controller::second(&layout("a-b"), &kind("Y"), &name("c"));
        let clash = three.clash(&one).expect("one file");
        assert_eq!(
            clash,
            "the file src/controller/a_b/c.rs of C's controller 'a-b-c'"
        );
    }
}
