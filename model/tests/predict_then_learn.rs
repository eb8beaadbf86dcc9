//! `predict_one` then `learn_one` (River's order, two passes) is `predict_learn_one`
//! (the command line's prequential pass), for every booster: the stages' random tie-breaks
//! (the multiclass boosters break ties among equal costs at random, which fresh weak
//! learners give often) do not advance their generators in a pass that learns nothing.

use flowboost_model::Model;
use flowboost_operators::boosters::{Algorithm, BoosterConfig};
use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
use flowboost_operators::learners::WeakKind;
use flowboost_operators::rng::{below, seeded, uniform};

fn schema(task: Task, classes: usize) -> Schema {
    Schema {
        attributes: (0..4)
            .map(|j| Attribute::numeric(format!("x{j}")))
            .collect(),
        task,
        labels: (0..classes).map(|c| format!("c{c}")).collect(),
    }
}

fn stream(classes: usize, n: u64) -> Vec<Example> {
    let mut rng = seeded(17, 0);
    (0..n)
        .map(|id| {
            let x: Vec<f64> = (0..4).map(|_| (uniform(&mut rng) * 4.0).floor()).collect();
            let y = ((x[0] + x[1]) as u64 + below(&mut rng, 2)) % classes as u64;
            Example {
                id,
                features: Features::Dense(x),
                label: Some(Label::Class(y as u32)),
            }
        })
        .collect()
}

#[test]
fn predicting_then_learning_is_the_one_pass_for_every_single_label_booster() {
    for (algorithm, task, classes) in [
        (Algorithm::AdaBoostOlm, Task::Multiclass, 4),
        (Algorithm::OnlineMbbm, Task::Multiclass, 4),
        (Algorithm::Oza, Task::Multiclass, 3),
        (Algorithm::AdaBoostOl, Task::Binary, 2),
        (Algorithm::OnlineBbm, Task::Binary, 2),
    ] {
        let config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 5);
        let mut one = Model::new(config.clone(), schema(task, classes)).unwrap();
        let mut two = Model::new(config, schema(task, classes)).unwrap();
        for ex in stream(classes, 600) {
            let a = one.predict_learn_one(&ex);
            let b = two.predict_one(&ex);
            two.learn_one(&ex).unwrap();
            assert_eq!(
                (a.class, a.expert, &a.scores),
                (b.class, b.expert, &b.scores),
                "{algorithm:?}, example {}",
                ex.id
            );
        }
        // And the states go on alike (the files differ in their record counts: two
        // passes count twice as many records).
        for ex in stream(classes, 200) {
            let a = one.predict_learn_one(&ex);
            let b = two.predict_learn_one(&ex);
            assert_eq!((a.class, &a.scores), (b.class, &b.scores), "{algorithm:?}");
        }
    }
}

/// The batch forms take their examples through the stages stage by stage: the same
/// predictions and the same model as one at a time.
#[test]
fn the_batch_forms_are_the_one_at_a_time_forms() {
    for (algorithm, task, classes) in [
        (Algorithm::AdaBoostOlm, Task::Multiclass, 4),
        (Algorithm::AdaBoostOl, Task::Binary, 2),
    ] {
        let config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 7);
        let new = || Model::new(config.clone(), schema(task, classes)).unwrap();
        let data = stream(classes, 900);
        let (mut one, mut many) = (new(), new());
        let want: Vec<_> = data.iter().map(|e| one.predict_learn_one(e)).collect();
        let mut got = Vec::new();
        for block in data.chunks(250) {
            got.extend(many.predict_learn_many(block));
        }
        assert_eq!(want, got, "{algorithm:?}: predict_learn_many");
        let (mut x, mut y) = (Vec::new(), Vec::new());
        one.save(&mut x).unwrap();
        many.save(&mut y).unwrap();
        assert!(x == y, "{algorithm:?}: predict_learn_many's model");

        let (mut one, mut many) = (new(), new());
        for block in data.chunks(300) {
            let want: Vec<_> = block.iter().map(|e| one.predict_one(e)).collect();
            assert_eq!(
                want,
                many.predict_many(block),
                "{algorithm:?}: predict_many"
            );
            for e in block {
                one.learn_one(e).unwrap();
            }
            many.learn_many(block).unwrap();
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        one.save(&mut x).unwrap();
        many.save(&mut y).unwrap();
        assert!(x == y, "{algorithm:?}: learn_many's model");
        let unlabeled = Example {
            label: None,
            ..data[0].clone()
        };
        let e = many.learn_many(&[data[1].clone(), unlabeled]).unwrap_err();
        assert!(e.to_string().contains("has no label"), "{e}");
    }
}
