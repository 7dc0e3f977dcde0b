//! Where the request ends and pasted material begins, and what kind of
//! material it is (the structure cues: code, stack traces, diffs, logs,
//! tables, emails).

/// What was pasted after (or before) the request.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Material {
    pub chars: usize,
    /// Fenced code or code-looking lines.
    pub code: bool,
    /// A stack trace, compiler error or panic message.
    pub traceback: bool,
    pub diff: bool,
    /// Log lines with errors in them.
    pub error_log: bool,
    pub log: bool,
    pub table: bool,
    /// Anything else: an email, an article, notes.
    pub prose: bool,
}

impl Material {
    pub fn any(&self) -> bool {
        self.chars > 0
    }

    /// Text to read rather than code to work on.
    pub fn is_text(&self) -> bool {
        self.any() && !self.code && !self.traceback && !self.diff && !self.error_log
    }
}

pub(crate) struct Split<'a> {
    /// The user's own words, in order (usually one paragraph).
    pub request: Vec<&'a str>,
    pub material: Material,
}

enum Block<'a> {
    Paragraph(Vec<&'a str>),
    Fence(Vec<&'a str>),
}

pub(crate) fn split(message: &str) -> Split<'_> {
    let blocks = blocks(message);
    let mut material = Material::default();
    let mut request: Vec<&str> = Vec::new();
    let mut rest: Vec<&Block> = Vec::new();
    let mut first_material_lines: Vec<&str> = Vec::new();

    for (i, block) in blocks.iter().enumerate() {
        match block {
            Block::Paragraph(lines) if i == 0 => {
                let cut = lines
                    .iter()
                    .position(|l| line_kind(l).is_some())
                    .unwrap_or(lines.len());
                request.extend(&lines[..cut]);
                first_material_lines.extend(&lines[cut..]);
            }
            other => rest.push(other),
        }
    }

    if request.is_empty() {
        // The message opens with the paste: the request, if any, is a short
        // last paragraph ("...\n\nwhy does this fail?").
        if let Some(Block::Paragraph(lines)) = blocks.last()
            && blocks.len() > 1
            && lines.iter().all(|l| line_kind(l).is_none())
            && lines.iter().map(|l| l.len()).sum::<usize>() <= 400
        {
            request.extend(lines.iter());
            rest.pop();
        }
        for line in first_material_lines.drain(..) {
            note_line(&mut material, line);
        }
        for block in rest {
            note_block(&mut material, block);
        }
        return Split { request, material };
    }

    if first_material_lines.is_empty() && rest.is_empty() {
        return Split { request, material };
    }
    let structured = !first_material_lines.is_empty()
        || rest.iter().any(|b| match b {
            Block::Fence(_) => true,
            Block::Paragraph(lines) => lines.iter().any(|l| line_kind(l).is_some()),
        });
    if structured || points_at_material(&request) || opens_like_a_letter(&rest) {
        for line in first_material_lines {
            note_line(&mut material, line);
        }
        for block in rest {
            note_block(&mut material, block);
        }
    } else {
        // More paragraphs of the user's own words.
        for block in rest {
            if let Block::Paragraph(lines) = block {
                request.extend(lines.iter());
            }
        }
    }
    Split { request, material }
}

/// Paragraphs separated by blank lines, and fenced blocks.
fn blocks(message: &str) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut fence: Option<Vec<&str>> = None;
    for line in message.lines() {
        let fence_mark = line.trim_start().starts_with("```");
        if let Some(code) = fence.as_mut() {
            if fence_mark {
                blocks.push(Block::Fence(fence.take().unwrap_or_default()));
            } else {
                code.push(line);
            }
            continue;
        }
        if fence_mark {
            if !paragraph.is_empty() {
                blocks.push(Block::Paragraph(std::mem::take(&mut paragraph)));
            }
            fence = Some(Vec::new());
        } else if line.trim().is_empty() {
            if !paragraph.is_empty() {
                blocks.push(Block::Paragraph(std::mem::take(&mut paragraph)));
            }
        } else {
            paragraph.push(line);
        }
    }
    if let Some(code) = fence {
        blocks.push(Block::Fence(code));
    }
    if !paragraph.is_empty() {
        blocks.push(Block::Paragraph(paragraph));
    }
    blocks
}

fn note_block(material: &mut Material, block: &Block) {
    match block {
        Block::Fence(lines) => {
            material.code = true;
            material.chars += lines.iter().map(|l| l.len() + 1).sum::<usize>();
            // A trace pasted inside a fence is still a trace.
            if lines.iter().any(|l| line_kind(l) == Some(LineKind::Trace)) {
                material.traceback = true;
            }
        }
        Block::Paragraph(lines) => lines.iter().for_each(|l| note_line(material, l)),
    }
}

fn note_line(material: &mut Material, line: &str) {
    material.chars += line.len() + 1;
    match line_kind(line) {
        Some(LineKind::Trace) => material.traceback = true,
        Some(LineKind::Diff) => material.diff = true,
        Some(LineKind::Log { error }) => {
            material.log = true;
            material.error_log |= error;
        }
        Some(LineKind::Table) => material.table = true,
        Some(LineKind::Code) => material.code = true,
        Some(LineKind::Header) | None => material.prose = true,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    Trace,
    Diff,
    Log {
        error: bool,
    },
    Table,
    Code,
    /// An email header ("From: ...", "Subject: ...").
    Header,
}

/// What a pasted line looks like; `None` for ordinary prose.
fn line_kind(line: &str) -> Option<LineKind> {
    let trimmed = line.trim();
    let indented = line.starts_with([' ', '\t']);
    const TRACE_STARTS: &[&str] = &[
        "Traceback (most recent call last)",
        "File \"",
        "thread '",
        "error[",
        "error:",
        "warning:",
        "--> ",
        "= note",
        "note: run with",
        "Caused by:",
        "Exception in thread",
        "panic:",
        "Segmentation fault",
    ];
    if TRACE_STARTS.iter().any(|s| trimmed.starts_with(s))
        || trimmed.contains("panicked at")
        || (indented && trimmed.starts_with("at ") && trimmed.contains('('))
        || (indented && trimmed.starts_with('|'))
        || is_exception_line(trimmed)
    {
        return Some(LineKind::Trace);
    }
    if trimmed.starts_with("diff --git")
        || trimmed.starts_with("--- a/")
        || trimmed.starts_with("+++ b/")
        || trimmed.starts_with("@@ ")
    {
        return Some(LineKind::Diff);
    }
    if starts_with_timestamp(trimmed) {
        let error = ["ERROR", "FATAL", "CRITICAL", "Exception", "panic", "error:"]
            .iter()
            .any(|w| trimmed.contains(w));
        return Some(LineKind::Log { error });
    }
    // "jan,north,12000", "mar,1400": comma-separated values without spaces.
    let commas = trimmed.bytes().filter(|&b| b == b',').count();
    if !trimmed.contains(char::is_whitespace)
        && (commas >= 2 || (commas == 1 && trimmed.contains(|c: char| c.is_ascii_digit())))
    {
        return Some(LineKind::Table);
    }
    if is_header(trimmed) {
        return Some(LineKind::Header);
    }
    if is_code_line(trimmed) {
        return Some(LineKind::Code);
    }
    None
}

/// "ZeroDivisionError: division by zero", "java.lang.NullPointerException".
fn is_exception_line(trimmed: &str) -> bool {
    let first_word = trimmed.split([':', ' ']).next().unwrap_or("");
    let name = first_word.rsplit('.').next().unwrap_or("");
    name.len() > 5
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && (name.ends_with("Error") || name.ends_with("Exception"))
        && (trimmed.len() == first_word.len() || trimmed[first_word.len()..].starts_with(':'))
}

/// "2024-06-01 02:00:01 ...", "[2024-06-10 09:12:44] ...", "10:14:03 ...".
fn starts_with_timestamp(trimmed: &str) -> bool {
    let s = trimmed.trim_start_matches('[').as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        s.len() >= range.end && s[range].iter().all(u8::is_ascii_digit)
    };
    (digits(0..4) && s.get(4) == Some(&b'-') && digits(5..7) && s.get(7) == Some(&b'-'))
        || (digits(0..2) && s.get(2) == Some(&b':') && digits(3..5) && s.get(5) == Some(&b':'))
}

fn is_header(trimmed: &str) -> bool {
    const ASCII: &[&str] = &[
        "from:", "to:", "subject:", "date:", "cc:", "sent:", "de:", "para:", "asunto:", "objet:",
        "von:", "an:", "betreff:", "assunto:",
    ];
    const OTHER: &[&str] = &["à:", "от:", "кому:", "тема:"];
    let bytes = trimmed.as_bytes();
    if ASCII
        .iter()
        .any(|h| bytes.len() >= h.len() && bytes[..h.len()].eq_ignore_ascii_case(h.as_bytes()))
    {
        return true;
    }
    // Only lines opening with a non-ASCII letter can be the others.
    if bytes.first().is_some_and(|b| *b >= 0x80) {
        let lower: String = trimmed
            .chars()
            .take(6)
            .flat_map(char::to_lowercase)
            .collect();
        return OTHER.iter().any(|h| lower.starts_with(h));
    }
    false
}

fn is_code_line(trimmed: &str) -> bool {
    const STARTS: &[&str] = &[
        "def ",
        "fn ",
        "pub fn ",
        "func ",
        "function ",
        "class ",
        "import ",
        "#include",
        "let ",
        "const ",
        "var ",
        "return ",
        "if (",
        "for (",
        "while (",
        "SELECT ",
        "#!/",
        "package ",
        "use ",
        "impl ",
    ];
    trimmed.ends_with(['{', '}', ';'])
        || STARTS.iter().any(|s| trimmed.starts_with(s))
        || (trimmed.starts_with("from ") && trimmed.contains(" import "))
}

/// The request announces a paste: "summarize this:", "fasse diesen Artikel
/// zusammen", "logs below".
fn points_at_material(request: &[&str]) -> bool {
    const POINTERS: &[&str] = &[
        "this",
        "these",
        "those",
        "below",
        "following",
        "here",
        "attached",
        "above",
        "esto",
        "este",
        "esta",
        "estos",
        "estas",
        "aquí",
        "abajo",
        "siguiente",
        "ceci",
        "cela",
        "ce",
        "cet",
        "cette",
        "ces",
        "ça",
        "voici",
        "dessous",
        "suivant",
        "dies",
        "diese",
        "dieser",
        "diesen",
        "dieses",
        "das",
        "hier",
        "folgende",
        "folgenden",
        "unten",
        "isto",
        "isso",
        "estes",
        "abaixo",
        "seguinte",
        "это",
        "этот",
        "эту",
        "эти",
        "этого",
        "ниже",
        "вот",
    ];
    const UNSPACED: &[&str] = &["这", "以下", "下面", "これ", "この", "次の"];
    let Some(last) = request.last() else {
        return false;
    };
    if last.trim_end().ends_with([':', '：']) {
        return true;
    }
    request.iter().any(|line| {
        let lower = line.to_lowercase();
        lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| POINTERS.contains(&w))
            || UNSPACED.iter().any(|p| lower.contains(p))
    })
}

/// The text after the request starts like a letter or an email.
fn opens_like_a_letter(rest: &[&Block]) -> bool {
    const SALUTATIONS: &[&str] = &[
        "dear ",
        "hi ",
        "hi,",
        "hello",
        "hey ",
        "hola",
        "querid",
        "estimad",
        "bonjour",
        "cher ",
        "chère",
        "salut",
        "hallo",
        "liebe",
        "sehr geehrte",
        "olá",
        "oi ",
        "prezad",
        "caro ",
        "cara ",
        "здравствуйте",
        "привет",
        "уважаем",
        "good morning",
        "greetings",
    ];
    let Some(Block::Paragraph(lines)) = rest.first() else {
        return false;
    };
    let Some(first) = lines.first() else {
        return false;
    };
    let lower = first.trim().to_lowercase();
    SALUTATIONS.iter().any(|s| lower.starts_with(s)) || is_header(first.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_the_first_paragraph_when_a_paste_follows() {
        let s = split("summarize this email\n\nFrom: a@b.c\nSubject: plan\n\nHi,\nplease debug it");
        assert_eq!(s.request, vec!["summarize this email"]);
        assert!(s.material.is_text());
        let s = split("what's wrong?\nTraceback (most recent call last):\n  File \"a.py\"");
        assert_eq!(s.request, vec!["what's wrong?"]);
        assert!(s.material.traceback);
        let s = split("fix this:\n```rust\nfn main() {}\n```");
        assert_eq!(s.request, vec!["fix this:"]);
        assert!(s.material.code);
    }

    #[test]
    fn own_paragraphs_stay_in_the_request_and_a_trailing_question_is_found() {
        let s = split("I need a plan for the move.\n\nWe have two cats and a piano.");
        assert_eq!(s.request.len(), 2);
        assert!(!s.material.any());
        let s = split("```\nlet x = 1;\n```\n\nwhy does this fail?");
        assert_eq!(s.request, vec!["why does this fail?"]);
        assert!(s.material.code);
    }

    #[test]
    fn exception_names_are_found_behind_packages_and_any_letters() {
        assert!(is_exception_line("ZeroDivisionError: division by zero"));
        assert!(is_exception_line("java.lang.NullPointerException"));
        // The name's length is not an offset into the line.
        assert!(is_exception_line("aéééé.BigError: x"));
        assert!(!is_exception_line("Error: short"));
        assert!(!is_exception_line("my TypeError question"));
    }

    #[test]
    fn logs_diffs_and_tables_are_recognized() {
        let s = split("count the failures\n\n2024-06-02 02:30:01 ERROR backup failed");
        assert!(s.material.error_log);
        let s = split("review\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x");
        assert!(s.material.diff);
        let s = split("analyze:\n\nmonth,region,revenue\njan,north,1");
        assert!(s.material.table);
    }
}
