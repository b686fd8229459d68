//! `gatehouse-conform docs` (the crate `gatehouse-conform-docs`): the specification as a
//! site a reviewer reads, after CommonMark's spec (every example beside the paragraph it
//! illustrates, with a stable anchor) and Bowtie's site (a page per implementation with
//! each failing case).
//!
//! The inputs are `spec/` (the chapters, `untestable.toml`), `scenarios/` and the
//! canonical JSON reports; the output is a static site (HTML, one style sheet, a small
//! search script over a generated index, no framework) and the same pages in Markdown
//! under `md/`. Each concern has its module: the reports ([`reports`]), a scenario read as
//! a person reads it ([`cases`]), a chapter with its cases ([`chapter`]), a page per
//! implementation ([`implementations`]) with its failures grouped ([`failures`]), the
//! index and the search ([`index`]), a scenario's pill ([`pill`]), the frame and assets
//! ([`page`]), Markdown ([`markdown`]), the badges, history and diffs ([`history`]) and
//! the check of what was written ([`verify`]); the known attacks of
//! `spec/public-record.toml` ([`known_attacks`]) and the OWASP agentic risks of
//! `spec/asi.toml` ([`asi_map`]), each a page with its own check, and the line on each
//! scenario's page and requirement naming the classes and risks it belongs to ([`tags`]);
//! the command as the binary calls it ([`command`]).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod asi_map;
mod cases;
mod chapter;
pub mod command;
mod error;
mod failures;
mod history;
mod implementations;
mod index;
mod known_attacks;
mod markdown;
mod page;
mod pill;
mod reports;
mod tags;
mod verify;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use error::DocsError;

use gatehouse_conform_core::scenario::Scenario;
use gatehouse_conform_core::spec::SpecIndex;
use gatehouse_conform_core::trace::Trace;

/// Everything the site is made from.
pub struct Inputs<'a> {
    /// The repository's root (links to source files are made from it).
    pub root: &'a Path,
    /// The spec directory.
    pub spec_dir: &'a Path,
    /// The spec as parsed.
    pub spec: &'a SpecIndex,
    /// The scenarios, validated.
    pub scenarios: &'a [Scenario],
    /// The scenarios directory.
    pub scenario_dir: &'a Path,
    /// The trace over them.
    pub trace: &'a Trace,
    /// The implementations and their reports.
    pub impls: &'a reports::Implementations,
    /// Where source links go: a URL prefix (`https://host/owner/repo/blob/REV/`, a line
    /// anchor `#L12` added), or `None`: relative paths from the output to the checkout.
    pub source_url: Option<&'a str>,
}

/// The site: each file's path under the output directory and its text.
pub struct Site {
    /// Path → contents.
    pub files: BTreeMap<PathBuf, String>,
}

/// Builds every page.
pub fn build(i: &Inputs<'_>, out: &Path) -> Result<Site, DocsError> {
    let mut files = BTreeMap::new();
    let rel_root = relative_root(out, i.root);
    let source = |path: &str, line: usize| -> String {
        let path = path.trim_start_matches("./");
        match i.source_url {
            Some(url) if line > 0 => format!("{url}{path}#L{line}"),
            Some(url) => format!("{url}{path}"),
            None => format!("{rel_root}{path}"),
        }
    };
    // Pages one level down (spec/, implementations/) reach the root with one `../` more.
    let source_from_1 = |path: &str, line: usize| -> String {
        let s = source(path, line);
        if i.source_url.is_some() {
            s
        } else {
            format!("../{s}")
        }
    };
    let mut views = BTreeMap::new();
    for s in i.scenarios {
        let path = i.scenario_dir.join(format!("{}.toml", s.id));
        let text = std::fs::read_to_string(&path).map_err(|source| DocsError::Read {
            path: path.clone(),
            source,
        })?;
        views.insert(s.id.clone(), cases::View::new(s, &text)?);
    }
    let ids: BTreeMap<String, String> = i
        .spec
        .requirements
        .values()
        .map(|r| (r.id.clone(), r.chapter.clone()))
        .collect();
    let lists = tags::Lists {
        classes: known_attacks::load(i.spec_dir)?,
        asi: asi_map::load(i.spec_dir)?,
    };
    let cx = chapter::Context {
        lists: &lists,
        requirements: &i.spec.requirements,
        traced: &i.trace.requirements,
        views: &views,
        impls: i.impls,
        chapters: &i.spec.chapters,
        ids: &ids,
        source: &source_from_1,
    };
    let mut texts = BTreeMap::new();
    for stem in &i.spec.chapters {
        let path = i.spec_dir.join(format!("{stem}.md"));
        let text = std::fs::read_to_string(&path).map_err(|source| DocsError::Read {
            path: path.clone(),
            source,
        })?;
        let (html, md) = chapter::render(&cx, stem, &text);
        let title = text
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .unwrap_or(stem)
            .to_string();
        files.insert(
            PathBuf::from(format!("spec/{stem}.html")),
            page::page(&title, 1, &html),
        );
        files.insert(PathBuf::from(format!("md/spec/{stem}.md")), md);
        texts.insert(stem.clone(), text);
    }
    for (id, view) in &views {
        let depth = id.matches('/').count() + 1;
        let links = cases::Links {
            up: page::up(depth),
            source: &|p: &str, l: usize| {
                let s = source(p, l);
                if i.source_url.is_some() {
                    s
                } else {
                    format!("{}{s}", page::up(depth))
                }
            },
        };
        let body = index::scenario_page(view, &ids, i.impls, &links, &lists);
        files.insert(
            PathBuf::from(view.page_path()),
            page::page(&view.scenario.title, depth, &body),
        );
    }
    for col in &i.impls.columns {
        let (html, md) = implementations::render(col, &views, &ids);
        files.insert(
            PathBuf::from(format!("implementations/{}.html", col.label)),
            page::page(&format!("Implementation {}", col.label), 1, &html),
        );
        files.insert(
            PathBuf::from(format!("md/implementations/{}.md", col.label)),
            md,
        );
    }
    files.extend(known_attacks::pages(&lists.classes, &views, &ids, i.impls));
    files.extend(asi_map::pages(&lists.asi, i.spec, i.trace, i.impls));
    files.extend(history::render(i.root, i.impls));
    let (home, home_md) = index::home(i.spec, i.trace, i.impls, &texts);
    files.insert(PathBuf::from("index.html"), page::page("Index", 0, &home));
    files.insert(PathBuf::from("md/index.md"), home_md);
    files.insert(
        PathBuf::from("assets/search-index.js"),
        index::search_index(i.spec, &views, i.impls, &texts),
    );
    files.insert(PathBuf::from("assets/search.js"), page::JS.to_string());
    files.insert(PathBuf::from("assets/site.css"), page::CSS.to_string());
    Ok(Site { files })
}

impl Site {
    /// Writes every file under `out` (made if missing; files already there and not part
    /// of the site are left alone).
    pub fn write(&self, out: &Path) -> Result<(), DocsError> {
        for (rel, text) in &self.files {
            let path = out.join(rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|source| DocsError::Write {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
            std::fs::write(&path, text).map_err(|source| DocsError::Write { path, source })?;
        }
        Ok(())
    }

    /// The total size in bytes.
    pub fn bytes(&self) -> usize {
        self.files.values().map(String::len).sum()
    }
}

/// Checks the known-attacks page and the ASI map as written (their modules'
/// `problems`), from the lists in `spec_dir`, and that every scenario page and requirement
/// of `spec` names the classes and risks it belongs to ([`tags::problems`]).
pub fn check_lists(
    out: &Path,
    spec_dir: &Path,
    spec: &SpecIndex,
    scenarios: &[Scenario],
) -> Result<(), DocsError> {
    let lists = tags::Lists {
        classes: known_attacks::load(spec_dir)?,
        asi: asi_map::load(spec_dir)?,
    };
    let mut p = known_attacks::problems(out, &lists.classes, scenarios);
    p.extend(asi_map::problems(out, &lists.asi));
    let chapters: BTreeMap<String, String> = spec
        .requirements
        .values()
        .map(|r| (r.id.clone(), r.chapter.clone()))
        .collect();
    p.extend(tags::problems(out, &lists, scenarios, &chapters));
    if p.is_empty() {
        Ok(())
    } else {
        Err(DocsError::Incomplete(p))
    }
}

/// Checks the written site (see [`verify`]).
pub fn check(
    out: &Path,
    spec: &SpecIndex,
    impls: &reports::Implementations,
) -> Result<(), DocsError> {
    let labels: Vec<String> = impls.columns.iter().map(|c| c.label.clone()).collect();
    verify::check(out, spec, &labels)
}

/// The way from the output directory up to the repository's root (`../../`), for
/// source links that work in a checkout; absolute when the two share no prefix.
fn relative_root(out: &Path, root: &Path) -> String {
    let abs = |p: &Path| {
        std::fs::canonicalize(p).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        })
    };
    let (out, root) = (abs(out), abs(root));
    let common = out
        .components()
        .zip(root.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return format!("{}/", root.display());
    }
    let ups = out.components().count() - common;
    let mut s = "../".repeat(ups);
    for c in root.components().skip(common) {
        s += &format!("{}/", c.as_os_str().to_string_lossy());
    }
    s
}
