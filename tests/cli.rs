//! The command line as a user meets it: what each command writes, and how each bad input is
//! refused (one message, non-zero exit, nothing written).

mod common;

use std::fs;

use common::{
    assert_rejected, assert_same_tree, initialized, project_dir, rbuilder, repo, snapshot,
};
use predicates::str::contains;

const DEMO: &[&str] = &[
    "create",
    "api",
    "--group",
    "devops",
    "--version",
    "v1",
    "--kind",
    "DemoMicroService",
];

fn read(dir: &std::path::Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn init_writes_a_project_named_after_its_folder() {
    let (_tmp, dir) = initialized("example");
    let project = read(&dir, "PROJECT");
    assert!(project.contains("projectName: example"), "{project}");
    assert!(project.contains("domain: my.domain"), "{project}");
    assert!(project.contains("rbuilder.io/v1"), "{project}");
    for file in [
        "Cargo.toml",
        "Makefile",
        "Dockerfile",
        ".dockerignore",
        ".gitignore",
        "README.md",
        "hack/boilerplate.txt",
        "src/main.rs",
        "src/lib.rs",
        "src/bin/manifests.rs",
        "config/default/kustomization.yaml",
        "config/manager/manager.yaml",
        "config/rbac/role.yaml",
        ".github/workflows/ci.yml",
    ] {
        assert!(dir.join(file).is_file(), "init should write {file}");
    }
    assert!(read(&dir, "Cargo.toml").contains("name = \"example\""));
    assert!(read(&dir, "src/main.rs").starts_with("// Copyright 2026 The example Authors."));
}

#[test]
fn init_flags_are_recorded_in_project() {
    let (_tmp, dir) = project_dir("somewhere");
    rbuilder(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "guestbook-operator",
            "--owner",
            "Jane Doe",
            "--license",
            "mit",
            "--namespaced",
        ],
    )
    .success();
    let project = read(&dir, "PROJECT");
    for expected in [
        "domain: example.com",
        "projectName: guestbook-operator",
        "owner: Jane Doe",
        "license: mit",
        "namespaced: true",
    ] {
        assert!(project.contains(expected), "{expected} in\n{project}");
    }
    assert!(read(&dir, "src/main.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert!(read(&dir, "hack/boilerplate.txt").contains("SPDX-License-Identifier: MIT"));
    assert!(read(&dir, "Cargo.toml").contains("name = \"guestbook-operator\""));
    let role = read(&dir, "config/rbac/role.yaml");
    assert!(
        role.contains("kind: Role"),
        "a namespaced operator gets a Role:\n{role}"
    );
}

#[test]
fn license_none_writes_no_header() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--license", "none"]).success();
    assert!(!read(&dir, "src/main.rs").contains("Copyright"));
    assert!(!read(&dir, "Cargo.toml").contains("license ="));
}

#[test]
fn init_dry_run_lists_files_and_writes_nothing() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--dry-run"])
        .success()
        .stdout(contains("create src/main.rs"))
        .stdout(contains("create PROJECT"))
        .stdout(contains("nothing was written"));
    assert!(snapshot(&dir).is_empty());
}

/// Bad values of every flag are in tests/messages.txt; this one needs a folder of its own.
#[test]
fn a_folder_name_that_is_no_project_name_asks_for_one() {
    let (_tmp, dir) = project_dir("My_Project");
    assert_rejected(&dir, &["init"], &["'My_Project'", "--project-name"]);
}

#[test]
fn init_refuses_folders_that_are_not_empty() {
    for (file, needle) in [
        ("PROJECT", "already has PROJECT"),
        ("Cargo.toml", "already has Cargo.toml"),
        ("notes.txt", "not empty"),
    ] {
        let (_tmp, dir) = project_dir("example");
        fs::write(dir.join(file), "mine").unwrap();
        assert_rejected(&dir, &["init"], &[needle]);
    }
    let (_tmp, dir) = project_dir("example");
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(dir.join("src/main.rs"), "fn main() {}").unwrap();
    assert_rejected(&dir, &["init"], &["already has src/main.rs"]);

    // Hidden files (a git checkout) and a license are fine.
    let (_tmp, dir) = project_dir("example");
    fs::create_dir(dir.join(".git")).unwrap();
    fs::write(dir.join("LICENSE"), "mine").unwrap();
    rbuilder(&dir, &["init"]).success();
    assert_eq!(read(&dir, "LICENSE"), "mine");
}

#[test]
fn init_in_a_folder_that_cannot_be_written_fails_cleanly() {
    // A file where init needs a folder makes a write fail midway; nothing may be left over.
    let (_tmp, dir) = project_dir("example");
    fs::write(dir.join(".github"), "in the way").unwrap();
    let before = snapshot(&dir);
    rbuilder(&dir, &["init"])
        .failure()
        .stderr(contains("error:"))
        .stderr(contains(".github"));
    assert_eq!(before, snapshot(&dir));
}

#[test]
fn version_names_the_generated_dependencies() {
    let (_tmp, dir) = project_dir("x");
    rbuilder(&dir, &["version"])
        .success()
        .stdout(contains(concat!("rbuilder ", env!("CARGO_PKG_VERSION"))))
        .stdout(contains("kube 5"))
        .stdout(contains("k8s-openapi 0.29"))
        .stdout(contains("Kubernetes 1.37"));
}

#[test]
fn completion_scripts_are_printed() {
    let (_tmp, dir) = project_dir("x");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        rbuilder(&dir, &["completion", shell])
            .success()
            .stdout(contains("rbuilder"));
    }
}

#[test]
fn every_command_has_help_with_an_example() {
    let (_tmp, dir) = project_dir("x");
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["create", "api", "--help"],
        &["edit", "--help"],
        &["version", "--help"],
        &["completion", "--help"],
    ] {
        rbuilder(&dir, args).success().stdout(contains("Example"));
    }
}

#[test]
fn create_api_writes_the_resource_and_registers_it() {
    let (_tmp, dir) = initialized("example");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "DemoMicroService",
            "--short-name",
            "dms",
        ],
    )
    .success()
    .stdout(contains("create src/api/v1/demo_micro_service.rs"));
    for file in [
        "src/api/v1/mod.rs",
        "src/api/v1/demo_micro_service.rs",
        "src/controller/demo_micro_service.rs",
        "config/crd/bases/devops.my.domain_demomicroservices.yaml",
        "config/crd/kustomization.yaml",
        "config/samples/devops_v1_demomicroservice.yaml",
        "config/rbac/demomicroservice_admin_role.yaml",
        "config/rbac/demomicroservice_editor_role.yaml",
        "config/rbac/demomicroservice_viewer_role.yaml",
    ] {
        assert!(dir.join(file).is_file(), "create api should write {file}");
    }
    let project = read(&dir, "PROJECT");
    for expected in [
        "kind: DemoMicroService",
        "group: devops",
        "version: v1",
        "plural: demomicroservices",
        "namespaced: true",
        "controller: true",
    ] {
        assert!(project.contains(expected), "{expected} in\n{project}");
    }
    assert!(read(&dir, "src/api/mod.rs").contains("pub mod v1;"));
    assert!(read(&dir, "src/controller/mod.rs").contains("pub mod demo_micro_service;"));
    assert!(read(&dir, "config/default/kustomization.yaml").contains("- ../crd"));
    let crd = read(
        &dir,
        "config/crd/bases/devops.my.domain_demomicroservices.yaml",
    );
    assert!(crd.contains("- dms"), "{crd}");
    let role = read(&dir, "config/rbac/role.yaml");
    assert!(role.contains("demomicroservices/finalizers"), "{role}");
}

#[test]
fn create_api_alias_and_default_version() {
    let (_tmp, dir) = initialized("example");
    rbuilder(
        &dir,
        &["create-api", "--group", "devops", "--kind", "Guestbook"],
    )
    .success();
    assert!(dir.join("src/api/v1/guestbook.rs").is_file());
}

#[test]
fn create_api_dry_run_writes_nothing() {
    let (_tmp, dir) = initialized("example");
    let before = snapshot(&dir);
    let mut args = DEMO.to_vec();
    args.push("--dry-run");
    rbuilder(&dir, &args)
        .success()
        .stdout(contains("create src/controller/demo_micro_service.rs"))
        .stdout(contains("update PROJECT"));
    assert_eq!(before, snapshot(&dir));
}

#[test]
fn create_api_needs_a_project() {
    let (_tmp, dir) = project_dir("example");
    assert_rejected(&dir, DEMO, &["no PROJECT file", "rbuilder init"]);

    fs::write(dir.join("PROJECT"), "domain: [unclosed\n").unwrap();
    assert_rejected(&dir, DEMO, &["PROJECT", "not a valid PROJECT file"]);

    fs::write(
        dir.join("PROJECT"),
        "domain: my.domain\nlayout:\n- go.kubebuilder.io/v4\nprojectName: example\nlicense: apache2\nversion: \"3\"\n",
    )
    .unwrap();
    assert_rejected(
        &dir,
        DEMO,
        &[
            "kubebuilder project (layout go.kubebuilder.io/v4)",
            "rbuilder init",
        ],
    );
}

#[test]
fn the_same_resource_twice_needs_force_and_force_rewrites_only_its_files() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    assert_rejected(
        &dir,
        DEMO,
        &["DemoMicroService", "already exists", "--force"],
    );

    // Edit a file of the resource and a file that is not the resource's.
    let controller = dir.join("src/controller/demo_micro_service.rs");
    let main = dir.join("src/main.rs");
    fs::write(&controller, "// mine\n").unwrap();
    let main_before = fs::read(&main).unwrap();
    let mut args = DEMO.to_vec();
    args.push("--force");
    rbuilder(&dir, &args)
        .success()
        .stdout(contains("--force rewrote"))
        .stdout(contains("src/controller/demo_micro_service.rs"));
    assert_ne!(fs::read_to_string(&controller).unwrap(), "// mine\n");
    assert_eq!(fs::read(&main).unwrap(), main_before);
    // Registered once, not twice.
    let registry = read(&dir, "src/controller/mod.rs");
    assert_eq!(registry.matches("pub mod demo_micro_service;").count(), 1);
}

#[test]
fn force_without_image_takes_back_what_only_the_deploy_image_controller_needed() {
    let (_tmp, dir) = initialized("example");
    let with_image = [
        "create", "api", "--group", "devops", "--kind", "Web", "--image", "nginx:1",
    ];
    let plain = [
        "create", "api", "--group", "devops", "--kind", "Web", "--force",
    ];
    rbuilder(&dir, &with_image).success();
    assert!(read(&dir, "config/rbac/role.yaml").contains("deployments"));
    rbuilder(&dir, &plain).success();
    // The plain controller manages no Deployments, and PROJECT no longer says it does.
    assert!(!read(&dir, "config/rbac/role.yaml").contains("deployments"));
    assert!(read(&dir, "config/rbac/role.yaml").contains("webs/status"));
    assert!(!read(&dir, "PROJECT").contains("deploy-image"));

    // With another deploy-image controller in the project, its rules stay.
    rbuilder(
        &dir,
        &[
            "create", "api", "--group", "devops", "--kind", "App", "--image", "nginx:1",
        ],
    )
    .success();
    rbuilder(&dir, &[&with_image[..], &["--force"]].concat()).success();
    rbuilder(&dir, &plain).success();
    assert!(read(&dir, "config/rbac/role.yaml").contains("deployments"));
    let project: serde_json::Value = serde_saphyr::from_str(&read(&dir, "PROJECT")).unwrap();
    let deploy_image_kinds: Vec<&str> =
        project["plugins"]["deploy-image.rbuilder.io/v1-alpha"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
    assert_eq!(deploy_image_kinds, ["App"]);
}

#[test]
fn a_kind_lives_in_one_group_and_has_one_controller() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--multigroup"]).success();
    rbuilder(
        &dir,
        &["create", "api", "--group", "alpha", "--kind", "Foo"],
    )
    .success();
    // Its controller file is src/controller/foo.rs: --force must not take alpha's.
    assert_rejected(
        &dir,
        &[
            "create", "api", "--group", "beta", "--kind", "Foo", "--force",
        ],
        &[
            "kind Foo already exists in group 'alpha'",
            "choose another kind name",
        ],
    );
    let v2 = [
        "create",
        "api",
        "--group",
        "alpha",
        "--kind",
        "Foo",
        "--version",
        "v2",
    ];
    assert_rejected(
        &dir,
        &[&v2[..], &["--controller", "--force"]].concat(),
        &["Foo already has a controller", "v1"],
    );
    assert_rejected(
        &dir,
        &[&v2[..], &["--image", "nginx:1"]].concat(),
        &["--image needs a controller"],
    );
    // Names the kind's files would take from the project's own.
    for kind in ["Mod", "Main"] {
        assert_rejected(
            &dir,
            &["create", "api", "--group", "alpha", "--kind", kind],
            &[&format!("'{kind}'")],
        );
    }
    assert_rejected(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "alpha",
            "--kind",
            "Bar",
            "--resource=false",
            "--controller=false",
        ],
        &["nothing to scaffold"],
    );
}

#[test]
fn a_read_only_file_is_refused_not_replaced() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_tmp, dir) = initialized("example");
    let registry = dir.join("src/controller/mod.rs");
    fs::set_permissions(&registry, fs::Permissions::from_mode(0o444)).unwrap();
    assert_rejected(
        &dir,
        DEMO,
        &["src/controller/mod.rs is read-only", "chmod u+w"],
    );
    let mode = fs::metadata(&registry).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444);
}

#[test]
fn a_second_group_needs_multigroup() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    assert_rejected(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Site"],
        &["'web'", "rbuilder edit --multigroup"],
    );
    rbuilder(&dir, &["edit", "--multigroup"]).success();
    rbuilder(&dir, &["create", "api", "--group", "web", "--kind", "Site"]).success();
    assert!(dir.join("src/api/web/v1/site.rs").is_file());
    assert!(read(&dir, "PROJECT").contains("multigroup: true"));
}

#[test]
fn a_second_version_joins_the_existing_crd() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            "v2",
            "--kind",
            "DemoMicroService",
        ],
    )
    .success()
    .stdout(contains(
        "update config/crd/bases/devops.my.domain_demomicroservices.yaml",
    ));
    let crd = read(
        &dir,
        "config/crd/bases/devops.my.domain_demomicroservices.yaml",
    );
    assert!(
        crd.contains("name: v1") && crd.contains("name: v2"),
        "{crd}"
    );
    assert_eq!(crd.matches("storage: true").count(), 1, "{crd}");
    // The kind already has its controller; the new version does not get a second one.
    assert!(!dir.join("src/controller/demo_micro_service_v2.rs").exists());
    let kustomization = read(&dir, "config/crd/kustomization.yaml");
    assert_eq!(kustomization.matches("demomicroservices.yaml").count(), 1);
}

#[test]
fn a_controller_for_a_built_in_type() {
    let (_tmp, dir) = initialized("example");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
    )
    .success();
    assert!(dir.join("src/controller/deployment.rs").is_file());
    assert!(
        !dir.join("config/crd/bases").exists(),
        "a built-in type has no CRD"
    );
    let role = read(&dir, "config/rbac/role.yaml");
    assert!(role.contains("deployments"), "{role}");
}

#[test]
fn a_missing_marker_is_reported_and_nothing_is_written() {
    let (_tmp, dir) = initialized("example");
    let registry = dir.join("src/controller/mod.rs");
    let text = read(&dir, "src/controller/mod.rs");
    let without: String = text
        .lines()
        .filter(|l| !l.contains("+rbuilder:scaffold:controllers"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(&registry, without).unwrap();
    assert_rejected(
        &dir,
        DEMO,
        &["src/controller/mod.rs", "+rbuilder:scaffold:controllers"],
    );
}

/// Makes `dir` unwritable: chmod for a normal user, the immutable attribute for root (whom
/// permissions do not stop). Returns false where neither works on this file system.
fn make_unwritable(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
    if fs::write(dir.join(".probe"), "").is_err() {
        return true;
    }
    let _ = fs::remove_file(dir.join(".probe"));
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(dir)
        .status();
    matches!(chattr, Ok(s) if s.success()) && fs::write(dir.join(".probe"), "").is_err()
}

fn make_writable(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(dir)
        .status();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn init_in_an_unwritable_folder_says_so_and_leaves_it_empty() {
    let (_tmp, dir) = project_dir("example");
    if !make_unwritable(&dir) {
        eprintln!("skipped: cannot make a folder unwritable here (no chattr, running as root)");
        return;
    }
    let out = rbuilder(&dir, &["init"]).failure().get_output().clone();
    make_writable(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: nothing was changed"), "{stderr}");
    assert!(stderr.contains("cannot"), "{stderr}");
    assert!(snapshot(&dir).is_empty());
}

#[test]
fn a_second_version_keeps_the_names_of_the_first() {
    let (_tmp, dir) = initialized("example");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Foo",
            "--plural",
            "things",
            "--short-name",
            "fo",
        ],
    )
    .success();
    // What the other names may not be: tests/messages.txt (setup foo).
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            "v2",
            "--kind",
            "Foo",
        ],
    )
    .success();
    let project = read(&dir, "PROJECT");
    assert_eq!(project.matches("plural: things").count(), 2, "{project}");
    assert!(
        !dir.join("config/crd/bases/devops.my.domain_foos.yaml")
            .exists()
    );
}

#[test]
fn a_controller_can_be_added_to_a_resource_made_without_one() {
    let (_tmp, dir) = initialized("example");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Foo",
            "--namespaced=false",
            "--controller=false",
        ],
    )
    .success();
    assert!(!dir.join("src/controller/foo.rs").exists());
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Foo",
            "--resource=false",
        ],
    )
    .success();
    assert!(dir.join("src/controller/foo.rs").is_file());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("namespaced: false") && project.contains("controller: true"),
        "{project}"
    );
}

#[test]
fn dry_run_reports_the_conflicts_a_real_run_would_hit() {
    let (_tmp, dir) = initialized("example");
    fs::create_dir_all(dir.join("src/api/v1")).unwrap();
    fs::write(dir.join("src/api/v1/foo.rs"), "// mine\n").unwrap();
    assert_rejected(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Foo",
            "--dry-run",
        ],
        &["src/api/v1/foo.rs", "already exists"],
    );
}

/// A project with the DemoMicroService, as the tutorial makes it.
fn demo_project() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = initialized("demo");
    let args = [
        DEMO,
        &[
            "--image",
            "stefanprodan/podinfo:6.7.1",
            "--image-container-port",
            "9898",
            "--short-name",
            "dms",
        ],
    ]
    .concat();
    rbuilder(&dir, &args).success();
    (tmp, dir)
}

#[test]
fn owned_files_say_so_and_user_files_do_not() {
    let (_tmp, dir) = demo_project();
    for owned in [
        "runtime/src/controller.rs",
        "runtime/Cargo.toml",
        "src/bin/manifests.rs",
    ] {
        let text = read(&dir, owned);
        assert!(
            text.contains("Code generated by rbuilder. DO NOT EDIT"),
            "{owned}"
        );
        assert!(text.contains("rbuilder-checksum: "), "{owned}");
    }
    for user in [
        "src/main.rs",
        "src/lib.rs",
        "src/controller/demo_micro_service.rs",
        "src/controller/demo_micro_service/tests.rs",
        "tests/e2e/main.rs",
    ] {
        assert!(!read(&dir, user).contains("DO NOT EDIT"), "{user}");
    }
    assert!(read(&dir, "PROJECT").contains("cliVersion: "));
}

#[test]
fn update_says_how_to_move_conversions_written_for_the_old_runtime() {
    let (_tmp, dir) = demo_project();
    // A conversion as rbuilder wrote it before spokes had files of their own.
    let old = "src/webhook/v1/demo_micro_service_conversion.rs";
    fs::create_dir_all(dir.join("src/webhook/v1")).unwrap();
    fs::write(
        dir.join(old),
        "pub const CONVERSION: Webhook =\n    \
         webhook::conversion::<Hub>(&[webhook::spoke::<Hub, V2>()]);\n",
    )
    .unwrap();
    rbuilder(&dir, &["update"])
        .success()
        .stdout(contains(format!("Move the `From`s of {old} there")));
}

#[test]
fn update_says_what_a_project_made_before_webhooks_lacks() {
    let (_tmp, dir) = demo_project();
    let lib = read(&dir, "src/lib.rs").replace("    webhooks: webhook::WEBHOOKS,\n", "");
    fs::write(dir.join("src/lib.rs"), lib).unwrap();
    rbuilder(&dir, &["update"])
        .success()
        .stdout(contains("add `webhooks: webhook::WEBHOOKS,` to OPERATOR"));
}

#[test]
fn update_restores_owned_files_keeps_user_edits_and_refuses_hand_edited_owned_files() {
    let (_tmp, dir) = demo_project();
    let pristine = snapshot(&dir);

    // Nothing to do on a fresh project.
    rbuilder(&dir, &["update"])
        .success()
        .stdout(contains("Your files are as a new scaffold writes them"));
    assert_eq!(snapshot(&dir), pristine);

    // An owned file an older rbuilder wrote (simulated: deleted) comes back; a user edit stays
    // and is listed.
    fs::remove_file(dir.join("runtime/src/events.rs")).unwrap();
    let controller = "src/controller/demo_micro_service.rs";
    let mine = format!("{}// my change\n", read(&dir, controller));
    fs::write(dir.join(controller), &mine).unwrap();
    rbuilder(&dir, &["update"])
        .success()
        .stdout(contains("create runtime/src/events.rs"))
        .stdout(contains(controller));
    assert_eq!(read(&dir, controller), mine);
    assert_eq!(
        fs::read(dir.join("runtime/src/events.rs")).unwrap(),
        *pristine[std::path::Path::new("runtime/src/events.rs")]
            .as_ref()
            .unwrap()
    );

    // A hand edit to an owned file is refused, naming the file, and nothing is written.
    let lib = "runtime/src/lib.rs";
    fs::write(dir.join(lib), format!("{}// hand edit\n", read(&dir, lib))).unwrap();
    assert_rejected(&dir, &["update"], &[lib, "--force"]);
    // --dry-run says what --force would do, and writes nothing.
    let before = snapshot(&dir);
    rbuilder(&dir, &["update", "--force", "--dry-run"])
        .success()
        .stdout(contains(format!("update {lib}")));
    assert_eq!(snapshot(&dir), before);
    rbuilder(&dir, &["update", "--force"]).success();
    assert_eq!(
        fs::read(dir.join(lib)).unwrap(),
        *pristine[std::path::Path::new(lib)].as_ref().unwrap()
    );
}

#[test]
fn update_records_its_version_and_deletes_owned_files_it_no_longer_writes() {
    let (_tmp, dir) = demo_project();
    let current = format!("cliVersion: \"{}\"", env!("CARGO_PKG_VERSION"));
    let project = read(&dir, "PROJECT").replace(&current, "cliVersion: \"0.0.1\"");
    fs::write(dir.join("PROJECT"), project).unwrap();
    // What an older rbuilder's runtime had, copied with its ownership header.
    let old_module = read(&dir, "runtime/src/crd.rs");
    fs::write(dir.join("runtime/src/old.rs"), old_module).unwrap();
    rbuilder(&dir, &["update"])
        .success()
        .stdout(contains("delete runtime/src/old.rs"))
        .stdout(contains(format!(
            "from rbuilder 0.0.1 to {}",
            env!("CARGO_PKG_VERSION")
        )));
    assert!(!dir.join("runtime/src/old.rs").exists());
    assert!(read(&dir, "PROJECT").contains(&current));
}

#[test]
fn alpha_generate_replays_the_project_into_a_new_folder() {
    let (tmp, dir) = demo_project();
    rbuilder(
        &dir,
        &["create", "api", "--group", "devops", "--kind", "Guestbook"],
    )
    .success();
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
    )
    .success();
    let out = tmp.path().join("fresh");
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"])
        .success()
        .stdout(contains("init and 3 create api"));
    assert_same_tree(&snapshot(&dir), &snapshot(&out), "the replayed project");

    // Never over the project itself, nor into a folder with files.
    assert_rejected(
        &dir,
        &["alpha", "generate", "--output-dir", "."],
        &["new folder"],
    );
    assert_rejected(
        &dir,
        &["alpha", "generate", "--output-dir", "../fresh"],
        &["not empty"],
    );
    // A dry run writes nothing.
    rbuilder(
        &dir,
        &["alpha", "generate", "--output-dir", "../other", "--dry-run"],
    )
    .success()
    .stdout(contains("nothing was written"));
    assert!(!tmp.path().join("other").exists());
}

#[test]
fn alpha_generate_reproduces_the_checked_in_example() {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-microservice");
    let (tmp, _dir) = project_dir("unused");
    let out = tmp.path().join("demo-microservice");
    let args = [
        "alpha",
        "generate",
        "--input-dir",
        example.to_str().unwrap(),
        "--output-dir",
    ];
    rbuilder(tmp.path(), &[&args[..], &[out.to_str().unwrap()]].concat()).success();
    let mut checked_in = snapshot(&example);
    checked_in.retain(|path, _| {
        !path.starts_with("target") && path != std::path::Path::new("Cargo.lock")
    });
    assert_same_tree(&checked_in, &snapshot(&out), "the replayed example");
}

#[test]
fn edit_namespaced_makes_the_project_init_namespaced_makes() {
    let guestbook = ["create", "api", "--group", "web", "--kind", "Guestbook"];
    let (_a, edited) = initialized("op");
    rbuilder(&edited, &guestbook).success();
    rbuilder(&edited, &["edit", "--namespaced"])
        .success()
        .stdout(contains("update config/manager/manager.yaml"));
    let (_b, made) = project_dir("op");
    rbuilder(&made, &["init", "--domain", "my.domain", "--namespaced"]).success();
    rbuilder(&made, &guestbook).success();
    assert_same_tree(&snapshot(&made), &snapshot(&edited), "edit --namespaced");
    assert!(read(&edited, "config/rbac/guestbook_editor_role.yaml").contains("kind: Role\n"));

    // And back.
    rbuilder(&edited, &["edit", "--namespaced=false"]).success();
    assert!(read(&edited, "config/rbac/role.yaml").contains("kind: ClusterRole"));
}

#[test]
fn edit_namespaced_refuses_cluster_scoped_kinds_and_hand_edited_files() {
    let (_tmp, dir) = initialized("op");
    let policy = [
        "create",
        "api",
        "--group",
        "web",
        "--kind",
        "Policy",
        "--namespaced=false",
    ];
    rbuilder(&dir, &policy).success();
    assert_rejected(
        &dir,
        &["edit", "--namespaced"],
        &["cluster-scoped kinds (Policy)"],
    );

    let (_tmp, dir) = initialized("op");
    let manager = "config/manager/manager.yaml";
    fs::write(dir.join(manager), read(&dir, manager) + "# mine\n").unwrap();
    assert_rejected(&dir, &["edit", "--namespaced"], &[manager, "--force"]);
    rbuilder(&dir, &["edit", "--namespaced", "--force"])
        .success()
        .stdout(contains(format!("--force rewrote: {manager}")));
    assert!(!read(&dir, manager).contains("# mine"));
}

#[test]
fn edit_license_and_owner_change_the_header_of_what_comes_next() {
    let (_tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--license", "mit", "--owner", "Jane Doe"]).success();
    assert_eq!(
        read(&dir, "hack/boilerplate.txt"),
        "Copyright 2026 Jane Doe.\n\nSPDX-License-Identifier: MIT\n"
    );
    assert!(read(&dir, "Cargo.toml").contains("license = \"MIT\""));
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("license: mit") && project.contains("owner: Jane Doe"),
        "{project}"
    );
    // New files get the new header; rbuilder's own files get it with `update`.
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    assert!(read(&dir, "src/controller/guestbook.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert!(read(&dir, "runtime/src/lib.rs").contains("Apache License"));
    rbuilder(&dir, &["update"]).success();
    assert!(read(&dir, "runtime/src/lib.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert_rejected(&dir, &["edit", "--owner", " "], &["--owner is empty"]);
    assert_rejected(&dir, &["edit"], &["nothing to edit"]);
}

#[test]
fn kubebuilder_conventions() {
    let (_tmp, dir) = initialized("op");
    // A dotted group, as in kubebuilder's own testdata.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "example.com",
            "--kind",
            "Captain",
        ],
    )
    .success();
    assert!(
        dir.join("config/samples/example.com_v1_captain.yaml")
            .is_file()
    );
    assert!(read(&dir, "PROJECT").contains("group: example.com"));
    // Acronyms stay together in module names.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "example.com",
            "--kind",
            "OAuth2Client",
        ],
    )
    .success();
    assert!(dir.join("src/controller/oauth2_client.rs").is_file());
    // A built-in type has no CRD to regenerate, and the core group says its name.
    let secret = [
        "create",
        "api",
        "--group",
        "core",
        "--kind",
        "Secret",
        "--resource=false",
    ];
    rbuilder(&dir, &secret)
        .success()
        .stdout(contains(
            "Added a controller for core/v1, Kind=Secret (Kubernetes' own type: no CRD)",
        ))
        .stdout(contains("CRD").count(1));
    // Deploy-image options are recorded as kubebuilder records them.
    let memcached = [
        "create",
        "api",
        "--group",
        "example.com",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
        "--image",
        "memcached:1.6",
        "--image-container-port",
        "11211",
        "--run-as-user",
        "1001",
    ];
    rbuilder(&dir, &memcached).success();
    let project = read(&dir, "PROJECT");
    assert!(project.contains("containerPort: \"11211\""), "{project}");
    // One limit per message.
    let long = format!("K{}", "a".repeat(59));
    let args = ["create", "api", "--group", "web", "--kind", long.as_str()];
    assert_rejected(
        &dir,
        &args,
        &["longer than 59 characters", "at most 59 characters"],
    );
}

#[test]
fn a_namespaced_operator_gets_namespaced_roles_for_its_users() {
    let (_tmp, dir) = project_dir("op");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--namespaced"]).success();
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    for role in ["admin", "editor", "viewer"] {
        let text = read(&dir, &format!("config/rbac/guestbook_{role}_role.yaml"));
        assert!(
            text.contains("kind: Role\n") && text.contains("namespace: system"),
            "{text}"
        );
    }
}

#[test]
fn the_grafana_plugin_writes_dashboards_of_the_exported_metrics() {
    let (tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--plugins", "grafana/v1-alpha"])
        .success()
        .stdout(contains("create grafana/controller-runtime-metrics.json"));
    let dashboard: serde_json::Value =
        serde_json::from_str(&read(&dir, "grafana/controller-runtime-metrics.json")).unwrap();
    let exprs = dashboard["panels"].to_string();
    // Metrics the runtime exports (runtime/src/metrics.rs), under controller-runtime's names.
    for metric in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_active_workers",
        "rest_client_requests_total",
    ] {
        assert!(exprs.contains(metric), "no {metric} in the dashboard");
    }
    assert!(read(&dir, "runtime/src/metrics.rs").contains("\"controller_runtime_active_workers\""));
    assert!(read(&dir, "PROJECT").contains("grafana.rbuilder.io/v1-alpha: {}"));

    // The user's own metrics get a dashboard, which alpha generate reproduces.
    let config = "customMetrics:\n- metric: my_things_total\n  type: counter\n";
    fs::write(dir.join("grafana/custom-metrics/config.yaml"), config).unwrap();
    rbuilder(&dir, &["edit", "--plugins", "grafana/v1-alpha"])
        .success()
        .stdout(contains(
            "create grafana/custom-metrics/custom-metrics-dashboard.json",
        ));
    assert_eq!(read(&dir, "grafana/custom-metrics/config.yaml"), config);
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"]).success();
    assert_same_tree(
        &snapshot(&dir),
        &snapshot(&tmp.path().join("fresh")),
        "replay",
    );

    fs::write(
        dir.join("grafana/custom-metrics/config.yaml"),
        "customMetrics: [{metric: x}]\n",
    )
    .unwrap();
    assert_rejected(
        &dir,
        &["edit", "--plugins", "grafana/v1-alpha"],
        &["config.yaml is not valid", "`type`"],
    );
    assert_rejected(
        &dir,
        &["edit", "--plugins", "helm/v1-alpha"],
        &["unknown plugin 'helm/v1-alpha'"],
    );
}

/// `create webhook` for DemoMicroService v1 with `flags`.
fn webhook_args<'a>(version: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        "devops",
        "--version",
        version,
        "--kind",
        "DemoMicroService",
    ];
    args.extend_from_slice(flags);
    args
}

#[test]
fn create_webhook_writes_the_kinds_webhooks_registers_and_records_them() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    let args = webhook_args("v1", &["--defaulting", "--programmatic-validation"]);
    rbuilder(&dir, &args)
        .success()
        .stdout(contains("create src/webhook/v1/demo_micro_service.rs"));
    let registry = read(&dir, "src/webhook/mod.rs");
    assert!(registry.contains("pub mod v1;"), "{registry}");
    assert!(
        registry.contains("v1::demo_micro_service::DEFAULTING,"),
        "{registry}"
    );
    assert!(
        registry.contains("v1::demo_micro_service::VALIDATING,"),
        "{registry}"
    );
    assert!(read(&dir, "src/webhook/v1/mod.rs").contains("pub mod demo_micro_service;"));
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(
            "  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"
        ),
        "{project}"
    );

    // Deployed as kubebuilder deploys webhooks: configurations from the code, a Service, a
    // cert-manager certificate, all enabled in config/default.
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("path: /mutate-devops-my-domain-v1-demomicroservice"),
        "{manifests}"
    );
    assert!(
        manifests.contains("name: vdemomicroservice-v1.kb.io"),
        "{manifests}"
    );
    let default = read(&dir, "config/default/kustomization.yaml");
    for enabled in [
        "\n- ../webhook\n",
        "\n- ../certmanager\n",
        "\n- path: manager_webhook_patch.yaml\n",
        "\nreplacements:\n- path: webhook_replacements.yaml\n",
    ] {
        assert!(default.contains(enabled), "{enabled:?} in\n{default}");
    }
    assert!(
        read(&dir, "config/certmanager/kustomization.yaml").contains("- certificate-webhook.yaml")
    );

    // Conversion to a second version: its own file, registered after the others.
    let v2 = [
        "create",
        "api",
        "--group",
        "devops",
        "--version",
        "v2",
        "--kind",
        "DemoMicroService",
    ];
    rbuilder(&dir, &v2).success();
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v2"]),
    )
    .success()
    .stdout(contains(
        "create src/webhook/v2/demo_micro_service_conversion.rs",
    ));
    let conversion = read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs");
    assert!(
        conversion.contains("impl From<Spoke> for Hub {")
            && conversion.contains("type Spoke = v2::DemoMicroService;"),
        "{conversion}"
    );
    let project = read(&dir, "PROJECT");
    assert!(project.contains("    conversion: true\n"), "{project}");
    assert!(project.contains("    spoke:\n    - v2\n"), "{project}");
    assert!(
        read(&dir, "src/webhook/mod.rs").contains("v2::demo_micro_service_conversion::CONVERSION,")
    );

    // A third version joins the conversion without --force, touching no file of the second;
    // converting the second again needs --force.
    let v3: Vec<&str> = v2
        .iter()
        .map(|a| if *a == "v2" { "v3" } else { a })
        .collect();
    rbuilder(&dir, &v3).success();
    let before = read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs");
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v3"]),
    )
    .success()
    .stdout(contains(
        "create src/webhook/v3/demo_micro_service_conversion.rs",
    ));
    assert_eq!(
        before,
        read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs")
    );
    assert!(
        read(&dir, "PROJECT").contains("    spoke:\n    - v2\n    - v3\n"),
        "{}",
        read(&dir, "PROJECT")
    );
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v2"]),
    )
    .failure()
    .stderr(contains("already converts to and from v2"));

    // --force rewrites the kind's webhook file, and registers nothing twice.
    rbuilder(&dir, &webhook_args("v1", &["--defaulting", "--force"]))
        .success()
        .stdout(contains("overwrite src/webhook/v1/demo_micro_service.rs"));
    let registry = read(&dir, "src/webhook/mod.rs");
    assert_eq!(registry.matches("DEFAULTING,").count(), 1, "{registry}");
    assert!(
        registry.contains("VALIDATING,"),
        "--force keeps validation: {registry}"
    );
}

#[test]
fn create_webhook_dry_run_writes_nothing() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    let before = snapshot(&dir);
    rbuilder(&dir, &webhook_args("v1", &["--defaulting", "--dry-run"]))
        .success()
        .stdout(contains("create src/webhook/v1/demo_micro_service.rs"))
        .stdout(contains("dry run: nothing was written"));
    assert_eq!(before, snapshot(&dir));
}

#[test]
fn create_webhook_rejections_write_nothing() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    rbuilder(&dir, &webhook_args("v1", &["--defaulting"])).success();
    let cases: &[(Vec<&str>, &[&str])] = &[
        (
            webhook_args("v1", &[]),
            &["no webhook chosen", "--defaulting"],
        ),
        (
            webhook_args("v3", &["--defaulting"]),
            &["devops/v3 DemoMicroService", "not a resource", "create api"],
        ),
        (
            vec![
                "create",
                "webhook",
                "--group",
                "devops",
                "--version",
                "v1",
                "--kind",
                "Missing",
                "--defaulting",
            ],
            &["Missing", "not a resource of this project"],
        ),
        (
            webhook_args("v1", &["--defaulting"]),
            &["already has a defaulting webhook", "--force"],
        ),
        (
            webhook_args("v1", &["--programmatic-validation"]),
            &["already has webhooks", "--force"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v2"]),
            &["--conversion", "has one (v1)", "create api"],
        ),
        (
            webhook_args("v1", &["--spoke", "v2"]),
            &["--spoke only applies with --conversion"],
        ),
        (
            vec![
                "create",
                "webhook",
                "--group",
                "devops",
                "--kind",
                "demo",
                "--defaulting",
            ],
            &["'demo'", "UpperCamelCase"],
        ),
    ];
    for (args, needles) in cases {
        assert_rejected(&dir, args, needles);
    }

    // With a second version: the spokes must be versions of the kind, other than the hub.
    let v2 = [
        "create",
        "api",
        "--group",
        "devops",
        "--version",
        "v2",
        "--kind",
        "DemoMicroService",
    ];
    rbuilder(&dir, &v2).success();
    let cases: &[(Vec<&str>, &[&str])] = &[
        (webhook_args("v1", &["--conversion"]), &["--spoke", "v2"]),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v9"]),
            &["--spoke v9", "has no version v9", "v1, v2"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v1"]),
            &["--spoke v1 is the hub"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v2,v2"]),
            &["given twice"],
        ),
    ];
    for (args, needles) in cases {
        assert_rejected(&dir, args, needles);
    }
}

#[test]
fn create_webhook_needs_a_project() {
    let (_tmp, dir) = project_dir("empty");
    assert_rejected(
        &dir,
        &webhook_args("v1", &["--defaulting"]),
        &["no PROJECT file"],
    );
}

#[test]
fn alpha_generate_replays_webhooks() {
    let (tmp, dir) = initialized("example");
    let guestbook = |version: &'static str| {
        vec![
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            version,
            "--kind",
            "Guestbook",
        ]
    };
    rbuilder(&dir, &guestbook("v1")).success();
    rbuilder(&dir, &guestbook("v2")).success();
    let webhook = [
        "create",
        "webhook",
        "--group",
        "devops",
        "--version",
        "v1",
        "--kind",
        "Guestbook",
    ];
    let admission = ["--defaulting", "--programmatic-validation"];
    rbuilder(&dir, &[&webhook[..], &admission[..]].concat()).success();
    let conversion = ["--conversion", "--spoke", "v2"];
    rbuilder(&dir, &[&webhook[..], &conversion[..]].concat()).success();
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"])
        .success()
        .stdout(contains("init, 2 create api and 1 create webhook"));
    let fresh = tmp.path().join("fresh");
    assert_same_tree(&snapshot(&dir), &snapshot(&fresh), "the replayed project");
}

#[test]
fn webhooks_for_a_built_in_type_need_no_controller_and_skip_the_managers_namespace() {
    let (tmp, dir) = initialized("example");
    let pod = ["--group", "core", "--version", "v1", "--kind", "Pod"];
    rbuilder(
        &dir,
        &[&["create", "webhook"][..], &pod, &["--defaulting"]].concat(),
    )
    .success()
    .stdout(contains("create src/webhook/v1/pod.rs"));
    assert!(!dir.join("src/controller/pod.rs").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- domain: k8s.io\n  group: \"\"\n  kind: Pod\n  plural: pods\n"),
        "{project}"
    );
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(manifests.contains("path: /mutate--v1-pod"), "{manifests}");
    assert!(
        manifests.contains("operator: NotIn\n      values:\n      - system\n      - kube-system\n"),
        "{manifests}"
    );
    let replacements = read(&dir, "config/default/webhook_replacements.yaml");
    assert!(
        replacements.contains(".webhooks.*.namespaceSelector.matchExpressions"),
        "{replacements}"
    );

    // Scoped to its namespace, the operator's Pod webhook looks there only.
    rbuilder(&dir, &["edit", "--namespaced"]).success();
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("operator: In\n      values:\n      - system\n  objectSelector:"),
        "{manifests}"
    );

    // A controller can come later; the entry keeps its webhooks, and a replay gives the same.
    rbuilder(
        &dir,
        &[&["create", "api"][..], &pod, &["--resource=false"]].concat(),
    )
    .success();
    assert!(dir.join("src/controller/pod.rs").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- controller: true\n  domain: k8s.io\n  group: \"\"\n  kind: Pod\n"),
        "{project}"
    );
    assert!(project.contains("    defaulting: true\n"), "{project}");
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"]).success();
    let fresh = tmp.path().join("fresh");
    assert_same_tree(&snapshot(&dir), &snapshot(&fresh), "the replayed project");
}

#[test]
fn a_validator_that_asks_for_deletions_keeps_them_when_another_webhook_is_added() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    rbuilder(&dir, &webhook_args("v1", &["--programmatic-validation"])).success();
    // What `make manifests` writes once the validator sets `VALIDATE_DELETE`.
    let file = dir.join("config/webhook/manifests.yaml");
    let with_delete = read(&dir, "config/webhook/manifests.yaml")
        .replace("    - UPDATE\n", "    - UPDATE\n    - DELETE\n");
    fs::write(&file, &with_delete).expect("write");
    let pod = ["--group", "core", "--version", "v1", "--kind", "Pod"];
    rbuilder(
        &dir,
        &[&["create", "webhook"][..], &pod, &["--defaulting"]].concat(),
    )
    .success();
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(manifests.contains("path: /mutate--v1-pod"), "{manifests}");
    assert_eq!(manifests.matches("- DELETE").count(), 1, "{manifests}");
}

#[test]
fn create_webhook_in_a_project_made_before_webhooks_says_what_to_add() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    fs::remove_file(dir.join("src/webhook/mod.rs")).expect("remove");
    assert_rejected(
        &dir,
        &webhook_args("v1", &["--defaulting"]),
        &[
            "src/webhook/mod.rs does not exist",
            "webhooks: webhook::WEBHOOKS",
        ],
    );
}

/// `--external-api-path -` reads the CRD from stdin; `--force` regenerates the types (and
/// leaves everything else as it was); `--controller=false` writes only the types.
#[test]
fn external_types_come_from_a_file_or_stdin_and_force_regenerates_them() {
    let (_tmp, dir) = initialized("ext");
    let crd = std::fs::read_to_string(
        repo().join("testdata/crds/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml"),
    )
    .unwrap();
    let args = [
        "create",
        "api",
        "--group",
        "monitoring.coreos.com",
        "--kind",
        "ServiceMonitor",
        "--resource=false",
        "--external-api-path",
        "-",
    ];
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .write_stdin(crd.clone())
        .assert()
        .success();
    let types = "src/api/external/monitoring/v1/service_monitor.rs";
    assert!(read(&dir, types).contains("pub struct ServiceMonitorSpec {"));
    assert!(read(&dir, "PROJECT").contains("external: true"));
    assert!(read(&dir, "config/rbac/role.yaml").contains("servicemonitors"));
    // No CRD of its own.
    let crds = dir.join("config/crd/bases");
    assert!(!crds.exists() || crds.read_dir().unwrap().next().is_none());

    // Again: refused without --force; with it, the same files.
    let before = snapshot(&dir);
    std::fs::write(dir.join(types), "// edited\n").unwrap();
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .write_stdin(crd.clone())
        .assert()
        .failure();
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .arg("--force")
        .write_stdin(crd)
        .assert()
        .success();
    assert_eq!(
        before,
        snapshot(&dir),
        "--force wrote the same project again"
    );

    // Only the types.
    let path = repo().join("testdata/crds/cert-manager/certificates.cert-manager.io.yaml");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cert-manager",
            "--external-api-domain",
            "io",
            "--kind",
            "Certificate",
            "--resource=false",
            "--controller=false",
            "--external-api-path",
            path.to_str().unwrap(),
        ],
    )
    .success();
    assert!(
        dir.join("src/api/external/cert_manager/v1/certificate.rs")
            .is_file()
    );
    assert!(!dir.join("src/controller/certificate.rs").exists());
    assert!(read(&dir, "PROJECT").contains("domain: io\n  external: true\n  group: cert-manager"));

    // The types' header tells how to regenerate them alone: the controller stays as edited.
    let controller = "src/controller/service_monitor.rs";
    fs::write(dir.join(controller), "// my logic\n").unwrap();
    let generated = read(&dir, types);
    fs::write(dir.join(types), "// edited\n").unwrap();
    let path =
        repo().join("testdata/crds/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml");
    let header_command = format!(
        "create api --group monitoring.coreos.com --version v1 --kind ServiceMonitor \
         --resource=false --controller=false --external-api-path {} --force",
        path.display()
    );
    assert!(generated.contains(&format!(
        "// rbuilder {}\n",
        header_command.replace(&path.display().to_string(), "-")
    )));
    common::run(&dir, &header_command).success();
    assert_eq!(read(&dir, controller), "// my logic\n");
    assert_eq!(
        read(&dir, types).replace(&path.display().to_string(), "-"),
        generated.replace(&path.display().to_string(), "-")
    );
}
