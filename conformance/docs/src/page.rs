//! The frame every HTML page shares (head, navigation, the search box), HTML escaping,
//! and the two static assets: the style sheet and the search script. The search is a
//! few lines of plain JavaScript over an index the site writes as a script file
//! (`assets/search-index.js`), so that it works offline and from `file://`, where a
//! page may not fetch a JSON file.

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `../` repeated `depth` times: the way from a page back to the site's root.
pub fn up(depth: usize) -> String {
    "../".repeat(depth)
}

/// A whole page: `title`, the page's depth below the root, and its body.
pub fn page(title: &str, depth: usize, body: &str) -> String {
    let up = up(depth);
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Gatehouse specification</title>
<link rel="stylesheet" href="{up}assets/site.css">
</head>
<body>
<header class="top">
<a class="home" href="{up}index.html">Gatehouse specification</a>
<nav><a href="{up}index.html#chapters">chapters</a> <a href="{up}index.html#requirements">requirements</a> <a href="{up}index.html#implementations">implementations</a> <a href="{up}known-attacks.html">known attacks</a> <a href="{up}asi.html">ASI map</a> <a href="{up}history.html">history</a></nav>
<div class="search"><input id="q" type="search" placeholder="Search IDs, titles, text" autocomplete="off" aria-label="search"><ol id="hits"></ol></div>
</header>
<main>
{body}
</main>
<script>window.GATEHOUSE_ROOT = "{up}";</script>
<script src="{up}assets/search-index.js"></script>
<script src="{up}assets/search.js"></script>
</body>
</html>
"#,
        title = esc(title),
    )
}

/// The style sheet.
pub const CSS: &str = r#"body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #fff; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
header.top { position: sticky; top: 0; background: #24292f; color: #fff; display: flex; gap: 1.5rem; align-items: center; padding: .5rem 1.5rem; z-index: 2; }
header.top a { color: #fff; text-decoration: none; margin-right: .8rem; }
header.top .home { font-weight: 600; }
.search { position: relative; margin-left: auto; }
.search input { width: 18rem; padding: .25rem .5rem; border-radius: 4px; border: 0; }
#hits { position: absolute; right: 0; top: 2rem; width: 32rem; max-height: 70vh; overflow: auto; background: #fff; color: #1b1f24; list-style: none; margin: 0; padding: 0; box-shadow: 0 4px 16px #0004; }
#hits li a { display: block; padding: .3rem .6rem; color: #0550ae; border-bottom: 1px solid #eee; }
#hits li small { color: #57606a; display: block; }
code, pre { font: 13px/1.45 ui-monospace, monospace; background: #f6f8fa; }
pre { padding: .5rem .75rem; overflow-x: auto; border-radius: 4px; }
a.req-id { font-weight: 700; color: #8250df; text-decoration: none; }
strong.part { color: #8250df; }
table { border-collapse: collapse; margin: .5rem 0; }
td:first-child { white-space: nowrap; }
td, th { border: 1px solid #d0d7de; padding: .2rem .5rem; text-align: left; vertical-align: top; }
.cases { border-left: 3px solid #d0d7de; margin: .5rem 0 1rem; padding: 0 0 0 .8rem; font-size: 15px; }
.cases > p.none { color: #57606a; font-style: italic; }
.untestable { color: #6e4c00; background: #fff8c5; padding: .2rem .5rem; }
details.scenario { margin: .3rem 0; }
details.scenario > summary { cursor: pointer; }
.case { border: 1px solid #d0d7de; border-radius: 6px; padding: .4rem .7rem; margin: .4rem 0; }
.case.refusal { border-left: 4px solid #cf222e; }
.case.allowed { border-left: 4px solid #1a7f37; }
.case.compact { padding: .15rem .6rem; margin: .2rem 0; font-size: 14px; }
.case h4 { margin: 0 0 .2rem; font-size: 15px; }
.kind { font-size: 12px; padding: 0 .4rem; border-radius: 8px; background: #eaeef2; }
.refusal .kind { background: #ffebe9; }
.allowed .kind { background: #dafbe1; }
.info { color: #3d444d; }
.note { color: #57606a; font-size: 14px; }
.badge { font-size: 12px; padding: 0 .35rem; border-radius: 4px; margin-right: .25rem; white-space: nowrap; }
.passed { background: #dafbe1; } .failed { background: #ffebe9; } .skipped { background: #eaeef2; } .errored { background: #fff8c5; }
.diff-safety { color: #cf222e; } .diff-exactness { color: #9a6700; }
ul.checks { margin: .2rem 0; }
"#;

/// The search: matches every word typed against each entry's text, IDs first.
pub const JS: &str = r#"(function () {
  var index = window.GATEHOUSE_INDEX || [];
  var root = window.GATEHOUSE_ROOT || "";
  var q = document.getElementById("q"), hits = document.getElementById("hits");
  if (!q || !hits) return;
  q.addEventListener("input", function () {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    hits.innerHTML = "";
    if (!words.length) return;
    var found = [];
    for (var i = 0; i < index.length && found.length < 40; i++) {
      var e = index[i], hay = (e.id + " " + e.title + " " + e.text).toLowerCase();
      if (words.every(function (w) { return hay.indexOf(w) >= 0; })) {
        found.push([e.id.toLowerCase().indexOf(words[0]) === 0 ? 0 : 1, e]);
      }
    }
    found.sort(function (a, b) { return a[0] - b[0]; });
    found.forEach(function (f) {
      var li = document.createElement("li"), a = document.createElement("a"), s = document.createElement("small");
      a.href = root + f[1].url;
      a.textContent = f[1].id + ": " + f[1].title;
      s.textContent = f[1].kind;
      a.appendChild(s); li.appendChild(a); hits.appendChild(li);
    });
  });
})();
"#;
