//! Validated names. Each type can only be built through its `parse`, so a value that
//! exists has passed Kubernetes' rules (and Rust's, where the name becomes code). Every
//! rejection names the value, says why, and says what would be accepted.
//!
//! Longer than most modules (about 480 lines before its tests): one small type per name a
//! user types, each with its rule, kept together because they share the DNS-1123 checks and
//! the lists of names Rust or the generated code reserve, which must agree with each other.

use std::fmt;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::rust_names::{RUST_KEYWORDS, RustModule, snake_case};

/// The most characters a DNS-1123 label may have.
const MAX_LABEL: usize = 63;
/// The most characters a DNS-1123 subdomain may have.
const MAX_SUBDOMAIN: usize = 253;

/// Why `s` is not a DNS-1123 label, if it is not one: lower-case alphanumerics and '-',
/// starting and ending with an alphanumeric, at most 63 characters.
fn dns_label_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        return Some("it is empty");
    }
    if s.len() > MAX_LABEL {
        return Some("it is longer than 63 characters");
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Some("it may only contain lower-case letters, digits and '-'");
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Some("it must start and end with a letter or digit");
    }
    None
}

/// Why `s` is not a DNS-1123 subdomain (dot-separated labels, at most 253 characters).
fn dns_subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if s.len() > MAX_SUBDOMAIN {
        return Some("it is longer than 253 characters".into());
    }
    for label in s.split('.') {
        if label.is_empty() {
            return Some("it has an empty part between dots".into());
        }
        if let Some(why) = dns_label_problem(label) {
            return Some(format!("its part '{label}' is not valid: {why}"));
        }
    }
    None
}

/// The project's domain, e.g. `my.domain`: API groups are `<group>.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Domain(String);

impl Domain {
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(why) = dns_subdomain_problem(s) {
            bail!(
                "invalid domain '{s}': {why}; a domain is a DNS-1123 subdomain, e.g. \
                 'my.domain' or 'example.com' (lower-case letters, digits, '-' and '.')"
            );
        }
        // The API server accepts CRDs in these groups only from the Kubernetes project (with
        // an api-approved.kubernetes.io annotation).
        if let Some(protected) = ["k8s.io", "kubernetes.io"]
            .into_iter()
            .find(|p| s == *p || s.ends_with(&format!(".{p}")))
        {
            bail!(
                "invalid domain '{s}': API groups under {protected} are reserved for the \
                 Kubernetes project, and the API server refuses other CRDs there; use a domain \
                 you own, e.g. 'example.com'"
            );
        }
        Ok(Self(s.to_owned()))
    }
}

/// An API group's name without the project's domain, e.g. `devops` in `devops.my.domain`
/// (kubebuilder accepts a DNS-1123 subdomain: `example.com` works too). Empty for the core
/// group of built-in types (Pods, Services, ...).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Group(String);

impl Group {
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(why) = dns_subdomain_problem(s) {
            bail!(
                "invalid group '{s}': {why}; a group is a DNS-1123 subdomain such as 'devops', \
                 'web-apps' or 'example.com'"
            );
        }
        Ok(Self(s.to_owned()))
    }

    /// The core group ("" in the API), which kubebuilder spells `core` on the command line.
    pub fn core() -> Self {
        Self(String::new())
    }

    pub fn is_core(&self) -> bool {
        self.0.is_empty()
    }

    /// The group as users read it: `core` for the core group.
    pub fn display_name(&self) -> &str {
        if self.is_core() { "core" } else { &self.0 }
    }

    /// The group's Rust module in a multigroup project: `web-apps` -> `web_apps`,
    /// `example.com` -> `example_com`.
    pub fn module(&self) -> Result<String> {
        let module = self.0.replace(['-', '.'], "_");
        let (why, instead) = if module.starts_with(|c: char| c.is_ascii_digit()) {
            (
                "would start with a digit, which Rust does not allow".to_owned(),
                format!("team-{}", self.0),
            )
        } else if RUST_KEYWORDS.contains(&module.as_str()) {
            (
                "would be a Rust keyword".to_owned(),
                format!("{}-apps", self.0),
            )
        } else if let Some(why) = reserved_module(&module) {
            (why.to_owned(), format!("{}-apps", self.0))
        } else {
            return Ok(module);
        };
        bail!(
            "invalid group '{}' for a multigroup project: its Rust module '{module}' {why}; \
             choose another group, e.g. '{instead}'",
            self.0
        );
    }

    /// The group's module under `src/controller/`, `src/webhook/` and the tests of a multigroup
    /// project, whatever kind of type it has: [`Group::module`], and `core` for the core group
    /// (kubebuilder's `internal/controller/core/`, k8s-openapi's `api::core`). A module named
    /// `core` beside the crate of that name is fine there: it is never the start of a `use`.
    pub fn dir_module(&self) -> Result<String> {
        if self.is_core() {
            return Ok("core".to_owned());
        }
        self.module()
    }

    /// Checks that `<group>.<domain>` is a valid API group name as a whole.
    pub fn check_with_domain(&self, domain: &Domain) -> Result<()> {
        let full = format!("{}.{}", self.0, domain.0);
        if let Some(why) = dns_subdomain_problem(&full) {
            bail!(
                "invalid API group '{full}': {why}; choose a shorter group or domain so that \
                 '<group>.<domain>' is a DNS-1123 subdomain of at most 253 characters"
            );
        }
        Ok(())
    }
}

/// An API version in the Kubernetes convention: `v1`, `v1alpha1`, `v2beta3`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Version(String);

impl Version {
    pub fn parse(s: &str) -> Result<Self> {
        if !is_kube_version(s) {
            bail!(
                "invalid version '{s}': versions follow the Kubernetes convention v<N>, \
                 v<N>alpha<M> or v<N>beta<M> with N, M >= 1, e.g. 'v1', 'v1alpha1', 'v2beta3'"
            );
        }
        Ok(Self(s.to_owned()))
    }
}

/// `v<N>`, `v<N>alpha<M>`, `v<N>beta<M>`; numbers have no leading zero.
fn is_kube_version(s: &str) -> bool {
    fn number(s: &str) -> bool {
        !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) && !s.starts_with('0')
    }
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let split = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, tail) = rest.split_at(split);
    if !number(major) {
        return false;
    }
    tail.is_empty()
        || ["alpha", "beta"]
            .iter()
            .any(|stage| tail.strip_prefix(stage).is_some_and(number))
}

/// Names a kind cannot take because the generated type would hide a type of Rust's prelude
/// that the generated code itself uses.
const PRELUDE_TYPES: &[&str] = &[
    "Box", "Err", "None", "Ok", "Option", "Result", "Self", "Some", "String", "Vec",
];

/// Why a kind or group cannot have the Rust module `module`, if it cannot.
fn reserved_module(module: &str) -> Option<&'static str> {
    match module {
        "mod" | "main" => Some(
            "would have the file name of a module's own file (mod.rs of each module, \
             main.rs of tests/e2e)",
        ),
        "tests" => Some("would have the name of the unit tests' module"),
        _ if RESERVED_MODULES.contains(&module) => Some(
            "would hide the crate of that name that the generated code uses \
             (`use` would be ambiguous)",
        ),
        _ => None,
    }
}

/// Module names a kind cannot take: the generated project's crates (a `kube` module next to
/// `use kube::...` is ambiguous), the `tests` module of `src/controller/mod.rs`, and the file
/// names `mod.rs` (of a version's module) and `main.rs` (of tests/e2e).
const RESERVED_MODULES: &[&str] = &[
    "alloc",
    "anyhow",
    "axum",
    "clap",
    "core",
    "futures",
    "http",
    "k8s_openapi",
    "kube",
    "main",
    "mod",
    "prometheus_client",
    "rbuilder_runtime",
    "schemars",
    "serde",
    "serde_json",
    "serde_saphyr",
    "std",
    "tests",
    "thiserror",
    "tokio",
    "tokio_util",
    "tower_test",
    "tracing",
    "tracing_subscriber",
];

/// A resource kind: UpperCamelCase ASCII, e.g. `DemoMicroService`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Kind(String);

impl Kind {
    pub fn parse(s: &str) -> Result<Self> {
        let accepted = "a kind is UpperCamelCase ASCII letters and digits starting with an \
                        upper-case letter, at most 59 characters, e.g. 'DemoMicroService'";
        if s.is_empty() {
            bail!("invalid kind '': it is empty; {accepted}");
        }
        if !s.starts_with(|c: char| c.is_ascii_uppercase()) {
            bail!("invalid kind '{s}': it must start with an upper-case letter; {accepted}");
        }
        if !s.chars().all(|c| c.is_ascii_alphanumeric()) {
            bail!("invalid kind '{s}': it may only contain ASCII letters and digits; {accepted}");
        }
        // The CRD's list kind, <Kind>List, must fit a DNS-1035 label too.
        if s.len() > MAX_LABEL - "List".len() {
            bail!(
                "invalid kind '{s}': it is longer than 59 characters (its list kind {s}List must fit 63); {accepted}"
            );
        }
        let module = snake_case(s);
        if module == "controller" || is_kube_version(&module) {
            bail!(
                "invalid kind '{s}': its Rust module '{module}' would have the name of the \
                 module it sits in (src/controller, src/api/<version>); choose another name, \
                 e.g. '{s}Resource'"
            );
        }
        if let Some(why) = reserved_module(&module) {
            bail!(
                "invalid kind '{s}': its Rust module '{module}' {why}; choose another name, \
                 e.g. '{s}Resource'"
            );
        }
        if PRELUDE_TYPES.contains(&s) {
            bail!(
                "invalid kind '{s}': the generated Rust type would hide Rust's own '{s}'; \
                 choose another name, e.g. '{s}Resource'"
            );
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The kind in lower case, as kubebuilder writes it in file names: `demomicroservice`.
    pub fn lower(&self) -> String {
        self.0.to_ascii_lowercase()
    }

    /// The Rust module (and file stem) for this kind: snake case, e.g. `demo_micro_service`.
    pub fn module(&self) -> RustModule {
        RustModule::new(snake_case(&self.0))
    }
}

/// The resource's plural, e.g. `demomicroservices`: the CRD's name is `<plural>.<group>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Plural(String);

impl Plural {
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(why) = dns_label_problem(s) {
            bail!(
                "invalid plural '{s}': {why}; a plural is a lower-case DNS-1123 label such \
                 as 'demomicroservices'"
            );
        }
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            bail!("invalid plural '{s}': it must start with a letter, e.g. 'demomicroservices'");
        }
        Ok(Self(s.to_owned()))
    }

    /// kubebuilder's plural of a kind: lower-cased, then English plural rules applied to its
    /// last word (DemoMicroService -> demomicroservices, SalesPerson -> salespeople).
    pub fn of(kind: &Kind) -> Result<Self> {
        let snake = snake_case(&kind.0);
        let last = snake.rsplit('_').next().unwrap_or(&snake);
        let stem = &kind.lower()[..kind.0.len() - last.len()];
        let plural = format!("{stem}{}", super::plural::of_word(last));
        Self::parse(&plural).map_err(|e| {
            anyhow::anyhow!("{e} (computed from kind '{kind}'; pass a shorter --plural)")
        })
    }
}

/// A short name for `kubectl get`, e.g. `dms`: lower-case letters and digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct ShortName(String);

impl ShortName {
    pub fn parse(s: &str) -> Result<Self> {
        let valid = !s.is_empty()
            && s.len() <= MAX_LABEL
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !valid {
            bail!(
                "invalid short name '{s}': a short name is lower-case letters and digits \
                 starting with a letter, e.g. 'dms'"
            );
        }
        Ok(Self(s.to_owned()))
    }
}

/// The name of one of a kind's controllers (`create api --controller-name`), as kubebuilder
/// records it in PROJECT: a DNS-1035 label, e.g. `captain-backup`. It names the controller in
/// logs and metrics (`Reconciler::NAME`), its module (`captain_backup`) and its reconciler
/// (`CaptainBackupReconciler`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct ControllerName(String);

impl ControllerName {
    pub fn parse(s: &str) -> Result<Self> {
        let accepted = "a controller name is a DNS-1035 label: lower-case letters, digits and \
                        '-', starting with a letter, e.g. 'captain-backup'";
        if let Some(why) = dns_label_problem(s) {
            bail!("invalid controller name '{s}': {why}; {accepted}");
        }
        if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
            bail!("invalid controller name '{s}': it must start with a letter; {accepted}");
        }
        let module = s.replace('-', "_");
        if module == "controller" {
            bail!(
                "invalid controller name '{s}': its Rust module '{module}' would have the name \
                 of the module it sits in (src/controller); choose another name, e.g. '{s}-2'"
            );
        }
        if let Some(why) = reserved_module(&module) {
            bail!(
                "invalid controller name '{s}': its Rust module '{module}' {why}; choose \
                 another name, e.g. '{s}-controller'"
            );
        }
        Ok(Self(s.to_owned()))
    }

    /// The controller's Rust module (and file stem): `-` becomes `_`, as kubebuilder names
    /// its file (`captain_backup`).
    pub fn module(&self) -> RustModule {
        RustModule::new(self.0.replace('-', "_"))
    }

    /// Its reconciler type, as kubebuilder names it: each part between `-` capitalized, then
    /// `Reconciler` (`captain-backup` -> `CaptainBackupReconciler`).
    pub fn reconciler(&self) -> String {
        let mut name: String = self
            .0
            .split('-')
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect();
        name.push_str("Reconciler");
        name
    }

    /// The name without its `-`: two names that differ only there (`captain-backup`,
    /// `captainbackup`) would make the same reconciler type, as kubebuilder checks too.
    pub fn normalized(&self) -> String {
        self.0.replace('-', "")
    }
}

/// The project's name, e.g. `example`: the Cargo package, the manager binary, the kustomize
/// name prefix and the namespace `<name>-system`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct ProjectName(String);

/// Names the generated Cargo package cannot take: its own dependencies, binaries and test
/// targets, crates every Rust program already has, and the folders cargo keeps under
/// target/debug (a binary may not be named like them).
const RESERVED_PROJECT_NAMES: &[&str] = &[
    "alloc",
    "anyhow",
    "axum",
    "build",
    "clap",
    "core",
    "deps",
    "e2e",
    "examples",
    "futures",
    "http",
    "incremental",
    "k8s-openapi",
    "kube",
    "manifests",
    "prometheus-client",
    "proc-macro",
    "rbuilder-runtime",
    "schemars",
    "serde",
    "serde-json",
    "serde-saphyr",
    "std",
    "test",
    "thiserror",
    "tokio",
    "tokio-util",
    "tower-test",
    "tracing",
    "tracing-subscriber",
];

impl ProjectName {
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(why) = dns_label_problem(s) {
            bail!(
                "invalid project name '{s}': {why}; it must be a DNS-1123 label such as \
                 'example' or 'guestbook-operator'"
            );
        }
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            bail!(
                "invalid project name '{s}': it must start with a letter to be a valid Rust \
                 crate name, e.g. 'operator-{s}'"
            );
        }
        let snake = s.replace('-', "_");
        if RESERVED_PROJECT_NAMES.contains(&s) || RUST_KEYWORDS.contains(&snake.as_str()) {
            bail!(
                "invalid project name '{s}': it is reserved in Rust or clashes with a crate \
                 or binary of the generated project; choose another, e.g. '{s}-operator'"
            );
        }
        // The longest object name derived from it must fit Kubernetes' 63 characters.
        let longest = format!("{s}{LONGEST_NAME_SUFFIX}");
        if longest.len() > MAX_LABEL {
            bail!(
                "invalid project name '{s}': it is longer than {} characters, and the metrics \
                 Service '{longest}' must fit Kubernetes' limit of 63; choose a shorter name",
                MAX_LABEL - LONGEST_NAME_SUFFIX.len()
            );
        }
        Ok(Self(s.to_owned()))
    }
}

/// The suffix of the longest object name kustomize makes from the project name (its
/// namePrefix plus the metrics Service's name): a Service name is a DNS-1123 label.
const LONGEST_NAME_SUFFIX: &str = "-controller-manager-metrics-service";

macro_rules! display_as_str {
    ($($name:ident),*) => {$(
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    )*};
}
display_as_str!(
    Domain,
    Group,
    Version,
    Kind,
    Plural,
    ShortName,
    ProjectName,
    ControllerName
);

/// Reading a name from a file (PROJECT) validates it as the command line does.
macro_rules! parsed_from_string {
    ($($name:ident),*) => {$(
        impl TryFrom<String> for $name {
            type Error = anyhow::Error;
            fn try_from(s: String) -> Result<Self> {
                Self::parse(&s)
            }
        }
    )*};
}
parsed_from_string!(
    Domain,
    Version,
    Kind,
    Plural,
    ShortName,
    ProjectName,
    ControllerName
);

impl TryFrom<String> for Group {
    type Error = anyhow::Error;
    /// PROJECT records the core group of built-in types as "".
    fn try_from(s: String) -> Result<Self> {
        if s.is_empty() {
            Ok(Self::core())
        } else {
            Self::parse(&s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains() {
        for ok in ["my.domain", "example.com", "a", "x-1.io", "notk8s.io"] {
            assert!(Domain::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "My_Domain",
            "-x.com",
            "a..b",
            "",
            "x.",
            "UPPER.io",
            "a_b.io",
            "k8s.io",
            "apps.k8s.io",
            "x.kubernetes.io",
        ] {
            let err = Domain::parse(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
            assert!(err.contains("e.g."), "{err}");
        }
    }

    #[test]
    fn versions() {
        for ok in ["v1", "v2", "v10", "v1alpha1", "v2beta3", "v1beta10"] {
            assert!(Version::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "1", "v", "v0", "V1", "v1alpha", "v1gamma1", "v01", "v1alpha0", "v1-beta1",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds() {
        for ok in ["DemoMicroService", "Guestbook", "Type", "A1"] {
            assert!(Kind::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "demo",
            "Demo-Service",
            "Démo",
            "",
            "Demo_Service",
            "1Demo",
            "Option",
            "Kube",
            "Tests",
        ] {
            assert!(Kind::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn modules_are_valid_rust() {
        let module = |k: &str| Kind::parse(k).unwrap().module();
        assert_eq!(module("DemoMicroService").ident, "demo_micro_service");
        assert_eq!(module("Type").ident, "r#type");
        assert_eq!(module("Type").file, "type");
        assert_eq!(module("Match").ident, "r#match");
        assert_eq!(module("Super").ident, "super_");
        assert_eq!(module("Super").file, "super_");
    }

    #[test]
    fn plurals_match_kubebuilder() {
        for (kind, plural) in [
            ("Guestbook", "guestbooks"),
            ("Busybox", "busyboxes"),
            ("Policy", "policies"),
            ("Person", "people"),
            ("DemoMicroService", "demomicroservices"),
            ("Memcached", "memcacheds"),
            ("Status", "statuses"),
            ("Gateway", "gateways"),
            ("Match", "matches"),
            ("Index", "indices"),
            ("SalesPerson", "salespeople"),
            ("Human", "humans"),
            ("Cafe", "cafes"),
            ("Knife", "knives"),
        ] {
            assert_eq!(
                Plural::of(&Kind::parse(kind).unwrap()).unwrap().0,
                plural,
                "{kind}"
            );
        }
    }

    #[test]
    fn project_names() {
        for ok in ["example", "guestbook-operator", "op2"] {
            assert!(ProjectName::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "Example",
            "1op",
            "kube",
            "my_op",
            "",
            "type",
            "manifests",
            "-x",
            "build",
            "clap",
            "a-project-name-of-twenty-nine",
        ] {
            assert!(ProjectName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn groups_are_subdomains_and_plurals_labels() {
        assert!(Group::parse("devops").is_ok());
        assert!(Group::parse("Dev").is_err());
        // kubebuilder's own testdata uses dotted groups.
        let dotted = Group::parse("example.com").unwrap();
        assert_eq!(dotted.module().unwrap(), "example_com");
        assert!(Group::parse("dev..ops").is_err());
        assert!(Group::parse("-dev").is_err());
        assert!(Plural::parse("dms").is_ok());
        assert!(Plural::parse("Dms").is_err());
        assert!(ShortName::parse("dms").is_ok());
        assert!(ShortName::parse("d-ms").is_err());
    }

    #[test]
    fn controller_names() {
        let name = ControllerName::parse("captain-backup").unwrap();
        assert_eq!(name.module().file, "captain_backup");
        assert_eq!(name.reconciler(), "CaptainBackupReconciler");
        assert_eq!(name.normalized(), "captainbackup");
        assert_eq!(
            ControllerName::parse("type").unwrap().module().ident,
            "r#type"
        );
        assert_eq!(
            ControllerName::parse("v2-sync").unwrap().reconciler(),
            "V2SyncReconciler"
        );
        for bad in [
            "",
            "Captain",
            "captain_backup",
            "-x",
            "x-",
            "2nd",
            "mod",
            "tests",
            "controller",
            "kube",
        ] {
            assert!(ControllerName::parse(bad).is_err(), "{bad}");
        }
        let long = "a".repeat(64);
        assert!(ControllerName::parse(&long).is_err());
    }
}
