//! The deploy-image options' rules (`create api --image` and its companion flags, and the
//! options a kubebuilder project records for its deploy-image kinds): each value's parser,
//! with what is accepted, for the caller to name the flag or field in its message.

use super::ImageReference;

/// What an image reference is, for messages.
pub const IMAGE_RULE: &str = "an image reference is [registry[:port]/]path[:tag][@digest] \
                              with a lower-case path, e.g. 'stefanprodan/podinfo:6.7.1'";

/// Checks an image reference.
pub fn image(text: &str) -> Result<(), &'static str> {
    ImageReference::parse(text).map(|_| ()).ok_or(IMAGE_RULE)
}

/// The container's port.
pub fn port(text: &str) -> Result<u16, &'static str> {
    match text.parse::<u16>() {
        Ok(port) if port >= 1 => Ok(port),
        _ => Err("a port is a number from 1 to 65535, e.g. 8080"),
    }
}

/// The container's command and arguments, separated by commas.
pub fn command(text: &str) -> Result<Vec<String>, &'static str> {
    let parts: Vec<String> = text.split(',').map(|s| s.trim().to_owned()).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || p.chars().any(char::is_control))
    {
        return Err(
            "give the command and its arguments separated by commas, none empty, e.g. \
                    'memcached,-m=64,-v'",
        );
    }
    Ok(parts)
}

/// The user ID the container runs as.
pub fn run_as_user(text: &str) -> Result<i64, &'static str> {
    match text.parse::<i64>() {
        // 0 is root, which runAsNonRoot (the restricted standard) refuses to start.
        // Kubernetes takes user IDs up to 2^31 - 1.
        Ok(uid) if (1..=i64::from(i32::MAX)).contains(&uid) => Ok(uid),
        _ => Err("a user ID is a whole number from 1 (not root) to 2147483647, e.g. 1001"),
    }
}
