//! `rbuilder edit`: change project-wide settings recorded in PROJECT.

use std::path::Path;

use anyhow::{Result, bail};

use super::finish;
use crate::cli::EditArgs;
use crate::project::{self, Project};
use crate::scaffold::Plan;

pub fn run(root: &Path, args: EditArgs) -> Result<()> {
    let mut project = Project::load(root)?;
    let Some(multigroup) = args.multigroup else {
        bail!("nothing to edit: pass a setting to change, e.g. `rbuilder edit --multigroup`");
    };
    let groups: Vec<String> = project.groups().iter().map(ToString::to_string).collect();
    if !multigroup && groups.len() > 1 {
        bail!(
            "the project has APIs in several groups ({}), so it must stay multigroup",
            groups.join(", ")
        );
    }
    let before = project.multigroup;
    project.multigroup = multigroup;
    let mut plan = Plan::new(root);
    plan.update(project::FILE, |_| project.to_yaml())?;
    let next = match (before, multigroup) {
        (false, true) => {
            "The project is now multigroup: new APIs go to src/api/<group>/<version>/. \
             Existing APIs stay where they are."
        }
        (true, false) => {
            "The project is now single-group: new APIs go to src/api/<version>/, and all \
             must share one group."
        }
        _ => "Nothing changed.",
    };
    finish(plan, args.dry_run, next)
}
