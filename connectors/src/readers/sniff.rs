//! Format detection from a file's first lines, with its extension as a hint.

use super::ReadError;
use super::libsvm;
use super::line_error::LineError;
use super::lines::LineReader;
use super::options::Format;
use std::path::Path;

/// How many content lines the sniffer looks at.
const SAMPLE: usize = 32;

/// The extension of `path`, lower case, ignoring a final `.gz`.
fn extension(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.rsplit_once('.')
        .map(|(_, ext)| ext.to_string())
        .unwrap_or_default()
}

/// The format an extension names: `.arff`; `.svm`, `.libsvm`, `.svmlight`; `.csv`, `.tsv`.
fn format_of_extension(ext: &str) -> Option<Format> {
    match ext {
        "arff" => Some(Format::Arff),
        "svm" | "libsvm" | "svmlight" => Some(Format::Libsvm),
        "csv" | "tsv" => Some(Format::Csv),
        _ => None,
    }
}

/// Detects the format of `path` (lines of at most `max_line` bytes):
///
/// - an extension that names a format decides (`.arff`; `.svm`, `.libsvm`, `.svmlight`;
///   `.csv`, `.tsv`; a final `.gz` aside), so that a bad line is reported by that
///   format's reader rather than the file being read as another format;
/// - else the first line that is not blank nor a comment (`%`, `#`, `|`) starts with `@`:
///   ARFF;
/// - else, over the first 32 content lines: every line is `label idx:val ...` and at
///   least one has an `idx:val` token: LIBSVM; some lines have `idx:val` tokens and
///   another line is not a LIBSVM line: an error naming that line and why (a LIBSVM file
///   with a bad line is never read as CSV silently); no line has one: CSV.
pub(crate) fn detect(path: &Path, max_line: usize) -> Result<Format, ReadError> {
    detect_with(path, max_line, format_of_extension(&extension(path)))
}

/// The format the content of `path` looks like, its extension aside (for a hint in an
/// error about a file read as another format).
pub(crate) fn detect_content(path: &Path, max_line: usize) -> Result<Format, ReadError> {
    detect_with(path, max_line, None)
}

/// [`detect`] with the format the extension names, if any.
fn detect_with(path: &Path, max_line: usize, named: Option<Format>) -> Result<Format, ReadError> {
    let mut reader = LineReader::open_with(path, max_line)?;
    let mut seen = 0usize;
    // The first line with features, and the first line that is not LIBSVM (and why).
    let mut libsvm_line: Option<u64> = None;
    let mut not_libsvm: Option<(u64, LineError)> = None;
    while seen < SAMPLE {
        let Some(line) = reader.next_line()? else {
            break;
        };
        let text = line.text.trim();
        if text.is_empty()
            || text.starts_with('%')
            || text.starts_with('#')
            || text.starts_with('|')
        {
            continue;
        }
        if seen == 0 && text.starts_with('@') && named.is_none() {
            return Ok(Format::Arff);
        }
        seen += 1;
        match libsvm::line_shape(text) {
            Ok(true) => {
                libsvm_line.get_or_insert(line.number);
            }
            Ok(false) => {}
            Err(reason) => {
                not_libsvm.get_or_insert((line.number, reason));
            }
        }
    }
    if seen == 0 {
        return Err(ReadError::file(path, "empty file: no data"));
    }
    if let Some(format) = named {
        return Ok(format);
    }
    match (libsvm_line, not_libsvm) {
        (Some(_), None) => Ok(Format::Libsvm),
        (Some(first), Some((line, reason))) => Err(ReadError::at(
            path,
            line,
            format!(
                "not a LIBSVM line ({reason}), though line {first} is one: fix the line, or give the format (--format)"
            ),
        )),
        (None, _) => Ok(Format::Csv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(name: &str, content: &str) -> Result<Format, ReadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        detect(&p, 1 << 20)
    }

    #[test]
    fn detects_by_content_then_extension() {
        assert_eq!(sniff("x.txt", "% c\n@relation r\n").unwrap(), Format::Arff);
        assert_eq!(sniff("x", "-1 3:1 5:1\n+1 2:1\n").unwrap(), Format::Libsvm);
        assert_eq!(sniff("x.csv", "a,b\n1,2\n").unwrap(), Format::Csv);
        assert_eq!(sniff("x.csv", "1,2\n3,4\n").unwrap(), Format::Csv);
        assert_eq!(sniff("x.svm", "1\n2\n").unwrap(), Format::Libsvm);
        assert_eq!(sniff("x.arff", "1,2\n").unwrap(), Format::Arff);
        assert_eq!(extension(Path::new("a/b.tsv.gz")), "tsv");
        // The extension decides: a LIBSVM file with a bad line is not CSV.
        assert_eq!(
            sniff("neg.libsvm", "1 1:1\n-1 -3:1\n").unwrap(),
            Format::Libsvm
        );
        // Without one, a LIBSVM-shaped file with a bad line is an error naming it.
        let e = sniff("neg", "1 1:1\n-1 2:1\n1 -3:1\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.reason.contains("bad index `-3`"), "{}", e.reason);
        // A CSV of numbers is still CSV.
        assert_eq!(sniff("x", "1,2\n3,4\n").unwrap(), Format::Csv);
        assert!(sniff("x.csv", "\n\n").unwrap_err().reason.contains("empty"));
    }
}
