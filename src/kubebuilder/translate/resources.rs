//! Each kubebuilder resource as an rbuilder PROJECT entry: one of the project's own kinds, a
//! Kubernetes built-in type, or (left out) another project's type.

use anyhow::Result;

use super::{PendingWebhooks, Translation};
use crate::kubebuilder::format::{KbApi, KbResource};
use crate::model::builtin;
use crate::model::layout::Controller;
use crate::model::{ControllerName, Group, GroupLayout, Kind, Plural, Version};
use crate::project::{ApiEntry, ControllerEntry, DeployImageEntry, ResourceEntry};

impl Translation {
    /// Adds `r`'s entry to the project, or says why it is left out; returns its webhooks, to
    /// translate once every resource is known.
    pub(super) fn resource(&mut self, r: KbResource) -> Option<PendingWebhooks> {
        let name = resource_name(&r);
        self.unknown_fields(&name, &r.unknown);
        let entry = match &r.api {
            _ if r.external => self.external(&r, &name)?,
            Some(api) if !r.core => self.custom(&r, api, &name)?,
            _ => self.builtin(&r, &name)?,
        };
        let at = self.project.resources.len();
        self.project.resources.push(entry);
        r.webhooks.map(|w| (at, name, w))
    }

    /// Another project's type: its Go module is of no use to Rust, and the kubebuilder project
    /// holds no CRD to generate Rust types from; it is carried over if a CRD file given to
    /// `alpha generate --external-api-path` has it.
    fn external(&mut self, r: &KbResource, name: &str) -> Option<ResourceEntry> {
        let api_group = if r.domain.is_empty() {
            r.group.clone()
        } else {
            format!("{}.{}", r.group, r.domain)
        };
        let Some(found) = self.crds.find(&api_group, &r.version, &r.kind) else {
            self.leave_out_external(r, name, &api_group);
            return None;
        };
        let names = (|| -> Result<(Version, Kind, Plural)> {
            Ok((
                Version::parse(&r.version)?,
                Kind::parse(&r.kind)?,
                Plural::parse(&found.crd.spec.names.plural)?,
            ))
        })();
        let (version, kind, plural) = match names {
            Ok(names) => names,
            Err(error) => {
                self.leave_out(
                    name,
                    format!("rbuilder refuses its names: {error:#}"),
                    "write its types yourself",
                );
                return None;
            }
        };
        if self.project.namespaced && found.crd.spec.scope == "Cluster" {
            self.leave_out(
                name,
                format!(
                    "{} is cluster-scoped, and an operator scoped to one namespace can neither \
                     be granted it nor keep its webhooks to that namespace",
                    r.kind
                ),
                "run `rbuilder edit --namespaced=false` in the new project, then `rbuilder \
                 create api` or `create webhook` for it with --external-api-path",
            );
            return None;
        }
        let (controller, seconds) = self.controllers(r, &kind, name);
        if !controller && r.webhooks.is_none() {
            return None;
        }
        let entry = ResourceEntry::of_external(
            &api_group,
            version,
            kind.clone(),
            plural,
            found.path,
            controller,
        )
        .ok()?;
        let named = !r.controllers.is_empty();
        let controllers =
            self.second_controllers(controller, named, &entry.group, &kind, seconds, name);
        Some(ResourceEntry {
            controllers,
            ..entry
        })
    }

    /// Another project's type for which no CRD file was given: its controller and webhooks,
    /// each with the command that adds it from the CRD file.
    fn leave_out_external(&mut self, r: &KbResource, name: &str, api_group: &str) {
        let module = r.module.as_deref().unwrap_or("its Go module");
        let why = format!(
            "its types come from the Go module {module}; rbuilder generates Rust types from the \
             CRD, which the kubebuilder project does not hold"
        );
        let domain = if r.domain.is_empty() {
            String::new()
        } else {
            format!(" --external-api-domain {}", r.domain)
        };
        let names = format!(
            "--group {}{domain} --version {} --kind {}",
            r.group, r.version, r.kind
        );
        let get = format!(
            "get the CRD of {api_group} {} (from the release of {module}) and migrate again \
             with --external-api-path <the CRD file>, or run",
            r.kind
        );
        if has_controller(r) {
            self.leave_out(
                format!("{name}: its controller"),
                why.clone(),
                format!(
                    "{get} `rbuilder create api {names} --resource=false --external-api-path \
                     <the CRD file>`"
                ),
            );
        }
        if let Some(w) = &r.webhooks {
            let flags: Vec<&str> = [
                (w.defaulting, " --defaulting"),
                (w.validation, " --programmatic-validation"),
            ]
            .into_iter()
            .filter(|(wanted, _)| *wanted)
            .map(|(_, flag)| flag)
            .collect();
            self.leave_out(
                format!("{name}: its webhooks"),
                why,
                format!(
                    "{get} `rbuilder create webhook {names}{} --external-api-path <the CRD \
                     file>`",
                    flags.concat()
                ),
            );
        }
    }

    /// One of the project's own kinds.
    fn custom(&mut self, r: &KbResource, api: &KbApi, name: &str) -> Option<ResourceEntry> {
        self.unknown_fields(name, &api.unknown);
        let create = format!(
            "rbuilder create api --group {} --version {} --kind {}",
            r.group, r.version, r.kind
        );
        let names = (|| -> Result<(Group, Version, Kind, Plural)> {
            let group = Group::parse(&r.group)?;
            group.check_with_domain(&self.project.domain)?;
            let version = Version::parse(&r.version)?;
            let kind = Kind::parse(&r.kind)?;
            let plural = match &r.plural {
                Some(plural) => Plural::parse(plural)?,
                None => Plural::of(&kind)?,
            };
            Ok((group, version, kind, plural))
        })();
        let (group, version, kind, plural) = match names {
            Ok(names) => names,
            Err(error) => {
                self.leave_out(
                    name,
                    format!("rbuilder refuses its names: {error:#}"),
                    format!("after the migration, create it under names rbuilder takes: {create}"),
                );
                return None;
            }
        };
        if !r.domain.is_empty() && r.domain != self.project.domain.as_ref() {
            self.leave_out(
                format!("{name}: its domain {}", r.domain),
                format!(
                    "rbuilder puts a project's own kinds in its domain, {}",
                    self.project.domain
                ),
                "nothing: it is scaffolded in the project's domain; change clients of the old \
                 API group",
            );
        }
        if let Some(other) = self
            .project
            .resources
            .iter()
            .find(|e| e.kind == kind && e.group != group && !self.project.multigroup)
        {
            self.leave_out(
                name,
                format!(
                    "kind {kind} is carried over in group {} already, and in a project that is \
                     not multigroup rbuilder names a kind's controller, tests and roles after \
                     the kind alone, so a kind name lives in one group",
                    other.group.display_name()
                ),
                format!(
                    "after the migration, run `rbuilder create api --group {group} --version \
                     {version} --kind <another kind name>` and move its types there"
                ),
            );
            return None;
        }
        if self.project.namespaced && !api.namespaced {
            self.leave_out(
                name,
                "it is cluster-scoped, and rbuilder's operators scoped to one namespace have \
                 namespaced kinds only",
                format!(
                    "run `rbuilder edit --namespaced=false` in the new project, then `{create} \
                     --namespaced=false`"
                ),
            );
            return None;
        }
        let sibling = self
            .project
            .versions_of(&group, &kind)
            .next()
            .map(|s| (s.version.clone(), s.plural.clone(), s.namespaced()));
        if let Some((sibling, sibling_plural, sibling_namespaced)) = sibling
            && (sibling_plural.as_ref() != Some(&plural) || sibling_namespaced != api.namespaced)
        {
            self.leave_out(
                name,
                format!(
                    "its plural or scope differs from version {sibling}'s, and a kind has one CRD"
                ),
                format!("after the migration, {create}"),
            );
            return None;
        }

        let (mut controller, seconds) = self.controllers(r, &kind, name);
        if controller
            && let Some(other) = self.project.controller_elsewhere(&group, &kind, &version)
        {
            self.leave_out(
                format!("{name}: its controller"),
                format!(
                    "{kind} has its controller in version {} already, and one controller \
                     reconciles a kind in all its versions",
                    other.version
                ),
                format!(
                    "write its logic in {}",
                    self.own_controller_file(&group, &kind)
                ),
            );
            controller = false;
        }
        let named = !r.controllers.is_empty();
        let controllers = self.second_controllers(controller, named, &group, &kind, seconds, name);
        let gvk = (r.group.clone(), r.version.clone(), r.kind.clone());
        if let Some(options) = self.deploy_images.remove(&gvk) {
            let why = if !controller {
                Some("it gets no controller here")
            } else if !api.namespaced {
                Some("it is cluster-scoped, and the Deployment runs in the resource's namespace")
            } else {
                None
            };
            match why {
                Some(why) => self.leave_out(
                    format!("{name}: its deploy-image controller"),
                    why,
                    "run the image from a controller of your own",
                ),
                None => {
                    let deploy = self.project.plugins.deploy_image.get_or_insert_default();
                    deploy.resources.push(DeployImageEntry {
                        domain: self.project.domain.to_string(),
                        group: group.clone(),
                        kind: kind.clone(),
                        options,
                        version: version.clone(),
                    });
                }
            }
        }
        let mut entry = ResourceEntry {
            api: Some(ApiEntry {
                crd_version: "v1".into(),
                namespaced: api.namespaced,
            }),
            controller,
            controllers,
            core: false,
            domain: self.project.domain.to_string(),
            external: false,
            group,
            kind,
            path: None,
            plural: Some(plural),
            short_names: Vec::new(),
            version,
            webhooks: None,
        };
        self.api(&mut entry, name);
        Some(entry)
    }

    /// A Kubernetes built-in type: a controller for it, its webhooks, or both.
    fn builtin(&mut self, r: &KbResource, name: &str) -> Option<ResourceEntry> {
        let Some(b) = builtin::find(&r.group, &r.version, &r.kind) else {
            self.leave_out(
                name,
                "it is no custom resource of the project, nor a Kubernetes built-in type that \
                 rbuilder knows",
                format!(
                    "write its controller or webhook yourself; rbuilder knows these built-in \
                     types: {}",
                    builtin::BUILTINS
                        .iter()
                        .map(|b| format!("{}/{}/{}", b.group, b.version, b.kind))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return None;
        };
        let kind = Kind::parse(b.kind).ok()?;
        let (mut controller, seconds) = self.controllers(r, &kind, name);
        if controller && self.project.namespaced && !b.namespaced {
            self.leave_out(
                format!("{name}: its controller"),
                format!(
                    "{} is cluster-scoped, and the Role of an operator scoped to one namespace \
                     cannot grant it",
                    b.kind
                ),
                "run `rbuilder edit --namespaced=false` in the new project, then `rbuilder \
                 create api --group ... --resource=false` for it",
            );
            controller = false;
        }
        if !controller && r.webhooks.is_none() {
            return None;
        }
        let entry = ResourceEntry::of_builtin(&b, controller).ok()?;
        let named = !r.controllers.is_empty();
        let controllers =
            self.second_controllers(controller, named, &entry.group, &kind, seconds, name);
        Some(ResourceEntry {
            controllers,
            ..entry
        })
    }

    /// Where the own controller of `group`'s `kind` goes in the new project.
    fn own_controller_file(&self, group: &Group, kind: &Kind) -> String {
        match GroupLayout::of(self.project.multigroup, group) {
            Ok(layout) => Controller::own(&layout, kind).file,
            // A group without a Rust module is left out when its kind is translated.
            Err(_) => format!("src/controller/{}.rs", kind.module().file),
        }
    }

    /// The `controllers` PROJECT records for a kind whose own controller is carried over or
    /// not (`own`), which kubebuilder recorded by name or not (`named`), with the second
    /// controllers `seconds`: the kind's own first, named after the kind; none if the kind's
    /// own controller is left out, and then its second ones are left out too.
    fn second_controllers(
        &mut self,
        own: bool,
        named: bool,
        group: &Group,
        kind: &Kind,
        seconds: Vec<ControllerName>,
        name: &str,
    ) -> Vec<ControllerEntry> {
        if !own {
            let own_file = self.own_controller_file(group, kind);
            for second in seconds {
                self.leave_out(
                    format!("{name}: its second controller, {second}"),
                    "the kind's own controller is left out, and a second controller goes beside it",
                    format!("after the migration, write its logic in {own_file}"),
                );
            }
            return Vec::new();
        }
        // A kind whose only controller kubebuilder named keeps its `controllers:` list.
        if seconds.is_empty() && !named {
            return Vec::new();
        }
        let Ok(own) = ControllerName::parse(&kind.lower()) else {
            return Vec::new();
        };
        std::iter::once(own)
            .chain(seconds)
            .map(|name| ControllerEntry { name })
            .collect()
    }

    /// Whether `r` gets its controller, and its second controllers: the first of
    /// kubebuilder's named controllers becomes the kind's own (a name other than the kind's is
    /// left out); the others are carried over where rbuilder takes their names.
    fn controllers(
        &mut self,
        r: &KbResource,
        kind: &Kind,
        name: &str,
    ) -> (bool, Vec<ControllerName>) {
        let mut named = r.controllers.iter().map(|c| c.name.as_str());
        if let Some(first) = named.next()
            && first != kind.lower()
        {
            self.leave_out(
                format!("{name}: the name of its controller, {first}"),
                format!(
                    "rbuilder names a kind's own controller after the kind ({})",
                    kind.lower()
                ),
                "nothing to run: the name shows in logs and metrics labels; change what \
                 selects on the old one",
            );
        }
        let mut seconds: Vec<ControllerName> = Vec::new();
        for other in named {
            let parsed = ControllerName::parse(other).and_then(|second| {
                let taken = std::iter::once(kind.lower())
                    .chain(seconds.iter().map(|s| s.normalized()))
                    .any(|taken| taken.replace('-', "") == second.normalized());
                if taken {
                    anyhow::bail!("it differs from another controller of the kind only in '-'");
                }
                Ok(second)
            });
            match parsed {
                Ok(second) => seconds.push(second),
                Err(error) => self.leave_out(
                    format!("{name}: its second controller, {other}"),
                    format!("rbuilder refuses its name: {error:#}"),
                    format!(
                        "after the migration, run `rbuilder create api --group {} --version {} \
                         --kind {} --resource=false --controller-name <a name rbuilder takes>`",
                        r.group, r.version, r.kind
                    ),
                ),
            }
        }
        (has_controller(r), seconds)
    }
}

impl Translation {
    /// Leaves out the second controllers whose files or names clash with a kind's own
    /// controller or with an earlier second controller (`src/controller/<name>.rs`, or
    /// `src/controller/<group>/<name>.rs` in a multigroup project, and the name in logs and
    /// metrics), once every kind is known.
    pub(super) fn second_controller_clashes(&mut self) {
        let multigroup = self.project.multigroup;
        let layout = |group: &Group| GroupLayout::of(multigroup, group).ok();
        let mut taken: Vec<Controller> = self
            .project
            .resources
            .iter()
            .filter(|e| e.controller || !e.controllers.is_empty())
            .filter_map(|e| Some(Controller::own(&layout(&e.group)?, &e.kind)))
            .collect();
        let mut clashes = Vec::new();
        for entry in &mut self.project.resources {
            let own = entry.kind.lower();
            let name = format!(
                "{}/{} {}",
                entry.group.display_name(),
                entry.version,
                entry.kind
            );
            let Some(layout) = layout(&entry.group) else {
                continue;
            };
            entry.controllers.retain(|c| {
                if c.name.as_ref() == own {
                    return true;
                }
                let ours = Controller::second(&layout, &entry.kind, &c.name);
                let clash = taken.iter().find_map(|other| {
                    let alike = other.second.is_some()
                        && other.name.replace('-', "") == ours.name.replace('-', "");
                    ours.clash(other).or_else(|| {
                        alike.then(|| {
                            format!(
                                "a name that differs only in '-' from {}'s second controller \
                                 '{}' (hard to tell apart in logs and metrics)",
                                other.kind, other.name
                            )
                        })
                    })
                });
                match clash {
                    Some(clash) => {
                        clashes.push((name.clone(), c.name.clone(), clash));
                        false
                    }
                    None => {
                        taken.push(ours);
                        true
                    }
                }
            });
        }
        for (name, second, clash) in clashes {
            self.leave_out(
                format!("{name}: its second controller, {second}"),
                format!("it would take {clash}"),
                "after the migration, run `rbuilder create api ... --resource=false \
                 --controller-name <another name>` and move its logic there",
            );
        }
    }
}

/// Whether kubebuilder gave `r` a controller (one, or several named ones).
fn has_controller(r: &KbResource) -> bool {
    r.controller || !r.controllers.is_empty()
}

/// `crew/v1 Captain`, `cert-manager.io/v1 Certificate`, `core/v1 Pod`: a resource in messages.
fn resource_name(r: &KbResource) -> String {
    let group = if r.external && !r.domain.is_empty() {
        format!("{}.{}", r.group, r.domain)
    } else if r.group.is_empty() {
        "core".to_owned()
    } else {
        r.group.clone()
    };
    format!("{group}/{} {}", r.version, r.kind)
}
