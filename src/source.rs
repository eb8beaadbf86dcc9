//! Where a job's examples come from: dataset files (through the streaming readers) or a
//! built-in seeded generator.

use flowboost_connectors::generators::{Generator, GeneratorConfig};
use flowboost_connectors::readers::{DataSource, ReadOptions};
use flowboost_operators::data::{Example, Schema};
use flowboost_operators::rng::{below, seeded};
use std::path::PathBuf;

/// A dataset: one schema, one or more parts (a training file and a test file, or one
/// generated stream), each streamed in order.
pub enum Dataset {
    /// Files read by the streaming readers, with one schema for all of them.
    Files(DataSource),
    /// A seeded synthetic stream.
    Generated {
        /// The generator's configuration.
        config: GeneratorConfig,
        /// Its schema.
        schema: Schema,
    },
}

/// A stream of examples; reading errors are reported as text naming the file and line.
pub type ExampleStream = Box<dyn Iterator<Item = Result<Example, String>>>;

impl Dataset {
    /// Opens dataset files (train first, then test if given).
    pub fn open_files(files: &[PathBuf], options: &ReadOptions) -> Result<Dataset, String> {
        DataSource::open(files, options)
            .map(Dataset::Files)
            .map_err(|e| e.to_string())
    }

    /// A built-in generator by preset name (`binary`, `multiclass`, `multilabel`,
    /// `mediamill`), optionally with another example count.
    pub fn generator(name: &str, seed: u64, examples: Option<u64>) -> Result<Dataset, String> {
        let mut config = GeneratorConfig::preset(name, seed).ok_or_else(|| {
            format!(
                "unknown generator '{name}' (expected binary, multiclass, multilabel or mediamill)"
            )
        })?;
        if let Some(n) = examples {
            config.examples = n;
        }
        let schema = Generator::new(config.clone())
            .map_err(|e| e.to_string())?
            .schema()
            .clone();
        Ok(Dataset::Generated { config, schema })
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        match self {
            Dataset::Files(s) => s.schema(),
            Dataset::Generated { schema, .. } => schema,
        }
    }

    /// The number of parts (files, or 1 for a generator).
    pub fn parts(&self) -> usize {
        match self {
            Dataset::Files(s) => s.files().len(),
            Dataset::Generated { .. } => 1,
        }
    }

    /// A name for part `i`, for reports.
    pub fn part_name(&self, i: usize) -> String {
        match self {
            Dataset::Files(s) => s.files()[i].display().to_string(),
            Dataset::Generated { config, .. } => format!(
                "generator (task {}, {} examples, seed {})",
                config.task.name(),
                config.examples,
                config.seed
            ),
        }
    }

    /// Streams part `i`.
    pub fn stream(&self, i: usize) -> Result<ExampleStream, String> {
        match self {
            Dataset::Files(s) => {
                let it = s.examples(i).map_err(|e| e.to_string())?;
                Ok(Box::new(it.map(|r| r.map_err(|e| e.to_string()))))
            }
            Dataset::Generated { config, .. } => Ok(Box::new(
                Generator::new(config.clone())
                    .map_err(|e| e.to_string())?
                    .map(Ok),
            )),
        }
    }

    /// Part `i` in memory, shuffled with a fixed seed (Fisher–Yates driven by `seed`).
    pub fn shuffled(&self, i: usize, seed: u64) -> Result<Vec<Example>, String> {
        let mut all = self.stream(i)?.collect::<Result<Vec<_>, _>>()?;
        shuffle(&mut all, seed);
        Ok(all)
    }

    /// Counts the examples of part `i`: the count the readers took while opening the files
    /// when they took one (CSV, see [`DataSource::records`]), else a streaming pass (which
    /// stops at the first bad record: the pass that reads the examples would stop there
    /// too).
    pub fn count(&self, i: usize) -> Result<u64, String> {
        if let Dataset::Files(s) = self
            && let Some(n) = s.records(i)
        {
            return Ok(n);
        }
        let mut n = 0;
        for r in self.stream(i)? {
            r?;
            n += 1;
        }
        Ok(n)
    }
}

/// Shuffles in place with a generator seeded by `seed` (the same permutation on every
/// machine and every run).
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = seeded(seed, 0x5_4ff1e);
    for i in (1..items.len()).rev() {
        let j = below(&mut rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}
