//! Parsing numbers and recognising missing values in text fields.

/// Why a field is not a usable number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not a number at all.
    Invalid,
    /// `NaN`, `inf`, `infinity` (any case, any sign), or a value that overflows `f64`.
    NonFinite,
}

/// Parses a finite number (`12`, `-0.5`, `1e-3`, `+3.`).
#[inline]
pub(crate) fn parse_number(s: &str) -> Result<f64, NumberError> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(NumberError::NonFinite),
        Err(_) => Err(NumberError::Invalid),
    }
}

/// Whether a (trimmed) field stands for a missing value: `?` or nothing.
#[inline]
pub(crate) fn is_missing(s: &str) -> bool {
    s.is_empty() || s == "?"
}

/// The reason of an error about field `value` of column or attribute `what`.
pub(crate) fn number_reason(e: NumberError, value: &str, what: &str) -> String {
    match e {
        NumberError::Invalid => format!("bad number `{value}` for {what}"),
        NumberError::NonFinite => format!(
            "NaN or infinity `{value}` for {what} (write `?` or leave the field empty for a missing value)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_finite_numbers_only() {
        assert_eq!(parse_number("1.5"), Ok(1.5));
        assert_eq!(parse_number("-2e3"), Ok(-2000.0));
        assert_eq!(parse_number("+3."), Ok(3.0));
        assert_eq!(parse_number("NaN"), Err(NumberError::NonFinite));
        assert_eq!(parse_number("-inf"), Err(NumberError::NonFinite));
        assert_eq!(parse_number("1e999"), Err(NumberError::NonFinite));
        assert_eq!(parse_number("x1"), Err(NumberError::Invalid));
        assert_eq!(parse_number(""), Err(NumberError::Invalid));
        assert!(is_missing("?") && is_missing("") && !is_missing("0"));
    }
}
