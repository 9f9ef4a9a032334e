//! Every project the commands can make renders: the combinations of the options of `init`,
//! `create api`, `create webhook` and `edit` that shape `config/` are scaffolded, each in a
//! folder of its own, and `kubectl kustomize config/default` (what `make deploy` applies) and
//! `kubectl kustomize config/samples` must succeed on each, with the objects valid for the
//! Kubernetes version generated for (`kubernetes-validate --strict`).
//!
//! The golden trees show one project per kind of project; this finds the projects between them
//! that nobody thought of, such as a kind whose only webhook converts (its
//! `config/webhook/kustomization.yaml` listed a `manifests.yaml` that nothing writes).
//!
//! What is combined, from `src/cli.rs` (the options that change `config/`):
//!
//! - the operator's scope, and how it got it: `init`, `init --namespaced`, and either turned
//!   into the other by `edit --namespaced[=false]` after everything else;
//! - no kind at all;
//! - a kind's webhooks: every subset of defaulting, validation and conversion (a second
//!   version, the spoke), in one `create webhook` or one per webhook (the conversion first),
//!   times the webhooks of a built-in type (a Pod: none, defaulting, validation, both);
//! - the kind itself: plain, `--image` (alone or with `--plugins deploy-image/v1-alpha`, with
//!   every deploy-image flag; its second version converts by field names),
//!   `--namespaced=false`, `--controller=false`, its controller added later with
//!   `--resource=false`, a second controller (`--controller-name`), `--plural` and
//!   `--short-name`, with each set of its webhooks;
//! - what else a project holds, in each scope, without and with every webhook: controllers
//!   for built-in types (a cluster-scoped one too, and its webhooks, which `edit
//!   --namespaced` must refuse), other projects' kinds from their CRDs
//!   (`--external-api-path`, `--external-api-domain`, by `create api` and by `create webhook`,
//!   with webhooks), webhooks for built-in types that have a
//!   controller, or are cluster-scoped, several groups (`init --multigroup`, `edit
//!   --multigroup`), `edit --plugins grafana/v1-alpha`, `init --plugins
//!   helm/v2-alpha,grafana/v1-alpha` and `edit --plugins helm/v2-alpha --force`, `--force`
//!   again on a kind and on its webhooks, and the project-wide flags (`--project-name` at its
//!   longest, `--owner`, `--license`, `--license-file`, and their `edit`).
//!
//! `every_flag_is_combined` fails when a command gains a flag that no combination uses, so that
//! a new option comes with its combinations (or says why it cannot change `config/`).
//!
//! Commands that share their first steps share their work: the combinations form a tree of
//! command lines, each run once in a copy of its parent's folder, and a `config/` rendered
//! before is not rendered again: about 300 projects for about 40 s of CPU time (a debug
//! rbuilder, kubectl), half that in time on two cores. `#[ignore]`d because it needs kubectl
//! (its built-in kustomize) and kubernetes-validate on PATH: `make test` runs it, with `make
//! tools`' kubernetes-validate; alone, `PATH=target/venv/bin:$PATH cargo test --test
//! combinations -- --ignored`.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{flags_of, repo, run, snapshot, words};

/// One project to make: its name (what was combined) and the rbuilder commands that make it.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    commands: Vec<String>,
}

/// The operator's scope, and how it got it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scope {
    Cluster,
    Namespaced,
    /// `init`, then `edit --namespaced` last.
    ToNamespaced,
    /// `init --namespaced`, then `edit --namespaced=false` last.
    ToCluster,
}

const SCOPES: [Scope; 4] = [
    Scope::Cluster,
    Scope::Namespaced,
    Scope::ToNamespaced,
    Scope::ToCluster,
];

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Cluster => "cluster",
            Scope::Namespaced => "namespaced",
            Scope::ToNamespaced => "cluster-then-namespaced",
            Scope::ToCluster => "namespaced-then-cluster",
        }
    }

    /// `init` with `flags`, in this scope.
    fn init(self, flags: &str) -> String {
        let namespaced = matches!(self, Scope::Namespaced | Scope::ToCluster);
        format!(
            "init --domain my.domain{}{flags}",
            if namespaced { " --namespaced" } else { "" }
        )
    }

    /// The commands after everything else.
    fn last(self) -> Vec<String> {
        match self {
            // --force changes nothing in files as rbuilder wrote them.
            Scope::ToNamespaced => vec!["edit --namespaced --force".into()],
            Scope::ToCluster => vec!["edit --namespaced=false".into()],
            Scope::Cluster | Scope::Namespaced => Vec::new(),
        }
    }

    /// Whether the operator watches one namespace while the kinds are made.
    fn namespaced_at_first(self) -> bool {
        matches!(self, Scope::Namespaced | Scope::ToCluster)
    }
}

/// A kind's webhooks: which, and how they are created. `D`, `V` and `C` stand for
/// defaulting, validation and conversion; each string is one `create webhook` command. Every
/// subset at once, and one command per webhook with the conversion first (the project has
/// webhooks, but no admission webhook, until the next); the conversion made last is the
/// multiversion golden tree's order.
const WEBHOOK_SEQUENCES: &[&[&str]] = &[
    &[],
    &["D"],
    &["V"],
    &["C"],
    &["DV"],
    &["DC"],
    &["VC"],
    &["DVC"],
    &["D", "V"],
    &["C", "D"],
    &["C", "V"],
    &["C", "V", "D"],
];

/// The webhooks each other flavor of a kind is combined with: none, each alone, all.
const FLAVOR_WEBHOOKS: &[&[&str]] = &[&[], &["D"], &["V"], &["C"], &["DVC"]];

/// A built-in type's webhooks: each string one `create webhook` for a Pod.
const POD_WEBHOOKS: &[&str] = &["", "D", "V", "DV"];

/// The label of a webhook sequence: `none`, `DVC`, `C+D`.
fn label(sequence: &[&str]) -> String {
    if sequence.is_empty() {
        "none".into()
    } else {
        sequence.join("+")
    }
}

/// `create webhook` for `kind` (group devops, hub v1) with the webhooks of `letters`.
fn own_webhook(kind: &str, letters: &str) -> String {
    let mut command = format!("create webhook --group devops --version v1 --kind {kind}");
    if letters.contains('D') {
        command.push_str(" --defaulting");
    }
    if letters.contains('V') {
        command.push_str(" --programmatic-validation");
    }
    if letters.contains('C') {
        command.push_str(" --conversion --spoke v1alpha1");
    }
    command
}

/// `create webhook` for `group/version kind`, a built-in type, with the webhooks of `letters`.
fn builtin_webhook(group: &str, version: &str, kind: &str, letters: &str) -> String {
    let mut command = format!("create webhook --group {group} --version {version} --kind {kind}");
    if letters.contains('D') {
        command.push_str(" --defaulting");
    }
    if letters.contains('V') {
        command.push_str(" --programmatic-validation");
    }
    command
}

/// How the kind under test is made.
struct Flavor {
    name: &'static str,
    /// Its first version, v1 (the version stored), made by these commands.
    v1: &'static [&'static str],
    /// Its second version, v1alpha1, made before a conversion.
    v1alpha1: &'static str,
    /// Whether an operator scoped to a namespace can have it (a cluster-scoped kind cannot).
    namespaced: bool,
}

const GUESTBOOK: &str = "create api --group devops --version v1 --kind Guestbook";
const GUESTBOOK_V1ALPHA1: &str = "create api --group devops --version v1alpha1 --kind Guestbook";

const FLAVORS: &[Flavor] = &[
    Flavor {
        name: "plain",
        v1: &[GUESTBOOK],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
    Flavor {
        name: "image",
        v1: &[
            "create api --group devops --version v1 --kind Guestbook --image nginx:1.27 \
               --image-container-port 8080 --image-container-command nginx,-g,daemon-off \
               --run-as-user 1001",
        ],
        // A plain second version: the conversion goes by field names.
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
    Flavor {
        name: "plugin-deploy-image",
        v1: &["create api --group devops --version v1 --kind Guestbook \
               --plugins deploy-image/v1-alpha --image memcached:1.6"],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
    Flavor {
        name: "cluster-scoped",
        v1: &["create api --group devops --version v1 --kind Guestbook --namespaced=false"],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: false,
    },
    Flavor {
        name: "types-only",
        v1: &["create api --group devops --version v1 --kind Guestbook --controller=false"],
        v1alpha1: "create api --group devops --version v1alpha1 --kind Guestbook \
                   --controller=false",
        namespaced: true,
    },
    Flavor {
        name: "controller-later",
        v1: &[
            "create api --group devops --version v1 --kind Guestbook --controller=false",
            "create api --group devops --version v1 --kind Guestbook --resource=false",
        ],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
    Flavor {
        name: "second-controller",
        v1: &[
            "create api --group devops --version v1 --kind Guestbook",
            "create api --group devops --version v1 --kind Guestbook --resource=false \
               --controller-name guestbook-backup",
        ],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
    Flavor {
        name: "names",
        v1: &[
            "create api --group devops --version v1 --kind Guestbook --plural guestbookz \
               --short-name gb --short-name gbk",
        ],
        v1alpha1: GUESTBOOK_V1ALPHA1,
        namespaced: true,
    },
];

/// The commands that give Guestbook (made by `flavor`) the webhooks of `sequence`.
fn webhook_commands(flavor: &Flavor, sequence: &[&str]) -> Vec<String> {
    let mut commands = Vec::new();
    for (i, letters) in sequence.iter().enumerate() {
        // The spoke is made just before the conversion, so that a kind without one has a
        // single version.
        if letters.contains('C') && !sequence[..i].iter().any(|l| l.contains('C')) {
            commands.push(flavor.v1alpha1.to_owned());
        }
        let mut command = own_webhook("Guestbook", letters);
        // Defaulting and validation share a file: the second made asks for it again.
        let admission = |l: &&str| l.contains('D') || l.contains('V');
        if admission(letters) && sequence[..i].iter().any(admission) {
            command.push_str(" --force");
        }
        commands.push(command);
    }
    commands
}

/// What else a project can hold, each made by commands after `init`, with the `init` flags it
/// needs, and whether an operator scoped to a namespace can have it.
struct Extra {
    name: &'static str,
    /// `{headers}` stands for testdata/headers, by absolute path.
    init_flags: &'static str,
    commands: fn() -> Vec<String>,
    namespaced: bool,
}

/// A CRD of testdata/crds, by absolute path: the commands run in folders of their own.
fn crd(path: &str) -> String {
    repo()
        .join("testdata/crds")
        .join(path)
        .display()
        .to_string()
}

fn extras() -> Vec<Extra> {
    vec![
        Extra {
            name: "builtin-controllers",
            // A header of the user's own changes no object; it rides along with an extra.
            init_flags: " --license-file {headers}/acme.txt",
            commands: || {
                vec![
                    "create api --group apps --version v1 --kind Deployment --resource=false"
                        .into(),
                    "create api --group core --version v1 --kind Secret --resource=false".into(),
                    "create api --group autoscaling --version v2 --kind HorizontalPodAutoscaler \
                     --resource=false"
                        .into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "cluster-scoped-builtin",
            init_flags: "",
            commands: || {
                vec![
                    "create api --group core --version v1 --kind Node --resource=false".into(),
                    "create api --group rbac --version v1 --kind ClusterRole --resource=false"
                        .into(),
                ]
            },
            namespaced: false,
        },
        Extra {
            name: "builtin-webhooks-a-namespace-cannot-have",
            init_flags: "",
            commands: || {
                vec![
                    builtin_webhook("core", "v1", "Node", "DV"),
                    builtin_webhook("core", "v1", "Secret", "V"),
                ]
            },
            namespaced: false,
        },
        Extra {
            name: "builtin-webhooks-with-controllers",
            init_flags: "",
            commands: || {
                vec![
                    "create api --group apps --version v1 --kind Deployment --resource=false"
                        .into(),
                    builtin_webhook("apps", "v1", "Deployment", "V"),
                    builtin_webhook("batch", "v1", "Job", "D"),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "external",
            init_flags: "",
            commands: || {
                vec![
                    format!(
                        "create api --group cert-manager.io --version v1 --kind Certificate \
                         --resource=false --external-api-path {}",
                        crd("cert-manager/certificates.cert-manager.io.yaml")
                    ),
                    format!(
                        "create api --group monitoring --external-api-domain coreos.com \
                         --version v1 --kind ServiceMonitor --resource=false \
                         --external-api-path {}",
                        crd("prometheus-operator/monitoring.coreos.com_servicemonitors.yaml")
                    ),
                    format!(
                        "create api --group argoproj.io --version v1alpha1 --kind Application \
                         --resource=false --external-api-path {}",
                        crd("argo-cd/applications.argoproj.io.yaml")
                    ),
                ]
            },
            namespaced: true,
        },
        Extra {
            // Webhooks for another project's kind, imported by `create webhook` itself.
            name: "external-webhooks",
            init_flags: "",
            commands: || {
                vec![format!(
                    "create webhook --group monitoring --external-api-domain coreos.com \
                     --version v1 --kind ServiceMonitor --defaulting --programmatic-validation \
                     --external-api-path {}",
                    crd("prometheus-operator/monitoring.coreos.com_servicemonitors.yaml")
                )]
            },
            namespaced: true,
        },
        Extra {
            // cert-manager's Issuer and Certificate, whose objects in the manager's namespace
            // issue its certificate: their webhooks are refused an operator scoped to it.
            name: "external-webhooks-a-namespace-cannot-have",
            init_flags: "",
            commands: || {
                vec![
                    format!(
                        "create api --group cert-manager.io --version v1 --kind Certificate \
                         --resource=false --external-api-path {}",
                        crd("cert-manager/certificates.cert-manager.io.yaml")
                    ),
                    "create webhook --group cert-manager.io --version v1 --kind Certificate \
                     --programmatic-validation"
                        .into(),
                    format!(
                        "create webhook --group cert-manager.io --version v1 --kind Issuer \
                         --defaulting --external-api-path {}",
                        crd("cert-manager/issuers.cert-manager.io.yaml")
                    ),
                ]
            },
            namespaced: false,
        },
        Extra {
            name: "init-multigroup",
            init_flags: " --multigroup",
            commands: || {
                vec![
                    "create api --group web-apps --version v1beta1 --kind Site".into(),
                    "create api --group example.com --version v1 --kind Shop".into(),
                    "create webhook --group web-apps --version v1beta1 --kind Site \
                     --defaulting"
                        .into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "edit-multigroup",
            init_flags: "",
            commands: || {
                vec![
                    "edit --multigroup".into(),
                    "create api --group web-apps --version v1 --kind Site --image nginx:1.27"
                        .into(),
                    "create webhook --group web-apps --version v1 --kind Site \
                     --programmatic-validation"
                        .into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "grafana",
            init_flags: "",
            commands: || {
                vec![
                    "edit --plugins grafana/v1-alpha".into(),
                    "edit --plugins grafana/v1-alpha".into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            // The chart's own files do not change config/, but init and edit take the plugins
            // in the same list, and later commands change values.yaml.
            name: "plugins",
            init_flags: " --plugins helm/v2-alpha,grafana/v1-alpha",
            commands: || {
                vec![
                    "create api --group devops --version v1 --kind Site".into(),
                    "create webhook --group devops --version v1 --kind Site --defaulting".into(),
                    "edit --plugins helm/v2-alpha --force".into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "force",
            init_flags: "",
            commands: || {
                vec![
                    "create api --group devops --version v1alpha1 --kind Site --image nginx:1.27"
                        .into(),
                    "create api --group devops --version v1alpha1 --kind Site --force".into(),
                    "create webhook --group devops --version v1alpha1 --kind Site --defaulting \
                     --defaulting-path /default-site"
                        .into(),
                    "create webhook --group devops --version v1alpha1 --kind Site --defaulting \
                     --programmatic-validation --force --validation-path /sites/validate"
                        .into(),
                ]
            },
            namespaced: true,
        },
        Extra {
            name: "project-flags",
            // The longest project name: its prefix goes into every name kustomize makes.
            init_flags: " --project-name abcdefghijklmnopqrstuvwxyz12 --owner \"Jane Doe\" \
                          --license mit",
            commands: || {
                vec![
                    "edit --license none --owner \"John Doe\"".into(),
                    format!(
                        "edit --license-file {}",
                        repo().join("testdata/headers/acme.txt").display()
                    ),
                ]
            },
            namespaced: true,
        },
    ]
}

/// Every combination, by name.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: String, commands: Vec<String>| cases.push(Case { name, commands });
    for scope in SCOPES {
        let mut commands = vec![scope.init("")];
        commands.extend(scope.last());
        add(format!("{}/no-kind", scope.name()), commands);
    }
    // The webhooks of a plain kind and of a Pod, in every scope.
    let plain = &FLAVORS[0];
    for scope in SCOPES {
        for sequence in WEBHOOK_SEQUENCES {
            for pod in POD_WEBHOOKS {
                let mut commands = vec![scope.init("")];
                commands.extend(plain.v1.iter().map(|c| (*c).to_owned()));
                commands.extend(webhook_commands(plain, sequence));
                if !pod.is_empty() {
                    commands.push(builtin_webhook("core", "v1", "Pod", pod));
                }
                commands.extend(scope.last());
                let pod = if pod.is_empty() { "none" } else { pod };
                add(
                    format!("{}/kind:{}/pod:{pod}", scope.name(), label(sequence)),
                    commands,
                );
            }
        }
    }
    // The other flavors of a kind, with each set of its webhooks made at once.
    for flavor in &FLAVORS[1..] {
        for scope in [Scope::Cluster, Scope::Namespaced] {
            if !flavor.namespaced && scope.namespaced_at_first() {
                continue;
            }
            for sequence in FLAVOR_WEBHOOKS {
                let mut commands = vec![scope.init("")];
                commands.extend(flavor.v1.iter().map(|c| (*c).to_owned()));
                commands.extend(webhook_commands(flavor, sequence));
                add(
                    format!("{}/{}/kind:{}", scope.name(), flavor.name, label(sequence)),
                    commands,
                );
            }
        }
    }
    // What else a project holds, without and with every webhook. What an operator scoped to
    // a namespace cannot have is tried in a cluster-wide one, and `edit --namespaced` must
    // then refuse it.
    for extra in extras() {
        for scope in SCOPES {
            if !extra.namespaced && scope.namespaced_at_first() {
                continue;
            }
            for webhooks in [false, true] {
                let flags = extra.init_flags.replace(
                    "{headers}",
                    &repo().join("testdata/headers").display().to_string(),
                );
                let mut commands = vec![scope.init(&flags)];
                commands.push(GUESTBOOK.to_owned());
                commands.extend((extra.commands)());
                if webhooks {
                    commands.extend(webhook_commands(plain, &["DVC"]));
                    commands.push(builtin_webhook("core", "v1", "Pod", "DV"));
                }
                let last = scope.last().into_iter();
                if extra.namespaced {
                    commands.extend(last);
                } else {
                    commands.extend(last.map(|command| format!("{REFUSED}{command}")));
                }
                let with = if webhooks { "all" } else { "none" };
                add(
                    format!("{}/{}/webhooks:{with}", scope.name(), extra.name),
                    commands,
                );
            }
        }
    }
    cases
}

/// What starts a command that rbuilder must refuse (writing nothing): the combination is then
/// the project as it was.
const REFUSED: &str = "! ";

/// The combinations as a tree of command lines: a node's children are the commands that
/// follow it in some combination; `ends` names the combinations made once its command ran.
#[derive(Default)]
struct Node {
    children: BTreeMap<String, Node>,
    ends: Vec<String>,
}

impl Node {
    fn of(cases: &[Case]) -> Self {
        let mut root = Node::default();
        for case in cases {
            let mut node = &mut root;
            for command in &case.commands {
                node = node.children.entry(command.clone()).or_default();
            }
            node.ends.push(case.name.clone());
        }
        root
    }

    /// The names of every combination at or under this node.
    fn names(&self) -> Vec<String> {
        let mut names = self.ends.clone();
        for child in self.children.values() {
            names.extend(child.names());
        }
        names
    }
}

/// Where the combinations are made, and what they found.
struct Run {
    tmp: tempfile::TempDir,
    folders: AtomicUsize,
    commands: AtomicUsize,
    /// What each folder rendered (by a hash of its files) gave: the file the objects went to,
    /// or kubectl's error.
    rendered: Mutex<HashMap<u64, Result<PathBuf, String>>>,
    /// Each failure: the combination, and what failed.
    failures: Mutex<Vec<String>>,
}

/// The project's name: each combination is made in a folder of this name.
const PROJECT: &str = "combo";

impl Run {
    /// A new folder for a project, holding a copy of `from` if given.
    fn folder(&self, from: Option<&Path>) -> PathBuf {
        let n = self.folders.fetch_add(1, Ordering::Relaxed);
        let dir = self.tmp.path().join(n.to_string()).join(PROJECT);
        std::fs::create_dir_all(&dir).expect("create a project folder");
        if let Some(from) = from {
            link_tree(from, &dir);
        }
        dir
    }

    fn fail(&self, names: &[String], what: &str) {
        let mut failures = self.failures.lock().expect("no panic holding the lock");
        for name in names {
            failures.push(format!("{name}: {what}"));
        }
    }

    /// Runs `node`'s command in `dir` (made for it), renders the combinations that end there,
    /// then goes on with its children; removes the folder once they are done with it (here, on
    /// both threads, rather than all at the end).
    fn visit(&self, command: &str, node: &Node, dir: PathBuf, path: &[&str]) {
        self.step(command, node, &dir, path);
        // The last child had the folder itself, and may have removed it already.
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn step(&self, command: &str, node: &Node, dir: &Path, path: &[&str]) {
        self.commands.fetch_add(1, Ordering::Relaxed);
        let (refused, line) = match command.strip_prefix(REFUSED) {
            Some(line) => (true, line),
            None => (false, command),
        };
        let out = run(dir, line).get_output().clone();
        if refused && out.status.success() {
            self.fail(
                &node.names(),
                &format!("`rbuilder {line}` was accepted; it should be refused"),
            );
            return;
        }
        if !refused && !out.status.success() {
            let lines: Vec<String> = path.iter().map(|c| format!("rbuilder {c}")).collect();
            self.fail(
                &node.names(),
                &format!(
                    "`rbuilder {command}` was refused, after\n    {}\n  {}",
                    lines.join("\n    "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            return;
        }
        if !node.ends.is_empty() {
            for folder in ["config/default", "config/samples"] {
                if let Err(error) = self.render(dir, folder) {
                    self.fail(&node.ends, &error);
                }
            }
        }
        let path: Vec<&str> = path.iter().copied().chain([command]).collect();
        let count = node.children.len();
        for (i, (next, child)) in node.children.iter().enumerate() {
            // The last child takes the folder itself, the others a copy.
            let child_dir = if i + 1 == count {
                dir.to_owned()
            } else {
                self.folder(Some(dir))
            };
            self.visit(next, child, child_dir, &path);
        }
    }

    /// `kubectl kustomize folder` in the project at `dir`, unless a folder with the same files
    /// was rendered already (most combinations share their samples, and some their config/).
    fn render(&self, dir: &Path, folder: &str) -> Result<(), String> {
        // What kustomize reads from config/samples is config/samples; from config/default, all
        // of config/.
        let read = if folder == "config/samples" {
            folder
        } else {
            "config"
        };
        let mut hasher = DefaultHasher::new();
        (folder, snapshot(&dir.join(read))).hash(&mut hasher);
        let key = hasher.finish();
        if let Some(known) = self.lock_rendered().get(&key) {
            return known.clone().map(|_| ());
        }
        let out = Command::new("kubectl")
            .args(["kustomize", folder])
            .current_dir(dir)
            .output()
            .expect("kubectl runs (is it installed?)");
        let result = if out.status.success() {
            let n = self.folders.fetch_add(1, Ordering::Relaxed);
            let target = self.tmp.path().join(format!("rendered-{n}.yaml"));
            std::fs::write(&target, &out.stdout).expect("write the rendered objects");
            Ok(target)
        } else {
            Err(format!(
                "`kubectl kustomize {folder}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        };
        // The samples are custom resources, which kubernetes-validate has no schema for.
        let kept = match &result {
            Ok(_) if folder == "config/samples" => Ok(PathBuf::new()),
            other => other.clone(),
        };
        self.lock_rendered().insert(key, kept);
        result.map(|_| ())
    }

    fn lock_rendered(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Result<PathBuf, String>>> {
        self.rendered.lock().expect("no panic holding the lock")
    }
}

/// The files of `from` in the empty folder `to`, as hard links: rbuilder never writes a file
/// in place (its Plan writes a new file and renames it over the old one), so a command run in
/// one folder replaces its own link and leaves the other folders' files as they were. Copies
/// would cost more than the commands (the runtime is most of a project's bytes).
fn link_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("readable folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir(&target).expect("create folder");
            link_tree(&entry.path(), &target);
        } else {
            std::fs::hard_link(entry.path(), &target).expect("link a file");
        }
    }
}

#[test]
#[ignore = "needs kubectl and kubernetes-validate (make test runs it)"]
fn every_combination_renders() {
    let started = std::time::Instant::now();
    let cases = cases();
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "two combinations share a name");
    let root = Node::of(&cases);
    let run = Run {
        tmp: tempfile::tempdir().expect("temp dir"),
        folders: AtomicUsize::new(0),
        commands: AtomicUsize::new(0),
        rendered: Mutex::new(HashMap::new()),
        failures: Mutex::new(Vec::new()),
    };
    // Two threads (the machine has two cores), each with its share of the first commands.
    let firsts: Vec<(&String, &Node)> = root.children.iter().collect();
    std::thread::scope(|scope| {
        for half in [0, 1] {
            let (run, firsts) = (&run, &firsts);
            scope.spawn(move || {
                for (command, node) in firsts.iter().skip(half).step_by(2) {
                    let dir = run.folder(None);
                    run.visit(command, node, dir, &[]);
                }
            });
        }
    });
    let mut failures = run
        .failures
        .into_inner()
        .expect("no panic holding the lock");
    failures.sort();
    let rendered: Vec<PathBuf> = run
        .rendered
        .into_inner()
        .expect("no panic holding the lock")
        .into_values()
        .filter_map(Result::ok)
        .filter(|path| !path.as_os_str().is_empty())
        .collect();
    eprintln!(
        "{} combinations, {} rbuilder commands, {} different config/ rendered, in {:.1} s",
        cases.len(),
        run.commands.into_inner(),
        rendered.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} combinations do not make a project that renders:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );

    // Each different object once: most combinations share most of theirs, and
    // kubernetes-validate takes about a second a file.
    let mut objects = BTreeSet::new();
    for file in &rendered {
        let text = std::fs::read_to_string(file).expect("rendered objects");
        objects.extend(text.split("\n---\n").map(|o| o.trim_end().to_owned()));
    }
    let all = run.tmp.path().join("objects.yaml");
    let objects: Vec<String> = objects.into_iter().collect();
    std::fs::write(&all, objects.join("\n---\n") + "\n").expect("write the objects");
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "--quiet"])
        .arg(&all)
        .output()
        .expect("kubernetes-validate runs (make tools installs it into target/venv/bin)");
    assert!(
        out.status.success(),
        "kubernetes-validate refuses rendered objects:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "{} different objects valid, {:.1} s in all",
        objects.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Flags that cannot change what a project renders, and why.
const NOT_COMBINED: &[(&str, &str)] = &[
    ("--dry-run", "writes nothing"),
    ("--help", "writes nothing"),
];

/// The commands that make a project, each with its flags; the others write no project
/// (`version`, `completion`), write rbuilder's own files as they are (`update`) or another
/// folder (`alpha generate`, which `tests/golden.rs` checks against every golden tree).
const PROJECT_COMMANDS: &[&[&str]] = &[
    &["init"],
    &["create", "api"],
    &["create", "webhook"],
    &["edit"],
];

#[test]
fn every_flag_is_combined() {
    let cases = cases();
    let mut missing = Vec::new();
    for command in PROJECT_COMMANDS {
        let mut used = BTreeSet::new();
        for line in cases.iter().flat_map(|c| &c.commands) {
            let words = words(line);
            if words.len() >= command.len() && words[..command.len()] == **command {
                used.extend(
                    words
                        .iter()
                        .filter(|w| w.starts_with("--"))
                        .map(|w| w.split('=').next().unwrap_or(w).to_owned()),
                );
            }
        }
        for flag in flags_of(command) {
            if !used.contains(&flag) && !NOT_COMBINED.iter().any(|(f, _)| *f == flag) {
                missing.push(format!("rbuilder {} {flag}", command.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no combination of tests/combinations.rs uses these flags; add them to the \
         combinations (or to NOT_COMBINED, saying why they cannot change config/):\n  {}",
        missing.join("\n  ")
    );
}
