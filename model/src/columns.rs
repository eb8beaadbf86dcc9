//! Names mapped to a model's columns as they appear: a model is built with room for a
//! number of features (or labels), its free columns named [`free_name`]; the first time a
//! name is seen it takes the lowest free column, and [`Model::name_attribute`] (or
//! [`Model::name_label`]) writes it into the model's schema, so that a saved model names
//! its columns as the data did and the command line maps a file's features to them by
//! name.
//!
//! [`Model::name_attribute`]: crate::Model::name_attribute
//! [`Model::name_label`]: crate::Model::name_label

use std::collections::{BTreeSet, HashMap};

/// The prefix of a free column's name.
pub const FREE_PREFIX: &str = "(free ";

/// The name of free column `j`: `(free j)`.
pub fn free_name(j: usize) -> String {
    format!("{FREE_PREFIX}{j})")
}

/// Whether `name` is a free column's name.
pub fn is_free_name(name: &str) -> bool {
    name.starts_with(FREE_PREFIX) && name.ends_with(')')
}

/// Why a name found no column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    /// Every column is taken.
    #[error("`{name}`: every one of the model's {capacity} columns is taken (raise the limit)")]
    Full {
        /// The name.
        name: String,
        /// The number of columns.
        capacity: usize,
    },
    /// The name is a free column's.
    #[error("`{name}`: names starting with `(free ` mark free columns")]
    Reserved {
        /// The name.
        name: String,
    },
}

/// The columns of a model by name, with the free ones.
///
/// ```
/// use flowboost_model::{Columns, free_name};
///
/// let mut columns = Columns::new(["age".to_string(), free_name(1), free_name(2)]);
/// assert_eq!(columns.get("age"), Some(0));
/// assert_eq!(columns.claim("income").unwrap(), (1, true));
/// assert_eq!(columns.claim("income").unwrap(), (1, false));
/// assert_eq!(columns.claim("zip").unwrap(), (2, true));
/// assert!(columns.claim("city").is_err());
/// assert_eq!(columns.names(), ["age", "income", "zip"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Columns {
    index: HashMap<String, usize>,
    names: Vec<Option<String>>,
    free: BTreeSet<usize>,
}

impl Columns {
    /// The columns of a schema's names, in column order (free names mark free columns).
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        let mut columns = Columns::default();
        for (j, name) in names.into_iter().enumerate() {
            if is_free_name(&name) {
                columns.free.insert(j);
                columns.names.push(None);
            } else {
                columns.index.entry(name.clone()).or_insert(j);
                columns.names.push(Some(name));
            }
        }
        columns
    }

    /// The column of `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The column of `name`, taking the lowest free one for a new name; `true` when it is
    /// new (its column must be named in the model).
    pub fn claim(&mut self, name: &str) -> Result<(usize, bool), ColumnsError> {
        if let Some(j) = self.get(name) {
            return Ok((j, false));
        }
        if is_free_name(name) {
            return Err(ColumnsError::Reserved { name: name.into() });
        }
        let Some(j) = self.free.pop_first() else {
            return Err(ColumnsError::Full {
                name: name.into(),
                capacity: self.names.len(),
            });
        };
        self.index.insert(name.to_string(), j);
        self.names[j] = Some(name.to_string());
        Ok((j, true))
    }

    /// The number of columns, free ones included.
    pub fn capacity(&self) -> usize {
        self.names.len()
    }

    /// The names of the taken columns, in column order.
    pub fn names(&self) -> Vec<&str> {
        self.names.iter().flatten().map(String::as_str).collect()
    }

    /// The name of column `j` (`None`: free, or past the end).
    pub fn name(&self, j: usize) -> Option<&str> {
        self.names.get(j).and_then(|n| n.as_deref())
    }

    /// Whether column `j` is free.
    pub fn is_free(&self, j: usize) -> bool {
        self.free.contains(&j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_take_the_lowest_free_column_and_keep_it() {
        let mut c = Columns::new([free_name(0), "b".into(), free_name(2), free_name(3)]);
        assert_eq!(c.capacity(), 4);
        assert!(c.is_free(0) && !c.is_free(1));
        assert_eq!(c.claim("z").unwrap(), (0, true));
        assert_eq!(c.claim("b").unwrap(), (1, false));
        assert_eq!(c.claim("a").unwrap(), (2, true));
        assert_eq!(c.claim("z").unwrap(), (0, false));
        assert_eq!(c.name(2), Some("a"));
        assert_eq!(c.name(3), None);
        assert_eq!(
            c.claim("(free 9)").unwrap_err(),
            ColumnsError::Reserved {
                name: "(free 9)".into()
            }
        );
        assert_eq!(c.claim("y").unwrap(), (3, true));
        let e = c.claim("x").unwrap_err().to_string();
        assert!(e.contains("4 columns"), "{e}");
        // A schema read back (the names written into it) maps the same.
        let again = Columns::new(["z", "b", "a", "y"].map(String::from));
        assert_eq!(again.get("a"), Some(2));
        assert!(!again.is_free(3));
    }
}
