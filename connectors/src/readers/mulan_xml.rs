//! MULAN XML label headers: `<labels><label name="..."/>...</labels>`.

use super::{ReadError, excerpt};
use quick_xml::XmlVersion;
use quick_xml::events::Event;
use std::io::Read;
use std::path::Path;

/// The largest MULAN XML label header read (64 MiB: 65,536 labels of names of up to 1 KB).
const MAX_XML_BYTES: u64 = 64 << 20;

/// One label named by a MULAN XML header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct XmlLabel {
    /// The label name (entities decoded).
    pub(crate) name: String,
    /// The 1-based line of its `<label>` element.
    pub(crate) line: u64,
}

/// Reads the label names of a MULAN XML header, in document order: every `<label>`
/// element, nested ones too (hierarchical MULAN headers), any namespace.
///
/// The header is small (one element per label), so it is read whole, up to
/// [`MAX_XML_BYTES`] (a larger file, `/dev/zero` or an endless pipe, is an error).
pub(crate) fn read_labels(path: &Path) -> Result<Vec<XmlLabel>, ReadError> {
    let reason = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => "file not found".to_string(),
        _ => format!("cannot read: {e}"),
    };
    let file = std::fs::File::open(path).map_err(|e| ReadError::file(path, reason(e)))?;
    let mut bytes = Vec::new();
    file.take(MAX_XML_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::file(path, reason(e)))?;
    if bytes.len() as u64 > MAX_XML_BYTES {
        return Err(ReadError::file(
            path,
            format!(
                "larger than {} MiB: not a MULAN XML label header (one short element per label)",
                MAX_XML_BYTES >> 20
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| ReadError::file(path, "not UTF-8 text"))?;
    let line_at = |offset: u64| -> u64 {
        let end = (offset as usize).min(text.len());
        1 + text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64
    };
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut labels: Vec<XmlLabel> = Vec::new();
    loop {
        let start = reader.buffer_position();
        let event = reader.read_event().map_err(|e| {
            ReadError::at(
                path,
                line_at(reader.error_position()),
                format!("bad XML: {e}"),
            )
        })?;
        match event {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "label" => {
                let line = line_at(start);
                let attr = e
                    .try_get_attribute("name")
                    .map_err(|err| ReadError::at(path, line, format!("bad XML attribute: {err}")))?
                    .ok_or_else(|| {
                        ReadError::at(path, line, "a <label> element without a `name` attribute")
                    })?;
                let name = attr
                    .normalized_value(XmlVersion::Implicit1_0)
                    .map_err(|err| ReadError::at(path, line, format!("bad label name: {err}")))?
                    .into_owned();
                if labels.iter().any(|l| l.name == name) {
                    return Err(ReadError::at(
                        path,
                        line,
                        format!("label `{}` is listed twice", excerpt(name)),
                    ));
                }
                labels.push(XmlLabel { name, line });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if labels.is_empty() {
        return Err(ReadError::file(
            path,
            "no <label name=\"...\"> element: not a MULAN XML label header",
        ));
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_labels_with_entities_and_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.xml");
        std::fs::write(
            &p,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\r\n\
             <label name=\"Swainson&apos;s Thrush\"></label>\r\n\
             <label name='group'>\r\n  <label name=\"leaf\"/>\r\n</label>\r\n</labels>\r\n",
        )
        .unwrap();
        let labels = read_labels(&p).unwrap();
        let names: Vec<&str> = labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["Swainson's Thrush", "group", "leaf"]);
        assert_eq!(labels.iter().map(|l| l.line).collect::<Vec<_>>(), [3, 4, 5]);
    }

    #[test]
    fn an_endless_file_is_refused() {
        let path = Path::new("/dev/zero");
        if path.exists() {
            let e = read_labels(path).unwrap_err();
            assert!(e.reason.contains("larger than 64 MiB"), "{}", e.reason);
        }
    }

    #[test]
    fn no_labels_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.xml");
        std::fs::write(&p, "<labels></labels>").unwrap();
        assert!(read_labels(&p).unwrap_err().reason.contains("no <label"));
    }
}
