//! A picture in a session outlives the process, by file: a fork and a
//! rewind keep it, and the next request after either still carries it.

use super::images::{image_parts, png};
use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

async fn turn(cli: &Cli, session: &str, text: &str) {
    let out = cli.run(&["-m", text, "--session", session]).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test]
async fn fork_and_rewind_keep_the_picture() {
    let fake = FakeLlama::start().await;
    fake.set_vision(true);
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    let bytes = png(50, 20);
    std::fs::write(cli.workspace().join("red.png"), &bytes).expect("picture");
    fake.push_replies([
        Reply::tool_calls(&[("read_file", "{\"path\": \"red.png\"}")]),
        Reply::text("Red."),
        Reply::text("You are welcome."),
    ]);
    turn(&cli, "pics", "read red.png").await;
    turn(&cli, "pics", "thanks").await;

    // The fork's first request carries the picture from the original.
    let out = cli.run(&["--session", "pics", "--fork"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let forked = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!forked.is_empty());
    turn(&cli, &forked, "what was it again?").await;
    let sent = fake.requests();
    assert_eq!(
        image_parts(sent.last().expect("a request")),
        vec![("image/png".into(), bytes.clone())]
    );

    // Rewound to before "thanks": the picture's turn stays, and is sent.
    let out = cli.run(&["--session", "pics", "--rewind", "2"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    turn(&cli, "pics", "and its size?").await;
    let last = fake.requests().pop().expect("a request");
    assert_eq!(image_parts(&last), vec![("image/png".into(), bytes)]);
    assert!(!last["messages"].to_string().contains("thanks"), "{last}");
}

#[tokio::test]
async fn a_picture_whose_file_was_deleted_is_a_note_not_a_failure() {
    let fake = FakeLlama::start().await;
    fake.set_vision(true);
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    std::fs::write(cli.workspace().join("red.png"), png(30, 30)).expect("picture");
    fake.push_replies([
        Reply::tool_calls(&[("read_file", "{\"path\": \"red.png\"}")]),
        Reply::text("Red."),
    ]);
    turn(&cli, "gone", "read red.png").await;
    std::fs::remove_dir_all(cli.workspace().join(".egirl/images")).expect("delete the store");
    turn(&cli, "gone", "and now?").await;
    let last = fake.requests().pop().expect("a request");
    assert!(image_parts(&last).is_empty());
    let sent = last["messages"].to_string();
    assert!(
        sent.contains("[image 30x30 png: not shown, its file is gone]"),
        "{sent}"
    );
}
