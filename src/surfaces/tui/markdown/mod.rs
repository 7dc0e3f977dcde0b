//! Markdown to terminal lines: pulldown-cmark events, wrapped to a width.
//!
//! Headings, emphasis, strikethrough, inline code, links (with the target
//! shown when it differs from the text), block quotes, nested lists, task
//! lists, simple tables and rules; fenced code is highlighted by
//! `highlight` and hard-wrapped so no character is lost. The output is
//! plain `Line`s: callers cache them per width.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight;
use super::theme::Theme;
use super::wrap::{self, Pieces};

/// Renders `text` for a column of `width` cells.
pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut w = Writer::new(width.max(8), theme);
    for event in Parser::new_ext(text, OPTIONS) {
        w.event(event);
    }
    w.finish()
}

const OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_GFM);

/// The code blocks of `text` in order, as the reader would copy them
/// (fenced or indented; an unclosed fence runs to the end).
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for event in Parser::new_ext(text, OPTIONS) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => open = Some(String::new()),
            Event::Text(t) => {
                if let Some(code) = &mut open {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(code) = open.take() {
                    blocks.push(code);
                }
            }
            _ => {}
        }
    }
    blocks.extend(open);
    blocks
}

/// Whether a rendered line is a code block's fence (```` ```lang ```` or
/// ```` ``` ````): the renderer draws them muted, as the line's last span.
pub fn is_fence(line: &Line<'_>, theme: &Theme) -> bool {
    line.spans
        .last()
        .is_some_and(|s| s.content.starts_with("```") && s.style == theme.muted())
}

enum Container {
    Quote,
    List { next: Option<u64> },
    Item { marker: String, used: bool },
}

struct Table {
    aligns: Vec<pulldown_cmark::Alignment>,
    rows: Vec<Vec<Pieces>>,
    header_rows: usize,
}

struct Writer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    /// Logical lines of the block being collected (a hard break starts one).
    inline: Vec<Pieces>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Open links: target and the text seen so far.
    links: Vec<(String, String)>,
    code: Option<(String, String)>,
    table: Option<Table>,
    blank_before_next: bool,
}

impl<'t> Writer<'t> {
    fn new(width: usize, theme: &'t Theme) -> Self {
        Self {
            theme,
            width,
            out: Vec::new(),
            inline: Vec::new(),
            styles: vec![Style::default().fg(theme.text)],
            containers: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_before_next: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&text);
                } else {
                    self.text(self.style(), &text);
                }
            }
            Event::Code(text) => {
                let style = self.style().fg(self.theme.code);
                self.text(style, &text);
            }
            Event::SoftBreak => self.text(self.style(), " "),
            Event::HardBreak => self.inline.push(Vec::new()),
            Event::Rule => {
                self.flush();
                self.blank();
                let (first, _) = self.prefixes();
                let w = self.width.saturating_sub(wrap::spans_width(&first)).min(60);
                let mut spans = first;
                spans.push(Span::styled("─".repeat(w), self.theme.muted()));
                self.out.push(Line::from(spans));
                self.blank_before_next = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.text(self.theme.muted(), mark);
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                let style = self.theme.muted();
                for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.inline.push(Vec::new());
                    }
                    self.text(style, line);
                }
            }
            Event::FootnoteReference(name) => self.text(self.theme.muted(), &format!("[^{name}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(self.style(), &t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.begin_block(),
            Tag::Heading { level, .. } => {
                self.begin_block();
                let n = level as usize;
                let color = if n <= 2 {
                    self.theme.heading
                } else {
                    self.theme.text
                };
                self.push_style(|s| s.fg(color).add_modifier(Modifier::BOLD));
                self.text(self.style(), &format!("{} ", "#".repeat(n)));
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                self.containers.push(Container::Quote);
                self.push_style(|s| s.add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                // A list inside an item follows its text directly.
                if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.begin_block();
                } else {
                    self.flush();
                }
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => {
                self.flush();
                if std::mem::take(&mut self.blank_before_next) {
                    self.blank_line();
                }
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    used: false,
                });
            }
            Tag::Table(aligns) => {
                self.begin_block();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(Vec::new());
                }
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let color = self.theme.link;
                self.push_style(|s| s.fg(color).add_modifier(Modifier::UNDERLINED));
                self.links.push((dest_url.to_string(), String::new()));
            }
            Tag::Image { dest_url, .. } => {
                let style = self.theme.muted();
                self.text(style, "[image: ");
                self.push_style(|_| style);
                self.links.push((dest_url.to_string(), String::new()));
            }
            // Footnote definitions, definition lists, metadata, superscript
            // and subscript render as their plain text.
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.blank_before_next = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.blank_before_next = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.containers.pop();
                self.blank_before_next = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.blank_before_next = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                let nested = self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }));
                self.blank_before_next = !nested;
            }
            TagEnd::Item => {
                self.flush();
                // An empty item still shows its marker.
                if let Some(Container::Item { used: false, .. }) = self.containers.last() {
                    let (first, _) = self.prefixes();
                    self.out.push(Line::from(first));
                }
                self.containers.pop();
            }
            TagEnd::Table => self.table(),
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some((dest, text)) = self.links.pop() {
                    let shown = dest.strip_prefix("mailto:").unwrap_or(&dest);
                    if !dest.is_empty() && !dest.starts_with('#') && text != shown {
                        self.text(self.theme.muted(), &format!(" ({dest})"));
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                if let Some((dest, _)) = self.links.pop() {
                    self.text(self.theme.muted(), &format!("] ({dest})"));
                }
            }
            _ => {}
        }
    }

    fn text(&mut self, style: Style, text: &str) {
        for (_, link_text) in &mut self.links {
            link_text.push_str(text);
        }
        if let Some(cell) = self
            .table
            .as_mut()
            .and_then(|t| t.rows.last_mut())
            .and_then(|r| r.last_mut())
        {
            cell.push((style, text.to_string()));
            return;
        }
        if self.inline.is_empty() {
            self.inline.push(Vec::new());
        }
        if let Some(line) = self.inline.last_mut() {
            line.push((style, text.to_string()));
        }
    }

    /// A block starts: finish any loose inline text, then a blank line
    /// when a block came before.
    fn begin_block(&mut self) {
        self.flush();
        self.blank();
    }

    fn blank(&mut self) {
        if std::mem::take(&mut self.blank_before_next) && !self.out.is_empty() {
            self.blank_line();
        }
    }

    fn blank_line(&mut self) {
        // Inside a quote the bar continues across the blank line.
        let quote = self.theme.muted();
        let spans: Vec<Span<'static>> = self
            .containers
            .iter()
            .filter(|c| matches!(c, Container::Quote))
            .map(|_| Span::styled("│", quote))
            .collect();
        self.out.push(Line::from(spans));
    }

    /// The prefix of the next line and of the lines after it: quote bars,
    /// and list markers (once per item) or their indentation.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let quote = self.theme.muted();
        let bullet = Style::default().fg(self.theme.assistant);
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", quote));
                    rest.push(Span::styled("│ ", quote));
                }
                Container::List { .. } => {}
                Container::Item { marker, used } => {
                    let pad = " ".repeat(wrap::width(marker));
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(marker.clone(), bullet));
                        *used = true;
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn flush(&mut self) {
        let lines = std::mem::take(&mut self.inline);
        if lines.iter().all(|l| l.iter().all(|(_, t)| t.is_empty())) {
            return;
        }
        let (first, rest) = self.prefixes();
        let avail = self.width.saturating_sub(wrap::spans_width(&rest)).max(4);
        for (i, logical) in lines.iter().enumerate() {
            let wrapped = wrap::wrap(logical, avail);
            let head = if i == 0 { &first } else { &rest };
            self.out.extend(wrap::into_lines(wrapped, head, &rest));
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        let fence = self.theme.muted();
        let (first, rest) = self.prefixes();
        let avail = self.width.saturating_sub(wrap::spans_width(&rest)).max(4);
        let mut head = first;
        head.push(Span::styled(format!("```{lang}"), fence));
        self.out.push(Line::from(head));
        let code = code.strip_suffix('\n').unwrap_or(code);
        let lines = highlight::highlight(code, lang, &self.theme.syntax).unwrap_or_else(|| {
            let style = Style::default().fg(self.theme.text);
            code.split('\n')
                .map(|l| vec![(style, l.replace('\t', "    "))])
                .collect()
        });
        for line in lines {
            let wrapped = wrap::wrap_hard(&line, avail);
            self.out.extend(wrap::into_lines(wrapped, &rest, &rest));
        }
        let mut tail = rest;
        tail.push(Span::styled("```", fence));
        self.out.push(Line::from(tail));
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush();
        if let Some((lang, code)) = self.code.take() {
            self.code_block(&lang, &code);
        }
        self.table();
        while self.out.last().is_some_and(|l| l.width() == 0) {
            self.out.pop();
        }
        self.out
    }
}

mod streaming;
mod table;

pub use streaming::provisional;

#[cfg(test)]
mod tests;
