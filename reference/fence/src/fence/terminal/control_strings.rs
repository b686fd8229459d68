//! What a jailed command shows on a terminal, with the sequences a terminal would act on
//! outside the jail taken out (FENCE-TTY-7): the terminal belongs to the person, and some
//! of its escape sequences reach past the screen. OSC 52 writes and reads the clipboard,
//! OSC 1337 (iTerm2) downloads files, OSC 5522 (kitty) is a second clipboard, the graphics
//! protocol in an APC string (kitty) reads files by path, a DCS string (tmux, screen)
//! passes its content through to the terminal outside, and `CSI ... t` moves the window
//! or reports its title back as typed input.
//!
//! The filter is a streaming parser with one rule: a control string (OSC, DCS, SOS, PM,
//! APC) reaches the terminal only when it is an OSC whose number is on a short list
//! (titles, hyperlinks, colour queries and resets, prompt marks), and `CSI ... t` never
//! does. Everything else passes byte for byte: text, colours, cursor movement. It never
//! emits the introducer of a string it refuses, and it reads every introducer anew inside
//! a string it lets through, so a terminal that ends a string earlier or later than the
//! filter does still never sees a refused one begin. Introducers are read in every
//! spelling a terminal may take: `ESC ]`, the C1 code point `U+009D` (xterm reads it in
//! UTF-8 mode), and the raw byte `0x9D` where the terminal is not UTF-8 or the byte is no
//! part of a well-formed character (overlong and surrogate encodings are none). A raw C1
//! byte that begins a string or a CSI is dropped alone, and what it would have begun is
//! shown as text: so a UTF-8 terminal told the wrong locale loses those bytes only, not
//! the rest of the output.
//!
//! Pure logic on byte strings: no I/O. [`crate::fence::tty`] filters the jail's terminal with it,
//! [`crate::plane::relay`] a piped command's output where ours is a terminal.

/// The OSC numbers let through: window and icon titles (0, 1, 2), hyperlinks (8), the
/// default colours set or queried (10, 11, 12) and reset (110, 111, 112), a reset of the
/// palette (104), and shell integration's prompt marks (133). A query's answer goes to
/// the jail's own terminal.
pub const ALLOWED_OSC: [u32; 12] = [0, 1, 2, 8, 10, 11, 12, 104, 110, 111, 112, 133];

/// A CSI sequence longer than this is dropped whole (terminals ignore such sequences).
const MAX_CSI: usize = 256;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// Where the parser stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Text.
    Ground,
    /// After `ESC` (held).
    Esc,
    /// After the UTF-8 lead byte `0xC2` (held): `U+0080..U+009F` are C1 controls.
    C2,
    /// In a CSI sequence (held whole until its final byte).
    Csi,
    /// After an OSC introducer, reading its number (held).
    OscNumber,
    /// After its number, an `ESC` or `0xC2` that may begin its terminator (held).
    OscNumberEnd,
    /// In a control string: `pass` if it is let through, `osc` if `BEL` ends it.
    Str { pass: bool, osc: bool },
    /// After `ESC` in a control string (held).
    StrEsc { pass: bool, osc: bool },
    /// After `0xC2` in a control string (held, UTF-8 only).
    StrC2 { pass: bool, osc: bool },
}

/// The filter's state between chunks of output.
#[derive(Debug, Clone)]
pub struct ControlStrings {
    state: State,
    /// Bytes held until the parser knows what they begin.
    held: Vec<u8>,
    /// Whether the terminal reads UTF-8 (C1 controls are then the code points
    /// `U+0080..U+009F`, and a raw byte in `0x80..=0xBF` continues a character).
    utf8: bool,
    /// Continuation bytes still expected of the UTF-8 character under way.
    pending_continuations: u8,
    /// The range the next of them must fall in (narrower after `E0`, `ED`, `F0`, `F4`,
    /// so that an overlong or surrogate encoding is no character, and its bytes are read
    /// as the stray bytes they are).
    next_continuation: (u8, u8),
}

/// What a C1 control (8-bit, or its code point) begins.
enum C1 {
    /// An OSC string.
    Osc,
    /// A DCS, SOS, PM or APC string.
    OtherString,
    /// A CSI sequence.
    Csi,
    /// The string terminator, standing alone.
    St,
    /// Any other C1 control.
    Other,
}

fn c1(b: u8) -> C1 {
    match b {
        0x9d => C1::Osc,
        0x90 | 0x98 | 0x9e | 0x9f => C1::OtherString,
        0x9b => C1::Csi,
        0x9c => C1::St,
        _ => C1::Other,
    }
}

/// A raw C1 byte: one that begins a string or a CSI sequence is dropped alone, so that
/// what it would have begun is shown as text (an 8-bit terminal then starts nothing; the
/// rest of the output is not swallowed as the string's content, which a UTF-8 terminal
/// told the wrong locale would lose); any other is a control that begins nothing.
fn raw_c1(b: u8, out: &mut Vec<u8>) {
    match c1(b) {
        C1::Osc | C1::OtherString | C1::Csi => {}
        C1::St | C1::Other => out.push(b),
    }
}

impl ControlStrings {
    /// A filter for a terminal that reads UTF-8 (`utf8`) or 8-bit characters.
    pub fn new(utf8: bool) -> ControlStrings {
        ControlStrings {
            state: State::Ground,
            held: Vec::new(),
            utf8,
            pending_continuations: 0,
            next_continuation: (0x80, 0xbf),
        }
    }

    /// A filter for the terminal the locale of this process describes: UTF-8 unless
    /// `LC_ALL`, `LC_CTYPE` or `LANG` (the first set) names another character set.
    pub fn for_our_terminal() -> ControlStrings {
        ControlStrings::new(locale_is_utf8(|name| std::env::var(name).ok()))
    }

    /// Filter the next chunk of output into `out`. Bytes that may begin a refused string
    /// are held until the next chunk says.
    pub fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.byte(b, out);
        }
    }

    /// At the end of the output: a held UTF-8 lead byte goes out (alone it begins
    /// nothing); a held escape, CSI or OSC introducer does not.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if matches!(self.state, State::C2) {
            out.push(0xc2);
        }
        if let State::StrC2 { pass: true, .. } = self.state {
            out.push(0xc2);
        }
        self.held.clear();
        self.state = State::Ground;
        self.pending_continuations = 0;
        self.next_continuation = (0x80, 0xbf);
    }

    /// Filter one chunk into a new buffer.
    pub fn filtered(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len());
        self.filter(input, &mut out);
        out
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Ground => self.ground(b, out),
            State::Esc => self.escape(b, out),
            State::C2 => {
                self.held.clear();
                self.state = State::Ground;
                if (0x80..=0x9f).contains(&b) {
                    self.c1_control(b, &[0xc2, b], out);
                } else if (0xa0..=0xbf).contains(&b) {
                    out.extend_from_slice(&[0xc2, b]);
                } else {
                    out.push(0xc2);
                    self.ground(b, out);
                }
            }
            State::Csi => {
                self.held.push(b);
                match b {
                    0x40..=0x7e => {
                        // The final byte: window operations stay out, the rest goes.
                        if b != b't' {
                            out.extend_from_slice(&self.held);
                        }
                        self.held.clear();
                        self.state = State::Ground;
                    }
                    0x20..=0x3f if self.held.len() <= MAX_CSI => {}
                    _ => {
                        // Not a CSI this filter completes, or too long: dropped whole, and
                        // the byte read anew (an `ESC` may begin something of its own).
                        self.held.clear();
                        self.state = State::Ground;
                        self.ground(b, out);
                    }
                }
            }
            State::OscNumber => self.osc_number(b, out),
            State::OscNumberEnd => {
                // After `ESC` or `0xC2` right behind the number (held with it).
                let lead = *self.held.last().unwrap_or(&0);
                if (lead == ESC && b == b'\\') || (lead == 0xc2 && b == 0x9c) {
                    self.held.push(b);
                    self.end_number_only_osc(out);
                } else if lead == ESC {
                    // The OSC is cancelled by another escape before it said anything.
                    self.held.clear();
                    self.held.push(ESC);
                    self.state = State::Esc;
                    self.escape(b, out);
                } else {
                    self.held.clear();
                    self.state = State::Str {
                        pass: false,
                        osc: true,
                    };
                    self.in_string(b, false, true, out);
                }
            }
            State::Str { pass, osc } => self.in_string(b, pass, osc, out),
            State::StrEsc { pass, .. } => {
                self.held.clear();
                if b == b'\\' {
                    // ST: the string ends.
                    if pass {
                        out.extend_from_slice(&[ESC, b'\\']);
                    }
                    self.state = State::Ground;
                } else {
                    // Any other escape ends the string too, and begins something anew.
                    self.state = State::Esc;
                    self.held.push(ESC);
                    self.escape(b, out);
                }
            }
            State::StrC2 { pass, osc } => {
                self.held.clear();
                if b == 0x9c {
                    if pass {
                        out.extend_from_slice(&[0xc2, 0x9c]);
                    }
                    self.state = State::Ground;
                } else if (0x80..=0x9f).contains(&b) {
                    // Another C1 control ends the string and is read anew.
                    self.state = State::Ground;
                    self.c1_control(b, &[0xc2, b], out);
                } else {
                    self.state = State::Str { pass, osc };
                    if pass {
                        out.push(0xc2);
                    }
                    self.in_string(b, pass, osc, out);
                }
            }
        }
    }

    /// After `ESC` and any intermediates (held). Nothing is emitted until the sequence is
    /// complete: an `ESC` let out alone would join whatever comes next, and what comes next
    /// may be the rest of a string this filter dropped.
    fn escape(&mut self, b: u8, out: &mut Vec<u8>) {
        let direct = self.held.len() == 1;
        match b {
            b']' if direct => self.begin_osc(&[ESC, b']']),
            b'P' | b'X' | b'^' | b'_' if direct => self.refuse_string(),
            b'[' if direct => self.begin_csi(&[ESC, b'[']),
            // A string terminator with no string to end does nothing: dropped.
            b'\\' if direct => {
                self.held.clear();
                self.state = State::Ground;
            }
            // Intermediates, held with it (`ESC ( 0` designates a character set).
            0x20..=0x2f if self.held.len() < MAX_CSI => self.held.push(b),
            // The final byte: the sequence goes whole.
            0x30..=0x7e => {
                out.extend_from_slice(&self.held);
                out.push(b);
                self.held.clear();
                self.state = State::Ground;
            }
            // `ESC ESC`: a terminal starts the escape anew; so does the filter.
            ESC => {
                self.held.clear();
                self.held.push(ESC);
            }
            // Cancelled: the escape goes, the control stays.
            CAN | SUB => {
                self.held.clear();
                out.push(b);
                self.state = State::Ground;
            }
            // A C0 control in an escape is carried out by a terminal, which stays in the
            // escape: out now, the escape still held.
            0x00..=0x1f | 0x7f => out.push(b),
            // Anything else: the escape is dropped and the byte read as text.
            _ => {
                self.held.clear();
                self.state = State::Ground;
                self.ground(b, out);
            }
        }
    }

    /// Whether `b` continues the UTF-8 character under way (and so is text).
    fn continues(&mut self, b: u8) -> bool {
        if self.pending_continuations == 0 {
            return false;
        }
        let (lo, hi) = self.next_continuation;
        if (lo..=hi).contains(&b) {
            self.pending_continuations -= 1;
            self.next_continuation = (0x80, 0xbf);
            true
        } else {
            self.pending_continuations = 0;
            self.next_continuation = (0x80, 0xbf);
            false
        }
    }

    /// Whether `b` begins a UTF-8 character of two to four bytes (other than `0xC2`'s,
    /// which may be a C1 control and is read apart); if so, what must follow is noted.
    fn leads(&mut self, b: u8) -> bool {
        let (count, first) = match b {
            0xc3..=0xdf => (1, (0x80, 0xbf)),
            0xe0 => (2, (0xa0, 0xbf)),
            0xe1..=0xec | 0xee..=0xef => (2, (0x80, 0xbf)),
            0xed => (2, (0x80, 0x9f)),
            0xf0 => (3, (0x90, 0xbf)),
            0xf1..=0xf3 => (3, (0x80, 0xbf)),
            0xf4 => (3, (0x80, 0x8f)),
            _ => return false,
        };
        self.pending_continuations = count;
        self.next_continuation = first;
        true
    }

    fn ground(&mut self, b: u8, out: &mut Vec<u8>) {
        if self.utf8 && self.continues(b) {
            out.push(b);
            return;
        }
        match b {
            ESC => {
                self.held.push(ESC);
                self.state = State::Esc;
            }
            0xc2 if self.utf8 => {
                self.held.push(0xc2);
                self.state = State::C2;
            }
            _ if self.utf8 && self.leads(b) => out.push(b),
            // A raw C1 byte: a control on an 8-bit terminal; on a UTF-8 one a byte of no
            // character (a terminal that also reads raw C1 controls would take it as one).
            0x80..=0x9f => raw_c1(b, out),
            _ => out.push(b),
        }
    }

    /// A C1 control spelled as its UTF-8 code point (`bytes` = `C2` and `b`): a string it
    /// begins is read as a string, and dropped unless let through.
    fn c1_control(&mut self, b: u8, bytes: &[u8], out: &mut Vec<u8>) {
        match c1(b) {
            C1::Osc => self.begin_osc(bytes),
            C1::OtherString => self.refuse_string(),
            C1::Csi => self.begin_csi(bytes),
            // A terminator with no string to end, or a control that begins nothing.
            C1::St | C1::Other => out.extend_from_slice(bytes),
        }
    }

    fn begin_osc(&mut self, introducer: &[u8]) {
        self.held.clear();
        self.held.extend_from_slice(introducer);
        self.state = State::OscNumber;
    }

    fn begin_csi(&mut self, introducer: &[u8]) {
        self.held.clear();
        self.held.extend_from_slice(introducer);
        self.state = State::Csi;
    }

    /// A DCS, SOS, PM or APC string: none is let through, and only ST, `CAN` or `SUB`
    /// ends one (`BEL` does not).
    fn refuse_string(&mut self) {
        self.held.clear();
        self.state = State::Str {
            pass: false,
            osc: false,
        };
    }

    /// The OSC's number, digit by digit; what ends it decides.
    fn osc_number(&mut self, b: u8, out: &mut Vec<u8>) {
        match b {
            b'0'..=b'9' if self.held.len() < 16 => self.held.push(b),
            b';' => {
                let pass = self.osc_allowed();
                if pass {
                    out.extend_from_slice(&self.held);
                    out.push(b';');
                }
                self.held.clear();
                self.state = State::Str { pass, osc: true };
            }
            // A number-only OSC (`OSC 104 BEL`), ended on the spot (by a raw ST only
            // where the terminal is 8-bit: a UTF-8 one reads no character there).
            BEL => {
                self.held.push(b);
                self.end_number_only_osc(out);
            }
            0x9c if !self.utf8 => {
                self.held.push(b);
                self.end_number_only_osc(out);
            }
            ESC => {
                self.held.push(ESC);
                self.state = State::OscNumberEnd;
            }
            0xc2 if self.utf8 => {
                self.held.push(0xc2);
                self.state = State::OscNumberEnd;
            }
            // Cancelled before it said anything.
            CAN | SUB => {
                self.held.clear();
                out.push(b);
                self.state = State::Ground;
            }
            // A terminal ignores other C0 controls in a string.
            0x00..=0x1f => {}
            // Anything else after the introducer (`ESC ] l`, a number too long): a string
            // the filter does not let through.
            _ => {
                self.held.clear();
                self.state = State::Str {
                    pass: false,
                    osc: true,
                };
                self.in_string(b, false, true, out);
            }
        }
    }

    /// The held number-only OSC and its terminator: out whole if its number is on the
    /// list, dropped whole if not.
    fn end_number_only_osc(&mut self, out: &mut Vec<u8>) {
        if self.osc_allowed() {
            out.extend_from_slice(&self.held);
        }
        self.held.clear();
        self.state = State::Ground;
    }

    /// Whether the OSC whose introducer and digits are held is on the list.
    fn osc_allowed(&self) -> bool {
        let digits: Vec<u8> = self
            .held
            .iter()
            .copied()
            .skip_while(|b| !b.is_ascii_digit())
            .take_while(u8::is_ascii_digit)
            .collect();
        if digits.is_empty() || digits.len() > 6 {
            return false;
        }
        let n: u32 = std::str::from_utf8(&digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(u32::MAX);
        ALLOWED_OSC.contains(&n)
    }

    fn in_string(&mut self, b: u8, pass: bool, osc: bool, out: &mut Vec<u8>) {
        if pass && self.utf8 && self.continues(b) {
            out.push(b);
            return;
        }
        let end = |this: &mut ControlStrings, out: &mut Vec<u8>, keep: &[u8]| {
            if pass {
                out.extend_from_slice(keep);
            }
            this.state = State::Ground;
        };
        match b {
            BEL if osc => end(self, out, &[BEL]),
            CAN | SUB => end(self, out, &[b]),
            ESC => {
                self.held.clear();
                self.held.push(ESC);
                self.state = State::StrEsc { pass, osc };
            }
            0x9c if !self.utf8 || !pass => end(self, out, &[b]),
            0xc2 if self.utf8 => {
                self.held.clear();
                self.held.push(0xc2);
                self.state = State::StrC2 { pass, osc };
            }
            0x80..=0x9f if pass => {
                // A raw C1 byte in a string let through ends the string and is read anew
                // (in a refused string it is content, dropped).
                self.state = State::Ground;
                raw_c1(b, out);
            }
            _ if pass && self.utf8 && self.leads(b) => out.push(b),
            _ => {
                if pass {
                    out.push(b);
                }
            }
        }
    }
}

/// Whether the locale that `var` reads (`LC_ALL`, then `LC_CTYPE`, then `LANG`: the first
/// set and not empty) names UTF-8; with none set, UTF-8 is assumed, as today's terminals
/// are.
pub fn locale_is_utf8(var: impl Fn(&str) -> Option<String>) -> bool {
    for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = var(name).filter(|v| !v.is_empty()) {
            let v = v.to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8") || v == "c.utf8";
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf8(input: &[u8]) -> Vec<u8> {
        ControlStrings::new(true).filtered(input)
    }

    fn eight_bit(input: &[u8]) -> Vec<u8> {
        ControlStrings::new(false).filtered(input)
    }

    /// Every split of `input` into two chunks gives the same output as one chunk.
    fn same_when_split(input: &[u8], utf: bool) {
        let whole = ControlStrings::new(utf).filtered(input);
        for i in 0..=input.len() {
            let mut f = ControlStrings::new(utf);
            let mut out = f.filtered(&input[..i]);
            out.extend(f.filtered(&input[i..]));
            assert_eq!(out, whole, "split at {i} of {input:?}");
        }
    }

    #[test]
    fn text_colours_and_cursor_movement_pass_byte_for_byte() {
        let s = "plain \x1b[1;31mred\x1b[0m \x1b[2J\x1b[H é € ❝quoted❞ ✜ 😀\r\n\x1bc\x1b(0q\x1b(B";
        assert_eq!(utf8(s.as_bytes()), s.as_bytes());
        same_when_split(s.as_bytes(), true);
    }

    #[test]
    fn clipboard_writes_and_reads_are_dropped_in_every_spelling() {
        for (input, left) in [
            (&b"a\x1b]52;c;SGVsbG8=\x07b"[..], &b"ab"[..]),
            (b"a\x1b]52;c;?\x1b\\b", b"ab"),
            (b"a\x1b]52;;SGVsbG8=\xc2\x9cb", b"ab"),
            (b"a\xc2\x9d52;c;SGVsbG8=\x07b", b"ab"),
            (b"a\x1b]5522;type=write\x07b", b"ab"),
            (b"a\x1b]1337;File=name=eA==;inline=0:SU5K\x07b", b"ab"),
            (b"a\x1b]1337;Copy=:SU5K\x07b", b"ab"),
            (b"a\x1b]052;c;SGVsbG8=\x07b", b"ab"),
            (b"a\x1b]9999999999;x\x07b", b"ab"),
            (b"a\x1b]l title\x1b\\b", b"ab"),
        ] {
            assert_eq!(utf8(input), left, "{input:?}");
            same_when_split(input, true);
        }
    }

    #[test]
    fn dcs_apc_pm_and_sos_strings_are_dropped_with_what_they_carry() {
        for input in [
            &b"a\x1bPtmux;\x1b\x1b]52;c;SGVsbG8=\x07\x1b\\b"[..],
            b"a\x1bP$qm\x1b\\b",
            b"a\x1b_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x1b\\b",
            b"a\x1b^private\x1b\\b",
            b"a\x1bXstart of string\x1b\\b",
            b"a\xc2\x90tmux;x\xc2\x9cb",
            b"a\xc2\x9fGf=100\xc2\x9cb",
        ] {
            assert_eq!(utf8(input), b"ab", "{input:?}");
            same_when_split(input, true);
        }
    }

    #[test]
    fn titles_hyperlinks_and_colour_queries_pass() {
        for s in [
            &b"\x1b]0;my title\x07"[..],
            b"\x1b]2;t\xc3\xa9tle \xe2\x9d\x9d\x1b\\",
            b"\x1b]8;;https://example.org/\x1b\\link\x1b]8;;\x1b\\",
            b"\x1b]11;?\x07",
            b"\x1b]104\x07",
            b"\x1b]133;A\x07",
        ] {
            assert_eq!(utf8(s), s, "{s:?}");
            same_when_split(s, true);
        }
    }

    #[test]
    fn a_string_let_through_cannot_smuggle_a_refused_one() {
        // Inside a title, each introducer ends the title and is read anew.
        for input in [
            &b"\x1b]0;title\x1b]52;c;SMUGGLED\x07after"[..],
            b"\x1b]0;title\xc2\x9d52;c;SMUGGLED\x07after",
            b"\x1b]0;title\x1bPtmux;SMUGGLED\x1b\\after",
        ] {
            let out = utf8(input);
            let text = String::from_utf8_lossy(&out);
            assert!(!text.contains("SMUGGLED"), "{text:?}");
            assert!(!text.contains("52;"), "{text:?}");
            assert!(text.ends_with("after"), "{text:?}");
            same_when_split(input, true);
        }
    }

    #[test]
    fn an_escape_is_never_let_out_alone_to_join_what_follows() {
        // Each drops a string right after an `ESC` whose sequence is not complete; what
        // follows spells the rest of an OSC 52 in plain text.
        for input in [
            &b"\x1b\x1b]52;x\x07]52;c;PAYLOAD\x07"[..],
            b"\x1b\xc2\x9d52;x\x07]52;c;PAYLOAD\x07",
            b"\x1b\n\x1b]52;x\x07]52;c;PAYLOAD\x07",
            b"\x1b(\x1b]52;x\x07]52;c;PAYLOAD\x07",
            b"\x1bPx\x1b\x1b]52;x\x07\x1b\\]52;c;PAYLOAD\x07",
        ] {
            let once = utf8(input);
            assert_eq!(utf8(&once), once, "{input:?} gave {once:?}");
            let text = String::from_utf8_lossy(&once);
            assert!(!text.contains("\x1b]52"), "{text:?}");
        }
        // `ESC \n ]`: a terminal carries out the newline and reads `ESC ]`.
        assert_eq!(utf8(b"\x1b\n]52;c;P\x07z"), b"\nz");
    }

    #[test]
    fn cancel_and_substitute_end_a_refused_string_as_a_terminal_ends_it() {
        assert_eq!(utf8(b"\x1b]52;c;\x18AFTER"), b"AFTER");
        assert_eq!(utf8(b"\x1bPq#0\x1aAFTER"), b"AFTER");
    }

    #[test]
    fn window_operations_and_title_reports_are_dropped() {
        assert_eq!(
            utf8(b"a\x1b[21tb\x1b[8;100;100tc\x1b[?1049hd"),
            b"abc\x1b[?1049hd"
        );
        assert_eq!(utf8(b"a\xc2\x9b21tb"), b"ab");
    }

    #[test]
    fn a_raw_c1_introducer_is_dropped_alone_and_what_it_began_shows_as_text() {
        // 0x9D raw: an OSC on an 8-bit terminal. Dropped alone, what follows is text, so
        // nothing starts there, and nothing of the rest is lost.
        assert_eq!(
            eight_bit(b"a\x9d52;c;SGVsbG8=\x07b"),
            b"a52;c;SGVsbG8=\x07b"
        );
        assert_eq!(utf8(b"a\x9d52;c;x\x07b"), b"a52;c;x\x07b");
        assert_eq!(eight_bit(b"a\x9fGf=1;x\x9cb\x9b21tc"), b"aGf=1;x\x9cb21tc");
        // Inside a UTF-8 character it is part of it.
        assert_eq!(utf8("\u{275d}".as_bytes()), "\u{275d}".as_bytes());
        same_when_split(b"a\x9d52;c;SGVsbG8=\x07b\xe2\x9d\x9d", false);
    }

    #[test]
    fn utf8_text_on_a_terminal_told_it_is_8_bit_loses_no_more_than_its_c1_bytes() {
        // LC_ALL=C on a UTF-8 terminal: the emoji's 0x9F and 0x98 go, the text after stays.
        let out = eight_bit("ok \u{1f600} done\nnext line\n".as_bytes());
        assert_eq!(out, b"ok \xf0\x80 done\nnext line\n");
    }

    #[test]
    fn overlong_and_surrogate_encodings_are_no_characters() {
        // E0 82 9D would be U+009D in an overlong spelling a lenient decoder takes; its
        // bytes are strays, and the OSC introducer among them goes.
        for input in [
            &b"a\xe0\x82\x9d52;c;x\x07b"[..],
            b"a\xf0\x80\x82\x9d52;c;x\x07b",
            b"a\xe0\x82\x9eGf=1\x07b",
            b"a\xed\xa0\x9d52;c;x\x07b",
        ] {
            let out = utf8(input);
            assert!(
                !out.contains(&0x9d) && !out.contains(&0x9e),
                "{input:?} gave {out:?}"
            );
        }
        // Valid characters at the edges of those ranges pass.
        for c in ["\u{800}", "\u{d7ff}", "\u{e000}", "\u{10000}", "\u{10ffff}"] {
            assert_eq!(utf8(c.as_bytes()), c.as_bytes());
        }
    }

    #[test]
    fn a_raw_st_ends_a_number_only_osc_only_on_an_8_bit_terminal() {
        assert_eq!(eight_bit(b"\x1b]104\x9cz"), b"\x1b]104\x9cz");
        // On a UTF-8 terminal the raw byte is no terminator: the OSC is not let through.
        assert_eq!(utf8(b"\x1b]2\x9cz"), b"z");
    }

    #[test]
    fn locales() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(locale_is_utf8(env(&[])));
        assert!(locale_is_utf8(env(&[("LANG", "en_US.UTF-8")])));
        assert!(!locale_is_utf8(env(&[
            ("LANG", "en_US.UTF-8"),
            ("LC_ALL", "C")
        ])));
        assert!(!locale_is_utf8(env(&[("LC_CTYPE", "de_DE.ISO-8859-1")])));
        assert!(locale_is_utf8(env(&[("LC_ALL", ""), ("LANG", "C.utf8")])));
    }

    /// Bytes that matter to the parser, and a few that do not.
    fn interesting() -> impl proptest::strategy::Strategy<Value = u8> {
        proptest::sample::select(vec![
            0x1b, b']', b'[', b'P', b'_', b'\\', b'(', b'5', b'2', b'0', b'8', b';', b't', b'c',
            0x07, 0x18, 0x0a, 0xc2, 0x9d, 0x9c, 0x9b, 0x90, 0xe2, 0x80, b'a',
        ])
    }

    /// `input` filtered in two chunks cut at `cut`, then finished.
    fn filtered_in_two(input: &[u8], cut: usize, utf: bool) -> Vec<u8> {
        let cut = cut.min(input.len());
        let mut f = ControlStrings::new(utf);
        let mut out = f.filtered(&input[..cut]);
        out.extend(f.filtered(&input[cut..]));
        f.finish(&mut out);
        out
    }

    /// The output filtered again is unchanged (what passed was all allowed), and, read
    /// plainly, no refused string begins anywhere in it.
    fn check_output(
        input: &[u8],
        cut: usize,
        utf: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let out = filtered_in_two(input, cut, utf);
        let again = filtered_in_two(&out, 0, utf);
        proptest::prop_assert_eq!(&again, &out);
        for refused in [
            &[0x1b, b'P'][..],
            &[0x1b, b'_'],
            &[0x1b, b']', b'5'],
            &[0xc2, 0x9d, b'5'],
            &[0xc2, 0x90],
        ] {
            proptest::prop_assert!(
                !out.windows(refused.len()).any(|w| w == refused),
                "{:?} in {:?}",
                refused,
                out
            );
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// Over the parser's own alphabet, where the attacks live.
        #[test]
        fn output_is_a_fixed_point_over_the_parsers_alphabet(input in proptest::collection::vec(interesting(), 0..64), cut in 0usize..64, utf in proptest::prelude::any::<bool>()) {
            check_output(&input, cut, utf)?;
        }
    }

    proptest::proptest! {
        /// Whatever the bytes and however they are split.
        #[test]
        fn output_is_a_fixed_point(input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), cut in 0usize..200, utf in proptest::prelude::any::<bool>()) {
            check_output(&input, cut, utf)?;
        }
    }
}
