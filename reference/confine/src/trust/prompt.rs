//! The quarantined-read prompt (seed `004`): when a turn reads a file nobody vouched
//! for, a person may be asked whether to trust it. Only the path decides whether the
//! question is offered: only a path naming a file, never a picture, never a directory,
//! never a path naming nothing; once per path per turn; only where the read really is
//! quarantined. What the file holds decides nothing: an empty or non-text file is asked
//! about like any other, with a note where the preview would be.

use std::path::Path;

use super::{Trust, TrustKey, TrustMap};
use crate::paths::Kind;

/// Extensions treated as pictures (lower-case comparison). SVG is text, not a picture.
pub const PICTURE_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tif", "tiff", "heic", "heif", "avif",
];

/// Bytes of a file's head examined for the preview (TRUST-PROMPT-4: 8 KiB).
pub const PREVIEW_BYTES: usize = 8192;

/// Lines shown at most (TRUST-PROMPT-5).
pub const PREVIEW_LINES: usize = 10;

/// The note where the preview would be for an empty file.
pub const EMPTY: &str = "the file is empty";
/// The note where the preview would be for a file that does not read as text.
pub const NOT_TEXT: &str = "the file does not read as text";

/// Why the question is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotOffered {
    /// The path is already trusted: the read is not quarantined.
    NotQuarantined,
    /// The path names nothing.
    NamesNothing,
    /// The path names a directory (a yes would cover everything beneath it).
    Directory,
    /// The path names something other than a regular file.
    NotAFile,
    /// A picture: its text is never read, whatever the map says.
    Picture,
    /// Already asked about this path in this turn.
    AlreadyAsked,
}

/// The prompt's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// Ask; `preview` holds the first lines, or `note` says why there are none.
    Ask {
        /// Up to the first ten lines of text, control characters and terminal escape
        /// sequences escaped.
        preview: Vec<String>,
        /// `Some("the file is empty")` or `Some("the file does not read as text")`.
        note: Option<&'static str>,
    },
    /// Do not ask.
    Skip(NotOffered),
}

impl Offer {
    /// The observable preview kind (TRUST-OBS-1): `text`, `empty` or `not_text`; `None`
    /// when the prompt is not offered.
    pub fn preview_kind(&self) -> Option<&'static str> {
        match self {
            Offer::Ask { note: None, .. } => Some("text"),
            Offer::Ask { note: Some(n), .. } if *n == EMPTY => Some("empty"),
            Offer::Ask { .. } => Some("not_text"),
            Offer::Skip(_) => None,
        }
    }
}

/// One preview line as it may reach a terminal: every control character (C0, DEL, C1,
/// so every escape sequence's introducer) and every bidirectional-text control shown
/// escaped, never raw (TRUST-PROMPT-5).
pub fn escape_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            let n = c as u32;
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:04x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `path`'s name ends in a picture extension.
pub fn is_picture(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| PICTURE_EXTENSIONS.iter().any(|p| e.eq_ignore_ascii_case(p)))
}

fn preview(head: &[u8]) -> (Vec<String>, Option<&'static str>) {
    if head.is_empty() {
        return (Vec::new(), Some(EMPTY));
    }
    let head = &head[..head.len().min(PREVIEW_BYTES)];
    // A multi-byte character cut at the end of the window still reads as text.
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return (Vec::new(), Some(NOT_TEXT)),
    };
    if text.contains('\0') {
        return (Vec::new(), Some(NOT_TEXT));
    }
    let lines = text.lines().take(PREVIEW_LINES).map(escape_line).collect();
    (lines, None)
}

impl TrustMap {
    /// Decides whether to put the quarantined-read question for `key` (spelled `path`),
    /// which the resolver found to be `kind` (`None`: it names nothing), with `head`
    /// the first bytes of the file. Records the ask, so it is put once per turn.
    pub fn offer_quarantined_read(
        &mut self,
        key: &TrustKey,
        path: &Path,
        kind: Option<Kind>,
        head: &[u8],
    ) -> Offer {
        if self.decision(key) == Some(Trust::Trusted) {
            return Offer::Skip(NotOffered::NotQuarantined);
        }
        match kind {
            None => return Offer::Skip(NotOffered::NamesNothing),
            Some(Kind::Dir) => return Offer::Skip(NotOffered::Directory),
            Some(Kind::File) => {}
            Some(_) => return Offer::Skip(NotOffered::NotAFile),
        }
        if is_picture(path) {
            return Offer::Skip(NotOffered::Picture);
        }
        if !self.asked_this_turn.insert(key.clone()) {
            return Offer::Skip(NotOffered::AlreadyAsked);
        }
        let (preview, note) = preview(head);
        Offer::Ask { preview, note }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_by_extension() {
        assert!(is_picture(Path::new("a/b.PNG")));
        assert!(is_picture(Path::new("x.jpeg")));
        assert!(!is_picture(Path::new("x.svg")));
        assert!(!is_picture(Path::new("png")));
    }

    #[test]
    fn previews_and_notes() {
        assert_eq!(preview(b""), (vec![], Some("the file is empty")));
        assert_eq!(
            preview(b"\x89PNG\r\n\x1a\n\0\0"),
            (vec![], Some("the file does not read as text"))
        );
        assert_eq!(
            preview(b"a\0b"),
            (vec![], Some("the file does not read as text"))
        );
        assert_eq!(
            preview(b"const SPEED = 100;\n").0,
            vec!["const SPEED = 100;".to_string()]
        );
        assert_eq!(preview("é".repeat(5000).as_bytes()).1, None);
        let many: String = (0..20).map(|i| format!("{i}\n")).collect();
        assert_eq!(preview(many.as_bytes()).0.len(), 10);
        assert_eq!(
            preview(b"a\x1b[2J\x1b]0;t\x07b\tc\xc2\x9bd\xe2\x80\xaee").0,
            vec!["a\\x1b[2J\\x1b]0;t\\x07b\\x09c\\x9bd\\u{202e}e".to_string()]
        );
        // NUL past the 8 KiB window does not make the file `not_text`.
        let mut late = vec![b'a'; PREVIEW_BYTES];
        late.push(0);
        assert_eq!(preview(&late).1, None);
    }
}
