//! `--filter`: a substring of the scenario id, or a glob (`*`, `?`) over the whole id.

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
}
