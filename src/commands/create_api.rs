//! `rbuilder create api`: a custom resource (types, CRD, sample, RBAC roles) and its
//! controller, registered at the project's markers; or a controller for a built-in type.

use std::path::Path;

use anyhow::{Result, bail};

use super::manifests::{crd_with_version, role_with_rules};
use super::{finish, project_context};
use crate::cli::CreateApiArgs;
use crate::model::{
    DeployImage, Flavor, Group, ImageReference, Kind, Plural, Resource, ShortName, Version, builtin,
};
use crate::project::{
    self, ApiEntry, DeployImageEntry, DeployImageOptions, DeployImagePlugin, Project, ResourceEntry,
};
use crate::scaffold::{Plan, Templates, markers};

/// The value of kubebuilder's --plugins that selects the deploy-image template.
const DEPLOY_IMAGE_PLUGIN: &str = "deploy-image/v1-alpha";

pub fn run(root: &Path, args: CreateApiArgs) -> Result<()> {
    let (plan, next) = plan(root, &args)?;
    finish(plan, args.dry_run, &next)
}

/// What `create api` with `args` writes in the project at `root`, and what to do next.
pub(super) fn plan(root: &Path, args: &CreateApiArgs) -> Result<(Plan, String)> {
    let mut project = Project::load(root)?;
    let resource = resource(&project, args)?;
    check_conflicts(&project, &resource, args)?;

    let templates = Templates::load(&[
        "api/",
        "controller/",
        "crd/",
        "e2e/",
        "inserts/",
        "rbac/",
        "samples/",
    ])?;
    let mut plan = Plan::new(root);
    let mut ctx = project_context(root, &project);
    ctx.insert("resource", &resource);
    ctx.insert("storage", &is_first_version(&project, &resource));
    ctx.insert("group_module", &resource.group.as_ref().replace('-', "_"));
    ctx.insert(
        "api_file",
        &format!("{}/{}.rs", resource.api_dir(), resource.module.file),
    );
    let scaffold = Scaffold {
        templates: &templates,
        ctx: &ctx,
        resource: &resource,
        force: args.force,
        replaced_rules: replaced_rules(&project, &resource, &templates)?,
    };
    // --resource=false on a resource the project has: only its controller is new.
    if resource.has_crd() && args.resource {
        scaffold.api(&mut plan, &project)?;
    }
    if resource.controller {
        scaffold.controller(&mut plan)?;
        if resource.has_crd() && resource.namespaced && is_first_version(&project, &resource) {
            scaffold.e2e(&mut plan)?;
        }
    }
    record(&mut project, &resource);
    plan.update(project::FILE, |_| project.to_yaml())?;

    let overwritten = plan.overwritten().join(", ");
    let mut next = String::new();
    if !overwritten.is_empty() {
        next.push_str(&format!("--force rewrote: {overwritten}\n"));
    }
    next.push_str(&format!(
        "Added {}. Next:\n  \
         edit the types, then `make manifests` to regenerate the CRD\n  \
         make test\n  \
         make install && make run   # against the cluster in your kubeconfig",
        resource.gvk()
    ));
    // Kind names change how rustfmt lays out lines: format the kind's own Rust files as
    // `cargo fmt` would (module registrations are inserted where rustfmt sorts them).
    let kind_files = [
        format!("{}/{}.rs", resource.api_dir(), resource.module.file),
        format!("src/controller/{}.rs", resource.module.file),
        format!("src/controller/{}/tests.rs", resource.module.file),
        format!("tests/e2e/{}.rs", resource.module.file),
    ];
    if let Err(note) = plan.format_rust(&kind_files) {
        eprintln!("note: {note}");
    }
    Ok((plan, next))
}

/// Validates the arguments against the project into the resource to scaffold.
fn resource(project: &Project, args: &CreateApiArgs) -> Result<Resource> {
    let version = Version::parse(&args.version)?;
    let kind = Kind::parse(&args.kind)?;
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
            let ignored = [
                ("--plural", args.plural.is_some()),
                ("--short-name", !args.short_names.is_empty()),
                ("--namespaced", args.namespaced.is_some()),
                ("--controller", args.controller.is_some()),
            ];
            if let Some((flag, _)) = ignored.iter().find(|(_, given)| *given) {
                bail!(
                    "{flag} does not apply to a built-in type: its names and scope are \
                     Kubernetes', and --resource=false scaffolds just its controller"
                );
            }
            let Some(b) = builtin::find(&args.group, &args.version, &args.kind) else {
                bail!(
                    "unknown built-in type {}/{} {}: rbuilder can write controllers for these \
                     types of group '{}': {}",
                    args.group,
                    args.version,
                    args.kind,
                    args.group,
                    builtin::kinds_in(&args.group).join(", ")
                );
            };
            let group = if b.api_group.is_empty() {
                Group::core()
            } else {
                Group::parse(b.group)?
            };
            if !b.namespaced && project.namespaced {
                bail!(
                    "{} is cluster-scoped, but this operator is scoped to one namespace (init \
                     --namespaced), whose Role cannot grant it; choose a namespaced type",
                    b.kind
                );
            }
            return Resource::builtin(b, group, version, kind);
        }
    }

    let group = Group::parse(&args.group)?;
    let domain = crate::model::Domain::parse(&project.domain)?;
    group.check_with_domain(&domain)?;
    if project.multigroup {
        group.module()?;
    }
    let names = kind_names(project, args, &kind)?;
    let namespaced = names.namespaced;
    if !namespaced && deploy_image.is_some() {
        bail!(
            "--image needs --namespaced=true: the Deployment it runs lives in the resource's \
             namespace"
        );
    }
    if !namespaced && project.namespaced {
        bail!(
            "--namespaced=false makes a cluster-scoped resource, but this operator is scoped \
             to one namespace (init --namespaced); make the resource namespaced"
        );
    }
    // A second version of a kind reuses the controller of the first by default.
    let kind_has_controller = project.custom_resources().any(|r| {
        r.group == args.group && r.kind == args.kind && r.version != args.version && r.controller
    });
    let controller = args.controller.unwrap_or(!kind_has_controller);
    if deploy_image.is_some() && !controller {
        bail!(
            "--image needs a controller to run the image, and this resource gets none \
             (--controller=false, or its kind's controller exists already in another version); \
             drop --image"
        );
    }

    let existing = project
        .custom_resources()
        .find(|r| r.group == args.group && r.version == args.version && r.kind == args.kind);
    if !args.resource {
        // Only a controller, for a resource this project already has.
        let Some(existing) = existing else {
            bail!(
                "--resource=false scaffolds only a controller, for a built-in type (e.g. \
                 --group apps --version v1 --kind Deployment) or for a resource this project \
                 already has; {}/{} {} is neither",
                args.group,
                args.version,
                args.kind
            );
        };
        if existing.controller && !args.force {
            bail!(
                "{}/{} {} already has a controller (use --force to scaffold it again)",
                args.group,
                args.version,
                args.kind
            );
        }
    }

    let flavor = match deploy_image {
        Some(d) => Flavor::DeployImage(d),
        None => Flavor::Plain,
    };
    Ok(Resource::custom(
        group,
        version,
        kind,
        names.plural,
        &project.domain,
        namespaced,
        names.short_names,
        controller,
        project.multigroup,
        flavor,
    ))
}

/// The names and scope a kind has in all its versions.
struct KindNames {
    plural: Plural,
    namespaced: bool,
    short_names: Vec<ShortName>,
}

/// The kind's plural, scope and short names: from its other versions when it has some (a
/// kind has one CRD, so they are the same in every version), else from the flags.
fn kind_names(project: &Project, args: &CreateApiArgs, kind: &Kind) -> Result<KindNames> {
    let mut short_names = Vec::new();
    for s in &args.short_names {
        let s = ShortName::parse(s)?;
        if short_names.contains(&s) {
            bail!("--short-name '{s}' is given twice; give each short name once");
        }
        short_names.push(s);
    }
    let sibling = project
        .custom_resources()
        .find(|r| r.group == args.group && r.kind == args.kind);
    let Some(sibling) = sibling else {
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
        Some(p) => Plural::parse(p)?,
        None => Plural::of(kind)?,
    };
    let namespaced = sibling.api.as_ref().is_none_or(|api| api.namespaced);
    let known: Vec<ShortName> = sibling
        .short_names
        .iter()
        .map(|s| ShortName::parse(s))
        .collect::<Result<_>>()?;
    let same_kind = format!(
        "{} already exists in version {}",
        args.kind, sibling.version
    );
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
    if !short_names.is_empty() && short_names != known {
        bail!(
            "{same_kind} with short names {:?}, and a kind has the same short names in all its versions: drop --short-name",
            sibling.short_names
        );
    }
    Ok(KindNames {
        plural,
        namespaced,
        short_names: known,
    })
}

/// The deploy-image options, if --image or --plugins chose that template.
fn deploy_image(args: &CreateApiArgs) -> Result<Option<DeployImage>> {
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
    let Some(reference) = ImageReference::parse(image) else {
        bail!(
            "invalid --image '{image}': an image reference is [registry[:port]/]path[:tag][@digest] \
             with a lower-case path, e.g. 'stefanprodan/podinfo:6.7.1'"
        );
    };
    let port = match &args.image_container_port {
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port >= 1 => Some(port),
            _ => bail!(
                "invalid --image-container-port '{p}': a port is a number from 1 to 65535, e.g. 8080"
            ),
        },
        None => None,
    };
    let command = match &args.image_container_command {
        Some(c) => {
            let parts: Vec<String> = c.split(',').map(|s| s.trim().to_owned()).collect();
            if parts
                .iter()
                .any(|p| p.is_empty() || p.chars().any(char::is_control))
            {
                bail!(
                    "invalid --image-container-command '{c}': give the command and its \
                     arguments separated by commas, none empty, e.g. 'memcached,-m=64,-v'"
                );
            }
            parts
        }
        None => Vec::new(),
    };
    let run_as_user = match &args.run_as_user {
        Some(u) => match u.parse::<i64>() {
            // 0 is root, which runAsNonRoot (the restricted standard) refuses to start.
            // Kubernetes takes user IDs up to 2^31 - 1.
            Ok(uid) if (1..=i64::from(i32::MAX)).contains(&uid) => Some(uid),
            _ => bail!(
                "invalid --run-as-user '{u}': a user ID is a whole number from 1 (not root) to \
                 2147483647, e.g. 1001"
            ),
        },
        None => None,
    };
    Ok(Some(DeployImage {
        image: image.clone(),
        updated_image: reference.with_another_tag(),
        port,
        command,
        run_as_user,
    }))
}

/// Refuses what would clash with the project: the same resource again (without --force),
/// or a second API group in a project that is not multigroup.
fn check_conflicts(project: &Project, r: &Resource, args: &CreateApiArgs) -> Result<()> {
    let force = args.force;
    check_kind_is_free(project, r)?;
    if !r.has_crd() {
        let exists = project
            .resources
            .iter()
            .any(|e| e.api.is_none() && e.group == r.group.as_ref() && e.kind == r.kind.as_str());
        if exists && !force {
            bail!(
                "a controller for {} already exists (use --force to scaffold it again)",
                r.gvk()
            );
        }
        return Ok(());
    }
    let exists = project
        .custom_resources()
        .any(|e| r.is(&e.group, &e.version, &e.kind));
    // --resource=false on an existing resource adds its controller (checked in `resource`).
    if exists && !force && args.resource {
        bail!(
            "{} already exists in this project; use --force to rewrite its scaffolded files \
             (the types, controller, CRD version, sample and roles; nothing else)",
            r.gvk()
        );
    }
    check_names_are_free(project, r)?;
    if !project.multigroup
        && let Some(other) = project
            .custom_resources()
            .find(|e| e.group != r.group.as_ref())
    {
        bail!(
            "group '{}' would be this project's second API group (it has '{}'); a project with \
             several groups keeps each in its own module: run `rbuilder edit --multigroup` \
             first, then create the API again",
            r.group,
            other.group
        );
    }
    Ok(())
}

/// A kind's controller, e2e test module and user roles are named after the kind alone
/// (`src/controller/<kind>.rs`), so a kind name can live in one group only, and a kind has one
/// controller, which reconciles all its versions.
fn check_kind_is_free(project: &Project, r: &Resource) -> Result<()> {
    let kind = r.kind.as_str();
    if let Some(other) = project
        .resources
        .iter()
        .find(|e| e.kind == kind && e.group != r.group.as_ref())
    {
        bail!(
            "kind {kind} already exists in group '{}' of this project: its controller, e2e test \
             and roles are named after the kind alone, so a kind name can be used in one group \
             only; choose another kind name",
            other.group
        );
    }
    let other_version_with_controller = project.resources.iter().find(|e| {
        e.kind == kind
            && e.group == r.group.as_ref()
            && e.version != r.version.as_ref()
            && e.controller
    });
    if r.controller
        && let Some(other) = other_version_with_controller
    {
        bail!(
            "{kind} already has a controller, scaffolded with version {}: one controller \
             reconciles a kind in all its versions; drop --controller",
            other.version
        );
    }
    Ok(())
}

/// A new kind's names must not be taken by another kind of its group: the API server would
/// refuse the CRD (NamesAccepted=False), and `Foo` next to `FooSpec` would clash in Rust.
fn check_names_are_free(project: &Project, r: &Resource) -> Result<()> {
    let kind = r.kind.as_str();
    let others = project
        .custom_resources()
        .filter(|e| e.group == r.group.as_ref() && e.kind != kind);
    let ours: Vec<String> = [r.plural.to_string(), r.kind.lower()]
        .into_iter()
        .chain(r.short_names.iter().map(ToString::to_string))
        .collect();
    for other in others {
        let lower = other.kind.to_ascii_lowercase();
        let theirs: Vec<&str> = [other.plural.as_deref().unwrap_or(&lower), lower.as_str()]
            .into_iter()
            .chain(other.short_names.iter().map(String::as_str))
            .collect();
        if let Some(name) = ours.iter().find(|n| theirs.contains(&n.as_str())) {
            bail!(
                "the name '{name}' is already used by kind {} in group {}: a kind's plural, \
                 singular and short names must be unique in its group; choose another --plural \
                 or --short-name",
                other.kind,
                r.api_group
            );
        }
        for suffix in ["Spec", "Status", "List"] {
            if kind == format!("{}{suffix}", other.kind) || other.kind == format!("{kind}{suffix}")
            {
                bail!(
                    "kind {kind} would clash with kind {} in group {}: the type {}{suffix} would \
                     be defined twice; choose another kind name",
                    other.kind,
                    r.api_group,
                    if kind.len() < other.kind.len() {
                        kind
                    } else {
                        other.kind.as_str()
                    },
                );
            }
        }
    }
    Ok(())
}

/// Whether this version is the kind's first, and so its CRD's storage version.
fn is_first_version(project: &Project, r: &Resource) -> bool {
    !project.custom_resources().any(|e| {
        e.group == r.group.as_ref() && e.kind == r.kind.as_str() && e.version != r.version.as_ref()
    })
}

/// Renders one resource's files into a plan.
struct Scaffold<'a> {
    templates: &'a Templates,
    ctx: &'a tera::Context,
    resource: &'a Resource,
    force: bool,
    /// Set when --force replaces the resource's controller.
    replaced_rules: Option<ReplacedRules>,
}

impl Scaffold<'_> {
    fn render(&self, name: &str) -> Result<String> {
        self.templates.render(name, self.ctx)
    }

    /// A file this resource owns: created, or rewritten with --force.
    fn own(&self, plan: &mut Plan, path: String, template: &str) -> Result<()> {
        let text = self.render(template)?;
        if self.force {
            plan.overwrite(path, text)
        } else {
            plan.create(path, text)
        }
    }

    /// Inserts a rendered snippet (one or more lines) before a marker.
    fn insert(&self, plan: &mut Plan, file: &str, marker: &str, snippet: &str) -> Result<()> {
        let text = self.render(snippet)?;
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        plan.update(file, |content| {
            markers::insert(content, file, marker, &lines)
        })
    }

    /// Creates `path` from `template` if it does not exist yet (shared module files).
    fn ensure(&self, plan: &mut Plan, path: &str, template: &str) -> Result<()> {
        if !plan.exists(path) {
            plan.create(path, self.render(template)?)?;
        }
        Ok(())
    }

    fn flavor(&self) -> &'static str {
        match self.resource.flavor {
            Flavor::Plain => "plain",
            Flavor::DeployImage(_) => "deploy_image",
            Flavor::Builtin { .. } => "builtin",
        }
    }

    fn api(&self, plan: &mut Plan, project: &Project) -> Result<()> {
        let first_version = is_first_version(project, self.resource);
        let r = self.resource;
        let dir = r.api_dir();
        let flavor = self.flavor();

        // src/api: the kind's module inside its version (and group) module.
        if project.multigroup {
            let group_dir = format!("src/api/{}", r.group.as_ref().replace('-', "_"));
            self.insert(
                plan,
                "src/api/mod.rs",
                "api-modules",
                "inserts/api_mod_group.rs",
            )?;
            self.ensure(plan, &format!("{group_dir}/mod.rs"), "api/group_mod.rs")?;
            self.insert(
                plan,
                &format!("{group_dir}/mod.rs"),
                "versions",
                "inserts/group_mod_version.rs",
            )?;
        } else {
            self.insert(
                plan,
                "src/api/mod.rs",
                "api-modules",
                "inserts/api_mod_version.rs",
            )?;
        }
        self.ensure(plan, &format!("{dir}/mod.rs"), "api/version_mod.rs")?;
        self.insert(
            plan,
            &format!("{dir}/mod.rs"),
            "kind-modules",
            "inserts/version_mod_kind.rs",
        )?;
        self.insert(
            plan,
            &format!("{dir}/mod.rs"),
            "kind-exports",
            "inserts/version_mod_export.rs",
        )?;
        self.own(
            plan,
            format!("{dir}/{}.rs", r.module.file),
            &format!("api/{flavor}.rs"),
        )?;
        self.insert(plan, "src/api/mod.rs", "crds", "inserts/api_mod_crd.rs")?;

        // config/crd: the CRD as `make manifests` writes it, listed in the kustomization.
        let crd_file = r.crd_file();
        let existing = plan.read(&crd_file)?;
        let crd = crd_with_version(
            existing.as_deref(),
            &self.render(&format!("crd/{flavor}.yaml"))?,
            &crd_file,
        )?;
        match existing {
            Some(_) => plan.update(crd_file, |_| Ok(crd))?,
            None => plan.create(crd_file, crd)?,
        }
        self.insert(
            plan,
            "config/crd/kustomization.yaml",
            "crdkustomizeresource",
            "inserts/crd_kustomization.yaml",
        )?;

        // config/rbac: roles for users of the kind (all its versions); config/samples: an
        // example object of this version.
        if first_version {
            for role in ["admin", "editor", "viewer"] {
                self.own(
                    plan,
                    format!("config/rbac/{}_{role}_role.yaml", r.kind.lower()),
                    &format!("rbac/{role}_role.yaml"),
                )?;
            }
            self.insert(
                plan,
                "config/rbac/kustomization.yaml",
                "rbac-roles",
                "inserts/rbac_kustomization.yaml",
            )?;
        }
        self.own(plan, r.sample_file(), &format!("samples/{flavor}.yaml"))?;
        self.insert(
            plan,
            "config/samples/kustomization.yaml",
            "manifestskustomizesamples",
            "inserts/samples_kustomization.yaml",
        )?;
        Ok(())
    }

    /// tests/e2e: the harness once, then one module per kind.
    fn e2e(&self, plan: &mut Plan) -> Result<()> {
        self.ensure(plan, "tests/e2e/main.rs", "e2e/main.rs")?;
        let path = format!("tests/e2e/{}.rs", self.resource.module.file);
        self.own(plan, path, &format!("e2e/{}.rs", self.flavor()))?;
        self.insert(
            plan,
            "tests/e2e/main.rs",
            "e2e-kinds",
            "inserts/e2e_kind.rs",
        )
    }

    fn controller(&self, plan: &mut Plan) -> Result<()> {
        let flavor = self.flavor();
        let file = &self.resource.module.file;
        self.own(
            plan,
            format!("src/controller/{file}.rs"),
            &format!("controller/{flavor}.rs"),
        )?;
        self.own(
            plan,
            format!("src/controller/{file}/tests.rs"),
            &format!("controller/{flavor}_tests.rs"),
        )?;
        self.insert(
            plan,
            "src/controller/mod.rs",
            "controller-modules",
            "inserts/controller_mod.rs",
        )?;
        self.insert(
            plan,
            "src/controller/mod.rs",
            "controllers",
            "inserts/controller_registry.rs",
        )?;
        let mut rules = self.render(&format!("rbac/rules/{flavor}.yaml"))?;
        rules.push_str(&self.render("rbac/rules/runtime.yaml")?);
        let file = "config/rbac/role.yaml";
        let revoked = match &self.replaced_rules {
            Some(replaced) => {
                rules.push_str(&replaced.kept);
                replaced.old.as_str()
            }
            None => "",
        };
        plan.update(file, |role| role_with_rules(role, &rules, revoked, file))
    }
}

/// The RBAC rules of a controller that --force replaces, which the manager's role loses
/// (unless another controller of the project needs them too).
struct ReplacedRules {
    /// What the replaced controller was granted.
    old: String,
    /// What the project's other controllers are granted.
    kept: String,
}

/// When --force scaffolds a resource's controller again (possibly from another template, e.g.
/// without --image), the rules of the controller it replaces, and those of the others.
fn replaced_rules(
    project: &Project,
    r: &Resource,
    templates: &Templates,
) -> Result<Option<ReplacedRules>> {
    if !r.controller {
        return Ok(None);
    }
    let is_this = |e: &ResourceEntry| r.is(&e.group, &e.version, &e.kind);
    let Some(old) = project
        .resources
        .iter()
        .find(|e| is_this(e) && e.controller)
    else {
        return Ok(None);
    };
    let mut kept = String::new();
    for other in project
        .resources
        .iter()
        .filter(|e| e.controller && !is_this(e))
    {
        kept.push_str(&controller_rules(project, other, templates)?);
    }
    Ok(Some(ReplacedRules {
        old: controller_rules(project, old, templates)?,
        kept,
    }))
}

/// The RBAC rules rbuilder scaffolded for the controller of a PROJECT entry.
fn controller_rules(project: &Project, e: &ResourceEntry, templates: &Templates) -> Result<String> {
    let (flavor, api_group) = match builtin::find(&e.group, &e.version, &e.kind) {
        Some(b) if e.api.is_none() => ("builtin", b.api_group.to_owned()),
        _ if project
            .deploy_image_entry(&e.group, &e.version, &e.kind)
            .is_some() =>
        {
            ("deploy_image", format!("{}.{}", e.group, e.domain))
        }
        _ => ("plain", format!("{}.{}", e.group, e.domain)),
    };
    let plural = match &e.plural {
        Some(plural) => plural.clone(),
        None => Plural::of(&Kind::parse(&e.kind)?)?.to_string(),
    };
    let mut ctx = tera::Context::new();
    ctx.insert(
        "resource",
        &serde_json::json!({ "api_group": api_group, "plural": plural }),
    );
    let rules = templates.render(&format!("rbac/rules/{flavor}.yaml"), &ctx)?;
    Ok(rules + &templates.render("rbac/rules/runtime.yaml", &ctx)?)
}

/// Records the resource in PROJECT (replacing its entry under --force).
fn record(project: &mut Project, r: &Resource) {
    let entry = ResourceEntry {
        api: r.has_crd().then(|| ApiEntry {
            crd_version: "v1".into(),
            namespaced: r.namespaced,
        }),
        controller: r.controller,
        domain: if r.has_crd() {
            project.domain.clone()
        } else {
            "k8s.io".into()
        },
        group: r.group.to_string(),
        kind: r.kind.to_string(),
        plural: Some(r.plural.to_string()),
        short_names: r.short_names.iter().map(ToString::to_string).collect(),
        version: r.version.to_string(),
    };
    let same = |e: &ResourceEntry| {
        e.group == entry.group && e.version == entry.version && e.kind == entry.kind
    };
    match project.resources.iter_mut().find(|e| same(e)) {
        Some(old) => {
            // --resource=false on an existing resource keeps its API; --controller adds one.
            let api = old.api.clone();
            *old = ResourceEntry {
                api: entry.api.or(api),
                controller: old.controller || entry.controller,
                ..entry
            };
        }
        None => project.resources.push(entry),
    }
    // The deploy-image entry describes the resource's current controller: --force without
    // --image drops it, with --image replaces it.
    if let Some(plugin) = &mut project.plugins.deploy_image {
        plugin
            .resources
            .retain(|e| !r.is(&e.group, &e.version, &e.kind));
    }
    if let Flavor::DeployImage(d) = &r.flavor {
        let plugin = project
            .plugins
            .deploy_image
            .get_or_insert_with(DeployImagePlugin::default);
        plugin.resources.push(DeployImageEntry {
            domain: project.domain.clone(),
            group: r.group.to_string(),
            kind: r.kind.to_string(),
            options: DeployImageOptions {
                image: d.image.clone(),
                container_command: (!d.command.is_empty()).then(|| d.command.join(",")),
                container_port: d.port,
                run_as_user: d.run_as_user,
            },
            version: r.version.to_string(),
        });
    }
    if project
        .plugins
        .deploy_image
        .as_ref()
        .is_some_and(|plugin| plugin.resources.is_empty())
    {
        project.plugins.deploy_image = None;
    }
}
