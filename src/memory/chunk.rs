//! Markdown into search chunks of about [`CHUNK_TOKENS`] tokens with about
//! [`OVERLAP_TOKENS`] of overlap, each with the 1-based lines it spans.
//!
//! A chunk prefers to end where markdown does: a heading starts a new chunk
//! once the current one holds a fair amount, and a full chunk is cut at its
//! last paragraph start when that is past its middle. Overlap repeats the
//! last lines of the previous chunk, so a fact split by a cut is still whole
//! in one of the two. Fenced code is never cut at its blank lines.

/// Target size. Tokens are estimated as 4 characters (the embeddings
/// server counts its own; 400 stays under llama-server's default batch).
pub const CHUNK_TOKENS: usize = 400;
pub const OVERLAP_TOKENS: usize = 80;
const CHARS_PER_TOKEN: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    /// The lines `start_line..=end_line` joined with `\n` (a line longer
    /// than a chunk is split, so its pieces share a line number).
    pub text: String,
}

/// Chunks with the default sizes.
pub fn chunk_markdown(text: &str) -> Vec<Chunk> {
    chunk_with(
        text,
        CHUNK_TOKENS * CHARS_PER_TOKEN,
        OVERLAP_TOKENS * CHARS_PER_TOKEN,
    )
}

struct Line<'a> {
    number: usize,
    text: &'a str,
    /// A heading or the first line of a paragraph, outside code fences.
    starts_block: bool,
    heading: bool,
}

pub fn chunk_with(text: &str, max_chars: usize, overlap_chars: usize) -> Vec<Chunk> {
    let max_chars = max_chars.max(16);
    let lines = classify(text);
    let mut out = Vec::new();
    let mut current: Vec<&Line> = Vec::new();
    let mut size = 0;
    for line in &lines {
        let len = line.text.chars().count() + 1;
        if len > max_chars {
            flush(&mut out, &current);
            current.clear();
            size = 0;
            split_long_line(&mut out, line, max_chars);
            continue;
        }
        // A new section starts a new chunk unless the current one is small.
        if line.heading && size >= max_chars / 4 {
            flush(&mut out, &current);
            current.clear();
            size = 0;
        }
        if size + len > max_chars && !current.is_empty() {
            let cut = paragraph_cut(&current, max_chars / 2).unwrap_or(current.len());
            flush(&mut out, &current[..cut]);
            let carried = overlap_start(&current[..cut], overlap_chars);
            let mut next: Vec<&Line> = current[carried..cut].to_vec();
            next.extend_from_slice(&current[cut..]);
            current = next;
            size = chars(&current);
            // The overlap (already written) gives way to the line that did
            // not fit; the lines after the cut are not written yet and stay.
            let mut overlap = cut - carried;
            while size + len > max_chars && overlap > 0 {
                size -= current[0].text.chars().count() + 1;
                current.remove(0);
                overlap -= 1;
            }
            if size + len > max_chars && !current.is_empty() {
                // Those lines and the new one cannot share a chunk: the
                // lines become a chunk of their own.
                flush(&mut out, &current);
                let carried = overlap_start(&current, overlap_chars);
                current.drain(..carried);
                size = chars(&current);
                while size + len > max_chars && !current.is_empty() {
                    size -= current[0].text.chars().count() + 1;
                    current.remove(0);
                }
            }
        }
        current.push(line);
        size += len;
    }
    flush(&mut out, &current);
    out
}

fn chars(lines: &[&Line]) -> usize {
    lines.iter().map(|l| l.text.chars().count() + 1).sum()
}

fn classify(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut previous_blank = true;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        let heading = !in_fence && is_heading(trimmed);
        let blank = trimmed.is_empty();
        out.push(Line {
            number: i + 1,
            text: raw,
            starts_block: !blank && (heading || (!in_fence && previous_blank)),
            heading,
        });
        if fence {
            in_fence = !in_fence;
        }
        previous_blank = blank;
    }
    out
}

fn is_heading(trimmed: &str) -> bool {
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && trimmed[hashes..].starts_with([' ', '\t'])
}

/// The last block start that leaves at least `min_chars` before it.
fn paragraph_cut(lines: &[&Line], min_chars: usize) -> Option<usize> {
    let mut before = 0;
    let mut best = None;
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && line.starts_block && before >= min_chars {
            best = Some(i);
        }
        before += line.text.chars().count() + 1;
    }
    best
}

/// Where the overlap carried into the next chunk begins: the trailing lines
/// of `flushed` that fit in `overlap_chars` (none when the last line alone
/// is bigger).
fn overlap_start(flushed: &[&Line], overlap_chars: usize) -> usize {
    let mut size = 0;
    let mut start = flushed.len();
    while start > 0 {
        let len = flushed[start - 1].text.chars().count() + 1;
        if size + len > overlap_chars {
            break;
        }
        size += len;
        start -= 1;
    }
    // Never carry the whole chunk: that would repeat it forever.
    start.max(1).min(flushed.len())
}

/// One chunk from `lines`, without leading and trailing blank lines.
fn flush(out: &mut Vec<Chunk>, lines: &[&Line]) {
    let Some(first) = lines.iter().position(|l| !l.text.trim().is_empty()) else {
        return;
    };
    let last = lines
        .iter()
        .rposition(|l| !l.text.trim().is_empty())
        .unwrap_or(first);
    let kept = &lines[first..=last];
    let text: Vec<&str> = kept.iter().map(|l| l.text).collect();
    out.push(Chunk {
        start_line: kept[0].number,
        end_line: kept[kept.len() - 1].number,
        text: text.join("\n"),
    });
}

fn split_long_line(out: &mut Vec<Chunk>, line: &Line, max_chars: usize) {
    let chars: Vec<char> = line.text.chars().collect();
    for piece in chars.chunks(max_chars) {
        let text: String = piece.iter().collect();
        if !text.trim().is_empty() {
            out.push(Chunk {
                start_line: line.number,
                end_line: line.number,
                text,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk's text is exactly its lines of the source.
    fn assert_lines_match(source: &str, chunks: &[Chunk]) {
        let lines: Vec<&str> = source.lines().collect();
        for c in chunks {
            let expected = lines[c.start_line - 1..c.end_line].join("\n");
            assert_eq!(c.text, expected, "chunk {}-{}", c.start_line, c.end_line);
        }
    }

    /// Every non-blank line of the source is in some chunk.
    fn assert_every_line_indexed(source: &str, chunks: &[Chunk]) {
        for (i, line) in source.lines().enumerate() {
            if line.trim().is_empty() || line.chars().count() + 1 > 16_000 {
                continue;
            }
            let n = i + 1;
            assert!(
                chunks.iter().any(|c| c.start_line <= n && n <= c.end_line),
                "line {n} is in no chunk: {line:.40}"
            );
        }
    }

    #[test]
    fn lines_after_a_cut_are_never_dropped() {
        let text = format!(
            "{}\n{}\n\nUNIQUEFACT {}\n{}\n",
            "a".repeat(54),
            "b".repeat(54),
            "c".repeat(69),
            "d".repeat(150)
        );
        let chunks = chunk_with(&text, 200, 40);
        assert_lines_match(&text, &chunks);
        assert_every_line_indexed(&text, &chunks);
        assert!(chunks.iter().any(|c| c.text.contains("UNIQUEFACT")));

        // Paragraphs of mixed sizes, one line each, at the default sizes.
        let mut seed = 7u64;
        let paragraphs: Vec<String> = (0..200)
            .map(|i| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = 100 + (seed >> 33) as usize % 1300;
                format!("p{i} {}", "w".repeat(len))
            })
            .collect();
        let text = paragraphs.join("\n\n");
        let chunks = chunk_markdown(&text);
        assert_lines_match(&text, &chunks);
        assert_every_line_indexed(&text, &chunks);
    }

    #[test]
    fn small_file_is_one_chunk_without_blank_edges() {
        let text = "\n\n# Notes\n\nThe cat is called Miso.\n\n";
        let chunks = chunk_markdown(text);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].start_line, 3);
        assert_eq!(chunks[0].end_line, 5);
        assert_eq!(chunks[0].text, "# Notes\n\nThe cat is called Miso.");
    }

    #[test]
    fn headings_start_chunks_once_the_current_one_has_substance() {
        let body = "word ".repeat(30);
        let text = format!("# A\n{body}\n# B\n{body}\n# C\nshort\n");
        let chunks = chunk_with(&text, 200, 40);
        assert_lines_match(&text, &chunks);
        let starts: Vec<usize> = chunks.iter().map(|c| c.start_line).collect();
        assert_eq!(starts, [1, 3, 5]);
        assert_eq!(chunks[2].text, "# C\nshort");
    }

    #[test]
    fn long_text_is_cut_with_overlap_and_exact_line_numbers() {
        let text: String = (1..=200)
            .map(|i| format!("line {i} says something about topic {}\n", i % 7))
            .collect();
        let chunks = chunk_with(&text, 400, 80);
        assert!(chunks.len() > 10);
        assert_lines_match(&text, &chunks);
        for pair in chunks.windows(2) {
            // Consecutive chunks overlap by a line or two, never more.
            assert!(pair[1].start_line <= pair[0].end_line, "{pair:?}");
            assert!(pair[0].end_line - pair[1].start_line < 3, "{pair:?}");
        }
        for c in &chunks {
            assert!(c.text.chars().count() <= 400);
        }
        assert_eq!(chunks.last().unwrap().end_line, 200);
    }

    #[test]
    fn a_full_chunk_ends_at_a_paragraph_when_it_can() {
        let para = |n: usize| {
            (0..4)
                .map(|i| format!("p{n} l{i} text text\n"))
                .collect::<String>()
        };
        let text = format!("{}\n{}\n{}\n{}", para(1), para(2), para(3), para(4));
        let chunks = chunk_with(&text, 200, 20);
        assert_lines_match(&text, &chunks);
        // The first cut falls right before a paragraph start.
        let next_line = chunks[0].end_line + 1;
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[next_line - 1].is_empty(), "{chunks:?}");
    }

    #[test]
    fn code_fences_keep_their_blank_lines_inside() {
        let text = "```\n# not a heading\n\nstill code\n```\n";
        let lines = classify(text);
        assert!(!lines[1].heading);
        assert!(!lines[3].starts_block);
    }

    #[test]
    fn a_line_longer_than_a_chunk_is_split_on_its_line_number() {
        let text = format!("intro\n{}\nafter\n", "é".repeat(450));
        let chunks = chunk_with(&text, 200, 40);
        let on_two: Vec<&Chunk> = chunks.iter().filter(|c| c.start_line == 2).collect();
        assert_eq!(on_two.len(), 3);
        assert!(on_two.iter().all(|c| c.end_line == 2));
        assert_eq!(chunks.first().unwrap().text, "intro");
        assert_eq!(chunks.last().unwrap().text, "after");
    }

    #[test]
    fn empty_and_blank_files_have_no_chunks() {
        assert!(chunk_markdown("").is_empty());
        assert!(chunk_markdown("\n \n\t\n").is_empty());
    }
}
