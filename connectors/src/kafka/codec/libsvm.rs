//! LIBSVM records: `label idx:val idx:val ... # comment`, the id in the record key.

use super::{DecodeError, DecodeErrorKind, RecordDecoder, parse_id};
use flowboost_operators::data::{Example, Features, Label, Task};

/// Decodes one LIBSVM line.
pub(super) fn decode_example(
    dec: &RecordDecoder,
    key: Option<&[u8]>,
    payload: &[u8],
) -> Result<Example, DecodeError> {
    let text = std::str::from_utf8(payload).map_err(|e| {
        DecodeError::new(DecodeErrorKind::Unparseable, format!("not UTF-8 text: {e}"))
    })?;
    let text = text.trim_end_matches(['\n', '\r']);
    if text.contains('\n') {
        return Err(DecodeError::new(
            DecodeErrorKind::Unparseable,
            "more than one line in one record",
        ));
    }
    let line = match text.find('#') {
        Some(p) => &text[..p],
        None => text,
    }
    .trim();
    if line.is_empty() {
        return Err(DecodeError::new(
            DecodeErrorKind::Unparseable,
            "empty record",
        ));
    }
    let id = match key {
        None => {
            return Err(DecodeError::new(
                DecodeErrorKind::MissingId,
                "missing id: a LIBSVM record takes its id from the record key",
            ));
        }
        Some(key) => parse_id(&String::from_utf8_lossy(key))?,
    };
    let end = line
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(line.len());
    let (label_field, rest) = if line[..end].contains(':') {
        ("", line)
    } else {
        (&line[..end], &line[end..])
    };
    let label = label(dec, label_field)?;
    let features = features(dec, rest)?;
    Ok(Example {
        id,
        features,
        label,
    })
}

fn label(dec: &RecordDecoder, field: &str) -> Result<Option<Label>, DecodeError> {
    if field == "?" {
        return Ok(None);
    }
    match dec.schema.task {
        Task::Multilabel => {
            let mut ids = Vec::new();
            for part in field.split(',').filter(|p| !p.is_empty()) {
                let id = match dec.label_by_token(part) {
                    Ok(id) => id,
                    Err(e) => match part.parse::<u64>() {
                        Ok(index) => dec.label_by_index(index)?,
                        Err(_) => return Err(e),
                    },
                };
                ids.push(id);
            }
            dec.make_label(ids).map(Some)
        }
        Task::Binary | Task::Multiclass => {
            if field.is_empty() {
                return Ok(None);
            }
            if field.contains(',') {
                return Err(DecodeError::new(
                    DecodeErrorKind::Malformed,
                    format!(
                        "a {} task takes exactly one label, got `{field}`",
                        dec.schema.task.name()
                    ),
                ));
            }
            Ok(Some(Label::Class(dec.label_by_token(field)?)))
        }
    }
}

fn features(dec: &RecordDecoder, rest: &str) -> Result<Features, DecodeError> {
    let dim = dec.schema.dim();
    let mut indices = Vec::new();
    let mut values = Vec::new();
    let mut previous = 0u32;
    for token in rest.split_ascii_whitespace() {
        let Some((index, value)) = token.split_once(':') else {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("bad feature `{token}`: expected index:value"),
            ));
        };
        if index == "qid" {
            continue;
        }
        let index: u32 = index.parse().map_err(|_| {
            DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("bad index `{index}` in `{token}`"),
            )
        })?;
        if index == 0 {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                "index 0: LIBSVM indices start at 1",
            ));
        }
        if index as usize > dim {
            return Err(DecodeError::new(
                DecodeErrorKind::WrongDimension,
                format!("wrong dimension: index {index}, the schema declares {dim} features"),
            ));
        }
        if index <= previous {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("duplicate or unsorted index {index} (after {previous})"),
            ));
        }
        previous = index;
        let j = index as usize - 1;
        let x = match value.parse::<f64>() {
            Ok(x) => x,
            Err(_) => match dec.nominal_value(j, value) {
                Some(v) => v?,
                None => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::Malformed,
                        format!("bad value `{value}` at index {index}"),
                    ));
                }
            },
        };
        indices.push(j as u32);
        values.push(dec.check_value(j, x)?);
    }
    Ok(Features::Sparse {
        indices,
        values,
        dim: dim as u32,
    })
}
