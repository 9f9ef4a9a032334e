//! kubebuilder's `autoupdate/v1-alpha` plugin in rbuilder's terms (`rbuilder edit --plugins
//! autoupdate/v1-alpha`): a weekly GitHub workflow that installs the newest rbuilder, runs
//! `rbuilder update` and opens a pull request with the change and update's report (the user's
//! files that a new scaffold writes differently). The workflow is the user's once written.

use anyhow::{Result, bail};

use crate::scaffold::{Plan, Templates};

/// The plugin's name on the command line, as kubebuilder spells it.
pub const PLUGIN: &str = "autoupdate/v1-alpha";
/// The workflow, where kubebuilder's plugin writes its own.
pub const WORKFLOW: &str = ".github/workflows/auto_update.yml";
const TEMPLATE: &str = "autoupdate/auto_update.yml";

/// Plans the workflow. One the user changed is rewritten only with `force`; one as rbuilder
/// writes it is left alone. Returns what to do next.
pub fn plan(plan: &mut Plan, ctx: &tera::Context, force: bool) -> Result<String> {
    let templates = Templates::load(&[TEMPLATE])?;
    let text = templates.render(TEMPLATE, ctx)?;
    match plan.read(WORKFLOW)? {
        None => plan.create(WORKFLOW, text)?,
        Some(current) if current == text => {}
        Some(_) if force => plan.update(WORKFLOW, |_| Ok(text))?,
        Some(_) => bail!(
            "{WORKFLOW} exists and differs from what the {PLUGIN} plugin writes: keep it, or \
             pass --force to write it again (your changes to it are lost)"
        ),
    }
    Ok(format!(
        "{WORKFLOW} brings the project to the newest rbuilder every Tuesday and opens a pull \
         request. Allow GitHub Actions to create pull requests (Settings > Actions > General) \
         for it to work."
    ))
}
