//! The fixed 10-turn session the prefix-cache benchmark replays: what the
//! user typed, and per model request the reply egirl keeps in history
//! (text, tool calls with the results the tools gave). The 135M model's own
//! replies are thrown away, so every run sends the same history.

use serde_json::{Value, json};

pub struct Turn {
    pub typed: &'static str,
    pub steps: Vec<Step>,
}

/// One model request's reply.
pub struct Step {
    pub text: &'static str,
    /// (tool, arguments, result) in call order; empty for the final answer.
    pub calls: Vec<(&'static str, Value, String)>,
}

fn final_answer(text: &'static str) -> Step {
    Step {
        text,
        calls: Vec::new(),
    }
}

fn call(text: &'static str, calls: Vec<(&'static str, Value, String)>) -> Step {
    Step { text, calls }
}

const TODO: &str = "# Todo\n\n- [ ] call the dentist (Tuesday afternoon works)\n- [ ] renew the passport before August\n- [x] book the train to Porto\n- [ ] review Marta's pull request on tiny-http\n- [ ] water the plants on the balcony\n- [ ] send the invoice for May\n- [ ] back up the photo library to the NAS";

const MEETING: &str = "# 2025-05-30 tiny-http sync\n\nPresent: Marta, Jonas, me.\n\n- Release 0.4 slips a week: the chunked-encoding bug is not fixed yet.\n- Jonas takes the fuzzing harness; Marta keeps the keep-alive rewrite.\n- We drop Windows CI until someone volunteers.\n- Next sync: June 13, same time.";

const IDEAS: &str = "# Ideas\n\n- A tiny static site generator that reads my notes folder.\n- Self-hosted RSS reader with a terminal UI.\n- Measure the power draw of the GPU box over a week.";

const DF: &str =
    "Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p2  916G  611G  259G  71% /";

const GREP: &str = "src/server.rs:88:    // TODO: honour Connection: close from HTTP/1.0 clients\nsrc/server.rs:143:    // TODO: limit header size\nsrc/chunked.rs:57:        // TODO: trailers are ignored\nsrc/chunked.rs:102:    // TODO: this loses the last chunk when the size line is split\nsrc/router.rs:12:// TODO: wildcard routes";

const TESTS: &str = "running 24 tests\ntest chunked::tests::decodes_one_chunk ... ok\ntest chunked::tests::decodes_split_size_line ... FAILED\ntest chunked::tests::empty_body ... ok\ntest router::tests::exact_match ... ok\ntest server::tests::keep_alive ... ok\n\nfailures:\n\n---- chunked::tests::decodes_split_size_line stdout ----\nthread 'chunked::tests::decodes_split_size_line' panicked at src/chunked.rs:188:9:\nassertion `left == right` failed\n  left: \"hello wor\"\n right: \"hello world\"\n\ntest result: FAILED. 23 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.03s";

const CHUNKED: &str = "95\tfn read_size(&mut self) -> io::Result<Option<usize>> {\n96\t    let line = match self.buf.find(\"\\r\\n\") {\n97\t        Some(end) => self.buf.drain(..end + 2).collect::<String>(),\n98\t        None => return Ok(None),\n99\t    };\n100\t    let size = usize::from_str_radix(line.trim_end(), 16)\n101\t        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, \"bad chunk size\"))?;\n102\t    // TODO: this loses the last chunk when the size line is split\n103\t    self.pending = self.pending.saturating_sub(1);\n104\t    Ok(Some(size))\n105\t}";

fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{}\t{l}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn session() -> Vec<Turn> {
    vec![
        Turn {
            typed: "What's in my notes folder?",
            steps: vec![
                call(
                    "",
                    vec![(
                        "glob",
                        json!({"pattern": "notes/**/*.md"}),
                        "notes/2025-05-30-meeting.md\nnotes/ideas.md\nnotes/todo.md".into(),
                    )],
                ),
                final_answer(
                    "Three notes: `ideas.md`, `todo.md`, and the meeting note from May 30.",
                ),
            ],
        },
        Turn {
            typed: "Read me the todo list.",
            steps: vec![
                call(
                    "",
                    vec![(
                        "read_file",
                        json!({"path": "notes/todo.md"}),
                        numbered(TODO),
                    )],
                ),
                final_answer(
                    "Open: dentist, passport, Marta's PR, plants, the May invoice and the photo backup. The Porto train is booked.",
                ),
            ],
        },
        Turn {
            typed: "I called the dentist this morning, mark it done.",
            steps: vec![
                call(
                    "Marking it done.",
                    vec![(
                        "edit_file",
                        json!({"path": "notes/todo.md", "old_text": "- [ ] call the dentist", "new_text": "- [x] call the dentist"}),
                        "edited notes/todo.md (1 replacement)".into(),
                    )],
                ),
                final_answer("Done: the dentist is ticked off."),
            ],
        },
        Turn {
            typed: "How much disk space is left on the root disk?",
            steps: vec![
                call(
                    "",
                    vec![(
                        "exec",
                        json!({"command": "df -h /"}),
                        format!("exit 0\n{DF}"),
                    )],
                ),
                final_answer("259 GB free of 916 GB (71% used)."),
            ],
        },
        Turn {
            typed: "Thanks. Unrelated: what's the capital of Portugal?",
            steps: vec![final_answer("Lisbon.")],
        },
        Turn {
            typed: "Find every TODO in ~/code/tiny-http/src.",
            steps: vec![
                call(
                    "",
                    vec![(
                        "exec",
                        json!({"command": "cd ~/code/tiny-http && grep -rn TODO src"}),
                        format!("exit 0\n{GREP}"),
                    )],
                ),
                final_answer(
                    "Five TODOs: two in server.rs (HTTP/1.0 Connection: close, header size limit), two in chunked.rs (trailers, a split size line loses the last chunk) and wildcard routes in router.rs.",
                ),
            ],
        },
        Turn {
            typed: "Read ideas.md and the meeting note, then tell me what's urgent.",
            steps: vec![
                call(
                    "",
                    vec![
                        (
                            "read_file",
                            json!({"path": "notes/ideas.md"}),
                            numbered(IDEAS),
                        ),
                        (
                            "read_file",
                            json!({"path": "notes/2025-05-30-meeting.md"}),
                            numbered(MEETING),
                        ),
                    ],
                ),
                final_answer(
                    "Nothing in ideas.md is urgent. From the meeting: release 0.4 waits on the chunked-encoding bug, which matches the TODO in chunked.rs line 102.",
                ),
            ],
        },
        Turn {
            typed: "Write a three-line summary of the meeting to notes/meeting-summary.md.",
            steps: vec![
                call(
                    "",
                    vec![(
                        "write_file",
                        json!({"path": "notes/meeting-summary.md", "content": "Release 0.4 slips a week (chunked-encoding bug).\nJonas: fuzzing harness; Marta: keep-alive rewrite.\nWindows CI dropped; next sync June 13."}),
                        "wrote 150 bytes to notes/meeting-summary.md".into(),
                    )],
                ),
                final_answer("Written to notes/meeting-summary.md."),
            ],
        },
        Turn {
            typed: "Run the tiny-http tests and tell me why anything fails.",
            steps: vec![
                call(
                    "",
                    vec![(
                        "exec",
                        json!({"command": "cd ~/code/tiny-http && cargo test"}),
                        format!("exit 101\n{TESTS}"),
                    )],
                ),
                call(
                    "One test fails; reading the decoder around the TODO.",
                    vec![(
                        "read_file",
                        json!({"path": "~/code/tiny-http/src/chunked.rs", "offset": 95, "limit": 11}),
                        CHUNKED.into(),
                    )],
                ),
                final_answer(
                    "`decodes_split_size_line` fails: when the size line arrives split across reads, `read_size` still decrements `pending` (line 103), so the last chunk is dropped. Only decrement after a full line is parsed.",
                ),
            ],
        },
        Turn {
            typed: "Good. Remind me what we did today, in two lines.",
            steps: vec![final_answer(
                "Ticked off the dentist, checked disk space, wrote the meeting summary.\nFound the tiny-http TODOs and why decodes_split_size_line fails.",
            )],
        },
    ]
}

/// Memory hits a naive layout would put at the top, two per turn.
pub const MEMORY_HITS: [&str; 8] = [
    "The user's name is Ada; she lives in Lisbon.",
    "tiny-http is Ada's HTTP/1.1 server library in Rust (~/code/tiny-http).",
    "Ada prefers short answers without bullet points.",
    "The NAS is at 192.168.1.20; backups run on Sundays.",
    "Marta and Jonas maintain tiny-http with Ada.",
    "Ada's dentist is Dr. Sousa, phone 21 555 0199.",
    "The GPU box has an RTX 4090 and 64 GB of RAM.",
    "Ada's passport expires in September 2025.",
];
