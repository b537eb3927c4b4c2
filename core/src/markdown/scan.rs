//! Reading the inline syntax at the end of an open block as pulldown-cmark would: which
//! constructs are still open, and the closers that close them (`closers.rs` decides what is
//! drawn).

/// How many open constructs are closed; deeper ones stay as CommonMark reads them.
const MAX_CLOSED: usize = 32;

/// How many open constructs the scan follows; later ones are read as text. This keeps the scan
/// linear on hostile input.
const MAX_OPEN: usize = 256;

/// Parsed between two closers of one character, which would otherwise read as one run; it is
/// read as text and dropped with the closers.
pub(super) const SEPARATOR: char = '.';

/// The longest scheme an autolink is read with.
const MAX_SCHEME: usize = 32;

pub(super) fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')
}

pub(super) fn is_email_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b)
}

/// An open construct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// A delimiter run of `*`, `_` or `~` that can still open: `count` of its `run` characters
    /// are unmatched; `both` when it could close as well.
    Delimiter {
        byte: u8,
        count: usize,
        run: usize,
        both: bool,
        at: usize,
        /// Openers are numbered in the order they open.
        serial: usize,
    },
    /// `[`, or `![` for an `image`, at byte `at`.
    Bracket { image: bool, at: usize },
    /// `[text](destination "title"`.
    Destination(Destination),
    /// A code span opened by a run of this many backticks.
    Code { run: usize, at: usize },
    /// A math span opened at `start` by `run` dollar signs. Math is not closed at the end (most
    /// dollar signs in replies are money), so one still open is read as text again.
    Math { start: usize, run: usize },
    /// `<scheme:…` or `<name@…`.
    Autolink { at: usize, syntax: Option<usize> },
}

/// A link destination being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Destination {
    /// Where the link's text opens.
    at: usize,
    part: Part,
    /// Parentheses open in the destination.
    parens: usize,
    /// Where the link's text ends: if this is no destination after all, the brackets are text
    /// and reading goes on from there, with what was open before them (`Scan::before_link`).
    resume: usize,
    /// The first delimiter inside the link's text left unmatched, or bracket before it: it is
    /// text if this is a link, and may still match if it is not, so it is held back until the
    /// destination closes.
    unmatched: Option<usize>,
}

/// Where in `(destination "title")` the reading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Before the destination.
    Start,
    /// In a destination without angle brackets.
    Raw,
    /// In `<destination>`.
    Angle,
    /// After the destination, before a title or `)`.
    Space,
    /// In a title closed by this character.
    Title(u8),
    /// After the title.
    End,
    /// Not a link destination.
    Invalid,
}

impl Destination {
    fn closers(&self, closer: &mut String) {
        match self.part {
            Part::Angle => closer.push('>'),
            Part::Title(quote) => closer.push(quote as char),
            _ => {}
        }
        repeat(closer, ')', self.parens + 1);
    }
}

impl Open {
    /// Where the construct opens in the text.
    fn at(&self) -> usize {
        match self {
            Open::Delimiter { at, .. }
            | Open::Bracket { at, .. }
            | Open::Destination(Destination { at, .. })
            | Open::Code { at, .. }
            | Open::Math { start: at, .. }
            | Open::Autolink { at, .. } => *at,
        }
    }
}

/// The scan of an open block's inline text.
#[derive(Debug, Default)]
pub(super) struct Scan {
    open: Vec<Open>,
    /// While a link destination is read: what was open before the link's `]`, the bracket left
    /// out. Keeping it here rather than in the destination keeps [`Open`] plain data, copied
    /// without cloning code of its own.
    before_link: Vec<Open>,
    /// Whether single dollar signs no longer open math: one was left open, so no later one can
    /// close. (Open `$$` waits for its closer instead.)
    no_math: bool,
    /// Maths opened by `\(` or `\[` and not closed yet: where, and the bracket that closes it.
    /// The text from there waits (`tex.rs` pairs the delimiters in the same way: each closer
    /// closes the last opener).
    tex_open: Option<(usize, u8)>,
    /// Where the text stops being decided, before its end: what follows it is drawn once the
    /// reply decides it.
    undecided: Option<usize>,
    /// The serial the last opener was given, and the lowest serial closers of each kind may
    /// still match (`bound_slots`).
    next_serial: usize,
    lower_bounds: [usize; 9],
}

impl Scan {
    /// Reads `text`, the open block's inline text up to what is drawn.
    pub fn run(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        loop {
            while i < bytes.len() {
                i = match self.open.last() {
                    Some(&Open::Code { run, .. }) => self.in_code(text, i, run),
                    Some(&Open::Math { run, .. }) => self.in_math(text, i, run),
                    Some(Open::Autolink { .. }) => self.in_autolink(bytes, i),
                    Some(Open::Destination(_)) => self.in_destination(bytes, i),
                    _ => self.inline(text, i),
                };
            }
            // Maths still open at the end waits for its closer, so that its delimiters never
            // show; a lone `$` that may be money is read as text again.
            let Some(&Open::Math { start, run }) = self.open.last() else {
                break;
            };
            self.open.pop();
            if run == 2 || maths_waits(&text[start..]) {
                self.undecided = earliest(self.undecided, Some(start));
                break;
            }
            self.no_math = true;
            i = start + 1;
        }
        if let Some((start, _)) = self.tex_open {
            self.undecided = earliest(self.undecided, Some(start));
        }
    }

    /// One step in ordinary inline text; returns where the next step starts.
    fn inline(&mut self, text: &str, i: usize) -> usize {
        let bytes = text.as_bytes();
        match bytes[i] {
            b'\\' => {
                let next = bytes.get(i + 1).copied();
                match (next, self.tex_open) {
                    (Some(b'('), _) => self.tex_open = Some((i, b')')),
                    (Some(b'['), _) => self.tex_open = Some((i, b']')),
                    (Some(next), Some((_, close))) if next == close => self.tex_open = None,
                    _ => {}
                }
                let escaped = next.is_some_and(|b| b.is_ascii_punctuation());
                i + if escaped { 2 } else { 1 }
            }
            b'`' => {
                let run = run_length(bytes, i);
                self.push(Open::Code { run, at: i });
                i + run
            }
            b'<' => self.autolink(bytes, i),
            b'$' => {
                let run = run_length(bytes, i);
                let opens = run == 2
                    || text[i + run..]
                        .chars()
                        .next()
                        .is_some_and(|c| !c.is_whitespace());
                if opens && (run == 2 || run == 1 && !self.no_math) {
                    self.push(Open::Math { start: i, run });
                }
                i + run
            }
            b'[' => {
                self.push(Open::Bracket {
                    image: false,
                    at: i,
                });
                i + 1
            }
            b'!' if bytes.get(i + 1) == Some(&b'[') => {
                self.push(Open::Bracket { image: true, at: i });
                i + 2
            }
            b']' => self.close_bracket(bytes, i),
            byte @ (b'*' | b'_' | b'~') => {
                let run = run_length(bytes, i);
                self.delimiter_run(text, i, byte, run);
                i + run
            }
            _ => next_char(text, i),
        }
    }

    fn in_code(&mut self, text: &str, i: usize, opened: usize) -> usize {
        let bytes = text.as_bytes();
        if bytes[i] != b'`' {
            return next_char(text, i);
        }
        let run = run_length(bytes, i);
        if run == opened {
            self.open.pop();
        }
        i + run
    }

    /// Inside math: as pulldown-cmark reads it, `$$` closes display math, and any run of
    /// dollar signs after a character that is not white space closes math (`$$x$` is a dollar
    /// sign and `$x$`), taking as many dollar signs as opened it (`$x$$$y$$` is `$x$` and
    /// `$$y$$`).
    fn in_math(&mut self, text: &str, i: usize, opened: usize) -> usize {
        let bytes = text.as_bytes();
        if bytes[i] != b'$' {
            return next_char(text, i);
        }
        let run = run_length(bytes, i);
        let after_text = text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace());
        if after_text || opened == 2 && run >= 2 {
            // The closer takes as many dollar signs as opened; the rest of the run reads anew.
            self.open.pop();
            return i + opened.min(run);
        }
        i + run
    }

    /// `<`: an autolink whose end is still to come is open; a whole one is skipped.
    fn autolink(&mut self, bytes: &[u8], i: usize) -> usize {
        let rest = &bytes[i + 1..];
        let scheme = rest.iter().take_while(|&&b| is_scheme_byte(b)).count();
        let uri = (2..=MAX_SCHEME).contains(&scheme)
            && rest[0].is_ascii_alphabetic()
            && rest.get(scheme) == Some(&b':');
        let local = rest.iter().take_while(|&&b| is_email_byte(b)).count();
        let email = local > 0 && rest.get(local) == Some(&b'@');
        if !uri && !email {
            return i + 1;
        }
        self.push(Open::Autolink {
            at: i,
            syntax: None,
        });
        i + 1
    }

    fn in_autolink(&mut self, bytes: &[u8], i: usize) -> usize {
        match bytes[i] {
            b'>' => {
                self.open.pop();
                i + 1
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'<' => {
                // Not an autolink after all: the `<` is text, and what follows it is read again.
                match self.open.pop() {
                    Some(Open::Autolink { at, .. }) => at + 1,
                    _ => i + 1,
                }
            }
            b'\\' | b'*' | b'_' | b'~' | b'`' | b'[' | b']' | b'!' | b'&' | b'$' => {
                if let Some(Open::Autolink { syntax, .. }) = self.open.last_mut() {
                    syntax.get_or_insert(i);
                }
                i + 1
            }
            _ => i + 1,
        }
    }

    /// The bytes of the syntax still open, which the closers must turn into formatting: a
    /// delimiter run's unmatched characters, backticks opening code, `[`, `![` and `<`.
    pub fn open_syntax(&self) -> Vec<usize> {
        let mut bytes = Vec::new();
        for open in &self.open {
            match *open {
                Open::Delimiter { at, count, .. } => bytes.extend(at..at + count),
                Open::Code { at, run } => bytes.extend(at..at + run),
                Open::Bracket { at, image } => bytes.extend(at..at + 1 + usize::from(image)),
                Open::Destination(Destination { at, .. }) | Open::Autolink { at, .. } => {
                    bytes.push(at)
                }
                Open::Math { .. } => {}
            }
        }
        bytes
    }

    /// Whether the text ends inside an autolink.
    pub fn ends_in_autolink(&self) -> bool {
        matches!(self.open.last(), Some(Open::Autolink { .. }))
    }

    /// Where the first construct still open starts.
    pub fn first_open(&self) -> Option<usize> {
        self.open.iter().map(Open::at).min()
    }

    /// Where the innermost construct still open starts.
    pub fn last_open(&self) -> Option<usize> {
        self.open.last().map(Open::at)
    }

    fn push(&mut self, open: Open) {
        if self.open.len() < MAX_OPEN {
            self.open.push(open);
        }
    }

    /// `]`: closes the nearest bracket. Followed by `(`, a destination opens; otherwise the
    /// brackets are text, or a reference resolved when parsed. (At the very end it is held
    /// back.)
    fn close_bracket(&mut self, bytes: &[u8], i: usize) -> usize {
        let Some(at) = self
            .open
            .iter()
            .rposition(|o| matches!(o, Open::Bracket { .. }))
        else {
            return i + 1;
        };
        let bracket = self.open[at].at();
        match bytes.get(i + 1) {
            Some(b'(') => {
                self.before_link = self.open.clone();
                self.before_link.remove(at);
                let inner_delimiter = self.open[at + 1..].iter().find_map(|o| match o {
                    Open::Delimiter { at, .. } => Some(*at),
                    _ => None,
                });
                let image = matches!(self.open[at], Open::Bracket { image: true, .. });
                let outer_bracket = self.open[..at].iter().find_map(|o| match o {
                    Open::Bracket { image: false, at } if !image => Some(*at),
                    _ => None,
                });
                let unmatched = earliest(inner_delimiter, outer_bracket);
                self.link_text_closed(at);
                self.open.push(Open::Destination(Destination {
                    at: bracket,
                    part: Part::Start,
                    parens: 0,
                    resume: i + 1,
                    unmatched,
                }));
                i + 2
            }
            _ => {
                self.open.remove(at);
                i + 1
            }
        }
    }

    /// A link's text is closed: the delimiters opened inside it stay unmatched text, and the
    /// brackets before a link (not an image) cannot make links around it.
    fn link_text_closed(&mut self, bracket: usize) {
        let image = matches!(self.open[bracket], Open::Bracket { image: true, .. });
        self.open.truncate(bracket);
        if !image {
            self.open
                .retain(|o| !matches!(o, Open::Bracket { image: false, .. }));
        }
    }

    /// Where the text stops being decided: before a link's text that may or may not be one, or
    /// the first delimiter inside a link's text whose destination is still open.
    pub fn undecided_from(&self) -> Option<usize> {
        // Inline syntax in an autolink is text, and syntax again if the autolink never closes.
        let unmatched = match self.open.last() {
            Some(Open::Destination(destination)) => destination.unmatched,
            Some(Open::Autolink { syntax, .. }) => *syntax,
            _ => None,
        };
        earliest(earliest(self.undecided, self.nested_link_text()), unmatched)
    }

    /// Where a link's text opens inside another link's text still open: which of the two
    /// becomes the link is decided only by what follows.
    fn nested_link_text(&self) -> Option<usize> {
        self.open
            .iter()
            .filter_map(|o| match o {
                Open::Bracket { image: false, at } => Some(*at),
                _ => None,
            })
            .nth(1)
    }

    /// Inside `(…` after a link's text: the destination, then maybe a title, then `)`. When it
    /// turns out not to be a link destination, what follows `(` is read again as text.
    fn in_destination(&mut self, bytes: &[u8], i: usize) -> usize {
        let Some(Open::Destination(destination)) = self.open.last_mut() else {
            return i + 1;
        };
        let byte = bytes[i];
        let escaped = byte == b'\\' && bytes.get(i + 1).is_some_and(u8::is_ascii_punctuation);
        let space = matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        let next = match (destination.part, byte) {
            (Part::Start | Part::Space | Part::End, _) if space => Some(destination.part),
            (Part::Start | Part::Space | Part::End, b')') if destination.parens == 0 => None,
            (Part::Start, b'<') => Some(Part::Angle),
            (Part::Angle, b'>') => Some(Part::Space),
            (Part::Angle, b'<' | b'\n' | b'\r') => Some(Part::Invalid),
            (Part::Start | Part::Raw, b'(') if destination.parens < MAX_CLOSED => {
                destination.parens += 1;
                Some(Part::Raw)
            }
            (Part::Raw, b')') if destination.parens > 0 => {
                destination.parens -= 1;
                Some(Part::Raw)
            }
            (Part::Raw, b')') => None,
            (Part::Raw, _) if space => Some(Part::Space),
            (Part::Start | Part::Raw, byte) if byte.is_ascii_control() => Some(Part::Invalid),
            (Part::Start | Part::Raw, _) => Some(Part::Raw),
            (Part::Space, b'"' | b'\'') => Some(Part::Title(byte)),
            (Part::Space, b'(') => Some(Part::Title(b')')),
            (Part::Title(b')'), b'(') => Some(Part::Invalid),
            (Part::Title(quote), _) if byte == quote => Some(Part::End),
            (Part::Angle | Part::Title(_), _) => Some(destination.part),
            (Part::Space | Part::End | Part::Invalid, _) => Some(Part::Invalid),
        };
        match next {
            None => {
                self.open.pop();
                i + 1
            }
            Some(Part::Invalid) => {
                let resume = destination.resume;
                self.open = std::mem::take(&mut self.before_link);
                resume
            }
            Some(part) => {
                destination.part = part;
                i + if escaped { 2 } else { 1 }
            }
        }
    }

    /// A run of `*`, `_` or `~`: it closes what it can, as pulldown-cmark matches runs, and
    /// what is left of it opens if it can.
    fn delimiter_run(&mut self, text: &str, i: usize, byte: u8, run: usize) {
        if byte == b'~' && run > 2 {
            return;
        }
        let before = char_before(text, i);
        let after = text[i + run..].chars().next();
        let can_open = can_open(byte, run, before, after);
        let can_close = can_close(byte, run, before, after);
        let both = can_open && can_close;
        let mut count = run;
        if can_close {
            while count > 0 {
                let bound = self.lower_bound(byte, run, both);
                let Some(at) = self.open.iter().rposition(|o| match *o {
                    Open::Delimiter {
                        byte: b,
                        run: r,
                        both: opener_both,
                        serial,
                        ..
                    } => {
                        serial >= bound
                            && b == byte
                            && (byte != b'~' || r == run)
                            && (!both && !opener_both
                                || !(run + r).is_multiple_of(3)
                                || run.is_multiple_of(3))
                    }
                    _ => false,
                }) else {
                    self.set_lower_bound(byte, run, both);
                    break;
                };
                // Across a link's text still open, the run closes only if the bracket stays
                // text, which what follows decides.
                if let Some(&Open::Bracket { at: bracket, .. }) = self.open[at + 1..]
                    .iter()
                    .find(|o| !matches!(o, Open::Delimiter { .. }))
                {
                    self.undecided = Some(self.undecided.map_or(bracket, |u| u.min(bracket)));
                    break;
                }
                self.open.truncate(at + 1);
                let Some(Open::Delimiter { count: left, .. }) = self.open.last_mut() else {
                    break;
                };
                let matched = count.min(*left);
                *left -= matched;
                count -= matched;
                if *left == 0 {
                    self.open.pop();
                }
            }
        }
        if count > 0 && can_open {
            self.next_serial += 1;
            self.push(Open::Delimiter {
                byte,
                count,
                run,
                both,
                at: i,
                serial: self.next_serial,
            });
        }
    }

    /// The oldest opener a closer of this kind may still match: pulldown-cmark stops looking
    /// below the openers a closer of the same kind found no match among, so a later one does
    /// not look there either.
    fn lower_bound(&self, byte: u8, run: usize, both: bool) -> usize {
        let (kind, not_both) = bound_slots(byte, run);
        match not_both {
            Some(not_both) if !both => self.lower_bounds[kind].min(self.lower_bounds[not_both]),
            _ => self.lower_bounds[kind],
        }
    }

    fn set_lower_bound(&mut self, byte: u8, run: usize, both: bool) {
        let (kind, not_both) = bound_slots(byte, run);
        self.lower_bounds[kind] = self.next_serial + 1;
        if let Some(not_both) = not_both
            && !both
        {
            self.lower_bounds[not_both] = self.next_serial + 1;
        }
    }

    /// The closers of everything open, innermost first.
    pub fn closers(&self, text: &str) -> String {
        let mut closers = String::new();
        let mut closer = String::new();
        for open in self.open.iter().rev().take(MAX_CLOSED) {
            closer.clear();
            match open {
                // `[text][label`: the label closes as a reference still arriving; an empty one
                // gets a character, since `[text][]` would take the text as its label.
                Open::Bracket { image: false, at } if text[..*at].ends_with(']') => {
                    closer.push_str(if *at + 1 == text.len() { "?]" } else { "]" })
                }
                Open::Delimiter { byte, count, .. } => {
                    repeat(&mut closer, *byte as char, (*count).min(MAX_CLOSED))
                }
                Open::Bracket { .. } => closer.push_str("]()"),
                Open::Destination(destination) => destination.closers(&mut closer),
                Open::Code { run, .. } => repeat(&mut closer, '`', *run),
                Open::Autolink { .. } => closer.push('>'),
                Open::Math { .. } => {}
            }
            // Two runs of one character would read as one longer run, the text's last run too.
            // Closers are ASCII, so comparing last bytes is comparing characters.
            let last = closers.as_bytes().last().or(text.as_bytes().last());
            if let (Some(last), Some(first)) = (last, closer.as_bytes().first())
                && last == first
                && matches!(first, b'*' | b'_' | b'~' | b'`')
            {
                closers.push(SEPARATOR);
            }
            closers.push_str(&closer);
        }
        closers
    }
}

/// The character before byte `i` as inline parsing sees it: on a paragraph's later line, the
/// quote markers and indentation that open the line are not in the paragraph, so the line break
/// comes before.
fn char_before(text: &str, i: usize) -> Option<char> {
    let line = text[..i].trim_end_matches([' ', '\t', '>'].as_slice());
    match line.chars().next_back() {
        Some(c @ ('\n' | '\r')) => Some(c),
        _ => text[..i].chars().next_back(),
    }
}

fn repeat(out: &mut String, c: char, times: usize) {
    out.extend(std::iter::repeat_n(c, times));
}

/// The earlier of two places, either of which may be missing.
/// How long a math span opened by one `$` may run, unclosed at the end of the text, while its
/// text waits; past it, or past a line's end, the dollar sign is more likely money or a shell's
/// variable than maths, and the text shows.
const MAX_WAITING_MATHS: usize = 200;

/// Whether an unclosed math span opened by one `$`, `span` from that dollar sign to the end,
/// waits for its closer: when it does not start with a digit (money) and is short, on one line.
fn maths_waits(span: &str) -> bool {
    !span[1..].starts_with(|c: char| c.is_ascii_digit())
        && span.len() <= MAX_WAITING_MATHS
        && !span.contains(['\n', '\r'])
}

fn earliest(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

fn run_length(bytes: &[u8], i: usize) -> usize {
    bytes[i..].iter().take_while(|&&b| b == bytes[i]).count()
}

fn next_char(text: &str, i: usize) -> usize {
    i + text
        .get(i..)
        .and_then(|rest| rest.chars().next())
        .map_or(1, char::len_utf8)
}

/// Whether a run can open emphasis, as pulldown-cmark decides it.
fn can_open(byte: u8, run: usize, before: Option<char>, after: Option<char>) -> bool {
    let Some(after) = after else {
        return false;
    };
    if after.is_whitespace() {
        return false;
    }
    let Some(before) = before else {
        return true;
    };
    if byte == b'*' && !is_punctuation(after) || byte == b'~' && run > 1 {
        return true;
    }
    before.is_whitespace() || is_punctuation(before)
}

/// Whether a run can close emphasis, as pulldown-cmark decides it.
fn can_close(byte: u8, run: usize, before: Option<char>, after: Option<char>) -> bool {
    let Some(before) = before else {
        return false;
    };
    if before.is_whitespace() {
        return false;
    }
    let Some(after) = after else {
        return true;
    };
    if (byte == b'*' || byte == b'~' && run > 1) && !is_punctuation(before) {
        return true;
    }
    after.is_whitespace() || is_punctuation(after)
}

/// Punctuation and symbols, as CommonMark counts them for flanking; combining marks and letters
/// of every script are not.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || !c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace() && !is_mark(c)
}

/// Combining marks that are not counted as letters.
fn is_mark(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
        | '\u{0483}'..='\u{0489}'
        | '\u{0591}'..='\u{05C7}'
        | '\u{0610}'..='\u{061A}'
        | '\u{064B}'..='\u{065F}'
        | '\u{0900}'..='\u{0DFF}'
        | '\u{0E31}'..='\u{0E4E}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{200C}'..='\u{200D}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FE20}'..='\u{FE2F}'
        | '\u{1F3FB}'..='\u{1F3FF}'
        | '\u{E0100}'..='\u{E01EF}')
}

/// Where pulldown-cmark keeps the lower bound for a run: by character and run length modulo 3,
/// plus one for runs that cannot both open and close (one for all tildes).
fn bound_slots(byte: u8, run: usize) -> (usize, Option<usize>) {
    match byte {
        b'_' => (3 + run % 3, Some(0)),
        b'*' => (6 + run % 3, Some(1)),
        _ => (2, None),
    }
}
