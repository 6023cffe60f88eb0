//! A discrete-event queue in virtual time: events come out in time order, and
//! events at the same time in the order they were scheduled, so that a run is
//! deterministic whatever the ties.

use alloc::collections::BinaryHeap;
use core::cmp::Ordering;

/// One scheduled event.
#[derive(Debug)]
struct Entry<E> {
    time: f64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Events of type `E` ordered by virtual time (seconds), ties by insertion.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> EventQueue<E> {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Schedules `event` at `time`.
    pub(crate) fn push(&mut self, time: f64, event: E) {
        self.seq = self.seq.wrapping_add(1);
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// The earliest event and its time.
    pub(crate) fn pop(&mut self) -> Option<(f64, E)> {
        self.heap.pop().map(|entry| (entry.time, entry.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_insertion() {
        let mut queue = EventQueue::new();
        queue.push(2.0, 'c');
        queue.push(1.0, 'a');
        queue.push(2.0, 'd');
        queue.push(1.0, 'b');
        let order: alloc::vec::Vec<char> =
            core::iter::from_fn(|| queue.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ['a', 'b', 'c', 'd']);
    }
}
