use super::*;
use crate::bus::EventBus;
use crate::config::ExecConfig;
use crate::tools::approval::{PendingApprovals, read_rules_file};

fn approver(path: &Path) -> Approver {
    Approver::new(
        EventBus::new(),
        PendingApprovals::new(),
        ExecConfig::default(),
        path.to_path_buf(),
        std::time::Duration::from_millis(50),
    )
}

#[test]
fn every_kind_is_listed_with_its_source_and_date_and_ids_are_stable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".egirl/approvals.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A file from before dates were kept, with the user's comment.
    std::fs::write(
        &path,
        "# mine: keep this\nallow = [\"git status\", \"cargo test --lib\"]\nmcp = [\"mcp__fs__write_file\"]\n",
    )
    .unwrap();
    let mut config = Config::default();
    config.tools.exec.allow = vec!["make check".into()];
    config.delegate.claude_code.allowed_tools = vec!["Read".into()];
    let approver = approver(&path);
    approver
        .store
        .remember_for_session("s", Grant::Host("docs.rs".into()));
    let rules = approver.rules_in_force("s", &config).unwrap();
    let row = |r: &ApprovalRule| (r.kind, r.rule.clone(), r.scope, r.added.is_some());
    assert_eq!(
        rules.iter().map(row).collect::<Vec<_>>(),
        vec![
            (
                ApprovalRuleKind::ExecPrefix,
                "make check".into(),
                ApprovalScope::Config,
                false
            ),
            (
                ApprovalRuleKind::ExecPrefix,
                "git status".into(),
                ApprovalScope::Permanent,
                false
            ),
            (
                ApprovalRuleKind::ExecArgv,
                "cargo test --lib".into(),
                ApprovalScope::Permanent,
                false
            ),
            (
                ApprovalRuleKind::Host,
                "docs.rs".into(),
                ApprovalScope::Session,
                true
            ),
            (
                ApprovalRuleKind::Mcp,
                "mcp__fs__write_file".into(),
                ApprovalScope::Permanent,
                false
            ),
            (
                ApprovalRuleKind::Delegation,
                "Read".into(),
                ApprovalScope::Config,
                false
            ),
        ]
    );
    assert!(rules[1].source.contains("approvals.toml"));
    // Another session sees the file's rules, not this session's.
    let other = approver.rules_in_force("t", &config).unwrap();
    assert!(other.iter().all(|r| r.rule != "docs.rs"));
    // The same id in every listing, and a different one per scope.
    assert_eq!(permanent_rules(&path, &config).unwrap()[1].id, rules[1].id);
    assert_eq!(rules[1].id.len(), 8);
    let ids: std::collections::HashSet<_> = rules.iter().map(|r| &r.id).collect();
    assert_eq!(ids.len(), rules.len());
}

#[test]
fn revoking_removes_one_rule_and_keeps_the_rest_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".egirl/approvals.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "# mine: keep this\nallow = [\"git status\", \"ls\"]\n",
    )
    .unwrap();
    let mut config = Config::default();
    config.tools.exec.allow = vec!["make check".into()];
    let approver = approver(&path);
    approver
        .store
        .remember_for_session("s", Grant::ExecRule("git log".into()));
    let rules = approver.rules_in_force("s", &config).unwrap();
    let id = |rule: &str| rules.iter().find(|r| r.rule == rule).unwrap().id.clone();

    let revoked = approver.revoke("s", &id("git status"), &config).unwrap();
    assert_eq!(revoked.rule, "git status");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# mine: keep this\n"), "{text}");
    assert_eq!(read_rules_file(&path).unwrap(), vec!["ls"]);

    assert_eq!(
        approver.revoke("s", &id("git log"), &config).unwrap().rule,
        "git log"
    );
    assert!(approver.store.session_grants("s").is_empty());

    let config_rule = approver
        .revoke("s", &id("make check"), &config)
        .unwrap_err();
    assert!(config_rule.contains("egirl.toml"), "{config_rule}");
    let unknown = approver.revoke("s", "nope", &config).unwrap_err();
    assert!(
        unknown.contains("no approval rule has the id `nope`"),
        "{unknown}"
    );

    // Saved again: dated this time; revoked from the shell's side.
    approver
        .store
        .save(&Grant::ExecRule("git status".into()))
        .unwrap();
    let dated = permanent_rules(&path, &config).unwrap();
    let saved = dated.iter().find(|r| r.rule == "git status").unwrap();
    assert!(saved.added.as_deref().is_some_and(|d| d.starts_with("20")));
    revoke_permanent(&path, &saved.id, &config).unwrap();
    assert_eq!(read_rules_file(&path).unwrap(), vec!["ls"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("git status"), "{text}");
}
