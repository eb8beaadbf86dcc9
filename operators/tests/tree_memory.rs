//! `HoeffdingTree::memory_bytes` against the allocator: a global allocator counts the
//! bytes the process holds, and a growing tree's count follows them (within the slack of
//! the node array's doubling), with and without a memory budget. One test per file: the
//! count is process-wide.

use flowboost_operators::data::{Features, Schema, Task};
use flowboost_operators::learners::{HoeffdingTree, HoeffdingTreeConfig, WeakLearner};
use flowboost_operators::rng::seeded;
use rand::RngExt;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The bytes allocated and not yet freed.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every call forwards to the system allocator with the same arguments; the counter
// only observes the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// 20 numeric attributes (a few zeros), 2 classes, 10% label noise.
fn stream(n: usize) -> Vec<(Features, u32)> {
    let mut rng = seeded(17, 0);
    (0..n)
        .map(|i| {
            let mut x: Vec<f64> = (0..20).map(|_| rng.random::<f64>()).collect();
            if i % 7 == 0 {
                x[i % 20] = 0.0;
            }
            let mut y = u32::from(x[0] + x[1] * x[2] > 0.8);
            if rng.random::<f64>() < 0.1 {
                y = 1 - y;
            }
            (Features::Dense(x), y)
        })
        .collect()
}

/// Learns `data` into a fresh tree (with `budget`), and at each tenth of the stream
/// compares the heap the tree holds with its count: returns the (heap, count) pairs.
fn grow(data: &[(Features, u32)], budget: Option<usize>) -> Vec<(usize, usize)> {
    let config = HoeffdingTreeConfig {
        grace_period: 10.0,
        split_confidence: 0.1,
        tie_threshold: 0.2,
        ..HoeffdingTreeConfig::default()
    };
    let schema = Schema::numeric(20, 2, Task::Binary);
    let start = LIVE.load(Ordering::Relaxed);
    let mut tree = HoeffdingTree::new(&schema, config, 1);
    tree.set_max_bytes(budget);
    let mut p = [0.0; 2];
    let mut samples = Vec::new();
    for (n, (x, y)) in data.iter().enumerate() {
        tree.predict(x, &mut p);
        tree.learn(x, *y, 1.0);
        if (n + 1) % (data.len() / 10) == 0 {
            let heap = (LIVE.load(Ordering::Relaxed) - start) as usize;
            // The tree itself is on the stack, not on the heap.
            let count = tree.memory_bytes() - std::mem::size_of::<HoeffdingTree>();
            samples.push((heap, count));
        }
    }
    samples
}

#[test]
fn the_byte_count_follows_the_heap_with_and_without_a_budget() {
    let data = stream(60_000);
    let free = grow(&data, None);
    eprintln!("no budget (heap, counted): {free:?}");
    let (heap, count) = *free.last().unwrap();
    assert!(count > 2_000_000, "the tree grew: {count} bytes");
    for &(heap, count) in &free {
        let ratio = heap as f64 / count as f64;
        // Above 1: the node array's spare capacity, the working space of the last example.
        assert!(
            (0.95..1.15).contains(&ratio),
            "heap {heap} bytes, counted {count} ({ratio:.3})"
        );
    }
    let budget = count / 8;
    let bounded = grow(&data, Some(budget));
    eprintln!("budget {budget} (heap, counted): {bounded:?}");
    for &(heap, count) in &bounded {
        assert!(count <= budget, "counted {count} > budget {budget}");
        assert!(
            (heap as f64) < 1.15 * budget as f64,
            "heap {heap} bytes for a budget of {budget}"
        );
    }
    assert!(heap > 4 * bounded.last().unwrap().0);
}
