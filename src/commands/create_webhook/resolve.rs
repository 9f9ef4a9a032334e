//! What `create webhook` is asked, checked against PROJECT.

use std::path::Path;

use anyhow::{Result, bail};

use super::Request;
use crate::cli::CreateWebhookArgs;
use crate::commands::create_api::{self, ExternalImport};
use crate::external;
use crate::manifests;
use crate::model::builtin::{self, Builtin};
use crate::model::webhook_path;
use crate::model::{Flavor, Group, GroupLayout, Kind, Resource, Version};
use crate::project::{Project, ResourceEntry, WebhooksEntry};

/// Checks the arguments, and that the kind (and its spokes) are the project's; an external
/// resource's CRD is read from `root`, the project's folder, or from `--external-api-path`.
pub(super) fn resolve(root: &Path, project: &Project, args: &CreateWebhookArgs) -> Result<Request> {
    // Each path flag, as kubebuilder's, applies to its webhook only.
    if args.defaulting_path.is_some() && !args.defaulting {
        bail!("--defaulting-path only applies with --defaulting: add --defaulting or drop it");
    }
    if args.validation_path.is_some() && !args.programmatic_validation {
        bail!(
            "--validation-path only applies with --programmatic-validation: add \
             --programmatic-validation or drop it"
        );
    }
    for (flag, path) in [
        ("--defaulting-path", &args.defaulting_path),
        ("--validation-path", &args.validation_path),
    ] {
        if let Some(path) = path {
            webhook_path::check(flag, path)?;
        }
    }
    let mut request = resolve_kind(root, project, args)?;
    request.defaulting_path = args.defaulting_path.clone();
    request.validation_path = args.validation_path.clone();
    check_paths_are_free(project, &request)?;
    Ok(request)
}

/// Refuses a custom path that another admission webhook of the project is served at (the
/// server routes each path to one webhook), or that both of the kind's webhooks are given.
fn check_paths_are_free(project: &Project, request: &Request) -> Result<()> {
    if request.defaulting_path.is_some() && request.defaulting_path == request.validation_path {
        bail!(
            "--defaulting-path and --validation-path are both {}: each webhook needs a path of \
             its own",
            request.defaulting_path.as_deref().unwrap_or_default()
        );
    }
    let mut taken = Vec::new();
    for entry in &project.resources {
        let Some(w) = &entry.webhooks else { continue };
        let this = entry.is(&request.group, &request.version, &request.kind);
        let gvk = format!(
            "{}/{} {}",
            entry.group.display_name(),
            entry.version,
            entry.kind
        );
        for (has, mutating, custom) in [
            (w.defaulting, true, &w.defaulting_path),
            (w.validation, false, &w.validation_path),
        ] {
            // This kind's webhook of the same sort is the one being scaffolded again.
            if !has
                || (this
                    && (if mutating {
                        request.defaulting
                    } else {
                        request.validation
                    }))
            {
                continue;
            }
            let path = custom.clone().unwrap_or_else(|| {
                manifests::default_path(
                    mutating,
                    &entry.api_group(),
                    entry.version.as_ref(),
                    entry.kind.as_ref(),
                )
            });
            let what = if mutating { "defaulting" } else { "validating" };
            taken.push((path, format!("the {what} webhook of {gvk}")));
        }
    }
    for (flag, path) in [
        ("--defaulting-path", &request.defaulting_path),
        ("--validation-path", &request.validation_path),
    ] {
        let Some(path) = path else { continue };
        if let Some((_, owner)) = taken.iter().find(|(p, _)| p == path) {
            bail!("{flag} {path} is already the path of {owner}: choose another path");
        }
    }
    Ok(())
}

/// [`resolve`] without the paths: the kind the webhooks are for, and which webhooks.
fn resolve_kind(root: &Path, project: &Project, args: &CreateWebhookArgs) -> Result<Request> {
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
    if args.external_api_domain.is_some() && args.external_api_path.is_none() {
        bail!(
            "--external-api-domain only applies with --external-api-path: add the CRD file, \
             e.g. --external-api-path cert-manager.crds.yaml, or drop --external-api-domain"
        );
    }
    if let Some(request) = external_kind(root, project, args, &group, &version, &kind)? {
        return Ok(request);
    }
    let gvk = format!("{group}/{version} {kind}");
    let own = project
        .versions_of(&group, &kind)
        .any(|e| e.version == version);
    if !own && let Some(b) = builtin::find(&args.group, &args.version, &args.kind) {
        return builtin_type(project, args, b, version, kind);
    }
    let own_group = project.custom_resources().any(|e| e.group == group);
    if !own_group && builtin::is_builtin_group(&args.group) {
        bail!(
            "unknown built-in type {gvk}: rbuilder can scaffold webhooks for these types of \
             group '{}': {}",
            args.group,
            builtin::kinds_in(&args.group).join(", ")
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
             `rbuilder create api --group {group} --version {version} --kind {kind}`, or, for \
             another project's custom resource, add --external-api-path <its CRD file>",
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
        defaulting_path: None,
        validation_path: None,
        builtin: None,
        import: None,
        crd: None,
    })
}

/// Webhooks for one of Kubernetes' own types, e.g. a Pod defaulter.
fn builtin_type(
    project: &Project,
    args: &CreateWebhookArgs,
    b: Builtin,
    version: Version,
    kind: Kind,
) -> Result<Request> {
    let gvk = format!("{}/{version} {kind}", args.group);
    if args.conversion {
        bail!(
            "{gvk} is a Kubernetes built-in type, which the API server converts between its \
             versions itself: --conversion is for the project's own kinds; drop it"
        );
    }
    // In a project that is not multigroup, a webhook file is named after the kind alone
    // (src/webhook/<version>/<kind>.rs).
    if let Some(other) = project
        .custom_resources()
        .find(|e| e.kind == kind && e.version == version && !project.multigroup)
    {
        bail!(
            "{gvk}'s webhooks would be src/webhook/{version}/{}.rs, the file of this project's \
             own {}/{version} {kind}; rbuilder cannot scaffold webhooks for both",
            kind.module().file,
            other.group.display_name()
        );
    }
    if project.namespaced {
        if !b.namespaced {
            bail!(
                "{gvk} is cluster-scoped, and this operator is scoped to one namespace (init \
                 --namespaced): its webhook would see every {kind} of the cluster; choose a \
                 namespaced type"
            );
        }
        if MANAGER_NEEDS.contains(&b.kind) {
            bail!(
                "{gvk}: in an operator scoped to its namespace, a webhook for {kind}s would see \
                 the manager's own there (as its certificate Secret, ServiceAccount, Roles, \
                 Services and Lease), and failing closed while the manager is down it would keep \
                 the manager from ever starting; choose another type"
            );
        }
    }
    Ok(Request {
        group: b.project_group()?,
        version,
        kind,
        defaulting: args.defaulting,
        validation: args.programmatic_validation,
        spokes: Vec::new(),
        defaulting_path: None,
        validation_path: None,
        builtin: Some(b),
        import: None,
        crd: None,
    })
}

/// Webhooks for another project's custom resource: one whose types the project has (imported
/// by `create api --external-api-path`, or by an earlier `create webhook`), or one whose types
/// `--external-api-path` imports now. `None` if the kind is not another project's.
fn external_kind(
    root: &Path,
    project: &Project,
    args: &CreateWebhookArgs,
    group: &Group,
    version: &Version,
    kind: &Kind,
) -> Result<Option<Request>> {
    // --group as create api takes it: the CRD's group in full, or its first part (alone, or
    // with --external-api-domain).
    let full_group = match &args.external_api_domain {
        Some(domain) => format!("{group}.{domain}"),
        None => group.to_string(),
    };
    let imported: Vec<&ResourceEntry> = project
        .resources
        .iter()
        .filter(|e| e.external && e.kind == *kind)
        .filter(|e| {
            e.api_group() == full_group || (args.external_api_domain.is_none() && e.group == *group)
        })
        .collect();
    if imported.is_empty() {
        if args.external_api_path.is_none() {
            return Ok(None);
        }
        // Not another project's, whatever the flag says.
        let gvk = format!("{}/{version} {kind}", args.group);
        if project.versions_of(group, kind).next().is_some() {
            bail!(
                "{gvk} is this project's own kind, not another project's: drop --external-api-path"
            );
        }
        if builtin::find(&args.group, &args.version, &args.kind).is_some() {
            bail!(
                "{gvk} is a Kubernetes built-in type, not another project's custom resource: \
                 drop --external-api-path"
            );
        }
    }
    let api_group = imported.first().map_or(full_group, |e| e.api_group());
    let gvk = format!("{api_group}/{version} {kind}");
    if args.conversion {
        bail!(
            "{gvk} is another project's custom resource: its CRD, and how its versions convert, \
             are that project's; --conversion is for this project's own kinds, drop it"
        );
    }
    let request = |group: Group, import, crd| Request {
        group,
        version: version.clone(),
        kind: kind.clone(),
        defaulting: args.defaulting,
        validation: args.programmatic_validation,
        spokes: Vec::new(),
        defaulting_path: None,
        validation_path: None,
        builtin: None,
        import,
        crd,
    };
    if let Some(entry) = imported.iter().find(|e| e.version == *version) {
        let from = entry.path.as_deref().unwrap_or("its CRD");
        if let Some(path) = &args.external_api_path
            && entry.path.as_deref() != Some(path.as_str())
        {
            bail!(
                "{gvk} has its types already, made from {from}: drop --external-api-path (to \
                 make them from another CRD file, run `rbuilder create api --group {api_group} \
                 --version {version} --kind {kind} --resource=false --controller=false \
                 --external-api-path {path} --force` first)"
            );
        }
        let crd = create_api::external_types(root, entry)?;
        return Ok(Some(request(entry.group.clone(), None, Some(crd))));
    }
    let Some(path) = &args.external_api_path else {
        let versions: Vec<String> = imported.iter().map(|e| e.version.to_string()).collect();
        bail!(
            "{gvk}: this project has the types of {kind} in {} only; add --external-api-path \
             <its CRD file> to make those of {version} too",
            versions.join(", ")
        );
    };
    let import = create_api::external_request(
        project,
        ExternalImport {
            group: group.as_ref(),
            domain: args.external_api_domain.as_deref(),
            path: path.clone(),
            version: version.clone(),
            kind: kind.clone(),
            controller: false,
            force: false,
        },
    )?;
    let crd = import.external.clone();
    let group = import.record.entry.group.clone();
    Ok(Some(request(group, Some(import), crd)))
}

/// Refuses webhooks for an external resource that an operator scoped to its namespace cannot
/// have: a cluster-scoped one (its webhook would see every object of the cluster), or one its
/// manager needs in its namespace.
pub(super) fn check_external(project: &Project, r: &Resource) -> Result<()> {
    if !matches!(r.flavor, Flavor::External { .. }) || !project.namespaced {
        return Ok(());
    }
    let gvk = format!("{}/{} {}", r.api_group, r.version, r.kind);
    if !r.namespaced {
        bail!(
            "{gvk} is cluster-scoped, and this operator is scoped to one namespace (init \
             --namespaced): its webhook would see every {} of the cluster; choose a namespaced \
             type",
            r.kind
        );
    }
    if external::manager_needs(&r.api_group, r.kind.as_str()) {
        bail!(
            "{gvk}: in an operator scoped to its namespace, a webhook for {}s would see the \
             manager's own there (config/certmanager makes its certificate with one), and \
             failing closed while the manager is down it would keep the manager from ever \
             starting; choose another type",
            r.kind
        );
    }
    Ok(())
}

/// A kind's admission webhooks are named after its kind and version (`mbar-v1.kb.io`, as
/// kubebuilder names them), whatever its group: in a multigroup project, the same kind name
/// and version in another group with a webhook of the same sort would make a configuration
/// with two webhooks of one name, which the API server refuses.
fn check_names_are_free(
    project: &Project,
    entry: &ResourceEntry,
    request: &Request,
    gvk: &str,
) -> Result<()> {
    let lower = entry.kind.lower();
    let others = project.resources.iter().filter(|e| {
        e.group != entry.group && e.version == entry.version && e.kind.lower() == lower
    });
    for other in others {
        let Some(theirs) = &other.webhooks else {
            continue;
        };
        for (sort, letter, ours, theirs) in [
            ("defaulting", "m", request.defaulting, theirs.defaulting),
            ("validating", "v", request.validation, theirs.validation),
        ] {
            if ours && theirs {
                bail!(
                    "{gvk}'s {sort} webhook would be named {}, as {}/{} {}'s is: webhooks \
                     are named after their kind and version (as kubebuilder names them), and the \
                     API server refuses a configuration with two webhooks of one name; give \
                     only one of the two kinds a {sort} webhook",
                    manifests::admission::name(letter, entry.kind.as_str(), entry.version.as_ref()),
                    other.group.display_name(),
                    other.version,
                    other.kind
                );
            }
        }
    }
    Ok(())
}

/// The built-in types the manager's own deployment is made of in its namespace, besides its
/// Pods, ReplicaSet and Deployment (which a webhook leaves out by their label): a webhook for
/// these in an operator scoped to that namespace would keep the manager from starting.
pub(in crate::commands) const MANAGER_NEEDS: &[&str] = &[
    "ConfigMap",
    "Lease",
    "NetworkPolicy",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
];

/// Refuses webhooks that exist (without --force), webhooks whose names another kind's have,
/// and a second hub for a kind.
pub(super) fn check_conflicts(
    project: &Project,
    entry: &ResourceEntry,
    existing: &WebhooksEntry,
    request: &Request,
    force: bool,
) -> Result<()> {
    let gvk = format!(
        "{}/{} {}",
        entry.group.display_name(),
        entry.version,
        entry.kind
    );
    check_names_are_free(project, entry, request, &gvk)?;
    let webhook_dir = GroupLayout::of(project.multigroup, &entry.group)?.dir("src/webhook");
    let taken: Vec<&str> = [
        (request.defaulting && existing.defaulting, "defaulting"),
        (request.validation && existing.validation, "validation"),
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
    let converted: Vec<&Version> = request
        .spokes
        .iter()
        .filter(|spoke| existing.conversion && existing.spoke.contains(spoke))
        .collect();
    if !converted.is_empty() && !force {
        let file = entry.kind.module().file;
        let files: Vec<String> = converted
            .iter()
            .map(|v| format!("{webhook_dir}/{v}/{file}_conversion.rs"))
            .collect();
        let versions: Vec<String> = converted.iter().map(ToString::to_string).collect();
        bail!(
            "{} already converts to and from {} ({}); use --force to scaffold it again, or give \
             only new --spoke versions",
            entry.kind,
            versions.join(" and "),
            files.join(", ")
        );
    }
    // Defaulting and validation share a file: adding one to the other rewrites it.
    let admission_exists = existing.defaulting || existing.validation;
    if (request.defaulting || request.validation) && admission_exists && !force {
        bail!(
            "{gvk} already has webhooks in {webhook_dir}/{}/: use --force to scaffold the file \
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
             versions to that one with --version {}",
            entry.kind,
            hub.version,
            hub.version
        );
    }
    Ok(())
}

/// Whether `spoke` was scaffolded with the fields of `hub` (both with `--image`, or neither):
/// its conversion then copies them one by one, else it converts by field names.
pub(super) fn same_fields(project: &Project, hub: &ResourceEntry, spoke: &Version) -> bool {
    let deploy_image = |e: &ResourceEntry| project.deploy_image(e).is_some();
    project
        .versions_of(&hub.group, &hub.kind)
        .find(|e| e.version == *spoke)
        .is_none_or(|e| deploy_image(e) == deploy_image(hub))
}

/// Conversion by field names fails for an object that lacks a field the target version
/// requires: fine for a write, which it refuses, but not for the objects stored, which could
/// then not be read in that version. So the version stored (the kind's first) must be the one
/// with `--image` whenever a converted version differs from another.
pub(super) fn check_storage_has_the_fields(
    project: &Project,
    hub: &ResourceEntry,
    spokes: &[Version],
) -> Result<()> {
    let differs = spokes.iter().any(|spoke| !same_fields(project, hub, spoke));
    let Some(stored) = project.versions_of(&hub.group, &hub.kind).next() else {
        return Ok(());
    };
    if differs && project.deploy_image(stored).is_none() {
        bail!(
            "{} is stored as {}, which has no image: the versions made with --image require one, \
             so converting them by field names would leave the objects stored unreadable in \
             those versions; rbuilder converts versions made differently only when the version \
             stored is the one made with --image, so convert versions made alike, or write this \
             conversion yourself",
            hub.kind,
            stored.version
        );
    }
    Ok(())
}
