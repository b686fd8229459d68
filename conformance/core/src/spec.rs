//! Requirement IDs from the spec chapters (`spec/*.md` except `README.md`).
//!
//! A requirement is a paragraph or list item that starts with `**[ID]**` (or, withdrawn,
//! `~~**[ID]**`); its body runs until a blank line, a heading, a fence, the next list item
//! at the same or a shallower indent, or the next requirement. Normative keywords written
//! in capitals outside any requirement are recorded as stray (a trace error). Text inside
//! fenced code blocks and inline code is ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Keywords that make a requirement normative (need a scenario or an untestable entry).
const NORMATIVE: &[&str] = &["MUST", "SHOULD", "SHALL", "REQUIRED"];

/// One requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// `GATE-JAIL-1`.
    pub id: String,
    /// The chapter file stem (`approval-gate`).
    pub chapter: String,
    /// 1-based line of its start.
    pub line: usize,
    /// Whether the body holds MUST, MUST NOT, SHOULD, SHOULD NOT, SHALL or REQUIRED.
    pub normative: bool,
    /// Struck through: kept for its ID, promises nothing.
    pub withdrawn: bool,
    /// 1-based line of its last line of text.
    pub end_line: usize,
    /// The letters of its parts (`**(a)**` in its text, cited as `ID.a`), in order.
    pub parts: Vec<String>,
    /// Its text after the `**[ID]**` marker, its lines joined by spaces.
    pub text: String,
}

impl Requirement {
    /// The normative keywords its text holds in capitals (inline code left out): what
    /// its level for a certified result is derived from (`crate::checklist`).
    pub fn keywords(&self) -> BTreeSet<String> {
        normative_words(&self.text).into_iter().collect()
    }

    /// Its first sentence, Markdown emphasis and backticks removed, at most `max`
    /// characters (cut at a word, with `...`): the one line a report shows beside the ID.
    pub fn statement(&self, max: usize) -> String {
        let plain: String = self.text.replace("**", "").replace(['`', '~'], "");
        let plain = plain.split_whitespace().collect::<Vec<_>>().join(" ");
        // The first sentence: up to a full stop followed by a space and a capital.
        let mut end = plain.len();
        for (i, _) in plain.match_indices(". ") {
            if plain[i + 2..].starts_with(|c: char| c.is_ascii_uppercase()) {
                end = i + 1;
                break;
            }
        }
        let first = &plain[..end];
        if first.chars().count() <= max {
            return first.to_string();
        }
        let mut cut: String = first.chars().take(max.saturating_sub(3)).collect();
        if let Some(space) = cut.rfind(' ') {
            cut.truncate(space);
        }
        format!("{}...", cut.trim_end_matches([',', ';', ':']))
    }
}

/// A normative keyword found outside any requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// The chapter file name.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The keyword.
    pub word: String,
}

/// Everything the spec defines, and what is wrong with it.
#[derive(Debug, Clone, Default)]
pub struct SpecIndex {
    /// Requirements by ID.
    pub requirements: BTreeMap<String, Requirement>,
    /// Keywords outside requirements.
    pub stray: Vec<Stray>,
    /// IDs defined twice: (id, chapter, line of the second).
    pub duplicates: Vec<(String, String, usize)>,
    /// Chapter stems in order.
    pub chapters: Vec<String>,
}

impl SpecIndex {
    /// The set of defined IDs.
    pub fn ids(&self) -> BTreeSet<String> {
        self.requirements.keys().cloned().collect()
    }

    /// Every ID a scenario may cite: each requirement's, and each of its parts (`ID.a`).
    pub fn citable(&self) -> BTreeSet<String> {
        let mut out = self.ids();
        for r in self.requirements.values() {
            out.extend(r.parts.iter().map(|p| format!("{}.{p}", r.id)));
        }
        out
    }
}

/// Splits a citation into its requirement ID and its part (`PROTO-TRUST-1.b`).
pub fn split_part(cited: &str) -> (&str, Option<&str>) {
    match cited.split_once('.') {
        Some((id, part)) => (id, Some(part)),
        None => (cited, None),
    }
}

/// Whether `s` is a requirement ID or a part of one (`ID.a`, lowercase letters).
pub fn is_citation(s: &str) -> bool {
    match split_part(s) {
        (id, None) => is_requirement_id(id),
        (id, Some(p)) => {
            is_requirement_id(id) && !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase())
        }
    }
}

/// Whether `s` matches `[A-Z]+(-[A-Z0-9]+)+`.
pub fn is_requirement_id(s: &str) -> bool {
    let mut parts = s.split('-');
    let head = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    !head.is_empty()
        && head.bytes().all(|b| b.is_ascii_uppercase())
        && !rest.is_empty()
        && rest.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        })
}

/// Reads every chapter of `dir`.
pub fn load_dir(dir: &Path) -> std::io::Result<SpecIndex> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    let mut index = SpecIndex::default();
    for path in files {
        let text = std::fs::read_to_string(&path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        parse_chapter(&name, &text, &mut index);
    }
    Ok(index)
}

/// Parses one chapter's text into `index`.
pub fn parse_chapter(file: &str, text: &str, index: &mut SpecIndex) {
    let chapter = file.strip_suffix(".md").unwrap_or(file).to_string();
    index.chapters.push(chapter.clone());
    let mut in_fence = false;
    // The requirement being read and the indent of its list marker (None: a paragraph).
    let mut current: Option<(String, Option<usize>)> = None;
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            current = None;
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            current = None;
        }
        let indent = line.len() - trimmed.len();
        let item = list_item_body(trimmed);
        if let Some((_, req_indent)) = &current {
            if item.is_some() && req_indent.map_or(true, |ri| indent <= ri) {
                current = None;
            }
        }
        let content = item.unwrap_or(trimmed);
        if let Some((id, withdrawn)) = requirement_start(content) {
            if index.requirements.contains_key(&id) {
                index.duplicates.push((id.clone(), chapter.clone(), lineno));
            } else {
                index.requirements.insert(
                    id.clone(),
                    Requirement {
                        id: id.clone(),
                        chapter: chapter.clone(),
                        line: lineno,
                        normative: false,
                        withdrawn,
                        end_line: lineno,
                        parts: Vec::new(),
                        text: String::new(),
                    },
                );
            }
            current = Some((id, item.map(|_| indent)));
        }
        let words = normative_words(line);
        match &current {
            Some((id, _)) => {
                if let Some(r) = index.requirements.get_mut(id) {
                    if r.chapter == chapter {
                        r.normative |= !words.is_empty();
                        r.end_line = lineno;
                        r.parts.extend(part_markers(line));
                        let body = match requirement_start(content) {
                            Some(_) => content.split_once("]**").map_or("", |(_, b)| b),
                            None => content,
                        };
                        if !r.text.is_empty() {
                            r.text.push(' ');
                        }
                        r.text.push_str(body.trim());
                    }
                }
            }
            None => index.stray.extend(words.into_iter().map(|word| Stray {
                file: file.to_string(),
                line: lineno,
                word,
            })),
        }
    }
}

/// The text after a list marker (`- `, `* `, `+ `, `1. `), if the line is a list item.
fn list_item_body(trimmed: &str) -> Option<&str> {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(marker) {
            return Some(rest.trim_start());
        }
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &trimmed[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(rest.trim_start());
        }
    }
    None
}

/// `**[ID]**` at the start of `content`: the ID and whether it is struck through.
fn requirement_start(content: &str) -> Option<(String, bool)> {
    let (rest, withdrawn) = match content.strip_prefix("~~") {
        Some(r) => (r, true),
        None => (content, false),
    };
    let rest = rest.strip_prefix("**[")?;
    let end = rest.find("]**")?;
    let id = &rest[..end];
    is_requirement_id(id).then(|| (id.to_string(), withdrawn))
}

/// The part letters marked `**(a)**` on `line`, inline code removed.
pub fn part_markers(line: &str) -> Vec<String> {
    strip_inline_code(line)
        .split("**(")
        .skip(1)
        .filter_map(|rest| {
            let (p, _) = rest.split_once(")**")?;
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase())).then(|| p.to_string())
        })
        .collect()
}

/// Normative keywords in capitals on `line`, inline code removed.
fn normative_words(line: &str) -> Vec<String> {
    strip_inline_code(line)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| NORMATIVE.contains(w))
        .map(str::to_string)
        .collect()
}

/// `line` without its inline code spans (a run of N backticks up to the next run of N).
fn strip_inline_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let ticks = after.len() - after.trim_start_matches('`').len();
        let fence = &after[..ticks];
        let body = &after[ticks..];
        match body.find(fence) {
            Some(end) => rest = &body[end + ticks..],
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> SpecIndex {
        let mut index = SpecIndex::default();
        parse_chapter("gate.md", text, &mut index);
        index
    }

    #[test]
    fn ids() {
        for ok in ["GATE-JAIL-1", "PROTO-WIRE-2", "A-B", "GATE-X1-2"] {
            assert!(is_requirement_id(ok), "{ok}");
        }
        for bad in ["GATE", "gate-x-1", "GATE-", "GATE--1", "GATE-x-1", "-A"] {
            assert!(!is_requirement_id(bad), "{bad}");
        }
    }

    #[test]
    fn list_items_and_paragraphs() {
        let index = parse(
            "# Title\n\n\
             - **[GATE-A-1]** The gate MUST ask.\n\
             - **[GATE-A-2]** The gate may say\n  so over two lines, and SHOULD log.\n\
             - An item that MUST be flagged.\n\n\
             **[GATE-B-1]** A paragraph that explains.\n\n\
             Stray: this MUST be reported, but `MUST` in code is fine.\n\n\
             ```\nMUST in a fence\n```\n\
             ~~**[GATE-C-1]** Withdrawn: MUST nothing.~~\n",
        );
        let r = &index.requirements;
        assert!(r["GATE-A-1"].normative);
        assert!(r["GATE-A-2"].normative);
        assert!(!r["GATE-B-1"].normative);
        assert!(r["GATE-C-1"].withdrawn);
        assert_eq!(r["GATE-A-2"].line, 4);
        let stray: Vec<_> = index
            .stray
            .iter()
            .map(|s| (s.line, s.word.as_str()))
            .collect();
        assert_eq!(stray, vec![(6, "MUST"), (10, "MUST")]);
    }

    #[test]
    fn nested_items_stay_in_the_requirement() {
        let index = parse("- **[GATE-N-1]** The gate:\n  - MUST do one thing;\n  - SHOULD do another.\n- Next item.\n");
        assert!(index.requirements["GATE-N-1"].normative);
        assert!(index.stray.is_empty());
    }

    #[test]
    fn parts_and_the_last_line() {
        let index = parse(
            "- **[GATE-P-1]** The gate MUST **(a)** ask and\n  **(b)** log, not `**(c)**`.\n- next\n",
        );
        let r = &index.requirements["GATE-P-1"];
        assert_eq!(r.parts, vec!["a", "b"]);
        assert_eq!(r.end_line, 2);
        assert!(index.citable().contains("GATE-P-1.b"));
        assert!(!index.citable().contains("GATE-P-1.c"));
        assert!(
            is_citation("GATE-P-1.b") && !is_citation("GATE-P-1.B") && !is_citation("GATE-P-1.")
        );
    }

    #[test]
    fn duplicates_and_inline_code() {
        let index =
            parse("- **[GATE-D-1]** One.\n- **[GATE-D-1]** Two.\n\nUse ``MUST `x` `` here.\n");
        assert_eq!(
            index.duplicates,
            vec![("GATE-D-1".into(), "gate".into(), 2)]
        );
        assert!(index.stray.is_empty());
        assert_eq!(strip_inline_code("a `b` c"), "a  c");
    }

    #[test]
    fn the_protocol_chapter_parses_cleanly() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
        let index = load_dir(&dir).expect("spec dir");
        assert!(index.requirements.contains_key("PROTO-WIRE-1"));
        assert!(index.requirements["PROTO-HELLO-2"].normative);
    }
}
