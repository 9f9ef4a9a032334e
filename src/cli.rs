//! The command line, with clap's derive API. Values are checked later, in `model`, so that
//! every rejection carries the same kind of message whichever command it comes from.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

use crate::project::License;

#[derive(Debug, Parser)]
#[command(
    name = "rbuilder",
    version = crate::versions::RBUILDER,
    about = "Scaffold Kubernetes operators in Rust, built on kube-rs",
    long_about = "rbuilder is kubebuilder for Rust: it lays out an operator project built on \
                  kube-rs, then adds custom resources to it (types, CRD, reconciler, RBAC, \
                  samples). It works offline and never compiles anything.",
    after_help = "Example:\n  mkdir example && cd example\n  rbuilder init --domain my.domain\n  \
                  rbuilder create api --group devops --kind DemoMicroService"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the command line. `rbuilder create-api ...` is taken for `rbuilder create api
    /// ...` (an alias kept for scripts) before clap sees it, rather than as a hidden
    /// subcommand: clap offers hidden subcommands in its suggestions (`rbuilder creat` would
    /// suggest `create-api`), and the alias should never be shown.
    pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Self, clap::Error> {
        let mut args: Vec<OsString> = args.into_iter().collect();
        if args
            .get(1)
            .is_some_and(|command| command == CREATE_API_ALIAS)
        {
            args.splice(1..2, ["create".into(), "api".into()]);
        }
        Self::try_parse_from(args)
    }
}

/// The one-word alias of `create api`.
const CREATE_API_ALIAS: &str = "create-api";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new operator project in the current folder
    #[command(after_help = "Example:\n  mkdir example && cd example\n  \
                            rbuilder init --domain my.domain --owner \"Jane Doe\"\n  \
                            rbuilder init --domain my.domain --license-file ../header.txt")]
    Init(InitArgs),
    /// Add something to the project (an API: a custom resource and its controller)
    #[command(subcommand)]
    Create(CreateCommand),
    /// Change project-wide settings recorded in PROJECT
    #[command(
        after_help = "Examples:\n  rbuilder edit --multigroup\n  rbuilder edit --namespaced\n  \
                            rbuilder edit --license mit --owner \"Jane Doe\"\n  \
                            rbuilder edit --license-file ../header.txt\n  \
                            rbuilder edit --plugins grafana/v1-alpha\n  \
                            rbuilder edit --plugins autoupdate/v1-alpha\n  \
                            rbuilder edit --plugins helm/v2-alpha   # a Helm chart in dist/chart; then:\n  \
                            make helm                               # its templates, from config/default\n  \
                            make helm-deploy IMG=registry.example/op:0.1.0"
    )]
    Edit(EditArgs),
    /// Rewrite the files rbuilder owns (the runtime) for this rbuilder; list your files that a
    /// new scaffold would write differently
    #[command(after_help = "Example:\n  rbuilder update --dry-run\n  rbuilder update")]
    Update(UpdateArgs),
    /// Experimental commands, as in kubebuilder
    #[command(subcommand)]
    Alpha(AlphaCommand),
    /// Print rbuilder's version and the versions of what it generates for
    #[command(after_help = "Example:\n  rbuilder version")]
    Version,
    /// Print a shell completion script
    #[command(
        after_help = "Example:\n  rbuilder completion bash > ~/.local/share/bash-completion/completions/rbuilder\n  \
                            rbuilder completion zsh > \"${fpath[1]}/_rbuilder\""
    )]
    Completion {
        /// The shell to complete for
        shell: Shell,
    },
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The domain of the project's API groups: `create api --group devops` makes devops.<domain>
    #[arg(long, default_value = "my.domain")]
    pub domain: String,
    /// The project's name: the Cargo package, the binary, the namespace <name>-system [default: the folder's name]
    #[arg(long)]
    pub project_name: Option<String>,
    /// The copyright owner written in the license header [default: "The <project> Authors"]
    #[arg(long)]
    pub owner: Option<String>,
    /// The license header put at the top of generated source files
    #[arg(long, value_enum, default_value = "apache2")]
    pub license: LicenseArg,
    /// A file whose text is the license header (hack/boilerplate.txt); overrides --license, as kubebuilder's
    #[arg(long, value_name = "FILE")]
    pub license_file: Option<PathBuf>,
    /// Watch one namespace (WATCH_NAMESPACE) with a Role instead of the whole cluster
    #[arg(long)]
    pub namespaced: bool,
    /// Put each API group in its own module (src/api/<group>/<version>)
    #[arg(long)]
    pub multigroup: bool,
    /// kubebuilder's optional plugins, comma-separated: helm/v2-alpha (a Helm chart in
    /// dist/chart), grafana/v1-alpha (Grafana dashboards in grafana/), autoupdate/v1-alpha (a
    /// weekly workflow that runs `rbuilder update` and opens a pull request)
    #[arg(long, value_name = "PLUGINS")]
    pub plugins: Option<String>,
    /// Print the files that would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `--license`: the license header of generated source files.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LicenseArg {
    Apache2,
    Mit,
    None,
}

impl From<LicenseArg> for License {
    fn from(license: LicenseArg) -> Self {
        match license {
            LicenseArg::Apache2 => License::Apache2,
            LicenseArg::Mit => License::Mit,
            LicenseArg::None => License::None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add an API: a custom resource (Rust types, CRD, sample) and its controller
    #[command(after_help = "Examples:\n  \
        rbuilder create api --group devops --kind DemoMicroService\n  \
        rbuilder create api --group devops --version v1 --kind DemoMicroService \\\n      \
        --image stefanprodan/podinfo:6.7.1 --image-container-port 9898 --short-name dms\n  \
        rbuilder create api --group devops --kind DemoMicroService --resource=false \\\n      \
        --controller-name dms-backup   # a second controller for the kind\n  \
        rbuilder create api --group apps --version v1 --kind Deployment --resource=false\n  \
        rbuilder create api --group cert-manager.io --version v1 --kind Certificate \\\n      \
        --resource=false --external-api-path cert-manager.crds.yaml")]
    Api(Box<CreateApiArgs>),
    /// Add webhooks to one of the project's kinds (defaulting, validation, conversion between
    /// its versions), or to a Kubernetes built-in type or another project's custom resource
    /// (defaulting, validation)
    #[command(after_help = "Examples:\n  \
        rbuilder create webhook --group devops --version v1 --kind DemoMicroService \\\n      \
        --defaulting --programmatic-validation\n  \
        rbuilder create webhook --group devops --version v1 --kind DemoMicroService \\\n      \
        --conversion --spoke v2\n  \
        rbuilder create webhook --group core --version v1 --kind Pod --defaulting\n  \
        rbuilder create webhook --group devops --version v1 --kind DemoMicroService \\\n      \
        --programmatic-validation --validation-path /validate-dms\n  \
        rbuilder create webhook --group cert-manager --external-api-domain io --version v1 \\\n      \
        --kind Issuer --defaulting --external-api-path issuers.cert-manager.io.yaml")]
    Webhook(CreateWebhookArgs),
}

#[derive(Debug, Args)]
pub struct CreateWebhookArgs {
    /// The kind's API group, without the domain (`core`, `apps`, ... for a built-in type;
    /// another project's in full, cert-manager.io, or its first part with
    /// --external-api-domain)
    #[arg(long)]
    pub group: String,
    /// The kind's version that the webhooks are for (with --conversion: the hub, the version
    /// every other converts to and from)
    #[arg(long, default_value = "v1")]
    pub version: String,
    /// The kind, one of the project's (DemoMicroService), a built-in type (Pod) or another
    /// project's (Issuer)
    #[arg(long)]
    pub kind: String,
    /// The CRD (a YAML file, or - for stdin) of another project's custom resource, whose Rust
    /// types are written if the project has none yet (as create api --resource=false
    /// --controller=false --external-api-path does)
    #[arg(long, value_name = "FILE")]
    pub external_api_path: Option<String>,
    /// With --external-api-path: the domain of the CRD's group when --group gives only its
    /// first part (--group cert-manager --external-api-domain io)
    #[arg(long, value_name = "DOMAIN")]
    pub external_api_domain: Option<String>,
    /// A defaulting (mutating) webhook: sets what objects leave unset
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook: refuses objects with checks the CRD's schema cannot express
    #[arg(long)]
    pub programmatic_validation: bool,
    /// A conversion webhook between --version (the hub) and the --spoke versions
    #[arg(long)]
    pub conversion: bool,
    /// With --conversion: a version of the kind that converts to and from the hub (repeat, or
    /// separate with commas)
    #[arg(long = "spoke", value_name = "VERSION", value_delimiter = ',')]
    pub spokes: Vec<String>,
    /// With --defaulting: serve it at this path instead of /mutate-<group>-<version>-<kind>
    #[arg(long, value_name = "PATH")]
    pub defaulting_path: Option<String>,
    /// With --programmatic-validation: serve it at this path instead of /validate-<group>-<version>-<kind>
    #[arg(long, value_name = "PATH")]
    pub validation_path: Option<String>,
    /// Rewrite this kind's webhook files if they exist (never other files)
    #[arg(long)]
    pub force: bool,
    /// Print the files that would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct CreateApiArgs {
    /// The API group, without the domain: devops makes devops.<domain>
    #[arg(long)]
    pub group: String,
    /// The API version: v1, v1alpha1, v2beta3, ...
    #[arg(long, default_value = "v1")]
    pub version: String,
    /// The kind, in UpperCamelCase: DemoMicroService
    #[arg(long)]
    pub kind: String,
    /// The resource's plural [default: computed from the kind like kubebuilder, e.g. policies]
    #[arg(long)]
    pub plural: Option<String>,
    /// Whether the resource lives in a namespace (false: cluster-scoped) [default: true, or the
    /// kind's scope in its other versions]
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// A short name for kubectl, e.g. dms (repeat for more)
    #[arg(long = "short-name", value_name = "NAME")]
    pub short_names: Vec<String>,
    /// Scaffold the resource (types, CRD, sample); false: a controller for a built-in type
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub resource: bool,
    /// Scaffold a controller [default: true, unless the kind already has one in another version]
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL")]
    pub controller: Option<bool>,
    /// With --resource=false: add a second controller for the kind, named so (a DNS-1035 label,
    /// e.g. dms-backup), with its own file, RBAC rules and registration; the kind's own name
    /// (its kind in lower case) names its first controller
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,
    /// Rewrite this resource's scaffolded files if they exist (never other files)
    #[arg(long)]
    pub force: bool,
    /// Print the files that would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Make the controller run this container image as a Deployment (deploy-image template)
    #[arg(long)]
    pub image: Option<String>,
    /// With --image: the port the container listens on
    #[arg(long, value_name = "PORT")]
    pub image_container_port: Option<String>,
    /// With --image: the container's command, comma-separated (e.g. "memcached,-m=64")
    #[arg(long, value_name = "COMMAND")]
    pub image_container_command: Option<String>,
    /// With --image: the user ID the container runs as
    #[arg(long, value_name = "UID", allow_hyphen_values = true)]
    pub run_as_user: Option<String>,
    /// kubebuilder's plugin chooser; `deploy-image/v1-alpha` is the same as giving --image
    #[arg(long, value_name = "PLUGIN")]
    pub plugins: Option<String>,
    /// With --resource=false: the CRD (a YAML file, or - for stdin) of another project's custom
    /// resource to write Rust types and a controller for
    #[arg(long, value_name = "FILE")]
    pub external_api_path: Option<String>,
    /// With --external-api-path: the domain of the CRD's group when --group gives only its
    /// first part (--group cert-manager --external-api-domain io)
    #[arg(long, value_name = "DOMAIN")]
    pub external_api_domain: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Also overwrite rbuilder-owned files that were edited by hand (their changes are lost)
    #[arg(long)]
    pub force: bool,
    /// Print the files that would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Scaffold the project anew from its PROJECT file into another folder (replaying init and
    /// every create api), to compare it with what rbuilder writes today; or migrate a
    /// kubebuilder project (layout go.kubebuilder.io/v4) to Rust
    #[command(
        after_help = "Examples:\n  rbuilder alpha generate --output-dir ../example-fresh\n  \
                      diff -r . ../example-fresh\n  \
                      rbuilder alpha generate --input-dir ../my-go-operator --output-dir ../my-rust-operator\n\n\
                      Given a kubebuilder project, it writes the Rust project with the same kinds, \
                      versions, controllers,\nwebhooks, conversion spokes and plugins, and lists \
                      what it left out, each with what to run instead.\n\
                      Exit status: 0 when everything was carried over; 3 when the project was \
                      written but something\nwas left out (listed); 1 on an error (nothing \
                      written)."
    )]
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The project to read PROJECT from: an rbuilder project, or a kubebuilder project to migrate
    #[arg(long, default_value = ".")]
    pub input_dir: PathBuf,
    /// Where to scaffold it: a new or empty folder
    #[arg(long)]
    pub output_dir: PathBuf,
    /// With a kubebuilder project: a CRD file (YAML) of other projects' kinds it has
    /// controllers or webhooks for (repeat), which kubebuilder takes from Go modules; the Rust
    /// project gets Rust types from it, and a copy of it in config/crd/external/
    #[arg(long, value_name = "FILE")]
    pub external_api_path: Vec<String>,
    /// Scaffold into a temporary folder only, to check that it works, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// Put each API group in its own module (src/api/<group>/<version>); needed for a second group
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL")]
    pub multigroup: Option<bool>,
    /// Watch one namespace (WATCH_NAMESPACE) with Roles, or (false) the whole cluster with ClusterRoles
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// The license header of files scaffolded from now on (hack/boilerplate.txt)
    #[arg(long, value_enum)]
    pub license: Option<LicenseArg>,
    /// A file whose text is the license header of files scaffolded from now on; overrides --license
    #[arg(long, value_name = "FILE")]
    pub license_file: Option<PathBuf>,
    /// The copyright owner in the license header of files scaffolded from now on
    #[arg(long)]
    pub owner: Option<String>,
    /// With --namespaced: rewrite the files it changes even where they were edited by hand; with
    /// --plugins helm/v2-alpha: write the chart's values.yaml, .helmignore, _helpers.tpl and
    /// NOTES.txt again (Chart.yaml is kept); with --plugins autoupdate/v1-alpha: write its
    /// workflow again
    #[arg(long)]
    pub force: bool,
    /// kubebuilder's optional plugins, comma-separated: grafana/v1-alpha writes Grafana
    /// dashboards into grafana/; helm/v2-alpha a Helm chart into dist/chart (its templates made
    /// from config/default by `make helm`); autoupdate/v1-alpha a weekly GitHub workflow that
    /// runs `rbuilder update` with the newest rbuilder and opens a pull request
    #[arg(long, value_name = "PLUGINS")]
    pub plugins: Option<String>,
    /// Print the files that would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
