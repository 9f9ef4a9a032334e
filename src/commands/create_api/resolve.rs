//! From `create api`'s arguments to the resource as PROJECT is to record it: every flag
//! checked on its own, then against what the project already has (a kind's other versions, its
//! controller). The flags' strings are parsed here and nowhere else.

use anyhow::{Result, bail};

use super::Request;
use crate::cli::CreateApiArgs;
use crate::external;
use crate::model::{
    ControllerName, Group, Kind, Plural, ShortName, Version, builtin, deploy_image,
};
use crate::project::{
    ApiEntry, ControllerEntry, DeployImageOptions, Project, Record, ResourceEntry,
};

/// The value of kubebuilder's --plugins that selects the deploy-image template.
const DEPLOY_IMAGE_PLUGIN: &str = "deploy-image/v1-alpha";

/// Validates the arguments against the project into what to add.
pub fn request(project: &Project, args: &CreateApiArgs) -> Result<Request> {
    let Some(name) = &args.controller_name else {
        return resource_request(project, args);
    };
    let name = ControllerName::parse(name)?;
    let kind = Kind::parse(&args.kind)?;
    if args.controller == Some(false) {
        bail!(
            "--controller-name {name} names a controller, and --controller=false scaffolds none; \
             drop one of them"
        );
    }
    if name.as_ref() != kind.lower() {
        return super::second::request(project, args, name);
    }
    // The kind's own controller, named after the kind as kubebuilder names it: the same
    // scaffold, recorded under `controllers` as kubebuilder records it.
    let mut request = resource_request(project, args)?;
    let entry = &mut request.record.entry;
    if !entry.controller {
        bail!(
            "--controller-name {name} names {kind}'s own controller, and this resource gets none: \
             the kind's controller is in another of its versions; drop --controller-name"
        );
    }
    if entry.controllers.is_empty() {
        entry.controllers.push(ControllerEntry { name });
    }
    Ok(request)
}

/// The request for a resource, its own controller, or both.
fn resource_request(project: &Project, args: &CreateApiArgs) -> Result<Request> {
    let version = Version::parse(&args.version)?;
    let kind = Kind::parse(&args.kind)?;
    if args.external_api_path.is_some() {
        return external_type(project, args, version, kind);
    }
    if args.external_api_domain.is_some() {
        bail!(
            "--external-api-domain only applies with --external-api-path: add the CRD file, \
             e.g. --external-api-path cert-manager.crds.yaml, or drop --external-api-domain"
        );
    }
    let deploy_image = deploy_image(args)?;
    if !args.resource && args.controller == Some(false) {
        bail!(
            "nothing to scaffold: --resource=false and --controller=false leave neither a \
             resource nor a controller; drop one of them"
        );
    }
    if !args.resource {
        if deploy_image.is_some() {
            bail!(
                "--image needs --resource=true: the deploy-image template scaffolds a custom resource"
            );
        }
        if builtin::is_builtin_group(&args.group) {
            return builtin_type(project, args);
        }
    }

    let group = Group::parse(&args.group)?;
    group.check_with_domain(&project.domain)?;
    let names = kind_names(project, args, &group, &kind)?;
    if !names.namespaced && deploy_image.is_some() {
        bail!(
            "--image needs --namespaced=true: the Deployment it runs lives in the resource's \
             namespace"
        );
    }
    if !names.namespaced && project.namespaced {
        bail!(
            "--namespaced=false makes a cluster-scoped resource, but this operator is scoped \
             to one namespace (init --namespaced); make the resource namespaced"
        );
    }
    // A second version of a kind reuses the controller of the first by default.
    let elsewhere = project.controller_elsewhere(&group, &kind, &version);
    let controller = args.controller.unwrap_or(elsewhere.is_none());
    if deploy_image.is_some() && !controller {
        bail!(
            "--image needs a controller to run the image, and this resource gets none \
             (--controller=false, or its kind's controller exists already in another version); \
             drop --image"
        );
    }
    // A kind migrated from kubebuilder keeps the CRD its types are made from.
    let mut path = None;
    if !args.resource {
        // Only a controller, for a resource this project already has.
        let Some(existing) = project.find(&group, &version, &kind) else {
            bail!(
                "--resource=false scaffolds only a controller, for a built-in type (e.g. \
                 --group apps --version v1 --kind Deployment) or for a resource this project \
                 already has; {group}/{version} {kind} is neither"
            );
        };
        if existing.controller && !args.force {
            bail!(
                "{group}/{version} {kind} already has a controller (use --force to scaffold it again)"
            );
        }
        path = existing.path.clone().filter(|_| existing.types_from_crd());
    }

    let entry = ResourceEntry {
        api: Some(ApiEntry {
            crd_version: "v1".into(),
            namespaced: names.namespaced,
        }),
        controller,
        controllers: Vec::new(),
        core: false,
        domain: project.domain.to_string(),
        external: false,
        group,
        kind,
        path,
        plural: Some(names.plural),
        short_names: names.short_names,
        version,
        webhooks: None,
    };
    Ok(Request {
        record: Record {
            entry,
            deploy_image,
        },
        external: None,
        own: None,
        adds_resource: args.resource,
        force: args.force,
        second_controller: None,
    })
}

/// A controller for one of Kubernetes' own types (`--resource=false` with a built-in group).
fn builtin_type(project: &Project, args: &CreateApiArgs) -> Result<Request> {
    // `--controller` (true) is accepted: kubebuilder users type `--resource=false
    // --controller`, and a controller is what this scaffolds (`--controller=false` was refused
    // above as nothing to scaffold).
    let ignored = [
        ("--plural", args.plural.is_some()),
        ("--short-name", !args.short_names.is_empty()),
        ("--namespaced", args.namespaced.is_some()),
    ];
    if let Some((flag, _)) = ignored.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply to a built-in type: its names and scope are Kubernetes', and \
             --resource=false scaffolds just its controller"
        );
    }
    let Some(b) = builtin::find(&args.group, &args.version, &args.kind) else {
        bail!(
            "unknown built-in type {}/{} {}: rbuilder can write controllers for these types of \
             group '{}': {}",
            args.group,
            args.version,
            args.kind,
            args.group,
            builtin::kinds_in(&args.group).join(", ")
        );
    };
    if !b.namespaced && project.namespaced {
        bail!(
            "{} is cluster-scoped, but this operator is scoped to one namespace (init \
             --namespaced), whose Role cannot grant it; choose a namespaced type",
            b.kind
        );
    }
    // `version` and `kind` are the type's own: `find` matched them.
    let entry = ResourceEntry::of_builtin(&b, true)?;
    Ok(Request {
        record: Record {
            entry,
            deploy_image: None,
        },
        external: None,
        own: None,
        adds_resource: false,
        force: args.force,
        second_controller: None,
    })
}

/// Another project's custom resource, from its CRD (`--external-api-path`): its types and,
/// unless --controller=false, a controller as for a built-in type.
fn external_type(
    project: &Project,
    args: &CreateApiArgs,
    version: Version,
    kind: Kind,
) -> Result<Request> {
    let path = args.external_api_path.clone().unwrap_or_default();
    if args.resource {
        bail!(
            "--external-api-path needs --resource=false: the custom resource is the CRD's \
             owner's, and this project gets only its types and a controller"
        );
    }
    let ignored = [
        ("--plural", args.plural.is_some()),
        ("--short-name", !args.short_names.is_empty()),
        ("--namespaced", args.namespaced.is_some()),
        ("--image", args.image.is_some() || args.plugins.is_some()),
    ];
    if let Some((flag, _)) = ignored.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply with --external-api-path: the resource's names and scope are \
             its CRD's, and rbuilder scaffolds just its types and controller"
        );
    }
    let import = ExternalImport {
        group: &args.group,
        domain: args.external_api_domain.as_deref(),
        path,
        version,
        kind,
        controller: args.controller.unwrap_or(true),
        force: args.force,
    };
    let request = external_request(project, import)?;
    if project.namespaced && request.external.as_ref().is_some_and(|e| !e.namespaced) {
        bail!(
            "{} is cluster-scoped, but this operator is scoped to one namespace (init \
             --namespaced), whose Role cannot grant it; choose a namespaced type",
            request.record.entry.kind
        );
    }
    Ok(request)
}

/// Another project's custom resource to import from its CRD file: what `create api
/// --external-api-path` and `create webhook --external-api-path` are given.
pub(in crate::commands) struct ExternalImport<'a> {
    /// `--group`: the CRD's group in full, or its first part with `domain`.
    pub group: &'a str,
    pub domain: Option<&'a str>,
    /// The CRD file as given (`-`: stdin).
    pub path: String,
    pub version: Version,
    pub kind: Kind,
    /// Whether a controller is scaffolded besides the types.
    pub controller: bool,
    pub force: bool,
}

/// The types of `import` from its CRD, checked against the project's groups, as a `create api`
/// request. Whether the project's scope allows the CRD's is the caller's to check: the reasons
/// differ for a controller and for webhooks.
pub(in crate::commands) fn external_request(
    project: &Project,
    import: ExternalImport,
) -> Result<Request> {
    let ExternalImport {
        path,
        version,
        kind,
        ..
    } = import;
    let text = external::read(&path)?;
    let source = if path == "-" {
        "the CRD on stdin".to_owned()
    } else {
        path.clone()
    };
    let wanted = external::Wanted {
        group: import.group,
        domain: import.domain,
        version: version.as_ref(),
        kind: kind.as_str(),
    };
    let generated = external::generate(&text, &source, &wanted, &path)?;
    let own = project
        .custom_resources()
        .find(|e| e.api_group() == generated.group);
    if let Some(own) = own {
        bail!(
            "group {} of CRD {} is this project's own API group (kind {} is in it): its types \
             are this project's to define; generate types only for other projects' groups",
            generated.group,
            generated.crd_name,
            own.kind
        );
    }
    let plural = Plural::parse(&generated.plural)?;
    let entry = ResourceEntry::of_external(
        &generated.group,
        version,
        kind,
        plural,
        path,
        import.controller,
    )?;
    Ok(Request {
        record: Record {
            entry,
            deploy_image: None,
        },
        external: Some(generated),
        own: None,
        adds_resource: false,
        force: import.force,
        second_controller: None,
    })
}

/// The names and scope a kind has in all its versions.
struct KindNames {
    plural: Plural,
    namespaced: bool,
    short_names: Vec<ShortName>,
}

/// The kind's plural, scope and short names: from its other versions when it has some (a
/// kind has one CRD, so they are the same in every version), else from the flags.
fn kind_names(
    project: &Project,
    args: &CreateApiArgs,
    group: &Group,
    kind: &Kind,
) -> Result<KindNames> {
    let mut short_names = Vec::new();
    for s in &args.short_names {
        let s = ShortName::parse(s)?;
        if short_names.contains(&s) {
            bail!("--short-name '{s}' is given twice; give each short name once");
        }
        short_names.push(s);
    }
    let Some(sibling) = project.versions_of(group, kind).next() else {
        let plural = match &args.plural {
            Some(p) => Plural::parse(p)?,
            None => Plural::of(kind)?,
        };
        return Ok(KindNames {
            plural,
            namespaced: args.namespaced.unwrap_or(true),
            short_names,
        });
    };
    let plural = match &sibling.plural {
        Some(p) => p.clone(),
        None => Plural::of(kind)?,
    };
    let namespaced = sibling.namespaced();
    let same_kind = format!("{kind} already exists in version {}", sibling.version);
    if args.plural.as_ref().is_some_and(|p| p != plural.as_ref()) {
        bail!(
            "{same_kind} with plural '{plural}', and a kind has one plural in all its versions: drop --plural"
        );
    }
    if args.namespaced.is_some_and(|n| n != namespaced) {
        bail!(
            "{same_kind}, where it is {}, and a kind has one scope in all its versions: drop --namespaced",
            if namespaced {
                "namespaced"
            } else {
                "cluster-scoped"
            }
        );
    }
    if !short_names.is_empty() && short_names != sibling.short_names {
        let known: Vec<&str> = sibling.short_names.iter().map(AsRef::as_ref).collect();
        bail!(
            "{same_kind} with short names {known:?}, and a kind has the same short names in all its versions: drop --short-name"
        );
    }
    Ok(KindNames {
        plural,
        namespaced,
        short_names: sibling.short_names.clone(),
    })
}

/// The deploy-image options, if --image or --plugins chose that template.
fn deploy_image(args: &CreateApiArgs) -> Result<Option<DeployImageOptions>> {
    if let Some(plugin) = &args.plugins
        && plugin != DEPLOY_IMAGE_PLUGIN
    {
        bail!(
            "unknown plugin '{plugin}': rbuilder's only plugin is '{DEPLOY_IMAGE_PLUGIN}' \
             (the same as giving --image)"
        );
    }
    let Some(image) = &args.image else {
        if args.plugins.is_some() {
            bail!(
                "--plugins {DEPLOY_IMAGE_PLUGIN} needs --image, e.g. --image stefanprodan/podinfo:6.7.1"
            );
        }
        let orphan = [
            (
                "--image-container-port",
                args.image_container_port.is_some(),
            ),
            (
                "--image-container-command",
                args.image_container_command.is_some(),
            ),
            ("--run-as-user", args.run_as_user.is_some()),
        ];
        if let Some((flag, _)) = orphan.iter().find(|(_, given)| *given) {
            bail!("{flag} only applies with --image: add --image <image> or drop {flag}");
        }
        return Ok(None);
    };
    if let Err(why) = deploy_image::image(image) {
        bail!("invalid --image '{image}': {why}");
    }
    let port = match &args.image_container_port {
        Some(p) => match deploy_image::port(p) {
            Ok(port) => Some(port),
            Err(why) => bail!("invalid --image-container-port '{p}': {why}"),
        },
        None => None,
    };
    let command = match &args.image_container_command {
        Some(c) => match deploy_image::command(c) {
            Ok(parts) => Some(parts),
            Err(why) => bail!("invalid --image-container-command '{c}': {why}"),
        },
        None => None,
    };
    let run_as_user = match &args.run_as_user {
        Some(u) => match deploy_image::run_as_user(u) {
            Ok(uid) => Some(uid),
            Err(why) => bail!("invalid --run-as-user '{u}': {why}"),
        },
        None => None,
    };
    Ok(Some(DeployImageOptions {
        image: image.clone(),
        // As kubebuilder records it: the arguments joined by commas.
        container_command: command.map(|parts| parts.join(",")),
        container_port: port,
        run_as_user,
    }))
}
