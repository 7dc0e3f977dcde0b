//! The `[local]` keys for replicas and the fast model as a user writes them.

use std::path::Path;

use egirl::config::{Balance, parse};

#[test]
fn replicas_and_the_fast_role_parse_with_their_defaults() {
    let text = r#"
[local]
endpoints = ["http://gpu1:8080", "http://gpu2:8080"]
model = "big"
context_length = 65536
max_concurrent = 4
balance = "round-robin"
probe_every = "2s"

[local.fast]
endpoint = "http://gpu3:8080"
model = "small"
context_length = 8192

[local.fast.server]
binary = "/opt/llama-server"
model = "/models/small.gguf"

[routing]
fast_for_quick = true
"#;
    let config = parse(text, Path::new("egirl.toml")).expect("valid");
    let local = &config.local;
    assert_eq!(
        local.endpoint_list(),
        ["http://gpu1:8080", "http://gpu2:8080"]
    );
    assert_eq!(local.balance, Balance::RoundRobin);
    assert_eq!(local.probe_every.0.as_secs(), 2);
    assert!(config.routing.fast_for_quick);
    let fast = local.fast_role().expect("[local.fast]");
    assert_eq!(fast.endpoint_list(), ["http://gpu3:8080"]);
    assert_eq!(fast.model, "small");
    assert_eq!(fast.context_length, 8192);
    // Unset keys are the main model's.
    assert_eq!(fast.max_concurrent, 4);
    assert!(fast.server.is_some() && fast.fast.is_none());

    // Without the section: one endpoint, affinity, no fast role.
    let plain = parse(
        "[local]\nendpoint = \"http://h:1\"\n",
        Path::new("egirl.toml"),
    )
    .expect("valid");
    assert_eq!(plain.local.endpoint_list(), ["http://h:1"]);
    assert_eq!(plain.local.balance, Balance::Affinity);
    assert!(plain.local.fast_role().is_none());
    assert!(!plain.routing.fast_for_quick);

    // A typo in the new section is an error naming the key.
    let err =
        parse("[local.fast]\nmodle = \"x\"\n", Path::new("egirl.toml")).expect_err("unknown key");
    assert!(err.to_string().contains("modle"), "{err}");
}
