//! The kinds of task the router tells apart, and which side each belongs on.

use crate::protocol::Target;

/// What the user is asking for, as a careful user would name it. The
/// snake_case names (`as_str`) are what `always_local` / `always_remote`
/// rules and the routing table use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Greeting,
    /// Thanks, small talk, jokes, short creative bits (a haiku, a quick text).
    Chat,
    QuickFact,
    /// "What did I say about…", "do you remember…".
    MemoryRecall,
    /// "Remember that…", "make a note: …".
    Note,
    FileTask,
    ShellTask,
    SimpleEdit,
    /// Reminders, alarms, calendar entries.
    Reminder,
    /// Summarizing or answering a question about pasted text.
    Summarize,
    Translate,
    Code,
    CodeReview,
    Debugging,
    Reasoning,
    Planning,
    Analysis,
    /// Letters, essays, posts, stories, documentation.
    LongForm,
    /// Nothing recognizable: the configured default decides.
    Unknown,
}

impl Category {
    /// Every category, in tie-break order: when two score the same, the
    /// earlier one wins (local before remote, the cheaper guess first).
    pub const ALL: [Category; 19] = [
        Category::Reminder,
        Category::Note,
        Category::MemoryRecall,
        Category::FileTask,
        Category::ShellTask,
        Category::SimpleEdit,
        Category::Summarize,
        Category::Translate,
        Category::Greeting,
        Category::Chat,
        Category::QuickFact,
        Category::CodeReview,
        Category::Code,
        Category::Debugging,
        Category::Reasoning,
        Category::Planning,
        Category::Analysis,
        Category::LongForm,
        Category::Unknown,
    ];

    pub const COUNT: usize = Self::ALL.len();

    /// A dense index for score arrays.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The name used in config rules and the routing table.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Greeting => "greeting",
            Category::Chat => "chat",
            Category::QuickFact => "quick_fact",
            Category::MemoryRecall => "memory_recall",
            Category::Note => "note",
            Category::FileTask => "file_task",
            Category::ShellTask => "shell_task",
            Category::SimpleEdit => "simple_edit",
            Category::Reminder => "reminder",
            Category::Summarize => "summarize",
            Category::Translate => "translate",
            Category::Code => "code",
            Category::CodeReview => "code_review",
            Category::Debugging => "debugging",
            Category::Reasoning => "reasoning",
            Category::Planning => "planning",
            Category::Analysis => "analysis",
            Category::LongForm => "long_form",
            Category::Unknown => "unknown",
        }
    }

    /// The words shown in a routing reason ("code review: …").
    pub fn label(self) -> &'static str {
        match self {
            Category::Greeting => "greeting",
            Category::Chat => "chat",
            Category::QuickFact => "quick fact",
            Category::MemoryRecall => "memory recall",
            Category::Note => "note",
            Category::FileTask => "file task",
            Category::ShellTask => "shell task",
            Category::SimpleEdit => "simple edit",
            Category::Reminder => "reminder",
            Category::Summarize => "summarize",
            Category::Translate => "translate",
            Category::Code => "code",
            Category::CodeReview => "code review",
            Category::Debugging => "debugging",
            Category::Reasoning => "reasoning",
            Category::Planning => "planning",
            Category::Analysis => "analysis",
            Category::LongForm => "long-form writing",
            Category::Unknown => "unclear",
        }
    }

    /// Where this kind of task belongs; `None` for `Unknown`.
    pub fn side(self) -> Option<Target> {
        match self {
            Category::Code
            | Category::CodeReview
            | Category::Debugging
            | Category::Reasoning
            | Category::Planning
            | Category::Analysis
            | Category::LongForm => Some(Target::Remote),
            Category::Unknown => None,
            _ => Some(Target::Local),
        }
    }

    pub fn from_name(name: &str) -> Option<Category> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The seed config's task names (egirl's TypeScript router) and a few
    /// group names, accepted in rules next to the category names.
    pub fn from_alias(name: &str) -> Option<&'static [Category]> {
        Some(match name {
            "memory_search" | "memory_get" | "memory" => &[Category::MemoryRecall],
            "acknowledgment" | "acknowledgement" | "thanks" | "chit_chat" | "conversation" => {
                &[Category::Chat]
            }
            "code_generation" | "coding" => &[Category::Code],
            "complex_reasoning" => &[Category::Reasoning],
            "memory_op" => &[Category::MemoryRecall, Category::Note],
            "tool_use" => &[
                Category::FileTask,
                Category::ShellTask,
                Category::SimpleEdit,
            ],
            "writing" => &[Category::LongForm],
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_position_in_declaration_and_names_round_trip() {
        for category in Category::ALL {
            assert!(category.index() < Category::COUNT);
            assert_eq!(Category::from_name(category.as_str()), Some(category));
        }
        let mut seen = [false; Category::COUNT];
        for category in Category::ALL {
            assert!(!seen[category.index()], "{category:?} listed twice");
            seen[category.index()] = true;
        }
    }
}
