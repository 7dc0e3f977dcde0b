use super::*;
use crate::config::parse;

fn config(text: &str) -> Config {
    parse(text, Path::new("egirl.toml")).unwrap()
}

const TWO: &str = r#"
[workspace]
path = "/srv/egirl/workspace"

[local]
endpoint = "http://127.0.0.1:8080"
[local.fast]
endpoint = "http://127.0.0.1:8081"

[agents.work]
[agents.work.tools.exec]
approval = "ask"

[agents.home]
model = "fast"
remote = false
workspace = "/srv/home-agent"
[agents.home.tools]
deny = ["exec"]

[[bindings]]
agent = "work"
channel = "discord"
guild = 111

[[bindings]]
agent = "home"
channel = "discord"
channel_id = "dm-9"
user = "42"

[[bindings]]
agent = "home"
channel = "telegram"
"#;

#[test]
fn without_agents_there_is_one_agent_on_the_configured_workspace() {
    let c = config("[workspace]\npath = \"/srv/ws\"\n");
    assert_eq!(c.agent_names(), vec!["default"]);
    assert!(!c.has_agents());
    assert_eq!(c.agent_workspace("default"), PathBuf::from("/srv/ws"));
    let default = c.for_agent("default").unwrap();
    assert_eq!(default.workspace.path, "/srv/ws");
    assert!(c.for_agent("work").is_none());
    assert_eq!(
        c.bound_agent(BindingChannel::Discord, &BindingTarget::default()),
        "default"
    );
}

#[test]
fn each_agent_is_the_base_config_with_its_table_on_top() {
    let c = config(TWO);
    assert_eq!(c.agent_names(), vec!["default", "home", "work"]);
    assert_eq!(
        c.agent_workspace("work"),
        PathBuf::from("/srv/egirl/agents/work/workspace")
    );
    let home = c.for_agent("home").unwrap();
    assert_eq!(home.workspace.path, "/srv/home-agent");
    assert_eq!(home.local.endpoint, "http://127.0.0.1:8081", "model = fast");
    assert!(home.local.fast.is_none());
    assert_eq!(home.tools.deny, vec!["exec"]);
    let work = c.for_agent("work").unwrap();
    assert_eq!(work.local.endpoint, "http://127.0.0.1:8080");
    assert!(work.tools.deny.is_empty());
    assert_eq!(c.webhook_secret_env("work"), "EGIRL_WEBHOOK_SECRET_WORK");
    assert_eq!(c.webhook_secret_env("default"), "EGIRL_WEBHOOK_SECRET");
}

#[test]
fn the_most_specific_binding_wins_then_default() {
    let c = config(TWO);
    let in_guild = BindingTarget {
        guild: Some("111".into()),
        channel_id: Some("dm-9".into()),
        user: Some("42".into()),
        ..Default::default()
    };
    assert_eq!(c.bound_agent(BindingChannel::Discord, &in_guild), "home");
    let other_user = BindingTarget {
        user: Some("7".into()),
        ..in_guild.clone()
    };
    assert_eq!(c.bound_agent(BindingChannel::Discord, &other_user), "work");
    let elsewhere = BindingTarget {
        guild: Some("222".into()),
        ..Default::default()
    };
    assert_eq!(
        c.bound_agent(BindingChannel::Discord, &elsewhere),
        "default"
    );
    assert_eq!(
        c.bound_agent(BindingChannel::Telegram, &BindingTarget::default()),
        "home"
    );
    assert_eq!(
        c.bound_agent(BindingChannel::Tui, &BindingTarget::default()),
        "default"
    );
    assert!(
        c.binding_problems().is_empty(),
        "{:?}",
        c.binding_problems()
    );
}

#[test]
fn dangling_and_overlapping_bindings_are_found() {
    let c = config(&format!(
        "{TWO}\n[[bindings]]\nagent = \"ghost\"\nchannel = \"tui\"\n\n[[bindings]]\nagent = \"work\"\nchannel = \"discord\"\nuser = 42\n"
    ));
    let problems = c.binding_problems();
    assert!(problems.contains(&BindingProblem::Dangling {
        index: 3,
        agent: "ghost".into()
    }));
    // guild=111 and user=42 can both match one message, one field each.
    assert!(problems.contains(&BindingProblem::Overlap {
        first: 0,
        second: 4
    }));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].to_string().contains("ghost"));
}

#[test]
fn bad_names_roles_and_nested_workspaces_are_refused() {
    let err = |text: &str| {
        parse(text, Path::new("egirl.toml"))
            .unwrap_err()
            .to_string()
    };
    assert!(err("[agents.Work]\n").contains("a-z"));
    assert!(err("[agents.a]\nmodel = \"big\"\n").contains("not a local role"));
    assert!(err("[agents.a]\nmodel = \"fast\"\n").contains("[local.fast]"));
    let nested = err("[workspace]\npath = \"/srv/ws\"\n[agents.a]\nworkspace = \"/srv/ws/a\"\n");
    assert!(nested.contains("inside"), "{nested}");
    assert!(err("[[bindings]]\nagent = \"a\"\nchannel = \"irc\"\n").contains("irc"));
    let plain = err("[agents.a]\nwebhook_secret_env = \"WORK_HOOK\"\n");
    assert!(plain.contains("not named like a secret"), "{plain}");
    config("[agents.a]\nwebhook_secret_env = \"WORK_HOOK_TOKEN\"\n");
    let shared = err("[agents.a]\n[agents.b]\nwebhook_secret_env = \"EGIRL_WEBHOOK_SECRET_A\"\n");
    assert!(
        shared.contains("agent `a`'s webhook secret too"),
        "{shared}"
    );
    let default = err("[agents.a]\nwebhook_secret_env = \"EGIRL_WEBHOOK_SECRET\"\n");
    assert!(default.contains("agent `default`'s"), "{default}");
}
