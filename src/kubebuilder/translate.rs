//! A kubebuilder project's PROJECT, read as kubebuilder writes it, becomes the PROJECT of a Rust
//! project that rbuilder then replays like its own: the same kinds, versions, controllers,
//! webhooks, conversion spokes and plugins, as far as rbuilder has them. Everything else is
//! listed as left out, with what to do instead; nothing is dropped silently.
//!
//! The rules rbuilder's commands enforce (one controller per kind, a kind name in one group,
//! a namespaced operator's kinds namespaced, ...) are checked here, so that what breaks one of
//! them is left out and named instead of failing the whole migration.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};

use super::format::{KbApi, KbDeployImage, KbProject, KbResource, KbWebhooks, Unknown};
use super::left_out::LeftOut;
use crate::manifests::AdmissionWebhook;
use crate::model::builtin::{self, Builtin};
use crate::model::{Domain, Group, Kind, Plural, ProjectName, Version, deploy_image};
use crate::project::{
    ApiEntry, DeployImageEntry, DeployImageOptions, EmptyPlugin, Project, ResourceEntry,
    WebhooksEntry,
};

/// The layout of kubebuilder's Go projects that rbuilder migrates.
pub const GO_V4: &str = "go.kubebuilder.io/v4";
/// A plugin of the go/v4 bundle: its kustomize files, which rbuilder writes too.
const KUSTOMIZE_V2: &str = "kustomize.common.kubebuilder.io/v2";

const DEPLOY_IMAGE: &str = "deploy-image.go.kubebuilder.io/v1-alpha";
const GRAFANA: &str = "grafana.kubebuilder.io/v1-alpha";
const HELM: &[&str] = &[
    "helm.kubebuilder.io/v1-alpha",
    "helm.kubebuilder.io/v2-alpha",
];
const AUTOUPDATE: &str = "autoupdate.kubebuilder.io/v1-alpha";

/// A kubebuilder resource's group, version and kind, as kubebuilder spells them.
type Gvk = (String, String, String);

/// The Rust project's PROJECT for `kb` (its folder named `folder`), and what it leaves out.
pub fn translate(kb: KbProject, folder: &str) -> Result<(Project, Vec<LeftOut>)> {
    if kb.version != "3" {
        bail!(
            "its version is '{}', but rbuilder migrates kubebuilder's PROJECT version '3' \
             (layout {GO_V4})",
            kb.version
        );
    }
    let layout = kb.layout.plugins();
    if !layout.contains(&GO_V4) {
        bail!(
            "its layout is '{}', but rbuilder migrates kubebuilder's {GO_V4} projects; upgrade \
             the project with kubebuilder first (kubebuilder alpha generate), then migrate it",
            layout.join(", ")
        );
    }
    let domain = Domain::parse(kb.domain.as_deref().unwrap_or_default())
        .context("the project's domain cannot be carried over")?;
    let name = kb.project_name.as_deref().unwrap_or(folder);
    let name = ProjectName::parse(name).context("the project's name cannot be carried over")?;
    let mut project = Project::new(&name, &domain);
    project.multigroup = kb.multigroup;
    project.namespaced = kb.namespaced;

    let mut t = Translation {
        project,
        left_out: Vec::new(),
        deploy_images: BTreeMap::new(),
    };
    for plugin in layout.iter().filter(|l| ![GO_V4, KUSTOMIZE_V2].contains(l)) {
        t.leave_out(
            format!("layout plugin {plugin}"),
            "rbuilder has no such plugin",
            "scaffold what it added by hand",
        );
    }
    t.unknown_fields("the project", &kb.unknown);
    t.plugins(kb.plugins)?;
    let mut webhooks = Vec::new();
    for resource in kb.resources {
        if let Some(w) = t.resource(resource) {
            webhooks.push(w);
        }
    }
    // Webhooks once every version is known: a conversion names versions added after its hub.
    let mut emptied = Vec::new();
    for (at, name, w) in webhooks {
        if !t.webhooks(at, &name, w) {
            emptied.push(at);
        }
    }
    // A built-in type that came only for webhooks that were all left out has nothing left.
    for at in emptied.into_iter().rev() {
        let entry = &t.project.resources[at];
        if entry.is_builtin() && !entry.controller {
            t.project.resources.remove(at);
        }
    }
    for ((group, version, kind), _) in std::mem::take(&mut t.deploy_images) {
        t.leave_out(
            format!("the deploy-image options of {group}/{version} {kind}"),
            "the project has no such resource",
            "nothing: remove them from the kubebuilder project's PROJECT",
        );
    }
    Ok((t.project, t.left_out))
}

/// The translation under way.
struct Translation {
    project: Project,
    left_out: Vec<LeftOut>,
    /// The deploy-image options of each resource, until the resource takes them.
    deploy_images: BTreeMap<Gvk, DeployImageOptions>,
}

/// A resource's webhooks, translated once every resource is: the index of its entry, its name
/// for messages, and kubebuilder's record.
type PendingWebhooks = (usize, String, KbWebhooks);

impl Translation {
    fn leave_out(
        &mut self,
        what: impl Into<String>,
        why: impl Into<String>,
        instead: impl Into<String>,
    ) {
        self.left_out.push(LeftOut::new(what, why, instead));
    }

    fn unknown_fields(&mut self, of: &str, unknown: &Unknown) {
        for (field, value) in unknown {
            self.leave_out(
                format!("{of}: field {field} ({value})"),
                "rbuilder does not know this field of kubebuilder's PROJECT",
                "scaffold what it stands for by hand",
            );
        }
    }

    fn plugins(&mut self, plugins: BTreeMap<String, serde_json::Value>) -> Result<()> {
        for (key, config) in plugins {
            match key.as_str() {
                DEPLOY_IMAGE => self.deploy_image_plugin(config)?,
                GRAFANA => self.project.plugins.grafana = Some(EmptyPlugin {}),
                helm if HELM.contains(&helm) => self.leave_out(
                    format!("plugin {helm}"),
                    "rbuilder has no Helm chart yet",
                    "`make build-installer` writes dist/install.yaml, everything `make deploy` \
                     applies in one file; make a chart of it by hand if you need one",
                ),
                AUTOUPDATE => self.leave_out(
                    format!("plugin {AUTOUPDATE}"),
                    "rbuilder has no workflow that brings a project to a new release yet",
                    "after upgrading rbuilder, run `rbuilder update`: it rewrites the runtime and \
                     lists your files that a new scaffold writes differently",
                ),
                other => self.leave_out(
                    format!("plugin {other}"),
                    "rbuilder has no such plugin",
                    "scaffold what it added by hand",
                ),
            }
        }
        Ok(())
    }

    /// The deploy-image options, checked by rbuilder's rules; a resource takes them later.
    fn deploy_image_plugin(&mut self, config: serde_json::Value) -> Result<()> {
        let config: KbDeployImage = serde_json::from_value(config).with_context(|| {
            format!("plugin {DEPLOY_IMAGE} has a configuration rbuilder cannot read")
        })?;
        for r in config.resources {
            let o = &r.options;
            let name = format!("{}/{} {}", r.group, r.version, r.kind);
            let checked = (|| -> Result<DeployImageOptions, String> {
                let field =
                    |field: &str, value: &str, why: &str| format!("{field} '{value}': {why}");
                deploy_image::image(&o.image).map_err(|why| field("image", &o.image, why))?;
                let port = match &o.container_port {
                    Some(p) => Some(
                        deploy_image::port(&p.text())
                            .map_err(|why| field("containerPort", &p.text(), why))?,
                    ),
                    None => None,
                };
                let command = match &o.container_command {
                    Some(c) => Some(
                        deploy_image::command(c)
                            .map_err(|why| field("containerCommand", c, why))?
                            .join(","),
                    ),
                    None => None,
                };
                let run_as_user = match &o.run_as_user {
                    Some(u) => Some(
                        deploy_image::run_as_user(&u.text())
                            .map_err(|why| field("runAsUser", &u.text(), why))?,
                    ),
                    None => None,
                };
                Ok(DeployImageOptions {
                    image: o.image.clone(),
                    container_command: command,
                    container_port: port,
                    run_as_user,
                })
            })();
            match checked {
                Ok(options) => {
                    self.deploy_images
                        .insert((r.group, r.version, r.kind), options);
                }
                Err(why) => self.leave_out(
                    format!("{name}: its deploy-image controller (a plain one is scaffolded)"),
                    format!("rbuilder refuses its option {why}"),
                    format!(
                        "fix the option and run `rbuilder create api --group {} --version {} \
                         --kind {} --image <image> --force` in the new project",
                        r.group, r.version, r.kind
                    ),
                ),
            }
        }
        Ok(())
    }

    /// Adds `r`'s entry to the project, or says why it is left out; returns its webhooks, to
    /// translate once every resource is known.
    fn resource(&mut self, r: KbResource) -> Option<PendingWebhooks> {
        let name = resource_name(&r);
        self.unknown_fields(&name, &r.unknown);
        if r.external {
            self.external(&r, &name);
            return None;
        }
        let entry = match &r.api {
            Some(api) if !r.core => self.custom(&r, api, &name)?,
            _ => self.builtin(&r, &name)?,
        };
        let at = self.project.resources.len();
        self.project.resources.push(entry);
        r.webhooks.map(|w| (at, name, w))
    }

    /// Another project's type: its Go module is of no use to Rust, and the kubebuilder project
    /// holds no CRD to generate Rust types from.
    fn external(&mut self, r: &KbResource, name: &str) {
        let api_group = if r.domain.is_empty() {
            r.group.clone()
        } else {
            format!("{}.{}", r.group, r.domain)
        };
        let module = r.module.as_deref().unwrap_or("its Go module");
        if has_controller(r) {
            let domain = if r.domain.is_empty() {
                String::new()
            } else {
                format!(" --external-api-domain {}", r.domain)
            };
            self.leave_out(
                format!("{name}: its controller"),
                format!(
                    "its types come from the Go module {module}; rbuilder generates Rust types \
                     from the CRD, which the kubebuilder project does not hold"
                ),
                format!(
                    "get the CRD of {api_group} {} (from the release of {module}) and run \
                     `rbuilder create api --group {}{domain} --version {} --kind {} \
                     --resource=false --external-api-path <the CRD file>`",
                    r.kind, r.group, r.version, r.kind
                ),
            );
        }
        if r.webhooks.is_some() {
            self.leave_out(
                format!("{name}: its webhooks"),
                "rbuilder scaffolds webhooks for the project's own kinds and Kubernetes' \
                 built-in types, not for other projects' kinds",
                "write the webhook yourself: a Defaulter or Validator of the runtime in \
                 src/webhook/, listed in src/webhook/mod.rs",
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
            .find(|e| e.kind == kind && e.group != group)
        {
            self.leave_out(
                name,
                format!(
                    "kind {kind} is carried over in group {} already, and rbuilder names a \
                     kind's controller, tests and roles after the kind alone, so a kind name \
                     lives in one group",
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

        let mut controller = self.controllers(r, &kind, name);
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
                    "write its logic in src/controller/{}.rs",
                    kind.module().file
                ),
            );
            controller = false;
        }
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
        Some(ResourceEntry {
            api: Some(ApiEntry {
                crd_version: "v1".into(),
                namespaced: api.namespaced,
            }),
            controller,
            domain: self.project.domain.to_string(),
            external: false,
            group,
            kind,
            path: None,
            plural: Some(plural),
            short_names: Vec::new(),
            version,
            webhooks: None,
        })
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
        let mut controller = self.controllers(r, &kind, name);
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
        ResourceEntry::of_builtin(&b, controller).ok()
    }

    /// Whether `r` gets its controller: the first of kubebuilder's named controllers becomes
    /// the kind's; the others, and a name other than the kind's, are left out.
    fn controllers(&mut self, r: &KbResource, kind: &Kind, name: &str) -> bool {
        let file = format!("src/controller/{}.rs", kind.module().file);
        let mut named = r.controllers.iter().map(|c| c.name.as_str());
        if let Some(first) = named.next()
            && first != kind.lower()
        {
            self.leave_out(
                format!("{name}: the name of its controller, {first}"),
                format!(
                    "rbuilder names a kind's controller after the kind ({})",
                    kind.lower()
                ),
                "nothing to run: the name shows in logs and metrics labels; change what \
                 selects on the old one",
            );
        }
        for other in named {
            self.leave_out(
                format!("{name}: its second controller, {other}"),
                "rbuilder scaffolds one controller per kind",
                format!(
                    "write its logic in {file}, or as a Reconciler of your own listed in \
                     src/controller/mod.rs"
                ),
            );
        }
        has_controller(r)
    }

    /// The webhooks `w` of the entry at `at`: defaulting and validating ones carried over at
    /// rbuilder's paths, a conversion with the spokes rbuilder can convert. False if none is.
    fn webhooks(&mut self, at: usize, name: &str, w: KbWebhooks) -> bool {
        self.unknown_fields(&format!("{name}'s webhooks"), &w.unknown);
        let entry = self.project.resources[at].clone();
        let b = entry.builtin();
        let mut webhooks = WebhooksEntry {
            defaulting: w.defaulting,
            validation: w.validation,
            webhook_version: "v1".into(),
            ..WebhooksEntry::default()
        };
        if let Some(b) = b
            && (w.defaulting || w.validation)
            && let Some(why) = self.builtin_webhook_refusal(&entry, &b)
        {
            self.leave_out(
                format!("{name}: its webhooks"),
                why,
                "write the webhook yourself: a Defaulter or Validator of the runtime in \
                 src/webhook/",
            );
            webhooks.defaulting = false;
            webhooks.validation = false;
        }
        for (path, mutating, wanted) in [
            (&w.defaulting_path, true, webhooks.defaulting),
            (&w.validation_path, false, webhooks.validation),
        ] {
            let Some(path) = path.as_deref().filter(|_| wanted) else {
                continue;
            };
            let api_group = entry.api_group();
            let plural = entry
                .plural
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            let ours = AdmissionWebhook {
                mutating,
                api_group: &api_group,
                version: entry.version.as_ref(),
                kind: entry.kind.as_ref(),
                plural: &plural,
                own: b.is_none(),
            }
            .path();
            self.leave_out(
                format!(
                    "{name}: the path {path} of its {} webhook",
                    if mutating { "defaulting" } else { "validating" }
                ),
                format!("rbuilder serves the webhook at kubebuilder's default path, {ours}"),
                "nothing to run: `make manifests` points the webhook configuration at the new \
                 path; change any other client of the old one",
            );
        }
        if w.conversion {
            match self.conversion(&entry, &w.spoke) {
                Ok(spokes) => {
                    webhooks.conversion = true;
                    webhooks.spoke = spokes;
                }
                Err(why) => self.leave_out(
                    format!("{name}: its conversion webhook"),
                    why,
                    "convert the versions yourself: `From` implementations between the types, \
                     registered as a conversion in src/webhook/ (docs/commands.md, create \
                     webhook --conversion)",
                ),
            }
        }
        let any = webhooks.defaulting || webhooks.validation || webhooks.conversion;
        if any {
            self.project.resources[at].webhooks = Some(webhooks);
        }
        any
    }

    /// Why rbuilder refuses webhooks for built-in type `b` in this project, if it does.
    fn builtin_webhook_refusal(&self, entry: &ResourceEntry, b: &Builtin) -> Option<String> {
        if let Some(own) = self
            .project
            .custom_resources()
            .find(|e| e.kind == entry.kind && e.version == entry.version)
        {
            return Some(format!(
                "its webhooks would be in the file of this project's own {}/{} {}",
                own.group, own.version, own.kind
            ));
        }
        (self.project.namespaced && !b.namespaced).then(|| {
            format!(
                "{} is cluster-scoped, and a webhook of an operator scoped to one namespace \
                 would see it in every namespace",
                b.kind
            )
        })
    }

    /// The spokes of a conversion through `hub` that rbuilder converts, or why it converts none.
    fn conversion(
        &mut self,
        hub: &ResourceEntry,
        spokes: &[String],
    ) -> Result<Vec<Version>, String> {
        if hub.api.is_none() {
            return Err("the API server converts Kubernetes' own types itself".into());
        }
        let versions: Vec<ResourceEntry> = self
            .project
            .versions_of(&hub.group, &hub.kind)
            .cloned()
            .collect();
        if let Some(other) = versions
            .iter()
            .find(|e| e.version != hub.version && e.webhooks.as_ref().is_some_and(|w| w.conversion))
        {
            return Err(format!(
                "{} converts through version {} already, and a kind has one hub",
                hub.kind, other.version
            ));
        }
        let mut kept = Vec::new();
        for spoke in spokes {
            match versions
                .iter()
                .find(|e| e.version.as_ref() == spoke.as_str())
            {
                Some(e) if e.version != hub.version => {
                    if !kept.contains(&e.version) {
                        kept.push(e.version.clone());
                    }
                }
                _ => self.leave_out(
                    format!(
                        "{}/{} {}: its conversion to {spoke}",
                        hub.group, hub.version, hub.kind
                    ),
                    format!(
                        "{} has no other version {spoke} in the new project",
                        hub.kind
                    ),
                    "nothing: add the version, then `rbuilder create webhook --conversion \
                     --spoke` for it",
                ),
            }
        }
        if kept.is_empty() {
            return Err(format!("{} has no spoke version to convert", hub.kind));
        }
        // rbuilder converts versions made differently (one with --image, one without) by
        // field names, which the version stored, the kind's first, must have all of.
        let deploy_image = |v: &Version| {
            let entry = versions.iter().find(|e| e.version == *v);
            entry.is_some_and(|e| self.project.deploy_image(e).is_some())
        };
        let differs = kept
            .iter()
            .any(|spoke| deploy_image(spoke) != deploy_image(&hub.version));
        let stored = versions.first().map_or(&hub.version, |e| &e.version);
        if differs && !deploy_image(stored) {
            return Err(format!(
                "its versions were made differently (deploy-image and not), and rbuilder \
                 converts those by field names only when the version stored ({stored}, the \
                 first) is the deploy-image one"
            ));
        }
        Ok(kept)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A kubebuilder PROJECT of `resources` (YAML list items), `extra` added at the top.
    fn translated(extra: &str, resources: &str) -> (Project, Vec<String>) {
        let text = format!(
            "domain: example.com\nlayout:\n- go.kubebuilder.io/v4\nprojectName: op\n{extra}\
             resources:\n{resources}version: \"3\"\n"
        );
        let kb: KbProject = serde_saphyr::from_str(&text).expect("valid YAML");
        let (project, left_out) = translate(kb, "op").expect("translated");
        (project, left_out.into_iter().map(|l| l.what).collect())
    }

    fn custom(kind: &str, version: &str, more: &str) -> String {
        format!(
            "- api:\n    crdVersion: v1\n    namespaced: true\n  domain: example.com\n  group: \
             web\n  kind: {kind}\n  version: {version}\n{more}"
        )
    }

    #[test]
    fn options_rbuilder_refuses_leave_a_plain_controller() {
        let plugin = "plugins:\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    \
                      - group: web\n      kind: Cache\n      version: v1\n      options:\n        \
                      image: memcached:1.6\n        runAsUser: \"0\"\n";
        let (project, left_out) =
            translated(plugin, &custom("Cache", "v1", "  controller: true\n"));
        assert_eq!(
            left_out,
            ["web/v1 Cache: its deploy-image controller (a plain one is scaffolded)"]
        );
        assert!(project.plugins.deploy_image.is_none());
        assert!(project.resources[0].controller);
    }

    #[test]
    fn a_kind_has_one_controller_and_one_name() {
        let resources = [
            custom(
                "Site",
                "v1",
                "  controllers:\n  - name: site-main\n  - name: site-backup\n",
            ),
            custom("Site", "v2", "  controller: true\n"),
        ]
        .concat();
        let (project, left_out) = translated("", &resources);
        assert_eq!(
            left_out,
            [
                "web/v1 Site: the name of its controller, site-main",
                "web/v1 Site: its second controller, site-backup",
                "web/v2 Site: its controller",
            ]
        );
        let controllers: Vec<bool> = project.resources.iter().map(|e| e.controller).collect();
        assert_eq!(controllers, [true, false]);
    }

    #[test]
    fn a_conversion_keeps_the_spokes_the_project_has() {
        let hub = "  webhooks:\n    conversion: true\n    spoke:\n    - v2\n    - v3\n    \
                   webhookVersion: v1\n";
        let resources = [custom("Site", "v1", hub), custom("Site", "v2", "")].concat();
        let (project, left_out) = translated("", &resources);
        assert_eq!(left_out, ["web/v1 Site: its conversion to v3"]);
        let webhooks = project.resources[0].webhooks.clone().expect("webhooks");
        assert!(webhooks.conversion);
        assert_eq!(webhooks.spoke, [Version::parse("v2").unwrap()]);

        let (project, left_out) = translated("", &custom("Site", "v1", hub));
        assert_eq!(
            left_out,
            [
                "web/v1 Site: its conversion to v2",
                "web/v1 Site: its conversion to v3",
                "web/v1 Site: its conversion webhook",
            ]
        );
        assert!(project.resources[0].webhooks.is_none());
    }

    #[test]
    fn a_namespaced_operator_leaves_cluster_scoped_kinds_and_unknown_types_out() {
        let cluster = "- api:\n    crdVersion: v1\n  controller: true\n  domain: example.com\n  \
                       group: web\n  kind: Zone\n  version: v1\n";
        let unknown = "- core: true\n  group: batch\n  kind: Widget\n  version: v1\n  \
                       controller: true\n";
        let node = "- core: true\n  group: core\n  kind: Node\n  version: v1\n  webhooks:\n    \
                    defaulting: true\n    webhookVersion: v1\n";
        let (project, left_out) = translated(
            "namespaced: true\nsurprise: 1\n",
            &[cluster, unknown, node].concat(),
        );
        assert_eq!(
            left_out,
            [
                "the project: field surprise (1)",
                "web/v1 Zone",
                "batch/v1 Widget",
                "core/v1 Node: its webhooks",
            ]
        );
        assert!(project.resources.is_empty(), "{:?}", project.resources);
    }
}
