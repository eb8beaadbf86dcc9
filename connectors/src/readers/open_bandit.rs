//! The Open Bandit Dataset log (Saito et al. 2020, "Open Bandit Dataset and Pipeline"):
//! one CSV row per (impression, position) with the logged item, its click and the logging
//! policy's propensity, read as a stream of impressions.
//!
//! The columns are found by name in the header: `timestamp`, `item_id`, `position`
//! (1-based), `click` (0 or 1), `propensity_score`, `user_feature_*` (hashed categorical
//! values, kept as text) and `user-item_affinity_*` (numbers); other columns (the unnamed
//! index) are ignored. Two optional columns, written by the click simulator
//! ([`crate::generators::clicks`]), are read when present: `click_delay` (the impressions
//! between the impression and its click; empty for a row without a click) and
//! `slate_propensity` (the logging policy's probability of the whole slate; empty if
//! unknown). Consecutive rows with the same timestamp and the same user features
//! form one impression, as long as each position occurs once in it.
//!
//! The number of items is given, or read from `item_context.csv` in the log's folder (the
//! OBD layout). Every error names the file, the line and the reason.

use super::line_error::LineError;
use super::lines::LineReader;
use super::number::parse_number;
use super::{ReadError, excerpt};
use std::path::{Path, PathBuf};

/// One logged (impression, position): the item the logging policy put at `position`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedSlot {
    /// The 1-based line of the row.
    pub line: u64,
    /// The logged item, `0..items`.
    pub item: u32,
    /// The 1-based position it was shown at.
    pub position: u32,
    /// Whether the user clicked it.
    pub click: bool,
    /// The logging policy's probability of putting this item at this position, in `(0, 1]`.
    pub propensity: f64,
    /// The click's delay in impressions (the `click_delay` column), when known.
    pub delay: Option<u64>,
}

/// One impression: a user (context) and the logged slots shown to them.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedImpression {
    /// The 1-based line of its first row.
    pub line: u64,
    /// The timestamp, as written.
    pub timestamp: String,
    /// The hashed user features, as written (`user_feature_0..`).
    pub user: Vec<String>,
    /// The user-item affinities (`user-item_affinity_0..`), those of the first row.
    pub affinity: Vec<f64>,
    /// The slots, in file order (distinct positions).
    pub slots: Vec<LoggedSlot>,
    /// The logging policy's probability of the whole slate (the `slate_propensity` column
    /// of the first row), when known.
    pub slate_propensity: Option<f64>,
}

/// The column indices of the log.
#[derive(Clone, Debug)]
struct Columns {
    count: usize,
    timestamp: usize,
    item: usize,
    position: usize,
    click: usize,
    propensity: usize,
    user: Vec<usize>,
    affinity: Vec<usize>,
    delay: Option<usize>,
    slate: Option<usize>,
}

/// An Open Bandit Dataset log file, opened and checked (header, number of items).
#[derive(Clone, Debug)]
pub struct OpenBanditLog {
    path: PathBuf,
    columns: Columns,
    items: usize,
    user_names: Vec<String>,
}

/// The numbered columns `prefix0, prefix1, ...` of a header, in number order.
fn numbered(header: &[&str], prefix: &str) -> Vec<(usize, String)> {
    let mut found: Vec<(u64, usize, String)> = header
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let n = h.strip_prefix(prefix)?.parse::<u64>().ok()?;
            Some((n, i, h.to_string()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, i, h)| (i, h)).collect()
}

/// The number of items listed in an OBD `item_context.csv` (its `item_id` column must hold
/// `0..n`, each once).
pub fn item_count(path: &Path) -> Result<usize, ReadError> {
    let mut lines = LineReader::open(path)?;
    let header = match lines.next_line()? {
        Some(l) => l
            .text
            .split(',')
            .map(|s| s.trim().to_string())
            .collect::<Vec<_>>(),
        None => return Err(ReadError::file(path, "empty file")),
    };
    let col = header
        .iter()
        .position(|h| h == "item_id")
        .ok_or_else(|| ReadError::at(path, 1, "no `item_id` column in the header"))?;
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line()? {
        if line.text.trim().is_empty() {
            continue;
        }
        let field = line.text.split(',').nth(col).unwrap_or("").trim();
        let id: usize = field.parse().map_err(|_| {
            ReadError::at(
                path,
                line.number,
                format!("bad item_id `{}`", excerpt(field)),
            )
        })?;
        if id >= seen.len() {
            seen.resize(id + 1, false);
        }
        if std::mem::replace(&mut seen[id], true) {
            return Err(ReadError::at(
                path,
                line.number,
                format!("item_id {id} listed twice"),
            ));
        }
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(ReadError::file(
            path,
            format!("item_id {missing} is missing (ids must be 0..n)"),
        ));
    }
    if seen.is_empty() {
        return Err(ReadError::file(path, "no items"));
    }
    Ok(seen.len())
}

impl OpenBanditLog {
    /// Opens the log at `path` and reads its header. `items`: the number of items, or
    /// `None` to read it from `item_context.csv` beside the log.
    pub fn open(path: &Path, items: Option<usize>) -> Result<Self, ReadError> {
        let mut lines = LineReader::open(path)?;
        let header: Vec<String> = match lines.next_line()? {
            Some(l) => l.text.split(',').map(|s| s.trim().to_string()).collect(),
            None => return Err(ReadError::file(path, "empty file (no header)")),
        };
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        let find = |name: &str| {
            h.iter().position(|c| *c == name).ok_or_else(|| {
                ReadError::at(
                    path,
                    1,
                    format!(
                        "no `{}` column in the header (not an Open Bandit Dataset log?)",
                        excerpt(name)
                    ),
                )
            })
        };
        let user = numbered(&h, "user_feature_");
        let columns = Columns {
            count: h.len(),
            timestamp: find("timestamp")?,
            item: find("item_id")?,
            position: find("position")?,
            click: find("click")?,
            propensity: find("propensity_score")?,
            user: user.iter().map(|(i, _)| *i).collect(),
            affinity: numbered(&h, "user-item_affinity_")
                .into_iter()
                .map(|(i, _)| i)
                .collect(),
            delay: h.iter().position(|c| *c == "click_delay"),
            slate: h.iter().position(|c| *c == "slate_propensity"),
        };
        let items = match items {
            Some(0) => return Err(ReadError::file(path, "the number of items must be >= 1")),
            Some(n) => n,
            None => {
                let context = path.with_file_name("item_context.csv");
                if !context.is_file() {
                    return Err(ReadError::file(
                        path,
                        format!(
                            "cannot tell the number of items: no {} beside the log (give the number of items)",
                            context.display()
                        ),
                    ));
                }
                item_count(&context)?
            }
        };
        Ok(OpenBanditLog {
            path: path.to_path_buf(),
            columns,
            items,
            user_names: user.into_iter().map(|(_, n)| n).collect(),
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of items (labels).
    pub fn items(&self) -> usize {
        self.items
    }

    /// The names of the user feature columns, in order.
    pub fn user_features(&self) -> &[String] {
        &self.user_names
    }

    /// The number of user-item affinity columns.
    pub fn affinities(&self) -> usize {
        self.columns.affinity.len()
    }

    /// Streams the impressions from the start of the file.
    pub fn impressions(&self) -> Result<Impressions, ReadError> {
        let mut lines = LineReader::open(&self.path)?;
        lines.next_line()?;
        Ok(Impressions {
            lines,
            columns: self.columns.clone(),
            items: self.items,
            next: None,
            error: None,
            done: false,
        })
    }
}

/// One parsed row, before grouping.
struct Row {
    timestamp: String,
    user: Vec<String>,
    affinity: Vec<f64>,
    slate: Option<f64>,
    slot: LoggedSlot,
}

/// The impressions of a log, in file order ([`OpenBanditLog::impressions`]). Reading stops
/// after the first error.
pub struct Impressions {
    lines: LineReader,
    columns: Columns,
    items: usize,
    next: Option<Row>,
    error: Option<ReadError>,
    done: bool,
}

impl Impressions {
    /// Parses one line (`None`: a blank line).
    fn parse(&self, number: u64, text: &str) -> Result<Option<Row>, ReadError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let path = self.lines.path();
        let c = &self.columns;
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if fields.len() != c.count {
            return Err(ReadError::at(
                path,
                number,
                format!(
                    "{} fields, but the header has {} columns",
                    fields.len(),
                    c.count
                ),
            ));
        }
        let bad = |reason: String| ReadError::at(path, number, reason);
        let item: u32 = fields[c.item]
            .parse()
            .map_err(|_| bad(format!("bad item_id `{}`", excerpt(fields[c.item]))))?;
        if item as usize >= self.items {
            return Err(bad(format!(
                "item_id {item} out of range (the log has {} items, 0..{})",
                self.items,
                self.items - 1
            )));
        }
        let position: u32 = match fields[c.position].parse() {
            Ok(p) if p >= 1 => p,
            _ => {
                return Err(bad(format!(
                    "bad position `{}` (expected 1, 2, ...)",
                    excerpt(fields[c.position])
                )));
            }
        };
        let click = match fields[c.click] {
            "0" => false,
            "1" => true,
            other => {
                return Err(bad(format!(
                    "bad click `{}` (expected 0 or 1)",
                    excerpt(other)
                )));
            }
        };
        let propensity = parse_number(fields[c.propensity]).map_err(|e| {
            bad(LineError::number(e, fields[c.propensity], "propensity_score").to_string())
        })?;
        if !(propensity > 0.0 && propensity <= 1.0) {
            return Err(bad(format!("propensity_score {propensity} outside (0, 1]")));
        }
        let mut affinity = Vec::with_capacity(c.affinity.len());
        for &j in &c.affinity {
            affinity.push(parse_number(fields[j]).map_err(|e| {
                bad(LineError::number(e, fields[j], "a user-item affinity").to_string())
            })?);
        }
        let delay = match c.delay.map(|j| fields[j]) {
            None | Some("") => None,
            Some(d) => Some(d.parse::<u64>().map_err(|_| {
                bad(format!(
                    "bad click_delay `{}` (expected 0, 1, ...)",
                    excerpt(d)
                ))
            })?),
        };
        let slate = match c.slate.map(|j| fields[j]) {
            None | Some("") => None,
            Some(p) => {
                let v = parse_number(p)
                    .map_err(|e| bad(LineError::number(e, p, "slate_propensity").to_string()))?;
                if !(v > 0.0 && v <= 1.0) {
                    return Err(bad(format!("slate_propensity {v} outside (0, 1]")));
                }
                Some(v)
            }
        };
        Ok(Some(Row {
            timestamp: fields[c.timestamp].to_string(),
            user: c.user.iter().map(|&j| fields[j].to_string()).collect(),
            affinity,
            slate,
            slot: LoggedSlot {
                line: number,
                item,
                position,
                click,
                propensity,
                delay,
            },
        }))
    }

    /// The next parsed row (the one looked ahead first), `None` at the end.
    fn row(&mut self) -> Result<Option<Row>, ReadError> {
        if let Some(r) = self.next.take() {
            return Ok(Some(r));
        }
        loop {
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            let (number, text) = (line.number, line.text.to_string());
            if let Some(row) = self.parse(number, &text)? {
                return Ok(Some(row));
            }
        }
    }

    fn impression(&mut self) -> Result<Option<LoggedImpression>, ReadError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let Some(first) = self.row()? else {
            return Ok(None);
        };
        let mut imp = LoggedImpression {
            line: first.slot.line,
            timestamp: first.timestamp,
            user: first.user,
            affinity: first.affinity,
            slots: vec![first.slot],
            slate_propensity: first.slate,
        };
        loop {
            // An error after the first row ends this impression; it comes out next.
            let row = match self.row() {
                Ok(Some(row)) => row,
                Ok(None) => break,
                Err(e) => {
                    self.error = Some(e);
                    break;
                }
            };
            let same = row.timestamp == imp.timestamp
                && row.user == imp.user
                && imp.slots.iter().all(|s| s.position != row.slot.position);
            if same {
                imp.slots.push(row.slot);
            } else {
                self.next = Some(row);
                break;
            }
        }
        Ok(Some(imp))
    }
}

impl Iterator for Impressions {
    type Item = Result<LoggedImpression, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.impression() {
            Ok(Some(imp)) => Some(Ok(imp)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = ",timestamp,item_id,position,click,propensity_score,user_feature_0,user_feature_1,user-item_affinity_0,user-item_affinity_1,user-item_affinity_2";

    fn write(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("log.csv");
        std::fs::write(&p, format!("{HEADER}\n{body}")).unwrap();
        std::fs::write(
            dir.join("item_context.csv"),
            ",item_id,item_feature_0\n0,0,0.1\n1,1,0.2\n2,2,0.3\n",
        )
        .unwrap();
        p
    }

    #[test]
    fn groups_rows_of_one_impression_and_reads_the_item_count() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "0,t1,2,3,0,0.5,a,b,0.0,1.0,0.0\n\
             1,t1,0,1,1,0.25,a,b,0.0,1.0,0.0\n\
             2,t1,1,1,0,0.25,a,b,0.0,1.0,0.0\n\
             3,t2,1,2,0,1,a,c,0,0,0\n\n",
        );
        let log = OpenBanditLog::open(&p, None).unwrap();
        assert_eq!(log.items(), 3);
        assert_eq!(log.affinities(), 3);
        assert_eq!(log.user_features(), ["user_feature_0", "user_feature_1"]);
        let imps: Vec<_> = log.impressions().unwrap().map(Result::unwrap).collect();
        // Position 1 twice at t1: the second one starts a new impression.
        assert_eq!(imps.len(), 3);
        assert_eq!(imps[0].slots.len(), 2);
        assert_eq!((imps[0].slots[1].item, imps[0].slots[1].position), (0, 1));
        assert!(imps[0].slots[1].click);
        assert_eq!(imps[0].affinity, vec![0.0, 1.0, 0.0]);
        assert_eq!(imps[1].line, 4);
        assert_eq!(imps[2].user, vec!["a", "c"]);
        assert_eq!(imps[2].slots[0].propensity, 1.0);
    }

    #[test]
    fn bad_rows_name_the_line_and_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        for (row, reason) in [
            ("0,t,7,1,0,0.5,a,b,0,0,0", "item_id 7 out of range"),
            ("0,t,x,1,0,0.5,a,b,0,0,0", "bad item_id `x`"),
            ("0,t,1,0,0,0.5,a,b,0,0,0", "bad position `0`"),
            ("0,t,1,1,2,0.5,a,b,0,0,0", "bad click `2`"),
            ("0,t,1,1,0,0,a,b,0,0,0", "outside (0, 1]"),
            (
                "0,t,1,1,0,abc,a,b,0,0,0",
                "bad number `abc` for propensity_score",
            ),
            (
                "0,t,1,1,0,0.5,a,b,0,0",
                "10 fields, but the header has 11 columns",
            ),
        ] {
            let p = write(dir.path(), &format!("0,t0,1,1,0,0.5,a,b,0,0,0\n{row}\n"));
            let log = OpenBanditLog::open(&p, None).unwrap();
            let mut it = log.impressions().unwrap();
            assert!(it.next().unwrap().is_ok());
            let e = it.next().unwrap().unwrap_err();
            assert_eq!(e.line, Some(3), "{row}");
            assert!(e.reason.contains(reason), "{row}: {}", e.reason);
            assert!(it.next().is_none());
        }
    }

    #[test]
    fn reads_the_simulator_columns_when_present() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sim.csv");
        std::fs::write(
            &p,
            ",timestamp,item_id,position,click,propensity_score,user_feature_0,click_delay,slate_propensity\n\
             0,0,2,1,1,0.5,a,7,0.125\n\
             1,0,0,2,0,0.25,a,,0.125\n\
             2,1,1,1,0,0.5,b,,\n",
        )
        .unwrap();
        let log = OpenBanditLog::open(&p, Some(3)).unwrap();
        let imps: Vec<_> = log.impressions().unwrap().map(Result::unwrap).collect();
        assert_eq!(imps.len(), 2);
        assert_eq!(imps[0].slate_propensity, Some(0.125));
        assert_eq!(imps[0].slots[0].delay, Some(7));
        assert_eq!(imps[0].slots[1].delay, None);
        assert_eq!(imps[1].slate_propensity, None);
        for (row, reason) in [
            ("0,0,2,1,1,0.5,a,-1,0.1", "bad click_delay `-1`"),
            ("0,0,2,1,1,0.5,a,3,2", "slate_propensity 2 outside (0, 1]"),
        ] {
            std::fs::write(
                &p,
                format!(",timestamp,item_id,position,click,propensity_score,user_feature_0,click_delay,slate_propensity\n{row}\n"),
            )
            .unwrap();
            let log = OpenBanditLog::open(&p, Some(3)).unwrap();
            let e = log.impressions().unwrap().next().unwrap().unwrap_err();
            assert!(e.reason.contains(reason), "{e}");
            assert_eq!(e.line, Some(2));
        }
        // An Open Bandit Dataset log has neither column.
        let p = write(dir.path(), "0,t1,2,3,1,0.5,a,b,0.0,1.0,0.0\n");
        let imp = OpenBanditLog::open(&p, None)
            .unwrap()
            .impressions()
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!((imp.slots[0].delay, imp.slate_propensity), (None, None));
    }

    #[test]
    fn missing_columns_or_item_context_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.csv");
        std::fs::write(&p, "a,b\n1,2\n").unwrap();
        let e = OpenBanditLog::open(&p, Some(3)).unwrap_err();
        assert!(e.reason.contains("no `timestamp` column"), "{e}");
        std::fs::write(&p, format!("{HEADER}\n")).unwrap();
        let e = OpenBanditLog::open(&p, None).unwrap_err();
        assert!(e.reason.contains("item_context.csv"), "{e}");
        assert_eq!(OpenBanditLog::open(&p, Some(5)).unwrap().items(), 5);
    }
}
