//! Where a streaming answer can be cut: the finished part renders once and
//! later blocks are appended to it, so a cut must be a place where
//! rendering the two sides apart gives the lines rendering them together
//! gives, joined by one blank row.

/// Bytes of a streaming text whose blocks are complete and can be rendered
/// apart from what follows: up to the last blank line outside a fenced code
/// block that is followed by a complete line starting a safe block (see
/// `safe_start`), and not preceded by an HTML block.
pub fn stable_prefix(text: &str) -> usize {
    let mut in_fence = false;
    let mut stable = 0;
    let mut offset = 0;
    let mut prev_blank = false;
    // End of a blank line that closed a block; a cut once the next
    // block's first line shows it is safe.
    let mut pending: Option<usize> = None;
    // The current block's first line, once seen.
    let mut block_html = false;
    let mut block_started = false;
    for line in text.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        let trimmed = line.trim();
        let blank = trimmed.is_empty() && complete;
        if !blank && !in_fence && (pending.is_some() || !block_started) {
            // The first line decides, so it must be whole.
            if !complete {
                break;
            }
            if let Some(cut) = pending.take()
                && !block_html
                && safe_start(line)
            {
                stable = cut;
            }
            block_started = true;
            block_html = line.starts_with('<');
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        offset += line.len();
        // A blank line after content, outside a fence, closes the block.
        if blank && !in_fence && !prev_blank && block_started {
            pending = Some(offset);
        }
        prev_blank = blank;
    }
    stable
}

/// Whether a block starting with `line` renders the same after a cut as
/// after the blocks before it. Not when it is indented (a list item's
/// continuation, indented code), a list item (it may continue a list
/// above: its numbering, and a blank line makes every item loose), or
/// HTML (the renderer sets no blank row around it).
fn safe_start(line: &str) -> bool {
    match line.as_bytes().first() {
        None | Some(b' ' | b'\t' | b'<') => false,
        Some(_) => !is_list_item(line),
    }
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_end_matches(['\n', '\r']);
    let marker_end = |rest: &str| rest.is_empty() || rest.starts_with([' ', '\t']);
    if let Some(rest) = t.strip_prefix(['-', '*', '+']) {
        return marker_end(rest);
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (1..=9).contains(&digits) && t[digits..].strip_prefix(['.', ')']).is_some_and(marker_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_blank_lines_outside_fences_once_the_next_line_is_whole() {
        assert_eq!(stable_prefix("para one\n\npara two\n"), 10);
        // The next block's first line is not whole yet.
        assert_eq!(stable_prefix("para one\n\npara two"), 0);
        assert_eq!(stable_prefix("no blank yet"), 0);
        let fenced = "intro\n\n```\ncode\n\nmore code\n";
        assert_eq!(stable_prefix(fenced), 7);
        let closed = "```\na\n\nb\n```\n\nafter\n";
        assert_eq!(stable_prefix(closed), closed.len() - 6);
    }

    #[test]
    fn never_cuts_before_list_items_indented_lines_or_html() {
        for text in [
            "1. a\n\n1. b\n",
            "- a\n- b\n\n- c\n",
            "- a\n\n  more of a\n",
            "para\n\n    indented code\n",
            "para\n\n<div>\n",
            "<!--\n\nstill a comment\n",
        ] {
            assert_eq!(stable_prefix(text), 0, "{text:?}");
        }
        assert!(is_list_item("12) x") && !is_list_item("2024 was") && !is_list_item("-x"));
    }
}
