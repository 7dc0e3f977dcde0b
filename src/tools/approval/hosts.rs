//! Host approval for `web_fetch`: `[tools.web] fetch`, `allow_domains`,
//! and hosts approved with `a` (this session) or `p` (the approvals file's
//! `hosts`). The request travels as exec's does (same events, same modal);
//! its rule is the host.

use super::store::GrantKind;
use super::{Approver, Grant, Granted, Refusal};
use crate::config::WebFetchPolicy;
use crate::tools::ToolContext;

impl Approver {
    /// Whether `url` on `host` may be fetched. An unattended turn is denied
    /// what would ask: nobody is there, and its text may have come from the
    /// network.
    pub async fn check_host(
        &self,
        url: &str,
        host: &str,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match ctx.config.tools.web.fetch {
            WebFetchPolicy::Off => {
                return Err(Refusal::Policy(
                    "web_fetch is disabled here ([tools.web] fetch = \"off\")".into(),
                ));
            }
            WebFetchPolicy::Allow => return Ok(Granted::Policy("policy allow".into())),
            WebFetchPolicy::Ask => {}
        }
        if ctx.config.tools.web.domain_allowed(&host) {
            return Ok(Granted::Policy("in [tools.web] allow_domains".into()));
        }
        let same = |grant: &str| grant == host;
        if let Some((grant, source)) = self.store.find(GrantKind::Host, &ctx.session, same) {
            let grant = Grant::Host(grant);
            return Ok(Granted::Covered { grant, source });
        }
        if ctx.origin.is_unattended() {
            return Err(Refusal::Policy(format!(
                "denied: `{host}` is not in [tools.web] allow_domains and nobody can approve it in a {} turn",
                ctx.origin
            )));
        }
        let answer = self
            .ask_as("web_fetch", url, Some(host.clone()), None, None, ctx)
            .await?;
        self.settle(answer, Some(Grant::Host(host)), ctx)
    }
}
