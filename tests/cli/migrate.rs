//! `rbuilder alpha generate` on a kubebuilder project: a Rust project with the same kinds,
//! versions, controllers, webhooks, conversion spokes and plugins, and what could not be
//! carried over listed at the end, with exit status 3. The inputs are kubebuilder's own test
//! projects (`testdata/kubebuilder-projects`, see its README).

use std::path::{Path, PathBuf};

use crate::common::{assert_rejected, assert_same_tree, project_dir, rbuilder, repo, snapshot};
use crate::read;

/// The exit status of a migration that left something out.
const LEFT_OUT: i32 = 3;

/// kubebuilder's test project `name`.
fn fixture(name: &str) -> PathBuf {
    repo().join("testdata/kubebuilder-projects").join(name)
}

/// Migrates kubebuilder's project `name` into a new folder; returns the folder, its parent (to
/// keep), and what rbuilder printed.
/// Migrates fixture `name`, which leaves something out.
fn migrate(name: &str) -> (tempfile::TempDir, PathBuf, String) {
    migrate_with(name, LEFT_OUT)
}

/// Migrates fixture `name`, which must end with exit status `code`.
fn migrate_with(name: &str, code: i32) -> (tempfile::TempDir, PathBuf, String) {
    let (tmp, _) = project_dir("unused");
    let out = tmp.path().join("rust");
    let input = fixture(name);
    let args = [
        "alpha",
        "generate",
        "--input-dir",
        input.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
    ];
    let output = rbuilder(tmp.path(), &args).code(code).get_output().clone();
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        tmp,
        out,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Asserts that `stdout` lists exactly `left_out` (each item's first line), in order.
fn assert_left_out(stdout: &str, left_out: &[&str]) {
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  - "))
        .collect();
    assert_eq!(listed, left_out, "{stdout}");
    let header = format!(
        "Left out ({}), each with why and what to do instead:",
        left_out.len()
    );
    assert!(stdout.contains(&header), "{stdout}");
    // Each with what to do instead.
    let instead = stdout
        .lines()
        .filter(|l| l.starts_with("    instead: "))
        .count();
    assert_eq!(instead, left_out.len(), "{stdout}");
}

/// The migrated project is an rbuilder project like any other: `alpha generate` replays its
/// PROJECT into the same files.
fn assert_replays(tmp: &Path, out: &Path) {
    let again = tmp.join("again");
    let args = [
        "alpha",
        "generate",
        "--input-dir",
        out.to_str().unwrap(),
        "--output-dir",
        again.to_str().unwrap(),
    ];
    rbuilder(tmp, &args).success();
    assert_same_tree(
        &snapshot(out),
        &snapshot(&again),
        "the migrated project, replayed",
    );
}

fn assert_files(dir: &Path, files: &[&str]) {
    for file in files {
        assert!(dir.join(file).is_file(), "{file} is missing");
    }
}

#[test]
fn project_v4_is_carried_over_but_external_types() {
    let (tmp, out, stdout) = migrate("project-v4");
    // Captain's second controller, captain-backup, is one more create api.
    assert!(
        stdout.contains("init, 7 create api and 6 create webhook"),
        "{stdout}"
    );
    assert_left_out(
        &stdout,
        &[
            "cert-manager.io/v1 Certificate: its controller",
            "cert-manager.io/v1 Issuer: its webhooks",
        ],
    );
    // What to run instead names the CRD file to give.
    assert!(
        stdout.contains(
            "migrate again with --external-api-path <the CRD file>, or run `rbuilder create \
             webhook --group cert-manager --external-api-domain io --version v1 --kind Issuer \
             --defaulting --external-api-path <the CRD file>`"
        ),
        "{stdout}"
    );
    // Custom webhook paths are carried over: in PROJECT, served there, configured there.
    let project = std::fs::read_to_string(out.join("PROJECT")).expect("PROJECT");
    for path in [
        "defaultingPath: /custom-mutate-sailor",
        "validationPath: /custom-validate-sailor",
        "validationPath: /custom-validate-admiral",
    ] {
        assert!(project.contains(path), "{path} missing from:\n{project}");
    }
    let sailor = std::fs::read_to_string(out.join("src/webhook/v1/sailor.rs")).expect("sailor");
    assert!(sailor.contains("(\"/custom-mutate-sailor\")"), "{sailor}");
    // What to run instead names the command.
    assert!(
        stdout.contains(
            "`rbuilder create api --group cert-manager --external-api-domain io --version v1 \
             --kind Certificate --resource=false --external-api-path <the CRD file>`"
        ),
        "{stdout}"
    );
    assert_files(
        &out,
        &[
            "src/api/v1/captain.rs",
            "src/controller/captain.rs",
            // Its second controller, as kubebuilder's testdata has it.
            "src/controller/captain_backup.rs",
            "tests/integration/captain_backup.rs",
            "src/webhook/v1/captain.rs",
            // FirstMate: v1 the hub, v2 a spoke without a controller.
            "src/api/v2/first_mate.rs",
            "src/webhook/v2/first_mate_conversion.rs",
            "src/webhook/v1/sailor.rs",
            // Admiral: cluster-scoped, kubebuilder's plural.
            "config/crd/bases/crew.testproject.org_admirales.yaml",
            "src/controller/navigator.rs",
            // Webhooks for built-in types, without controllers.
            "src/webhook/v1/pod.rs",
            "src/webhook/v1/deployment.rs",
        ],
    );
    // One controller reconciles FirstMate in both versions.
    assert_files(&out, &["src/controller/first_mate.rs"]);
    let admiral = read(&out, "config/crd/bases/crew.testproject.org_admirales.yaml");
    assert!(admiral.contains("scope: Cluster"), "{admiral}");
    let project = read(&out, "PROJECT");
    assert!(!project.contains("cert-manager"), "{project}");
    assert!(
        project.contains("owner: The Kubernetes authors"),
        "{project}"
    );
    // The license header is the Go project's, its YEAR filled in.
    let header = read(&out, "hack/boilerplate.txt");
    assert!(
        header.starts_with(
            "Copyright 2026 The Kubernetes authors.\n\nLicensed under the Apache License"
        ),
        "{header}"
    );
    assert_replays(tmp.path(), &out);
}

/// Given the CRD files of cert-manager's kinds (kubebuilder takes them from its Go module),
/// the migration carries over the controller of its Certificate and the webhooks of its Issuer
/// (kubebuilder's `create webhook --external-api-path`), keeping a copy of each file: nothing
/// of kubebuilder's project-v4 is left out. A file for no kind of the project is refused,
/// nothing written.
#[test]
fn project_v4_external_kinds_are_carried_over_from_their_crds() {
    let (tmp, _) = project_dir("unused");
    let out = tmp.path().join("rust");
    let input = fixture("project-v4");
    let crd = |name: &str| {
        repo()
            .join("testdata/crds")
            .join(name)
            .display()
            .to_string()
    };
    let (certificates, issuers, monitors) = (
        crd("cert-manager/certificates.cert-manager.io.yaml"),
        crd("cert-manager/issuers.cert-manager.io.yaml"),
        crd("prometheus-operator/monitoring.coreos.com_servicemonitors.yaml"),
    );
    let mut args = vec![
        "alpha",
        "generate",
        "--input-dir",
        input.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
        "--external-api-path",
        &certificates,
        "--external-api-path",
        &issuers,
    ];
    let mut unused = args.clone();
    unused.extend(["--external-api-path", &monitors]);
    assert_rejected(
        tmp.path(),
        &unused,
        &[&format!(
            "--external-api-path {monitors} holds the CRDs of monitoring.coreos.com \
             ServiceMonitor, and the kubebuilder project has no controller or webhook for any \
             of them: drop it"
        )],
    );
    args.push("--dry-run");
    rbuilder(tmp.path(), &args).success();
    assert!(!out.exists(), "--dry-run wrote nothing");
    args.pop();
    let output = rbuilder(tmp.path(), &args).success().get_output().clone();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("init, 9 create api and 7 create webhook\nNothing was left out."),
        "{stdout}"
    );
    assert_files(
        &out,
        &[
            "config/crd/external/certificates.cert-manager.io.yaml",
            "config/crd/external/issuers.cert-manager.io.yaml",
            "src/api/external/cert_manager/v1/certificate.rs",
            "src/controller/certificate.rs",
            "src/api/external/cert_manager/v1/issuer.rs",
            "src/webhook/v1/issuer.rs",
            "tests/integration/issuer_v1_webhooks.rs",
        ],
    );
    assert!(!out.join("src/controller/issuer.rs").exists());
    let project = read(&out, "PROJECT");
    assert!(
        project.contains(
            "- domain: io\n  external: true\n  group: cert-manager\n  kind: Issuer\n  path: \
             config/crd/external/issuers.cert-manager.io.yaml\n  plural: issuers\n  version: \
             v1\n  webhooks:\n    defaulting: true\n    webhookVersion: v1\n"
        ),
        "{project}"
    );
    let manifests = read(&out, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("path: /mutate-cert-manager-io-v1-issuer"),
        "{manifests}"
    );
    assert_replays(tmp.path(), &out);
}

/// kubebuilder's multigroup test project keeps every kind, `Bar` in both `foo` and `fiz`
/// included, laid out and named as kubebuilder lays it out: each group's controllers, webhooks
/// and tests in a folder of its own, controllers named `<group>-<kind>`, the users' roles
/// `<group>-<kind>-<role>-role` in `config/rbac/<group>_<kind>_<role>_role.yaml`. (With
/// cert-manager's CRDs, nothing is left out: the golden tree
/// testdata/kubebuilder-projects/migrated/project-v4-multigroup.)
#[test]
fn project_v4_multigroup_keeps_every_kind_laid_out_as_kubebuilder_does() {
    let (tmp, out, stdout) = migrate("project-v4-multigroup");
    assert!(
        stdout.contains("init, 16 create api and 7 create webhook"),
        "{stdout}"
    );
    assert_left_out(
        &stdout,
        &[
            "cert-manager.io/v1 Certificate: its controller",
            "cert-manager.io/v1 Issuer: its webhooks",
        ],
    );
    assert_files(
        &out,
        &[
            "src/api/crew/v1/captain.rs",
            "src/controller/crew/captain.rs",
            "src/controller/crew/captain_backup.rs",
            "tests/integration/crew/captain_backup.rs",
            "src/webhook/crew/v1/captain.rs",
            "tests/integration/crew/captain_v1_webhooks.rs",
            "src/api/ship/v2alpha1/cruiser.rs",
            "src/webhook/ship/v2alpha1/cruiser.rs",
            "src/api/sea_creatures/v1beta2/leviathan.rs",
            "tests/e2e/sea_creatures/leviathan.rs",
            "src/api/foo_policy/v1/health_check_policy.rs",
            // One kind name in two groups.
            "src/api/foo/v1/bar.rs",
            "src/controller/foo/bar.rs",
            "tests/integration/foo/bar.rs",
            "config/rbac/foo_bar_admin_role.yaml",
            "config/samples/foo_v1_bar.yaml",
            "config/crd/bases/foo.testproject.org_bars.yaml",
            "src/api/fiz/v1/bar.rs",
            "src/controller/fiz/bar.rs",
            "tests/integration/fiz/bar.rs",
            "config/rbac/fiz_bar_admin_role.yaml",
            "config/samples/fiz_v1_bar.yaml",
            "config/crd/bases/fiz.testproject.org_bars.yaml",
            "src/api/example_com/v1alpha1/memcached.rs",
            "src/webhook/example_com/v2/wordpress_conversion.rs",
            "config/rbac/example.com_memcached_viewer_role.yaml",
            "config/rbac/sea-creatures_kraken_editor_role.yaml",
            // A controller for a built-in type, with its webhooks.
            "src/controller/apps/deployment.rs",
            "src/webhook/apps/v1/deployment.rs",
            "src/webhook/core/v1/pod.rs",
            "grafana/controller-runtime-metrics.json",
        ],
    );
    // Controllers and roles named as kubebuilder names them.
    for (file, name) in [
        ("src/controller/foo/bar.rs", "foo-bar"),
        ("src/controller/fiz/bar.rs", "fiz-bar"),
        (
            "src/controller/crew/captain_backup.rs",
            "crew-captain-backup",
        ),
        (
            "src/controller/example_com/memcached.rs",
            "example.com-memcached",
        ),
        ("src/controller/apps/deployment.rs", "apps-deployment"),
    ] {
        let controller = read(&out, file);
        assert!(
            controller.contains(&format!("const NAME: &'static str = \"{name}\";")),
            "{file}:\n{controller}"
        );
    }
    let role = read(&out, "config/rbac/fiz_bar_admin_role.yaml");
    assert!(role.contains("  name: fiz-bar-admin-role\n"), "{role}");
    // The deploy-image kinds keep kubebuilder's API, and run the image of the manager's
    // environment, with their command.
    let memcached = read(&out, "src/api/example_com/v1alpha1/memcached.rs");
    for field in ["pub size: Option<i32>,", "pub container_port: i32,"] {
        assert!(
            memcached.contains(field),
            "{field} missing in:\n{memcached}"
        );
    }
    let controller = read(&out, "src/controller/example_com/memcached.rs");
    assert!(controller.contains("\"--memory-limit=64\""), "{controller}");
    assert!(
        controller.contains("const IMAGE_ENV: &str = \"MEMCACHED_IMAGE\";"),
        "{controller}"
    );
    let manager = read(&out, "config/manager/manager.yaml");
    assert!(
        manager.contains("- {name: MEMCACHED_IMAGE, value: \"memcached:1.6.26-alpine3.19\"}"),
        "{manager}"
    );
    let project = read(&out, "PROJECT");
    assert!(project.contains("multigroup: true"), "{project}");
    assert!(
        project.contains("containerCommand: memcached,--memory-limit=64,-o,modern,-v"),
        "{project}"
    );
    assert!(
        project.contains("grafana.rbuilder.io/v1-alpha"),
        "{project}"
    );
    assert_replays(tmp.path(), &out);
}

#[test]
fn project_v4_with_plugins_is_carried_over_whole() {
    // Its Rust project is a golden tree too (testdata/kubebuilder-projects/migrated), built by
    // tests/generated.rs.
    let (_tmp, out, stdout) = migrate_with("project-v4-with-plugins", 0);
    assert!(
        stdout.contains("init, 4 create api and 2 create webhook"),
        "{stdout}"
    );
    assert!(stdout.contains("Nothing was left out."), "{stdout}");
    assert!(stdout.contains("Next: cd "), "{stdout}");
    let project = read(&out, "PROJECT");
    // Its Helm chart: the chart's own files, whose templates `make helm` makes.
    assert!(project.contains("helm.rbuilder.io/v2-alpha"), "{project}");
    assert!(read(&out, "dist/chart/values.yaml").contains("namespaced: true"));
    // Its autoupdate workflow, in rbuilder's terms.
    assert!(
        project.contains("autoupdate.rbuilder.io/v1-alpha"),
        "{project}"
    );
    assert!(read(&out, ".github/workflows/auto_update.yml").contains("rbuilder update"));
    assert!(project.contains("namespaced: true"), "{project}");
    assert!(project.contains("image: busybox:1.36.1"), "{project}");
    // Each kind's API is its CRD's, which the project keeps: kubebuilder's deploy-image API,
    // its image in the manager's environment.
    assert_files(
        &out,
        &[
            "config/crd/kubebuilder/example.com.testproject.org_memcacheds.yaml",
            "config/crd/kubebuilder/example.com.testproject.org_wordpresses.yaml",
        ],
    );
    let memcached = read(&out, "src/api/v1alpha1/memcached.rs");
    assert!(
        memcached.contains("pub container_port: i32,"),
        "{memcached}"
    );
    assert!(!memcached.contains("pub image"), "{memcached}");
    let manager = read(&out, "config/manager/manager.yaml");
    assert!(manager.contains("- {name: BUSYBOX_IMAGE, value: \"busybox:1.36.1\"}"));
    // The samples are the Go project's.
    let sample = read(&out, "config/samples/example.com_v1alpha1_memcached.yaml");
    assert!(sample.contains("containerPort: 11211"), "{sample}");
}

/// A project made with kubebuilder whose Go types were edited: every kind gets the API of its
/// CRD, nothing is left out, and the project replays. Its Rust project is a golden tree too;
/// runtime/tests/migrated_crds.rs compiles its types with kube-derive.
#[test]
fn a_project_with_edited_types_keeps_every_api() {
    let (tmp, out, stdout) = migrate_with("shop", 0);
    assert!(stdout.contains("Nothing was left out."), "{stdout}");
    let order = read(&out, "src/api/v1/order.rs");
    for expected in [
        "#[kube(storage = false)]",
        "pub items: Vec<OrderSpecItems>,",
        "pub deadline: Option<metav1::Time>,",
        "pub enum OrderSpecPriority {",
        "#[schemars(extend(\"x-kubernetes-list-type\" = \"map\"))]",
        "#[kube(scale(",
        "#[kube(shortname = \"ord\")]",
    ] {
        // v1 is stored: not storage = false.
        if expected.contains("storage") {
            assert!(!order.contains(expected), "{expected} in:\n{order}");
        } else {
            assert!(order.contains(expected), "{expected} missing in:\n{order}");
        }
    }
    assert!(read(&out, "src/api/v2/order.rs").contains("#[kube(storage = false)]"));
    assert_replays(tmp.path(), &out);

    // Its controller scaffolded again keeps the kind's API: PROJECT keeps the CRD it is made
    // from, and the controller writes the status the CRD has (Inventory's has no
    // observedGeneration).
    let project = read(&out, "PROJECT");
    let args = [
        "create",
        "api",
        "--group",
        "shop",
        "--version",
        "v1",
        "--kind",
        "Inventory",
        "--resource=false",
        "--controller",
        "--force",
    ];
    rbuilder(&out, &args).success();
    assert_eq!(read(&out, "PROJECT"), project);
    let controller = read(&out, "src/controller/inventory.rs");
    assert!(
        controller.contains("conditions: vec![condition("),
        "{controller}"
    );
    assert!(!controller.contains("observed_generation"), "{controller}");
}

/// kubebuilder's multi-version tutorial: CronJob in two versions whose schemas differ, with a
/// batch Job's template (Kubernetes' own types, inlined by controller-gen) in its spec. Both
/// versions get their APIs; v1 is stored.
#[test]
fn the_multiversion_tutorial_keeps_both_apis() {
    let (tmp, out, stdout) = migrate_with("multiversion-tutorial", 0);
    assert!(stdout.contains("Nothing was left out."), "{stdout}");
    let v1 = read(&out, "src/api/v1/cron_job.rs");
    let v2 = read(&out, "src/api/v2/cron_job.rs");
    assert!(v1.contains("pub schedule: String,"), "{v1}");
    assert!(v2.contains("pub schedule: CronJobSpecSchedule,"), "{v2}");
    assert!(
        v1.contains("pub job_template: CronJobSpecJobTemplate,"),
        "{v1}"
    );
    assert!(v2.contains("#[kube(storage = false)]") && !v1.contains("storage = false"));
    assert_replays(tmp.path(), &out);
}

/// A kubebuilder PROJECT of one kind, Site (web.example.com/v1), in a new folder go-operator.
fn go_operator() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project_dir("go-operator");
    std::fs::write(
        dir.join("PROJECT"),
        "domain: example.com\nlayout:\n- go.kubebuilder.io/v4\nprojectName: go-operator\n\
         repo: example.com/go-operator\nresources:\n- api:\n    crdVersion: v1\n    \
         namespaced: true\n  controller: true\n  domain: example.com\n  group: web\n  kind: \
         Site\n  path: example.com/go-operator/api/v1\n  version: v1\nversion: \"3\"\n",
    )
    .unwrap();
    (tmp, dir)
}

/// Site's CRD as controller-gen writes it, its spec being `spec_properties` (YAML, indented
/// for their place) and what it requires.
fn site_crd(dir: &Path, spec_properties: &str, required: &str) {
    let crd = format!(
        "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
         name: sites.web.example.com\nspec:\n  group: web.example.com\n  names:\n    kind: \
         Site\n    listKind: SiteList\n    plural: sites\n    singular: site\n  scope: \
         Namespaced\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        \
         description: Site is the Schema for the sites API\n        properties:\n          \
         apiVersion:\n            type: string\n          kind:\n            type: string\n          \
         metadata:\n            type: object\n          spec:\n            properties:\n\
         {spec_properties}            {required}type: object\n          status:\n            \
         type: object\n        required:\n        - spec\n        type: object\n    served: \
         true\n    storage: true\n    subresources:\n      status: {{}}\n"
    );
    let bases = dir.join("config/crd/bases");
    std::fs::create_dir_all(&bases).unwrap();
    std::fs::write(bases.join("web.example.com_sites.yaml"), crd).unwrap();
}

/// A kind without its CRD in config/crd/bases (controller-gen's, from the Go types) falls back
/// to rbuilder's placeholder fields, and says so; with it, the kind has its API, and nothing is
/// left out. A dry run writes nothing either way.
#[test]
fn a_kind_gets_the_api_of_its_crd_or_says_it_has_placeholder_fields() {
    let (tmp, dir) = go_operator();
    let dry = rbuilder(
        &dir,
        &["alpha", "generate", "--output-dir", "../rust", "--dry-run"],
    )
    .code(LEFT_OUT)
    .get_output()
    .stdout
    .clone();
    let dry = String::from_utf8_lossy(&dry);
    assert_left_out(&dry, &["web/v1 Site: its API"]);
    assert!(
        dry.contains(
            "why: config/crd/bases has no CRD of kind Site in group web.example.com with \
             version v1"
        ) && dry.contains("nothing was written"),
        "{dry}"
    );
    assert!(!tmp.path().join("rust").exists());
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../rust"])
        .code(LEFT_OUT)
        .stdout(predicates::str::contains("init and 1 create api"));
    let rust = tmp.path().join("rust");
    assert_files(&rust, &["src/api/v1/site.rs", "src/controller/site.rs"]);
    assert!(read(&rust, "src/api/v1/site.rs").contains("pub foo: Option<String>,"));
    // No boilerplate.go.txt: the header made from the settings, as `init` makes it.
    let header = read(&rust, "hack/boilerplate.txt");
    assert!(
        header.starts_with("Copyright 2026 The go-operator Authors."),
        "{header}"
    );

    let properties = "              replicas:\n                description: How many.\n                \
                      format: int32\n                minimum: 1\n                type: integer\n";
    site_crd(
        &dir,
        properties,
        "required:\n            - replicas\n            ",
    );
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../rust2"])
        .success()
        .stdout(predicates::str::contains("Nothing was left out."));
    let rust = tmp.path().join("rust2");
    let site = read(&rust, "src/api/v1/site.rs");
    assert!(
        site.contains("    /// How many.\n    #[schemars(range(min = 1))]\n    pub replicas: i32,"),
        "{site}"
    );
    // Kept, as PROJECT names it: a replay makes the same types from it.
    assert_files(
        &rust,
        &["config/crd/kubebuilder/web.example.com_sites.yaml"],
    );
    assert!(
        read(&rust, "PROJECT")
            .contains("  path: config/crd/kubebuilder/web.example.com_sites.yaml\n")
    );
    // The Go project had no sample: one made from the schema, which says so.
    let sample = read(&rust, "config/samples/web_v1_site.yaml");
    assert!(sample.contains("spec:\n  replicas: 1\n"), "{sample}");
    assert_replays(tmp.path(), &rust);

    // kubebuilder's sample, its spec a TODO comment, is no valid Site once the spec has a
    // required field (the tests that apply it would fail): one made from the schema instead.
    let samples = dir.join("config/samples");
    std::fs::create_dir_all(&samples).unwrap();
    let placeholder = "apiVersion: web.example.com/v1\nkind: Site\nmetadata:\n  labels:\n    \
                       app.kubernetes.io/name: go-operator\n    app.kubernetes.io/managed-by: \
                       kustomize\n  name: site-sample\nspec:\n  # TODO(user): Add fields here\n";
    std::fs::write(samples.join("web_v1_site.yaml"), placeholder).unwrap();
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../rust3"]).success();
    let sample = read(&tmp.path().join("rust3"), "config/samples/web_v1_site.yaml");
    assert!(sample.contains("spec:\n  replicas: 1\n"), "{sample}");
}

/// What the Rust types cannot make of a CRD is listed, field by field, with exit status 3;
/// the rest of the API is carried over.
#[test]
fn what_the_types_cannot_make_is_listed_field_by_field() {
    let (tmp, dir) = go_operator();
    let properties = "              target:\n                oneOf:\n                - required: \
                      [host]\n                - required: [ip]\n                properties:\n                  \
                      host:\n                    type: string\n                  ip:\n                    \
                      type: string\n                type: object\n";
    site_crd(&dir, properties, "");
    std::fs::create_dir_all(dir.join("config/samples")).unwrap();
    std::fs::write(
        dir.join("config/samples/web_v1_site.yaml"),
        "apiVersion: web.example.com/v1\nkind: Site\nmetadata:\n  name: site-sample\nspec:\n  \
         target:\n    host: example.com\n",
    )
    .unwrap();
    let out = rbuilder(&dir, &["alpha", "generate", "--output-dir", "../rust"])
        .code(LEFT_OUT)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8_lossy(&out);
    assert_left_out(&out, &["web/v1 Site: spec.target"]);
    assert!(
        out.contains("why: its oneOf: kube-derive's schemas have none\n")
            && out.contains(
                "instead: write it as a CEL rule (#[schemars(extend(\"x-kubernetes-validations\" \
                 = ...))] in src/api/v1/site.rs), or check it in a validating webhook"
            ),
        "{out}"
    );
    let site = read(&tmp.path().join("rust"), "src/api/v1/site.rs");
    assert!(
        site.contains("pub target: Option<SiteSpecTarget>,"),
        "{site}"
    );
    // The sample is the Go project's.
    let sample = read(&tmp.path().join("rust"), "config/samples/web_v1_site.yaml");
    assert!(sample.contains("host: example.com"), "{sample}");
}

/// A deploy-image kind keeps kubebuilder's API and takes its image from the manager's
/// environment, as the Go project's manager.yaml sets it; one whose API lacks `size` gets a
/// plain controller, and says so.
#[test]
fn deploy_image_kinds_keep_kubebuilders_api_and_the_managers_image() {
    let (tmp, dir) = go_operator();
    let text = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let plugin = "plugins:\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    - \
                  domain: example.com\n      group: web\n      kind: Site\n      options:\n        \
                  image: nginx:1.27\n      version: v1\n";
    std::fs::write(
        dir.join("PROJECT"),
        text.replace("projectName:", &format!("{plugin}projectName:")),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("config/manager")).unwrap();
    std::fs::write(
        dir.join("config/manager/manager.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\nspec:\n  \
         template:\n    spec:\n      containers:\n      - name: manager\n        env:\n        - \
         name: SITE_IMAGE\n          value: nginx:1.29\n",
    )
    .unwrap();
    // Without `size`, a plain controller.
    site_crd(
        &dir,
        "              image:\n                type: string\n",
        "",
    );
    let out = rbuilder(&dir, &["alpha", "generate", "--output-dir", "../plain"])
        .code(LEFT_OUT)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8_lossy(&out);
    assert_left_out(
        &out,
        &["web/v1 Site: its deploy-image controller (a plain one is scaffolded)"],
    );
    assert!(
        out.contains("why: its API lacks what kubebuilder's deploy-image controller reads and writes: an int32 spec.size, and status.conditions"),
        "{out}"
    );
    let plain = tmp.path().join("plain");
    assert!(!read(&plain, "PROJECT").contains("deploy-image"));
    assert!(!read(&plain, "src/controller/site.rs").contains("Deployment"));

    // kubebuilder's own project: the image of its manager.yaml, if it differs from PROJECT's.
    let (tmp, shop) = project_dir("shop");
    let fixture = fixture("shop");
    for (path, bytes) in crate::common::project_files(&fixture) {
        let target = shop.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
    let manager = shop.join("config/manager/manager.yaml");
    let text = std::fs::read_to_string(&manager).unwrap();
    std::fs::write(
        &manager,
        text.replace("memcached:1.6.26-alpine3.19", "memcached:1.6.38"),
    )
    .unwrap();
    rbuilder(&shop, &["alpha", "generate", "--output-dir", "../rust"]).success();
    let rust = tmp.path().join("rust");
    assert!(read(&rust, "PROJECT").contains("image: memcached:1.6.38"));
    assert!(
        read(&rust, "config/manager/manager.yaml")
            .contains("- {name: MEMCACHED_IMAGE, value: \"memcached:1.6.38\"}")
    );
}
#[test]
fn kubebuilder_projects_rbuilder_cannot_read_are_refused_and_nothing_is_written() {
    let (_tmp, dir) = project_dir("go-operator");
    let generate = ["alpha", "generate", "--output-dir", "rust"];
    let project = |layout: &str, version: &str| {
        format!(
            "domain: example.com\nlayout:\n- {layout}\nprojectName: x\nversion: \"{version}\"\n"
        )
    };
    std::fs::write(dir.join("PROJECT"), project("go.kubebuilder.io/v3", "3")).unwrap();
    assert_rejected(
        &dir,
        &generate,
        &["layout is 'go.kubebuilder.io/v3'", "go.kubebuilder.io/v4"],
    );
    std::fs::write(dir.join("PROJECT"), project("go.kubebuilder.io/v4", "2")).unwrap();
    assert_rejected(&dir, &generate, &["version is '2'"]);
    let bad_domain = project("go.kubebuilder.io/v4", "3").replace("example.com", "Example");
    std::fs::write(dir.join("PROJECT"), bad_domain).unwrap();
    assert_rejected(&dir, &generate, &["domain", "invalid domain 'Example'"]);
    std::fs::write(
        dir.join("PROJECT"),
        "layout:\n- go.kubebuilder.io/v4\nresources: 7\nversion: \"3\"\n",
    )
    .unwrap();
    assert_rejected(
        &dir,
        &generate,
        &["not a PROJECT file rbuilder can migrate"],
    );
}
