//! `rbuilder create webhook`: defaulting, validating and conversion webhooks for one of the
//! project's kinds. The same steps as `create api`: the arguments are checked against PROJECT
//! (the kind and its versions must exist, the webhooks must not), then the kind's webhook files
//! are planned, registered at the markers of `src/webhook/`, and recorded in PROJECT.

use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;

use super::finish;
use crate::cli::CreateWebhookArgs;
use crate::manifests::{AdmissionWebhook, crd_with_conversion, webhook_configurations};
use crate::model::{CustomSpec, DeployImage, Flavor, Group, Kind, Plural, Resource, Version};
use crate::project::{self, Project, ResourceEntry, WebhooksEntry};
use crate::scaffold::{Plan, Templates, markers, project_context};

/// The template folders `create webhook` renders from.
const TEMPLATES: &[&str] = &["webhook/", "inserts/"];

/// What `make manifests` writes for the admission webhooks.
const WEBHOOK_MANIFESTS: &str = "config/webhook/manifests.yaml";

/// Where config/crd says how kustomize renames the Service of converting CRDs.
const CRD_KUSTOMIZECONFIG: &str = "config/crd/kustomizeconfig.yaml";

/// The webhooks module, which lists every registration.
const WEBHOOK_MOD: &str = "src/webhook/mod.rs";

pub fn run(root: &Path, args: CreateWebhookArgs) -> Result<()> {
    let (plan, next) = plan(root, &args)?;
    finish(plan, args.dry_run, &next)
}

/// What the command is asked to add.
struct Request {
    group: Group,
    version: Version,
    kind: Kind,
    defaulting: bool,
    validation: bool,
    spokes: Vec<Version>,
}

/// A spoke of a conversion, for the templates.
#[derive(Serialize)]
struct SpokeContext {
    version: Version,
    api_module_path: String,
}

/// What `create webhook` with `args` writes in the project at `root`, and what to do next.
pub(super) fn plan(root: &Path, args: &CreateWebhookArgs) -> Result<(Plan, String)> {
    let mut project = Project::load(root)?;
    let request = resolve(&project, args)?;
    let Some(entry) = project
        .find(&request.group, &request.version, &request.kind)
        .cloned()
    else {
        bail!("internal error: the resource vanished")
    };
    let existing = entry.webhooks.clone().unwrap_or_default();
    check_conflicts(&project, &entry, &existing, &request, args.force)?;

    let resource = resource_of(&project, &entry)?;
    if !request.spokes.is_empty() {
        check_same_fields(&project, &entry, &request.spokes)?;
    }
    // The kind's admission webhooks share one file: with --force it is rewritten with those it
    // had and those asked for.
    let defaulting = request.defaulting || (existing.defaulting && args.force);
    let validation = request.validation || (existing.validation && args.force);
    let admission = request.defaulting || request.validation;
    let conversion = !request.spokes.is_empty();

    let templates = Templates::load(TEMPLATES)?;
    let mut ctx = project_context(root, &project);
    ctx.insert("resource", &resource);
    ctx.insert("defaulting", &defaulting);
    ctx.insert("validation", &validation);
    let spokes: Vec<SpokeContext> = request
        .spokes
        .iter()
        .map(|v| SpokeContext {
            version: v.clone(),
            api_module_path: resource
                .api_module_path
                .replace(&format!("::{}", resource.version), &format!("::{v}")),
        })
        .collect();
    ctx.insert("spokes", &spokes);

    let version_dir = format!("src/webhook/{}", resource.version);
    let version_mod = format!("{version_dir}/mod.rs");
    let kind_file = format!("{version_dir}/{}.rs", resource.module.file);
    let conversion_file = format!("{version_dir}/{}_conversion.rs", resource.module.file);

    let mut plan = Plan::new(root);
    if !plan.exists(WEBHOOK_MOD) {
        bail!(
            "{WEBHOOK_MOD} does not exist: this project was made by an rbuilder without \
             webhooks; run `rbuilder update`, copy {WEBHOOK_MOD} from a project made by \
             `rbuilder init`, add `pub mod webhook;` and `webhooks: webhook::WEBHOOKS,` to \
             src/lib.rs, then create the webhook again"
        );
    }
    if !plan.exists(&version_mod) {
        plan.create(
            version_mod.clone(),
            templates.render("webhook/version_mod.rs", &ctx)?,
        )?;
    }
    insert(
        &mut plan,
        &templates,
        &ctx,
        WEBHOOK_MOD,
        "webhook-modules",
        "inserts/webhook_mod_version.rs",
    )?;
    let mut registrations = Vec::new();
    let module = format!("{}::{}", resource.version, resource.module.ident);
    if admission {
        write(
            &mut plan,
            &kind_file,
            templates.render("webhook/kind.rs", &ctx)?,
            args.force,
        )?;
        insert(
            &mut plan,
            &templates,
            &ctx,
            &version_mod,
            "kind-modules",
            "inserts/webhook_version_mod_kind.rs",
        )?;
        if defaulting {
            registrations.push(format!("{module}::DEFAULTING"));
        }
        if validation {
            registrations.push(format!("{module}::VALIDATING"));
        }
    }
    if conversion {
        let text = templates.render("webhook/conversion.rs", &ctx)?;
        write(&mut plan, &conversion_file, text, args.force)?;
        insert(
            &mut plan,
            &templates,
            &ctx,
            &version_mod,
            "kind-modules",
            "inserts/webhook_version_mod_conversion.rs",
        )?;
        registrations.push(format!(
            "{}::{}_conversion::CONVERSION",
            resource.version, resource.module.file
        ));
    }
    // The kind's registrations, those listed already and the new ones, in one order
    // (defaulting, validating, conversion) whatever order they were created in, so that a
    // project replayed from PROJECT by `alpha generate` lists them as the original does.
    let conversion_line = format!(
        "{}::{}_conversion::CONVERSION",
        resource.version, resource.module.file
    );
    let order = [
        format!("{module}::DEFAULTING"),
        format!("{module}::VALIDATING"),
        conversion_line,
    ];
    plan.update(WEBHOOK_MOD.to_owned(), |content| {
        let listed = |name: &str| content.lines().any(|l| l.trim() == format!("{name},"));
        let all: Vec<String> = order
            .iter()
            .filter(|name| registrations.contains(name) || listed(name))
            .cloned()
            .collect();
        let kept: String = content
            .lines()
            .filter(|l| !all.iter().any(|name| l.trim() == format!("{name},")))
            .map(|l| format!("{l}\n"))
            .collect();
        let lines: Vec<String> = all.iter().map(|name| format!("{name},")).collect();
        markers::insert(&kept, WEBHOOK_MOD, "webhooks", &lines)
    })?;

    record(&mut project, &request, args.force);
    plan.update(project::FILE, |_| project.to_yaml())?;
    plan_manifests(&mut plan, &project, &resource, conversion)?;
    plan_kustomize(&mut plan, &templates, &mut ctx, &project)?;
    if conversion && !plan.exists(CRD_KUSTOMIZECONFIG) {
        let text = templates.render("webhook/config/crd_kustomizeconfig.yaml", &ctx)?;
        plan.create(CRD_KUSTOMIZECONFIG.to_owned(), text)?;
        plan.update("config/crd/kustomization.yaml".to_owned(), |text| {
            Ok(format!("{text}\nconfigurations:\n- kustomizeconfig.yaml\n"))
        })?;
    }

    let mut next = String::new();
    let overwritten = plan.overwritten().join(", ");
    if !overwritten.is_empty() {
        next.push_str(&format!("--force rewrote: {overwritten}\n"));
    }
    let files: Vec<&str> = [(admission, &kind_file), (conversion, &conversion_file)]
        .into_iter()
        .filter(|(wanted, _)| *wanted)
        .map(|(_, file)| file.as_str())
        .collect();
    next.push_str(&format!(
        "Added webhooks for {}. Next:\n  \
         write their logic in {}\n  \
         make manifests   # the webhook configurations\n  \
         make test\n  \
         ENABLE_WEBHOOKS=false make run   # an API server cannot reach a manager run locally",
        resource.gvk(),
        files.join(" and "),
    ));
    Ok((plan, next))
}

/// The webhook configurations, and the conversion of the kind's CRD, as `make manifests` writes
/// them from the code.
fn plan_manifests(
    plan: &mut Plan,
    project: &Project,
    r: &Resource,
    conversion: bool,
) -> Result<()> {
    let entries: Vec<(&ResourceEntry, &WebhooksEntry, String, String)> = project
        .custom_resources()
        .filter_map(|e| e.webhooks.as_ref().map(|w| (e, w)))
        .map(|(e, w)| {
            let plural = e.plural.as_ref().map_or_else(
                || Plural::of(&e.kind).map(|p| p.to_string()),
                |p| Ok(p.to_string()),
            );
            plural.map(|plural| (e, w, format!("{}.{}", e.group, project.domain), plural))
        })
        .collect::<Result<_>>()?;
    let mut webhooks = Vec::new();
    for (entry, w, api_group, plural) in &entries {
        for (wanted, mutating) in [(w.defaulting, true), (w.validation, false)] {
            if wanted {
                webhooks.push(AdmissionWebhook {
                    mutating,
                    api_group,
                    version: entry.version.as_ref(),
                    kind: entry.kind.as_ref(),
                    plural,
                });
            }
        }
    }
    if let Some(yaml) = webhook_configurations(&webhooks)? {
        if plan.exists(WEBHOOK_MANIFESTS) {
            plan.update(WEBHOOK_MANIFESTS.to_owned(), |_| Ok(yaml))?;
        } else {
            plan.create(WEBHOOK_MANIFESTS.to_owned(), yaml)?;
        }
    }
    if conversion {
        let file = r.crd_file();
        plan.update(file.clone(), |crd| crd_with_conversion(crd, &file))?;
    }
    Ok(())
}

/// The kustomize files that deploy the webhooks, written once, and enabled in
/// config/default as kubebuilder's `create webhook` does: it uncomments the [WEBHOOK] sections.
fn plan_kustomize(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &mut tera::Context,
    project: &Project,
) -> Result<()> {
    for (template, path) in [
        ("kustomization.yaml", "config/webhook/kustomization.yaml"),
        (
            "kustomizeconfig.yaml",
            "config/webhook/kustomizeconfig.yaml",
        ),
        ("service.yaml", "config/webhook/service.yaml"),
        (
            "certificate-webhook.yaml",
            "config/certmanager/certificate-webhook.yaml",
        ),
        (
            "manager_webhook_patch.yaml",
            "config/default/manager_webhook_patch.yaml",
        ),
        (
            "allow-webhook-traffic.yaml",
            "config/network-policy/allow-webhook-traffic.yaml",
        ),
    ] {
        if !plan.exists(path) {
            let text = templates.render(&format!("webhook/config/{template}"), ctx)?;
            plan.create(path.to_owned(), text)?;
        }
    }
    // What the CA is injected into.
    let webhooks: Vec<&WebhooksEntry> = project
        .custom_resources()
        .filter_map(|e| e.webhooks.as_ref())
        .collect();
    let mut configurations = Vec::new();
    if webhooks.iter().any(|w| w.defaulting) {
        configurations.push("MutatingWebhookConfiguration");
    }
    if webhooks.iter().any(|w| w.validation) {
        configurations.push("ValidatingWebhookConfiguration");
    }
    let mut crds = Vec::new();
    for e in project.custom_resources() {
        if e.webhooks.as_ref().is_some_and(|w| w.conversion) {
            let plural = match &e.plural {
                Some(p) => p.clone(),
                None => Plural::of(&e.kind)?,
            };
            crds.push(format!("{plural}.{}.{}", e.group, project.domain));
        }
    }
    ctx.insert("configurations", &configurations);
    ctx.insert("crds", &crds);
    let replacements = templates.render("webhook/config/webhook_replacements.yaml", ctx)?;
    let path = "config/default/webhook_replacements.yaml";
    if plan.exists(path) {
        plan.update(path.to_owned(), |_| Ok(replacements))?;
    } else {
        plan.create(path.to_owned(), replacements)?;
    }

    plan.update("config/default/kustomization.yaml".to_owned(), |text| {
        let mut text = text.to_owned();
        for block in [
            "#- ../certmanager\n",
            "#- ../webhook\n",
            "#patches:\n",
            "#- path: manager_webhook_patch.yaml\n#  target:\n#    kind: Deployment\n#    name: controller-manager\n",
            "#replacements:\n#- path: webhook_replacements.yaml\n",
        ] {
            let enabled = block.replace("\n#", "\n").trim_start_matches('#').to_owned();
            text = text.replacen(block, &enabled, 1);
        }
        Ok(text)
    })?;
    for (file, after, line) in [
        (
            "config/certmanager/kustomization.yaml",
            "- certificate-metrics.yaml\n",
            "- certificate-webhook.yaml\n",
        ),
        (
            "config/network-policy/kustomization.yaml",
            "- allow-metrics-traffic.yaml\n",
            "- allow-webhook-traffic.yaml\n",
        ),
    ] {
        plan.update(file.to_owned(), |text| {
            if text.contains(line) {
                return Ok(text.to_owned());
            }
            match text.find(after) {
                Some(at) => {
                    let at = at + after.len();
                    Ok(format!("{}{line}{}", &text[..at], &text[at..]))
                }
                None => Ok(format!("{text}{line}")),
            }
        })?;
    }
    Ok(())
}

/// Creates `path`, or rewrites it with `force`.
fn write(plan: &mut Plan, path: &str, text: String, force: bool) -> Result<()> {
    if force && plan.exists(path) {
        plan.overwrite(path.to_owned(), text)
    } else {
        plan.create(path.to_owned(), text)
    }
}

/// Inserts `template` before `marker` in `file`.
fn insert(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &tera::Context,
    file: &str,
    marker: &'static str,
    template: &str,
) -> Result<()> {
    let text = templates.render(template, ctx)?;
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    plan.update(file.to_owned(), |content| {
        markers::insert(content, file, marker, &lines)
    })
}

/// Checks the arguments, and that the kind (and its spokes) are the project's.
fn resolve(project: &Project, args: &CreateWebhookArgs) -> Result<Request> {
    let version = Version::parse(&args.version)?;
    let kind = Kind::parse(&args.kind)?;
    let group = Group::parse(&args.group)?;
    if !args.spokes.is_empty() && !args.conversion {
        bail!("--spoke only applies with --conversion: add --conversion or drop --spoke");
    }
    if !(args.defaulting || args.programmatic_validation || args.conversion) {
        bail!(
            "no webhook chosen: give --defaulting, --programmatic-validation, or --conversion \
             with --spoke <version>"
        );
    }
    let gvk = format!("{group}/{version} {kind}");
    let full_group = group.to_string();
    if let Some(entry) = project.resources.iter().find(|e| {
        e.external
            && e.kind == kind
            && (e.group == group || format!("{}.{}", e.group, e.domain) == full_group)
    }) {
        bail!(
            "{gvk} is another project's custom resource (its types come from {}): its webhooks \
             are that project's to serve; rbuilder scaffolds webhooks for this project's own \
             kinds",
            entry.path.as_deref().unwrap_or("its CRD")
        );
    }
    if project
        .find(&group, &version, &kind)
        .is_some_and(ResourceEntry::is_builtin)
    {
        bail!(
            "{gvk} is a Kubernetes built-in type: rbuilder scaffolds webhooks for the project's \
             own kinds only, for now"
        );
    }
    let versions: Vec<String> = project
        .versions_of(&group, &kind)
        .map(|e| e.version.to_string())
        .collect();
    if !versions.contains(&version.to_string()) {
        let known: Vec<String> = project
            .custom_resources()
            .map(|e| format!("{}/{} {}", e.group, e.version, e.kind))
            .collect();
        bail!(
            "{gvk} is not a resource of this project (it has: {}); create it first with \
             `rbuilder create api --group {group} --version {version} --kind {kind}`",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        );
    }
    let mut spokes = Vec::new();
    if args.conversion {
        if versions.len() < 2 {
            bail!(
                "--conversion converts between versions, and {kind} has one ({version}); add \
                 another with `rbuilder create api --group {group} --version <v2> --kind {kind}` first"
            );
        }
        if args.spokes.is_empty() {
            let hub = version.to_string();
            let others: Vec<&str> = versions
                .iter()
                .map(String::as_str)
                .filter(|v| *v != hub)
                .collect();
            bail!(
                "--conversion needs the versions that convert to and from {version} (the hub): \
                 add --spoke with one or more of {}",
                others.join(", ")
            );
        }
        for spoke in &args.spokes {
            let spoke = Version::parse(spoke)?;
            if spoke == version {
                bail!("--spoke {spoke} is the hub (--version) itself; name the other versions");
            }
            if !versions.contains(&spoke.to_string()) {
                bail!(
                    "--spoke {spoke}: {kind} has no version {spoke} (it has {})",
                    versions.join(", ")
                );
            }
            if spokes.contains(&spoke) {
                bail!("--spoke {spoke} is given twice; give each version once");
            }
            spokes.push(spoke);
        }
    }
    Ok(Request {
        group,
        version,
        kind,
        defaulting: args.defaulting,
        validation: args.programmatic_validation,
        spokes,
    })
}

/// Refuses webhooks that exist (without --force), and a second hub for a kind.
fn check_conflicts(
    project: &Project,
    entry: &ResourceEntry,
    existing: &WebhooksEntry,
    request: &Request,
    force: bool,
) -> Result<()> {
    let gvk = format!("{}/{} {}", entry.group, entry.version, entry.kind);
    let taken: Vec<&str> = [
        (request.defaulting && existing.defaulting, "defaulting"),
        (request.validation && existing.validation, "validation"),
        (
            !request.spokes.is_empty() && existing.conversion,
            "conversion",
        ),
    ]
    .into_iter()
    .filter(|(taken, _)| *taken)
    .map(|(_, name)| name)
    .collect();
    if !taken.is_empty() && !force {
        bail!(
            "{gvk} already has a {} webhook; use --force to scaffold its file again",
            taken.join(" and ")
        );
    }
    // Defaulting and validation share a file: adding one to the other rewrites it.
    let admission_exists = existing.defaulting || existing.validation;
    if (request.defaulting || request.validation) && admission_exists && !force {
        bail!(
            "{gvk} already has webhooks in src/webhook/{}/: use --force to scaffold the file \
             again with both",
            entry.version
        );
    }
    if !request.spokes.is_empty()
        && let Some(hub) = project.versions_of(&entry.group, &entry.kind).find(|e| {
            e.version != entry.version && e.webhooks.as_ref().is_some_and(|w| w.conversion)
        })
    {
        bail!(
            "{} already converts through version {} (its hub); a kind has one hub: add --spoke \
             versions to that one with --version {} --force",
            entry.kind,
            hub.version,
            hub.version
        );
    }
    Ok(())
}

/// The scaffolded conversion copies fields, so every version must have the hub's fields.
fn check_same_fields(project: &Project, hub: &ResourceEntry, spokes: &[Version]) -> Result<()> {
    let deploy_image = |e: &ResourceEntry| project.deploy_image(e).is_some();
    for spoke in project
        .versions_of(&hub.group, &hub.kind)
        .filter(|e| spokes.contains(&e.version))
    {
        if deploy_image(spoke) != deploy_image(hub) {
            bail!(
                "{} {} and {} were scaffolded with different fields (one with --image), so \
                 rbuilder cannot write their conversion; make their types alike, or write the \
                 `From` conversions yourself",
                hub.kind,
                hub.version,
                spoke.version
            );
        }
    }
    Ok(())
}

/// The resource of `entry`, for the templates.
fn resource_of(project: &Project, entry: &ResourceEntry) -> Result<Resource> {
    let flavor = match project.deploy_image(entry) {
        Some(d) => Flavor::DeployImage(DeployImage {
            image: d.options.image.clone(),
            updated_image: d.options.image.clone(),
            port: d.options.container_port,
            command: Vec::new(),
            run_as_user: d.options.run_as_user,
        }),
        None => Flavor::Plain,
    };
    let plural = match &entry.plural {
        Some(p) => p.clone(),
        None => Plural::of(&entry.kind)?,
    };
    let spec = CustomSpec {
        group: entry.group.clone(),
        version: entry.version.clone(),
        kind: entry.kind.clone(),
        plural,
        namespaced: entry.namespaced(),
        short_names: entry.short_names.clone(),
        controller: entry.controller,
        flavor,
    };
    Resource::custom(spec, &project.domain, project.multigroup)
}

/// Records the webhooks in the resource's PROJECT entry, as kubebuilder does.
fn record(project: &mut Project, request: &Request, force: bool) {
    let Some(entry) = project
        .resources
        .iter_mut()
        .find(|e| e.is(&request.group, &request.version, &request.kind))
    else {
        return;
    };
    let webhooks = entry.webhooks.get_or_insert_with(|| WebhooksEntry {
        webhook_version: "v1".into(),
        ..WebhooksEntry::default()
    });
    webhooks.defaulting |= request.defaulting;
    webhooks.validation |= request.validation;
    if !request.spokes.is_empty() {
        webhooks.conversion = true;
        if force {
            webhooks.spoke.clear();
        }
        for spoke in &request.spokes {
            if !webhooks.spoke.contains(spoke) {
                webhooks.spoke.push(spoke.clone());
            }
        }
    }
}
