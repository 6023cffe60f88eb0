//! [`Names`]: the endpoint names of one shard, interned once into compact ids.

use alloc::string::String;
use alloc::vec::Vec;
use core::mem::size_of;

use hashbrown::HashTable;

use crate::hash::hash_bytes;

/// One interned name: where it lies in the arena, and how many groups use it.
#[derive(Clone, Copy, Debug)]
struct NameSlot {
    start: u32,
    len: u32,
    /// 0 for a free slot.
    refs: u32,
}

/// The names of one shard, stored back to back in one string (no allocation per
/// name), found by hash, and reference-counted by the groups that use them. A
/// released name leaves a hole; when holes make up more than half the arena it
/// is compacted, so the arena stays within twice the live names' bytes.
#[derive(Debug, Default)]
pub(crate) struct Names {
    arena: String,
    slots: Vec<NameSlot>,
    free: Vec<u32>,
    index: HashTable<u32>,
    dead_bytes: usize,
}

impl Names {
    /// The name with id `id` (empty for an id not in use).
    #[inline]
    pub(crate) fn get(&self, id: u32) -> &str {
        self.slots
            .get(id as usize)
            .and_then(|slot| {
                let start = slot.start as usize;
                self.arena.get(start..start + slot.len as usize)
            })
            .unwrap_or("")
    }

    /// The bytes of the name with id `id` (empty for an id not in use): what a
    /// lookup compares, with no check for character boundaries.
    #[inline(always)]
    pub(crate) fn bytes(&self, id: u32) -> &[u8] {
        self.slots
            .get(id as usize)
            .and_then(|slot| {
                let start = slot.start as usize;
                self.arena.as_bytes().get(start..start + slot.len as usize)
            })
            .unwrap_or(&[])
    }

    /// The id of `name`, whose hash is `hash`, if it is interned.
    #[inline]
    pub(crate) fn find(&self, hash: u64, name: &str) -> Option<u32> {
        self.index.find(hash, |&id| self.get(id) == name).copied()
    }

    /// The id of `name`, interned if it was not, with one more reference.
    pub(crate) fn acquire(&mut self, seed: u64, hash: u64, name: &str) -> u32 {
        if let Some(id) = self.find(hash, name) {
            if let Some(slot) = self.slots.get_mut(id as usize) {
                slot.refs += 1;
            }
            return id;
        }
        let slot = NameSlot {
            start: self.arena.len() as u32,
            len: name.len() as u32,
            refs: 1,
        };
        self.arena.push_str(name);
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(free) = self.slots.get_mut(id as usize) {
                    *free = slot;
                }
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        let Names {
            arena,
            slots,
            index,
            ..
        } = self;
        index.insert_unique(hash, id, |&other| {
            hash_bytes(seed, name_in(arena, slots, other).as_bytes())
        });
        id
    }

    /// Drops one reference to `id`; the last one frees the name.
    pub(crate) fn release(&mut self, seed: u64, id: u32) {
        let Some(slot) = self.slots.get_mut(id as usize) else {
            return;
        };
        slot.refs = slot.refs.saturating_sub(1);
        if slot.refs > 0 {
            return;
        }
        let hash = hash_bytes(seed, self.get(id).as_bytes());
        if let Ok(entry) = self.index.find_entry(hash, |&other| other == id) {
            entry.remove();
        }
        if let Some(slot) = self.slots.get_mut(id as usize) {
            self.dead_bytes += slot.len as usize;
            slot.len = 0;
        }
        self.free.push(id);
        if self.dead_bytes > 4_096 && self.dead_bytes * 2 > self.arena.len() {
            self.compact();
        }
    }

    /// Copies the live names into a fresh arena, closing the holes.
    fn compact(&mut self) {
        let mut arena = String::with_capacity(self.arena.len() - self.dead_bytes);
        for slot in &mut self.slots {
            let start = slot.start as usize;
            let name = self
                .arena
                .get(start..start + slot.len as usize)
                .unwrap_or("");
            slot.start = arena.len() as u32;
            arena.push_str(name);
        }
        self.arena = arena;
        self.dead_bytes = 0;
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.slots.capacity() * size_of::<NameSlot>()
            + self.free.capacity() * size_of::<u32>()
            + self.index.allocation_size()
    }

    /// Bytes of the arena, holes included.
    pub(crate) fn arena_bytes(&self) -> usize {
        self.arena.capacity()
    }
}

fn name_in<'a>(arena: &'a str, slots: &[NameSlot], id: u32) -> &'a str {
    slots
        .get(id as usize)
        .and_then(|slot| {
            let start = slot.start as usize;
            arena.get(start..start + slot.len as usize)
        })
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::Names;
    use crate::hash::hash_bytes;

    #[test]
    fn names_are_shared_released_and_compacted() {
        let mut names = Names::default();
        let h = |name: &str| hash_bytes(9, name.as_bytes());
        let a = names.acquire(9, h("alpha"), "alpha");
        assert_eq!(names.acquire(9, h("alpha"), "alpha"), a);
        names.release(9, a);
        assert_eq!(names.find(h("alpha"), "alpha"), Some(a));
        names.release(9, a);
        assert_eq!(names.find(h("alpha"), "alpha"), None);

        // Churn through many names: the arena stays bounded by the live ones.
        let mut live = alloc::vec::Vec::new();
        for i in 0..20_000 {
            let name = format!("endpoint-{i:08}");
            let id = names.acquire(9, h(&name), &name);
            live.push((id, name));
            if live.len() > 100 {
                let (id, _) = live.remove(0);
                names.release(9, id);
            }
        }
        for (id, name) in &live {
            assert_eq!(names.get(*id), name);
            assert_eq!(names.find(h(name), name), Some(*id));
        }
        assert!(names.arena_bytes() < 40_000, "{}", names.arena_bytes());
    }
}
