//! Hot reload: the watcher picks up a SKILL.md written, changed or removed
//! by hand, without a restart. Waits are bounded polls, never timings.

use std::sync::Arc;
use std::time::Duration;

use egirl::skills::{Registry, watch};

use super::{config, eventually, workspace};

/// Generous: the debounce is a fraction of a second; a loaded CI machine
/// may take much longer to deliver file events.
const LIMIT: Duration = Duration::from_secs(20);

#[tokio::test]
async fn the_watcher_reloads_after_file_writes() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[]), &ws));
    let _watcher = watch::start(&registry).expect("watcher");
    assert!(registry.snapshot().skills.is_empty());

    let file = ws.join("skills/pomodoro/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "---\nname: pomodoro\ndescription: Focus timer.\n---\n",
    )
    .unwrap();
    assert!(
        eventually(LIMIT, || registry.snapshot().get("pomodoro").is_some()).await,
        "a new skill is picked up"
    );

    std::fs::write(
        &file,
        "---\nname: pomodoro\ndescription: Focus timer, 25 minutes.\n---\n",
    )
    .unwrap();
    let changed = || {
        registry
            .snapshot()
            .get("pomodoro")
            .is_some_and(|s| s.description == "Focus timer, 25 minutes.")
    };
    assert!(eventually(LIMIT, changed).await, "an edit is picked up");
    assert!(
        registry
            .snapshot()
            .prompt
            .contains("Focus timer, 25 minutes.")
    );

    // Broken by an edit: listed with its error, the others unaffected.
    std::fs::write(
        ws.join("skills/single.md"),
        "---\nname: single\ndescription: One file.\n---\n",
    )
    .unwrap();
    std::fs::write(&file, "---\nname: pomodoro\n---\n").unwrap();
    let broken = || {
        let snap = registry.snapshot();
        snap.broken.iter().any(|b| b.name == "pomodoro") && snap.get("single").is_some()
    };
    assert!(eventually(LIMIT, broken).await, "a broken edit is listed");

    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    let gone = || {
        let snap = registry.snapshot();
        snap.broken.is_empty() && snap.get("pomodoro").is_none()
    };
    assert!(eventually(LIMIT, gone).await, "a removed skill goes away");
}

#[tokio::test]
async fn the_agent_s_registry_watches_by_default() {
    let fake = crate::support::fake_llama::FakeLlama::start().await;
    let h = crate::agent::start(&fake, |_| {});
    let skills = h.agent.skills.clone();
    std::fs::write(
        h.workspace.join("skills/standup.md"),
        "---\nname: standup\ndescription: Daily standup notes.\n---\n",
    )
    .unwrap();
    assert!(eventually(LIMIT, || skills.snapshot().get("standup").is_some()).await);
}

/// Review of issue 33: reading the skills to reload them opens the files,
/// and the watcher took that for a change: one reload every debounce, for
/// as long as egirl ran (four `skills reloaded` log lines a second). After
/// the reload a change asks for, the registry stays as it is.
#[tokio::test]
async fn a_reload_is_not_a_change_that_reloads_again() {
    let (_tmp, ws) = workspace();
    let file = ws.join("skills/pomodoro/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let registry = Arc::new(Registry::load(&config(&[]), &ws));
    let _watcher = watch::start(&registry).expect("watcher");
    std::fs::write(
        &file,
        "---\nname: pomodoro\ndescription: Focus timer.\n---\n",
    )
    .unwrap();
    assert!(
        eventually(LIMIT, || registry.snapshot().get("pomodoro").is_some()).await,
        "a new skill is picked up"
    );
    // Past the write's own events; then several debounces with nothing
    // written.
    tokio::time::sleep(watch::DEBOUNCE * 4).await;
    let settled = registry.snapshot();
    tokio::time::sleep(watch::DEBOUNCE * 8).await;
    assert!(
        Arc::ptr_eq(&settled, &registry.snapshot()),
        "the registry was reloaded with nothing changed"
    );
}
