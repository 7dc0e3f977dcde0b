//! The approval modal: the full command (wrapped, highlighted as shell),
//! the working directory, who asked, the keys, and how many more wait.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::protocol::ApprovalRequest;
use crate::surfaces::tui::app::App;
use crate::surfaces::tui::approval::PendingApproval;
use crate::surfaces::tui::conversation::badge;
use crate::surfaces::tui::highlight;
use crate::surfaces::tui::theme::Theme;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let Some(pending) = app.approvals.current() else {
        return;
    };
    let request = &pending.request;
    let t = &app.theme;
    let width = area.width.saturating_sub(4).clamp(20, 84);
    let inner_w = usize::from(width.saturating_sub(4));

    let mut command = command_lines(request, t, inner_w);
    let mut tail = detail_lines(pending, t, inner_w);
    let guard = Guard {
        lit: app.approvals.shows_armed(),
        confirming: app.approvals.confirming_always(),
    };
    push_keys(&mut tail, request, guard, t, inner_w);
    let room = |tail: &[Line<'static>]| {
        usize::from(area.height.saturating_sub(2)).saturating_sub(2 + tail.len())
    };
    // On a short screen the command and the keys come first: where the
    // details would leave no line of the command, they are left out.
    if room(&tail) < command.len().min(2) {
        tail.clear();
        push_keys(&mut tail, request, guard, t, inner_w);
    }
    // A command taller than the screen shows its head and how much is cut.
    let max_h = room(&tail);
    if command.len() > max_h {
        let cut = command.len() - max_h.saturating_sub(1);
        command.truncate(max_h.saturating_sub(1));
        command.push(Line::styled(format!("  … {cut} more lines"), t.muted()));
    }
    let mut body: Vec<Line<'static>> = Vec::new();
    body.extend(command);
    body.extend(tail);
    draw_modal(app, request, &body, (area, width), buf);
}

/// The command, highlighted and hard-wrapped: every character is shown.
fn command_lines(request: &ApprovalRequest, t: &Theme, inner_w: usize) -> Vec<Line<'static>> {
    // web_fetch asks about a URL, a delegation about a task, an MCP tool
    // with its arguments as pretty JSON: not commands.
    let mcp = request.tool.starts_with("mcp__");
    let prompt = [Span::styled(
        match request.tool.as_str() {
            "exec" => "$ ",
            "web_fetch" => "GET ",
            _ if mcp => "  ",
            _ => "",
        },
        Style::default().fg(t.tool).add_modifier(Modifier::BOLD),
    )];
    let cont = [Span::raw("  ")];
    let language = if mcp { "json" } else { "bash" };
    let code = highlight::highlight(&request.command, language, &t.syntax).unwrap_or_else(|| {
        request
            .command
            .split('\n')
            .map(|l| vec![(Style::default().fg(t.text), l.to_string())])
            .collect()
    });
    let mut command: Vec<Line<'static>> = Vec::new();
    for (i, line) in code.iter().enumerate() {
        let wrapped = wrap::wrap_hard(line, inner_w.saturating_sub(2));
        let head: &[Span<'static>] = if i == 0 { &prompt } else { &cont };
        command.extend(wrap::into_lines(wrapped, head, &cont));
    }
    command
}

/// Where it runs, who asked, the sandbox, and why the sandbox refused it.
fn detail_lines(pending: &PendingApproval, t: &Theme, inner_w: usize) -> Vec<Line<'static>> {
    let request = &pending.request;
    let mcp = request.tool.starts_with("mcp__");
    let details = [
        (if mcp { "mcp" } else { "cwd" }, request.cwd.clone()),
        (
            "from",
            format!("{} · session {}", badge(&pending.origin), pending.session),
        ),
    ];
    let mut tail: Vec<Line<'static>> = vec![Line::default()];
    for (label, value) in details {
        let pieces = vec![(Style::default().fg(t.text), value)];
        let first = [Span::styled(format!("{label:<5}"), t.muted())];
        let rest = [Span::raw("     ")];
        tail.extend(wrap::into_lines(
            wrap::wrap_hard(&pieces, inner_w.saturating_sub(5)),
            &first,
            &rest,
        ));
    }
    if let Some(sandbox) = &request.sandbox {
        // Outside the sandbox is what an escalation asks for.
        let text = match &request.escalation {
            Some(_) => format!("sandbox: none this time (it failed in {sandbox})"),
            None => format!("sandbox: {sandbox}"),
        };
        let line = Line::styled(text, Style::default().fg(t.tool));
        tail.extend(super::wrap_lines(vec![line], inner_w));
    }
    if let Some(reason) = &request.escalation {
        tail.push(Line::default());
        let why: Vec<Line<'static>> = std::iter::once(Line::styled(
            "The sandbox refused it:",
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        ))
        .chain(
            reason
                .lines()
                .map(|l| Line::styled(format!("  {l}"), Style::default().fg(t.warning))),
        )
        .collect();
        tail.extend(super::wrap_lines(why, inner_w));
    }
    tail
}

/// What the keystroke guard (`approval.rs`) shows.
#[derive(Clone, Copy)]
struct Guard {
    /// The keys decide: drawn lit. Until then they are greyed behind
    /// "wait…", and what is typed goes to the input box.
    lit: bool,
    /// `p` was pressed: the line asks for Enter.
    confirming: bool,
}

/// A blank row and the keys (wrapped on a narrow screen), with a note
/// above them when a command can never become a rule.
fn push_keys(
    tail: &mut Vec<Line<'static>>,
    request: &ApprovalRequest,
    guard: Guard,
    t: &Theme,
    inner_w: usize,
) {
    let mcp = request.tool.starts_with("mcp__");
    tail.push(Line::default());
    let keys_at = tail.len();
    let key_style = match guard.lit {
        true => Style::default().fg(t.focus).add_modifier(Modifier::BOLD),
        false => t.muted(),
    };
    let key = |k: &str| Span::styled(k.to_string(), key_style);
    // Say exactly what `a` and `p` would allow from now on (the core sends
    // the rule with the request); a command with shell syntax never becomes
    // a rule, so they approve it once.
    let prefix = request
        .rule
        .as_ref()
        .filter(|_| matches!(request.tool.as_str(), "exec" | "web_fetch") || mcp)
        .filter(|_| request.escalation.is_none());
    if guard.confirming {
        let line = confirm_line(prefix.map(String::as_str), t);
        tail.extend(super::wrap_lines(vec![line], inner_w));
        return;
    }
    let text = |s: &str| match guard.lit {
        true => Span::raw(s.to_string()),
        false => Span::styled(s.to_string(), t.muted()),
    };
    let mut keys = match guard.lit {
        true => Vec::new(),
        false => vec![Span::styled(
            "wait… ",
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        )],
    };
    match request.escalation {
        // Never a rule, never `y`: its own key, once.
        Some(_) => keys.extend([key("o"), text(" run once outside the sandbox · ")]),
        None => keys.extend([key("y"), text(" once · ")]),
    }
    match prefix {
        Some(prefix) => {
            // Whether `a`/`p` remember a prefix the read-only table widens,
            // or this exact command only: said before either key is pressed.
            if let Some(covers) = &request.rule_covers {
                let note = Line::styled(format!("a/p remember {covers}"), t.muted());
                let at = keys_at - 1;
                tail.splice(at..at, super::wrap_lines(vec![note], inner_w));
            }
            let rule = Span::styled(format!("`{prefix}`"), Style::default().fg(t.tool));
            keys.extend([
                key("a"),
                text(" "),
                rule.clone(),
                text(" this session · "),
                key("p"),
                text(" "),
                rule,
                text(" always · "),
            ]);
        }
        None if request.tool == "exec" && request.escalation.is_none() => {
            let note = Line::styled(
                "shell syntax (pipe, redirect, chaining, substitution): always asked, never a rule",
                Style::default().fg(t.warning),
            );
            let at = keys_at - 1;
            tail.splice(at..at, super::wrap_lines(vec![note], inner_w));
        }
        None => {}
    }
    keys.extend([key("n"), text("/"), key("Esc"), text(" deny")]);
    tail.extend(super::wrap_lines(vec![Line::from(keys)], inner_w));
}

/// After `p`: remembering a rule for good takes a second, different key.
fn confirm_line(prefix: Option<&str>, t: &Theme) -> Line<'static> {
    let what = match prefix {
        Some(prefix) => Span::styled(format!("`{prefix}`"), Style::default().fg(t.tool)),
        None => Span::raw("this"),
    };
    let bold = Style::default().fg(t.focus).add_modifier(Modifier::BOLD);
    Line::from(vec![
        Span::styled(
            "Always allow ",
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        what,
        Span::styled(
            "? ",
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        Span::styled("Enter", bold),
        Span::raw(" remembers it for good · any other key: back"),
    ])
}

/// The bordered box, centred in `area` at `width`, titled with the
/// question and how many more wait, holding `body`.
fn draw_modal(
    app: &App,
    request: &ApprovalRequest,
    body: &[Line<'static>],
    (area, width): (Rect, u16),
    buf: &mut Buffer,
) {
    let t = &app.theme;
    let height = (body.len() as u16 + 2).min(area.height);
    let x = area.x + area.width.saturating_sub(width) / 2;
    let y = area.y + area.height.saturating_sub(height) / 2;
    let rect = Rect::new(x, y, width.min(area.width), height);
    Clear.render(rect, buf);
    let mut block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(t.warning))
        .title(Span::styled(
            match request.escalation {
                Some(_) => format!(" Run {} outside the sandbox? ", request.tool),
                None => format!(" Approve {}? ", request.tool),
            },
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        ));
    let more = app.approvals.len().saturating_sub(1);
    if more > 0 {
        block = block.title(
            Line::from(Span::styled(
                format!(" +{more} queued "),
                Style::default().fg(t.warning),
            ))
            .right_aligned(),
        );
    }
    let inner = block.inner(rect).inner(ratatui::layout::Margin::new(1, 0));
    block.render(rect, buf);
    super::lines_in(body, inner, buf, None);
}
