//! A resource's webhooks: defaulting and validating ones at their paths (kubebuilder's
//! defaults, or the custom ones PROJECT records), a conversion with the spokes rbuilder
//! converts.

use super::Translation;
use crate::external;
use crate::kubebuilder::format::KbWebhooks;
use crate::manifests;
use crate::model::Version;
use crate::model::builtin::Builtin;
use crate::model::webhook_path;
use crate::project::{ResourceEntry, WebhooksEntry};

impl Translation {
    /// The webhooks `w` of the entry at `at`: defaulting and validating ones carried over at
    /// their paths, a conversion with the spokes rbuilder can convert. False if none is.
    pub(super) fn webhooks(&mut self, at: usize, name: &str, w: KbWebhooks) -> bool {
        self.unknown_fields(&format!("{name}'s webhooks"), &w.unknown);
        let entry = self.project.resources[at].clone();
        let b = entry.builtin();
        let mut webhooks = WebhooksEntry {
            defaulting: w.defaulting,
            validation: w.validation,
            webhook_version: "v1".into(),
            ..WebhooksEntry::default()
        };
        if let Some(b) = b
            && (w.defaulting || w.validation)
            && let Some(why) = self.builtin_webhook_refusal(&entry, &b)
        {
            self.leave_out(
                format!("{name}: its webhooks"),
                why,
                "write the webhook yourself: a Defaulter or Validator of the runtime in \
                 src/webhook/",
            );
            webhooks.defaulting = false;
            webhooks.validation = false;
        }
        self.webhook_name_clashes(&entry, name, &mut webhooks);
        if entry.external
            && (w.defaulting || w.validation)
            && self.project.namespaced
            && external::manager_needs(&entry.api_group(), entry.kind.as_str())
        {
            self.leave_out(
                format!("{name}: its webhooks"),
                format!(
                    "in an operator scoped to its namespace, they would see the manager's own {} \
                     there (config/certmanager makes its certificate with one), and failing \
                     closed while the manager is down would keep it from ever starting",
                    entry.kind
                ),
                "nothing: write what they did elsewhere (in a controller, say)",
            );
            webhooks.defaulting = false;
            webhooks.validation = false;
        }
        // Custom paths are carried over as PROJECT records them: the runtime serves the webhook
        // there and `make manifests` points its configuration at it, as in kubebuilder.
        for (path, mutating, wanted) in [
            (&w.defaulting_path, true, webhooks.defaulting),
            (&w.validation_path, false, webhooks.validation),
        ] {
            let Some(path) = path.as_deref().filter(|_| wanted) else {
                continue;
            };
            let flag = if mutating {
                "defaultingPath"
            } else {
                "validationPath"
            };
            match webhook_path::check(flag, path) {
                Ok(()) if mutating => webhooks.defaulting_path = Some(path.to_owned()),
                Ok(()) => webhooks.validation_path = Some(path.to_owned()),
                Err(why) => {
                    let ours = manifests::default_path(
                        mutating,
                        &entry.api_group(),
                        entry.version.as_ref(),
                        entry.kind.as_ref(),
                    );
                    self.leave_out(
                        format!(
                            "{name}: the path {path} of its {} webhook",
                            if mutating { "defaulting" } else { "validating" }
                        ),
                        format!("{why}; rbuilder serves the webhook at its default path, {ours}"),
                        "nothing to run: `make manifests` points the webhook configuration at \
                         the new path; change any other client of the old one",
                    );
                }
            }
        }
        if w.conversion && entry.external {
            self.leave_out(
                format!("{name}: its conversion webhook"),
                "its CRD, and how its versions convert, are another project's",
                "nothing: that project converts its versions",
            );
        } else if w.conversion {
            match self.conversion(&entry, &w.spoke) {
                Ok(spokes) => {
                    webhooks.conversion = true;
                    webhooks.spoke = spokes;
                }
                Err(why) => self.leave_out(
                    format!("{name}: its conversion webhook"),
                    why,
                    "convert the versions yourself: `From` implementations between the types, \
                     registered as a conversion in src/webhook/ (docs/commands.md, create \
                     webhook --conversion)",
                ),
            }
        }
        let any = webhooks.defaulting || webhooks.validation || webhooks.conversion;
        if any {
            self.project.resources[at].webhooks = Some(webhooks);
        }
        any
    }

    /// Leaves out a defaulting or validating webhook whose name (after its kind and version,
    /// `mbar-v1.kb.io`) another kind's has: the same kind name and version in another group of
    /// a multigroup project. The API server refuses a configuration with two of one name.
    fn webhook_name_clashes(&mut self, entry: &ResourceEntry, name: &str, w: &mut WebhooksEntry) {
        let lower = entry.kind.lower();
        let others: Vec<(String, WebhooksEntry)> = self
            .project
            .resources
            .iter()
            .filter(|e| {
                e.group != entry.group && e.version == entry.version && e.kind.lower() == lower
            })
            .filter_map(|e| {
                let other = format!("{}/{} {}", e.group.display_name(), e.version, e.kind);
                Some((other, e.webhooks.clone()?))
            })
            .collect();
        for (other, theirs) in others {
            for (sort, letter, ours, theirs) in [
                ("defaulting", "m", &mut w.defaulting, theirs.defaulting),
                ("validating", "v", &mut w.validation, theirs.validation),
            ] {
                if !(*ours && theirs) {
                    continue;
                }
                *ours = false;
                let webhook =
                    manifests::admission::name(letter, entry.kind.as_str(), entry.version.as_ref());
                self.leave_out(
                    format!("{name}: its {sort} webhook"),
                    format!(
                        "it would be named {webhook}, as {other}'s is (kubebuilder names webhooks \
                         after their kind and version), and the API server refuses a \
                         configuration with two webhooks of one name"
                    ),
                    "write what it does in the other kind's webhook, or in a controller",
                );
            }
        }
    }

    /// Why rbuilder refuses webhooks for built-in type `b` in this project, if it does.
    fn builtin_webhook_refusal(&self, entry: &ResourceEntry, b: &Builtin) -> Option<String> {
        if let Some(own) = self.project.custom_resources().find(|e| {
            e.kind == entry.kind && e.version == entry.version && !self.project.multigroup
        }) {
            return Some(format!(
                "its webhooks would be in the file of this project's own {}/{} {}",
                own.group, own.version, own.kind
            ));
        }
        (self.project.namespaced && !b.namespaced).then(|| {
            format!(
                "{} is cluster-scoped, and a webhook of an operator scoped to one namespace \
                 would see it in every namespace",
                b.kind
            )
        })
    }

    /// The spokes of a conversion through `hub` that rbuilder converts, or why it converts none.
    fn conversion(
        &mut self,
        hub: &ResourceEntry,
        spokes: &[String],
    ) -> Result<Vec<Version>, String> {
        if hub.api.is_none() {
            return Err("the API server converts Kubernetes' own types itself".into());
        }
        let versions: Vec<ResourceEntry> = self
            .project
            .versions_of(&hub.group, &hub.kind)
            .cloned()
            .collect();
        if let Some(other) = versions
            .iter()
            .find(|e| e.version != hub.version && e.webhooks.as_ref().is_some_and(|w| w.conversion))
        {
            return Err(format!(
                "{} converts through version {} already, and a kind has one hub",
                hub.kind, other.version
            ));
        }
        let mut kept = Vec::new();
        for spoke in spokes {
            match versions
                .iter()
                .find(|e| e.version.as_ref() == spoke.as_str())
            {
                Some(e) if e.version != hub.version => {
                    if !kept.contains(&e.version) {
                        kept.push(e.version.clone());
                    }
                }
                _ => self.leave_out(
                    format!(
                        "{}/{} {}: its conversion to {spoke}",
                        hub.group, hub.version, hub.kind
                    ),
                    format!(
                        "{} has no other version {spoke} in the new project",
                        hub.kind
                    ),
                    "nothing: add the version, then `rbuilder create webhook --conversion \
                     --spoke` for it",
                ),
            }
        }
        if kept.is_empty() {
            return Err(format!("{} has no spoke version to convert", hub.kind));
        }
        // rbuilder converts versions made differently (one with --image, one without) by
        // field names, which the version stored, the kind's first, must have all of.
        let deploy_image = |v: &Version| {
            let entry = versions.iter().find(|e| e.version == *v);
            entry.is_some_and(|e| self.project.deploy_image(e).is_some())
        };
        let differs = kept
            .iter()
            .any(|spoke| deploy_image(spoke) != deploy_image(&hub.version));
        let stored = versions.first().map_or(&hub.version, |e| &e.version);
        if differs && !deploy_image(stored) {
            return Err(format!(
                "its versions were made differently (deploy-image and not), and rbuilder \
                 converts those by field names only when the version stored ({stored}, the \
                 first) is the deploy-image one"
            ));
        }
        Ok(kept)
    }
}
