//! The names of an option's values: one table per enum gives its command-line and
//! configuration names, [`Display`](std::fmt::Display) and [`FromStr`](std::str::FromStr)
//! ([`named_values!`](crate::named_values)), so that every option of the CLI, the job file
//! and the model files reads and writes its values the same way.

/// An enum whose values have names ([`named_values!`](crate::named_values) implements
/// it): what a command-line parser lists as the possible values.
pub trait Named: Copy + 'static {
    /// The values' names, in declaration order.
    const NAMES: &'static [&'static str];
}

/// `"a"`, `"a or b"`, `"a, b or c"`: the names an error message offers.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => (*only).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A name that is none of an enum's ([`named_values!`](crate::named_values)'s
/// [`FromStr`](std::str::FromStr)): ``unknown vote rule `x` (expected paper or moa)``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}` (expected {})", one_of(expected))]
pub struct UnknownName {
    /// What the values are (`"vote rule"`).
    pub what: &'static str,
    /// The name given (spaces around removed).
    pub value: String,
    /// The names expected.
    pub expected: &'static [&'static str],
}

/// Gives a field-less `Copy` enum its names from one table: `NAMES` (in declaration
/// order, also as [`Named`](crate::named::Named)), `name()`, [`Display`](std::fmt::Display) (the name) and
/// [`FromStr`](std::str::FromStr), which takes a name or one of its aliases in any ASCII
/// case, spaces around ignored, and otherwise says what it expected:
/// ``unknown vote rule `x` (expected paper or moa)``.
///
/// ```
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// enum Shape {
///     Round,
///     Square,
/// }
/// flowboost_operators::named_values!(Shape, "shape", Round => "round" | "circle", Square => "square");
///
/// assert_eq!(Shape::Square.name(), "square");
/// assert_eq!(Shape::Round.to_string(), "round");
/// assert_eq!(Shape::NAMES, &["round", "square"]);
/// assert_eq!(" Circle ".parse::<Shape>(), Ok(Shape::Round));
/// assert_eq!(
///     "oval".parse::<Shape>().unwrap_err().to_string(),
///     "unknown shape `oval` (expected round or square)"
/// );
/// ```
#[macro_export]
macro_rules! named_values {
    ($ty:ident, $what:literal, $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)?) => {
        impl $ty {
            /// The values' names, as the command line and the configurations write them.
            pub const NAMES: &'static [&'static str] = <$ty as $crate::named::Named>::NAMES;

            /// The value's name, as the command line and the configurations write it.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl $crate::named::Named for $ty {
            const NAMES: &'static [&'static str] = &[$($name),+];
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::named::UnknownName;

            /// A name (or an alias) in any ASCII case, spaces around ignored.
            fn from_str(s: &str) -> Result<Self, $crate::named::UnknownName> {
                let s = s.trim();
                match s.to_ascii_lowercase().as_str() {
                    $($name $(| $alias)* => Ok($ty::$variant),)+
                    _ => Err($crate::named::UnknownName {
                        what: $what,
                        value: s.to_string(),
                        expected: Self::NAMES,
                    }),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::one_of;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Three {
        A,
        B,
        C,
    }
    crate::named_values!(Three, "letter", A => "a", B => "b" | "bee", C => "c");

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for v in [Three::A, Three::B, Three::C] {
            assert_eq!(v.name().parse::<Three>(), Ok(v));
            assert_eq!(v.to_string(), v.name());
        }
        assert_eq!(Three::NAMES, &["a", "b", "c"]);
        assert_eq!("BEE".parse::<Three>(), Ok(Three::B));
        assert_eq!("\tc ".parse::<Three>(), Ok(Three::C));
        assert_eq!(
            " d ".parse::<Three>().unwrap_err().to_string(),
            "unknown letter `d` (expected a, b or c)"
        );
        assert_eq!(
            "".parse::<Three>().unwrap_err().to_string(),
            "unknown letter `` (expected a, b or c)"
        );
    }

    #[test]
    fn one_of_lists_names() {
        assert_eq!(one_of(&[]), "");
        assert_eq!(one_of(&["x"]), "x");
        assert_eq!(one_of(&["x", "y"]), "x or y");
        assert_eq!(one_of(&["x", "y", "z"]), "x, y or z");
    }
}
