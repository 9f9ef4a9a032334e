//! `make setup-envtest` of a generated project downloads the envtest binaries as setup-envtest
//! does: the archive that controller-tools' index (envtest-releases.yaml) lists for the
//! project's Kubernetes release, checked against the SHA-512 the index gives. Served here over
//! HTTP from this process: an archive of stand-in binaries, and an index that gives its real
//! SHA-512 or another one. Needs make, curl, tar and sha512sum (or shasum), as the target does.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::initialized;

/// The envtest release a generated project asks for (its Makefile's ENVTEST_K8S_VERSION).
fn envtest_version(project: &Path) -> String {
    let makefile = std::fs::read_to_string(project.join("Makefile")).expect("the Makefile");
    makefile
        .lines()
        .find_map(|line| line.strip_prefix("ENVTEST_K8S_VERSION ?= "))
        .expect("ENVTEST_K8S_VERSION in the Makefile")
        .to_owned()
}

/// The output of `command`, which must succeed.
fn output(command: &mut Command) -> Output {
    let out = command.output().expect("the command runs");
    assert!(out.status.success(), "{command:?}: {out:?}");
    out
}

/// An archive laid out as controller-tools' (`controller-tools/envtest/<binary>`), of scripts
/// standing in for the binaries; and its SHA-512, as the index gives it (hex).
fn archive(dir: &Path) -> (Vec<u8>, String) {
    let binaries = dir.join("controller-tools/envtest");
    std::fs::create_dir_all(&binaries).expect("mkdir");
    for binary in ["kube-apiserver", "etcd", "kubectl"] {
        let path = binaries.join(binary);
        std::fs::write(&path, "#!/bin/sh\necho stand-in\n").expect("write a stand-in");
        output(Command::new("chmod").arg("+x").arg(&path));
    }
    let tarball = dir.join("envtest.tar.gz");
    output(
        Command::new("tar")
            .arg("-czf")
            .arg(&tarball)
            .arg("-C")
            .arg(dir)
            .arg("controller-tools"),
    );
    let sum = match Command::new("sha512sum").arg(&tarball).output() {
        Ok(out) if out.status.success() => out,
        _ => output(Command::new("shasum").args(["-a", "512"]).arg(&tarball)),
    };
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sum = sum.split(' ').next().expect("a sum").to_owned();
    (std::fs::read(tarball).expect("the archive"), sum)
}

/// Serves the files that `files` makes for the server's base address (by path, e.g.
/// "/index.yaml") over HTTP on 127.0.0.1 until the test ends; returns the base address.
fn serve(files: impl FnOnce(&str) -> Vec<(String, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = format!("http://{}", listener.local_addr().expect("an address"));
    let files = files(&address);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            let mut reader = BufReader::new(&stream);
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            // The rest of the request's head, unread, would reset the connection.
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request.split(' ').nth(1).unwrap_or_default();
            let response = match files.iter().find(|(served, _)| served == path) {
                Some((_, body)) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    [head.into_bytes(), body.clone()].concat()
                }
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = stream.write_all(&response);
        }
    });
    address
}

/// An index as controller-tools publishes it, listing `archive` with `hash` at `link`, among
/// an archive of another platform listed before it.
fn index(version: &str, archive: &str, hash: &str, link: &str) -> Vec<u8> {
    format!(
        "releases:\n  v{version}:\n    envtest-v{version}-plan9-mips.tar.gz:\n      hash: 00\n      \
         selfLink: {link}.other\n    {archive}:\n      hash: {hash}\n      selfLink: {link}\n"
    )
    .into_bytes()
}

/// `make setup-envtest` in `project` with the index at `index_url`; KUBEBUILDER_ASSETS unset.
fn setup_envtest(project: &Path, index_url: &str) -> Output {
    Command::new("make")
        .arg("setup-envtest")
        .arg(format!("ENVTEST_INDEX_URL={index_url}"))
        .env_remove("KUBEBUILDER_ASSETS")
        .current_dir(project)
        .output()
        .expect("make runs")
}

/// The folder the binaries go to, and the archive's name, for this machine.
fn destination(project: &Path, version: &str) -> (PathBuf, String) {
    let os = String::from_utf8_lossy(&output(Command::new("uname").arg("-s")).stdout)
        .trim()
        .to_lowercase();
    let arch = match String::from_utf8_lossy(&output(Command::new("uname").arg("-m")).stdout).trim()
    {
        "x86_64" => "amd64".to_owned(),
        "aarch64" => "arm64".to_owned(),
        other => other.to_owned(),
    };
    let dir = project.join(format!("bin/k8s/{version}-{os}-{arch}"));
    (dir, format!("envtest-v{version}-{os}-{arch}.tar.gz"))
}

/// The folder a download in progress goes to, beside `dir`.
fn partial(dir: &Path) -> PathBuf {
    PathBuf::from(format!("{}.partial", dir.display()))
}

#[test]
fn setup_envtest_installs_an_archive_whose_sha512_the_index_gives() {
    let (tmp, project) = initialized("envtest-good");
    let version = envtest_version(&project);
    let (dir, name) = destination(&project, &version);
    let (tarball, sum) = archive(tmp.path());
    let base = serve(|base| {
        let link = format!("{base}/envtest.tar.gz");
        vec![
            ("/index.yaml".into(), index(&version, &name, &sum, &link)),
            ("/envtest.tar.gz".into(), tarball),
        ]
    });
    let out = setup_envtest(&project, &format!("{base}/index.yaml"));
    assert!(out.status.success(), "{out:?}");
    for binary in ["kube-apiserver", "etcd", "kubectl"] {
        assert!(
            dir.join(binary).is_file(),
            "{binary} is not in {}",
            dir.display()
        );
    }
    assert!(!partial(&dir).exists());
}

#[test]
fn setup_envtest_refuses_an_archive_whose_sha512_differs_and_installs_nothing() {
    let (tmp, project) = initialized("envtest-tampered");
    let version = envtest_version(&project);
    let (dir, name) = destination(&project, &version);
    let (mut tarball, sum) = archive(tmp.path());
    // One byte changed on the way: the index's hash is the untampered archive's.
    let last = tarball.len() - 1;
    tarball[last] ^= 0xff;
    let base = serve(|base| {
        let link = format!("{base}/envtest.tar.gz");
        vec![
            ("/index.yaml".into(), index(&version, &name, &sum, &link)),
            ("/envtest.tar.gz".into(), tarball),
        ]
    });
    let out = setup_envtest(&project, &format!("{base}/index.yaml"));
    assert!(!out.status.success(), "a tampered archive was accepted");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("checksum mismatch for envtest-v"),
        "{stderr}"
    );
    assert!(
        errors[0].contains(&sum),
        "the expected SHA-512 is named: {stderr}"
    );
    assert!(
        !dir.exists(),
        "something was installed in {}",
        dir.display()
    );
    assert!(!partial(&dir).exists(), "a partial download was left");
}

#[test]
fn setup_envtest_names_a_release_the_index_lacks() {
    let (_tmp, project) = initialized("envtest-missing");
    let version = envtest_version(&project);
    let (dir, _) = destination(&project, &version);
    let base = serve(|_| {
        let other = "envtest-v0.0.0-none-none.tar.gz";
        vec![(
            "/index.yaml".into(),
            index(&version, other, "00", "http://127.0.0.1:9/x"),
        )]
    });
    let out = setup_envtest(&project, &format!("{base}/index.yaml"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("lists no envtest-v"), "{stderr}");
    assert!(!dir.exists() && !partial(&dir).exists());
}
