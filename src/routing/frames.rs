//! Verbs and their objects: what "write", "fix", "save", "review"… ask
//! for depends on what they act on ("write a function" is code, "write a
//! cover letter" long-form, "write this to notes.md" a file task), and what
//! each counts for alone.

use super::Category;
use super::lexicon::{Cue, Lexicon, Object, Verb};
use super::matcher::Hit;
use super::text::is_cjk;

/// The object `verb` acts on: the first one after it that makes sense for
/// it, in its sentence, within a few words, unless a task phrase comes
/// first ("create a study plan for learning Rust" is a plan, not Rust); else
/// one just before it (or anywhere close in scripts without spaces, which
/// put the verb last).
pub(super) fn bind(
    lexicon: &Lexicon,
    hits: &[Hit],
    cues: &[Cue],
    i: usize,
    verb: Verb,
) -> Option<(usize, Category, f32)> {
    let unspaced = lexicon.display(hits[i].entry).starts_with(is_cjk);
    let (ahead, behind) = if unspaced { (12, 12) } else { (8, 3) };
    let frame_at = |j: usize| match cues[j] {
        Cue::Object(object) => frame(verb, object).map(|(c, w)| (j, c, w)),
        _ => None,
    };
    let verb_hit = &hits[i];
    let task_phrase = |j: usize| match cues[j] {
        Cue::Lead(..) | Cue::LeadWithMaterial(..) => true,
        Cue::Intent(_, weight) => weight >= 2.0,
        _ => false,
    };
    let forward = (i + 1..hits.len())
        .take_while(|&j| {
            hits[j].sentence == verb_hit.sentence
                && hits[j].word - verb_hit.word <= ahead
                && !task_phrase(j)
        })
        .find_map(frame_at);
    forward.or_else(|| {
        (0..i)
            .rev()
            .take_while(|&j| {
                hits[j].sentence == verb_hit.sentence && verb_hit.word - hits[j].word <= behind
            })
            .find_map(frame_at)
    })
}

/// What a verb and its object ask for.
fn frame(verb: Verb, object: Object) -> Option<(Category, f32)> {
    use Category as C;
    use Object as O;
    use Verb as V;
    Some(match (verb, object) {
        (V::Make | V::Rewrite | V::Add, O::Code | O::Test | O::Lang) => (C::Code, 3.0),
        (V::Translate, O::Lang) => (C::Code, 3.0),
        (V::Make, O::Doc) => (C::LongForm, 3.0),
        (V::Make, O::Email) => (C::LongForm, 2.0),
        (V::Rewrite, O::Doc | O::Email) => (C::LongForm, 2.5),
        (V::Make, O::ShortText) => (C::Chat, 2.5),
        (V::Make | V::Rewrite, O::File | O::Path) => (C::FileTask, 2.5),
        (V::Make, O::Plan) => (C::Planning, 3.0),
        (V::Make | V::Add, O::Reminder) => (C::Reminder, 3.0),
        (V::Fix, O::Bug) => (C::Debugging, 3.0),
        (V::Fix, O::Code | O::Test | O::Lang) => (C::Debugging, 2.5),
        (V::Fix, O::EditTarget) => (C::SimpleEdit, 3.0),
        (V::Fix, O::Path) => (C::SimpleEdit, 1.5),
        (V::Review, O::Code | O::Test | O::Lang | O::InlineCode) => (C::CodeReview, 3.0),
        (V::Review, O::Doc | O::Email | O::ShortText) => (C::Analysis, 2.0),
        (V::Review | V::Explain, O::Bug) => (C::Debugging, 1.2),
        (V::Explain, O::Code | O::Lang) => (C::CodeReview, 2.5),
        (V::Show | V::Save | V::FileOp, O::File | O::Path) => (C::FileTask, 3.0),
        (V::FileOp, O::EditTarget | O::Code) => (C::SimpleEdit, 3.0),
        (V::Add, O::Quoted | O::Path) => (C::SimpleEdit, 2.5),
        (V::Change, O::Path | O::EditTarget | O::Quoted) => (C::SimpleEdit, 3.0),
        _ => return None,
    })
}

pub(super) fn lone_verb(verb: Verb) -> Option<(Category, f32)> {
    Some(match verb {
        Verb::Rewrite => (Category::Code, 1.5),
        Verb::Fix => (Category::Debugging, 1.0),
        Verb::Review => (Category::CodeReview, 1.2),
        Verb::Explain => (Category::Reasoning, 0.5),
        Verb::Show => (Category::FileTask, 0.5),
        Verb::Save | Verb::FileOp => (Category::FileTask, 1.0),
        Verb::Change => (Category::SimpleEdit, 0.8),
        Verb::Translate => (Category::Translate, 3.0),
        Verb::Make | Verb::Add => return None,
    })
}

pub(super) fn lone_object(object: Object) -> Option<(Category, f32)> {
    Some(match object {
        Object::Code => (Category::Code, 1.0),
        Object::Lang => (Category::Code, 0.8),
        Object::Test => (Category::Code, 0.5),
        Object::Doc => (Category::LongForm, 1.0),
        Object::Email => (Category::LongForm, 0.3),
        Object::ShortText => (Category::Chat, 0.5),
        Object::File | Object::Path => (Category::FileTask, 1.0),
        Object::Plan => (Category::Planning, 1.2),
        Object::Reminder => (Category::Reminder, 1.5),
        Object::Bug => (Category::Debugging, 1.0),
        Object::EditTarget => (Category::SimpleEdit, 0.5),
        Object::Quoted | Object::InlineCode => return None,
    })
}
