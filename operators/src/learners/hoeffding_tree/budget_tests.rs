//! The memory budget: deactivation, reactivation, the byte count, serialization.

use super::*;
use crate::data::Task;
use crate::rng::seeded;

/// A noisy concept on 6 numeric attributes (every 4th example has a zero, every 50th a
/// missing value), 3 classes, 10% label noise: leaves stay impure and the tree keeps
/// growing.
fn stream(seed: u64, n: usize) -> Vec<(Features, u32)> {
    let mut rng = seeded(seed, 0);
    (0..n)
        .map(|i| {
            let mut x: Vec<f64> = (0..6).map(|_| rng.random::<f64>()).collect();
            if i % 4 == 0 {
                x[i % 6] = 0.0;
            }
            if i % 50 == 0 {
                x[(i / 50) % 6] = f64::NAN;
            }
            let mut y = u32::from(x[0] + x[1] > 1.0) + u32::from(x[2] > 0.7 && x[3] < 0.5);
            if rng.random::<f64>() < 0.1 {
                y = rng.random_range(0..3u32);
            }
            (Features::Dense(x), y)
        })
        .collect()
}

fn config() -> HoeffdingTreeConfig {
    HoeffdingTreeConfig {
        grace_period: 20.0,
        split_confidence: 0.1,
        tie_threshold: 0.3,
        ..HoeffdingTreeConfig::default()
    }
}

fn schema() -> Schema {
    Schema::numeric(6, 3, Task::Multiclass)
}

/// Learns `data` (predicting each example first, as the boosters do), checking after
/// every example that the tracked byte count is the recount.
fn learn_checked(tree: &mut HoeffdingTree, data: &[(Features, u32)]) {
    let mut p = [0.0; 3];
    for (x, y) in data {
        tree.predict(x, &mut p);
        tree.learn(x, *y, 1.0);
        if tree.max_bytes.is_some() {
            assert_eq!(tree.bytes, tree.memory_bytes());
        }
        assert_eq!(
            tree.inactive,
            tree.nodes
                .iter()
                .filter(|n| matches!(n, Node::Inactive(_)))
                .count()
        );
    }
}

/// The serialized state (postcard, as in model files).
fn bits(tree: &HoeffdingTree) -> Vec<u8> {
    postcard::to_stdvec(tree).unwrap()
}

#[test]
fn a_budget_deactivates_the_least_promising_leaves_and_bounds_the_size() {
    let data = stream(1, 20_000);
    let mut free = HoeffdingTree::new(&schema(), config(), 3);
    learn_checked(&mut free, &data);
    let budget = 40_000;
    assert!(
        free.memory_bytes() > 4 * budget,
        "the stream must outgrow the budget: {}",
        free.memory_bytes()
    );
    assert_eq!(free.num_inactive_leaves(), 0);

    let mut tree = HoeffdingTree::new(&schema(), config(), 3);
    tree.set_max_bytes(Some(budget));
    let mut most = 0;
    let mut p = [0.0; 3];
    for (x, y) in &data {
        tree.predict(x, &mut p);
        tree.learn(x, *y, 1.0);
        assert_eq!(tree.bytes, tree.memory_bytes());
        assert!(tree.memory_bytes() <= budget, "{}", tree.memory_bytes());
        most = most.max(tree.memory_bytes());
    }
    assert!(most > budget / 2, "the budget is used: {most}");
    assert!(tree.num_inactive_leaves() > 0);
    assert!(tree.num_inactive_leaves() < tree.num_leaves());
    // The active leaves are the most promising ones, up to the last enforcement's
    // changes: every inactive leaf is no more promising than the most promising active one.
    let best_active = tree
        .nodes
        .iter()
        .filter_map(|n| match n {
            Node::Leaf(l) => Some(promise(&l.dist)),
            _ => None,
        })
        .fold(f64::NEG_INFINITY, f64::max);
    let mut inactive_promises = tree.nodes.iter().filter_map(|n| match n {
        Node::Inactive(l) => Some(promise(&l.dist)),
        _ => None,
    });
    assert!(inactive_promises.any(|p| p <= best_active));
}

#[test]
fn inactive_leaves_learn_class_weights_only_and_never_split() {
    let data = stream(2, 6_000);
    let mut tree = HoeffdingTree::new(&schema(), config(), 5);
    learn_checked(&mut tree, &data[..2_000]);
    let leaves = tree.num_leaves();
    assert!(leaves > 4);
    // A budget below the tree's inactive size: every leaf is deactivated at the next
    // learn, and the tree is frozen.
    tree.set_max_bytes(Some(1));
    learn_checked(&mut tree, &data[2_000..2_001]);
    assert_eq!(tree.num_inactive_leaves(), leaves);
    let size = tree.memory_bytes();
    let nodes = tree.num_nodes();
    let totals = |t: &HoeffdingTree| -> f64 {
        t.nodes
            .iter()
            .map(|n| match n {
                Node::Inactive(l) => l.dist.iter().sum(),
                _ => 0.0,
            })
            .sum()
    };
    let before = totals(&tree);
    learn_checked(&mut tree, &data[2_001..]);
    assert_eq!(tree.memory_bytes(), size, "inactive leaves do not grow");
    assert_eq!(tree.num_nodes(), nodes, "inactive leaves never split");
    assert_eq!(totals(&tree), before + (data.len() - 2_001) as f64);
    // They predict their class distribution.
    let (x, _) = &data[0];
    let mut p = [0.0; 3];
    tree.predict(x, &mut p);
    let mut memo = Memo::default();
    let Node::Inactive(leaf) = &tree.nodes[tree.locate(x, &mut memo, &mut SharedViews::none())]
    else {
        panic!("an inactive leaf");
    };
    let total: f64 = leaf.dist.iter().sum();
    for (&pc, &w) in p.iter().zip(&leaf.dist) {
        assert_eq!(pc, w / total);
    }
    assert_eq!(tree.predict_top(x), clear_majority(&leaf.dist));
}

#[test]
fn freed_memory_reactivates_the_most_promising_leaves() {
    let data = stream(3, 30_000);
    let mut tree = HoeffdingTree::new(&schema(), config(), 7);
    tree.set_max_bytes(Some(100_000));
    learn_checked(&mut tree, &data[..10_000]);
    let inactive: Vec<usize> = (0..tree.num_nodes())
        .filter(|&i| matches!(tree.nodes[i], Node::Inactive(_)))
        .collect();
    assert!(!inactive.is_empty());
    assert!(inactive.len() < tree.num_leaves(), "some leaves are active");
    // More memory: the next enforcement (a split past a multiple of 32 leaves)
    // reactivates inactive leaves, with fresh statistics.
    tree.set_max_bytes(Some(10_000_000));
    learn_checked(&mut tree, &data[10_000..]);
    let back: Vec<usize> = inactive
        .iter()
        .copied()
        .filter(|&i| matches!(tree.nodes[i], Node::Leaf(_) | Node::Split(_)))
        .collect();
    assert!(!back.is_empty(), "no leaf was reactivated");
    assert_eq!(tree.num_inactive_leaves(), 0, "all fit in the new budget");
}

#[test]
fn the_byte_count_follows_the_statistics() {
    // One leaf: its statistics grow with each class it learns (a slot of 6 columns), with
    // the first zero (wider cells) and the first missing value.
    let schema = schema();
    let mut tree = HoeffdingTree::new(&schema, config(), 1);
    tree.set_max_bytes(Some(usize::MAX));
    let start = tree.memory_bytes();
    let x = |v: f64| Features::Dense(vec![v + 1.0; 6]);
    tree.learn(&x(0.0), 0, 1.0);
    let one = tree.memory_bytes();
    assert!(one > start);
    tree.learn(&x(0.5), 0, 1.0);
    assert_eq!(tree.memory_bytes(), one, "the same class: no growth");
    tree.learn(&x(0.2), 1, 1.0);
    let two = tree.memory_bytes();
    // A class slot: 6 columns of mean, M2, min and max, the slot's class, weight and
    // count, and its naive Bayes sums.
    let cache_slot = naive_bayes::LeafCache::bytes_for(&tree.layout, 2)
        - naive_bayes::LeafCache::bytes_for(&tree.layout, 1);
    let slot = 6 * 32 + 4 + 8 + 8 + cache_slot;
    assert_eq!(two - one, slot);
    tree.learn(&Features::Dense(vec![0.0, 1.0, 1.0, 1.0, 1.0, 1.0]), 1, 1.0);
    assert!(tree.memory_bytes() > two, "zeros widen the cells");
    assert_eq!(tree.bytes, tree.memory_bytes());
}

#[test]
fn deactivated_leaves_survive_a_round_trip_and_the_run_continues_identically() {
    let data = stream(4, 16_000);
    let mut tree = HoeffdingTree::new(&schema(), config(), 9);
    tree.set_max_bytes(Some(40_000));
    learn_checked(&mut tree, &data[..8_000]);
    assert!(tree.num_inactive_leaves() > 0);
    let bytes = bits(&tree);
    let mut back: HoeffdingTree = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back.nodes, tree.nodes);
    assert_eq!(back.num_inactive_leaves(), tree.num_inactive_leaves());
    assert_eq!(back.max_bytes(), None, "the budget is not state");
    back.set_max_bytes(Some(40_000));
    assert_eq!(back.bytes, tree.bytes);
    let json: HoeffdingTree = serde_json::from_str(&serde_json::to_string(&tree).unwrap()).unwrap();
    assert_eq!(json.nodes, tree.nodes);
    // The restored tree continues exactly as the original.
    let (mut p, mut q) = ([0.0; 3], [0.0; 3]);
    for (x, y) in &data[8_000..] {
        tree.predict(x, &mut p);
        back.predict(x, &mut q);
        assert_eq!(p.map(f64::to_bits), q.map(f64::to_bits));
        tree.learn(x, *y, 1.0);
        back.learn(x, *y, 1.0);
    }
    assert_eq!(bits(&tree), bits(&back));
    // Deterministic: the same run again gives the same bits.
    let mut again = HoeffdingTree::new(&schema(), config(), 9);
    again.set_max_bytes(Some(40_000));
    learn_checked(&mut again, &data);
    assert_eq!(bits(&again), bits(&tree));
}

#[test]
fn node_variants_keep_their_serialized_indices() {
    // Model files written before inactive leaves existed hold variants 0 and 1 only.
    let layout = Layout::new(&schema(), (0..6).collect());
    let leaf = Node::Leaf(Box::new(LeafNode::new(
        &layout,
        vec![0.0; 3],
        0,
        Vec::new(),
    )));
    let split = Node::Split(SplitNode {
        attr: 0,
        test: SplitTest::Numeric { threshold: 0.5 },
        children: vec![1, 2],
        branch_weight: vec![0.0; 2],
        dist: vec![0.0; 3],
    });
    let inactive = Node::Inactive(InactiveLeaf {
        depth: 1,
        dist: vec![1.0; 3],
        used: Vec::new(),
    });
    // A leaf with cells for every column (it has learned dense examples) is written as
    // before; a fresh leaf, with cells for no column, in the compact form (format 4).
    let mut tree = HoeffdingTree::new(&schema(), config(), 11);
    learn_checked(&mut tree, &stream(5, 50));
    let full = tree
        .nodes
        .iter()
        .find(|n| matches!(n, Node::Leaf(l) if !l.numeric.is_compact()))
        .expect("a leaf with every column")
        .clone();
    for (node, variant) in [(full, 0u8), (split, 1), (inactive, 2), (leaf, 3)] {
        let bytes = postcard::to_stdvec(&node).unwrap();
        assert_eq!(bytes[0], variant);
        assert_eq!(postcard::from_bytes::<Node>(&bytes).unwrap(), node);
    }
}

#[test]
fn a_damaged_inactive_leaf_is_refused() {
    let data = stream(5, 4_000);
    let mut tree = HoeffdingTree::new(&schema(), config(), 11);
    tree.set_max_bytes(Some(1));
    learn_checked(&mut tree, &data);
    assert!(tree.num_inactive_leaves() > 0);
    let mut json: serde_json::Value = serde_json::to_value(&tree).unwrap();
    let nodes = json["nodes"].as_array_mut().unwrap();
    let inactive = nodes
        .iter_mut()
        .find(|n| n.get("Inactive").is_some())
        .unwrap();
    inactive["Inactive"]["dist"] = serde_json::json!([1.0]);
    let e = serde_json::from_value::<HoeffdingTree>(json).unwrap_err();
    assert!(e.to_string().contains("inactive tree leaf"), "{e}");
}
