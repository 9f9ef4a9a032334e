//! Reading the CRD to generate types for: a file (or stdin, `-`) of one or more YAML
//! documents, of which the CustomResourceDefinition with the wanted group and kind is chosen,
//! and in it the wanted version and its schema.

use std::io::Read as _;

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;
use serde_json::Value;

use super::schema::Schema;
use crate::model::with_article;

/// What rbuilder reads of a CustomResourceDefinition (apiextensions.k8s.io/v1).
#[derive(Debug, Clone, Deserialize)]
pub struct Crd {
    pub metadata: Metadata,
    pub spec: CrdSpec,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CrdSpec {
    pub group: String,
    pub names: Names,
    pub scope: String,
    pub versions: Vec<CrdVersion>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Names {
    pub kind: String,
    pub plural: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CrdVersion {
    pub name: String,
    #[serde(default)]
    pub schema: Option<VersionSchema>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSchema {
    #[serde(rename = "openAPIV3Schema")]
    pub open_api_v3_schema: Option<Schema>,
}

/// The API version of the CRDs rbuilder reads (v1beta1 was removed in Kubernetes 1.22).
const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// The text of `path`, or of stdin for `-`.
pub fn read(path: &str) -> Result<String> {
    if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the CRD from stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| {
        format!("cannot read --external-api-path '{path}' (give a CRD's YAML file, or - for stdin)")
    })
}

/// The CustomResourceDefinitions in `text` (YAML, one or more documents); `source` names it
/// in errors. Other objects are skipped; a text without any CRD is an error.
pub fn parse_all(text: &str, source: &str) -> Result<Vec<Crd>> {
    let documents: Vec<Option<Value>> = serde_saphyr::from_multiple(text).map_err(|e| {
        anyhow::anyhow!(
            "{source} is not a CRD: it is not YAML ({}), and --external-api-path takes a \
             CustomResourceDefinition's YAML (e.g. from kubectl get crd <name> -o yaml)",
            crate::project::yaml_error(&e)
        )
    })?;
    let mut crds = Vec::new();
    let mut others = Vec::new();
    for doc in documents.into_iter().flatten() {
        let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != "CustomResourceDefinition" {
            others.push(if kind.is_empty() {
                "a document without a kind".to_owned()
            } else {
                with_article(kind)
            });
            continue;
        }
        if api_version != CRD_API_VERSION {
            bail!(
                "{source} holds a CustomResourceDefinition of apiVersion '{api_version}'; \
                 rbuilder reads {CRD_API_VERSION} (kubectl get crd <name> -o yaml gives it)"
            );
        }
        let crd: Crd = serde_json::from_value(doc).with_context(|| {
            format!("{source} holds a CustomResourceDefinition rbuilder cannot read")
        })?;
        crds.push(crd);
    }
    if crds.is_empty() {
        let found = if others.is_empty() {
            "nothing".to_owned()
        } else {
            others.join(", ")
        };
        bail!(
            "{source} is not a CRD: it holds {found}, and --external-api-path takes a \
             CustomResourceDefinition (e.g. from kubectl get crd <name> -o yaml)"
        );
    }
    Ok(crds)
}

/// Whether the command line's `--group` names the CRD group `full`: in full
/// (`cert-manager.io`), or as its first part (`cert-manager`, kubebuilder's --group with
/// --external-api-domain io).
pub fn group_matches(given: &str, domain: Option<&str>, full: &str) -> bool {
    match domain {
        Some(domain) => format!("{given}.{domain}") == full || given == full,
        None => given == full || full.split('.').next() == Some(given),
    }
}

/// The CRD of `crds` for `group` and `kind`, and its `version`'s schema.
pub fn select<'a>(
    crds: &'a [Crd],
    source: &str,
    group: &str,
    domain: Option<&str>,
    version: &str,
    kind: &str,
) -> Result<(&'a Crd, &'a Schema)> {
    let Some(crd) = crds
        .iter()
        .find(|c| c.spec.names.kind == kind && group_matches(group, domain, &c.spec.group))
    else {
        let held: Vec<String> = crds
            .iter()
            .map(|c| format!("{} (group {})", c.spec.names.kind, c.spec.group))
            .collect();
        let group = match domain {
            Some(domain) => format!("{group}.{domain}"),
            None => group.to_owned(),
        };
        bail!(
            "{source} has no CRD of kind {kind} in group {group}; it holds {}: give --group and \
             --kind of one of them",
            held.join(", ")
        );
    };
    let Some(v) = crd.spec.versions.iter().find(|v| v.name == version) else {
        let names: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        bail!(
            "CRD {} has no version {version}; its versions are: {}",
            crd.metadata.name,
            names.join(", ")
        );
    };
    let Some(schema) = v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    else {
        bail!(
            "CRD {} has no schema (openAPIV3Schema) in version {version}, so rbuilder cannot \
             tell the shape of its objects; use a CRD with a structural schema",
            crd.metadata.name
        );
    };
    Ok((crd, schema))
}
