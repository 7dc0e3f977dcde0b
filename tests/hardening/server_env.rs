//! Hardening: the processes egirl starts from its config get egirl's
//! environment minus its secrets, as a command does (docs/security.md,
//! "Secrets"). A managed llama-server that held egirl's keys would show
//! them to anything that can read its `/proc/<pid>/environ`: an approved
//! command with `sandbox = "off"`, whose output redaction cannot catch
//! once it is reversed or encoded.

use std::os::unix::fs::PermissionsExt;

use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::FakeLlama;

const ANTHROPIC: &str = "sk-ant-test-managed-0123456789";
const FOO: &str = "foo-managed-token-9876543210";

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

#[tokio::test]
async fn the_managed_llama_server_gets_no_secret_of_egirls() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let dir = cli.dir.path();
    // A "llama-server" that writes down the environment it got, then exits
    // (egirl reports that it died during start-up).
    let seen = dir.join("server-env.txt");
    let binary = dir.join("llama-server");
    std::fs::write(
        &binary,
        format!("#!/bin/sh\nenv > '{}'\nexit 1\n", seen.display()),
    )
    .unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let model = dir.join("model.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"http://127.0.0.1:{}\"\nmodel = \"fake\"\n[local.server]\nbinary = \"{}\"\nmodel = \"{}\"\nstartup_timeout = \"10s\"\n",
        dir.join("logs").display(),
        free_port(),
        binary.display(),
        model.display()
    );
    std::fs::write(cli.config(), config).unwrap();

    let out = cli
        .run_with_env(
            &["-m", "hi", "--json"],
            &[("ANTHROPIC_API_KEY", ANTHROPIC), ("FOO_TOKEN", FOO)],
        )
        .await;
    let err = stderr(&out);
    assert!(err.contains("llama-server exited during start-up"), "{err}");
    let env = std::fs::read_to_string(&seen).expect("the server ran");
    assert!(env.contains("PATH="), "{env}");
    for (name, value) in [("ANTHROPIC_API_KEY", ANTHROPIC), ("FOO_TOKEN", FOO)] {
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        assert!(
            !env.contains(value),
            "the server got {name}'s value: {names:?}"
        );
        assert!(!names.contains(&name), "the server got {name}: {names:?}");
    }
}
