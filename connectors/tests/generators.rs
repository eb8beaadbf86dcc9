//! Tests of the synthetic stream generators.

use flowboost_connectors::generators::{Generator, GeneratorConfig};
use flowboost_operators::data::{AttributeKind, Example, Features, Label, Task};
use flowboost_operators::learners::{LinearConfig, LinearLearner, WeakLearner};

fn all(config: GeneratorConfig) -> Vec<Example> {
    Generator::new(config).unwrap().collect()
}

fn small(task: Task, labels: usize, cardinality: f64) -> GeneratorConfig {
    GeneratorConfig {
        task,
        examples: 300,
        dim: 5,
        labels,
        cardinality,
        noise: 0.1,
        seed: 7,
    }
}

#[test]
fn same_seed_same_stream_other_seed_other_stream() {
    for name in GeneratorConfig::PRESETS {
        let mut a = GeneratorConfig::preset(name, 42).unwrap();
        a.examples = 500;
        let b = a.clone();
        let mut c = a.clone();
        c.seed = 43;
        let (a, b, c) = (all(a), all(b), all(c));
        assert_eq!(a, b, "{name}");
        assert_ne!(a, c, "{name}");
    }
}

#[test]
fn counts_ids_labels_and_schema() {
    for name in GeneratorConfig::PRESETS {
        let config = GeneratorConfig::preset(name, 1).unwrap();
        let generator = Generator::new(config.clone()).unwrap();
        let schema = generator.schema().clone();
        assert_eq!(schema.task, config.task);
        assert_eq!(schema.dim(), config.dim);
        assert_eq!(schema.num_labels(), config.labels);
        assert_eq!(schema.attributes[0].name, "f0");
        assert!(
            schema
                .attributes
                .iter()
                .all(|a| a.kind == AttributeKind::Numeric)
        );
        assert_eq!(
            generator.size_hint(),
            (config.examples as usize, Some(config.examples as usize))
        );
        let mut n = 0u64;
        for (i, e) in generator.enumerate() {
            assert_eq!(e.id, i as u64);
            let Features::Dense(x) = &e.features else {
                panic!("dense features expected")
            };
            assert_eq!(x.len(), config.dim);
            assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
            match (config.task, e.label.expect("every example is labeled")) {
                (Task::Binary | Task::Multiclass, Label::Class(c)) => {
                    assert!((c as usize) < config.labels)
                }
                (Task::Multilabel, Label::Set(s)) => {
                    assert!(!s.is_empty());
                    assert!(s.windows(2).all(|w| w[0] < w[1]));
                    assert!(s.iter().all(|&l| (l as usize) < config.labels));
                }
                (task, label) => panic!("{task:?} with {label:?}"),
            }
            n += 1;
        }
        assert_eq!(n, config.examples, "{name}");
    }
    let mediamill = GeneratorConfig::preset("mediamill", 0).unwrap();
    assert_eq!(
        (mediamill.examples, mediamill.dim, mediamill.labels),
        (43_907, 120, 101)
    );
    assert!(GeneratorConfig::preset("nope", 0).is_none());
}

#[test]
fn every_label_appears() {
    for name in GeneratorConfig::PRESETS {
        for seed in [1, 2] {
            let mut config = GeneratorConfig::preset(name, seed).unwrap();
            config.examples = config.examples.min(10_000);
            let mut seen = vec![0usize; config.labels];
            for e in Generator::new(config).unwrap() {
                for &l in e.label.unwrap().relevant() {
                    seen[l as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n > 0), "{name} seed {seed}: {seen:?}");
        }
    }
}

fn mean_cardinality(config: GeneratorConfig) -> f64 {
    let n = config.examples as f64;
    let total: usize = Generator::new(config)
        .unwrap()
        .map(|e| e.label.unwrap().relevant().len())
        .sum();
    total as f64 / n
}

#[test]
fn mean_cardinality_is_within_ten_percent_of_the_target() {
    for name in ["multilabel", "mediamill"] {
        for seed in [3, 4, 5] {
            let mut config = GeneratorConfig::preset(name, seed).unwrap();
            config.examples = config.examples.min(10_000);
            let target = config.cardinality;
            let got = mean_cardinality(config);
            assert!(
                (got - target).abs() <= 0.1 * target,
                "{name} seed {seed}: {got} vs {target}"
            );
        }
    }
    // Other shapes, noisier streams, and the edges of the range.
    for (labels, cardinality, noise) in [
        (3, 1.0, 0.0),
        (3, 2.5, 0.1),
        (20, 1.3, 0.2),
        (50, 10.0, 0.05),
    ] {
        let config = GeneratorConfig {
            examples: 4_000,
            noise,
            ..small(Task::Multilabel, labels, cardinality)
        };
        let got = mean_cardinality(config);
        assert!(
            (got - cardinality).abs() <= 0.1 * cardinality,
            "{labels} labels, noise {noise}: {got} vs {cardinality}"
        );
    }
}

#[test]
fn invalid_configs_are_errors() {
    let ok = small(Task::Multilabel, 4, 1.5);
    assert!(Generator::new(ok.clone()).is_ok());
    let bad = [
        GeneratorConfig {
            dim: 0,
            ..ok.clone()
        },
        GeneratorConfig {
            labels: 1,
            ..ok.clone()
        },
        GeneratorConfig {
            labels: 0,
            ..ok.clone()
        },
        GeneratorConfig {
            noise: 1.0,
            ..ok.clone()
        },
        GeneratorConfig {
            noise: -0.1,
            ..ok.clone()
        },
        GeneratorConfig {
            noise: f64::NAN,
            ..ok.clone()
        },
        GeneratorConfig {
            cardinality: 0.0,
            ..ok.clone()
        },
        GeneratorConfig {
            cardinality: 4.0,
            ..ok.clone()
        },
        GeneratorConfig {
            cardinality: f64::NAN,
            ..ok.clone()
        },
        GeneratorConfig {
            cardinality: 0.5,
            ..ok.clone()
        },
        GeneratorConfig {
            task: Task::Binary,
            labels: 3,
            cardinality: 1.0,
            ..ok.clone()
        },
    ];
    for config in bad {
        let err = Generator::new(config.clone())
            .expect_err(&format!("{config:?}"))
            .to_string();
        assert!(err.starts_with("generator: "), "{err}");
    }
}

#[test]
fn small_and_edge_shapes_work() {
    for config in [
        small(Task::Binary, 2, 1.0),
        small(Task::Multiclass, 2, 1.0),
        small(Task::Multiclass, 30, 1.0),
        small(Task::Multilabel, 2, 1.0),
        GeneratorConfig {
            dim: 1,
            ..small(Task::Multilabel, 5, 1.99)
        },
        GeneratorConfig {
            dim: 1,
            ..small(Task::Multiclass, 3, 1.0)
        },
    ] {
        let data = all(config.clone());
        assert_eq!(data.len(), config.examples as usize);
    }
    let empty = GeneratorConfig {
        examples: 0,
        ..small(Task::Binary, 2, 1.0)
    };
    assert_eq!(all(empty).len(), 0);
}

#[test]
fn noise_flips_labels_of_the_same_features() {
    let clean = GeneratorConfig {
        noise: 0.0,
        examples: 5_000,
        ..GeneratorConfig::binary(9)
    };
    let noisy = GeneratorConfig {
        noise: 0.3,
        ..clean.clone()
    };
    let (a, b) = (all(clean), all(noisy));
    let mut flipped = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.features, y.features);
        flipped += usize::from(x.label != y.label);
    }
    let rate = flipped as f64 / a.len() as f64;
    assert!((rate - 0.3).abs() < 0.03, "{rate}");
}

/// Progressive (test-then-train) accuracy of a linear learner, and the majority baseline.
fn linear_vs_majority(config: GeneratorConfig) -> (f64, f64) {
    let generator = Generator::new(config).unwrap();
    let schema = generator.schema().clone();
    let k = schema.num_labels();
    let mut learner = LinearLearner::new(&schema, LinearConfig::default(), 0);
    let mut out = vec![0.0; k];
    let (mut correct, mut n) = (0usize, 0usize);
    let mut counts = vec![0usize; k];
    for e in generator {
        let y = e.label.unwrap().class().unwrap();
        learner.predict(&e.features, &mut out);
        let guess = (0..k).max_by(|&a, &b| out[a].total_cmp(&out[b])).unwrap();
        correct += usize::from(guess == y as usize);
        counts[y as usize] += 1;
        n += 1;
        learner.learn(&e.features, y, 1.0);
    }
    let majority = *counts.iter().max().unwrap() as f64 / n as f64;
    (correct as f64 / n as f64, majority)
}

#[test]
fn a_linear_learner_beats_the_majority_baseline_but_not_the_noise_ceiling() {
    for config in [GeneratorConfig::binary(1), GeneratorConfig::multiclass(1)] {
        let ceiling = 1.0 - config.noise;
        let (linear, majority) = linear_vs_majority(config.clone());
        assert!(
            linear > majority + 0.2,
            "{:?}: {linear} vs {majority}",
            config.task
        );
        // Not trivial: a linear model stays well below the Bayes accuracy.
        assert!(
            linear < ceiling - 0.03,
            "{:?}: {linear} vs {ceiling}",
            config.task
        );
    }
}
