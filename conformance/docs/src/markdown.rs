//! Markdown to HTML with `pulldown-cmark` (CommonMark with tables and strikethrough),
//! for the `info` prose and short phrases, and the rewriting the chapters need: a link to
//! another chapter (`hooks.md#x`) goes to its page, a link to any other file of the
//! repository goes to its source, and every requirement ID written in the text links to
//! the requirement.

use std::collections::BTreeMap;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use super::page::esc;

/// The options every rendering uses.
pub fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}

/// A block of Markdown as HTML.
pub fn to_html(text: &str) -> String {
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, Parser::new_ext(text, options()));
    out
}

/// A phrase of Markdown as HTML without its paragraph.
pub fn inline_html(text: &str) -> String {
    let html = to_html(text);
    let t = html.trim_end();
    t.strip_prefix("<p>")
        .and_then(|t| t.strip_suffix("</p>"))
        .unwrap_or(t)
        .to_string()
}

/// Where links and IDs of a chapter go.
pub struct Rewrite<'a> {
    /// The chapter stems with a page.
    pub chapters: &'a [String],
    /// Each requirement ID and the chapter that defines it.
    pub ids: &'a BTreeMap<String, String>,
    /// The link of a repository file (`spec/`-relative path as written).
    pub source: &'a dyn Fn(&str) -> String,
}

impl Rewrite<'_> {
    fn link(&self, dest: &str) -> String {
        if dest.contains("://") || dest.starts_with('#') || dest.starts_with("mailto:") {
            return dest.to_string();
        }
        let (path, frag) = match dest.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (dest, None),
        };
        if let Some(stem) = path.strip_suffix(".md") {
            if self.chapters.iter().any(|c| c == stem) {
                return match frag {
                    Some(f) => format!("{stem}.html#{f}"),
                    None => format!("{stem}.html"),
                };
            }
        }
        (self.source)(dest)
    }

    /// `text` with each requirement ID in it made a link (`HOOK-IN-2` → `hooks.html#HOOK-IN-2`).
    fn ids_linked(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut last = 0;
        let mut found = false;
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_uppercase() && (i == 0 || !is_id_byte(bytes[i - 1])) {
                let end = (i..bytes.len())
                    .find(|&j| !is_id_byte(bytes[j]))
                    .unwrap_or(bytes.len());
                let word = text[i..end].trim_end_matches('-');
                if let Some(chapter) = self.ids.get(word) {
                    out += &esc(&text[last..i]);
                    out += &format!("<a href=\"{chapter}.html#{word}\">{word}</a>");
                    last = i + word.len();
                    found = true;
                }
                i = end.max(i + 1);
            } else {
                i += 1;
            }
        }
        found.then(|| out + &esc(&text[last..]))
    }

    /// Renders a chapter's (already marked) Markdown, `cases` replacing each marker
    /// comment `<!--gatehouse-cases:ID-->`.
    pub fn chapter_html(&self, text: &str, cases: &dyn Fn(&str) -> String) -> String {
        let mut in_link = 0usize;
        let events = Parser::new_ext(text, options()).map(|ev| match ev {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                in_link += 1;
                Event::Start(Tag::Link {
                    link_type,
                    dest_url: CowStr::from(self.link(&dest_url)),
                    title,
                    id,
                })
            }
            Event::End(TagEnd::Link) => {
                in_link = in_link.saturating_sub(1);
                Event::End(TagEnd::Link)
            }
            Event::InlineHtml(h) => {
                // The requirement anchors the chapter's text was given are links too.
                if h.starts_with("<a ") {
                    in_link += 1;
                } else if h.starts_with("</a>") {
                    in_link = in_link.saturating_sub(1);
                }
                Event::InlineHtml(h)
            }
            Event::Text(t) if in_link == 0 => match self.ids_linked(&t) {
                Some(html) => Event::InlineHtml(CowStr::from(html)),
                None => Event::Text(t),
            },
            Event::Html(h) => match marker(&h) {
                Some(id) => Event::Html(CowStr::from(cases(id))),
                None => Event::Html(h),
            },
            other => other,
        });
        let mut out = String::new();
        pulldown_cmark::html::push_html(&mut out, events);
        out
    }
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-'
}

/// The marker a chapter's text gets after each requirement.
pub fn marker_line(id: &str) -> String {
    format!("<!--gatehouse-cases:{id}-->")
}

fn marker(html: &str) -> Option<&str> {
    html.trim()
        .strip_prefix("<!--gatehouse-cases:")?
        .strip_suffix("-->")
}

/// `s` as Markdown text on one line (PROTO-OBSERVE-7): what comes from a report or a
/// scenario shows as written and does nothing in any renderer. HTML's `<`, `>` and `&`
/// become entities (a renderer that passes HTML through, as Jekyll and MkDocs do, gets
/// no tag), every other ASCII punctuation Markdown reads is backslash-escaped (no link,
/// emphasis, code span or table cell), and a line break is a blank.
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '|' | '#' | '!' | '~' | '{' | '}'
            | '+' | '-' | '.' | '"' | '\'' | '=' | ':' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as a Markdown code span nothing in it can close: fenced by more backticks than
/// its longest run, padded with blanks, a line break a blank, and `|` escaped so that it
/// keeps a table cell whole (GitHub's tables read `\|` in a code span as `|`). Inside a
/// code span a renderer shows HTML as text.
pub fn md_code(s: &str) -> String {
    let flat = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {flat} {fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_strings_neither_close_a_code_span_nor_open_a_tag() {
        let hostile = "x` <script>alert(1)</script> [a](javascript:alert(1)) | *b*";
        let code = md_code(hostile);
        assert!(code.starts_with("`` ") && code.ends_with(" ``"), "{code}");
        let html = to_html(&code);
        assert!(!html.contains("<script"), "{html}");
        let text = md_text(hostile);
        let html = to_html(&text);
        assert!(!html.contains("<script") && !html.contains("<a "), "{html}");
        assert!(!html.contains("<code>") && !html.contains("<em>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn ids_links_and_markers() {
        let ids: BTreeMap<String, String> = [("HOOK-IN-2".to_string(), "hooks".to_string())].into();
        let chapters = vec!["hooks".to_string()];
        let source = |p: &str| format!("SRC/{p}");
        let rw = Rewrite {
            chapters: &chapters,
            ids: &ids,
            source: &source,
        };
        let html = rw.chapter_html(
            "- <a class=\"req-id\" id=\"HOOK-IN-2\">[HOOK-IN-2]</a> See HOOK-IN-2, [hooks](hooks.md#a) and [t](untestable.toml).\n  <!--gatehouse-cases:X-A-1-->\n- next\n",
            &|id| format!("<div class=\"cases\">{id}</div>"),
        );
        assert!(
            html.contains("<a href=\"hooks.html#HOOK-IN-2\">HOOK-IN-2</a>"),
            "{html}"
        );
        assert!(html.contains("href=\"hooks.html#a\""), "{html}");
        assert!(html.contains("href=\"SRC/untestable.toml\""), "{html}");
        assert!(html.contains("<div class=\"cases\">X-A-1</div>"), "{html}");
        assert!(html.contains("<li>next</li>"), "{html}");
    }
}
