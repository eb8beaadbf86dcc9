//! Records read with a file's own schema, fitted to a model's schema for scoring: the
//! features by name (nominal values by name), the labels left out (a model scoring a
//! record does not look at its label, so a file whose labels are all of one class, or
//! absent, is scored as well as any).

use flowboost_operators::data::{AttributeKind, Example, Features, Schema};

/// How one feature of the file becomes one of the model's.
#[derive(Clone, Debug)]
enum FeatureMap {
    /// The model's feature of this index, the value as it is.
    Same(u32),
    /// The model's nominal feature of this index: the file's value index `v` is the
    /// model's `values[v]` (`None`: a value the model does not know).
    Nominal(u32, Vec<Option<u32>>),
    /// A feature the model does not have: a record where it is not 0 (or missing) does
    /// not fit.
    Absent,
}

/// Fits the records of a file (read with the file's schema) to a model's schema.
///
/// ```
/// use flowboost_model::SchemaMap;
/// use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
///
/// let model = Schema {
///     attributes: vec![Attribute::numeric("f0"), Attribute::numeric("f1"), Attribute::numeric("f2")],
///     labels: vec!["-1".into(), "+1".into()],
///     task: Task::Binary,
/// };
/// // A file whose largest feature index is 1, with one class only.
/// let file = Schema {
///     attributes: vec![Attribute::numeric("f0"), Attribute::numeric("f1")],
///     labels: vec!["+1".into()],
///     task: Task::Multiclass,
/// };
/// let map = SchemaMap::new(&model, &file).unwrap();
/// let sparse = Features::Sparse { indices: vec![1], values: vec![2.0], dim: 2 };
/// let record = Example { id: 4, features: sparse, label: Some(Label::Class(0)) };
/// let fitted = map.fit(record).unwrap();
/// assert_eq!(fitted.features.dim(), 3);
/// assert_eq!(fitted.features.get(1), 2.0);
/// assert_eq!(fitted.label, None);
///
/// // A record with a feature the model does not have is refused, naming it.
/// let wide = Schema { attributes: vec![Attribute::numeric("f0"), Attribute::numeric("f7")], ..model.clone() };
/// let map = SchemaMap::new(&model, &wide).unwrap();
/// let record = Example { id: 5, features: Features::Sparse { indices: vec![1], values: vec![1.0], dim: 2 }, label: None };
/// let e = map.fit(record).unwrap_err();
/// assert_eq!(e.to_string(), "record 5: feature `f7` is not one of the model's 3 features");
/// ```
#[derive(Clone, Debug)]
pub struct SchemaMap {
    /// `None` when the file's schema is the model's: records pass unchanged.
    features: Option<Vec<FeatureMap>>,
    names: Vec<String>,
    dim: usize,
    /// The first feature of the model the file does not have: a dense record (which gives
    /// every feature) does not fit then; a sparse one reads it as 0.
    lacking: Option<String>,
}

impl SchemaMap {
    /// The map from `file`'s schema to `model`'s. Refused when a feature is numeric in
    /// one and nominal in the other.
    pub fn new(model: &Schema, file: &Schema) -> Result<Self, SchemaMapError> {
        let names = file.attributes.iter().map(|a| a.name.clone()).collect();
        if model == file {
            return Ok(SchemaMap {
                features: None,
                names,
                dim: model.attributes.len(),
                lacking: None,
            });
        }
        let mut features = Vec::with_capacity(file.attributes.len());
        for a in &file.attributes {
            let Some(j) = model.attributes.iter().position(|m| m.name == a.name) else {
                features.push(FeatureMap::Absent);
                continue;
            };
            let m = &model.attributes[j];
            features.push(match (&a.kind, &m.kind) {
                (AttributeKind::Numeric, AttributeKind::Numeric) => FeatureMap::Same(j as u32),
                (AttributeKind::Nominal(values), AttributeKind::Nominal(known)) => {
                    FeatureMap::Nominal(
                        j as u32,
                        values
                            .iter()
                            .map(|v| known.iter().position(|k| k == v).map(|p| p as u32))
                            .collect(),
                    )
                }
                (AttributeKind::Numeric, AttributeKind::Nominal(_)) => {
                    return Err(SchemaMapError::Kinds {
                        feature: a.name.clone(),
                        model: "nominal",
                        data: "numeric",
                    });
                }
                (AttributeKind::Nominal(_), AttributeKind::Numeric) => {
                    return Err(SchemaMapError::Kinds {
                        feature: a.name.clone(),
                        model: "numeric",
                        data: "nominal",
                    });
                }
            });
        }
        let lacking = model
            .attributes
            .iter()
            .find(|m| !file.attributes.iter().any(|a| a.name == m.name))
            .map(|m| m.name.clone());
        Ok(SchemaMap {
            features: Some(features),
            names,
            dim: model.attributes.len(),
            lacking,
        })
    }

    /// Whether records pass unchanged (the file's schema is the model's).
    pub fn is_identity(&self) -> bool {
        self.features.is_none()
    }

    /// The model's feature and value of the file's feature `j` of value `x` (`None`: a
    /// feature the model does not have, 0 or missing here), or why it does not fit.
    fn value(&self, map: &FeatureMap, j: usize, x: f64) -> Result<Option<(u32, f64)>, Misfit> {
        match map {
            FeatureMap::Same(m) => Ok(Some((*m, x))),
            FeatureMap::Nominal(m, _) if x.is_nan() => Ok(Some((*m, x))),
            FeatureMap::Nominal(m, values) => match values.get(x as usize).copied().flatten() {
                Some(v) => Ok(Some((*m, f64::from(v)))),
                None => Err(Misfit::UnknownValue {
                    feature: self.names[j].clone(),
                }),
            },
            FeatureMap::Absent if x == 0.0 || x.is_nan() => Ok(None),
            FeatureMap::Absent => Err(Misfit::NotInModel {
                feature: self.names[j].clone(),
                dim: self.dim,
            }),
        }
    }

    /// The record in the model's schema (its label left out), or why it does not fit.
    pub fn fit(&self, record: Example) -> Result<Example, SchemaMapError> {
        let Some(map) = &self.features else {
            return Ok(record);
        };
        if let (Features::Dense(_), Some(name)) = (&record.features, &self.lacking) {
            return Err(SchemaMapError::Record {
                record: record.id,
                misfit: Misfit::Lacking {
                    feature: name.clone(),
                },
            });
        }
        let mut pairs: Vec<(u32, f64)> = Vec::with_capacity(record.features.stored());
        let mut bad = None;
        record.features.for_each(|j, x| {
            if bad.is_none() {
                match self.value(&map[j], j, x) {
                    Ok(Some(pair)) => pairs.push(pair),
                    Ok(None) => {}
                    Err(reason) => bad = Some(reason),
                }
            }
        });
        if let Some(misfit) = bad {
            return Err(SchemaMapError::Record {
                record: record.id,
                misfit,
            });
        }
        let features = match record.features {
            Features::Dense(_) => {
                let mut values = vec![0.0; self.dim];
                for (j, x) in pairs {
                    values[j as usize] = x;
                }
                Features::Dense(values)
            }
            Features::Sparse { .. } => {
                pairs.retain(|&(_, x)| x != 0.0);
                pairs.sort_unstable_by_key(|&(j, _)| j);
                Features::Sparse {
                    indices: pairs.iter().map(|&(j, _)| j).collect(),
                    values: pairs.iter().map(|&(_, x)| x).collect(),
                    dim: self.dim as u32,
                }
            }
        };
        Ok(Example {
            id: record.id,
            features,
            label: None,
        })
    }
}

/// Why a data file's schema or record does not fit the model's.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SchemaMapError {
    /// A feature of both is numeric in one and nominal in the other.
    #[error("feature `{feature}` is {model} in the model, {data} in the data")]
    Kinds {
        /// The feature.
        feature: String,
        /// Its kind in the model.
        model: &'static str,
        /// Its kind in the data.
        data: &'static str,
    },
    /// A record does not fit.
    #[error("record {record}: {misfit}")]
    Record {
        /// The record's id.
        record: u64,
        /// Why.
        misfit: Misfit,
    },
}

/// Why a record does not fit the model's schema.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Misfit {
    /// A dense record lacks a feature of the model.
    #[error("the data has no feature `{feature}`, one of the model's")]
    Lacking {
        /// The model's feature.
        feature: String,
    },
    /// A nominal value the model's attribute does not have.
    #[error("feature `{feature}`: a value the model does not know")]
    UnknownValue {
        /// The feature.
        feature: String,
    },
    /// A non-zero value of a feature the model does not have.
    #[error("feature `{feature}` is not one of the model's {dim} features")]
    NotInModel {
        /// The feature.
        feature: String,
        /// The model's number of features.
        dim: usize,
    },
}
