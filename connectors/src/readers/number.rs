//! Parsing numbers and recognising missing values in text fields.

/// Why a field is not a usable number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not a number at all.
    Invalid,
    /// `NaN`, `inf`, `infinity` (any case, any sign), or a value that overflows `f64`.
    NonFinite,
}

/// Exact powers of ten up to 10^22 (the largest exactly representable in an `f64`).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The fast path for plain decimals (`-12.375`, at most 19 characters, no exponent):
/// an integer mantissa `m <= 2^53` divided by `10^k` with `k <= 22`. Both are exact
/// `f64`s and one IEEE division is correctly rounded, so the result is the same as that
/// of `str::parse` (Clinger's fast path); anything else returns `None`.
#[inline]
fn parse_plain_decimal(b: &[u8]) -> Option<f64> {
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut decimals: Option<usize> = None;
    let mut count = 0;
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                count += 1;
                if let Some(d) = decimals.as_mut() {
                    *d += 1;
                }
            }
            b'.' if decimals.is_none() => decimals = Some(0),
            _ => return None,
        }
    }
    if count == 0 || mantissa > (1u64 << 53) {
        return None;
    }
    let value = mantissa as f64 / POW10[decimals.unwrap_or(0)];
    Some(if negative { -value } else { value })
}

/// Parses a finite number (`12`, `-0.5`, `1e-3`, `+3.`).
#[inline]
pub(crate) fn parse_number(s: &str) -> Result<f64, NumberError> {
    if let Some(v) = parse_plain_decimal(s.as_bytes()) {
        return Ok(v);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(NumberError::NonFinite),
        Err(_) => Err(NumberError::Invalid),
    }
}

/// Whether a field parses as a number, `NaN` and infinities included.
#[inline]
pub(crate) fn is_number(s: &str) -> bool {
    classify(s) != Cell::Text
}

/// What a (trimmed, non-missing) field holds, for type inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    /// A finite number.
    Finite,
    /// `NaN`, an infinity, or a number that overflows `f64`.
    NonFinite,
    /// Anything else (`0x1F`, `1_000`, `é`, a word).
    Text,
}

/// Classifies a field: a finite number, NaN or infinity, or text. Text that cannot start a
/// number (a letter other than `i`, `n`, `I`, `N`) is told apart by its first byte, without
/// a parse.
#[inline]
pub(crate) fn classify(s: &str) -> Cell {
    if parse_plain_decimal(s.as_bytes()).is_some() {
        return Cell::Finite;
    }
    match s.as_bytes().first() {
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b'i' | b'I' | b'n' | b'N') => {}
        _ => return Cell::Text,
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Cell::Finite,
        Ok(_) => Cell::NonFinite,
        Err(_) => Cell::Text,
    }
}

/// Whether a (trimmed) field stands for a missing value: `?` or nothing.
#[inline]
pub(crate) fn is_missing(s: &str) -> bool {
    s.is_empty() || s == "?"
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
        assert_eq!(parse_number("-"), Err(NumberError::Invalid));
        assert_eq!(parse_number("."), Err(NumberError::Invalid));
        assert_eq!(parse_number("1.2.3"), Err(NumberError::Invalid));
        assert_eq!(parse_number("--1"), Err(NumberError::Invalid));
    }

    #[test]
    fn classifies_cells() {
        for v in ["1", "-2.5", "1e3", "+.5", "007"] {
            assert_eq!(classify(v), Cell::Finite, "{v}");
        }
        for v in ["nan", "NaN", "-inf", "Infinity", "1e999"] {
            assert_eq!(classify(v), Cell::NonFinite, "{v}");
        }
        for v in [
            "0x1F", "1_000", "é", "\0", "5more", "more", "e5", "-", "1.2.3",
        ] {
            assert_eq!(classify(v), Cell::Text, "{v:?}");
        }
    }

    #[test]
    fn the_fast_path_agrees_with_the_standard_parser() {
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 11
        };
        let mut cases: Vec<String> = vec![
            "0".into(),
            "-0".into(),
            "+0.0".into(),
            ".5".into(),
            "5.".into(),
            "007".into(),
            "9007199254740992".into(),
            "9007199254740993".into(),
            "0.1".into(),
            "123456789012345678".into(),
            "0.000000000000000000001".into(),
            "1234567.8901234567".into(),
            "-17.25".into(),
        ];
        for _ in 0..20000 {
            let digits = (next() % 18 + 1) as usize;
            let m = next() % 10u64.pow(digits as u32);
            let text = format!("{m:0digits$}");
            let dot = (next() as usize) % (digits + 1);
            let sign = ["", "-", "+"][(next() % 3) as usize];
            cases.push(format!("{sign}{}.{}", &text[..dot], &text[dot..]));
        }
        for case in cases {
            let fast = parse_plain_decimal(case.as_bytes());
            let std = case.parse::<f64>().unwrap();
            if let Some(fast) = fast {
                assert_eq!(fast.to_bits(), std.to_bits(), "{case}");
            }
            assert_eq!(
                parse_number(&case).unwrap().to_bits(),
                std.to_bits(),
                "{case}"
            );
        }
    }
}
