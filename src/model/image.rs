//! Container image references, as `--image` takes them: `[registry[:port]/]path[:tag][@digest]`,
//! following the grammar of the OCI distribution reference (what `docker pull` and the
//! kubelet accept).

/// A validated image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageReference {
    /// The registry, when the reference names one: `ghcr.io`, `localhost:5000`.
    registry: Option<String>,
    /// The repository's path in the registry: `org/web`.
    path: String,
    tag: Option<String>,
    digest: Option<String>,
}

/// Docker Hub, the registry of a reference that names none.
const DOCKER_HUB: &str = "docker.io";

/// The tag an e2e test gives an image of a registry other than Docker Hub.
const E2E_TAG: &str = "e2e";

impl ImageReference {
    /// Parses `image`; `None` when it is not a valid reference.
    pub fn parse(image: &str) -> Option<Self> {
        let (name, digest) = match image.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (image, None),
        };
        // A tag follows the last ':' after the last '/' (a registry may have a port).
        let last = name.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match name[last..].rfind(':') {
            Some(i) => (&name[..last + i], Some(&name[last + i + 1..])),
            None => (name, None),
        };
        // A first component with a '.' or ':', or `localhost`, is the registry.
        let (registry, path) = match repository.split_once('/') {
            Some((host, path)) if host.contains(['.', ':']) || host == "localhost" => {
                (Some(host), path)
            }
            _ => (None, repository),
        };
        let valid = repository.len() <= 255
            && registry.is_none_or(is_registry)
            && !path.is_empty()
            && path.split('/').all(is_path_component)
            && tag.is_none_or(is_tag)
            && digest.is_none_or(is_digest);
        valid.then(|| Self {
            registry: registry.map(str::to_owned),
            path: path.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }

    /// What an e2e test changes `spec.image` to: another reference that a validating webhook
    /// accepts if it accepts this one (never `latest` or a tag dropped), and, where there is
    /// one, to the same image, which a real cluster can pull. A Docker Hub image gets its other
    /// name: `nginx:1.27` is `docker.io/library/nginx:1.27`, and the other way round. An image
    /// of another registry has no other name: it gets the tag `e2e`, which pulls the same image
    /// if it has a digest, and else may not exist (the test checks the Deployment, not its
    /// Pods).
    pub fn renamed_for_e2e(&self) -> String {
        let suffix = |tag: Option<&str>| {
            let tag = tag.map(|tag| format!(":{tag}")).unwrap_or_default();
            let digest = self.digest.as_ref().map(|d| format!("@{d}"));
            format!("{tag}{}", digest.unwrap_or_default())
        };
        let same = suffix(self.tag.as_deref());
        match self.registry.as_deref() {
            None if self.path.contains('/') => format!("{DOCKER_HUB}/{}{same}", self.path),
            None => format!("{DOCKER_HUB}/library/{}{same}", self.path),
            Some(DOCKER_HUB) => {
                let short = self.path.strip_prefix("library/").unwrap_or(&self.path);
                format!("{short}{same}")
            }
            Some(registry) => format!("{registry}/{}{}", self.path, suffix(Some(E2E_TAG))),
        }
    }
}

/// `host[:port]`, the host being dot-separated alphanumeric labels (inner '-' allowed).
fn is_registry(registry: &str) -> bool {
    let (host, port) = match registry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (registry, None),
    };
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    host.split('.').all(label_ok)
        && port.is_none_or(|p| {
            p.chars().all(|c| c.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|p| p > 0)
        })
}

/// Lower-case letters and digits, separated by one '.', one or two '_', or any number of '-'.
fn is_path_component(component: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut rest = component;
    loop {
        let run = rest.find(|c: char| !alnum(c)).unwrap_or(rest.len());
        if run == 0 {
            return false;
        }
        rest = &rest[run..];
        if rest.is_empty() {
            return true;
        }
        let sep = rest.find(alnum).unwrap_or(rest.len());
        let separator = &rest[..sep];
        let dashes = separator.chars().all(|c| c == '-');
        if !(matches!(separator, "." | "_" | "__") || dashes) {
            return false;
        }
        rest = &rest[sep..];
    }
}

/// A word character, then up to 127 word characters, '.' or '-'.
fn is_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.starts_with(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

/// `algorithm:hex`, e.g. `sha256:` and 64 lower-case hex digits.
fn is_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let hex_ok = |len: usize| {
        hex.len() == len
            && hex
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    };
    match algorithm {
        "sha256" => hex_ok(64),
        "sha512" => hex_ok(128),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn valid_references() {
        for image in [
            "nginx",
            "nginx:1.27",
            "stefanprodan/podinfo:6.7.1",
            "ghcr.io/org/team/web:v1.2.3-rc.1",
            "localhost:5000/web",
            "registry.example.com:8443/a_b/c__d/e--f.g:latest",
            &format!("ghcr.io/org/web@{DIGEST}"),
            &format!("web:1@{DIGEST}"),
        ] {
            assert!(ImageReference::parse(image).is_some(), "{image}");
        }
    }

    #[test]
    fn invalid_references() {
        for image in [
            "",
            "Nginx",
            "nginx:",
            ".",
            "a..b",
            "__",
            "a___b",
            "-a",
            "a-",
            "reg.io:/foo",
            "registry.example.com:99999/x",
            "foo@sha256:",
            "foo@:",
            "foo@sha256:xyz",
            "web:-tag",
            "web:\"x\"",
            "web tag",
            "ghcr.io//web",
        ] {
            assert!(ImageReference::parse(image).is_none(), "{image}");
        }
    }

    /// The tutorial's validating webhook refuses `latest` and an image without tag or digest:
    /// an e2e test's image must pass it whenever the sample's does.
    #[test]
    fn an_e2e_test_renames_the_image_without_losing_its_tag_or_digest() {
        fn renamed(image: &str) -> String {
            ImageReference::parse(image).expect(image).renamed_for_e2e()
        }
        assert_eq!(renamed("nginx:1.27"), "docker.io/library/nginx:1.27");
        assert_eq!(
            renamed("stefanprodan/podinfo:6.7.1"),
            "docker.io/stefanprodan/podinfo:6.7.1"
        );
        assert_eq!(renamed("docker.io/library/nginx:1.27"), "nginx:1.27");
        assert_eq!(
            renamed("docker.io/stefanprodan/podinfo:6.7.1"),
            "stefanprodan/podinfo:6.7.1"
        );
        assert_eq!(
            renamed(&format!("web:1@{DIGEST}")),
            format!("docker.io/library/web:1@{DIGEST}")
        );
        assert_eq!(
            renamed(&format!("ghcr.io/org/web@{DIGEST}")),
            format!("ghcr.io/org/web:e2e@{DIGEST}")
        );
        assert_eq!(renamed("ghcr.io/org/web:v1"), "ghcr.io/org/web:e2e");
        assert_eq!(renamed("localhost:5000/web"), "localhost:5000/web:e2e");
    }
}
