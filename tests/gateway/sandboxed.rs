//! What a hostile model reaches of the gateway's secrets through the real
//! binary, with `[tools.exec] network = true` (a command may then dial
//! the listener): an approved command reads the gateway token and the
//! devices file as empty and cannot add a device or plant a pairing code;
//! the file tools read and write neither.

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

const TOKEN: &str = "egt_0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab";

#[tokio::test]
async fn a_sandboxed_command_and_the_file_tools_cannot_use_the_gateway_secrets() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\nnetwork = true\n");
    let secrets = cli.dir.path().join(".config/egirl/gateway");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("token"), format!("{TOKEN}\n")).unwrap();
    let devices = "[[device]]\nid = \"aaaa0000\"\nname = \"phone\"\n";
    std::fs::write(secrets.join("devices.toml"), devices).unwrap();
    let dir = secrets.display();
    let read =
        format!("wc -c < {dir}/token; wc -c < {dir}/devices.toml; grep -c egt_ {dir}/token; true");
    let plant = format!(
        "echo '[[device]]' >> {dir}/devices.toml; echo x > {dir}/pairing.toml; \
         echo x > {dir}/.devices.toml.1.tmp; ls -a {dir}; true"
    );
    let args = |command: &str| serde_json::json!({ "command": command }).to_string();
    let path = |name: &str| serde_json::json!({ "path": format!("{dir}/{name}") }).to_string();
    let write = serde_json::json!({
        "path": format!("{dir}/devices.toml"), "content": "[[device]]\n"
    })
    .to_string();
    fake.push_replies([
        Reply::tool_calls(&[
            ("exec", &args(&read)),
            ("exec", &args(&plant)),
            ("read_file", &path("token")),
            ("write_file", &write),
        ]),
        Reply::text("done"),
    ]);
    let out = cli
        .run(&["-m", "take the gateway", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    let (_, read) = tool_outcome(&events, "fake_call_0");
    let stdout_part = read.split("[stdout]").nth(1).unwrap_or("");
    let counts: Vec<&str> = stdout_part.split_whitespace().take(3).collect();
    assert_eq!(counts, ["0", "0", "0"], "the secrets read as empty: {read}");
    let (_, planted) = tool_outcome(&events, "fake_call_1");
    assert!(planted.contains("Read-only file system"), "{planted}");
    let (read_ok, read_file) = tool_outcome(&events, "fake_call_2");
    assert!(!read_ok && !read_file.contains(TOKEN), "{read_file}");
    let (write_ok, written) = tool_outcome(&events, "fake_call_3");
    assert!(!write_ok, "{written}");

    assert_eq!(
        std::fs::read_to_string(secrets.join("devices.toml")).unwrap(),
        devices,
        "no device was added"
    );
    assert!(!secrets.join("pairing.toml").exists());
    assert!(!secrets.join(".devices.toml.1.tmp").exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(TOKEN) && !stderr(&out).contains(TOKEN));
}
