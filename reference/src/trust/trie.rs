//! A segment trie: longest whole-segment prefix lookup in O(depth) hash probes.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};

use super::fxhash::FxBuild;

/// One node; `rule` is the value set exactly at this prefix.
#[derive(Debug, Clone)]
pub struct Trie<V> {
    rule: Option<V>,
    children: HashMap<OsString, Trie<V>, FxBuild>,
}

impl<V: Copy> Default for Trie<V> {
    fn default() -> Self {
        Trie::new()
    }
}

impl<V: Copy> Trie<V> {
    /// An empty trie.
    pub fn new() -> Self {
        Trie {
            rule: None,
            children: HashMap::default(),
        }
    }

    /// Sets the value at exactly `segments`, replacing any earlier one.
    pub fn insert(&mut self, segments: &[OsString], value: V) {
        let mut node = self;
        for s in segments {
            node = node.children.entry(s.clone()).or_default();
        }
        node.rule = Some(value);
    }

    /// The value at the longest prefix of `segments` that has one.
    #[inline]
    pub fn longest<'a, I>(&self, segments: I) -> Option<V>
    where
        I: IntoIterator<Item = &'a OsStr>,
    {
        let mut node = self;
        let mut best = node.rule;
        for s in segments {
            match node.children.get(s) {
                Some(next) => {
                    node = next;
                    if node.rule.is_some() {
                        best = node.rule;
                    }
                }
                None => break,
            }
        }
        best
    }

    /// The value set exactly at `segments`.
    pub fn exact(&self, segments: &[OsString]) -> Option<V> {
        let mut node = self;
        for s in segments {
            node = node.children.get(s.as_os_str())?;
        }
        node.rule
    }

    /// Every (prefix, value), in no particular order.
    pub fn entries(&self) -> Vec<(Vec<OsString>, V)> {
        let mut out = Vec::new();
        let mut stack = vec![(Vec::new(), self)];
        while let Some((prefix, node)) = stack.pop() {
            if let Some(v) = node.rule {
                out.push((prefix.clone(), v));
            }
            for (name, child) in &node.children {
                let mut p = prefix.clone();
                p.push(name.clone());
                stack.push((p, child));
            }
        }
        out
    }

    /// Whether no value is set anywhere.
    pub fn is_empty(&self) -> bool {
        self.rule.is_none() && self.children.values().all(Trie::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(s: &str) -> Vec<OsString> {
        s.split('/')
            .filter(|x| !x.is_empty())
            .map(OsString::from)
            .collect()
    }
    fn look(t: &Trie<u8>, s: &str) -> Option<u8> {
        t.longest(segs(s).iter().map(|x| x.as_os_str()))
    }

    #[test]
    fn longest_whole_segment_prefix_wins() {
        let mut t = Trie::new();
        t.insert(&segs("w/proj"), 1);
        t.insert(&segs("w/proj/vendor"), 2);
        assert_eq!(look(&t, "w/proj/a"), Some(1));
        assert_eq!(look(&t, "w/proj/vendor/x"), Some(2));
        assert_eq!(look(&t, "w/proj_evil/a"), None);
        assert_eq!(look(&t, "w"), None);
        t.insert(&segs("w/proj"), 3);
        assert_eq!(look(&t, "w/proj"), Some(3));
        assert_eq!(t.entries().len(), 2);
    }
}
