//! `cron_add {message, at? | every? | cron?, tz?, name?, deliver?}`: a job
//! that sends `message` to the agent on a schedule. Exactly one of `at`
//! (once: "20m" or an ISO time), `every` ("1h") or `cron` (5 fields, with
//! an optional IANA `tz`). `deliver` defaults to where the request came
//! from (its Discord channel, else the TUI).

use chrono::Utc;

use crate::chat::ToolSpec;
use crate::config::Delivery;
use crate::cron::{CronStore, Job, Schedule, store};
use crate::protocol::Origin;
use crate::tools::{ToolContext, ToolOutput, arg_str};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "cron_add",
        description: "Schedule a message to yourself: at (\"20m\"/date), every (\"2h\") or cron (5 fields). deliver: tui, none, discord:<channel>.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "at": {"type": "string"},
                "every": {"type": "string"},
                "cron": {"type": "string"},
                "tz": {"type": "string"},
                "name": {"type": "string"},
                "deliver": {"type": "string"}
            },
            "required": ["message"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let job = match job_from(args, ctx) {
        Ok(job) => job,
        Err(e) => return ToolOutput::fail(e),
    };
    let store = CronStore::in_workspace(&ctx.workspace);
    let line = job.describe(Utc::now());
    match store.add(job) {
        Ok(()) => ToolOutput::ok(format!("scheduled: {line}")),
        Err(e) => ToolOutput::fail(format!("{e:#}")),
    }
}

fn job_from(args: &serde_json::Value, ctx: &ToolContext) -> Result<Job, String> {
    let message = arg_str(args, "message").map_err(|e| e.output)?.trim();
    if message.is_empty() {
        return Err("`message` is empty: say what the job should do".into());
    }
    let text = |key: &str| {
        args.get(key)
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let now = Utc::now();
    let schedule = match (text("at"), text("every"), text("cron")) {
        (Some(at), None, None) => Schedule::at(at, now),
        (None, Some(every), None) => Schedule::every(every),
        (None, None, Some(expr)) => Schedule::cron(expr, text("tz")),
        _ => return Err("give exactly one of `at`, `every` or `cron`".into()),
    }
    .map_err(|e| format!("{e:#}"))?;
    let id = match text("name") {
        Some(name) => name.to_string(),
        None => format!("job-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]),
    };
    store::validate_id(&id).map_err(|e| format!("{e:#}"))?;
    let deliver = match text("deliver") {
        Some(d) => d.parse::<Delivery>()?,
        None => match &ctx.origin {
            Origin::Discord(channel) => Delivery::Discord(channel.clone()),
            Origin::Telegram(chat) => Delivery::Telegram(chat.clone()),
            _ => Delivery::Tui,
        },
    };
    let next_run = schedule
        .next_after(now, None)
        .map_err(|e| format!("{e:#}"))?;
    Ok(Job {
        id,
        schedule,
        message: message.to_string(),
        deliver,
        enabled: true,
        created_at: now,
        next_run,
        last_run: None,
        last_status: None,
        consecutive_errors: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;

    #[tokio::test]
    async fn adds_a_job_with_its_next_run_and_refuses_bad_schedules() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = test_context(dir.path(), ExecApproval::Deny);
        ctx.origin = Origin::Discord("42".into());
        let out = run(
            &serde_json::json!({"message": "stretch", "every": "2h", "name": "stretch"}),
            &ctx,
        )
        .await;
        assert!(out.success, "{}", out.output);
        assert!(out.output.contains("every 2h"), "{}", out.output);
        let jobs = CronStore::in_workspace(&ctx.workspace).load().unwrap();
        assert_eq!(jobs[0].deliver, Delivery::Discord("42".into()));
        assert!(jobs[0].next_run.is_some());
        // Asked from a Telegram chat: the reminder goes back there.
        ctx.origin = Origin::Telegram("-100".into());
        let out = run(
            &serde_json::json!({"message": "water", "every": "1h", "name": "water"}),
            &ctx,
        )
        .await;
        assert!(out.success, "{}", out.output);
        let jobs = CronStore::in_workspace(&ctx.workspace).load().unwrap();
        let water = jobs.iter().find(|j| j.id == "water").unwrap();
        assert_eq!(water.deliver, Delivery::Telegram("-100".into()));

        for bad in [
            serde_json::json!({"message": "x"}),
            serde_json::json!({"message": "x", "at": "20m", "every": "1h"}),
            serde_json::json!({"message": "x", "cron": "* * *"}),
            serde_json::json!({"message": "x", "every": "1h", "name": "a b"}),
            serde_json::json!({"message": "x", "every": "1h", "deliver": "email"}),
            serde_json::json!({"message": "", "every": "1h"}),
        ] {
            let out = run(&bad, &ctx).await;
            assert!(!out.success, "{bad}");
        }
    }
}
