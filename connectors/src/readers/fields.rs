//! Splitting a row into its fields once, into reused buffers.

use super::line_error::LineError;
use super::{arff, csv};
use memchr::{memchr, memchr_iter, memchr2};

/// The quoting rules of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// CSV: `"..."`, with `""` for a quote inside.
    Csv,
    /// ARFF: `'...'` or `"..."`, with backslash escapes.
    Arff,
}

/// The fields of one row: trimmed, unquoted, found with one scan of the line.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    /// Byte ranges into the line (no quote in it) or into `unquoted`.
    ranges: Vec<(usize, usize)>,
    /// Whether the ranges point into `unquoted`.
    quoted: bool,
    /// The unquoted fields of a line with quotes, one after the other.
    unquoted: String,
    /// Scratch space of the quote-aware splitters.
    scratch: Vec<u8>,
}

/// The range `start..end` of `bytes` without its leading and trailing ASCII whitespace.
#[inline]
fn trim(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && bytes[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

impl Fields {
    /// Splits `line` on `delim`; returns the number of fields.
    #[inline]
    pub(crate) fn split(
        &mut self,
        line: &str,
        delim: u8,
        quoting: Quoting,
    ) -> Result<usize, LineError> {
        self.ranges.clear();
        let bytes = line.as_bytes();
        let has_quote = match quoting {
            Quoting::Csv => memchr(b'"', bytes).is_some(),
            Quoting::Arff => memchr2(b'"', b'\'', bytes).is_some(),
        };
        if !has_quote {
            self.quoted = false;
            let mut start = 0;
            for p in memchr_iter(delim, bytes) {
                self.ranges.push(trim(bytes, start, p));
                start = p + 1;
            }
            self.ranges.push(trim(bytes, start, bytes.len()));
            return Ok(self.ranges.len());
        }
        self.quoted = true;
        self.unquoted.clear();
        let ranges = &mut self.ranges;
        let unquoted = &mut self.unquoted;
        let push = |_: usize, v: &str| {
            let start = unquoted.len();
            unquoted.push_str(v);
            ranges.push((start, unquoted.len()));
            Ok(())
        };
        match quoting {
            Quoting::Csv => csv::for_each_field(line, delim, &mut self.scratch, push)?,
            Quoting::Arff => arff::for_each_field(line, &mut self.scratch, push)?,
        };
        Ok(self.ranges.len())
    }

    /// Field `i` of `line` (the line given to the last [`split`](Self::split)).
    #[inline]
    pub(crate) fn get<'a>(&'a self, line: &'a str, i: usize) -> &'a str {
        let (start, end) = self.ranges[i];
        if self.quoted {
            &self.unquoted[start..end]
        } else {
            &line[start..end]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(line: &str, delim: u8, quoting: Quoting) -> Vec<String> {
        let mut f = Fields::default();
        let n = f.split(line, delim, quoting).unwrap();
        (0..n).map(|i| f.get(line, i).to_string()).collect()
    }

    #[test]
    fn splits_plain_and_quoted_rows() {
        assert_eq!(all(" a , b,,c ", b',', Quoting::Csv), ["a", "b", "", "c"]);
        assert_eq!(all("a\tb c\t", b'\t', Quoting::Csv), ["a", "b c", ""]);
        assert_eq!(all("\"x,y\",'z'", b',', Quoting::Csv), ["x,y", "'z'"]);
        assert_eq!(all("'x,y', \"z\"", b',', Quoting::Arff), ["x,y", "z"]);
        assert_eq!(all("", b',', Quoting::Csv), [""]);
    }
}
