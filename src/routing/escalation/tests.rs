//! The escalation checks and the turn's decisions over them, without a
//! provider: plain inputs in, a trigger (or none) out.

use super::*;

fn reply(answer: &str) -> LocalReply<'_> {
    LocalReply {
        answer,
        confidence: None,
        threshold: 0.4,
        substantive: false,
        used_tools: false,
    }
}

#[test]
fn the_user_asking_escalates_in_several_languages() {
    for text in [
        "hmm, use claude for this one",
        "Escalate please",
        "ok ask GPT then",
        "usa claude para esto",
        "demande à claude stp",
        "frag Claude mal",
    ] {
        let t = user_asked(text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(t.trigger, "user", "{text}");
    }
    // Words that merely contain the phrase do not count.
    assert_eq!(user_asked("the escalated ticket is closed"), None);
    assert_eq!(user_asked("what does claude's pricing look like?"), None);
}

#[test]
fn low_confidence_comes_first_and_names_the_numbers() {
    let mut r = reply("Canberra.");
    r.confidence = Some(0.31);
    let t = after_reply(&r).expect("escalates");
    assert_eq!(t.trigger, "low_confidence");
    assert_eq!(
        t.reason,
        "local confidence 0.31 is below the threshold 0.40"
    );
    r.confidence = Some(0.9);
    assert_eq!(after_reply(&r), None);
}

#[test]
fn hedging_counts_in_prose_not_in_code() {
    let t = after_reply(&reply("I'm not sure, but it might be Sydney.")).expect("hedge");
    assert_eq!(t.trigger, "hedging");
    assert!(t.reason.contains("i'm not sure"), "{}", t.reason);
    // Typographic apostrophes too.
    assert!(after_reply(&reply("I’m not sure it is Canberra.")).is_some());
    // In another language.
    assert!(after_reply(&reply("No estoy seguro, quizá Sídney.")).is_some());
    // Inside code or quoted output it is not the model hedging.
    let code =
        "The capital is Canberra.\n```python\n# I'm not sure this import is needed\nimport os\n```";
    assert_eq!(after_reply(&reply(code)), None);
    assert_eq!(
        after_reply(&reply("It is `i don't know` in the log.")),
        None
    );
    // A caveat deep in a long answer is not a failed answer.
    let long = format!(
        "{}\n\nThat said, I might be wrong about the 1911 date.",
        "Canberra was chosen as a compromise between Sydney and Melbourne. ".repeat(12)
    );
    assert_eq!(after_reply(&reply(&long)), None);
    // "can't" about the world, not about itself, is fine.
    assert_eq!(
        after_reply(&reply("You can't fly there directly; it is Canberra.")),
        None
    );
}

#[test]
fn a_terse_answer_escalates_only_a_substantive_ask_without_tools() {
    let substantive = |answer| LocalReply {
        substantive: true,
        ..reply(answer)
    };
    let t = after_reply(&substantive("Yes.")).expect("too short");
    assert_eq!(t.trigger, "too_short");
    assert_eq!(t.reason, "a 4-character answer to a substantive request");
    assert_eq!(after_reply(&reply("Hi!")), None);
    let mut after_tool = substantive("Done.");
    after_tool.used_tools = true;
    assert_eq!(after_reply(&after_tool), None);
    assert_eq!(
        after_reply(&substantive("It was settled in 1913, as Canberra.")),
        None
    );
}

#[test]
fn tools_that_ask_or_fail_twice_escalate() {
    let ok = |name| ToolOutcome {
        name,
        success: true,
        suggest_escalation: false,
    };
    let failed = |name| ToolOutcome {
        name,
        success: false,
        suggest_escalation: false,
    };
    let suggests = ToolOutcome {
        name: "edit_file",
        success: false,
        suggest_escalation: true,
    };
    assert_eq!(after_tools(&[ok("glob"), ok("read_file")]), None);
    // One failure the model may still recover from.
    assert_eq!(after_tools(&[failed("exec"), ok("read_file")]), None);
    let t = after_tools(&[failed("exec"), ok("read_file"), failed("exec")]).expect("again");
    assert_eq!(t.trigger, "tool_failed");
    assert_eq!(t.reason, "`exec` failed again after the model retried it");
    let t = after_tools(&[ok("read_file"), suggests]).expect("suggested");
    assert_eq!(t.trigger, "tool_suggested");
}

#[test]
fn confidence_is_the_geometric_mean_probability() {
    assert_eq!(confidence_from_logprobs(&[]), None);
    let c = confidence_from_logprobs(&[0.0, 0.0]).expect("some");
    assert!((c - 1.0).abs() < 1e-12);
    let half = 0.5f64.ln();
    let c = confidence_from_logprobs(&[half, half, f64::NEG_INFINITY]).expect("some");
    assert!((c - 0.5).abs() < 1e-12, "{c}");
}

/// A local turn with a remote model to go to.
const LOCAL: Standing = Standing {
    remote_available: true,
    on_remote: false,
};

fn weak() -> LocalReply<'static> {
    LocalReply {
        confidence: Some(0.1),
        ..reply("I'm not sure.")
    }
}

fn failed_twice() -> [ToolOutcome<'static>; 2] {
    let failed = ToolOutcome {
        name: "exec",
        success: false,
        suggest_escalation: false,
    };
    [failed.clone(), failed]
}

#[test]
fn the_user_asking_sends_the_turn_remote_unless_forced_local_or_none_is_there() {
    let asked = on_user_text("use claude for this", true, None).expect("asked");
    assert_eq!(asked.trigger, "user");
    // `/remote` forced it there already: still the user's own escalation.
    assert!(on_user_text("use claude", true, Some(Target::Remote)).is_some());
    assert_eq!(on_user_text("use claude", true, Some(Target::Local)), None);
    assert_eq!(on_user_text("use claude", false, None), None);
    assert_eq!(on_user_text("what is the capital?", true, None), None);
}

#[test]
fn a_weak_local_reply_escalates_only_a_local_turn_with_a_remote_model() {
    assert_eq!(
        on_local_reply(LOCAL, false, &weak()).map(|t| t.trigger),
        Some("low_confidence")
    );
    assert_eq!(on_local_reply(LOCAL, false, &reply("Canberra.")), None);
    let unavailable = Standing {
        remote_available: false,
        ..LOCAL
    };
    assert_eq!(on_local_reply(unavailable, false, &weak()), None);
    // Escalated once already (or routed remote): never again.
    let on_remote = Standing {
        on_remote: true,
        ..LOCAL
    };
    assert_eq!(on_local_reply(on_remote, false, &weak()), None);
}

#[test]
fn a_heartbeat_acknowledgement_is_not_a_too_short_answer() {
    let ack = LocalReply {
        substantive: true,
        ..reply("HEARTBEAT_OK")
    };
    assert_eq!(
        on_local_reply(LOCAL, false, &ack).map(|t| t.trigger),
        Some("too_short")
    );
    assert_eq!(on_local_reply(LOCAL, true, &ack), None);
}

#[test]
fn tool_outcomes_escalate_only_a_local_turn_with_a_remote_model() {
    let outcomes = failed_twice();
    assert_eq!(
        on_tool_outcomes(LOCAL, &outcomes).map(|t| t.trigger),
        Some("tool_failed")
    );
    assert_eq!(on_tool_outcomes(LOCAL, &outcomes[..1]), None);
    let unavailable = Standing {
        remote_available: false,
        ..LOCAL
    };
    assert_eq!(on_tool_outcomes(unavailable, &outcomes), None);
    let on_remote = Standing {
        on_remote: true,
        ..LOCAL
    };
    assert_eq!(on_tool_outcomes(on_remote, &outcomes), None);
}
