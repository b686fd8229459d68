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

#[cfg(test)]
mod tests {
    use super::*;

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
