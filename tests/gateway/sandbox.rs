//! A command the model runs is the socket owner's user, and with `network
//! = true` its sandbox may open sockets: it can connect to the workspace's
//! socket, but it cannot say hello, because the gateway token's file reads
//! as empty inside the sandbox.

use super::headless::Daemon;
use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};
use egirl::link::client;

/// Connects to the socket (argv 1) and says hello with the token in the
/// file at argv 2; prints the token's length and the server's answer.
const KNOCK: &str = r#"
import json, socket, sys
token = open(sys.argv[2]).read().strip()
print("token bytes", len(token))
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
hello = {"frame": "hello", "version": 1, "client": "model", "token": token}
s.sendall((json.dumps(hello) + "\n").encode())
print(s.makefile().readline().strip())
"#;

#[tokio::test]
async fn a_sandboxed_command_cannot_say_hello_on_the_socket() {
    if !crate::hardening::sandbox::mount_namespace()
        || !crate::hardening::redteam_sandbox::python3()
    {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\nnetwork = true\n");
    let _daemon = Daemon::start(&cli).await;
    let token_file = cli.dir.path().join(".config/egirl/gateway/token");
    assert!(
        !super::daemon::gateway_token(cli.dir.path()).is_empty(),
        "the daemon made no token at {}",
        token_file.display()
    );
    let script = cli.dir.path().join("knock.py");
    std::fs::write(&script, KNOCK).unwrap();
    let command = format!(
        "python3 {} {} {}",
        script.display(),
        client::socket_path(&cli.workspace()).display(),
        token_file.display()
    );
    let args = serde_json::json!({ "command": command }).to_string();
    fake.push_replies(vec![
        Reply::tool_calls(&[("exec", args.as_str())]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "go", "--json", "--approve-exec"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(output.contains("token bytes 0"), "{output}");
    assert!(output.contains(r#""frame":"error""#), "{output}");
    assert!(!output.contains(r#""frame":"hello""#), "{output}");
}
