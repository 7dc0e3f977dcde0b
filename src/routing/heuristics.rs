//! The classifier: scores every category from the cues in the request and
//! the structure of the pasted material, the way a careful user reads a
//! message.
//!
//! - A verb means little without its object: "write" + "function" is code,
//!   "write" + "cover letter" long-form, "write" + "haiku" chat, "build me a
//!   reminder" a reminder. Objects are looked for after the verb (a few
//!   words before it for verb-final languages).
//! - Some cues take the rest of their sentence as content ("remind me to
//!   write the blog post", "save this snippet to a file", "make a note: the
//!   analysis meeting…"): what follows them, and the paste, counts little.
//! - Pasted material counts by its kind, never by its words: a stack trace
//!   or a diff points at code work, an email at reading.
//! - Greetings and thanks weigh by how short the message is, so "hey,
//!   quick one: write a SQL query…" is code.

use super::Category;
use super::frames::{bind, lone_object, lone_verb};
use super::lexicon::{Cue, LEXICON, Lexicon, Object};
use super::matcher::Hit;
use super::text::Prepared;
use crate::protocol::Target;

/// What the heuristics make of a request.
#[derive(Clone, Debug)]
pub(crate) struct Verdict {
    pub category: Category,
    /// The cue that weighed most for the category, for the reason.
    pub evidence: String,
    pub confidence: f64,
    /// The local and remote readings are close, or nothing is clear.
    pub unsure: bool,
}

/// Below this the best category is no reading at all.
const MIN_SCORE: f32 = 1.0;
/// A reading this strong, this far ahead of the other side, is sure.
const SURE_SCORE: f32 = 2.0;
const SURE_MARGIN: f32 = 1.0;
/// What a cue after a lead, in the lead's sentence, still counts for.
const CONTENT_WEIGHT: f32 = 0.25;
/// Objects no verb acts on are what the message talks about, not what it
/// asks for: a long description mentioning files ten times is not ten
/// times a file task.
const LONE_OBJECTS_CAP: f32 = 2.0;

#[derive(Clone, Copy)]
enum Evidence {
    None,
    Entry(u16),
    Frame(u16, u16),
    Note(&'static str),
}

struct Scores {
    /// Neither a request nor a paste.
    empty_message: bool,
    value: [f32; Category::COUNT],
    strongest: [f32; Category::COUNT],
    evidence: [Evidence; Category::COUNT],
}

impl Scores {
    fn new(empty_message: bool) -> Self {
        Scores {
            empty_message,
            value: [0.0; Category::COUNT],
            strongest: [0.0; Category::COUNT],
            evidence: [Evidence::None; Category::COUNT],
        }
    }

    fn add(&mut self, category: Category, weight: f32, evidence: Evidence) {
        let i = category.index();
        self.value[i] += weight;
        if weight > self.strongest[i] {
            self.strongest[i] = weight;
            self.evidence[i] = evidence;
        }
    }

    fn get(&self, category: Category) -> f32 {
        self.value[category.index()]
    }

    /// The best category among `among`, ties going to the earlier in `Category::ALL`.
    fn best(&self, among: impl Fn(Category) -> bool) -> (Category, f32) {
        let mut best = (Category::Unknown, 0.0);
        for category in Category::ALL.into_iter().filter(|c| among(*c)) {
            if self.get(category) > best.1 {
                best = (category, self.get(category));
            }
        }
        best
    }
}

const CODE_FAMILY: [Category; 3] = [Category::Code, Category::CodeReview, Category::Debugging];

pub(crate) fn classify(prepared: &Prepared) -> Verdict {
    let lexicon = &*LEXICON;
    let mut hits = Vec::with_capacity(32);
    lexicon.scan(&prepared.norm, &mut hits);
    let found = Found::new(lexicon, hits, prepared);
    let mut scores = Scores::new(prepared.request_chars == 0 && !prepared.material.any());
    let summary = score_cues(&mut scores, lexicon, &found, prepared);
    score_material(&mut scores, prepared, found.has_lead());
    score_shape(&mut scores, prepared, &found, &summary);
    verdict(lexicon, &scores)
}

/// The cues found in a request, and where its leads are.
struct Found {
    hits: Vec<Hit>,
    cues: Vec<Cue>,
    /// The first lead of each sentence: (sentence, word).
    leads: Vec<(u16, u16)>,
}

impl Found {
    fn new(lexicon: &Lexicon, hits: Vec<Hit>, prepared: &Prepared) -> Found {
        let cues: Vec<Cue> = hits.iter().map(|h| lexicon.cue(h)).collect();
        let mut found = Found {
            hits,
            cues,
            leads: Vec::new(),
        };
        for i in 0..found.hits.len() {
            let sentence = found.hits[i].sentence;
            if found.is_lead(i, prepared) && !found.leads.iter().any(|(s, _)| *s == sentence) {
                found.leads.push((sentence, found.hits[i].word));
            }
        }
        found
    }

    fn is_lead(&self, i: usize, prepared: &Prepared) -> bool {
        match self.cues[i] {
            Cue::Lead(..) => true,
            Cue::LeadAtStart(..) => self.hits[i].in_sentence <= 3,
            Cue::LeadWithMaterial(..) => prepared.material.any(),
            _ => false,
        }
    }

    fn has_lead(&self) -> bool {
        !self.leads.is_empty()
    }

    /// What a cue counts for: little when it is a lead's content.
    fn weight_at(&self, hit: &Hit) -> f32 {
        let after_lead = self
            .leads
            .iter()
            .any(|(s, w)| *s == hit.sentence && hit.word > *w);
        if after_lead { CONTENT_WEIGHT } else { 1.0 }
    }
}

/// What the cues left for the later steps.
#[derive(Default)]
struct CueSummary {
    conditional: bool,
}

/// Verbs with their objects, intents and leads, lone objects, greetings,
/// and the supporting cues (technical terms, depth, languages).
fn score_cues(
    scores: &mut Scores,
    lexicon: &Lexicon,
    found: &Found,
    prepared: &Prepared,
) -> CueSummary {
    let verbs = score_verbs(scores, lexicon, found);
    let support = score_word_cues(scores, found, prepared, &verbs.bound);
    if verbs.code_frame && support.lang {
        scores.add(Category::Code, 1.0, Evidence::Note("a language named"));
    }
    let code_context = f32::min(support.tech, 1.5);
    for category in CODE_FAMILY {
        if scores.get(category) > 0.0 {
            scores.add(category, code_context, Evidence::Note("technical terms"));
        }
    }
    if support.depth > 0.0 {
        let (remote, score) = scores.best(|c| c.side() == Some(Target::Remote));
        if score > 0.0 {
            scores.add(
                remote,
                f32::min(support.depth, 2.0),
                Evidence::Note("asks for depth"),
            );
        }
    }
    CueSummary {
        conditional: support.conditional,
    }
}

/// What the verbs bound: which hits are a verb's object (not counted
/// again alone) and whether any verb framed code.
struct VerbFrames {
    bound: Vec<bool>,
    code_frame: bool,
}

/// Verbs first, so that the objects they take are not counted twice.
fn score_verbs(scores: &mut Scores, lexicon: &Lexicon, found: &Found) -> VerbFrames {
    let (hits, cues) = (&found.hits, &found.cues);
    let mut frames = VerbFrames {
        bound: vec![false; hits.len()],
        code_frame: false,
    };
    for (i, hit) in hits.iter().enumerate() {
        let Cue::Verb(verb) = cues[i] else { continue };
        let weight = found.weight_at(hit);
        match bind(lexicon, hits, cues, i, verb) {
            Some((j, category, frame_weight)) => {
                frames.bound[j] = true;
                frames.code_frame |= category == Category::Code;
                let evidence = Evidence::Frame(hit.entry, hits[j].entry);
                scores.add(category, frame_weight * weight, evidence);
            }
            None => {
                if let Some((category, lone)) = lone_verb(verb) {
                    scores.add(category, lone * weight, Evidence::Entry(hit.entry));
                }
            }
        }
    }
    frames
}

/// What the cues other than verbs leave for the supporting scores.
#[derive(Default)]
struct Support {
    /// Technical terms and inline code.
    tech: f32,
    /// Asks for depth (or a large word count).
    depth: f32,
    /// A programming language is named.
    lang: bool,
    conditional: bool,
}

/// Intents and leads, lone objects (capped per category), greetings and
/// thanks; technical terms, depth and languages are tallied for later.
fn score_word_cues(
    scores: &mut Scores,
    found: &Found,
    prepared: &Prepared,
    bound: &[bool],
) -> Support {
    let short = |long: f32, medium: f32, brief: f32| match prepared.request_chars {
        0..=40 => brief,
        41..=80 => medium,
        _ => long,
    };
    let mut lone_objects = [0.0_f32; Category::COUNT];
    let mut support = Support::default();
    for (i, hit) in found.hits.iter().enumerate() {
        let weight = found.weight_at(hit);
        let evidence = Evidence::Entry(hit.entry);
        match found.cues[i] {
            Cue::Intent(category, w) => scores.add(category, w * weight, evidence),
            Cue::Lead(category, w)
            | Cue::LeadAtStart(category, w)
            | Cue::LeadWithMaterial(category, w) => {
                let w = if found.is_lead(i, prepared) {
                    w
                } else {
                    w.min(1.5)
                };
                scores.add(category, w * weight, evidence);
            }
            Cue::Verb(_) => {}
            Cue::Object(object) => {
                // Naming languages is not asking for code: "is Python
                // faster than Ruby?" counts one language, not two.
                let repeated_lang = object == Object::Lang && support.lang;
                support.lang |= object == Object::Lang;
                if !bound[i]
                    && !repeated_lang
                    && let Some((category, lone)) = lone_object(object)
                {
                    let so_far = &mut lone_objects[category.index()];
                    let counted = f32::min(lone * weight, LONE_OBJECTS_CAP - *so_far);
                    if counted > 0.0 {
                        *so_far += counted;
                        scores.add(category, counted, evidence);
                    }
                }
                if object == Object::InlineCode {
                    support.tech += 0.3 * weight;
                }
            }
            Cue::Greeting => {
                scores.add(Category::Greeting, short(0.5, 1.5, 2.5) * weight, evidence)
            }
            Cue::Thanks => scores.add(Category::Chat, short(0.5, 1.5, 2.0) * weight, evidence),
            Cue::Tech => support.tech += 0.3 * weight,
            Cue::Depth => support.depth += weight,
            Cue::Conditional => support.conditional = true,
            Cue::WordsUnit => {
                if follows_a_large_number(&prepared.norm, hit) {
                    support.depth += weight;
                }
            }
            Cue::Neutral => {}
        }
    }
    support
}

/// The paste, by kind, never by its words. A lead ("save this",
/// "summarize this") makes it content.
fn score_material(scores: &mut Scores, prepared: &Prepared, has_lead: bool) {
    let material = &prepared.material;
    let paste = if has_lead { CONTENT_WEIGHT } else { 1.0 };
    if material.code {
        for category in CODE_FAMILY {
            scores.add(category, 3.0 * paste, Evidence::Note("pasted code"));
        }
    }
    if material.traceback {
        scores.add(
            Category::Debugging,
            3.5 * paste,
            Evidence::Note("stack trace"),
        );
    }
    if material.diff {
        scores.add(Category::CodeReview, 3.5 * paste, Evidence::Note("diff"));
    }
    if material.error_log {
        scores.add(
            Category::Debugging,
            2.0 * paste,
            Evidence::Note("errors in a log"),
        );
    }
    if material.table {
        // Numbers to look at: reading them is local, interpreting them is not.
        scores.add(Category::Summarize, 0.5, Evidence::Note("pasted data"));
        scores.add(Category::Analysis, 0.5, Evidence::Note("pasted data"));
    } else if material.is_text() {
        scores.add(Category::Summarize, 1.5, Evidence::Note("pasted text"));
        if prepared.question {
            let evidence = Evidence::Note("question about pasted text");
            scores.add(Category::Summarize, 0.5, evidence);
        }
    }
}

/// The request's shape: a short question, a word problem, a long request,
/// a short message with nothing recognizable in it.
fn score_shape(scores: &mut Scores, prepared: &Prepared, found: &Found, summary: &CueSummary) {
    let material = prepared.material.any();
    // A question with several numbers in it is a word problem, not a quick fact.
    let word_problem = prepared.numbers >= 3
        && prepared.request_chars >= 80
        && (prepared.question || summary.conditional);
    // "how many ounces in a pound" is a question without its question mark.
    let asks = prepared.question
        || found
            .hits
            .first()
            .zip(found.cues.first())
            .is_some_and(|(hit, cue)| {
                hit.word == 1 && matches!(cue, Cue::Intent(Category::QuickFact, _))
            });
    if !material && !found.has_lead() && asks && !word_problem {
        let bonus = match prepared.request_chars {
            0..=100 => 1.5,
            101..=160 => 0.8,
            _ => 0.0,
        };
        if bonus > 0.0 {
            scores.add(Category::QuickFact, bonus, Evidence::Note("short question"));
        }
    }
    if word_problem {
        scores.add(
            Category::Reasoning,
            2.5,
            Evidence::Note("a problem with numbers"),
        );
    }
    if prepared.request_chars > 400 && !found.has_lead() {
        scores.add(Category::Analysis, 1.0, Evidence::Note("long request"));
    }
    let (_, best_score) = scores.best(|_| true);
    if best_score < MIN_SCORE && prepared.request_chars <= 60 && !material {
        scores.add(Category::Chat, 1.0, Evidence::Note("short message"));
    }
}

fn verdict(lexicon: &Lexicon, scores: &Scores) -> Verdict {
    let (best, best_score) = scores.best(|_| true);
    if scores.empty_message {
        // Nothing typed: nothing for the local model to classify either.
        return Verdict {
            category: Category::Unknown,
            evidence: String::new(),
            confidence: 0.3,
            unsure: false,
        };
    }
    let (_, local) = scores.best(|c| c.side() == Some(Target::Local));
    let (_, remote) = scores.best(|c| c.side() == Some(Target::Remote));
    if best_score < MIN_SCORE {
        return Verdict {
            category: Category::Unknown,
            evidence: String::new(),
            confidence: 0.3,
            unsure: true,
        };
    }
    let margin = (local - remote).abs();
    let strength = f64::from((best_score / 3.0).min(1.0));
    let confidence = 0.5 + 0.45 * (1.0 - (-f64::from(margin)).exp()) * (0.5 + 0.5 * strength);
    Verdict {
        category: best,
        evidence: describe(lexicon, scores.evidence[best.index()]),
        confidence: (confidence * 100.0).round() / 100.0,
        unsure: margin < SURE_MARGIN || best_score < SURE_SCORE,
    }
}

/// Words for the routing reason: the pattern as written, "write … function"
/// for a verb and its object.
fn describe(lexicon: &Lexicon, evidence: Evidence) -> String {
    let word = |entry: u16| match lexicon.display(entry) {
        "#" => "a path",
        "\"" => "quoted text",
        "`" => "inline code",
        other => other,
    };
    match evidence {
        Evidence::None => String::new(),
        Evidence::Entry(entry) => word(entry).to_string(),
        Evidence::Frame(verb, object) => format!("{} … {}", word(verb), word(object)),
        Evidence::Note(note) => note.to_string(),
    }
}

/// "1000 words", "a 1200-word essay": a number of at least 200 just before.
fn follows_a_large_number(norm: &str, hit: &Hit) -> bool {
    norm[..hit.start as usize]
        .trim_end()
        .rsplit(' ')
        .next()
        .and_then(|w| w.parse::<u32>().ok())
        .is_some_and(|n| n >= 200)
}
