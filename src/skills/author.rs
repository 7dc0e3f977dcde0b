//! Skills the agent writes for itself (`create_skill`): a slug name and a
//! SKILL.md with frontmatter OpenClaw and egirl both read back exactly.

use std::path::PathBuf;

use super::frontmatter;

/// Longest name accepted (OpenClaw's slash commands stop at 32; names in
/// the wild go a little longer).
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;

/// Lowercase letters, digits and single hyphens between them: the folder
/// name, the slash command and what the model types all agree.
pub fn check_slug(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a valid skill name: use 1 to {MAX_NAME} lowercase letters, digits and single hyphens (e.g. `check-weather`)"
        ))
    }
}

/// The SKILL.md text. The description is one line, written as a JSON
/// string, which is a valid YAML double-quoted scalar: any quote, colon or
/// backslash in it survives.
pub fn render(name: &str, description: &str, instructions: &str) -> Result<String, String> {
    check_slug(name)?;
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if description.is_empty() {
        return Err("`description` is empty: say what the skill does and when to use it".into());
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "`description` is over {MAX_DESCRIPTION} characters; keep it to a sentence or two and put details in the instructions"
        ));
    }
    let quoted = serde_json::to_string(&description).map_err(|e| e.to_string())?;
    let body = instructions.trim();
    // Quoted: a slug such as `null`, `true` or `2048` is a string here.
    let quoted_name = serde_json::to_string(name).map_err(|e| e.to_string())?;
    let text = format!("---\nname: {quoted_name}\ndescription: {quoted}\n---\n\n{body}\n");
    // What is written must read back as written.
    let parsed = frontmatter::parse(&text).map_err(|e| e.message)?;
    let same = parsed.lenient.is_none()
        && parsed.fields["name"] == name
        && parsed.fields["description"] == description.as_str();
    if !same {
        return Err("the description cannot be written as valid frontmatter".into());
    }
    Ok(text)
}

/// `<skills dir>/<name>/SKILL.md`.
pub fn skill_file(skills_dir: &std::path::Path, name: &str) -> PathBuf {
    skills_dir.join(name).join("SKILL.md")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        for ok in ["weather", "check-weather-2", "a", "x1"] {
            assert!(check_slug(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(MAX_NAME + 1);
        for bad in [
            "",
            "Weather",
            "check_weather",
            "-x",
            "x-",
            "a--b",
            "a b",
            "../x",
            "é",
            &long,
        ] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn awkward_descriptions_round_trip() {
        let d = "Say \"hi\": it's C:\\path # not a comment — ünïcode";
        let text = render("greet", d, "  Do it.\n").unwrap();
        let parsed = frontmatter::parse(&text).unwrap();
        assert_eq!(parsed.fields["description"], d);
        assert_eq!(parsed.body, "\nDo it.\n");
        assert!(render("greet", " \n ", "x").is_err());
        assert!(render("Greet", "d", "x").is_err());
    }
}
