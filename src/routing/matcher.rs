//! Finds lexicon cues in a normalized request in one pass: a byte trie
//! walked from every word start (and every character of scripts written
//! without spaces), leftmost-longest and non-overlapping, so "who wrote"
//! wins over "wrote" and "remind me how" over "remind".

use super::text::is_cjk;

const NONE: u16 = u16::MAX;

/// One cue found in the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    /// Index into the lexicon's entries.
    pub entry: u16,
    /// Word position (a character of an unspaced script counts as a word).
    pub word: u16,
    /// Sentence number (`|` markers).
    pub sentence: u16,
    /// Word position within its sentence, from 1.
    pub in_sentence: u16,
    /// Byte offset in the normalized text.
    pub start: u32,
}

/// A node while the trie is built.
#[derive(Default)]
struct BuildNode {
    /// Sorted by byte.
    edges: Vec<(u8, u32)>,
    whole_word: u16,
    prefix: u16,
}

pub(crate) struct Trie {
    building: Vec<BuildNode>,
    /// First-byte dispatch into `packed`; 0 means no pattern starts with
    /// that byte.
    root: [u32; 256],
    /// The frozen trie, one node after another so a node and its edges
    /// share a cache line: `[whole_word | prefix << 16, edge count, edges…]`
    /// where an edge is `byte << 24 | offset of the child`. The entry
    /// slots hold `NONE` when empty.
    packed: Vec<u32>,
    /// A bit per hashed three-byte opening of the patterns (padded with a
    /// space, as a word boundary reads): most words of a request open no
    /// pattern and skip the walk after one lookup in these 4 KiB.
    openings: Vec<u64>,
    /// First bytes with a one-byte pattern (`#`, `k`), never gated.
    single_byte: [bool; 256],
}

const OPENING_BITS: usize = 1 << 15;

/// The opening of `bytes` at `start`: up to three bytes, a space past the end.
fn opening_bit(bytes: &[u8], start: usize) -> usize {
    let at = |k: usize| bytes.get(start + k).copied().unwrap_or(b' ');
    let key = u32::from(at(0)) | u32::from(at(1)) << 8 | u32::from(at(2)) << 16;
    (key.wrapping_mul(0x9E37_79B1) >> 17) as usize % OPENING_BITS
}

impl Trie {
    pub fn new() -> Self {
        Trie {
            // Node 0 is a placeholder so that 0 can mean "none" in `root`.
            building: vec![BuildNode::default()],
            root: [0; 256],
            packed: Vec::new(),
            openings: vec![0; OPENING_BITS / 64],
            single_byte: [false; 256],
        }
    }

    /// Adds a normalized pattern; a later pattern with the same text and
    /// kind replaces an earlier one (the lexicon's tests forbid that).
    pub fn insert(&mut self, pattern: &str, prefix: bool, entry: u16) {
        let bytes = pattern.as_bytes();
        let Some((&first, rest)) = bytes.split_first() else {
            return;
        };
        let mut node = match self.root[first as usize] {
            0 => {
                let id = self.push_node();
                self.root[first as usize] = id;
                id
            }
            id => id,
        };
        for &b in rest {
            let edges = &self.building[node as usize].edges;
            node = match edges.binary_search_by_key(&b, |e| e.0) {
                Ok(k) => edges[k].1,
                Err(k) => {
                    let id = self.push_node();
                    self.building[node as usize].edges.insert(k, (b, id));
                    id
                }
            };
        }
        // A whole-word pattern of two bytes opens with them and a space; a
        // shorter one, or a short prefix pattern, cannot be gated this way.
        if bytes.len() == 1 || (prefix && bytes.len() < 3) {
            self.single_byte[first as usize] = true;
        } else {
            let bit = opening_bit(bytes, 0);
            self.openings[bit / 64] |= 1 << (bit % 64);
        }
        let ends_unspaced = pattern.chars().last().is_some_and(is_cjk);
        let slot = &mut self.building[node as usize];
        if prefix || ends_unspaced {
            slot.prefix = entry;
        } else {
            slot.whole_word = entry;
        }
    }

    fn push_node(&mut self) -> u32 {
        self.building.push(BuildNode {
            edges: Vec::new(),
            whole_word: NONE,
            prefix: NONE,
        });
        (self.building.len() - 1) as u32
    }

    /// Lays the nodes out flat for scanning, breadth first (a node's
    /// children sit together); no insert after this.
    pub fn freeze(&mut self) {
        let building = std::mem::take(&mut self.building);
        let mut offsets = vec![0u32; building.len()];
        let mut order: Vec<u32> = Vec::with_capacity(building.len());
        order.extend(self.root.iter().copied().filter(|&id| id != 0));
        let mut next = 0;
        while next < order.len() {
            let id = order[next] as usize;
            next += 1;
            order.extend(building[id].edges.iter().map(|&(_, child)| child));
        }
        let mut offset = 0u32;
        for &id in &order {
            offsets[id as usize] = offset;
            offset += 2 + building[id as usize].edges.len() as u32;
        }
        debug_assert!(offset < 1 << 24, "the trie outgrew its 24-bit offsets");
        self.packed = Vec::with_capacity(offset as usize);
        for &id in &order {
            let node = &building[id as usize];
            self.packed
                .push(u32::from(node.whole_word) | u32::from(node.prefix) << 16);
            self.packed.push(node.edges.len() as u32);
            for &(b, child) in &node.edges {
                self.packed
                    .push(u32::from(b) << 24 | offsets[child as usize]);
            }
        }
        for slot in self.root.iter_mut().filter(|slot| **slot != 0) {
            // Offsets start at 0 for the first node; keep 0 meaning "none".
            *slot = offsets[*slot as usize] + 1;
        }
    }

    /// The longest pattern starting at `start`: (entry, end byte).
    fn longest(&self, bytes: &[u8], start: usize) -> Option<(u16, usize)> {
        if !self.single_byte[bytes[start] as usize] {
            let bit = opening_bit(bytes, start);
            if self.openings[bit / 64] & (1 << (bit % 64)) == 0 {
                return None;
            }
        }
        let mut node = match self.root[bytes[start] as usize] {
            0 => return None,
            slot => (slot - 1) as usize,
        };
        let mut pos = start + 1;
        let mut best = None;
        loop {
            let entries = self.packed[node];
            let (whole_word, prefix) = ((entries & 0xFFFF) as u16, (entries >> 16) as u16);
            if prefix != NONE {
                best = Some((prefix, pos));
            }
            if whole_word != NONE && (pos == bytes.len() || bytes[pos] == b' ') {
                best = Some((whole_word, pos));
            }
            let Some(&b) = bytes.get(pos) else {
                break;
            };
            let count = self.packed[node + 1] as usize;
            let edges = &self.packed[node + 2..node + 2 + count];
            match edges.iter().find(|&&edge| (edge >> 24) as u8 == b) {
                Some(&edge) => {
                    node = (edge & 0x00FF_FFFF) as usize;
                    pos += 1;
                }
                None => break,
            }
        }
        best
    }

    /// Every cue in `text`, in order. `on_word` is called for each word of
    /// at least `min_word` bytes that no pattern matched (the lexicon checks
    /// suffixes there).
    pub fn scan(
        &self,
        text: &str,
        hits: &mut Vec<Hit>,
        min_word: usize,
        mut on_word: impl FnMut(&str) -> Option<u16>,
    ) {
        debug_assert!(!self.packed.is_empty(), "scan before freeze");
        let bytes = text.as_bytes();
        let mut word: u16 = 0;
        let mut sentence: u16 = 0;
        let mut sentence_start: u16 = 0;
        let mut blocked_until = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b' ' {
                i += 1;
                continue;
            }
            // A word starts here (after a space, or a character of a
            // script without spaces, which the normalizer keeps apart
            // from other scripts).
            let c = if b < 0x80 {
                char::from(b)
            } else {
                text[i..].chars().next().unwrap_or(' ')
            };
            let unspaced = is_cjk(c);
            let end = if unspaced {
                i + c.len_utf8()
            } else {
                bytes[i..]
                    .iter()
                    .position(|&b| b == b' ')
                    .map_or(bytes.len(), |k| i + k)
            };
            word = word.saturating_add(1);
            if c == '|' {
                sentence = sentence.saturating_add(1);
                sentence_start = word;
                i = end;
                continue;
            }
            let in_sentence = word - sentence_start;
            if i >= blocked_until {
                let found = self.longest(bytes, i).or_else(|| {
                    (!unspaced && end - i >= min_word)
                        .then(|| on_word(&text[i..end]))
                        .flatten()
                        .map(|entry| (entry, end))
                });
                if let Some((entry, match_end)) = found {
                    hits.push(Hit {
                        entry,
                        word,
                        sentence,
                        in_sentence,
                        start: i as u32,
                    });
                    blocked_until = match_end;
                }
            }
            i = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(trie: &Trie, text: &str) -> Vec<(u16, u16)> {
        let mut hits = Vec::new();
        trie.scan(text, &mut hits, 1, |_| None);
        hits.iter().map(|h| (h.entry, h.word)).collect()
    }

    #[test]
    fn longest_whole_word_and_prefix_matches() {
        let mut trie = Trie::new();
        trie.insert("remind", true, 1);
        trie.insert("remind me how", false, 2);
        trie.insert("hi", false, 3);
        trie.insert("提醒", false, 4);
        trie.freeze();
        assert_eq!(scan(&trie, "remind me how to do it"), vec![(2, 1)]);
        assert_eq!(scan(&trie, "reminders please"), vec![(1, 1)]);
        assert_eq!(scan(&trie, "history hi"), vec![(3, 2)]);
        // Unspaced scripts: every character is a start and a word.
        assert_eq!(scan(&trie, "请提醒我"), vec![(4, 2)]);
    }

    #[test]
    fn sentences_are_counted_and_patterns_do_not_cross_markers() {
        let mut trie = Trie::new();
        trie.insert("good night", false, 1);
        trie.freeze();
        let mut hits = Vec::new();
        trie.scan("good | night good night", &mut hits, 1, |_| None);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].sentence, 1);
    }
}
