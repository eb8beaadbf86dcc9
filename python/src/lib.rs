//! The Rust core of the Python package `flowboost`: one class, `Core`, over
//! `flowboost_model::Model` (features by name into the model's columns, labels by index,
//! batches with the GIL released, model files), and `read_dataset` over the file readers.
//! The estimators with River's interface are Python classes over it
//! (`python/flowboost/_estimators.py`).
#![deny(missing_docs)]

mod options;

use flowboost_connectors::readers::{DataSource, ReadOptions};
use flowboost_model::{Columns, FeedbackOutcome, Model, ModelError, free_name};
use flowboost_operators::boosters::Algorithm;
use flowboost_operators::data::{AttributeKind, Example, Features, Feedback, Label, Schema, Task};
use flowboost_operators::engine::Prediction;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;

create_exception!(
    _flowboost,
    ModelFileError,
    PyException,
    "A model file that cannot be read or written: damaged, truncated, not a model file, or of another format version."
);

/// A model error as the Python exception it is.
fn model_err(e: ModelError) -> PyErr {
    match e {
        ModelError::Invalid(m) => PyValueError::new_err(m),
        e => ModelFileError::new_err(e.to_string()),
    }
}

/// One model with its columns by name.
/// Unsendable: a model's trees keep per-example memos (not `Sync`); it is used from
/// the thread that made it (the GIL released around batches, on that thread).
#[pyclass(module = "flowboost._flowboost", unsendable)]
struct Core {
    model: Model,
    columns: Columns,
    /// The values of each nominal column, by name.
    nominal: Vec<Option<HashMap<String, u32>>>,
    next_id: u64,
}

/// A feature value read from Python.
enum Value {
    Number(f64),
    Text(String),
}

fn value_of(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Some(Value::Number(if b.is_true() { 1.0 } else { 0.0 })));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Some(Value::Text(s.extract::<String>()?)));
    }
    match v.extract::<f64>() {
        Ok(x) if x.is_finite() => Ok(Some(Value::Number(x))),
        Ok(x) => Err(PyValueError::new_err(format!(
            "feature `{name}`: {x} is not a finite number (leave a missing value out, or give None)"
        ))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "feature `{name}`: expected a number, a bool, a string or None, got {}",
            v.get_type().name()?
        ))),
    }
}

/// The name of a feature key (a string, or any key's `str`).
fn key_name(k: &Bound<'_, PyAny>) -> PyResult<String> {
    match k.cast::<PyString>() {
        Ok(s) => s.extract::<String>(),
        Err(_) => k.str()?.extract::<String>(),
    }
}

impl Core {
    fn from_model(model: Model) -> Self {
        let schema = model.schema();
        let columns = Columns::new(schema.attributes.iter().map(|a| a.name.clone()));
        let nominal = schema
            .attributes
            .iter()
            .map(|a| match &a.kind {
                AttributeKind::Numeric => None,
                AttributeKind::Nominal(values) => Some(
                    values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (v.clone(), i as u32))
                        .collect(),
                ),
            })
            .collect();
        let next_id = model.position().seq;
        Core {
            model,
            columns,
            nominal,
            next_id,
        }
    }

    /// The column of feature `name`, claiming a free one when `claim` (learning).
    fn column(&mut self, name: &str, claim: bool) -> PyResult<Option<usize>> {
        if !claim {
            return Ok(self.columns.get(name));
        }
        let (j, new) = self
            .columns
            .claim(name)
            .map_err(|e| PyValueError::new_err(format!("feature {e}")))?;
        if new {
            self.model.name_attribute(j, name).map_err(model_err)?;
        }
        Ok(Some(j))
    }

    /// The features of `(name, value)` pairs: known names to their columns, new ones (when
    /// learning) to free columns in name order, strings to a nominal column's value or
    /// to a one-hot column `name=value`.
    fn features(&mut self, pairs: Vec<(String, Value)>, claim: bool) -> PyResult<Features> {
        let mut resolved: Vec<(String, f64, bool)> = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            match value {
                Value::Number(x) => resolved.push((name, x, false)),
                Value::Text(t) => {
                    let nominal = self
                        .columns
                        .get(&name)
                        .and_then(|j| self.nominal.get(j))
                        .and_then(|m| m.as_ref());
                    match nominal {
                        Some(values) => {
                            let x = values.get(&t).map_or(f64::NAN, |&v| f64::from(v));
                            resolved.push((name, x, true));
                        }
                        None => resolved.push((format!("{name}={t}"), 1.0, false)),
                    }
                }
            }
        }
        // New names take their columns in name order (not the dict's order).
        if claim {
            let mut new: Vec<&str> = resolved
                .iter()
                .filter(|(n, _, _)| self.columns.get(n).is_none())
                .map(|(n, _, _)| n.as_str())
                .collect();
            new.sort_unstable();
            new.dedup();
            let new: Vec<String> = new.into_iter().map(String::from).collect();
            for n in &new {
                self.column(n, true)?;
            }
        }
        let dim = self.columns.capacity();
        let mut cells: Vec<(usize, f64)> = Vec::with_capacity(resolved.len());
        for (name, x, is_nominal) in resolved {
            let Some(j) = self.columns.get(&name) else {
                continue;
            };
            if !is_nominal && self.nominal.get(j).is_some_and(|m| m.is_some()) {
                return Err(PyTypeError::new_err(format!(
                    "feature `{name}` is nominal: give one of its values as a string"
                )));
            }
            cells.push((j, x));
        }
        Ok(Self::assemble(cells, dim))
    }

    /// The features of `(column, value)` cells (the first of a repeated column kept):
    /// dense when at least a quarter of the columns are not zero, else sparse (its
    /// non-zero values). The trees learn and predict the same either way (they fold a
    /// sparse example's zeros in); sparse costs work for the non-zero values only.
    fn assemble(mut cells: Vec<(usize, f64)>, dim: usize) -> Features {
        cells.sort_by_key(|&(j, _)| j);
        cells.dedup_by_key(|c| c.0);
        let nonzero = cells.iter().filter(|&&(_, x)| x != 0.0).count();
        if nonzero * 4 >= dim {
            let mut values = vec![0.0; dim];
            for (j, x) in cells {
                values[j] = x;
            }
            Features::Dense(values)
        } else {
            cells.retain(|&(_, x)| x != 0.0);
            Features::Sparse {
                indices: cells.iter().map(|&(j, _)| j as u32).collect(),
                values: cells.iter().map(|&(_, x)| x).collect(),
                dim: dim as u32,
            }
        }
    }

    fn dict_features(&mut self, x: &Bound<'_, PyAny>, claim: bool) -> PyResult<Features> {
        let dict = x
            .cast::<PyDict>()
            .map_err(|_| PyTypeError::new_err("x: expected a dict of features"))?;
        let mut pairs = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let name = key_name(&k)?;
            if let Some(value) = value_of(&name, &v)? {
                pairs.push((name, value));
            }
        }
        self.features(pairs, claim)
    }

    fn label(&self, y: &Bound<'_, PyAny>) -> PyResult<Label> {
        let k = self.model.schema().num_labels();
        let check = |l: i64| -> PyResult<u32> {
            if l < 0 || l as usize >= k {
                Err(PyValueError::new_err(format!(
                    "label index {l}: the model has {k} labels"
                )))
            } else {
                Ok(l as u32)
            }
        };
        if let Ok(l) = y.extract::<i64>() {
            if self.model.schema().task == Task::Multilabel {
                return Err(PyTypeError::new_err(
                    "a multi-label model learns label sets",
                ));
            }
            return Ok(Label::Class(check(l)?));
        }
        let set: Vec<i64> = y
            .extract()
            .map_err(|_| PyTypeError::new_err("y: expected a label index or a list of them"))?;
        if self.model.schema().task != Task::Multilabel {
            return Err(PyTypeError::new_err(
                "a single-label model learns one class",
            ));
        }
        Ok(Label::set(
            set.into_iter().map(check).collect::<PyResult<_>>()?,
        ))
    }

    fn example(&mut self, features: Features, label: Option<Label>) -> Example {
        let id = self.next_id;
        self.next_id += 1;
        Example {
            id,
            features,
            label,
        }
    }
}

/// An id as the model keeps it: an integer, or a string hashed (FNV-1a, 64 bits).
fn event_id(id: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = id.cast::<PyString>() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.extract::<String>()?.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        return Ok(h);
    }
    id.extract::<u64>()
        .map_err(|_| PyTypeError::new_err("id: expected a non-negative integer or a string"))
}

fn outcome(o: FeedbackOutcome) -> &'static str {
    match o {
        FeedbackOutcome::Joined => "joined",
        FeedbackOutcome::Held => "held",
        FeedbackOutcome::Late => "late",
        FeedbackOutcome::Repeated => "repeated",
    }
}

/// A prediction as a tuple: (class, labels, scores, top, shown).
fn prediction<'py>(py: Python<'py>, p: &Prediction) -> PyResult<Bound<'py, PyTuple>> {
    (
        p.class,
        p.labels.clone(),
        p.scores.clone(),
        p.top.clone(),
        p.shown.clone(),
    )
        .into_pyobject(py)
}

/// Rows of little-endian f64s, `cols` a row.
fn rows_of(data: &[u8], rows: usize, cols: usize) -> PyResult<Vec<f64>> {
    if data.len() != rows * cols * 8 {
        return Err(PyValueError::new_err(format!(
            "X: {} bytes for {rows} rows of {cols} columns",
            data.len()
        )));
    }
    Ok(data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

#[pymethods]
impl Core {
    /// A fresh model: `algorithm` (the command line's name), `schema` (JSON, the model
    /// file's schema: free columns named `(free j)`), `seed`, and the given model options
    /// by keyword name.
    #[staticmethod]
    fn create(
        algorithm: &str,
        schema: &str,
        seed: u64,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Core> {
        let algo =
            Algorithm::from_str(algorithm).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let schema: Schema = serde_json::from_str(schema)
            .map_err(|e| PyValueError::new_err(format!("schema: {e}")))?;
        schema
            .check_limits()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut given = options::Given::default();
        for (k, v) in options.iter() {
            let name: String = k.extract()?;
            if v.is_none() {
                continue;
            }
            if !given.set(&name.replace('_', "-"), &v)? {
                return Err(PyTypeError::new_err(format!("no model option `{name}`")));
            }
        }
        let config = given
            .config(algo, seed, &schema)
            .map_err(PyValueError::new_err)?;
        let model = Model::new(config, schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Core::from_model(model))
    }

    /// The schema as JSON.
    fn schema_json(&self) -> PyResult<String> {
        serde_json::to_string(self.model.schema()).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The algorithm's command-line name.
    fn algorithm(&self) -> &'static str {
        self.model.config().algorithm.name()
    }

    /// The seed.
    fn seed(&self) -> u64 {
        self.model.config().seed
    }

    /// The options the algorithm reads, as (keyword, value as the command line writes it).
    fn options(&self) -> Vec<(String, String)> {
        options::options_of(self.model.config())
    }

    /// The names of the columns taken, in column order.
    fn feature_names(&self) -> Vec<String> {
        self.columns.names().into_iter().map(String::from).collect()
    }

    /// Names label `l` (a free label slot taken by a new class).
    fn name_label(&mut self, l: usize, name: &str) -> PyResult<()> {
        self.model.name_label(l, name).map_err(model_err)
    }

    /// Learns from features `x` (a dict) and label `y` (an index, or a list for a label set).
    fn learn(&mut self, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let label = self.label(y)?;
        let features = self.dict_features(x, true)?;
        let example = self.example(features, Some(label));
        self.model.learn_one(&example).map_err(model_err)
    }

    /// Predicts `x` (a dict), learning nothing: (class, labels, scores, top, shown).
    fn predict<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let features = self.dict_features(x, false)?;
        let example = self.example(features, None);
        prediction(py, &self.model.predict_one(&example))
    }

    /// Predicts `x`, then learns from `y` in the same pass (test-then-train, as `flowboost
    /// eval --protocol prequential` does): (class, labels, scores, top, shown).
    fn predict_learn<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        y: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let label = self.label(y)?;
        let features = self.dict_features(x, true)?;
        let example = self.example(features, Some(label));
        prediction(py, &self.model.predict_learn_one(&example))
    }

    /// Predicts `x` and keeps it under `id` until its feedback comes.
    fn predict_pending<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let id = event_id(id)?;
        let features = self.dict_features(x, true)?;
        let example = Example {
            id,
            features,
            label: None,
        };
        prediction(py, &self.model.predict_pending(example))
    }

    /// The label (an index, or a list) of event `id`: "joined", "held", "late" or "repeated".
    fn learn_feedback(
        &mut self,
        id: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
    ) -> PyResult<&'static str> {
        let id = event_id(id)?;
        let label = self.label(y)?;
        Ok(outcome(
            self.model.learn_feedback(id, Feedback::Label(label)),
        ))
    }

    /// Clicks (label indices) on the labels shown for event `id`.
    fn learn_clicks(&mut self, id: &Bound<'_, PyAny>, clicked: Vec<u32>) -> PyResult<&'static str> {
        let id = event_id(id)?;
        self.check_labels(&clicked)?;
        Ok(outcome(
            self.model.learn_feedback(id, Feedback::Clicks(clicked)),
        ))
    }

    /// Logged clicks (label index, propensity) for event `id`.
    fn learn_logged(
        &mut self,
        id: &Bound<'_, PyAny>,
        clicks: Vec<(u32, f64)>,
    ) -> PyResult<&'static str> {
        let id = event_id(id)?;
        let labels: Vec<u32> = clicks.iter().map(|c| c.0).collect();
        self.check_labels(&labels)?;
        if let Some((_, p)) = clicks
            .iter()
            .find(|(_, p)| !(p.is_finite() && *p > 0.0 && *p <= 1.0))
        {
            return Err(PyValueError::new_err(format!(
                "propensities: {p} is not in (0, 1]"
            )));
        }
        Ok(outcome(
            self.model.learn_feedback(id, Feedback::Logged(clicks)),
        ))
    }

    /// The number of events waiting for feedback.
    fn pending(&self) -> usize {
        self.model.pending()
    }

    /// Learns from rows of numbers (little-endian f64 bytes, `names` the columns) and
    /// their labels (indices), with the GIL released.
    fn learn_rows(
        &mut self,
        py: Python<'_>,
        names: Vec<String>,
        data: &[u8],
        rows: usize,
        labels: Vec<i64>,
    ) -> PyResult<()> {
        let examples = self.labeled_rows(names, data, rows, &labels)?;
        let model = &mut self.model;
        py.detach(|| model.learn_many(&examples)).map_err(model_err)
    }

    /// Predicts each row, then learns from its label, in one pass (as `predict_learn`),
    /// rows of numbers as `learn_rows`, with the GIL released: per row (class, labels,
    /// scores, top, shown) as `predict_rows`.
    fn predict_learn_rows<'py>(
        &mut self,
        py: Python<'py>,
        names: Vec<String>,
        data: &[u8],
        rows: usize,
        labels: Vec<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let examples = self.labeled_rows(names, data, rows, &labels)?;
        let model = &mut self.model;
        let predictions: Vec<Prediction> = py.detach(|| model.predict_learn_many(&examples));
        let out = PyList::empty(py);
        for p in &predictions {
            out.append(prediction(py, p)?)?;
        }
        Ok(out)
    }

    /// Predicts rows of numbers (as `learn_rows`), with the GIL released: per row
    /// (class, labels, scores, top, shown).
    fn predict_rows<'py>(
        &mut self,
        py: Python<'py>,
        names: Vec<String>,
        data: &[u8],
        rows: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let values = rows_of(data, rows, names.len())?;
        let examples = self.row_examples(names, &values, rows, false, None)?;
        let model = &mut self.model;
        let predictions: Vec<Prediction> = py.detach(|| model.predict_many(&examples));
        let out = PyList::empty(py);
        for p in &predictions {
            out.append(prediction(py, p)?)?;
        }
        Ok(out)
    }

    /// The model in the model file format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut bytes = Vec::new();
        self.model.save(&mut bytes).map_err(model_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A model read from the bytes of a model file.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Core> {
        Model::load(data).map(Core::from_model).map_err(model_err)
    }

    /// Writes the model file `path`, atomically.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.model.save_file(&path).map_err(model_err)
    }

    /// Reads the model file `path`.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Core> {
        Model::load_file(&path)
            .map(Core::from_model)
            .map_err(model_err)
    }
}

impl Core {
    fn check_labels(&self, labels: &[u32]) -> PyResult<()> {
        let k = self.model.schema().num_labels();
        match labels.iter().find(|&&l| l as usize >= k) {
            Some(l) => Err(PyValueError::new_err(format!(
                "label index {l}: the model has {k} labels"
            ))),
            None => Ok(()),
        }
    }

    /// The labeled examples of rows of numbers (as `learn_rows` takes them), their labels
    /// checked: one per row, each an index of the model's labels.
    fn labeled_rows(
        &mut self,
        names: Vec<String>,
        data: &[u8],
        rows: usize,
        labels: &[i64],
    ) -> PyResult<Vec<Example>> {
        if labels.len() != rows {
            return Err(PyValueError::new_err(format!(
                "y: {} labels for {rows} rows",
                labels.len()
            )));
        }
        let values = rows_of(data, rows, names.len())?;
        let k = self.model.schema().num_labels() as i64;
        if let Some(l) = labels.iter().find(|&&l| l < 0 || l >= k) {
            return Err(PyValueError::new_err(format!(
                "label index {l}: the model has {k} labels"
            )));
        }
        self.row_examples(names, &values, rows, true, Some(labels))
    }

    fn row_examples(
        &mut self,
        names: Vec<String>,
        values: &[f64],
        rows: usize,
        claim: bool,
        labels: Option<&[i64]>,
    ) -> PyResult<Vec<Example>> {
        let cols = names.len();
        let mut examples = Vec::with_capacity(rows);
        // The block's columns, looked up once (again after a row claims new ones).
        let mut column: Vec<Option<usize>> = names.iter().map(|n| self.columns.get(n)).collect();
        for r in 0..rows {
            let row = &values[r * cols..(r + 1) * cols];
            if let Some((name, x)) = names.iter().zip(row).find(|(_, x)| x.is_infinite()) {
                return Err(PyValueError::new_err(format!(
                    "row {r}, feature `{name}`: {x} is not a finite number"
                )));
            }
            let new = claim
                && row
                    .iter()
                    .zip(&column)
                    .any(|(x, c)| c.is_none() && !x.is_nan());
            let features = if new {
                // New names: the dict path claims them (in name order), as for a dict.
                let pairs = names
                    .iter()
                    .zip(row)
                    .filter(|(_, x)| !x.is_nan())
                    .map(|(n, &x)| (n.clone(), Value::Number(x)))
                    .collect();
                let features = self.features(pairs, claim)?;
                column = names.iter().map(|n| self.columns.get(n)).collect();
                features
            } else {
                let mut cells = Vec::with_capacity(cols);
                for (k, &x) in row.iter().enumerate() {
                    let Some(j) = column[k].filter(|_| !x.is_nan()) else {
                        continue;
                    };
                    if self.nominal.get(j).is_some_and(|m| m.is_some()) {
                        return Err(PyTypeError::new_err(format!(
                            "feature `{}` is nominal: give one of its values as a string",
                            names[k]
                        )));
                    }
                    cells.push((j, x));
                }
                Self::assemble(cells, self.columns.capacity())
            };
            let label = labels.map(|l| Label::Class(l[r] as u32));
            examples.push(self.example(features, label));
        }
        Ok(examples)
    }
}

/// Reads a dataset file as `flowboost eval --data PATH` reads it: (schema as JSON, rows
/// of (features dict, label index or list of label indices)). `labels`: a multi-label
/// file's label count; `xml`: its MULAN label header.
#[pyfunction]
#[pyo3(signature = (path, labels=None, xml=None))]
fn read_dataset<'py>(
    py: Python<'py>,
    path: PathBuf,
    labels: Option<usize>,
    xml: Option<PathBuf>,
) -> PyResult<(String, Bound<'py, PyList>)> {
    let options = ReadOptions {
        labels,
        xml,
        ..ReadOptions::default()
    };
    let source = DataSource::open(std::slice::from_ref(&path), &options)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let schema = source.schema().clone();
    let out = PyList::empty(py);
    let examples = source
        .examples(0)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    for e in examples {
        let e = e.map_err(|e| PyValueError::new_err(e.to_string()))?;
        let x = PyDict::new(py);
        let mut err = None;
        e.features.for_each(|j, v| {
            if err.is_some() {
                return;
            }
            let a = &schema.attributes[j];
            let r = match &a.kind {
                AttributeKind::Numeric => x.set_item(&a.name, v),
                AttributeKind::Nominal(values) if v.is_nan() => Ok(()),
                AttributeKind::Nominal(values) => match values.get(v as usize) {
                    Some(s) => x.set_item(&a.name, s),
                    None => Ok(()),
                },
            };
            if let Err(e) = r {
                err = Some(e);
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        let y: Bound<'py, PyAny> = match &e.label {
            Some(Label::Class(c)) => c.into_pyobject(py)?.into_any(),
            Some(Label::Set(s)) => PyList::new(py, s)?.into_any(),
            None => py.None().into_bound(py),
        };
        out.append((x, y))?;
    }
    let json = serde_json::to_string(&schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((json, out))
}

/// The name of free column `j`.
#[pyfunction]
fn free_column_name(j: usize) -> String {
    free_name(j)
}

/// flowboost's Rust core.
#[pymodule]
fn _flowboost(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_function(wrap_pyfunction!(read_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(free_column_name, m)?)?;
    m.add("ModelFileError", m.py().get_type::<ModelFileError>())?;
    Ok(())
}
