//! The integration tests of the webhooks of `Guestbook` v1: the API server calls them
//! (see `main.rs`). They check what the scaffolded webhooks do: change them with the webhooks.
//! The custom resource type is referred to as `v1::Guestbook`, so that no kind name can
//! clash with the names used here.

use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, from_yaml, step};

use namespaced::OPERATOR;
use namespaced::api::v1;
use namespaced::webhook::v1::guestbook::DEFAULTING;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../config/samples/devops_v1_guestbook.yaml");

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "guestbook";

/// A Guestbook created without the `app.kubernetes.io/name` label gets it from the
/// defaulting webhook.
#[tokio::test]
async fn the_defaulter_sets_the_name_label() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1::Guestbook> = env.api();
    let mut sample: v1::Guestbook = from_yaml(SAMPLE);
    sample.metadata.labels = None;

    step("create the sample without labels");
    let created = env.apply(&api, &sample).await;
    let label = created.labels().get("app.kubernetes.io/name");
    assert_eq!(label.map(String::as_str), Some(NAME));
    assert!(env.webhook_calls(&DEFAULTING) > 0);
}
