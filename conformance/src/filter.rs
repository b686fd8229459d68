//! `--filter`: a substring of the scenario id, or a glob (`*`, `?`) over the whole id; a
//! pattern that is exactly one scenario's id selects that scenario alone (the rerun
//! command a failure prints relies on it).

/// The items `pattern` selects, `id` giving each one's scenario id.
pub fn select<T>(pattern: &str, items: Vec<T>, id: impl Fn(&T) -> &str) -> Vec<T> {
    let exact = items.iter().any(|s| id(s) == pattern);
    items
        .into_iter()
        .filter(|s| {
            if exact {
                id(s) == pattern
            } else {
                matches(pattern, id(s))
            }
        })
        .collect()
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

    #[test]
    fn an_exact_id_selects_that_scenario_alone() {
        let ids = vec!["gate/read", "gate/read-list", "paths/read"];
        assert_eq!(
            super::select("gate/read", ids.clone(), |s| s),
            vec!["gate/read"]
        );
        assert_eq!(
            super::select("read", ids.clone(), |s| s),
            vec!["gate/read", "gate/read-list", "paths/read"]
        );
        assert_eq!(
            super::select("gate/*", ids, |s| s),
            vec!["gate/read", "gate/read-list"]
        );
    }
}
