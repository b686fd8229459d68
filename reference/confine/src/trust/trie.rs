//! Longest whole-segment prefix lookup over one flat table.
//!
//! Every rule is stored once, under a rolling hash of its segments (each segment hashed
//! once, then folded into the hash of the prefix before it), in an open-addressing
//! table. A lookup hashes the key's segments in one pass, keeping the hash of every
//! prefix, then probes from the longest prefix that any rule could have down to the
//! shortest: the first verified hit decides. A hit is verified against the stored bytes
//! of the prefix, so a path crafted to collide with a rule's hash borrows nothing from it.
//! No allocation on lookup for keys up to [`INLINE`] segments deep.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// Key depth handled without allocating.
pub const INLINE: usize = 32;

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(K)
}

/// The hash of one segment's bytes (Fx-style, eight bytes at a time, length folded in).
#[inline]
fn seg_hash(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c); // `chunks_exact(8)`: eight bytes
        h = mix(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // Byte by byte: a variable-length copy would be a `memcpy` call per segment.
        let tail = rest.iter().fold(0u64, |t, b| (t << 8) | u64::from(*b));
        h = mix(h, tail);
    }
    h
}

/// The hash of the prefix `prev` extended by one segment.
#[inline]
fn extend(prev: u64, seg: &[u8]) -> u64 {
    mix(prev ^ 0x9e37_79b9_7f4a_7c15, seg_hash(seg))
}

#[derive(Debug, Clone)]
struct Entry<V> {
    hash: u64,
    depth: u32,
    /// The prefix's segments joined by `/` (a segment never holds `/`).
    bytes: Box<[u8]>,
    value: V,
}

impl<V> Entry<V> {
    #[inline]
    fn is<S: AsRef<OsStr>>(&self, hash: u64, segs: &[S]) -> bool {
        if self.hash != hash || self.depth as usize != segs.len() {
            return false;
        }
        let mut rest: &[u8] = &self.bytes;
        for (i, s) in segs.iter().enumerate() {
            let s = s.as_ref().as_bytes();
            if i > 0 {
                match rest.split_first() {
                    Some((b'/', r)) => rest = r,
                    _ => return false,
                }
            }
            // Segments are short: a byte loop beats a `memcmp` call per segment.
            if rest.len() < s.len() || !rest.iter().zip(s).all(|(a, b)| a == b) {
                return false;
            }
            rest = &rest[s.len()..];
        }
        rest.is_empty()
    }
}

/// The rules of one namespace: the value at exactly a prefix, longest prefix lookup.
#[derive(Debug, Clone)]
pub struct Trie<V> {
    /// The empty prefix's value.
    root: Option<V>,
    entries: Vec<Entry<V>>,
    /// Index + 1 into `entries`; 0 is empty. Length a power of two.
    slots: Vec<u32>,
    /// Bit `d - 1` set when some rule is `d` segments deep (`d` up to 64; deeper rules
    /// set bit 63 and are always probed).
    depths: u64,
    max_depth: usize,
}

impl<V: Copy> Default for Trie<V> {
    fn default() -> Self {
        Trie::new()
    }
}

impl<V: Copy> Trie<V> {
    /// An empty table.
    pub fn new() -> Self {
        Trie {
            root: None,
            entries: Vec::new(),
            slots: Vec::new(),
            depths: 0,
            max_depth: 0,
        }
    }

    #[inline]
    fn slot_of(&self, hash: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        ((hash.wrapping_mul(K) >> 32) as usize ^ (hash >> (64 - bits.max(1))) as usize)
            & (self.slots.len() - 1)
    }

    fn find<S: AsRef<OsStr>>(&self, hash: u64, segs: &[S]) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(hash);
        loop {
            match self.slots[i] {
                0 => return None,
                n => {
                    let e = &self.entries[n as usize - 1];
                    if e.is(hash, segs) {
                        return Some(n as usize - 1);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    fn place(&mut self, idx: usize) {
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(self.entries[idx].hash);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = idx as u32 + 1;
    }

    fn hash_of<S: AsRef<OsStr>>(segs: &[S]) -> u64 {
        segs.iter().fold(0, |h, s| extend(h, s.as_ref().as_bytes()))
    }

    /// Sets the value at exactly `segments`, replacing any earlier one.
    pub fn insert<S: AsRef<OsStr>>(&mut self, segments: &[S], value: V) {
        if segments.is_empty() {
            self.root = Some(value);
            return;
        }
        let hash = Self::hash_of(segments);
        if let Some(i) = self.find(hash, segments) {
            self.entries[i].value = value;
            return;
        }
        let mut bytes = Vec::new();
        for (i, s) in segments.iter().enumerate() {
            if i > 0 {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(s.as_ref().as_bytes());
        }
        self.entries.push(Entry {
            hash,
            depth: segments.len() as u32,
            bytes: bytes.into_boxed_slice(),
            value,
        });
        let d = segments.len();
        self.depths |= 1u64 << (d.min(64) - 1);
        self.max_depth = self.max_depth.max(d);
        if self.entries.len() * 2 > self.slots.len() {
            let cap = (self.entries.len() * 4).next_power_of_two().max(16);
            self.slots = vec![0; cap];
            for i in 0..self.entries.len() {
                self.place(i);
            }
        } else {
            self.place(self.entries.len() - 1);
        }
    }

    /// The value at the longest prefix of `segments` that has one.
    #[inline]
    pub fn longest<S: AsRef<OsStr>>(&self, segments: &[S]) -> Option<V> {
        let n = segments.len().min(self.max_depth);
        if n == 0 {
            return self.root;
        }
        let mut inline = [0u64; INLINE];
        let mut heap = Vec::new();
        let hashes: &mut [u64] = if n <= INLINE {
            &mut inline[..n]
        } else {
            heap.resize(n, 0);
            &mut heap
        };
        let mut h = 0;
        for (slot, s) in hashes.iter_mut().zip(segments) {
            h = extend(h, s.as_ref().as_bytes());
            *slot = h;
        }
        for d in (1..=n).rev() {
            if d <= 63 && self.depths & (1u64 << (d - 1)) == 0 {
                continue;
            }
            if let Some(i) = self.find(hashes[d - 1], &segments[..d]) {
                return Some(self.entries[i].value);
            }
        }
        self.root
    }

    /// The value set exactly at `segments`.
    pub fn exact<S: AsRef<OsStr>>(&self, segments: &[S]) -> Option<V> {
        if segments.is_empty() {
            return self.root;
        }
        self.find(Self::hash_of(segments), segments)
            .map(|i| self.entries[i].value)
    }

    /// Every (prefix, value), in no particular order.
    pub fn entries(&self) -> Vec<(Vec<OsString>, V)> {
        let mut out: Vec<(Vec<OsString>, V)> = Vec::with_capacity(self.entries.len() + 1);
        if let Some(v) = self.root {
            out.push((Vec::new(), v));
        }
        out.extend(self.entries.iter().map(|e| {
            (
                e.bytes
                    .split(|b| *b == b'/')
                    .map(|s| OsStr::from_bytes(s).to_owned())
                    .collect(),
                e.value,
            )
        }));
        out
    }

    /// Whether no value is set anywhere.
    pub fn is_empty(&self) -> bool {
        self.root.is_none() && self.entries.is_empty()
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
        t.longest(&segs(s))
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
        t.insert(&segs(""), 9);
        assert_eq!(look(&t, "x"), Some(9));
        assert_eq!(t.entries().len(), 3);
    }

    #[test]
    fn joined_bytes_never_confuse_segment_boundaries() {
        let mut t = Trie::new();
        t.insert(&segs("a/b"), 1);
        // One segment `a/b` cannot exist, but `ab` and `a`,`b` must stay apart.
        assert_eq!(look(&t, "ab"), None);
        assert_eq!(look(&t, "a/bc"), None);
        assert_eq!(look(&t, "a/b/c"), Some(1));
    }

    #[test]
    fn many_rules_and_deep_keys() {
        let mut t = Trie::new();
        for i in 0..5000u32 {
            t.insert(&segs(&format!("d/{i}")), (i % 251) as u8);
        }
        for i in (0..5000u32).step_by(7) {
            assert_eq!(look(&t, &format!("d/{i}/x/y")), Some((i % 251) as u8));
        }
        assert_eq!(look(&t, "d/5000"), None);
        let deep = vec!["z"; 80].join("/");
        t.insert(&segs(&deep), 7);
        assert_eq!(look(&t, &format!("{deep}/q")), Some(7));
        assert_eq!(t.exact(&segs(&deep)), Some(7));
    }
}
