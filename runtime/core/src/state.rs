//! The states controllers hold of their own (see [`Reconciler`](crate::Reconciler)), as the
//! manager is given them: one value per type, each handed to the controllers registered with
//! that type ([`register_with_state`](crate::register_with_state)). The type is checked at
//! start, once: a controller whose state was not given, a state no controller takes and two
//! states of one type each stop the manager with a message that says which.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

/// The type of a controller's state, as its [`Registration`](crate::Registration) remembers it.
#[derive(Clone, Copy)]
pub(crate) struct StateType {
    id: fn() -> TypeId,
    name: fn() -> &'static str,
}

impl StateType {
    pub(crate) const fn of<S: 'static>() -> Self {
        Self {
            id: TypeId::of::<S>,
            name: std::any::type_name::<S>,
        }
    }

    fn id(self) -> TypeId {
        (self.id)()
    }

    /// Whether this is `()`: no state, which needs none given.
    fn is_none(self) -> bool {
        self.id() == TypeId::of::<()>()
    }
}

impl fmt::Display for StateType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str((self.name)())
    }
}

/// The states given to the manager, or to a test's environment.
#[derive(Default)]
pub struct States(Vec<(StateType, Arc<dyn Any + Send + Sync>)>);

impl States {
    /// These states with `state` as well.
    pub fn add<S: Send + Sync + 'static>(&mut self, state: S) {
        self.0.push((StateType::of::<S>(), Arc::new(state)));
    }

    /// The state of type `S`, if it was given (`()` always is).
    pub(crate) fn get<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        let id = TypeId::of::<S>();
        let none: Arc<dyn Any + Send + Sync> = Arc::new(());
        let given = self.0.iter().find(|(ty, _)| ty.id() == id);
        let state = given.map_or(none, |(_, state)| Arc::clone(state));
        state.downcast::<S>().ok()
    }

    /// Whether these states are exactly those the controllers take (`taken`: each one's name
    /// and the type of its state): each controller's given, no type given twice, none that no
    /// controller takes (a controller registered with [`register`](crate::register) where
    /// [`register_with_state`](crate::register_with_state) was meant, say).
    pub(crate) fn check(&self, taken: &[(&'static str, StateType)]) -> Result<(), String> {
        for (at, (ty, _)) in self.0.iter().enumerate() {
            if self.0[..at].iter().any(|(other, _)| other.id() == ty.id()) {
                return Err(format!(
                    "the manager was given two states of type {ty}: give each type once"
                ));
            }
            if !taken.iter().any(|(_, state)| state.id() == ty.id()) {
                return Err(format!(
                    "the manager was given a state of type {ty}, which no controller takes: is \
                     the controller that takes it (register_with_state::<Reconciler, {ty}>()) \
                     missing from the operator's controllers, or does it take another type \
                     (the state itself, not an Arc of it)?"
                ));
            }
        }
        for &(controller, ty) in taken {
            if !ty.is_none() && !self.0.iter().any(|(given, _)| given.id() == ty.id()) {
                return Err(MissingState {
                    controller,
                    state: ty,
                }
                .to_string());
            }
        }
        Ok(())
    }
}

/// A controller's state was not given.
#[derive(Debug, thiserror::Error)]
#[error(
    "controller {controller} holds a state of type {state}, which was not given: give it to \
     the manager in src/main.rs, Manager::new(&OPERATOR).state(...) (in a test: \
     Environment::run_with_state)"
)]
pub(crate) struct MissingState {
    pub(crate) controller: &'static str,
    pub(crate) state: StateType,
}

impl fmt::Debug for StateType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::controller::Action;
    use kube::{Api, CustomResource, CustomResourceExt, ResourceExt};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::envtest::{Environment, fetch, step};
    use crate::owned::Owns;
    use crate::testing::mock_context;
    use crate::{Context, Operator, Reconciler, Registration, register, register_with_state};

    /// What the greeters are told at start: how to greet.
    struct Salutation(String);

    /// A kind whose objects each get a ConfigMap greeting them.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
    #[kube(
        group = "state.rbuilder.io",
        version = "v1",
        kind = "Greeting",
        namespaced
    )]
    struct GreetingSpec {}

    /// Writes each greeting's ConfigMap, greeting it as its state says.
    struct Greeter;

    impl Reconciler<Salutation> for Greeter {
        type Resource = Greeting;
        type Error = crate::owned::Error;
        const NAME: &'static str = "greeter";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(
            greeting: Arc<Greeting>,
            ctx: Arc<Context<Salutation>>,
        ) -> Result<Action, Self::Error> {
            let text = format!("{}, {}", ctx.state().0, greeting.name_any());
            let config_map = ConfigMap {
                data: Some([("text".to_owned(), text)].into()),
                ..ConfigMap::default()
            };
            ctx.owned(&*greeting).apply(config_map).await?;
            Ok(Action::await_change())
        }

        // Its rules all come from what it declares: the environment grants no other.
        fn owns() -> Owns<Greeting> {
            Owns::kind::<ConfigMap>()
        }
    }

    /// The same kind, reconciled without a state.
    struct Plain;

    impl Reconciler for Plain {
        type Resource = Greeting;
        type Error = kube::Error;
        const NAME: &'static str = "plain";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(_: Arc<Greeting>, _: Arc<Context>) -> Result<Action, kube::Error> {
            Ok(Action::await_change())
        }
    }

    const GREETER: Registration = register_with_state::<Greeter, Salutation>();
    const PLAIN: Registration = register::<Plain>();

    /// What the manager checks the states against: each controller's name and state type.
    fn taken(controllers: &[Registration]) -> Vec<(&'static str, StateType)> {
        let taken = controllers.iter().map(|c| (c.name, c.state));
        taken.collect()
    }

    static GREETERS: Operator = Operator::new("greeters")
        .controllers(&[GREETER])
        .crds(|| Ok(vec![Greeting::crd()]));

    #[test]
    fn a_state_is_found_by_its_type_and_none_is_always_there() {
        let mut states = States::default();
        assert!(states.get::<Salutation>().is_none());
        assert!(states.get::<()>().is_some());
        states.add(Salutation("given".into()));
        assert_eq!(
            states.get::<Salutation>().map(|s| s.0.clone()),
            Some("given".into())
        );
    }

    /// Each mistake in giving states stops the manager at start, naming the type.
    #[test]
    fn the_states_given_must_be_those_the_controllers_take() {
        let salutation = "rbuilder_runtime_core::state::tests::Salutation";
        let missing = States::default().check(&taken(&[GREETER, PLAIN]));
        let missing = missing.expect_err("a missing state");
        assert!(
            missing.contains("controller greeter holds a state of type")
                && missing.contains(salutation)
                && missing.contains(".state("),
            "{missing}"
        );

        let mut unused = States::default();
        unused.add(Salutation("Hello".into()));
        let unused = unused
            .check(&taken(&[PLAIN]))
            .expect_err("a state no one takes");
        assert!(
            unused.contains("no controller takes") && unused.contains(salutation),
            "{unused}"
        );

        let mut twice = States::default();
        twice.add(Salutation("Hello".into()));
        twice.add(Salutation("Hi".into()));
        let twice = twice
            .check(&taken(&[GREETER]))
            .expect_err("a state given twice");
        assert!(twice.contains("two states of type"), "{twice}");

        let mut right = States::default();
        right.add(Salutation("Hello".into()));
        assert_eq!(right.check(&taken(&[GREETER, PLAIN])), Ok(()));
    }

    /// A controller started without its state does not start, and says what to do.
    #[tokio::test]
    async fn a_controller_without_its_state_does_not_run() {
        let (ctx, _server) = mock_context();
        let shutdown = tokio_util::sync::CancellationToken::new();
        let run = (GREETER.run)(ctx, &States::default(), shutdown);
        let error = run.err().expect("no run without the state");
        assert!(
            error.to_string().contains("Environment::run_with_state"),
            "{error}"
        );
    }

    /// Two environments, two states: each test gives the controller its own, and each
    /// reconcile reaches it, in `watches` and `apply`.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn each_test_gives_the_controller_its_state() {
        for salutation in ["Hello", "Bonjour"] {
            let env = Environment::start(&GREETERS).await;
            env.run_with_state(&GREETER, Salutation(salutation.into()))
                .await;
            step(format!("greet the world with {salutation}"));
            let greetings: Api<Greeting> = Api::namespaced(env.client(), "default");
            env.apply(&greetings, &Greeting::new("world", GreetingSpec {}))
                .await;
            let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), "default");
            let expected = format!("{salutation}, world");
            env.wait_for("the greeting's ConfigMap", async || {
                let config_map = fetch(&config_maps, "world").await?;
                let text = config_map.data.unwrap_or_default().remove("text");
                match text {
                    Some(text) if text == expected => Ok(()),
                    other => Err(format!("text {other:?}")),
                }
            })
            .await;
        }
    }
}
