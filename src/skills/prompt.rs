//! The `<available_skills>` block of the system prompt: one line per skill
//! (name, description, location), in name order, so it is byte-identical
//! between requests while the skills stay the same (llama.cpp's prefix
//! cache). It fits a character budget: descriptions are shortened first,
//! evenly; only when names and locations alone do not fit are skills left
//! out, with a line saying how many and where to find them.

use super::skill::Skill;

const OPEN: &str = "<available_skills>\n\
Skills are instructions for particular tasks. When one fits the request, read its SKILL.md \
with read_file first and follow it.\n";
const CLOSE: &str = "</available_skills>";
const ELLIPSIS: char = '…';

/// The block for the skills the model may use (`""` when none). `budget`
/// counts characters of the whole block.
pub fn block(skills: &[&Skill], budget: usize) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let frame = count(OPEN) + count(CLOSE);
    let lines: Vec<(String, &str, String)> = skills
        .iter()
        .map(|s| {
            (
                format!("- {}", s.name),
                s.description.as_str(),
                format!(" [{}]\n", s.location),
            )
        })
        .collect();
    let fixed = |lines: &[(String, &str, String)]| {
        frame
            + lines
                .iter()
                .map(|(h, _, t)| count(h) + count(t))
                .sum::<usize>()
    };
    // Each description costs ": " plus its text when shown.
    let described = |lines: &[(String, &str, String)], cap: usize| {
        lines
            .iter()
            .map(|(_, d, _)| shortened_len(d, cap))
            .map(|n| if n == 0 { 0 } else { n + 2 })
            .sum::<usize>()
    };
    let mut kept = lines.len();
    let mut more_line = String::new();
    while kept > 0 && fixed(&lines[..kept]) + count(&more_line) > budget {
        kept -= 1;
        more_line = format!(
            "(+{} more skills: list_skills shows them)\n",
            lines.len() - kept
        );
    }
    let lines = &lines[..kept];
    let room = budget.saturating_sub(fixed(lines) + count(&more_line));
    let longest = lines.iter().map(|(_, d, _)| count(d)).max().unwrap_or(0);
    // The largest per-description cap that fits: fitting only gets easier
    // as the cap falls, so a binary search finds it.
    let cap = if described(lines, longest) <= room {
        longest
    } else {
        let (mut lo, mut hi) = (0, longest);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if described(lines, mid) <= room {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    let mut out = String::from(OPEN);
    for (head, description, tail) in lines {
        out.push_str(head);
        let short = shorten(description, cap);
        if !short.is_empty() {
            out.push_str(": ");
            out.push_str(&short);
        }
        out.push_str(tail);
    }
    out.push_str(&more_line);
    out.push_str(CLOSE);
    out
}

fn count(s: &str) -> usize {
    s.chars().count()
}

/// `text` in at most `cap` characters, the ellipsis included.
fn shorten(text: &str, cap: usize) -> String {
    if count(text) <= cap {
        return text.to_string();
    }
    if cap < 2 {
        return String::new();
    }
    let mut cut: String = text.chars().take(cap - 1).collect();
    let trimmed = cut.trim_end().len();
    cut.truncate(trimmed);
    cut.push(ELLIPSIS);
    cut
}

fn shortened_len(text: &str, cap: usize) -> usize {
    count(&shorten(text, cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::gating::Requirements;
    use std::path::PathBuf;

    fn skill(name: &str, description: &str) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            base_dir: PathBuf::from(format!("/s/{name}")),
            location: format!("skills/{name}/SKILL.md"),
            user_invocable: true,
            model_invocable: true,
            homepage: None,
            emoji: None,
            triggers: Vec::new(),
            complexity: Default::default(),
            requirements: Requirements::default(),
            unavailable: None,
            warning: None,
        }
    }

    #[test]
    fn fits_whole_when_it_can() {
        let a = skill("github", "Issues and PRs with gh.");
        let out = block(&[&a], 10_000);
        assert_eq!(
            out,
            format!("{OPEN}- github: Issues and PRs with gh. [skills/github/SKILL.md]\n{CLOSE}")
        );
        assert_eq!(block(&[], 10_000), "");
    }

    #[test]
    fn descriptions_shorten_before_skills_drop() {
        let long = "word ".repeat(60);
        let skills: Vec<Skill> = (0..6).map(|i| skill(&format!("s{i}"), &long)).collect();
        let refs: Vec<&Skill> = skills.iter().collect();
        let full = block(&refs, 100_000);
        let budget = full.chars().count() / 2;
        let out = block(&refs, budget);
        assert!(out.chars().count() <= budget, "{}", out.chars().count());
        for i in 0..6 {
            assert!(out.contains(&format!("- s{i}: word")), "{out}");
        }
        assert!(out.contains('…'));
        assert!(!out.contains("more skills"));

        // Too small for even the names: skills drop, counted.
        let tight = count(OPEN) + count(CLOSE) + 120;
        let out = block(&refs, tight);
        assert!(out.chars().count() <= tight, "{out}");
        assert!(out.contains("more skills: list_skills shows them"), "{out}");
        assert!(out.contains("- s0"));
    }

    #[test]
    fn unicode_is_cut_on_characters() {
        assert_eq!(shorten("héllo wörld", 7), "héllo…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 1), "");
    }
}
