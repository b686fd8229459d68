//! `--filter` and `--exclude`: a substring of the scenario id, or a glob (`*`, `?`) over
//! the whole id; a pattern that is exactly one scenario's id selects that scenario alone
//! (the rerun command a failure prints relies on it). Both flags repeat: a scenario runs
//! when any filter selects it (all do when none is given) and no exclude does. A pattern
//! that selects nothing is an error naming it, and so are patterns that together leave
//! nothing (a filter the excludes undo), so that a typo cannot turn a CI job green by
//! running nothing.

/// A selection that runs nothing: a `--filter` or `--exclude` pattern that selects no
/// scenario, or patterns that each select some but together leave none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unmatched {
    /// One pattern selects no scenario.
    #[error("{flag} {pattern}: matches no scenario (ids look like `gate/read-list`; a pattern is a substring or a glob with * and ?)")]
    Pattern {
        /// `--filter` or `--exclude`.
        flag: &'static str,
        /// The pattern as given.
        pattern: String,
    },
    /// The excludes drop every scenario the filters select.
    #[error(
        "{0}: together they select no scenario (the excludes drop every one the filters select)"
    )]
    Nothing(String),
}

/// The items the `filters` select (every item when there is none) minus those the
/// `excludes` select, in their order; the first pattern of either kind that selects
/// nothing among all the items is an error.
pub fn select_all<T>(
    filters: &[String],
    excludes: &[String],
    items: Vec<T>,
    id: impl Fn(&T) -> &str,
) -> Result<Vec<T>, Unmatched> {
    let ids: Vec<&str> = items.iter().map(&id).collect();
    let picks = |pattern: &str| -> Vec<bool> {
        let exact = ids.contains(&pattern);
        ids.iter()
            .map(|i| {
                if exact {
                    *i == pattern
                } else {
                    matches(pattern, i)
                }
            })
            .collect()
    };
    let mut keep = vec![filters.is_empty(); ids.len()];
    // Every filter before every exclude: what a pattern picks is kept (a filter) or
    // dropped (an exclude), so an exclude always has the last word.
    for (flag, patterns, kept) in [("--filter", filters, true), ("--exclude", excludes, false)] {
        for pattern in patterns {
            let picked = picks(pattern);
            if !picked.contains(&true) {
                return Err(Unmatched::Pattern {
                    flag,
                    pattern: pattern.clone(),
                });
            }
            for (k, p) in keep.iter_mut().zip(picked) {
                if p {
                    *k = kept;
                }
            }
        }
    }
    if !ids.is_empty() && !keep.contains(&true) {
        let flags: Vec<String> = [("--filter", filters), ("--exclude", excludes)]
            .iter()
            .flat_map(|(flag, ps)| ps.iter().map(move |p| format!("{flag} {p}")))
            .collect();
        return Err(Unmatched::Nothing(flags.join(" ")));
    }
    Ok(items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, k)| k.then_some(item))
        .collect())
}

/// Whether scenario `id` is selected by `pattern`.
pub fn matches(pattern: &str, id: &str) -> bool {
    if pattern.contains(['*', '?']) {
        glob(pattern.as_bytes(), id.as_bytes())
    } else {
        id.contains(pattern)
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    // Iterative matcher with one backtrack point for the last `*`.
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn substrings_and_globs() {
        assert!(matches("read", "gate/read-list"));
        assert!(!matches("write", "gate/read-list"));
        assert!(matches("gate/*", "gate/read-list"));
        assert!(matches("*list", "gate/read-list"));
        assert!(matches("gate/r?ad-*", "gate/read-list"));
        assert!(!matches("read*", "gate/read-list"));
        assert!(matches("*a*e*", "gate/read-list"));
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn filters_add_up_excludes_take_away_and_a_pattern_that_selects_nothing_is_named() {
        let ids = vec!["gate/read", "gate/read-list", "paths/read", "fence/tty"];
        let pick = |f: &[&str], x: &[&str]| {
            super::select_all(&strings(f), &strings(x), ids.clone(), |s| s)
        };
        assert_eq!(pick(&[], &[]), Ok(ids.clone()));
        assert_eq!(
            pick(&["gate/read", "fence/"], &[]),
            Ok(vec!["gate/read", "fence/tty"])
        );
        assert_eq!(pick(&["read"], &["paths/", "*list"]), Ok(vec!["gate/read"]));
        assert_eq!(pick(&[], &["gate/"]), Ok(vec!["paths/read", "fence/tty"]));
        let err = pick(&["gate/", "gate/nonexistent"], &[]).unwrap_err();
        assert_eq!(
            err,
            super::Unmatched::Pattern {
                flag: "--filter",
                pattern: "gate/nonexistent".into()
            }
        );
        assert!(err
            .to_string()
            .starts_with("--filter gate/nonexistent: matches no scenario"));
        let err = pick(&[], &["fence/ttyy"]).unwrap_err();
        assert_eq!(
            err,
            super::Unmatched::Pattern {
                flag: "--exclude",
                pattern: "fence/ttyy".into()
            }
        );
    }

    #[test]
    fn excludes_that_undo_every_filter_select_nothing_and_say_so() {
        let ids = vec!["gate/tilde", "gate/read", "paths/read"];
        let pick = |f: &[&str], x: &[&str]| {
            super::select_all(&strings(f), &strings(x), ids.clone(), |s| s)
        };
        let err = pick(&["gate/tilde"], &["gate/"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--filter gate/tilde --exclude gate/: together they select no scenario (the excludes drop every one the filters select)"
        );
        assert!(pick(&[], &["gate/", "paths/"]).is_err());
        assert_eq!(pick(&["gate/"], &["gate/read"]), Ok(vec!["gate/tilde"]));
    }

    #[test]
    fn an_exact_id_selects_that_scenario_alone() {
        let ids = vec!["gate/read", "gate/read-list", "paths/read"];
        let select = |p: &str| super::select_all(&strings(&[p]), &[], ids.clone(), |s| s).unwrap();
        assert_eq!(select("gate/read"), vec!["gate/read"]);
        assert_eq!(
            select("read"),
            vec!["gate/read", "gate/read-list", "paths/read"]
        );
        assert_eq!(select("gate/*"), vec!["gate/read", "gate/read-list"]);
    }
}
