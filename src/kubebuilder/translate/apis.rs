//! Each of the project's own kinds gets the API its CRD describes: the CRD controller-gen wrote
//! into `config/crd/bases` from the Go types, kept in the Rust project, which makes the kind's
//! Rust types (`crate::external::own`), and from them, through kube-derive, the same schema. A
//! kind without its CRD falls back to rbuilder's placeholder fields; what the Rust types cannot
//! make of a CRD is listed, field by field. A deploy-image kind keeps kubebuilder's API (its
//! image from the manager's environment, `spec.size`, `spec.containerPort`).

use super::Translation;
use crate::external::own;
use crate::kubebuilder::go_files::GoFiles;
use crate::model::deploy_image;
use crate::model::{Kind, KubebuilderApi, Plural};
use crate::project::ResourceEntry;

impl Translation {
    /// Makes `entry`'s types from its CRD (`name` is the resource in messages), if the Go
    /// project has it; else says that its API falls back to rbuilder's placeholder.
    pub(super) fn api(&mut self, entry: &mut ResourceEntry, name: &str) {
        let Some(go) = self.go.as_mut() else {
            return;
        };
        let api_group = entry.api_group();
        let (kind, version) = (entry.kind.clone(), entry.version.clone());
        let api_file = format!(
            "src/api/{}{version}/{}.rs",
            match self.project.multigroup {
                true => format!("{}/", entry.group.module().unwrap_or_default()),
                false => String::new(),
            },
            kind.module().file
        );
        let placeholder = format!(
            "run `make manifests` in the kubebuilder project and migrate again, or write its \
             fields in {api_file} (rbuilder scaffolds placeholder fields there)"
        );
        let Some(found) = go.find(&api_group, kind.as_str(), version.as_ref()) else {
            self.leave_out(
                format!("{name}: its API"),
                format!(
                    "{} has no CRD of kind {kind} in group {api_group} with version {version}, \
                     the schema controller-gen writes from the Go types",
                    GoFiles::bases()
                ),
                placeholder,
            );
            return;
        };
        let types = match own::types(&found.crd, version.as_ref(), &found.copy) {
            Ok(types) => types,
            Err(error) => {
                self.leave_out(
                    format!("{name}: its API"),
                    format!("its CRD cannot be read: {error:#}"),
                    placeholder,
                );
                return;
            }
        };
        let crd_plural = found.crd["spec"]["names"]["plural"].as_str();
        let namespaced = found.crd["spec"]["scope"] == "Namespaced";
        if entry.namespaced() != namespaced
            || crd_plural.is_some_and(|p| entry.plural.as_ref().map(AsRef::as_ref) != Some(p))
        {
            // Its plural or scope is the CRD's: kubebuilder's PROJECT does not always say.
            match crd_plural.map(Plural::parse) {
                Some(Ok(plural)) if namespaced || !self.project.namespaced => {
                    entry.plural = Some(plural);
                    if let Some(api) = &mut entry.api {
                        api.namespaced = namespaced;
                    }
                }
                _ => {
                    self.leave_out(
                        format!("{name}: its API"),
                        "its CRD's plural or scope is one rbuilder refuses for this project",
                        placeholder,
                    );
                    return;
                }
            }
        }
        entry.path = Some(found.copy);
        for field in &types.unexpressed {
            self.leave_out(
                format!("{name}: {}", field.path),
                field.why.clone(),
                field.instead.replace("{types}", &api_file),
            );
        }
        let sample = format!("{}_{version}_{}.yaml", entry.group, kind.lower());
        let text = self
            .go
            .as_ref()
            .and_then(|go| go.sample(&sample))
            .and_then(|text| with_a_spec(text, types.requires_spec_fields()));
        // Without one, `create api` writes a sample made from the schema.
        if let Some(text) = text {
            self.files.push((format!("config/samples/{sample}"), text));
        }
        self.deploy_image_api(entry, &kind, &types.shape, name);
    }

    /// A deploy-image kind with kubebuilder's API runs the image of the manager's environment
    /// (kubebuilder's `<KIND>_IMAGE`, whose value becomes the image the Rust manager gets); one
    /// whose API lacks what the controller reads gets a plain controller.
    fn deploy_image_api(
        &mut self,
        entry: &ResourceEntry,
        kind: &Kind,
        shape: &own::ApiShape,
        name: &str,
    ) {
        let Some(deploy) = self.project.plugins.deploy_image.as_mut() else {
            return;
        };
        let Some(at) = deploy
            .resources
            .iter()
            .position(|d| entry.is(&d.group, &d.version, &d.kind))
        else {
            return;
        };
        let port = deploy.resources[at].options.container_port.is_some();
        let conditions = shape
            .status_field("conditions")
            .is_some_and(|f| f.ty == "Vec<metav1::Condition>");
        let api = KubebuilderApi::of(kind, shape, port).filter(|_| conditions);
        let Some(api) = api else {
            deploy.resources.remove(at);
            if deploy.resources.is_empty() {
                self.project.plugins.deploy_image = None;
            }
            self.leave_out(
                format!("{name}: its deploy-image controller (a plain one is scaffolded)"),
                format!(
                    "its API lacks what kubebuilder's deploy-image controller reads and writes: \
                     an int32 spec.size{}, and status.conditions",
                    if port {
                        ", an int32 spec.containerPort"
                    } else {
                        ""
                    }
                ),
                "run the image from the plain controller's apply",
            );
            return;
        };
        let Some(go) = self.go.as_ref() else {
            return;
        };
        let image = go.env(&api.image_env).map(str::to_owned);
        if let Some(image) = image.filter(|i| deploy_image::image(i).is_ok()) {
            deploy.resources[at].options.image = image;
        }
    }
}

/// A sample as the Rust project keeps it: as the Go project has it, but for an empty `spec:`
/// (only comments under it, kubebuilder's `# TODO(user): Add fields here`, which YAML reads as
/// null, and Go as an empty struct), which becomes `spec: {}`, the empty spec serde reads.
/// `None` for such a sample of a kind whose spec has `required` fields: it is no valid object
/// (the tests that apply it would fail), and `create api` makes one from the schema instead.
fn with_a_spec(sample: &str, required_fields: bool) -> Option<String> {
    let null_spec = serde_saphyr::from_str::<serde_json::Value>(sample)
        .is_ok_and(|doc| doc.get("spec").is_some_and(serde_json::Value::is_null));
    if !null_spec {
        return Some(sample.to_owned());
    }
    if required_fields {
        return None;
    }
    let sample = sample
        .lines()
        .map(|line| match line.trim_end() {
            "spec:" => "spec: {}\n".to_owned(),
            _ => format!("{line}\n"),
        })
        .collect();
    Some(sample)
}
