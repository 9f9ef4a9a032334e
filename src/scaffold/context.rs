//! The variables every template can use: the project's settings, the license header, the
//! versions of the dependencies and rbuilder's own.

use std::path::Path;

use crate::license;
use crate::project::Project;
use crate::scaffold::paths;
use crate::versions::VERSIONS;

/// The file holding the project's license header.
pub const BOILERPLATE: &str = "hack/boilerplate.txt";

/// The variables every template can use: the project's settings and the license header. The
/// header is the project's `hack/boilerplate.txt` when it has one (as in kubebuilder: edit it
/// to change the header of the files scaffolded from then on), else made from its settings.
pub fn project_context(root: &Path, project: &Project) -> tera::Context {
    let boilerplate = std::fs::read_to_string(root.join(BOILERPLATE)).ok();
    context_with_header(project, boilerplate)
}

/// The variables every template can use, with `boilerplate` as the license header (that of a
/// project being migrated, say), or, without one, the header made from the project's settings.
pub fn context_with_header(project: &Project, boilerplate: Option<String>) -> tera::Context {
    let mut ctx = tera::Context::new();
    let owner = project
        .owner
        .clone()
        .unwrap_or_else(|| format!("The {} Authors", project.project_name));
    let boilerplate = boilerplate.unwrap_or_else(|| {
        license::boilerplate(project.license, &owner, license::copyright_year())
    });
    let header: String = boilerplate
        .lines()
        .map(|l| {
            if l.is_empty() {
                "//\n".to_owned()
            } else {
                format!("// {l}\n")
            }
        })
        .collect();
    ctx.insert("project_name", &project.project_name);
    ctx.insert(
        "crate_name",
        &project.project_name.as_ref().replace('-', "_"),
    );
    ctx.insert(
        "manifests_package",
        &paths::manifests_package(project.project_name.as_ref()),
    );
    ctx.insert("domain", &project.domain);
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("multigroup", &project.multigroup);
    ctx.insert("license", &project.license);
    ctx.insert("spdx", &license::spdx(project.license));
    ctx.insert("owner", &owner);
    ctx.insert("boilerplate", &boilerplate);
    // Blank line after the header, so templates can start with `{{ header }}` either way.
    ctx.insert(
        "header",
        &if header.is_empty() {
            header
        } else {
            header + "\n"
        },
    );
    ctx.insert("versions", &VERSIONS);
    ctx.insert("rbuilder_version", env!("CARGO_PKG_VERSION"));
    ctx
}
