//! Format detection from a file's first lines, with its extension as a hint.

use super::ReadError;
use super::libsvm;
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

/// Detects the format of `path`:
///
/// - the first line that is not blank nor a comment (`%`, `#`, `|`) starts with `@`:
///   ARFF (an `.arff` extension also means ARFF, so that a header-less ARFF gets an
///   ARFF error rather than being read as CSV);
/// - every sampled line is `label idx:val ...` and at least one has an `idx:val` token
///   (or none has one, and the extension is `.svm`, `.libsvm` or `.svmlight`): LIBSVM;
/// - anything else: CSV.
pub(crate) fn detect(path: &Path) -> Result<Format, ReadError> {
    let ext = extension(path);
    let mut reader = LineReader::open(path)?;
    let mut seen = 0usize;
    let mut libsvm_shaped = true;
    let mut any_feature = false;
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
        if seen == 0 && text.starts_with('@') {
            return Ok(Format::Arff);
        }
        seen += 1;
        match libsvm::sniff_line(text) {
            Some(features) => any_feature |= features,
            None => libsvm_shaped = false,
        }
    }
    if seen == 0 {
        return Err(ReadError::file(path, "empty file: no data"));
    }
    if ext == "arff" {
        return Ok(Format::Arff);
    }
    let libsvm_ext = matches!(ext.as_str(), "svm" | "libsvm" | "svmlight");
    if libsvm_shaped && (any_feature || libsvm_ext) {
        return Ok(Format::Libsvm);
    }
    Ok(Format::Csv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(name: &str, content: &str) -> Result<Format, ReadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        detect(&p)
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
        assert!(sniff("x.csv", "\n\n").unwrap_err().reason.contains("empty"));
    }
}
