//! Train a model one example at a time, save it, load it in a "server" and serve
//! predictions, with the River-like `Model` API:
//!
//! ```sh
//! cargo run --release --example save_and_serve
//! ```
//!
//! The saved file is the model file format of `flowboost eval --save-model`: `flowboost
//! inspect` describes it and `flowboost predict --model` serves it from the command line.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::model::Model;
use flowboost::operators::boosters::{Algorithm, BoosterConfig};
use flowboost::operators::learners::WeakKind;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A multiclass stream from the built-in generator: 20,000 labeled examples.
    let mut stream = GeneratorConfig::preset("multiclass", 3).ok_or("no such preset")?;
    stream.examples = 20_000;
    let generator = Generator::new(stream)?;
    let schema = generator.schema().clone();
    let examples: Vec<_> = generator.collect();
    let (train, serve) = examples.split_at(19_990);

    // Train: AdaBoost.OLM over 10 Hoeffding trees, test-then-train on every example.
    let mut config = BoosterConfig::new(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 1);
    config.learners = 10;
    let mut model = Model::new(config, schema)?;
    let mut correct = 0;
    for ex in train {
        let p = model.predict_learn_one(ex);
        correct += usize::from(ex.label.as_ref().and_then(|l| l.class()) == Some(p.class));
    }
    println!(
        "trained on {} examples, progressive accuracy {:.3}",
        train.len(),
        correct as f64 / train.len() as f64
    );

    // Save it (atomically), then load it as a server would.
    let path = std::env::temp_dir().join(format!("flowboost-example-{}.fbm", std::process::id()));
    model.save_file(&path)?;
    println!(
        "saved {} ({} bytes)",
        path.display(),
        std::fs::metadata(&path)?.len()
    );
    let mut served = Model::load_file(&path)?;
    std::fs::remove_file(&path)?;

    // Serve: predictions only; the loaded model answers exactly as the one in memory.
    for ex in serve {
        let p = served.predict_one(ex);
        assert_eq!(p, model.predict_one(ex));
        println!(
            "event {}: class {} (true {:?}), expert {}",
            ex.id,
            p.class,
            ex.label.as_ref().and_then(|l| l.class()),
            p.expert
        );
    }
    Ok(())
}
