//! Host approval for `web_fetch`: `[tools.web] fetch`, `allow_domains`,
//! and hosts approved with `a` (this session) or `p` (the approvals file's
//! `hosts`). The request travels as exec's does (same events, same modal);
//! its rule is the host.

use super::{Approver, DENIED_BY_USER, lock, read_rules};
use crate::config::WebFetchPolicy;
use crate::protocol::ReviewDecision;
use crate::tools::ToolContext;

impl Approver {
    /// Ok(why `url` on `host` may be fetched) or Err(why not, for the model).
    /// An unattended turn is denied what would ask: nobody is there, and
    /// its text may have come from the network.
    pub async fn check_host(
        &self,
        url: &str,
        host: &str,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match ctx.config.tools.web.fetch {
            WebFetchPolicy::Off => {
                return Err("web_fetch is disabled here ([tools.web] fetch = \"off\")".into());
            }
            WebFetchPolicy::Allow => return Ok("policy allow".into()),
            WebFetchPolicy::Ask => {}
        }
        if ctx.config.tools.web.domain_allowed(&host) {
            return Ok("in [tools.web] allow_domains".into());
        }
        if lock(&self.saved_hosts).contains(&host) {
            return Ok(format!("`{host}` approved always"));
        }
        if lock(&self.session_hosts)
            .get(&ctx.session)
            .is_some_and(|hosts| hosts.contains(&host))
        {
            return Ok(format!("`{host}` approved for this session"));
        }
        if ctx.origin.is_unattended() {
            return Err(format!(
                "denied: `{host}` is not in [tools.web] allow_domains and nobody can approve it in a {} turn",
                ctx.origin
            ));
        }
        let (decision, by) = self
            .ask_as("web_fetch", url, Some(host.clone()), None, None, ctx)
            .await?;
        match decision {
            ReviewDecision::Denied => Err(DENIED_BY_USER.into()),
            ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => {
                Ok(format!("approved once by {by}"))
            }
            ReviewDecision::ApprovedForSession => {
                self.remember_for_session(&host, ctx);
                Ok(format!(
                    "approved by {by}; `{host}` allowed for this session"
                ))
            }
            ReviewDecision::ApprovedAlways => match self.save_host(&host) {
                Ok(()) => Ok(format!("approved by {by}; `{host}` allowed from now on")),
                Err(e) => {
                    // The user said yes: the session keeps it at least.
                    tracing::warn!("{e}");
                    self.emit(
                        ctx,
                        crate::protocol::EventKind::Notice(crate::protocol::Notice { message: e }),
                    );
                    self.remember_for_session(&host, ctx);
                    Ok(format!(
                        "approved by {by}; `{host}` allowed for this session"
                    ))
                }
            },
        }
    }

    fn remember_for_session(&self, host: &str, ctx: &ToolContext) {
        lock(&self.session_hosts)
            .entry(ctx.session.clone())
            .or_default()
            .push(host.to_string());
    }

    /// Adds a host to the approvals file, merged with what is on disk now.
    fn save_host(&self, host: &str) -> Result<(), String> {
        let _rules = lock(&self.saved);
        let mut hosts = lock(&self.saved_hosts);
        let mut file = read_rules(&self.approvals_file)?;
        if !file.hosts.iter().any(|h| h == host) {
            file.hosts.push(host.to_string());
        }
        self.write_rules(&file)?;
        *hosts = file.hosts;
        Ok(())
    }
}
