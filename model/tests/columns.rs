//! A model built with free columns names them as features and labels appear; the names
//! survive a save and a load, and the predictions do not change with them.

use flowboost_model::{Columns, Model, free_name};
use flowboost_operators::boosters::{Algorithm, BoosterConfig};
use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
use flowboost_operators::learners::WeakKind;

#[test]
fn named_columns_are_saved_and_read_back() {
    let schema = Schema {
        attributes: (0..4).map(|j| Attribute::numeric(free_name(j))).collect(),
        labels: (0..3).map(free_name).collect(),
        task: Task::Multiclass,
    };
    let config = BoosterConfig::new(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 3);
    let mut model = Model::new(config, schema).unwrap();
    let mut features = Columns::new(model.schema().attributes.iter().map(|a| a.name.clone()));
    let mut labels = Columns::new(model.schema().labels.clone());
    for i in 0..300u64 {
        let (name, class) = match i % 3 {
            0 => ("red", "a"),
            1 => ("green", "b"),
            _ => ("blue", "c"),
        };
        let (j, new) = features.claim(name).unwrap();
        if new {
            model.name_attribute(j, name).unwrap();
        }
        let (l, new) = labels.claim(class).unwrap();
        if new {
            model.name_label(l, class).unwrap();
        }
        let x = Features::Sparse {
            indices: vec![j as u32],
            values: vec![1.0],
            dim: 4,
        };
        let example = Example {
            id: i,
            features: x,
            label: Some(Label::Class(l as u32)),
        };
        model.learn_one(&example).unwrap();
    }
    assert!(model.name_attribute(4, "x").is_err());
    assert!(model.name_label(3, "x").is_err());
    let mut bytes = Vec::new();
    model.save(&mut bytes).unwrap();
    let mut loaded = Model::load(&bytes[..]).unwrap();
    let names: Vec<&str> = loaded
        .schema()
        .attributes
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["red", "green", "blue", "(free 3)"]);
    assert_eq!(loaded.schema().labels, ["a", "b", "c"]);
    let again = Columns::new(names.iter().map(|n| n.to_string()));
    assert_eq!(again.get("blue"), Some(2));
    assert!(again.is_free(3));
    let query = Example {
        id: 1000,
        features: Features::Sparse {
            indices: vec![2],
            values: vec![1.0],
            dim: 4,
        },
        label: None,
    };
    assert_eq!(loaded.predict_one(&query), model.predict_one(&query));
}
