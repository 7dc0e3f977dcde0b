//! sed scripts read as GNU sed reads them, far enough to know that they
//! only print: every command is one of a known list that reads input,
//! edits the pattern and hold spaces, branches or prints to stdout. `e`
//! runs a command, `w`/`W` and the `s///w` flag write a file, `s///e` runs
//! the pattern space, `r`/`R` read a file the command does not name as
//! input: none of them is accepted, nor anything this reader does not know.
//!
//! A replacement (and `y`'s lists) ends at the first delimiter not
//! escaped by a backslash. In a regex, GNU sed 4.9 also lets a bracket
//! expression hold the delimiter (`s/[/]x//`) where older seds end the
//! regex there; so that both readings agree on where a flag starts, a
//! bracket expression holding the delimiter, a backslash or a newline is
//! refused, as is a `[` or `]` delimiter.

/// Commands that take no argument and only touch the pattern/hold spaces
/// or print them to stdout.
const PLAIN: &str = "=dDgGhHnNpPxzF";

/// Flags of `s` that change only what is matched or printed.
const S_FLAGS: &str = "gpiImM0123456789";

/// Whether `script` only prints (and ends normally).
pub fn print_only(script: &str) -> bool {
    let mut reader = Reader {
        chars: script.chars().collect(),
        at: 0,
    };
    reader.script().is_some()
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
    }

    /// The whole script; None at the first thing not known to only print.
    fn script(&mut self) -> Option<()> {
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.at += 1;
            }
            if self.peek().is_none() {
                return Some(());
            }
            self.command()?;
        }
    }

    /// One command with its addresses.
    fn command(&mut self) -> Option<()> {
        if self.peek() == Some('#') {
            return self.comment();
        }
        self.address_range()?;
        self.skip_blanks();
        if self.peek() == Some('!') {
            self.at += 1;
            self.skip_blanks();
        }
        let command = self.next()?;
        match command {
            '{' | '}' => Some(()),
            c if PLAIN.contains(c) => self.end_of_command(),
            'q' | 'Q' | 'l' | 'L' => {
                self.skip_blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                self.end_of_command()
            }
            ':' => self.label(true),
            'b' | 't' | 'T' => self.label(false),
            'a' | 'i' | 'c' => self.rest_of_line(),
            's' => self.substitute(),
            'y' => {
                let delimiter = self.delimiter()?;
                self.until(delimiter)?;
                self.until(delimiter)?;
                self.end_of_command()
            }
            _ => None,
        }
    }

    /// `addr`, `addr,addr`, `addr,+N`, `addr,~N`, or nothing.
    fn address_range(&mut self) -> Option<()> {
        if !self.address()? {
            return Some(());
        }
        self.skip_blanks();
        if self.peek() != Some(',') {
            return Some(());
        }
        self.at += 1;
        self.skip_blanks();
        if matches!(self.peek(), Some('+' | '~')) {
            self.at += 1;
            return self.digits();
        }
        self.address()?.then_some(())
    }

    /// One address; Some(false) when there is none here.
    fn address(&mut self) -> Option<bool> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits()?;
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.digits()?;
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.regex('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.delimiter()?;
                self.regex(delimiter)?;
                self.regex_flags();
            }
            _ => return Some(false),
        }
        Some(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    fn digits(&mut self) -> Option<()> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        (self.at > start).then_some(())
    }

    /// `s/regex/replacement/flags`, with only printing flags.
    fn substitute(&mut self) -> Option<()> {
        let delimiter = self.delimiter()?;
        self.regex(delimiter)?;
        self.until(delimiter)?;
        while let Some(flag) = self.peek() {
            if !S_FLAGS.contains(flag) {
                break;
            }
            self.at += 1;
        }
        self.end_of_command()
    }

    /// The delimiter of `s`, `y` or `\cREGEXc`: any character but newline
    /// and backslash (and, here, brackets).
    fn delimiter(&mut self) -> Option<char> {
        self.next()
            .filter(|c| !matches!(c, '\n' | '\\' | '[' | ']'))
    }

    /// Skips a regex to just past its closing `delimiter`.
    fn regex(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                c if c == delimiter => return Some(()),
                '\\' => {
                    self.next()?;
                }
                '\n' => return None,
                '[' => self.bracket(delimiter)?,
                _ => {}
            }
        }
    }

    /// Skips a bracket expression after its `[` (`[]a]`, `[^]a]` and
    /// `[[:alpha:]]` included); None when it holds the delimiter, a
    /// backslash or a newline.
    fn bracket(&mut self, delimiter: char) -> Option<()> {
        let refused = |c: char| c == delimiter || c == '\\' || c == '\n';
        if self.peek() == Some('^') {
            self.at += 1;
        }
        if self.peek() == Some(']') {
            self.at += 1;
        }
        loop {
            match self.next()? {
                c if refused(c) => return None,
                ']' => return Some(()),
                '[' if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.next()?;
                    loop {
                        let c = self.next()?;
                        if refused(c) {
                            return None;
                        }
                        if c == kind && self.peek() == Some(']') {
                            self.at += 1;
                            break;
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Skips to just past the next `delimiter` not escaped by a backslash;
    /// None at the end of the script or a newline (sed refuses both).
    fn until(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                '\n' => return None,
                c if c == delimiter => return Some(()),
                _ => {}
            }
        }
    }

    /// A label made of plain characters, then the end of the command.
    /// (`:` needs one; a branch may have none.)
    fn label(&mut self, required: bool) -> Option<()> {
        self.skip_blanks();
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            self.at += 1;
        }
        if required && self.at == start {
            return None;
        }
        self.end_of_command()
    }

    /// A comment: up to the end of the line. A backslash does not continue
    /// it (GNU sed ends a comment at the newline whatever precedes it), so
    /// `-e '#\' -e 'e cmd'` is a comment and then a command.
    fn comment(&mut self) -> Option<()> {
        while self.next().is_some_and(|c| c != '\n') {}
        Some(())
    }

    /// Text of `a`/`i`/`c`: up to the end of the line, a backslash before
    /// the newline continuing it. It is printed, never run.
    fn rest_of_line(&mut self) -> Option<()> {
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => break,
                _ => {}
            }
        }
        Some(())
    }

    /// What may follow a command: blanks, then the end, a newline, `;`,
    /// `}` or a comment. Anything else (`pe`, `p w out`) is refused.
    fn end_of_command(&mut self) -> Option<()> {
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Some(()),
            _ => None,
        }
    }
}
