//! kubebuilder's PROJECT file (format version "3", as kubebuilder v4.16 writes it:
//! `pkg/config/v3` and `pkg/model/resource` of its module), read as it is. Nothing is checked
//! here but the YAML's shape; fields rbuilder does not know are kept (`unknown`) so that the
//! migration can list them rather than drop them silently; fields read only to be ignored (the
//! Go module, say) are `IgnoredAny`, named with a leading `_`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// A field rbuilder does not know, with its value.
pub type Unknown = BTreeMap<String, serde_json::Value>;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KbProject {
    pub version: String,
    #[serde(default)]
    pub domain: Option<String>,
    /// The Go module: nothing in a Rust project takes it.
    #[serde(default, rename = "repo")]
    _repo: Option<IgnoredAny>,
    #[serde(default)]
    pub project_name: Option<String>,
    /// The kubebuilder that made the project; the Rust project records rbuilder's.
    #[serde(default, rename = "cliVersion")]
    _cli_version: Option<IgnoredAny>,
    /// A list, or (in older files) one string.
    #[serde(default)]
    pub layout: Layout,
    #[serde(default)]
    pub multigroup: bool,
    #[serde(default)]
    pub namespaced: bool,
    #[serde(default)]
    pub resources: Vec<KbResource>,
    /// Each plugin's configuration, by the plugin's key.
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
    #[serde(flatten)]
    pub unknown: Unknown,
}

/// kubebuilder's `layout`: the plugin chain the project was made with.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
pub enum Layout {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Layout {
    pub fn plugins(&self) -> Vec<&str> {
        match self {
            Layout::None => Vec::new(),
            Layout::One(one) => vec![one.as_str()],
            Layout::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KbResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub domain: String,
    pub version: String,
    pub kind: String,
    #[serde(default)]
    pub plural: Option<String>,
    /// The Go package of the types: the Rust project has its own modules.
    #[serde(default, rename = "path")]
    _path: Option<IgnoredAny>,
    /// Set when the project defines the resource (its CRD).
    #[serde(default)]
    pub api: Option<KbApi>,
    #[serde(default)]
    pub controller: bool,
    /// The named controllers of the kind (kubebuilder 4.16's `--controller-name`), in the
    /// order they were made.
    #[serde(default)]
    pub controllers: Vec<KbController>,
    #[serde(default)]
    pub webhooks: Option<KbWebhooks>,
    /// Another project's type (its Go module in `module`).
    #[serde(default)]
    pub external: bool,
    #[serde(default)]
    pub module: Option<String>,
    /// A Kubernetes built-in type.
    #[serde(default)]
    pub core: bool,
    #[serde(flatten)]
    pub unknown: Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KbApi {
    /// Always `v1` (kubebuilder v4 writes no other CRD version).
    #[serde(default, rename = "crdVersion")]
    _crd_version: Option<IgnoredAny>,
    #[serde(default)]
    pub namespaced: bool,
    /// Apply configurations for server-side apply (kubebuilder 4.16's `--ssa`): rbuilder's
    /// controllers apply with server-side apply whatever this says.
    #[serde(default, rename = "ssa")]
    _ssa: Option<IgnoredAny>,
    #[serde(flatten)]
    pub unknown: Unknown,
}

#[derive(Debug, Deserialize)]
pub struct KbController {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KbWebhooks {
    /// Always `v1`, as rbuilder's.
    #[serde(default, rename = "webhookVersion")]
    _webhook_version: Option<IgnoredAny>,
    #[serde(default)]
    pub defaulting: bool,
    #[serde(default)]
    pub validation: bool,
    #[serde(default)]
    pub conversion: bool,
    #[serde(default)]
    pub spoke: Vec<String>,
    #[serde(default)]
    pub defaulting_path: Option<String>,
    #[serde(default)]
    pub validation_path: Option<String>,
    #[serde(flatten)]
    pub unknown: Unknown,
}

/// `deploy-image.go.kubebuilder.io/v1-alpha`'s configuration.
#[derive(Debug, Default, Deserialize)]
pub struct KbDeployImage {
    #[serde(default)]
    pub resources: Vec<KbDeployImageResource>,
}

#[derive(Debug, Deserialize)]
pub struct KbDeployImageResource {
    #[serde(default)]
    pub group: String,
    pub version: String,
    pub kind: String,
    #[serde(default)]
    pub options: KbDeployImageOptions,
}

/// The options as kubebuilder writes them: every value a string.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KbDeployImageOptions {
    #[serde(default)]
    pub image: String,
    #[serde(default)]
    pub container_command: Option<String>,
    #[serde(default)]
    pub container_port: Option<Scalar>,
    #[serde(default)]
    pub run_as_user: Option<Scalar>,
}

/// A number that may be written as a string (`"11211"`) or not.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Number(i64),
    Text(String),
}

impl Scalar {
    pub fn text(&self) -> String {
        match self {
            Scalar::Number(n) => n.to_string(),
            Scalar::Text(text) => text.clone(),
        }
    }
}
