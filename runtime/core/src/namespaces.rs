//! The namespaces the controllers watch (`WATCH_NAMESPACE`), and the watch of several of them
//! into one cache.
//!
//! `WATCH_NAMESPACE` is read as controller-runtime's manager reads it: unset or empty, every
//! namespace (and a ClusterRole); one name, that namespace; names separated by commas, each of
//! them, with a Role in each. kube's watcher lists and watches one namespace or all of them, so
//! for several namespaces each kind has one watcher per namespace, merged into one stream that
//! fills one cache, as controller-runtime's multi-namespace cache keeps one
//! informer per namespace.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Debug};
use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use crate::echoes::Echoes;
use crate::scope::Scope;

/// The namespaces the controllers watch: all of them, or those listed.
///
/// ```
/// use rbuilder_runtime::namespaces::Namespaces;
///
/// // WATCH_NAMESPACE="team-a, team-b"
/// let watched = Namespaces::parse("team-a, team-b");
/// assert_eq!(watched.names(), ["team-a", "team-b"]);
/// assert!(watched.contains("team-b") && !watched.contains("kube-system"));
/// assert!(Namespaces::all().contains("kube-system"));
/// assert_eq!(Namespaces::only("team-a").names(), ["team-a"]);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Namespaces(Vec<String>);

impl Namespaces {
    /// Every namespace.
    pub const fn all() -> Self {
        Self(Vec::new())
    }

    /// The namespaces in `list`, a value of `WATCH_NAMESPACE`: names separated by commas,
    /// spaces around them ignored, each name once. An empty list means every namespace.
    pub fn parse(list: &str) -> Self {
        let mut names: Vec<String> = Vec::new();
        for name in list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            if !names.iter().any(|seen| seen == name) {
                names.push(name.to_owned());
            }
        }
        Self(names)
    }

    /// Only `namespace`.
    pub fn only(namespace: impl Into<String>) -> Self {
        Self(vec![namespace.into()])
    }

    /// The namespaces listed; empty for every namespace.
    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// Whether every namespace is watched.
    pub fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether objects in `namespace` are watched.
    pub fn contains(&self, namespace: &str) -> bool {
        self.is_all() || self.0.iter().any(|name| name == namespace)
    }

    /// One [`Api`] per watched namespace for `K`s (one over the cluster for every namespace, and
    /// for cluster-scoped kinds).
    pub fn apis<K>(&self, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = ()>,
        K::Scope: Scope,
    {
        if self.is_all() || !K::Scope::NAMESPACED {
            return vec![K::Scope::api(client.clone(), None)];
        }
        let api = |name: &String| K::Scope::api(client.clone(), Some(name));
        self.0.iter().map(api).collect()
    }
}

impl Debug for Namespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_all() {
            f.write_str("every namespace")
        } else {
            write!(f, "{}", self.0.join(","))
        }
    }
}

/// The events of a watch of the `K`s that `apis` list with `config` (one per watched namespace,
/// see [`Namespaces::apis`]), reflected into `writer`'s store (without `managedFields`, most
/// of an object's size), as kube's `reflect` gives them. A watch that fails (a missing RBAC
/// rule, a conversion webhook down a moment) is retried with a growing delay, not in a tight
/// loop.
///
/// Every list, the first and any later one (the watch could not resume: 410 Gone), is a
/// consistent read (no `resourceVersion`), in pages of 500: never one from a watch cache that
/// may lag (`resourceVersion=0`), which after a relist would bring back objects deleted
/// meanwhile and tell owners of deletions that did not happen (client-go relists from etcd
/// after a 410 for that reason, `tools/cache/reflector.go`). kube-apiserver serves consistent
/// lists from its watch cache too once it has caught up (`ConsistentListFromCache`, on since
/// 1.31), so this costs etcd nothing. (kube's `watcher::Config::any_semantic` would not give
/// `resourceVersion=0` anyway: kube leaves it out of a list with a page size.)
pub(crate) fn reflected<K>(
    apis: Vec<Api<K>>,
    config: watcher::Config,
    writer: Writer<K>,
) -> BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    reflected_as(apis, config, without_managed_fields, writer, None)
}

/// `obj` without its `managedFields`, most of an object's size, which reconciles rarely read.
pub(crate) fn without_managed_fields<K: Resource>(mut obj: K) -> K {
    obj.meta_mut().managed_fields = None;
    obj
}

/// [`reflected`], with each object kept as `keep` makes it (an owned object's
/// [`Slim`](crate::owned::Slim) form) rather than without `managedFields`, and each event
/// shown to `echoes` as the watch of its namespace brings it (before several namespaces'
/// lists are merged into one, which makes a list's objects changes).
pub(crate) fn reflected_as<K, S>(
    mut apis: Vec<Api<K>>,
    config: watcher::Config,
    keep: impl Fn(K) -> S + Clone + Send + Sync + 'static,
    writer: Writer<S>,
    echoes: Option<Arc<Echoes>>,
) -> BoxStream<'static, Result<watcher::Event<S>, watcher::Error>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    S: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let watch = move |api: Api<K>| {
        let (keep, echoes) = (keep.clone(), echoes.clone());
        watcher(api, config.clone())
            .default_backoff()
            .map_ok(move |event| {
                if let Some(echoes) = &echoes {
                    echoes.watched(&event);
                }
                kept(event, &keep)
            })
    };
    if apis.len() == 1 {
        let api = apis.remove(0);
        return watch(api).reflect(writer).boxed();
    }
    let names = apis
        .iter()
        .map(|api| api.namespace().unwrap_or_default().to_owned());
    let mut merged = Merged::new(names.collect(), writer.as_reader());
    let watches = apis
        .into_iter()
        .enumerate()
        .map(|(index, api)| watch(api).map(move |event| (index, event)).boxed());
    stream::select_all(watches)
        .flat_map(move |(index, event)| {
            let events = match event {
                Ok(event) => merged.event(index, event).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            stream::iter(events)
        })
        .reflect(writer)
        .boxed()
}

/// `event` with its object as `keep` makes it.
fn kept<K, S>(event: watcher::Event<K>, keep: &impl Fn(K) -> S) -> watcher::Event<S> {
    match event {
        watcher::Event::Apply(obj) => watcher::Event::Apply(keep(obj)),
        watcher::Event::Delete(obj) => watcher::Event::Delete(keep(obj)),
        watcher::Event::InitApply(obj) => watcher::Event::InitApply(keep(obj)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// The watches of several namespaces as the watch of one cache.
///
/// kube's reflector takes a list (`Init`, `InitApply`s, `InitDone`) as the whole content of its
/// store: the end of one namespace's list would drop every other namespace's objects. So the
/// namespaces' lists are passed on as one list only once every namespace has listed (the cache
/// is then ready, as controller-runtime's waits for every informer to sync); until then each
/// namespace's objects are kept here. A namespace that lists again later (its watch could not
/// resume, e.g. 410 Gone after the API server restarted) has its objects passed on as changes,
/// and those of its objects in the store that the new list lacks as deletions, with the object
/// as last seen (client-go's `DeletedFinalStateUnknown`): each is the owner's cue to reconcile.
struct Merged<K: Resource<DynamicType = ()> + 'static> {
    /// The namespace of each watch, by its index.
    namespaces: Vec<String>,
    store: Store<K>,
    /// Until every namespace has listed: each namespace's objects (`None` until its first
    /// list is done) and the list it is receiving, if any.
    first: Option<Vec<FirstList<K>>>,
    /// After: for each namespace listing again, the objects its new list has had so far.
    relisting: HashMap<usize, HashSet<ObjectRef<K>>>,
}

struct FirstList<K: Resource<DynamicType = ()> + 'static> {
    listed: Option<HashMap<ObjectRef<K>, K>>,
    receiving: Option<HashMap<ObjectRef<K>, K>>,
}

impl<K> Merged<K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    fn new(namespaces: Vec<String>, store: Store<K>) -> Self {
        let first = namespaces
            .iter()
            .map(|_| FirstList {
                listed: None,
                receiving: None,
            })
            .collect();
        Self {
            namespaces,
            store,
            first: Some(first),
            relisting: HashMap::new(),
        }
    }

    /// What to pass on to the reflector for `event` from the watch of namespace `index`.
    fn event(&mut self, index: usize, event: watcher::Event<K>) -> Vec<watcher::Event<K>> {
        let Some(first) = &mut self.first else {
            return self.after_first_lists(index, event);
        };
        let namespace = &mut first[index];
        match event {
            watcher::Event::Init => namespace.receiving = Some(HashMap::new()),
            watcher::Event::InitApply(obj) => {
                let list = namespace.receiving.get_or_insert_with(HashMap::new);
                list.insert(ObjectRef::from_obj(&obj), obj);
            }
            watcher::Event::InitDone => {
                namespace.listed = Some(namespace.receiving.take().unwrap_or_default());
            }
            watcher::Event::Apply(obj) => {
                // kube's watcher lists first; a change is of a listed namespace.
                let objects = match &mut namespace.listed {
                    Some(listed) => listed,
                    None => namespace.receiving.get_or_insert_with(HashMap::new),
                };
                objects.insert(ObjectRef::from_obj(&obj), obj);
            }
            watcher::Event::Delete(obj) => {
                let key = ObjectRef::from_obj(&obj);
                for objects in [&mut namespace.listed, &mut namespace.receiving]
                    .into_iter()
                    .flatten()
                {
                    objects.remove(&key);
                }
            }
        }
        if first.iter().any(|namespace| namespace.listed.is_none()) {
            return Vec::new();
        }
        // Every namespace has listed: one list of them all.
        let objects = self.first.take().into_iter().flatten();
        let objects = objects.flat_map(|namespace| namespace.listed.into_iter().flatten());
        let mut events = vec![watcher::Event::Init];
        events.extend(objects.map(|(_, obj)| watcher::Event::InitApply(obj)));
        events.push(watcher::Event::InitDone);
        events
    }

    fn after_first_lists(
        &mut self,
        index: usize,
        event: watcher::Event<K>,
    ) -> Vec<watcher::Event<K>> {
        match event {
            watcher::Event::Init => {
                self.relisting.insert(index, HashSet::new());
                Vec::new()
            }
            watcher::Event::InitApply(obj) => {
                let listed = self.relisting.entry(index).or_default();
                listed.insert(ObjectRef::from_obj(&obj));
                vec![watcher::Event::Apply(obj)]
            }
            watcher::Event::InitDone => {
                let listed = self.relisting.remove(&index).unwrap_or_default();
                let namespace = self.namespaces[index].as_str();
                self.store
                    .state()
                    .into_iter()
                    .filter(|old| old.meta().namespace.as_deref() == Some(namespace))
                    .filter(|old| !listed.contains(&ObjectRef::from_obj(&**old)))
                    .map(|old| watcher::Event::Delete(K::clone(&old)))
                    .collect()
            }
            event @ (watcher::Event::Apply(_) | watcher::Event::Delete(_)) => vec![event],
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector;

    use super::*;

    fn config_map(namespace: &str, name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    /// The watches of namespaces "a" (0) and "b" (1) into one store, as `reflected` runs them.
    struct Watches {
        merged: Merged<ConfigMap>,
        writer: Writer<ConfigMap>,
        store: Store<ConfigMap>,
        /// What was passed on to the reflector.
        passed: Vec<watcher::Event<ConfigMap>>,
    }

    impl Watches {
        fn new() -> Self {
            let (store, writer) = reflector::store();
            let names = vec!["a".to_owned(), "b".to_owned()];
            Self {
                merged: Merged::new(names, store.clone()),
                writer,
                store,
                passed: Vec::new(),
            }
        }

        fn event(&mut self, index: usize, event: watcher::Event<ConfigMap>) -> &mut Self {
            for passed in self.merged.event(index, event) {
                self.writer.apply_watcher_event(&passed);
                self.passed.push(passed);
            }
            self
        }

        fn list(&mut self, index: usize, objects: &[ConfigMap]) -> &mut Self {
            self.event(index, watcher::Event::Init);
            for obj in objects {
                self.event(index, watcher::Event::InitApply(obj.clone()));
            }
            self.event(index, watcher::Event::InitDone)
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = self
                .store
                .state()
                .iter()
                .map(|obj| {
                    format!(
                        "{}/{}",
                        obj.metadata.namespace.as_deref().unwrap_or(""),
                        obj.metadata.name.as_deref().unwrap_or("")
                    )
                })
                .collect();
            names.sort();
            names
        }

        fn take_passed(&mut self) -> Vec<String> {
            self.passed
                .drain(..)
                .map(|event| match event {
                    watcher::Event::Init => "Init".to_owned(),
                    watcher::Event::InitDone => "InitDone".to_owned(),
                    watcher::Event::InitApply(obj) => {
                        format!("InitApply {}", obj.metadata.name.unwrap_or_default())
                    }
                    watcher::Event::Apply(obj) => {
                        format!("Apply {}", obj.metadata.name.unwrap_or_default())
                    }
                    watcher::Event::Delete(obj) => {
                        format!("Delete {}", obj.metadata.name.unwrap_or_default())
                    }
                })
                .collect()
        }
    }

    /// The `resourceVersion` a list request asks for, from its query ("" if none).
    fn list_resource_version(request: &http::Request<kube::client::Body>) -> String {
        let query = request.uri().query().unwrap_or_default();
        assert!(
            !query.contains("watch=true"),
            "a watch, not a list: {query}"
        );
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("resourceVersion="))
            .unwrap_or_default()
            .to_owned()
    }

    /// The first list and the list after a 410 are consistent (no `resourceVersion`), as
    /// client-go relists after a 410: a list from a lagging watch cache would bring back
    /// objects deleted meanwhile.
    #[tokio::test]
    async fn every_list_is_consistent_the_first_and_after_a_410() {
        use http::Response;
        use kube::client::Body;
        use serde_json::json;

        let (service, mut handle) = tower_test::mock::pair::<http::Request<Body>, Response<Body>>();
        let api: Api<ConfigMap> = Api::default_namespaced(Client::new(service, "default"));
        let (_store, writer) = reflector::store();
        let watch = reflected(vec![api], watcher::Config::default(), writer);
        let events = tokio::spawn(watch.take(5).collect::<Vec<_>>());
        let answer = |body: serde_json::Value| {
            Response::builder()
                .status(200)
                .body(Body::from(format!("{body}\n").into_bytes()))
                .expect("a response")
        };
        let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": [],
            "metadata": {"resourceVersion": "5"}});
        let next = async |handle: &mut tower_test::mock::Handle<_, _>| {
            let next = crate::testing::within_timeout(handle.next_request()).await;
            next.expect("a request")
        };

        let (request, send) = next(&mut handle).await;
        assert_eq!(list_resource_version(&request), "", "the first list");
        send.send_response(answer(list.clone()));
        let (request, send) = next(&mut handle).await;
        assert!(
            request
                .uri()
                .query()
                .unwrap_or_default()
                .contains("watch=true")
        );
        let gone = json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
            "status": "Failure", "reason": "Expired", "code": 410,
            "message": "too old resource version: 5 (9)"}});
        send.send_response(answer(gone));
        let (request, send) = next(&mut handle).await;
        assert_eq!(list_resource_version(&request), "", "the list after a 410");
        send.send_response(answer(list));
        let events = crate::testing::within_timeout(events)
            .await
            .expect("the watch");
        let kinds: Vec<String> = events
            .iter()
            .map(|event| match event {
                Ok(watcher::Event::Init) => "Init".to_owned(),
                Ok(watcher::Event::InitDone) => "InitDone".to_owned(),
                Ok(_) => "other".to_owned(),
                Err(error) => format!("error {error}"),
            })
            .collect();
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        assert_eq!(kinds[..2], ["Init", "InitDone"], "{kinds:?}");
        assert!(kinds[2].starts_with("error"), "{kinds:?}");
        assert_eq!(kinds[3..], ["Init", "InitDone"], "{kinds:?}");
    }

    #[test]
    fn watch_namespace_is_read_as_controller_runtime_reads_it() {
        assert!(Namespaces::parse("").is_all());
        assert!(Namespaces::parse(" , ").is_all());
        assert_eq!(Namespaces::parse("team-a").names(), ["team-a"]);
        assert_eq!(
            Namespaces::parse("team-a, team-b,,team-a").names(),
            ["team-a", "team-b"]
        );
        let two = Namespaces::parse("team-a,team-b");
        assert!(two.contains("team-b") && !two.contains("team-c"));
        assert!(Namespaces::all().contains("team-c"));
        assert_eq!(format!("{two:?}"), "team-a,team-b");
    }

    #[tokio::test]
    async fn one_api_per_namespace_and_one_for_cluster_scoped_kinds() {
        use k8s_openapi::api::core::v1::Namespace;
        let (client, _server) = crate::testing::mock_client();
        let two = Namespaces::parse("a,b");
        assert_eq!(two.apis::<ConfigMap>(&client).len(), 2);
        assert_eq!(two.apis::<Namespace>(&client).len(), 1);
        assert_eq!(Namespaces::all().apis::<ConfigMap>(&client).len(), 1);
    }

    /// The store is ready, and holds both namespaces' objects, only once both have listed: the
    /// end of "a"'s list must not make the controller think "b" is empty, nor "b"'s drop "a"'s.
    #[test]
    fn the_cache_is_filled_once_every_namespace_has_listed() {
        let mut watches = Watches::new();
        watches.list(0, &[config_map("a", "one")]);
        watches.event(0, watcher::Event::Apply(config_map("a", "two")));
        assert!(watches.passed.is_empty(), "passed on before b listed");
        watches.list(1, &[config_map("b", "three")]);
        assert_eq!(watches.names(), ["a/one", "a/two", "b/three"]);
        let passed = watches.take_passed();
        assert_eq!(passed.first().map(String::as_str), Some("Init"));
        assert_eq!(passed.last().map(String::as_str), Some("InitDone"));
        assert_eq!(passed.len(), 5);
    }

    /// A deletion in one namespace while the other still lists is not lost.
    #[test]
    fn a_deletion_before_every_namespace_listed_is_kept() {
        let mut watches = Watches::new();
        watches.list(0, &[config_map("a", "one"), config_map("a", "two")]);
        watches.event(0, watcher::Event::Delete(config_map("a", "one")));
        watches.list(1, &[]);
        assert_eq!(watches.names(), ["a/two"]);
    }

    /// After the first lists, changes pass through; a namespace that lists again keeps the
    /// other's objects, and what its new list lacks is passed on as deleted (so its owner
    /// reconciles), with nothing of the other namespace's.
    #[test]
    fn a_namespace_that_lists_again_sends_what_it_lost_as_deleted() {
        let mut watches = Watches::new();
        watches.list(0, &[config_map("a", "one"), config_map("a", "two")]);
        watches.list(1, &[config_map("b", "three")]);
        watches.take_passed();
        watches.event(1, watcher::Event::Apply(config_map("b", "four")));
        assert_eq!(watches.take_passed(), ["Apply four"]);
        watches.list(0, &[config_map("a", "two"), config_map("a", "five")]);
        assert_eq!(watches.names(), ["a/five", "a/two", "b/four", "b/three"]);
        let mut passed = watches.take_passed();
        passed.sort();
        assert_eq!(passed, ["Apply five", "Apply two", "Delete one"]);
        // An empty list empties its namespace only.
        watches.list(1, &[]);
        assert_eq!(watches.names(), ["a/five", "a/two"]);
    }
}

#[cfg(test)]
mod envtests {
    use std::sync::{Arc, Mutex, PoisonError};

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use kube::api::{ListParams, ObjectMeta, PostParams};
    use kube::runtime::controller::Action;

    use super::*;
    use crate::envtest::{Environment, step};
    use crate::rbac::policy_rule;
    use crate::{Context, Operator, Reconciler, Registration, WatchScope, register};

    /// Every ConfigMap [`Seen`] reconciled, as namespace/name.
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

    struct Seen;

    impl Reconciler for Seen {
        type Resource = ConfigMap;
        type Error = std::convert::Infallible;
        const NAME: &'static str = "seen";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<ConfigMap>, _ctx: Arc<Context>) -> Result<Action, Self::Error> {
            let name = format!(
                "{}/{}",
                obj.metadata.namespace.as_deref().unwrap_or(""),
                obj.metadata.name.as_deref().unwrap_or("")
            );
            SEEN.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(name);
            // A requeue reconciles the object from the controller's cache: it must still be
            // there after the other namespace's list.
            Ok(Action::requeue(std::time::Duration::from_millis(300)))
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            vec![policy_rule("", &["configmaps"], &["get", "list", "watch"])]
        }
    }

    const SEEN_CONFIG_MAPS: Registration = register::<Seen>();

    static OPERATOR: Operator = Operator::new("watch-namespaces")
        .controllers(&[SEEN_CONFIG_MAPS])
        .scope(WatchScope::Namespace);

    /// `WATCH_NAMESPACE=team-a,team-b`: the controller sees the objects of both namespaces and
    /// none of a third, with the manager's role a Role in each of the two (it may list neither
    /// the third namespace nor the cluster).
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_manager_watches_each_namespace_of_its_list() {
        let env = Environment::start(&OPERATOR).await;
        let admin = env.client();
        step("a ConfigMap \"watched\" in team-a, team-b and team-c, before the manager starts");
        for namespace in ["team-a", "team-b", "team-c"] {
            crate::envtest::create_namespace(&admin, namespace)
                .await
                .expect("a namespace");
            let config_map = ConfigMap {
                metadata: ObjectMeta {
                    name: Some("watched".to_owned()),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            };
            Api::<ConfigMap>::namespaced(admin.clone(), namespace)
                .create(&PostParams::default(), &config_map)
                .await
                .expect("a ConfigMap");
        }
        env.run_watching(&SEEN_CONFIG_MAPS, "team-a, team-b").await;
        step("both watched namespaces' ConfigMaps are reconciled, and again as they requeue");
        let seen = env
            .wait_for(
                "team-a/watched and team-b/watched, 3 times each",
                async || {
                    let seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    let both = ["team-a/watched", "team-b/watched"];
                    let times = |name: &&str| seen.iter().filter(|seen| seen == name).count();
                    if both.iter().all(|name| times(name) >= 3) {
                        Ok(seen)
                    } else {
                        Err(format!("seen: {seen:?}"))
                    }
                },
            )
            .await;
        // The first reconciles come from one list of both namespaces: team-c's would be among
        // them.
        assert!(
            !seen.iter().any(|name| name.starts_with("team-c/")),
            "reconciled outside the watched namespaces: {seen:?}"
        );
        step("an object created later in team-b is reconciled too");
        let later = ConfigMap {
            metadata: ObjectMeta {
                name: Some("later".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        Api::<ConfigMap>::namespaced(admin.clone(), "team-b")
            .create(&PostParams::default(), &later)
            .await
            .expect("a ConfigMap");
        env.wait_for("team-b/later", async || {
            let seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
            match seen.iter().any(|name| name == "team-b/later") {
                true => Ok(()),
                false => Err(format!("seen: {seen:?}")),
            }
        })
        .await;
        step("the manager may list neither team-c nor the cluster: only its Roles let it watch");
        let manager = env.manager_client().await;
        for api in [
            Api::<ConfigMap>::namespaced(manager.clone(), "team-c"),
            Api::<ConfigMap>::all(manager.clone()),
        ] {
            match api.list(&ListParams::default()).await {
                Err(kube::Error::Api(status)) if status.code == 403 => {}
                other => panic!("the manager could list {}: {other:?}", api.resource_url()),
            }
        }
    }
}
