//! A kubebuilder project's PROJECT, read as kubebuilder writes it, becomes the PROJECT of a Rust
//! project that rbuilder then replays like its own: the same kinds, versions, controllers,
//! webhooks, conversion spokes and plugins, as far as rbuilder has them. Everything else is
//! listed as left out, with what to do instead; nothing is dropped silently.
//!
//! The rules rbuilder's commands enforce (one controller per kind, a kind name in one group
//! unless the project is multigroup, a namespaced operator's kinds namespaced, ...) are checked
//! here, so that what breaks one of them is left out and named instead of failing the whole
//! migration.

mod apis;
mod external;
mod resources;
#[cfg(test)]
mod tests;
mod webhooks;

pub use external::ExternalCrds;

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};

use super::format::{KbDeployImage, KbProject, KbWebhooks, Unknown};
use super::go_files::GoFiles;
use super::left_out::LeftOut;
use crate::model::{Domain, ProjectName, deploy_image};
use crate::project::{DeployImageOptions, EmptyPlugin, Project};

/// The layout of kubebuilder's Go projects that rbuilder migrates.
pub const GO_V4: &str = "go.kubebuilder.io/v4";
/// A plugin of the go/v4 bundle: its kustomize files, which rbuilder writes too.
const KUSTOMIZE_V2: &str = "kustomize.common.kubebuilder.io/v2";

const DEPLOY_IMAGE: &str = "deploy-image.go.kubebuilder.io/v1-alpha";
const GRAFANA: &str = "grafana.kubebuilder.io/v1-alpha";
const HELM_V1: &str = "helm.kubebuilder.io/v1-alpha";
const HELM: &str = "helm.kubebuilder.io/v2-alpha";
const AUTOUPDATE: &str = "autoupdate.kubebuilder.io/v1-alpha";

/// A kubebuilder resource's group, version and kind, as kubebuilder spells them.
type Gvk = (String, String, String);

/// Files for the Rust project: (path in it, text).
pub type Files = Vec<(String, String)>;

/// The Rust project's PROJECT for `kb` (its folder named `folder`), what it leaves out, and the
/// files it keeps: of `crds`, and of `go` (the Go project's CRDs and samples of its own kinds;
/// `None`: the kinds' APIs are not looked for, rbuilder's placeholders are scaffolded).
pub fn translate(
    kb: KbProject,
    folder: &str,
    crds: ExternalCrds,
    go: Option<GoFiles>,
) -> Result<(Project, Vec<LeftOut>, Files)> {
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
        crds,
        go,
        files: Vec::new(),
    };
    let unreadable =
        t.go.as_ref()
            .map(|go| go.unreadable.clone())
            .unwrap_or_default();
    for (file, why) in unreadable {
        t.leave_out(
            format!("{}/{file}", GoFiles::bases()),
            format!("it is not YAML ({why})"),
            "fix it (`make manifests` writes it) and migrate again",
        );
    }
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
    t.second_controller_clashes();
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
    let mut files = t.crds.used()?;
    if let Some(go) = &t.go {
        files.extend(go.used());
    }
    files.append(&mut t.files);
    Ok((t.project, t.left_out, files))
}

/// The translation under way.
struct Translation {
    project: Project,
    left_out: Vec<LeftOut>,
    /// The deploy-image options of each resource, until the resource takes them.
    deploy_images: BTreeMap<Gvk, DeployImageOptions>,
    /// The CRD files of other projects' kinds, given to `alpha generate`.
    crds: ExternalCrds,
    /// The Go project's CRDs, samples and manager environment, for its kinds' APIs.
    go: Option<GoFiles>,
    /// The Go project's files the Rust project keeps besides CRDs: its kinds' samples.
    files: Files,
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
                HELM => {
                    // The replay writes the chart's own files; `make helm` its templates.
                    self.project.plugins.helm = Some(EmptyPlugin {});
                    let output = config.get("output").and_then(|o| o.as_str());
                    if let Some(output) = output.filter(|o| o.trim_end_matches('/') != "dist") {
                        self.leave_out(
                            format!("plugin {HELM}: output {output}"),
                            "rbuilder's chart is always in dist/chart",
                            "move dist/chart where you want it after `make helm`",
                        );
                    }
                }
                HELM_V1 => self.leave_out(
                    format!("plugin {HELM_V1}"),
                    "kubebuilder deprecated it for helm/v2-alpha, whose chart rbuilder writes",
                    "`rbuilder edit --plugins helm/v2-alpha`, then `make helm`",
                ),
                // rbuilder's workflow runs `rbuilder update` where kubebuilder's runs
                // `kubebuilder alpha update`.
                AUTOUPDATE => self.project.plugins.autoupdate = Some(EmptyPlugin {}),
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
}
