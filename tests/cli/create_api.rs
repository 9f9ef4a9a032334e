//! `rbuilder create api`: the files of a kind, its versions and controllers, and what it refuses.

use std::fs;

use crate::common::{
    assert_rejected, assert_same_tree, initialized, project_dir, rbuilder, snapshot,
};
use crate::{DEMO, read};
use predicates::str::contains;

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
            "rbuilder alpha generate --input-dir",
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
fn a_kind_has_one_controller() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--multigroup"]).success();
    rbuilder(
        &dir,
        &["create", "api", "--group", "alpha", "--kind", "Foo"],
    )
    .success();
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

/// In a multigroup project, one kind name can be used in two groups, as kubebuilder's
/// testdata/project-v4-multigroup has `Bar` in `foo` and in `fiz`: each group's controllers,
/// webhooks and tests are in a folder of the group's, and the controllers and the users' roles
/// are named after the group and the kind, as kubebuilder names them.
#[test]
fn a_multigroup_project_has_one_kind_name_in_two_groups() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--multigroup"]).success();
    for group in ["foo", "fiz"] {
        rbuilder(&dir, &["create", "api", "--group", group, "--kind", "Bar"]).success();
    }
    for group in ["foo", "fiz"] {
        for file in [
            format!("src/api/{group}/v1/bar.rs"),
            format!("src/controller/{group}/bar.rs"),
            format!("src/controller/{group}/bar/tests.rs"),
            format!("tests/integration/{group}/bar.rs"),
            format!("tests/e2e/{group}/bar.rs"),
            format!("config/samples/{group}_v1_bar.yaml"),
            format!("config/crd/bases/{group}.my.domain_bars.yaml"),
        ] {
            assert!(dir.join(&file).is_file(), "{file}");
        }
        let controller = read(&dir, &format!("src/controller/{group}/bar.rs"));
        assert!(
            controller.contains(&format!("const NAME: &'static str = \"{group}-bar\";")),
            "{controller}"
        );
        for role in ["admin", "editor", "viewer"] {
            let file = read(&dir, &format!("config/rbac/{group}_bar_{role}_role.yaml"));
            assert!(
                file.contains(&format!("  name: {group}-bar-{role}-role\n")),
                "{file}"
            );
        }
    }
    let registry = read(&dir, "src/controller/mod.rs");
    assert!(
        registry.contains("    foo::bar::CONTROLLER,\n    fiz::bar::CONTROLLER,\n"),
        "{registry}"
    );
    // A second controller is named after the group too, and its name must be free.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "foo",
            "--kind",
            "Bar",
            "--resource=false",
            "--controller-name",
            "bar-backup",
        ],
    )
    .success();
    let backup = read(&dir, "src/controller/foo/bar_backup.rs");
    assert!(
        backup.contains("const NAME: &'static str = \"foo-bar-backup\";"),
        "{backup}"
    );
    // Webhooks are named after kind and version (mbar-v1.kb.io), whatever the group: one of
    // each sort for the two Bars.
    rbuilder(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "foo",
            "--kind",
            "Bar",
            "--defaulting",
        ],
    )
    .success();
    assert!(dir.join("src/webhook/foo/v1/bar.rs").is_file());
    assert!(
        dir.join("tests/integration/foo/bar_v1_webhooks.rs")
            .is_file()
    );
    assert_rejected(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "fiz",
            "--kind",
            "Bar",
            "--defaulting",
        ],
        &[
            "fiz/v1 Bar's defaulting webhook would be named mbar-v1.kb.io, as foo/v1 Bar's is",
            "two webhooks of one name",
        ],
    );
    rbuilder(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "fiz",
            "--kind",
            "Bar",
            "--programmatic-validation",
        ],
    )
    .success();
    let webhooks = read(&dir, "src/webhook/mod.rs");
    assert!(
        webhooks.contains("    foo::v1::bar::DEFAULTING,\n    fiz::v1::bar::VALIDATING,\n"),
        "{webhooks}"
    );
}

/// In a project that is not multigroup, a kind's files are named after the kind alone: a
/// controller for Kubernetes' Deployments and a kind Deployment of the project's own cannot
/// both be there.
#[test]
fn a_single_group_project_has_a_kind_name_in_one_group() {
    let (_tmp, dir) = initialized("example");
    let deployments = [
        "create",
        "api",
        "--group",
        "apps",
        "--version",
        "v1",
        "--kind",
        "Deployment",
        "--resource=false",
    ];
    rbuilder(&dir, &deployments).success();
    assert_rejected(
        &dir,
        &["create", "api", "--group", "devops", "--kind", "Deployment"],
        &[
            "kind Deployment already exists in group 'apps'",
            "in a project that is not multigroup",
            "src/controller/deployment.rs",
            "choose another kind name",
        ],
    );
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

/// kubebuilder's spelling, `--resource=false --controller`, writes the same controller.
#[test]
fn a_controller_for_a_built_in_type_with_kubebuilders_flags() {
    let (_tmp, dir) = initialized("example");
    let (_tmp2, plain) = initialized("example");
    let args = ["create", "api", "--group", "apps", "--version", "v1"];
    let args = [&args[..], &["--kind", "Deployment", "--resource=false"]].concat();
    rbuilder(&plain, &args).success();
    rbuilder(&dir, &[&args[..], &["--controller"]].concat()).success();
    assert_same_tree(&snapshot(&plain), &snapshot(&dir), "--controller");
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

/// `--controller-name`: a second controller of a kind, in files of its own, recorded as
/// kubebuilder records it, kept by `--force` on the kind, and replayed by `alpha generate`.
#[test]
fn a_second_controller_is_recorded_kept_and_replayed() {
    let (tmp, dir) = initialized("example");
    let create = |extra: &[&str]| {
        let mut args = vec!["create", "api", "--group", "crew", "--kind", "Captain"];
        args.extend_from_slice(extra);
        rbuilder(&dir, &args).success()
    };
    create(&[]);
    // A first controller named after its kind is recorded by that name.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--kind",
            "Frigate",
            "--controller-name",
            "frigate",
        ],
    )
    .success();
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("  controllers:\n  - name: frigate\n"),
        "{project}"
    );

    // Second controllers are replayed after every kind: made after them, they replay as made.
    create(&["--resource=false", "--controller-name", "captain-backup"])
        .stdout(contains("create src/controller/captain_backup.rs"))
        .stdout(contains("create tests/integration/captain_backup.rs"));
    for file in [
        "src/controller/captain_backup.rs",
        "src/controller/captain_backup/tests.rs",
    ] {
        assert!(dir.join(file).is_file(), "{file} is missing");
    }
    let registry = read(&dir, "src/controller/mod.rs");
    assert!(registry.contains("pub mod captain_backup;"), "{registry}");
    assert!(
        registry.contains("captain_backup::CONTROLLER,"),
        "{registry}"
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("  controllers:\n  - name: captain\n  - name: captain-backup\n"),
        "{project}"
    );
    assert!(!project.contains("controller: true"), "{project}");

    // --force rewrites the kind's own files, never its second controller's.
    let second = read(&dir, "src/controller/captain_backup.rs");
    fs::write(
        dir.join("src/controller/captain_backup.rs"),
        format!("{second}// my logic\n"),
    )
    .expect("edit");
    create(&["--force"]);
    assert!(read(&dir, "src/controller/captain_backup.rs").ends_with("// my logic\n"));
    assert_eq!(read(&dir, "PROJECT"), project);

    fs::write(dir.join("src/controller/captain_backup.rs"), second).expect("restore");
    let again = tmp.path().join("again");
    rbuilder(
        &dir,
        &["alpha", "generate", "--output-dir", again.to_str().unwrap()],
    )
    .success();
    assert_same_tree(&snapshot(&dir), &snapshot(&again), "the project, replayed");
}
