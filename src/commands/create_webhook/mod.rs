//! `rbuilder create webhook`: defaulting, validating and conversion webhooks for one of the
//! project's kinds, and defaulting and validating ones for a Kubernetes built-in type. The same
//! steps as `create api`: the arguments are checked against PROJECT
//! (the kind and its versions must exist, the webhooks must not), then the kind's webhook files
//! are planned, registered at the markers of `src/webhook/`, and recorded in PROJECT.
//!
//! `resolve` checks the request, `config` plans the webhook configurations and kustomize
//! files, `record` writes PROJECT's `webhooks:`.

mod config;
mod record;
mod resolve;

pub(super) use self::config::{REPLACEMENTS, plan_replacements, plan_webhook_configurations};
pub(super) use self::resolve::MANAGER_NEEDS;

use std::path::Path;

use anyhow::{Result, bail};

use self::config::{plan_kustomize, plan_manifests};
use self::record::{add_builtin_entry, record};
use self::resolve::{
    check_conflicts, check_external, check_storage_has_the_fields, resolve, same_fields,
};
use super::group_dirs::{INTEGRATION_TESTS, WEBHOOKS};
use super::{create_api, finish};
use crate::cli::CreateWebhookArgs;
use crate::external::External;
// What `make manifests` writes for the admission webhooks: the runtime's constant.
use crate::manifests::admission::WEBHOOK_MANIFESTS;
use crate::model::builtin::Builtin;
use crate::model::{Flavor, Group, Kind, Resource, Version};
use crate::project::{self, Project, ResourceEntry, WebhooksEntry};
use crate::scaffold::{
    Additions, Entry, IfExists, Order, Plan, Templates, markers, paths, project_context,
};

/// The template folders `create webhook` renders from.
const TEMPLATES: &[&str] = &["webhook/", "inserts/", "integration/", "layout/"];

/// Where config/crd says how kustomize renames the Service of converting CRDs.
const CRD_KUSTOMIZECONFIG: &str = "config/crd/kustomizeconfig.yaml";

/// The webhooks module, which lists every registration.
const WEBHOOK_MOD: &str = "src/webhook/mod.rs";

pub fn run(root: &Path, args: CreateWebhookArgs) -> Result<()> {
    let project = Project::load(root)?;
    let request = resolve(root, &project, &args)?;
    let (plan, next) = plan(root, project, request, args.force)?;
    finish(plan, args.dry_run, &next)
}

/// What the command is asked to add, checked and typed: from the command line (`resolve`), or
/// from a PROJECT being replayed ([`Request::replaying`]).
pub(super) struct Request {
    group: Group,
    version: Version,
    kind: Kind,
    defaulting: bool,
    validation: bool,
    spokes: Vec<Version>,
    /// The paths given to --defaulting-path and --validation-path, checked.
    defaulting_path: Option<String>,
    validation_path: Option<String>,
    /// The Kubernetes type the webhooks are for, if not one of the project's own.
    builtin: Option<Builtin>,
    /// Another project's custom resource whose types `--external-api-path` imports with the
    /// webhooks (as `create api --resource=false --controller=false` would).
    import: Option<create_api::Request>,
    /// An external resource's CRD, as its types were made from it: its scope and name.
    crd: Option<External>,
}

impl Request {
    /// The webhooks PROJECT records for `entry`, to add them again; an external resource's CRD
    /// is read from its path, relative to the folder `input`.
    pub(super) fn replaying(
        input: &Path,
        entry: &ResourceEntry,
        webhooks: &WebhooksEntry,
    ) -> Result<Self> {
        let crd = if entry.external {
            Some(create_api::external_types(input, entry)?)
        } else {
            None
        };
        Ok(Self {
            group: entry.group.clone(),
            version: entry.version.clone(),
            kind: entry.kind.clone(),
            defaulting: webhooks.defaulting,
            validation: webhooks.validation,
            spokes: if webhooks.conversion {
                webhooks.spoke.clone()
            } else {
                Vec::new()
            },
            defaulting_path: webhooks.defaulting_path.clone(),
            validation_path: webhooks.validation_path.clone(),
            builtin: entry.builtin(),
            // Replayed by `create api`, which a replay runs first.
            import: None,
            crd,
        })
    }
}

/// What adding the webhooks of `request` to `project` (the project at `root`) writes, and what
/// to do next; `force` rewrites the kind's webhook files.
pub(super) fn plan(
    root: &Path,
    project: Project,
    mut request: Request,
    force: bool,
) -> Result<(Plan, String)> {
    // An external resource's types first, in the same plan: all is written, or nothing.
    let mut next = String::new();
    let (mut plan, mut project) = match request.import.take() {
        Some(import) => {
            if let Some(crd) = &import.external {
                next.push_str(&format!(
                    "Added the types of {}/{} {} from CRD {} (not installed by this project: it \
                     must be in the cluster before the operator runs).\n",
                    crd.group, import.record.entry.version, import.record.entry.kind, crd.crd_name
                ));
            }
            let (plan, _) = create_api::plan_request(root, project, import)?;
            let Some(text) = plan.read(project::FILE)? else {
                bail!("internal error: PROJECT vanished from the plan")
            };
            (plan, Project::parse(&text)?)
        }
        None => (Plan::new(root), project),
    };
    let request = &request;
    if let Some(b) = &request.builtin {
        add_builtin_entry(&mut project, request, b)?;
    }
    let Some(entry) = project
        .find(&request.group, &request.version, &request.kind)
        .cloned()
    else {
        bail!("internal error: the resource vanished")
    };
    let existing = entry.webhooks.clone().unwrap_or_default();
    check_conflicts(&project, &entry, &existing, request, force)?;

    // A kind made from its CRD (migrated from kubebuilder) converts by field names: its
    // versions are the Go project's, whatever rbuilder would have scaffolded.
    let own = create_api::own_types(root, &entry)?;
    if own.is_none() {
        check_storage_has_the_fields(&project, &entry, &request.spokes)?;
    }
    let resource = Resource::of(
        &project.record_of(&entry),
        project.multigroup,
        request.crd.as_ref(),
        own.as_ref(),
    )?;
    check_external(&project, &resource)?;
    // The kind's admission webhooks share one file: with --force it is rewritten with those it
    // had and those asked for.
    let defaulting = request.defaulting || (existing.defaulting && force);
    let validation = request.validation || (existing.validation && force);
    let admission = request.defaulting || request.validation;
    let conversion = !request.spokes.is_empty();

    let templates = Templates::load(TEMPLATES)?;
    let mut ctx = project_context(root, &project);
    ctx.insert("resource", &resource);
    ctx.insert("defaulting", &defaulting);
    ctx.insert("validation", &validation);
    // A path asked for now, else the one the webhook has (a file rewritten with --force keeps
    // it, as kubebuilder keeps PROJECT's when it adds a webhook to a kind).
    let paths = paths(request, &existing);
    ctx.insert("defaulting_path", &paths.0.filter(|_| defaulting));
    ctx.insert("validation_path", &paths.1.filter(|_| validation));

    if !plan.exists(WEBHOOK_MOD) {
        bail!(
            "{WEBHOOK_MOD} does not exist: this project was made by an rbuilder without \
             webhooks; run `rbuilder update`, copy {WEBHOOK_MOD} from a project made by \
             `rbuilder init`, add `pub mod webhook;` and `webhooks: webhook::WEBHOOKS,` to \
             src/lib.rs, then create the webhook again"
        );
    }
    // The admission webhooks live with the kind's version, each spoke's conversion with the
    // spoke (as kubebuilder's do), so that adding a spoke later touches no existing file.
    // Each file is planned with its inserts, the order `--dry-run` has always listed them in.
    let mut add = Additions::new(Order::EachFileWithItsInserts);
    let mut files = Vec::new();
    if admission {
        let version = &resource.version;
        add_version_module(&mut add, &resource, version);
        let file = format!(
            "{}/{}.rs",
            resource.webhook_dir(version),
            resource.module.file
        );
        add.add(
            Entry::template(file.clone(), "webhook/kind.rs", IfExists::Refuse)
                .with("version", version)
                .insert(
                    version_mod_file(&resource, version),
                    "kind-modules",
                    "inserts/webhook_version_mod_kind.rs",
                ),
        );
        files.push(file);
        // A built-in type's webhooks have no integration test: a valid object of any type
        // is more than a template can know. An external resource's have one if its CRD can
        // be read at build time (not from stdin).
        let test = match &resource.flavor {
            _ if resource.has_crd() => Some(("integration/webhooks.rs", None)),
            Flavor::External { path, .. } if path != "-" => {
                let include = crd_include(path, resource.layout.group_dir_up);
                Some(("integration/external_webhooks.rs", Some(include)))
            }
            _ => None,
        };
        if let Some((template, crd_include)) = test {
            add_integration_tests_module(&mut add, &resource);
            let mut test =
                Entry::template(resource.webhooks_test_file(), template, IfExists::Refuse)
                    .with("version", version)
                    .with("webhook_module", &resource.webhook_module(version))
                    .insert(
                        INTEGRATION_TESTS.listing(&resource),
                        INTEGRATION_TESTS.marker(),
                        "inserts/integration_webhooks.rs",
                    );
            if let Some(crd_include) = crd_include {
                test = test.with("crd_include", &crd_include);
            }
            add.add(test);
        }
    }
    // The version stored, which a conversion test creates its object in.
    let stored =
        stored_version(root, &project, &entry)?.unwrap_or_else(|| resource.version.clone());
    for spoke in &request.spokes {
        add_version_module(&mut add, &resource, spoke);
        let same_fields = own.is_none() && same_fields(&project, &entry, spoke);
        let spoke_vars = serde_json::json!({ "version": spoke, "same_fields": same_fields });
        let dir = resource.webhook_dir(spoke);
        let file = format!("{dir}/{}_conversion.rs", resource.module.file);
        add.add(
            Entry::template(file.clone(), "webhook/conversion.rs", IfExists::Refuse)
                .with("version", spoke)
                .with("spoke", &spoke_vars)
                .insert(
                    version_mod_file(&resource, spoke),
                    "kind-modules",
                    "inserts/webhook_version_mod_conversion.rs",
                ),
        );
        files.push(file);
        add_integration_tests_module(&mut add, &resource);
        // Created in the version stored, read in the spoke (or the hub, if the spoke is the
        // version stored).
        let target = if *spoke == stored {
            &resource.version
        } else {
            spoke
        };
        let path = resource.conversion_test_file(spoke);
        add.add(
            Entry::template(path, "integration/conversion.rs", IfExists::Refuse)
                .with("version", spoke)
                .with("spoke", &spoke_vars)
                .with(
                    "conversion_test",
                    &serde_json::json!({ "source": stored, "target": target }),
                )
                .with("webhook_module", &resource.webhook_module(spoke))
                .insert(
                    INTEGRATION_TESTS.listing(&resource),
                    INTEGRATION_TESTS.marker(),
                    "inserts/integration_conversion.rs",
                ),
        );
    }
    add.plan(&mut plan, &templates, &ctx, force)?;
    // The registrations this command adds, even where the user had deleted them.
    let added = registrations(
        project.multigroup,
        &entry,
        &WebhooksEntry {
            defaulting,
            validation,
            conversion,
            spoke: request.spokes.clone(),
            ..WebhooksEntry::default()
        },
    );
    record(&mut project, request);
    list_registrations(&mut plan, &project, &added)?;

    plan.update(project::FILE, |_| project.to_yaml())?;
    plan_manifests(&mut plan, &project, &resource, conversion)?;
    plan_kustomize(&mut plan, &templates, &mut ctx, &project)?;
    if conversion && !plan.exists(CRD_KUSTOMIZECONFIG) {
        let text = templates.render("webhook/config/crd_kustomizeconfig.yaml", &ctx)?;
        plan.create(CRD_KUSTOMIZECONFIG.to_owned(), text)?;
        plan.update(paths::CRD_KUSTOMIZATION.to_owned(), |text| {
            Ok(format!("{text}\nconfigurations:\n- kustomizeconfig.yaml\n"))
        })?;
    }

    let overwritten = plan.overwritten().join(", ");
    if !overwritten.is_empty() {
        next.push_str(&format!("--force rewrote: {overwritten}\n"));
    }
    next.push_str(&format!(
        "Added webhooks for {}. Next:\n  \
         write their logic in {}\n  \
         make manifests   # the webhook configurations\n  \
         make test\n  \
         ENABLE_WEBHOOKS=false make run   # an API server cannot reach a manager run locally",
        resource.gvk(),
        files.join(" and "),
    ));
    if let Some(line) = super::helm::follow(&mut plan, &project, true)? {
        next.push('\n');
        next.push_str(&line);
    }
    Ok((plan, next))
}

/// The version the kind of `entry` is stored in: its first (rbuilder's rule), or, for a kind
/// made from its CRD, the one the CRD stores.
fn stored_version(
    root: &Path,
    project: &Project,
    entry: &ResourceEntry,
) -> Result<Option<Version>> {
    let mut versions = project.versions_of(&entry.group, &entry.kind);
    if !entry.types_from_crd() {
        return Ok(versions.next().map(|e| e.version.clone()));
    }
    for version in versions {
        let stored =
            create_api::own_types(root, version)?.is_some_and(|own| own.version["storage"] == true);
        if stored {
            return Ok(Some(version.version.clone()));
        }
    }
    Ok(None)
}

/// `include_str!`'s path, from `tests/integration/` (`up` one folder more, from a group's
/// folder there), of the CRD file PROJECT records as `path` (relative to the project, or
/// absolute), escaped for a Rust string literal.
fn crd_include(path: &str, up: &str) -> String {
    let path = if Path::new(path).is_absolute() {
        path.to_owned()
    } else {
        format!("../../{up}{path}")
    };
    path.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The custom paths of the kind's defaulting and validating webhooks once `request` is added
/// to the webhooks it has, `existing`: those given now, else those it had.
pub(super) fn paths(
    request: &Request,
    existing: &WebhooksEntry,
) -> (Option<String>, Option<String>) {
    (
        request
            .defaulting_path
            .clone()
            .or_else(|| existing.defaulting_path.clone()),
        request
            .validation_path
            .clone()
            .or_else(|| existing.validation_path.clone()),
    )
}

/// How `src/webhook/mod.rs` names `entry`'s webhooks `w`: `v1::pod::DEFAULTING`, a spoke's
/// `v1alpha1::guestbook_conversion::CONVERSION` (in a `multigroup` project after the group's
/// module: `core::v1::pod::DEFAULTING`); a kind's in the order defaulting, validating,
/// conversions.
fn registrations(multigroup: bool, entry: &ResourceEntry, w: &WebhooksEntry) -> Vec<String> {
    let module = entry.kind.module();
    // A group whose module cannot be named was refused when the kind was made.
    let group = match entry.group.dir_module() {
        Ok(group) if multigroup => format!("{group}::"),
        _ => String::new(),
    };
    let version = &entry.version;
    let mut names = Vec::new();
    if w.defaulting {
        names.push(format!("{group}{version}::{}::DEFAULTING", module.ident));
    }
    if w.validation {
        names.push(format!("{group}{version}::{}::VALIDATING", module.ident));
    }
    for spoke in w.spoke.iter().filter(|_| w.conversion) {
        names.push(format!(
            "{group}{spoke}::{}_conversion::CONVERSION",
            module.file
        ));
    }
    names
}

/// Lists every registration in `src/webhook/mod.rs` in one order, PROJECT's, whatever order
/// the webhooks were created in, so that a project replayed from PROJECT by `alpha generate`
/// lists them as the original does. A registration the user deleted stays deleted, unless this
/// command `added` it.
fn list_registrations(plan: &mut Plan, project: &Project, added: &[String]) -> Result<()> {
    let order: Vec<String> = project
        .resources
        .iter()
        .filter_map(|e| {
            e.webhooks
                .as_ref()
                .map(|w| registrations(project.multigroup, e, w))
        })
        .flatten()
        .collect();
    plan.update(WEBHOOK_MOD.to_owned(), |content| {
        let line = |name: &str| format!("{name},");
        let listed = |name: &str| content.lines().any(|l| l.trim() == line(name));
        let all: Vec<&String> = order
            .iter()
            .filter(|name| added.contains(name) || listed(name))
            .collect();
        let kept: String = content
            .lines()
            .filter(|l| !all.iter().any(|name| l.trim() == line(name)))
            .map(|l| format!("{l}\n"))
            .collect();
        let lines: Vec<String> = all.iter().map(|name| line(name)).collect();
        markers::insert(&kept, WEBHOOK_MOD, "webhooks", &lines)
    })
}

/// `src/webhook/<version>/mod.rs` (multigroup `src/webhook/<group>/<version>/mod.rs`), the
/// module of `version`'s webhooks of `r`'s group.
fn version_mod_file(r: &Resource, version: &Version) -> String {
    format!("{}/mod.rs", r.webhook_dir(version))
}

/// The module of `version`'s webhooks (and, in a multigroup project, of `r`'s group): made by
/// the version's first webhook, and listed in the module above it.
fn add_version_module(add: &mut Additions, r: &Resource, version: &Version) {
    WEBHOOKS.add_group_module(add, r);
    add.add(
        Entry::template(
            version_mod_file(r, version),
            "webhook/version_mod.rs",
            IfExists::Keep,
        )
        .with("version", version)
        .insert(
            WEBHOOKS.listing(r),
            WEBHOOKS.marker(),
            "inserts/webhook_mod_version.rs",
        ),
    );
}

/// The integration tests' crate root and, in a multigroup project, `r`'s group's module there.
fn add_integration_tests_module(add: &mut Additions, r: &Resource) {
    add.add(Entry::template(
        paths::INTEGRATION_TESTS,
        "integration/main.rs",
        IfExists::Keep,
    ));
    INTEGRATION_TESTS.add_group_module(add, r);
}
